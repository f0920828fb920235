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
//! Client crate: `tokio-postgres` (the maintained native Rust client of the
//! rust-postgres project; its blocking `postgres` wrapper would do what
//! `connection.rs` does, but hides the runtime it blocks on).
//!
//! The blocking boundary: the trait is synchronous and callers wait on the
//! network, so [`Storage::shared`] is true and the server runs every request
//! on tokio's blocking pool, never on an async worker. Each call takes a
//! pooled connection and drives it on the calling thread (`connection.rs`):
//! no thread hand-off per statement. A write is one statement (`sql.rs`),
//! one round trip.

use std::ops::Bound;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use connection::{Conn, Leased, Pool};
use ferrodyn_storage::{
    validate_ops, view_covers, view_covers_key, Key, KeyRange, ReadCheck, Storage, StorageError,
    StorageView, Value, WriteOp,
};
use tokio_postgres::error::SqlState;

mod bootstrap;
mod connection;
mod sql;

/// Longest any storage call may take, the wait for a pooled connection and
/// a new connection included, before it fails with
/// [`StorageError::Unavailable`] (the server answers 500 then).
pub const OPERATION_TIMEOUT: Duration = Duration::from_secs(5);

/// Connections each Ferrodyn process keeps to the database at most, per
/// pool (one for reads, one for writes).
pub const POOL_SIZE: usize = 16;

/// How long a connection attempt may take.
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// A PostgreSQL-protocol database as Ferrodyn's ordered key-value store.
pub struct PostgresStorage {
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
        // Writers' sessions default to SERIALIZABLE, so a write is one
        // statement in an implicit transaction; readers keep the default.
        let mut serializable = config.clone();
        let options = config.get_options().unwrap_or_default();
        serializable
            .options(format!("{options} -c default_transaction_isolation=serializable").trim());
        let pools = Pools {
            read: Pool::new(config, &target, POOL_SIZE),
            write: Pool::new(serializable, &target, POOL_SIZE),
        };
        let storage = PostgresStorage { pools, target };
        storage.bootstrap()?;
        Ok(storage)
    }

    /// Runs `work` (statements on one connection of `pool`) on the calling
    /// thread: its answer, or Unavailable after [`OPERATION_TIMEOUT`].
    fn call<T>(
        &self,
        pool: &Pool,
        work: impl AsyncFnOnce(&Conn) -> Result<T, tokio_postgres::Error>,
    ) -> Result<T, StorageError> {
        let deadline = std::time::Instant::now() + OPERATION_TIMEOUT;
        let leased = pool.get(deadline)?;
        let answer = leased.conn().block_on(work(leased.conn()), deadline);
        settle(leased, &self.target, answer)
    }
}

/// The end of one call: its answer, or the error it met, closing the
/// connection when that error leaves it unusable (or the call timed out).
fn settle<T>(
    leased: Leased<'_>,
    target: &str,
    answer: Option<Result<T, tokio_postgres::Error>>,
) -> Result<T, StorageError> {
    match answer {
        Some(Ok(value)) => Ok(value),
        Some(Err(e)) => {
            let (error, broken) = map_error(e);
            if broken {
                leased.discard();
            }
            Err(error)
        }
        None => {
            leased.discard();
            Err(StorageError::Unavailable(format!(
                "{target} did not answer within {} s",
                OPERATION_TIMEOUT.as_secs()
            )))
        }
    }
}

/// The backend's connection pools: readers' sessions at the database's
/// default isolation (each read is one statement: one snapshot), writers'
/// at SERIALIZABLE.
pub(crate) struct Pools {
    pub(crate) read: Pool,
    pub(crate) write: Pool,
}

/// Maps a client error: serialization failures and deadlocks (and a
/// duplicate-key race between two inserts) are conflicts; lost connections,
/// shutdowns and read-only (standby) servers are outages. The flag says
/// whether the connection is unusable (an outage, or a failure below SQL):
/// it is closed then, not reused.
fn map_error(error: tokio_postgres::Error) -> (StorageError, bool) {
    let code = error.code().cloned();
    let conflict = [
        SqlState::T_R_SERIALIZATION_FAILURE,
        SqlState::T_R_DEADLOCK_DETECTED,
        SqlState::UNIQUE_VIOLATION,
    ];
    match code {
        Some(code) if conflict.contains(&code) => (StorageError::Conflict { key: None }, false),
        Some(code) if is_outage(&code) => (
            StorageError::Unavailable(format!("database unavailable: {error}")),
            true,
        ),
        Some(_) => (StorageError::Backend(Box::new(error)), false),
        None => (
            StorageError::Unavailable(format!("database connection failed: {error}")),
            true,
        ),
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
        self.call(&self.pools.read, async |conn| sql::get(conn, key).await)
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
        self.call(&self.pools.read, async |conn| sql::scan(conn, &range).await)
    }

    fn write(&self, ops: Vec<WriteOp>) -> Result<(), StorageError> {
        self.write_checked(Vec::new(), ops)
    }

    fn write_checked(
        &self,
        mut checks: Vec<ReadCheck>,
        ops: Vec<WriteOp>,
    ) -> Result<(), StorageError> {
        validate_ops(&ops)?;
        let (deletes, keys, values) = last_ops(ops);
        if checks.is_empty() && deletes.is_empty() && keys.is_empty() {
            return Ok(());
        }
        let changes = sql::Changes::split(&mut checks, deletes, (keys, values));
        self.call(&self.pools.write, async |conn| {
            sql::checked_write(conn, &checks, changes).await
        })?
    }

    /// Commits are durable when COMMIT returns (per the database's own
    /// `synchronous_commit` and standby settings): nothing to flush.
    fn flush(&self) -> Result<(), StorageError> {
        Ok(())
    }

    fn shared(&self) -> bool {
        true
    }

    /// A dedicated session (outside both pools) holding one `REPEATABLE
    /// READ, READ ONLY` transaction: its snapshot is fixed by the `SELECT 1`
    /// before this returns, MVCC readers never block writers, and the cut is
    /// database-wide, so it is one instant for every node. A session left
    /// idle in it for [`VIEW_IDLE_LIMIT`] is ended by the database, so a
    /// stuck holder cannot pin old row versions for ever.
    fn open_view(&self, ranges: &[KeyRange]) -> Result<Box<dyn StorageView>, StorageError> {
        let deadline = std::time::Instant::now() + OPERATION_TIMEOUT;
        let conn = self.pools.read.open_dedicated(deadline)?;
        let begin = format!(
            "SET idle_in_transaction_session_timeout = {}; \
             BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY; SELECT 1",
            VIEW_IDLE_LIMIT.as_millis()
        );
        let started = conn.block_on(conn.client.batch_execute(&begin), deadline);
        answer_of(started, &self.target)?;
        Ok(Box::new(PostgresView {
            conn,
            target: self.target.clone(),
            ranges: ranges.to_vec(),
        }))
    }
}

/// How long a view's session may sit idle inside its transaction before
/// the database ends it (between two pages of a copy it never should).
pub const VIEW_IDLE_LIMIT: Duration = Duration::from_secs(60);

/// A view: one session in one repeatable-read transaction (dropping it
/// closes the session, which ends the transaction).
struct PostgresView {
    conn: Conn,
    target: String,
    ranges: Vec<KeyRange>,
}

impl PostgresView {
    fn call<T>(
        &self,
        work: impl AsyncFnOnce(&Conn) -> Result<T, tokio_postgres::Error>,
    ) -> Result<T, StorageError> {
        let deadline = std::time::Instant::now() + OPERATION_TIMEOUT;
        answer_of(self.conn.block_on(work(&self.conn), deadline), &self.target)
    }
}

/// A view statement's answer: its value, its error, or Unavailable when it
/// did not answer in time (the view is unusable then; its owner drops it).
fn answer_of<T>(
    answer: Option<Result<T, tokio_postgres::Error>>,
    target: &str,
) -> Result<T, StorageError> {
    match answer {
        Some(Ok(value)) => Ok(value),
        Some(Err(e)) => Err(map_error(e).0),
        None => Err(StorageError::Unavailable(format!(
            "{target} did not answer within {} s",
            OPERATION_TIMEOUT.as_secs()
        ))),
    }
}

impl StorageView for PostgresView {
    fn get(&self, key: &[u8]) -> Result<Option<Value>, StorageError> {
        if !view_covers_key(&self.ranges, key) {
            return Err(StorageError::OutsideView);
        }
        self.call(async |conn| sql::get(conn, key).await)
    }

    fn scan(
        &self,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        reverse: bool,
        limit: usize,
    ) -> Result<Vec<(Key, Value)>, StorageError> {
        if !view_covers(&self.ranges, start, end) {
            return Err(StorageError::OutsideView);
        }
        if limit == 0 {
            return Ok(Vec::new());
        }
        let range = sql::ScanRange::new(start, end, reverse, limit);
        self.call(async |conn| sql::scan(conn, &range).await)
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
