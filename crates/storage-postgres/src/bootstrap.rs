//! First contact with the database: reach it (or say clearly why not), then
//! check or create Ferrodyn's two tables. `ferrodyn_meta` mirrors the data
//! directory's `FERRODYN_FORMAT` marker (`ferrodyn-storage`'s format.rs): a
//! `data-format` row holding [`DATA_FORMAT`]. A database whose row names a
//! newer format, or which holds tables that are not Ferrodyn's, is refused
//! rather than written into. Several nodes starting at once may race here;
//! the creating transaction is SERIALIZABLE and a loser simply retries.

use ferrodyn_storage::{StorageError, DATA_FORMAT, FORMAT_TAG};
use tokio_postgres::Client;

use crate::PostgresStorage;

/// Our tables; any other table in the schema makes the database foreign.
const OURS: [&str; 2] = ["ferrodyn_kv", "ferrodyn_meta"];

impl PostgresStorage {
    pub(crate) fn bootstrap(&self) -> Result<(), StorageError> {
        let target = &self.target;
        let mut last = None;
        for _ in 0..5 {
            let deadline = std::time::Instant::now() + crate::OPERATION_TIMEOUT;
            let leased = self.pools.read.get(deadline).map_err(|e| {
                StorageError::Unavailable(format!("cannot reach PostgreSQL at {target}: {e}"))
            })?;
            let conn = leased.conn();
            let failed = match conn.block_on(check_or_create(&conn.client, target), deadline) {
                Some(Ok(())) => return Ok(()),
                Some(Err(BootError::Refused(e))) => return Err(e),
                Some(Err(BootError::Database(e))) => e.to_string(),
                None => "no answer in time".into(),
            };
            // A failed or cut-short attempt may leave its connection inside
            // the creating transaction (or broken): it is closed, never
            // returned to the pool, and the next try takes another.
            leased.discard();
            last = Some(failed);
        }
        Err(StorageError::Unavailable(format!(
            "cannot set up Ferrodyn's tables in {target}: {}",
            last.unwrap_or_default()
        )))
    }
}

enum BootError {
    /// The database is not one we may use; the message says why.
    Refused(StorageError),
    /// A database error (perhaps a race with another node): retry.
    Database(tokio_postgres::Error),
}

impl From<tokio_postgres::Error> for BootError {
    fn from(e: tokio_postgres::Error) -> Self {
        BootError::Database(e)
    }
}

async fn check_or_create(client: &Client, target: &str) -> Result<(), BootError> {
    let tables: Vec<String> = client
        .query(
            "SELECT table_name FROM information_schema.tables \
             WHERE table_schema = current_schema()",
            &[],
        )
        .await?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let foreign: Vec<&str> = (tables.iter())
        .map(String::as_str)
        .filter(|t| !OURS.contains(t))
        .collect();
    if !foreign.is_empty() {
        return Err(refused(format!(
            "{target} holds tables that are not Ferrodyn's ({}); give Ferrodyn a database of its own",
            foreign.join(", ")
        )));
    }
    if tables.iter().any(|t| t == "ferrodyn_meta") {
        return check_format(client, target).await;
    }
    if !tables.is_empty() {
        return Err(refused(format!(
            "{target} has a ferrodyn_kv table but no ferrodyn_meta: not a database this Ferrodyn wrote"
        )));
    }
    create(client).await
}

async fn check_format(client: &Client, target: &str) -> Result<(), BootError> {
    let row = client
        .query_opt(
            "SELECT value FROM ferrodyn_meta WHERE name = 'data-format'",
            &[],
        )
        .await?;
    let text: Option<String> = row.map(|r| r.get(0));
    let version = text
        .as_deref()
        .and_then(|t| t.strip_prefix(FORMAT_TAG))
        .and_then(|v| v.trim().parse::<u32>().ok());
    match version {
        Some(DATA_FORMAT) => Ok(()),
        Some(v) if v > DATA_FORMAT => Err(refused(format!(
            "{target} was written by a newer Ferrodyn (data format {v}); this Ferrodyn reads format \
             {DATA_FORMAT}: upgrade Ferrodyn, or choose another database"
        ))),
        _ => Err(refused(format!(
            "{target} has an unknown data format (ferrodyn_meta says {text:?}); this Ferrodyn reads \
             format {DATA_FORMAT}"
        ))),
    }
}

/// Creates both tables and the format row in one transaction. YugabyteDB
/// hash-shards a primary key unless told `ASC`, which would break range
/// scans; PostgreSQL does not accept `ASC` there (its keys are ordered anyway).
async fn create(client: &Client) -> Result<(), BootError> {
    let version: String = client.query_one("SELECT version()", &[]).await?.get(0);
    let key = if version.contains("YugabyteDB") {
        "PRIMARY KEY (k ASC)"
    } else {
        "PRIMARY KEY (k)"
    };
    let statements = format!(
        "BEGIN ISOLATION LEVEL SERIALIZABLE;
         CREATE TABLE IF NOT EXISTS ferrodyn_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
         CREATE TABLE IF NOT EXISTS ferrodyn_kv (k BYTEA NOT NULL, v BYTEA NOT NULL, {key});
         INSERT INTO ferrodyn_meta (name, value) VALUES ('data-format', '{FORMAT_TAG} {DATA_FORMAT}')
             ON CONFLICT (name) DO NOTHING;
         COMMIT;"
    );
    if let Err(e) = client.batch_execute(&statements).await {
        let _ = client.batch_execute("ROLLBACK").await;
        return Err(e.into());
    }
    Ok(())
}

fn refused(message: String) -> BootError {
    BootError::Refused(StorageError::Config(message))
}
