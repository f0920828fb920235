//! Engine tests of concurrent writes on memory storage (no HTTP): the
//! transaction-conflict rules as requests see them, the queue policy, that
//! parallel writes of one item lose no update, and that statistics stay
//! exact under parallel writers and across a reopen.

use crate::locks::ConflictPolicy;
use crate::schema::BillingMode;
use crate::table::Table;
use crate::transactions::TransactWrite;
use crate::{Engine, EngineOptions, Mutation, NewTable};
use ferrodyn_expr::{parse_update, ExpressionContext, UpdateExpression};
use ferrodyn_storage::{open_memory, Storage};
use ferrodyn_types::{AttributeValue, ErrorKind, Item};
use serde_json::json;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn engine(storage: &Arc<dyn Storage>, conflicts: ConflictPolicy) -> Arc<Engine> {
    let options = EngineOptions {
        conflicts,
        ..EngineOptions::default()
    };
    Engine::open(Arc::clone(storage), options).expect("engine opens")
}

fn table(engine: &Engine) -> Arc<Table> {
    if let Ok(table) = engine.table_for_items("t") {
        return table;
    }
    engine
        .create_table(NewTable {
            name: "t".into(),
            key_schema: serde_json::from_value(json!([{"AttributeName": "p", "KeyType": "HASH"}]))
                .unwrap(),
            attribute_definitions: serde_json::from_value(
                json!([{"AttributeName": "p", "AttributeType": "S"}]),
            )
            .unwrap(),
            billing_mode: BillingMode::PayPerRequest,
            provisioned: None,
            global_secondary_indexes: Vec::new(),
            local_secondary_indexes: Vec::new(),
            vector_indexes: Vec::new(),
            stream: None,
            deletion_protection: false,
            table_class: None,
            tags: Vec::new(),
            resource_policy: None,
        })
        .unwrap();
    engine.table_for_items("t").unwrap()
}

fn key(p: &str) -> Item {
    Item::from_iter([("p".to_string(), AttributeValue::S(p.into()))])
}

/// `ADD n :one`.
fn increment() -> UpdateExpression {
    let values = HashMap::from([(":one".to_string(), AttributeValue::N(1.into()))]);
    let mut ctx = ExpressionContext::new(None, Some(&values)).unwrap();
    parse_update("ADD n :one", &mut ctx).unwrap()
}

fn counter(engine: &Engine, table: &Table, p: &str) -> i64 {
    let stored = engine.get_item(table, &key(p)).unwrap();
    match stored
        .map(|s| s.parse().unwrap())
        .and_then(|i| i.get("n").cloned())
    {
        Some(AttributeValue::N(n)) => n.to_string().parse().unwrap(),
        _ => 0,
    }
}

/// Runs a TransactWriteItems incrementing `items` on a thread, holding
/// them for `hold`; returns once it holds them.
fn held_transaction(
    engine: &Arc<Engine>,
    items: &[&str],
    hold: Duration,
) -> std::thread::JoinHandle<bool> {
    let wanted = items.len();
    let mine = Arc::clone(engine);
    let items: Vec<String> = items.iter().map(|s| s.to_string()).collect();
    let thread = std::thread::spawn(move || {
        let engine = mine;
        let table = table(&engine);
        let update = increment();
        let actions = items
            .iter()
            .map(|p| {
                Ok(TransactWrite {
                    table: Arc::clone(&table),
                    key: key(p),
                    mutation: Mutation::Update(&update),
                    condition: None,
                    return_old_on_failure: false,
                })
            })
            .collect();
        engine.transact_write_holding(actions, Some(hold)).is_ok()
    });
    let started = Instant::now();
    while engine.locks.held_keys() < wanted {
        assert!(started.elapsed() < Duration::from_secs(5), "never held");
        std::thread::yield_now();
    }
    thread
}

fn transact(engine: &Engine, table: &Arc<Table>, items: &[&str]) -> ferrodyn_types::Result<()> {
    let update = increment();
    let actions = items
        .iter()
        .map(|p| {
            Ok(TransactWrite {
                table: Arc::clone(table),
                key: key(p),
                mutation: Mutation::Update(&update),
                condition: None,
                return_old_on_failure: false,
            })
        })
        .collect();
    engine.transact_write(actions).map(|_| ())
}

fn reason_codes(error: &ferrodyn_types::DynamoError) -> Vec<String> {
    let extra = error.extra.as_ref().expect("cancellation reasons");
    extra["CancellationReasons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["Code"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn requests_on_a_held_item_conflict_and_others_proceed() {
    let storage = open_memory();
    let engine = engine(&storage, ConflictPolicy::Reject);
    let table = table(&engine);
    let holder = held_transaction(&engine, &["hot", "warm"], Duration::from_millis(300));
    let started = Instant::now();
    let update = increment();
    let single = engine
        .write_item(&table, &key("hot"), Mutation::Update(&update), None, false)
        .err()
        .expect("a single write on a held item fails");
    assert_eq!(single.kind, ErrorKind::TransactionConflict);
    let cancelled = transact(&engine, &table, &["cold", "warm"]).unwrap_err();
    assert_eq!(cancelled.kind, ErrorKind::TransactionCanceled);
    assert_eq!(reason_codes(&cancelled), ["None", "TransactionConflict"]);
    let read = engine
        .transact_get(&[(Arc::clone(&table), key("hot"))])
        .err()
        .expect("a TransactGetItems of a held item is cancelled");
    assert_eq!(reason_codes(&read), ["TransactionConflict"]);
    // Another item is written at once, without waiting for the hold.
    engine
        .write_item(&table, &key("cold"), Mutation::Update(&update), None, false)
        .unwrap();
    assert!(started.elapsed() < Duration::from_millis(250));
    // A batch write waits its turn and lands after the transaction.
    let batch = engine.batch_write(vec![(
        Arc::clone(&table),
        key("hot"),
        Mutation::Put(Item::from_iter([
            ("p".to_string(), AttributeValue::S("hot".into())),
            ("n".to_string(), AttributeValue::N(100.into())),
        ])),
    )]);
    assert!(batch.is_ok());
    assert!(holder.join().unwrap(), "the held transaction commits");
    assert_eq!(counter(&engine, &table, "hot"), 100);
    assert_eq!(counter(&engine, &table, "warm"), 1);
    assert_eq!(counter(&engine, &table, "cold"), 1);
    assert_eq!(engine.locks.held_keys(), 0);
}

#[test]
fn the_queue_policy_waits_for_the_transaction() {
    let storage = open_memory();
    let engine = engine(&storage, ConflictPolicy::Queue);
    let table = table(&engine);
    let holder = held_transaction(&engine, &["hot"], Duration::from_millis(100));
    let started = Instant::now();
    transact(&engine, &table, &["hot"]).expect("queued, not cancelled");
    assert!(started.elapsed() >= Duration::from_millis(50));
    assert!(holder.join().unwrap());
    assert_eq!(counter(&engine, &table, "hot"), 2);
}

#[test]
fn parallel_increments_of_one_item_lose_nothing_and_stats_stay_exact() {
    let storage = open_memory();
    let engine = engine(&storage, ConflictPolicy::Reject);
    let table = table(&engine);
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let (engine, table) = (Arc::clone(&engine), Arc::clone(&table));
            std::thread::spawn(move || {
                let update = increment();
                let mut conflicts = 0;
                for i in 0..300u32 {
                    // The hot item, by single writes and by transactions.
                    if i.is_multiple_of(3) {
                        while transact(&engine, &table, &["hot", &format!("own{t}")]).is_err() {
                            conflicts += 1;
                        }
                    } else {
                        let write = || {
                            engine.write_item(
                                &table,
                                &key("hot"),
                                Mutation::Update(&update),
                                None,
                                false,
                            )
                        };
                        while let Err(error) = write() {
                            assert_eq!(error.kind, ErrorKind::TransactionConflict);
                            conflicts += 1;
                        }
                    }
                    engine
                        .write_item(
                            &table,
                            &key(&format!("{t}-{i}")),
                            Mutation::Update(&update),
                            None,
                            false,
                        )
                        .unwrap();
                }
                conflicts
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    assert_eq!(counter(&engine, &table, "hot"), 8 * 300);
    for t in 0..8 {
        assert_eq!(counter(&engine, &table, &format!("own{t}")), 100);
    }
    let items = 1 + 8 + 8 * 300;
    assert_eq!(table.stats().item_count, items);
    // The persisted statistics (base plus unfolded deltas) agree after a
    // reopen.
    let size = table.stats().size_bytes;
    drop((table, engine));
    let reopened = self::engine(&storage, ConflictPolicy::Reject);
    let table = self::table(&reopened);
    assert_eq!(table.stats().item_count, items);
    assert_eq!(table.stats().size_bytes, size);
}
