//! Engine tests on memory storage (no HTTP) of the paths every operation
//! shares: a transaction's all-or-nothing commit and its cancellation
//! reasons, the stream records writes leave, the storage range a Query
//! reads, and what BatchWriteItem leaves unprocessed on shared storage.

use crate::read::{query_range, QueryKeys};
use crate::schema::{BillingMode, StreamSpecification};
use crate::table::Table;
use crate::transactions::TransactWrite;
use crate::{Engine, EngineOptions, Mutation, NewTable};
use ferrodyn_expr::{parse_condition, parse_update, Condition, ExpressionContext, KeyOp};
use ferrodyn_storage::{open_memory, ReadCheck, StorageError, WriteOp};
use ferrodyn_types::{AttributeValue, ErrorKind, Item};
use serde_json::json;
use std::collections::HashMap;
use std::sync::Arc;

fn engine() -> Arc<Engine> {
    Engine::open(open_memory(), EngineOptions::default()).expect("engine opens")
}

/// A table keyed `p` (and `s`, when `sorted`), with a NEW_AND_OLD_IMAGES stream.
fn table(engine: &Engine, sorted: bool) -> Arc<Table> {
    let stream = StreamSpecification {
        stream_enabled: true,
        stream_view_type: Some("NEW_AND_OLD_IMAGES".into()),
    };
    engine
        .create_table(new_table("t", sorted, Some(stream)))
        .unwrap();
    engine.table_for_items("t").unwrap()
}

fn new_table(name: &str, sorted: bool, stream: Option<StreamSpecification>) -> NewTable {
    let mut keys = vec![json!({"AttributeName": "p", "KeyType": "HASH"})];
    let mut attributes = vec![json!({"AttributeName": "p", "AttributeType": "S"})];
    if sorted {
        keys.push(json!({"AttributeName": "s", "KeyType": "RANGE"}));
        attributes.push(json!({"AttributeName": "s", "AttributeType": "S"}));
    }
    NewTable {
        name: name.into(),
        key_schema: serde_json::from_value(json!(keys)).unwrap(),
        attribute_definitions: serde_json::from_value(json!(attributes)).unwrap(),
        billing_mode: BillingMode::PayPerRequest,
        provisioned: None,
        global_secondary_indexes: Vec::new(),
        local_secondary_indexes: Vec::new(),
        vector_indexes: Vec::new(),
        stream,
        deletion_protection: false,
        table_class: None,
        tags: Vec::new(),
        resource_policy: None,
    }
}

fn item(pairs: &[(&str, &str)]) -> Item {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), AttributeValue::S(v.to_string())))
        .collect()
}

fn condition(text: &str) -> Condition {
    let mut ctx = ExpressionContext::new(None, None).unwrap();
    parse_condition(text, &mut ctx).unwrap()
}

#[test]
fn a_cancelled_transaction_names_each_reason_and_writes_nothing() {
    let engine = engine();
    let table = table(&engine, false);
    let missing = condition("attribute_exists(p)");
    let actions = vec![
        Ok(TransactWrite {
            table: Arc::clone(&table),
            key: item(&[("p", "a")]),
            mutation: Mutation::Put(item(&[("p", "a"), ("v", "1")])),
            condition: None,
            return_old_on_failure: false,
        }),
        Ok(TransactWrite {
            table: Arc::clone(&table),
            key: item(&[("p", "b")]),
            mutation: Mutation::Check,
            condition: Some(&missing),
            return_old_on_failure: false,
        }),
    ];
    let error = engine.transact_write(actions).err().expect("cancelled");
    assert_eq!(error.kind, ErrorKind::TransactionCanceled);
    assert!(
        error.message.contains("[None, ConditionalCheckFailed]"),
        "{}",
        error.message
    );
    assert!(engine
        .get_item(&table, &item(&[("p", "a")]))
        .unwrap()
        .is_none());
    assert_eq!(table.stats().item_count, 0);
    assert!(engine
        .read_stream(&table, 0, u64::MAX, 10)
        .unwrap()
        .is_empty());
}

#[test]
fn stream_records_follow_each_write_in_order_with_both_images() {
    let engine = engine();
    let table = table(&engine, false);
    let key = item(&[("p", "a")]);
    let values = HashMap::from([(":v".to_string(), AttributeValue::S("2".into()))]);
    let mut ctx = ExpressionContext::new(None, Some(&values)).unwrap();
    let update = parse_update("SET v = :v", &mut ctx).unwrap();
    let put = Mutation::Put(item(&[("p", "a"), ("v", "1")]));
    engine.write_item(&table, &key, put, None, false).unwrap();
    let updated = Mutation::Update(&update);
    engine
        .write_item(&table, &key, updated, None, false)
        .unwrap();
    // The delete leaves a REMOVE carrying the last image.
    engine
        .write_item(&table, &key, Mutation::Delete, None, false)
        .unwrap();
    let records = engine.read_stream(&table, 0, u64::MAX, 10).unwrap();
    let names: Vec<&str> = records
        .iter()
        .map(|r| r.record["eventName"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["INSERT", "MODIFY", "REMOVE"]);
    assert!(records.windows(2).all(|w| w[0].seq < w[1].seq));
    let modify = &records[1].record["dynamodb"];
    assert_eq!(modify["OldImage"]["v"], json!({"S": "1"}));
    assert_eq!(modify["NewImage"]["v"], json!({"S": "2"}));
    assert_eq!(
        records[2].record["dynamodb"]["OldImage"]["v"],
        json!({"S": "2"})
    );
}

#[test]
fn a_query_range_holds_one_partition_narrowed_by_the_sort_condition() {
    let engine = engine();
    let table = table(&engine, true);
    for (p, s) in [
        ("a", "o#1"),
        ("a", "o#2"),
        ("a", "x#1"),
        ("ab", "o#1"),
        ("b", "o#1"),
    ] {
        let item = item(&[("p", p), ("s", s)]);
        let key = item.clone();
        engine
            .write_item(&table, &key, Mutation::Put(item), None, false)
            .unwrap();
    }
    let partition = AttributeValue::S("a".into());
    let prefix = KeyOp::BeginsWith(AttributeValue::S("o#".into()));
    let sorted_keys = |op: Option<&KeyOp>, forward: bool| {
        let keys = QueryKeys {
            hash: vec![&partition],
            sort_equalities: Vec::new(),
            sort_condition: op,
        };
        let range = query_range(&table, None, &keys, None, forward).unwrap();
        let (start, end) = (range.start.as_ref(), range.end.as_ref());
        let found = engine.storage.scan(
            start.map(|k| k.as_slice()),
            end.map(|k| k.as_slice()),
            !forward,
            100,
        );
        found
            .unwrap()
            .into_iter()
            .map(|(_, v)| {
                let item = crate::stored::StoredItem::decode(v)
                    .unwrap()
                    .parse()
                    .unwrap();
                match (&item["p"], &item["s"]) {
                    (AttributeValue::S(p), AttributeValue::S(s)) => format!("{p}/{s}"),
                    _ => unreachable!("string keys"),
                }
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(sorted_keys(None, true), ["a/o#1", "a/o#2", "a/x#1"]);
    assert_eq!(sorted_keys(Some(&prefix), true), ["a/o#1", "a/o#2"]);
    assert_eq!(sorted_keys(Some(&prefix), false), ["a/o#2", "a/o#1"]);
}

/// Memory storage that says it is shared (as PostgreSQL does) and fails
/// the next `conflicts` checked writes with a conflict, as a database does
/// when other nodes win its serialization checks.
struct ConflictingShared {
    inner: Arc<dyn ferrodyn_storage::Storage>,
    conflicts: std::sync::atomic::AtomicU32,
    /// The same for unchecked writes (a purge's batches).
    write_conflicts: std::sync::atomic::AtomicU32,
    /// The next checked writes that fail as an unreachable database does.
    failures: std::sync::atomic::AtomicU32,
    /// Checked writes attempted so far.
    checked_writes: std::sync::atomic::AtomicU32,
}

impl ConflictingShared {
    /// Takes one of `budget`'s conflicts, if any are left.
    fn conflict(budget: &std::sync::atomic::AtomicU32) -> bool {
        let ordering = std::sync::atomic::Ordering::SeqCst;
        budget
            .fetch_update(ordering, ordering, |n| n.checked_sub(1))
            .is_ok()
    }
}

impl ferrodyn_storage::Storage for ConflictingShared {
    fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StorageError> {
        self.inner.get(key)
    }
    fn scan(
        &self,
        start: std::ops::Bound<&[u8]>,
        end: std::ops::Bound<&[u8]>,
        reverse: bool,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>, StorageError> {
        self.inner.scan(start, end, reverse, limit)
    }
    fn write(&self, ops: Vec<WriteOp>) -> Result<(), StorageError> {
        if Self::conflict(&self.write_conflicts) {
            return Err(StorageError::Conflict { key: None });
        }
        self.inner.write(ops)
    }
    fn write_checked(&self, checks: Vec<ReadCheck>, ops: Vec<WriteOp>) -> Result<(), StorageError> {
        (self.checked_writes).fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        if Self::conflict(&self.failures) {
            return Err(StorageError::Unavailable("the database went away".into()));
        }
        if Self::conflict(&self.conflicts) {
            return Err(StorageError::Conflict { key: None });
        }
        self.inner.write_checked(checks, ops)
    }
    fn shared(&self) -> bool {
        true
    }
    fn flush(&self) -> Result<(), StorageError> {
        self.inner.flush()
    }
    fn open_view(
        &self,
        ranges: &[ferrodyn_storage::KeyRange],
    ) -> Result<Box<dyn ferrodyn_storage::StorageView>, StorageError> {
        self.inner.open_view(ranges)
    }
}

fn conflicting_engine() -> (Arc<ConflictingShared>, Arc<Engine>, Arc<Table>) {
    let storage = Arc::new(ConflictingShared {
        inner: open_memory(),
        conflicts: 0.into(),
        write_conflicts: 0.into(),
        failures: 0.into(),
        checked_writes: 0.into(),
    });
    let engine = Engine::open(storage.clone(), EngineOptions::default()).expect("engine opens");
    let t = table(&engine, false);
    (storage, engine, t)
}

#[test]
fn batch_writes_that_keep_conflicting_on_shared_storage_are_left_unprocessed() {
    let (storage, engine, t) = conflicting_engine();
    storage
        .conflicts
        .store(u32::MAX, std::sync::atomic::Ordering::SeqCst);
    let writes = ["a", "b", "c"]
        .iter()
        .map(|p| {
            let put = Mutation::Put(item(&[("p", p), ("v", "1")]));
            (Arc::clone(&t), item(&[("p", p)]), put)
        })
        .collect();
    let out = engine.api().batch_write_item(writes, |_| false).unwrap();
    assert!(out.planned.is_empty());
    assert_eq!(out.unprocessed, vec![0, 1, 2]);
    storage
        .conflicts
        .store(0, std::sync::atomic::Ordering::SeqCst);
    assert!(engine.get_item(&t, &item(&[("p", "a")])).unwrap().is_none());
}

/// A serialization failure at commit re-plans the transaction (shared
/// storage); it is not a cancellation while retries remain.
#[test]
fn a_transaction_that_meets_a_storage_conflict_is_retried_and_commits() {
    let (storage, engine, t) = conflicting_engine();
    storage
        .conflicts
        .store(3, std::sync::atomic::Ordering::SeqCst);
    let actions = ["a", "b"]
        .iter()
        .map(|p| {
            Ok(TransactWrite {
                table: Arc::clone(&t),
                key: item(&[("p", p)]),
                mutation: Mutation::Put(item(&[("p", p), ("v", "1")])),
                condition: None,
                return_old_on_failure: false,
            })
        })
        .collect();
    engine
        .transact_write_holding(actions, None)
        .expect("commits after the retries");
    assert!(engine.get_item(&t, &item(&[("p", "b")])).unwrap().is_some());
}

/// Delta records under a table's statistics key (the base excluded).
fn stats_delta_records(engine: &Engine, table: &Table) -> usize {
    let base = crate::keyspace::stats_key(table.id);
    let end = crate::keyspace::prefix_end(&base).unwrap();
    let range = (
        std::ops::Bound::Excluded(base.as_slice()),
        std::ops::Bound::Excluded(end.as_slice()),
    );
    engine
        .storage
        .scan(range.0, range.1, false, 100)
        .unwrap()
        .len()
}

#[test]
fn an_overwrite_that_changes_no_figure_writes_no_statistics_record() {
    let engine = engine();
    let table = table(&engine, false);
    let key = item(&[("p", "a")]);
    let put = |v: &str| Mutation::Put(item(&[("p", "a"), ("v", v)]));
    engine
        .write_item(&table, &key, put("1"), None, false)
        .unwrap();
    engine.fold_all_stats().unwrap();
    assert_eq!(stats_delta_records(&engine, &table), 0);
    // Same size: the figures stay, and no record is written for it.
    engine
        .write_item(&table, &key, put("2"), None, false)
        .unwrap();
    assert_eq!(stats_delta_records(&engine, &table), 0);
    // One byte more: one record, and the live figures move with it.
    engine
        .write_item(&table, &key, put("33"), None, false)
        .unwrap();
    assert_eq!(stats_delta_records(&engine, &table), 1);
    engine.fold_all_stats().unwrap();
    let stats = table.stats();
    assert_eq!(stats.item_count, 1);
    assert_eq!(stats.size_bytes, 5); // "p" "a" "v" "33"
}

/// Two nodes that draw the same hybrid-clock number (same microsecond,
/// same 8-bit slot) still write two statistics records: the delta key ends
/// with the whole node id, so neither overwrites the other.
#[test]
fn statistics_records_of_two_nodes_with_one_sequence_number_both_count() {
    // No stream: its records' keys are checked absent, so equal numbers
    // there would be a conflict and a retry, hiding the statistics' case.
    let (storage, first, _) = conflicting_engine();
    first.create_table(new_table("plain", false, None)).unwrap();
    let t = first.table_for_items("plain").unwrap();
    let second = Engine::open(storage, EngineOptions::default()).expect("second node opens");
    let t2 = second.table_for_items("plain").unwrap();
    let same = u64::MAX / 2;
    for (engine, table, p) in [(&first, &t, "a"), (&second, &t2, "b")] {
        *engine.cluster.last_seq.lock() = same;
        let put = Mutation::Put(item(&[("p", p)]));
        engine
            .write_item(table, &item(&[("p", p)]), put, None, false)
            .unwrap();
    }
    first.refresh_stats(&t).unwrap();
    assert_eq!(t.stats().item_count, 2);
}

/// A purge batch that a shared database fails as a serialization conflict
/// is retried at once, not left for the next upkeep round.
#[test]
fn a_purge_that_meets_storage_conflicts_retries_and_finishes() {
    let (storage, engine, t) = conflicting_engine();
    for p in ["a", "b"] {
        let put = Mutation::Put(item(&[("p", p)]));
        engine
            .write_item(&t, &item(&[("p", p)]), put, None, false)
            .unwrap();
    }
    storage
        .write_conflicts
        .store(3, std::sync::atomic::Ordering::SeqCst);
    engine
        .purge_table_data(t.id)
        .expect("purged after the retries");
    assert!(engine.get_item(&t, &item(&[("p", "a")])).unwrap().is_none());
}

/// The retry decision reads the error's type: a storage conflict is retried
/// wherever it is raised (a single write, a transaction, a catalog commit),
/// and neither a storage failure nor an answer for the client is.
#[test]
fn only_storage_conflicts_are_retried_wherever_they_are_raised() {
    use std::sync::atomic::Ordering::SeqCst;
    let (storage, engine, t) = conflicting_engine();
    // Checked writes a call makes, with `conflicts` conflicts and `failures`
    // failures waiting for it.
    let attempts = |conflicts, failures, call: &dyn Fn() -> bool| {
        storage.conflicts.store(conflicts, SeqCst);
        storage.failures.store(failures, SeqCst);
        storage.checked_writes.store(0, SeqCst);
        let succeeded = call();
        (succeeded, storage.checked_writes.load(SeqCst))
    };
    let put = |p: &str| {
        let mutation = Mutation::Put(item(&[("p", p)]));
        engine.write_item(&t, &item(&[("p", p)]), mutation, None, false)
    };
    assert_eq!(attempts(3, 0, &|| put("a").is_ok()), (true, 4), "a write");
    let transact = || {
        let action = |p: &str| {
            Ok(TransactWrite {
                table: Arc::clone(&t),
                key: item(&[("p", p)]),
                mutation: Mutation::Put(item(&[("p", p), ("v", "2")])),
                condition: None,
                return_old_on_failure: false,
            })
        };
        engine
            .transact_write(vec![action("a"), action("b")])
            .is_ok()
    };
    assert_eq!(attempts(3, 0, &transact), (true, 4), "a transaction");
    let create = || {
        engine
            .create_table(new_table("created", false, None))
            .is_ok()
    };
    assert_eq!(
        attempts(3, 0, &create),
        (true, 4),
        "CreateTable: one commit, retried"
    );
    let delete = || engine.delete_table("created").is_ok();
    assert_eq!(attempts(3, 0, &delete), (true, 4), "DeleteTable");
    // A storage failure is the client's InternalServerError at once.
    let failed = || put("b").is_err_and(|e| e.kind == ErrorKind::InternalServerError);
    assert_eq!(attempts(0, 1, &failed), (true, 1), "a storage failure");
    // An answer for the client (a failed condition) is not retried either:
    // it never reaches a commit.
    let conditional = || {
        let values = HashMap::from([(":x".to_string(), AttributeValue::S("x".into()))]);
        let mut ctx = ferrodyn_expr::ExpressionContext::new(None, Some(&values)).unwrap();
        let condition = ferrodyn_expr::parse_condition("v = :x", &mut ctx).unwrap();
        let mutation = Mutation::Put(item(&[("p", "a")]));
        let written =
            engine.write_item(&t, &item(&[("p", "a")]), mutation, Some(&condition), false);
        written.is_err_and(|e| e.kind == ErrorKind::ConditionalCheckFailed)
    };
    assert_eq!(
        attempts(3, 0, &conditional),
        (true, 0),
        "a failed condition"
    );
    // Conflicts beyond the retries: TransactionConflictException.
    let exhausted = || put("c").is_err_and(|e| e.kind == ErrorKind::TransactionConflict);
    let (answered, tries) = attempts(u32::MAX, 0, &exhausted);
    assert!(answered && tries > 4, "{tries} attempts");
}

/// Catalog changes on shared storage: one that cannot re-plan (tags) has
/// its commit sent again as it is; one that fails for good leaves the
/// table as stored; a restore, meeting more conflicts than a commit
/// absorbs on its own, re-plans (CI once saw RestoreTableFromBackup answer
/// TransactionConflictException for a single conflict).
#[test]
fn catalog_changes_retry_storage_conflicts_and_forget_what_failed() {
    use std::sync::atomic::Ordering::SeqCst;
    let (storage, engine, t) = conflicting_engine();
    let attempts = |conflicts, call: &dyn Fn() -> bool| {
        storage.conflicts.store(conflicts, SeqCst);
        storage.checked_writes.store(0, SeqCst);
        let succeeded = call();
        (succeeded, storage.checked_writes.load(SeqCst))
    };
    let arn = t.describe().table_arn;
    let tag = |value: &str| {
        let tags = vec![("k".to_string(), value.to_string())];
        engine.tag_resource(&arn, tags).is_ok()
    };
    assert_eq!(attempts(3, &|| tag("v")), (true, 4), "TagResource");
    assert!(
        !attempts(u32::MAX, &|| tag("changed")).0,
        "TagResource failing"
    );
    storage.conflicts.store(0, SeqCst);
    engine.reload_catalog().unwrap(); // the upkeep's, every second
    let tags = engine.list_tags(&arn).unwrap();
    assert_eq!(tags.get("k").map(String::as_str), Some("v"), "{tags:?}");
    let backup = engine.create_backup("t", "b").unwrap().backup_arn;
    wait_until_available(&engine, &backup);
    let restore = || {
        let overrides = crate::restore::RestoreOverrides::default();
        (engine.restore_table_from_backup("restored", &backup, overrides)).is_ok()
    };
    let (restored, tries) = attempts(6, &restore);
    assert!(
        restored && tries >= 7,
        "RestoreTableFromBackup: {tries} attempts"
    );
}

/// Waits (at most 10 s) for the backup `arn` to be AVAILABLE.
fn wait_until_available(engine: &Engine, arn: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while engine
        .describe_backup(arn)
        .unwrap()
        .backup_details
        .backup_status
        != crate::backups::BackupStatus::Available
    {
        assert!(
            std::time::Instant::now() < deadline,
            "{arn} never AVAILABLE"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

#[test]
fn vector_index_statistics_are_folded_like_a_gsi_s() {
    let engine = engine();
    let mut new = new_table("v", false, None);
    new.vector_indexes = vec![serde_json::from_value(json!({
        "IndexName": "vix", "VectorAttribute": {"AttributeName": "e"}, "Dimensions": 2,
        "DistanceFunction": "EUCLIDEAN", "Projection": {"ProjectionType": "ALL"}}))
    .unwrap()];
    engine.create_table(new).unwrap();
    let table = engine.table_for_items("v").unwrap();
    let vector = |x: &str| {
        AttributeValue::L(vec![
            AttributeValue::N(
                ferrodyn_types::Number::parse(x).unwrap()
            );
            2
        ])
    };
    for (p, x) in [("a", "1"), ("b", "2"), ("c", "3")] {
        let mut it = item(&[("p", p)]);
        it.insert("e".into(), vector(x));
        engine
            .write_item(&table, &item(&[("p", p)]), Mutation::Put(it), None, false)
            .unwrap();
    }
    let index = table.vector_index("vix").unwrap();
    let base = crate::keyspace::index_stats_key(table.id, index.id);
    let deltas = || {
        let end = crate::keyspace::prefix_end(&base).unwrap();
        let range = (
            std::ops::Bound::Excluded(base.as_slice()),
            std::ops::Bound::Excluded(end.as_slice()),
        );
        engine
            .storage
            .scan(range.0, range.1, false, 100)
            .unwrap()
            .len()
    };
    assert_eq!(deltas(), 3);
    engine.fold_all_stats().unwrap();
    assert_eq!(deltas(), 0, "folded into the base record");
    assert_eq!(engine.fold_stats(&base).unwrap().item_count, 3);
    assert_eq!(index.figures.stats().item_count, 3);
}
