//! The storage crate's shared backend suite, run against PostgreSQL, plus
//! what only a shared backend has: serializable conflicts between two
//! clients (write skew), format and foreign-table refusals.
//!
//! Needs `FERRODYN_TEST_POSTGRES=postgres://USER@HOST:PORT` (a server where
//! USER may create databases). Every test here is ignored unless asked for:
//! `scripts/pg-tests.sh` starts PostgreSQL with `scripts/pg-cluster.sh` and
//! runs them with `--include-ignored`; run without the variable, they fail.
//! Each test gets a database of its own.

#[path = "../../storage/tests/common/mod.rs"]
mod common;

use std::sync::Arc;

use ferrodyn_storage::{ReadCheck, Storage, StorageError, WriteOp};
use ferrodyn_storage_postgres::PostgresStorage;

/// A fresh database on the test server, dropped with the guard.
struct Database {
    admin: String,
    name: String,
}

impl Database {
    fn url(&self) -> String {
        format!("{}/{}", self.admin, self.name)
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        let _ = admin_sql(
            &self.admin,
            &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", self.name),
        );
    }
}

fn admin_sql(admin: &str, sql: &str) -> Result<(), tokio_postgres::Error> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let admin = format!("{admin}/postgres");
    runtime.block_on(async {
        let (client, connection) = tokio_postgres::connect(&admin, tokio_postgres::NoTls).await?;
        tokio::spawn(connection);
        client.batch_execute(sql).await
    })
}

/// Why every test here is ignored by a plain `cargo test`.
macro_rules! needs_postgres {
    () => {
        "needs PostgreSQL: run by scripts/pg-tests.sh"
    };
}

/// The PostgreSQL server given by `FERRODYN_TEST_POSTGRES`; a test run
/// without it fails here instead of passing without testing anything.
fn admin_url() -> String {
    match std::env::var("FERRODYN_TEST_POSTGRES") {
        Ok(url) if !url.is_empty() => url,
        _ => panic!("FERRODYN_TEST_POSTGRES is not set: this test needs PostgreSQL (run scripts/pg-tests.sh)"),
    }
}

fn fresh_database() -> Database {
    let admin = admin_url();
    static SERIAL: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let name = format!(
        "ferrodyn_suite_{}_{}",
        std::process::id(),
        SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    admin_sql(&admin, &format!("CREATE DATABASE {name}")).expect("test database can be created");
    Database { admin, name }
}

/// A PostgreSQL store over a fresh database, and the database's guard.
fn fresh() -> (Arc<dyn Storage>, Database) {
    let db = fresh_database();
    (Arc::new(PostgresStorage::open(&db.url()).unwrap()), db)
}

mod postgres {
    use super::*;
    storage_suite!(fresh(), #[ignore = needs_postgres!()]);
}

/// Write skew is impossible: two checked writes that each read what the
/// other writes cannot both commit (SSI aborts one with 40001, or the
/// compare sees the other's commit).
#[test]
#[ignore = needs_postgres!()]
fn crosswise_checked_writes_do_not_both_commit() {
    let (s, _db) = fresh();
    let mut conflicts = 0;
    for round in 0..20u8 {
        let (x, y) = (vec![b'x', round], vec![b'y', round]);
        let barrier = Arc::new(std::sync::Barrier::new(2));
        let run = |read: Vec<u8>, write: Vec<u8>| {
            let (s, barrier) = (s.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                s.write_checked(
                    vec![ReadCheck {
                        key: read,
                        expected: None,
                    }],
                    vec![WriteOp::Put(write, b"1".to_vec())],
                )
            })
        };
        let a = run(x.clone(), y.clone());
        let b = run(y.clone(), x.clone());
        let results = [a.join().unwrap(), b.join().unwrap()];
        let committed = results.iter().filter(|r| r.is_ok()).count();
        for r in &results {
            assert!(
                matches!(r, Ok(()) | Err(StorageError::Conflict { .. })),
                "{r:?}"
            );
        }
        assert_eq!(committed, 1, "round {round}: {results:?}");
        conflicts += 1;
    }
    assert_eq!(conflicts, 20);
}

#[test]
#[ignore = needs_postgres!()]
fn a_database_with_other_tables_is_refused() {
    let db = fresh_database();
    let url = format!("{}/{}", db.admin, db.name);
    run_sql(&url, "CREATE TABLE invoices (id int)");
    let err = PostgresStorage::open(&url).err().unwrap().to_string();
    assert!(err.contains("not Ferrodyn's (invoices)"), "{err}");
}

#[test]
#[ignore = needs_postgres!()]
fn a_database_of_a_newer_format_is_refused() {
    let db = fresh_database();
    let url = db.url();
    drop(PostgresStorage::open(&url).unwrap());
    run_sql(
        &url,
        "UPDATE ferrodyn_meta SET value = 'ferrodyn-data-format 99'",
    );
    let err = PostgresStorage::open(&url).err().unwrap().to_string();
    assert!(err.contains("newer Ferrodyn (data format 99)"), "{err}");
}

fn run_sql(url: &str, sql: &str) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        client.batch_execute(sql).await.unwrap();
    });
}
