//! Every statement the backend sends, in the subset PostgreSQL, CockroachDB
//! and YugabyteDB YSQL all run (and one session setting, ignored where it is
//! unknown): point and range reads, and a write as one
//! statement of data-modifying CTEs (its read set's check, DELETE ... =
//! ANY, INSERT ... SELECT FROM UNNEST ... ON CONFLICT DO UPDATE), an
//! implicit transaction at SERIALIZABLE (the write pool's session default),
//! whose first CTE divides by zero when a checked key changed. Statements
//! are prepared once per connection (`connection.rs`): a write is one
//! statement and one round trip.

use std::ops::Bound;

use crate::connection::Conn;
use ferrodyn_storage::{Key, ReadCheck, StorageError, Value};
use tokio_postgres::error::SqlState;

pub(crate) const GET: &str = "SELECT v FROM ferrodyn_kv WHERE k = $1";
/// A whole (checked) write as one statement: `chk` divides by zero unless
/// every checked key ($1) holds its expected value ($2, NULL: absent), and
/// the deletes ($3), upserts ($4, $5) and inserts of new keys ($6, $7) run
/// only once it has passed; data-modifying CTEs all run on one snapshot,
/// in one implicit transaction, and the batch never names a key twice.
/// Portable: no stored function. Each check is a point lookup (a
/// correlated subquery, never a join the planner could turn into a table
/// scan: under SERIALIZABLE that would predicate-lock the whole table and
/// abort every concurrent writer). An insert of a key that exists fails
/// with a unique violation, a conflict (see [`Changes::creates`]).
const WRITE: &str = "WITH chk AS (\
       SELECT 1 / (CASE WHEN coalesce(bool_and( \
                     (SELECT kv.v FROM ferrodyn_kv kv WHERE kv.k = c.k) IS NOT DISTINCT FROM c.v), \
                   true) THEN 1 ELSE 0 END) AS ok \
       FROM UNNEST($1::bytea[], $2::bytea[]) AS c(k, v)), \
     del AS (DELETE FROM ferrodyn_kv WHERE k = ANY($3::bytea[]) \
       AND (SELECT ok FROM chk) = 1 RETURNING 1), \
     ins AS (INSERT INTO ferrodyn_kv (k, v) \
       SELECT n.k, n.v FROM UNNEST($4::bytea[], $5::bytea[]) AS n(k, v) \
       WHERE (SELECT ok FROM chk) = 1 \
       ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v RETURNING 1), \
     new AS (INSERT INTO ferrodyn_kv (k, v) \
       SELECT n.k, n.v FROM UNNEST($6::bytea[], $7::bytea[]) AS n(k, v) \
       WHERE (SELECT ok FROM chk) = 1 RETURNING 1) \
     SELECT (SELECT ok FROM chk), (SELECT count(*) FROM del), (SELECT count(*) FROM ins), \
       (SELECT count(*) FROM new)";

/// [`WRITE`] for a batch that deletes nothing and creates no key checked
/// absent (most item writes): two data-modifying CTEs less to plan and run.
const UPSERT: &str = "WITH chk AS (\
       SELECT 1 / (CASE WHEN coalesce(bool_and( \
                     (SELECT kv.v FROM ferrodyn_kv kv WHERE kv.k = c.k) IS NOT DISTINCT FROM c.v), \
                   true) THEN 1 ELSE 0 END) AS ok \
       FROM UNNEST($1::bytea[], $2::bytea[]) AS c(k, v)), \
     ins AS (INSERT INTO ferrodyn_kv (k, v) \
       SELECT n.k, n.v FROM UNNEST($3::bytea[], $4::bytea[]) AS n(k, v) \
       WHERE (SELECT ok FROM chk) = 1 \
       ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v RETURNING 1) \
     SELECT (SELECT ok FROM chk), (SELECT count(*) FROM ins)";

/// Run once on every new connection, each on its own (an engine without a
/// setting refuses it, which is ignored):
/// - `enable_seqscan = off`: every statement here is a point or range
///   lookup by `k`, but once autovacuum has analyzed a small table (a young
///   database, a test's) the planner prefers a sequential scan for the
///   checks, and under SERIALIZABLE a sequential scan predicate-locks the
///   whole table: unrelated writers then fail each other as serialization
///   conflicts (seen as TransactionConflict on a quiet server).
/// - `plan_cache_mode = force_generic_plan`: statements are planned once and
///   the plan kept (PostgreSQL 12+). Left to choose, PostgreSQL re-planned
///   the write statement for every call's arrays; with this and [`UPSERT`]
///   its CPU per PutItem fell from about 400 to 290 µs (BENCHMARKS.md).
pub(crate) const SESSION_SETUP: [&str; 2] = [
    "SET enable_seqscan = off",
    "SET plan_cache_mode = force_generic_plan",
];

/// A scan's bounds, direction and limit, owned so the query can run on the
/// backend's runtime.
pub(crate) struct ScanRange {
    start: Bound<Key>,
    end: Bound<Key>,
    reverse: bool,
    limit: i64,
}

impl ScanRange {
    pub(crate) fn new(start: Bound<&[u8]>, end: Bound<&[u8]>, reverse: bool, limit: usize) -> Self {
        ScanRange {
            start: start.map(<[u8]>::to_vec),
            end: end.map(<[u8]>::to_vec),
            reverse,
            limit: i64::try_from(limit).unwrap_or(i64::MAX),
        }
    }

    /// The SELECT for these bounds (one of 18 shapes) and its parameters.
    fn statement(&self) -> (String, Vec<&Key>) {
        let mut conditions = Vec::new();
        let mut params = Vec::new();
        for (bound, inclusive, exclusive) in [(&self.start, ">=", ">"), (&self.end, "<=", "<")] {
            let (op, key) = match bound {
                Bound::Included(k) => (inclusive, k),
                Bound::Excluded(k) => (exclusive, k),
                Bound::Unbounded => continue,
            };
            params.push(key);
            conditions.push(format!("k {op} ${}", params.len()));
        }
        let filter = if conditions.is_empty() {
            String::new()
        } else {
            format!(" WHERE {}", conditions.join(" AND "))
        };
        let order = if self.reverse { "DESC" } else { "ASC" };
        let sql = format!(
            "SELECT k, v FROM ferrodyn_kv{filter} ORDER BY k {order} LIMIT ${}",
            params.len() + 1
        );
        (sql, params)
    }
}

pub(crate) async fn get(conn: &Conn, key: &[u8]) -> Result<Option<Value>, tokio_postgres::Error> {
    let statement = conn.prepared(GET).await?;
    let row = conn.client.query_opt(&statement, &[&key]).await?;
    Ok(row.map(|r| r.get(0)))
}

/// One statement, so one snapshot: a scan never sees half of a write.
pub(crate) async fn scan(
    conn: &Conn,
    range: &ScanRange,
) -> Result<Vec<(Key, Value)>, tokio_postgres::Error> {
    let (sql, keys) = range.statement();
    let statement = conn.prepared(&sql).await?;
    let mut params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = Vec::new();
    for key in &keys {
        params.push(*key);
    }
    params.push(&range.limit);
    let rows = conn.client.query(&statement, &params).await?;
    Ok(rows.into_iter().map(|r| (r.get(0), r.get(1))).collect())
}

/// A checked write's parts as the statements take them.
pub(crate) struct Changes {
    pub(crate) deletes: Vec<Key>,
    pub(crate) upserts: (Vec<Key>, Vec<Value>),
    /// Keys the write both checks absent and puts (change-log records):
    /// inserted plainly, the primary key refusing one that exists, instead
    /// of a check that reads the key first. That read predicate-locks the
    /// index page under SERIALIZABLE, and concurrent writers of
    /// neighbouring new keys then all conflicted with one another: PutItem
    /// on a table with a stream had about a third of its transactions
    /// rolled back and ran at 0.67x a plain table's throughput (BENCHMARKS).
    pub(crate) creates: (Vec<Key>, Vec<Value>),
}

impl Changes {
    /// Splits `upserts` into plain upserts and creates, taking the checks
    /// of created keys out of `checks`.
    pub(crate) fn split(
        checks: &mut Vec<ReadCheck>,
        deletes: Vec<Key>,
        (keys, values): (Vec<Key>, Vec<Value>),
    ) -> Changes {
        if checks.iter().all(|c| c.expected.is_some()) {
            // Most writes: nothing checked absent, nothing to split.
            return Changes {
                deletes,
                upserts: (keys, values),
                creates: (Vec::new(), Vec::new()),
            };
        }
        let absent: std::collections::HashSet<&Key> = (checks.iter())
            .filter(|c| c.expected.is_none())
            .map(|c| &c.key)
            .collect();
        let mut upserts = (
            Vec::with_capacity(keys.len()),
            Vec::with_capacity(keys.len()),
        );
        let mut creates = (Vec::new(), Vec::new());
        for (key, value) in keys.into_iter().zip(values) {
            let into = if absent.contains(&key) {
                &mut creates
            } else {
                &mut upserts
            };
            into.0.push(key);
            into.1.push(value);
        }
        if !creates.0.is_empty() {
            let created: std::collections::HashSet<&Key> = creates.0.iter().collect();
            checks.retain(|c| c.expected.is_some() || !created.contains(&c.key));
        }
        Changes {
            deletes,
            upserts,
            creates,
        }
    }
}

/// Runs a (checked) write as one statement, an implicit SERIALIZABLE
/// transaction (the write pool's sessions default to it). The outer error
/// is the database's; the inner one a check that failed (then nothing was
/// written).
pub(crate) async fn checked_write(
    conn: &Conn,
    checks: &[ReadCheck],
    changes: Changes,
) -> Result<Result<(), StorageError>, tokio_postgres::Error> {
    let checked_keys: Vec<&[u8]> = checks.iter().map(|c| c.key.as_slice()).collect();
    let expected: Vec<Option<&[u8]>> = checks.iter().map(|c| c.expected.as_deref()).collect();
    let Changes {
        deletes,
        upserts: (keys, values),
        creates: (new_keys, new_values),
    } = changes;
    let written = if deletes.is_empty() && new_keys.is_empty() {
        let upsert = conn.prepared(UPSERT).await?;
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 4] =
            [&checked_keys, &expected, &keys, &values];
        conn.client.query_one(&upsert, &params).await
    } else {
        let write = conn.prepared(WRITE).await?;
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 7] = [
            &checked_keys,
            &expected,
            &deletes,
            &keys,
            &values,
            &new_keys,
            &new_values,
        ];
        conn.client.query_one(&write, &params).await
    };
    match written {
        Ok(_) => Ok(Ok(())),
        Err(e) if e.code() == Some(&SqlState::DIVISION_BY_ZERO) => {
            Ok(Err(StorageError::Conflict { key: None }))
        }
        Err(e) => Err(e),
    }
}
