//! Every statement the backend sends, in the subset PostgreSQL, CockroachDB
//! and YugabyteDB YSQL all run: point and range reads, the checked read of a
//! write's read set, and a write as DELETE ... = ANY plus INSERT ... SELECT
//! FROM UNNEST ... ON CONFLICT DO UPDATE inside BEGIN ISOLATION LEVEL
//! SERIALIZABLE ... COMMIT. Statements are prepared once per connection
//! (deadpool's statement cache) and pipelined where their order allows.

use std::ops::Bound;

use deadpool_postgres::Object;
use ferrodyn_storage::{Key, ReadCheck, StorageError, Value};

pub(crate) const GET: &str = "SELECT v FROM ferrodyn_kv WHERE k = $1";
const CHECK: &str = "SELECT k, v FROM ferrodyn_kv WHERE k = ANY($1)";
const DELETE: &str = "DELETE FROM ferrodyn_kv WHERE k = ANY($1)";
const UPSERT_ONE: &str = "INSERT INTO ferrodyn_kv (k, v) VALUES ($1, $2) \
     ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v";
const UPSERT_MANY: &str = "INSERT INTO ferrodyn_kv (k, v) \
     SELECT * FROM UNNEST($1::bytea[], $2::bytea[]) \
     ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v";
const BEGIN: &str = "BEGIN ISOLATION LEVEL SERIALIZABLE";

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

pub(crate) async fn get(
    client: &Object,
    key: &[u8],
) -> Result<Option<Value>, tokio_postgres::Error> {
    let statement = client.prepare_cached(GET).await?;
    let row = client.query_opt(&statement, &[&key]).await?;
    Ok(row.map(|r| r.get(0)))
}

/// One statement, so one snapshot: a scan never sees half of a write.
pub(crate) async fn scan(
    client: &Object,
    range: &ScanRange,
) -> Result<Vec<(Key, Value)>, tokio_postgres::Error> {
    let (sql, keys) = range.statement();
    let statement = client.prepare_cached(&sql).await?;
    let mut params: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = Vec::new();
    for key in &keys {
        params.push(*key);
    }
    params.push(&range.limit);
    let rows = client.query(&statement, &params).await?;
    Ok(rows.into_iter().map(|r| (r.get(0), r.get(1))).collect())
}

/// Runs a (checked) write as one SERIALIZABLE transaction. The outer error
/// is the database's; the inner one a check that failed (then nothing was
/// written and the transaction was rolled back). After any error the
/// transaction is rolled back before the connection goes back to the pool.
pub(crate) async fn checked_write(
    client: &mut Object,
    checks: &[ReadCheck],
    (deletes, keys, values): (Vec<Key>, Vec<Key>, Vec<Value>),
) -> Result<Result<(), StorageError>, tokio_postgres::Error> {
    let result = transaction(client, checks, &deletes, &keys, &values).await;
    if matches!(result, Err(_) | Ok(Err(_))) && !client.is_closed() {
        let _ = client.batch_execute("ROLLBACK").await;
    }
    result
}

async fn transaction(
    client: &Object,
    checks: &[ReadCheck],
    deletes: &[Key],
    keys: &[Key],
    values: &[Value],
) -> Result<Result<(), StorageError>, tokio_postgres::Error> {
    let delete = client.prepare_cached(DELETE).await?;
    let upsert = if keys.len() == 1 {
        client.prepare_cached(UPSERT_ONE).await?
    } else {
        client.prepare_cached(UPSERT_MANY).await?
    };
    let begun_already = !checks.is_empty();
    if begun_already {
        let check = client.prepare_cached(CHECK).await?;
        let checked: Vec<&[u8]> = checks.iter().map(|c| c.key.as_slice()).collect();
        let params: [&(dyn tokio_postgres::types::ToSql + Sync); 1] = [&checked];
        let (begun, rows) =
            tokio::join!(client.batch_execute(BEGIN), client.query(&check, &params));
        begun?;
        let found: Vec<(Key, Value)> = rows?.into_iter().map(|r| (r.get(0), r.get(1))).collect();
        if let Some(key) = first_changed(checks, &found) {
            return Ok(Err(StorageError::Conflict { key: Some(key) }));
        }
    }
    let begin = async {
        if begun_already {
            return Ok(());
        }
        client.batch_execute(BEGIN).await
    };
    let removed = async {
        if deletes.is_empty() {
            return Ok(0);
        }
        client.execute(&delete, &[&deletes]).await
    };
    let upserted = async {
        match keys.len() {
            0 => Ok(0),
            1 => client.execute(&upsert, &[&keys[0], &values[0]]).await,
            _ => client.execute(&upsert, &[&keys, &values]).await,
        }
    };
    // Pipelined; PostgreSQL answers COMMIT of a failed transaction with a
    // rollback, so both statements' results are checked before COMMIT's.
    let (begun, removed, upserted, committed) =
        tokio::join!(begin, removed, upserted, client.batch_execute("COMMIT"));
    begun?;
    removed?;
    upserted?;
    committed?;
    Ok(Ok(()))
}

/// The first check whose key holds something else than expected.
fn first_changed(checks: &[ReadCheck], found: &[(Key, Value)]) -> Option<Key> {
    checks
        .iter()
        .find(|c| {
            let now = found.iter().find(|(k, _)| *k == c.key).map(|(_, v)| v);
            now != c.expected.as_ref()
        })
        .map(|c| c.key.clone())
}
