//! Ferrodyn's shared storage backend: the [`Storage`] trait over a database
//! that speaks the PostgreSQL wire protocol, so any number of stateless
//! `ferrodyn serve --storage postgres://...` processes serve one database.
//!
//! - Data lives in one table, `ferrodyn_kv(k bytea primary key, v bytea)`,
//!   keyed by the engine's own key encoding (`bytea` orders bytewise, which
//!   is [`Storage::scan`]'s order); `ferrodyn_meta` records the data format
//!   (`bootstrap.rs`, which also refuses newer or foreign databases).
//! - Every write is one SERIALIZABLE transaction; a checked write
//!   ([`Storage::write_checked`]) first reads its checked keys in the same
//!   transaction and compares. SQLSTATE 40001/40P01 (and a duplicate-key
//!   race, 23505) become [`StorageError::Conflict`]; a lost or refused
//!   connection, or no answer within [`OPERATION_TIMEOUT`], becomes
//!   [`StorageError::Unavailable`]. A transaction cut off by a lost
//!   connection is rolled back by the database, never half applied.
//! - The SQL is a small portable subset (`sql.rs`): point and range SELECTs
//!   with `ORDER BY k LIMIT`, `INSERT ... ON CONFLICT DO UPDATE` over
//!   `UNNEST` arrays, `DELETE ... = ANY`, `BEGIN ISOLATION LEVEL
//!   SERIALIZABLE`/`COMMIT`. PostgreSQL 15 is what is tested; CockroachDB and
//!   YugabyteDB YSQL accept the same statements (YugabyteDB needs the
//!   `PRIMARY KEY (k ASC)` that bootstrap uses there) but are not tested.
//!
//! Client crates: `tokio-postgres` (the maintained native Rust client of the
//! rust-postgres project; the blocking `postgres` wrapper runs its own
//! runtime per call and panics inside tokio, where the engine runs) with
//! `deadpool-postgres` (a small, maintained async pool with wait/create
//! timeouts, which is what bounds an outage).
//!
//! The blocking boundary: the trait is synchronous, so each call is spawned
//! onto a small runtime owned by this backend ([`PostgresStorage::run`]) and
//! the caller blocks on a channel for the answer. Because callers then wait
//! on the network, [`Storage::shared`] is true and the server runs every
//! request on tokio's blocking pool, never on an async worker. Statements of
//! one write are pipelined: BEGIN, the check, DELETE, INSERT and COMMIT go
//! out together, one round trip (the check fails the transaction itself;
//! `sql.rs`).

use std::future::Future;
use std::ops::Bound;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod, Timeouts};
use ferrodyn_storage::{validate_ops, Key, ReadCheck, Storage, StorageError, Value, WriteOp};
use tokio_postgres::error::SqlState;
use tokio_postgres::NoTls;

mod bootstrap;
mod sql;

/// Longest any storage call may take, connection included, before it fails
/// with [`StorageError::Unavailable`] (the server answers 500 then).
pub const OPERATION_TIMEOUT: Duration = Duration::from_secs(5);

/// Connections each Ferrodyn process keeps to the database at most, per
/// pool (one for reads, one for writes).
pub const POOL_SIZE: usize = 16;

/// How long a connection attempt may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// A PostgreSQL-protocol database as Ferrodyn's ordered key-value store.
pub struct PostgresStorage {
    runtime: tokio::runtime::Runtime,
    pools: Pools,
    /// The connection string without its password, for messages.
    target: String,
}

/// Opens the database `url` names (`postgres://USER[:PASS]@HOST[:PORT][,HOST2[:PORT2]]/DB`,
/// any option tokio-postgres accepts, e.g. `?target_session_attrs=read-write`),
/// creating Ferrodyn's tables in an empty database and refusing one that
/// holds a newer format or other tables.
pub fn open_postgres(url: &str) -> Result<Arc<dyn Storage>, StorageError> {
    Ok(Arc::new(PostgresStorage::open(url)?))
}

impl PostgresStorage {
    /// See [`open_postgres`].
    pub fn open(url: &str) -> Result<PostgresStorage, StorageError> {
        let target = redact(url);
        let mut config = tokio_postgres::Config::from_str(url).map_err(|e| {
            StorageError::Config(format!("invalid --storage connection string {target}: {e}"))
        })?;
        if config.get_dbname().is_none() {
            return Err(StorageError::Config(format!(
                "the --storage connection string {target} names no database (postgres://USER@HOST:PORT/DB)"
            )));
        }
        config.connect_timeout(CONNECT_TIMEOUT);
        config.keepalives_idle(Duration::from_secs(5));
        config.application_name("ferrodyn");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("ferrodyn-postgres")
            .enable_all()
            .build()?;
        // Writers' sessions default to SERIALIZABLE, so a write is one
        // statement in an implicit transaction; readers keep the default.
        let mut serializable = config.clone();
        let options = config.get_options().unwrap_or_default();
        serializable
            .options(format!("{options} -c default_transaction_isolation=serializable").trim());
        let pools = Pools {
            read: build_pool(&runtime, config, &target)?,
            write: build_pool(&runtime, serializable, &target)?,
        };
        let storage = PostgresStorage {
            runtime,
            pools,
            target,
        };
        storage.bootstrap()?;
        Ok(storage)
    }

    /// Runs `work` on this backend's runtime and blocks the calling thread
    /// until it answers or [`OPERATION_TIMEOUT`] passes. Safe to call from
    /// any thread, a tokio worker included (it never enters a runtime).
    fn run<T, F>(&self, work: impl FnOnce(Pools) -> F) -> Result<T, StorageError>
    where
        T: Send + 'static,
        F: Future<Output = Result<T, StorageError>> + Send + 'static,
    {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let future = work(self.pools.clone());
        let target = self.target.clone();
        self.runtime.spawn(async move {
            let answer = match tokio::time::timeout(OPERATION_TIMEOUT, future).await {
                Ok(answer) => answer,
                Err(_) => Err(StorageError::Unavailable(format!(
                    "{target} did not answer within {} s",
                    OPERATION_TIMEOUT.as_secs()
                ))),
            };
            let _ = tx.send(answer);
        });
        rx.recv().unwrap_or_else(|_| {
            Err(StorageError::Unavailable(
                "the PostgreSQL client runtime stopped".into(),
            ))
        })
    }
}

/// The backend's connection pools: readers' sessions at the database's
/// default isolation (each read is one statement: one snapshot), writers'
/// at SERIALIZABLE.
#[derive(Clone)]
pub(crate) struct Pools {
    pub(crate) read: Pool,
    pub(crate) write: Pool,
}

fn build_pool(
    runtime: &tokio::runtime::Runtime,
    config: tokio_postgres::Config,
    target: &str,
) -> Result<Pool, StorageError> {
    let manager = Manager::from_config(
        config,
        NoTls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    let timeouts = Timeouts {
        wait: Some(OPERATION_TIMEOUT),
        create: Some(CONNECT_TIMEOUT),
        recycle: Some(CONNECT_TIMEOUT),
    };
    let _entered = runtime.enter();
    Pool::builder(manager)
        .max_size(POOL_SIZE)
        .timeouts(timeouts)
        .runtime(deadpool_postgres::Runtime::Tokio1)
        .build()
        .map_err(|e| StorageError::Config(format!("{target}: {e}")))
}

/// A pooled connection, or Unavailable naming the database.
async fn connection(pool: &Pool) -> Result<Object, StorageError> {
    pool.get()
        .await
        .map_err(|e| StorageError::Unavailable(format!("cannot get a database connection: {e}")))
}

/// Maps a client error: serialization failures and deadlocks (and a
/// duplicate-key race between two inserts) are conflicts; lost connections,
/// shutdowns and read-only (standby) servers are outages. A connection that
/// failed below SQL is dropped from the pool rather than reused.
fn map_error(error: tokio_postgres::Error, client: Option<Object>) -> StorageError {
    let code = error.code().cloned();
    let conflict = [
        SqlState::T_R_SERIALIZATION_FAILURE,
        SqlState::T_R_DEADLOCK_DETECTED,
        SqlState::UNIQUE_VIOLATION,
    ];
    match code {
        Some(code) if conflict.contains(&code) => StorageError::Conflict { key: None },
        Some(code) if is_outage(&code) => {
            client.map(Object::take);
            StorageError::Unavailable(format!("database unavailable: {error}"))
        }
        Some(_) => StorageError::Backend(Box::new(error)),
        None => {
            client.map(Object::take);
            StorageError::Unavailable(format!("database connection failed: {error}"))
        }
    }
}

/// Connection exceptions (08), operator interventions such as a shutdown
/// (57), insufficient resources (53), and a read-only transaction (25006: a
/// standby, or a primary being demoted).
fn is_outage(code: &SqlState) -> bool {
    let code = code.code();
    code.starts_with("08")
        || code.starts_with("57")
        || code.starts_with("53")
        || code == SqlState::READ_ONLY_SQL_TRANSACTION.code()
}

/// The connection string without its password.
fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let Some((userinfo, host)) = rest.split_once('@') else {
        return url.to_string();
    };
    let user = userinfo.split(':').next().unwrap_or_default();
    format!("{scheme}://{user}@{host}")
}

/// The last op on each key (a batch applies in order, so it is the one that
/// counts), split into keys to delete and entries to upsert.
type Split = (Vec<Key>, Vec<Key>, Vec<Value>);

fn last_ops(ops: Vec<WriteOp>) -> Split {
    let mut last: std::collections::BTreeMap<Key, Option<Value>> = Default::default();
    for op in ops {
        match op {
            WriteOp::Put(k, v) => last.insert(k, Some(v)),
            WriteOp::Delete(k) => last.insert(k, None),
        };
    }
    let (mut deletes, mut keys, mut values) = (Vec::new(), Vec::new(), Vec::new());
    for (k, v) in last {
        match v {
            Some(v) => {
                keys.push(k);
                values.push(v);
            }
            None => deletes.push(k),
        }
    }
    (deletes, keys, values)
}

impl Storage for PostgresStorage {
    fn get(&self, key: &[u8]) -> Result<Option<Value>, StorageError> {
        let key = key.to_vec();
        self.run(move |pools| async move {
            let client = connection(&pools.read).await?;
            match sql::get(&client, &key).await {
                Ok(value) => Ok(value),
                Err(e) => Err(map_error(e, Some(client))),
            }
        })
    }

    fn scan(
        &self,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        reverse: bool,
        limit: usize,
    ) -> Result<Vec<(Key, Value)>, StorageError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let range = sql::ScanRange::new(start, end, reverse, limit);
        self.run(move |pools| async move {
            let client = connection(&pools.read).await?;
            match sql::scan(&client, &range).await {
                Ok(rows) => Ok(rows),
                Err(e) => Err(map_error(e, Some(client))),
            }
        })
    }

    fn write(&self, ops: Vec<WriteOp>) -> Result<(), StorageError> {
        self.write_checked(Vec::new(), ops)
    }

    fn write_checked(&self, checks: Vec<ReadCheck>, ops: Vec<WriteOp>) -> Result<(), StorageError> {
        validate_ops(&ops)?;
        let changes = last_ops(ops);
        if checks.is_empty() && changes.0.is_empty() && changes.1.is_empty() {
            return Ok(());
        }
        self.run(move |pools| async move {
            let mut client = connection(&pools.write).await?;
            match sql::checked_write(&mut client, &checks, changes).await {
                Ok(outcome) => outcome,
                Err(e) => Err(map_error(e, Some(client))),
            }
        })
    }

    /// Commits are durable when COMMIT returns (per the database's own
    /// `synchronous_commit` and standby settings): nothing to flush.
    fn flush(&self) -> Result<(), StorageError> {
        Ok(())
    }

    fn shared(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_not_repeated() {
        assert_eq!(
            redact("postgres://me:secret@db:5432/x"),
            "postgres://me@db:5432/x"
        );
        assert_eq!(redact("postgres://me@db/x"), "postgres://me@db/x");
    }

    #[test]
    fn a_batch_keeps_the_last_op_per_key() {
        let (deletes, keys, values) = last_ops(vec![
            WriteOp::Put(b"a".to_vec(), b"1".to_vec()),
            WriteOp::Delete(b"a".to_vec()),
            WriteOp::Delete(b"b".to_vec()),
            WriteOp::Put(b"b".to_vec(), b"2".to_vec()),
        ]);
        assert_eq!(deletes, vec![b"a".to_vec()]);
        assert_eq!((keys, values), (vec![b"b".to_vec()], vec![b"2".to_vec()]));
    }

    #[test]
    fn a_malformed_connection_string_is_named() {
        let err = PostgresStorage::open("postgres://me:pw@host:notaport/db")
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("invalid --storage connection string"), "{err}");
        assert!(!err.contains("pw"), "{err}");
        let err = PostgresStorage::open("postgres://me@host:5432")
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("names no database"), "{err}");
    }

    #[test]
    fn an_unreachable_database_is_named() {
        // Port 1 on loopback: nothing listens there.
        let err = PostgresStorage::open("postgres://me@127.0.0.1:1/db")
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("127.0.0.1:1"), "{err}");
        assert!(err.contains("cannot reach"), "{err}");
    }
}
