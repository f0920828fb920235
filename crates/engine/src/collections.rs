//! Item collections of tables with local secondary indexes: the exact size of
//! every partition's collection, the 10 GB limit on it, and the
//! ItemCollectionMetrics that writes report.
//!
//! An item collection is every base item of one partition-key value plus
//! those items' entries in the table's LSIs. Its size here is the sum of the
//! items' DynamoDB sizes and of the entries' sizes (the projected item), the
//! same measures TableSizeBytes and IndexSizeBytes add up, so the numbers
//! agree with DescribeTable. GSI entries are not part of a collection.
//!
//! Storage: one record per non-empty collection, an 8-byte big-endian size,
//! under `'x' | table id | u32::MAX | hash(pk) | pk` — the table's index key
//! space with a reserved index id, so that dropping the table purges the
//! records with its index entries. The record is written in the same storage
//! batch as the write that changes the collection (see `Engine::commit_from`),
//! so it is exact and survives restarts; writers of one partition hold the
//! record's lock with their item's (see `locks`), so they update it one at a
//! time while writes of other partitions run in parallel; a collection that
//! shrinks to nothing
//! loses its record. A collection without a record (an empty partition, or
//! data written before collections were tracked) is measured by walking its
//! items once, so the size is right even then.
//!
//! SizeEstimateRangeGB: DynamoDB reports a range around its estimate. Ours is
//! the whole gigabytes (2^30 bytes) below and above the exact size:
//! `[floor(size / 1 GiB), floor(size / 1 GiB) + 1]`, so a small collection
//! reports `[0.0, 1.0]` as DynamoDB does.

use crate::index::IndexKind;
use crate::keys::partition_prefix;
use crate::keyspace;
use crate::stored::StoredItem;
use crate::table::Table;
use crate::Engine;
use ferrodyn_storage::WriteOp;
use ferrodyn_types::{item_size, AttributeValue, DynamoError, ErrorKind, Item, Result};
use serde_json::{json, Value};
use std::ops::Bound;

/// DynamoDB's limit on an item collection: 10 GB.
pub const DEFAULT_COLLECTION_LIMIT_BYTES: u64 = 10 * 1024 * 1024 * 1024;

/// Items read per storage page when measuring an untracked collection.
const MEASURE_PAGE: usize = 1000;

const GIB: u64 = 1 << 30;

/// Whether writes to `table` maintain item collections (it has an LSI).
pub fn tracks_collections(table: &Table) -> bool {
    table.has_local_index()
}

/// Storage key of the size record of the collection `partition_value`.
pub(crate) fn record_key(table_id: u64, partition_value: &AttributeValue) -> Vec<u8> {
    keyspace::collection_size_key(table_id, &partition_prefix(table_id, partition_value))
}

/// The bytes one base item adds to its collection: its size plus the size
/// of each LSI entry it has.
pub fn collection_bytes(table: &Table, item: &Item) -> u64 {
    let mut total = item_size(item) as u64;
    for index in table.indexes() {
        if index.kind == IndexKind::Local
            && index.entry_key(table.id, &table.schema, item).is_some()
        {
            total += item_size(&index.project(&table.schema, item)) as u64;
        }
    }
    total
}

/// How one write changes one item collection.
#[derive(Clone, Debug)]
pub struct CollectionChange {
    /// The collection's key: the partition-key attribute of the item.
    pub partition: Item,
    /// Storage key of the size record.
    pub(crate) record: Vec<u8>,
    /// Bytes added (negative: removed) by the item and its LSI entries.
    pub delta: i64,
}

impl CollectionChange {
    pub(crate) fn new(table: &Table, key: &Item, delta: i64) -> CollectionChange {
        let name = &table.schema.hash.name;
        let value = &key[name];
        CollectionChange {
            partition: Item::from_iter([(name.clone(), value.clone())]),
            record: record_key(table.id, value),
            delta,
        }
    }

    fn partition_value(&self) -> &AttributeValue {
        self.partition.values().next().expect("one key attribute")
    }
}

/// The ItemCollectionMetrics of one write: the collection and its size
/// after the write.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectionMetrics {
    pub key: Item,
    pub size_bytes: u64,
}

impl CollectionMetrics {
    /// `[low, high]` in GB: the whole gigabytes around the exact size.
    pub fn size_estimate_range_gb(&self) -> [f64; 2] {
        let low = self.size_bytes / GIB;
        [low as f64, (low + 1) as f64]
    }

    /// `{"ItemCollectionKey": ..., "SizeEstimateRangeGB": [low, high]}`.
    pub fn to_json(&self) -> Value {
        json!({
            "ItemCollectionKey": serde_json::to_value(&self.key).expect("plain data always serialises"),
            "SizeEstimateRangeGB": self.size_estimate_range_gb(),
        })
    }
}

/// The error of a write that would grow a collection past the limit.
pub fn limit_exceeded() -> DynamoError {
    DynamoError::new(
        ErrorKind::ItemCollectionSizeLimitExceeded,
        "Item collection size limit exceeded",
    )
}

/// Collection sizes as a series of writes (a batch or a transaction) leaves
/// them; the first touch of a collection reads its size from storage.
#[derive(Default)]
pub(crate) struct CollectionTracker {
    sizes: Vec<(Vec<u8>, u64)>,
}

impl CollectionTracker {
    fn slot(&mut self, engine: &Engine, table: &Table, change: &CollectionChange) -> Result<usize> {
        if let Some(i) = self.sizes.iter().position(|(k, _)| *k == change.record) {
            return Ok(i);
        }
        let size = engine.collection_size(table, change)?;
        self.sizes.push((change.record.clone(), size));
        Ok(self.sizes.len() - 1)
    }

    /// Applies a change and returns the collection's size after it. With a
    /// `limit`, a change that grows the collection past it is refused (and
    /// not applied).
    pub(crate) fn apply(
        &mut self,
        engine: &Engine,
        table: &Table,
        change: &CollectionChange,
        limit: Option<u64>,
    ) -> Result<u64> {
        let i = self.slot(engine, table, change)?;
        let size = &mut self.sizes[i].1;
        let after = size.saturating_add_signed(change.delta);
        if let Some(limit) = limit {
            if change.delta > 0 && after > limit {
                return Err(limit_exceeded());
            }
        }
        *size = after;
        Ok(after)
    }

    /// The storage operations that record the sizes (an empty collection's
    /// record is removed).
    pub(crate) fn into_ops(self) -> impl Iterator<Item = WriteOp> {
        self.sizes.into_iter().map(|(key, size)| {
            if size == 0 {
                WriteOp::Delete(key)
            } else {
                WriteOp::Put(key, size.to_be_bytes().to_vec())
            }
        })
    }
}

impl Engine {
    /// The committed size of a collection.
    fn collection_size(&self, table: &Table, change: &CollectionChange) -> Result<u64> {
        match self
            .storage
            .get(&change.record)
            .map_err(crate::storage_error)?
        {
            Some(bytes) => {
                let bytes: [u8; 8] = bytes
                    .as_slice()
                    .try_into()
                    .map_err(|_| DynamoError::internal("corrupt item collection record"))?;
                Ok(u64::from_be_bytes(bytes))
            }
            None => self.measure_collection(table, change.partition_value()),
        }
    }

    /// Adds up a collection from its items (a collection without a record).
    fn measure_collection(&self, table: &Table, partition_value: &AttributeValue) -> Result<u64> {
        let prefix = partition_prefix(table.id, partition_value);
        let end = keyspace::prefix_end(&prefix);
        let end = match &end {
            Some(e) => Bound::Excluded(e.as_slice()),
            None => Bound::Unbounded,
        };
        let mut start = prefix.clone();
        let mut first = true;
        let mut total = 0u64;
        loop {
            let lower = if first {
                Bound::Included(start.as_slice())
            } else {
                Bound::Excluded(start.as_slice())
            };
            let page = self
                .storage
                .scan(lower, end, false, MEASURE_PAGE)
                .map_err(crate::storage_error)?;
            let full = page.len() == MEASURE_PAGE;
            let Some(last) = page.last().map(|(k, _)| k.clone()) else {
                return Ok(total);
            };
            for (_, value) in page {
                let item = StoredItem::decode(value)?.parse()?;
                total += collection_bytes(table, &item);
            }
            if !full {
                return Ok(total);
            }
            start = last;
            first = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{BillingMode, IndexDescription};
    use crate::transactions::TransactWrite;
    use crate::{EngineOptions, Mutation, NewTable};
    use ferrodyn_storage::{open_memory, Storage};
    use std::sync::Arc;

    fn engine_on(storage: &Arc<dyn Storage>, limit: u64) -> Arc<Engine> {
        let options = EngineOptions {
            item_collection_limit_bytes: limit,
            ..EngineOptions::default()
        };
        Engine::open(Arc::clone(storage), options).expect("engine opens")
    }

    /// A table `t` keyed (p, s) with an LSI on `l` projecting `a` only, or
    /// without indexes.
    fn create(engine: &Engine, name: &str, with_lsi: bool) -> Arc<Table> {
        let lsi: IndexDescription = serde_json::from_value(json!({
            "IndexName": "by_l",
            "KeySchema": [
                {"AttributeName": "p", "KeyType": "HASH"},
                {"AttributeName": "l", "KeyType": "RANGE"}
            ],
            "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a"]},
            "IndexSizeBytes": 0, "ItemCount": 0, "IndexArn": ""
        }))
        .expect("index description");
        let mut definitions = vec![
            json!({"AttributeName": "p", "AttributeType": "S"}),
            json!({"AttributeName": "s", "AttributeType": "S"}),
        ];
        if with_lsi {
            definitions.push(json!({"AttributeName": "l", "AttributeType": "S"}));
        }
        engine
            .create_table(NewTable {
                name: name.into(),
                key_schema: serde_json::from_value(json!([
                    {"AttributeName": "p", "KeyType": "HASH"},
                    {"AttributeName": "s", "KeyType": "RANGE"}
                ]))
                .unwrap(),
                attribute_definitions: serde_json::from_value(Value::Array(definitions)).unwrap(),
                billing_mode: BillingMode::PayPerRequest,
                provisioned: None,
                global_secondary_indexes: Vec::new(),
                local_secondary_indexes: if with_lsi { vec![lsi] } else { Vec::new() },
                vector_indexes: Vec::new(),
                stream: None,
                deletion_protection: false,
                table_class: None,
                tags: Vec::new(),
                resource_policy: None,
            })
            .expect("table created");
        engine.table_for_items(name).expect("table exists")
    }

    fn item(p: &str, s: &str, extra: &[(&str, &str)]) -> Item {
        let mut item = Item::new();
        item.insert("p".into(), AttributeValue::S(p.into()));
        item.insert("s".into(), AttributeValue::S(s.into()));
        for (name, value) in extra {
            item.insert((*name).into(), AttributeValue::S((*value).into()));
        }
        item
    }

    fn key(p: &str, s: &str) -> Item {
        item(p, s, &[])
    }

    fn put(engine: &Engine, table: &Arc<Table>, item: Item) -> Result<Option<CollectionMetrics>> {
        let key = table.schema.extract(&item);
        let outcome = engine.write_item(table, &key, Mutation::Put(item), None, false)?;
        Ok(outcome.item_collection)
    }

    /// The size DescribeTable accounts for: items plus LSI entries.
    fn described_bytes(table: &Table) -> u64 {
        let description = table.describe();
        let lsi: u64 = description
            .local_secondary_indexes
            .iter()
            .flatten()
            .map(|i| i.index_size_bytes)
            .sum();
        description.table_size_bytes + lsi
    }

    #[test]
    fn orphan_index_entries_are_purged_at_start_but_live_ones_kept() {
        let storage = open_memory();
        let engine = engine_on(&storage, 1 << 30);
        let table = create(&engine, "orphans", true);
        put(&engine, &table, item("a", "1", &[("l", "x"), ("a", "v")])).unwrap();
        // Entries of an index id the table no longer has, as a crash during a
        // GSI's background purge would leave them.
        let mut orphan = keyspace::index_entries(table.id, 7);
        orphan.extend_from_slice(b"left-behind");
        storage
            .write(vec![ferrodyn_storage::WriteOp::Put(
                orphan.clone(),
                b"x".to_vec(),
            )])
            .unwrap();
        let table_entries = |storage: &Arc<dyn Storage>| {
            let start = keyspace::table_index_entries(table.id);
            let end = keyspace::prefix_end(&start).unwrap();
            storage
                .scan(
                    std::ops::Bound::Included(&start),
                    std::ops::Bound::Excluded(&end),
                    false,
                    100,
                )
                .unwrap()
        };
        let before = table_entries(&storage).len();
        drop(engine);
        let reopened = engine_on(&storage, 1 << 30);
        // The orphan purge runs in the background after start-up (as upkeep,
        // not a table operation): wait for the orphan to go.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while table_entries(&storage).iter().any(|(k, _)| *k == orphan)
            && std::time::Instant::now() < deadline
        {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        drop(reopened);
        let after = table_entries(&storage);
        assert_eq!(after.len(), before - 1, "only the orphan is gone");
        assert!(after.iter().all(|(k, _)| *k != orphan));
    }

    #[test]
    fn sizes_are_exact_and_follow_every_write() {
        let storage = open_memory();
        let engine = engine_on(&storage, DEFAULT_COLLECTION_LIMIT_BYTES);
        let table = create(&engine, "t", true);
        // Not in the LSI (no `l`): the item alone.
        let plain = item("a", "1", &[("x", "hello")]);
        let m = put(&engine, &table, plain.clone()).unwrap().unwrap();
        assert_eq!(
            m.key,
            Item::from_iter([("p".to_string(), AttributeValue::S("a".into()))])
        );
        assert_eq!(m.size_bytes, item_size(&plain) as u64);
        assert_eq!(m.size_estimate_range_gb(), [0.0, 1.0]);
        // In the LSI: the item plus its projected entry (keys, l and a).
        let indexed = item("a", "2", &[("l", "k"), ("a", "vv"), ("x", "not projected")]);
        let m = put(&engine, &table, indexed.clone()).unwrap().unwrap();
        let entry = item("a", "2", &[("l", "k"), ("a", "vv")]);
        let expected = item_size(&plain) + item_size(&indexed) + item_size(&entry);
        assert_eq!(m.size_bytes, expected as u64);
        assert_eq!(m.size_bytes, described_bytes(&table));
        // Another partition is another collection.
        let other = put(&engine, &table, item("b", "1", &[])).unwrap().unwrap();
        assert_eq!(other.size_bytes, item_size(&item("b", "1", &[])) as u64);
        // An update that drops `l` removes the entry from the collection.
        let update = ferrodyn_expr::parse_update(
            "REMOVE l",
            &mut ferrodyn_expr::ExpressionContext::new(None, None).unwrap(),
        )
        .unwrap();
        let outcome = engine
            .write_item(
                &table,
                &key("a", "2"),
                Mutation::Update(&update),
                None,
                false,
            )
            .unwrap();
        let without_l = item("a", "2", &[("a", "vv"), ("x", "not projected")]);
        assert_eq!(
            outcome.item_collection.unwrap().size_bytes,
            (item_size(&plain) + item_size(&without_l)) as u64
        );
        // Deletes shrink it; an empty collection drops its record.
        for s in ["1", "2"] {
            engine
                .write_item(&table, &key("a", s), Mutation::Delete, None, false)
                .unwrap();
        }
        let record = record_key(table.id, &AttributeValue::S("a".into()));
        assert_eq!(storage.get(&record).unwrap(), None);
        let m = engine
            .write_item(&table, &key("a", "9"), Mutation::Delete, None, false)
            .unwrap()
            .item_collection
            .unwrap();
        assert_eq!(m.size_bytes, 0);
    }

    #[test]
    fn tables_without_an_lsi_report_nothing() {
        let engine = engine_on(&open_memory(), 10);
        let table = create(&engine, "plain", false);
        // Far over the (tiny) limit, yet no LSI: no collection, no limit.
        assert_eq!(
            put(&engine, &table, item("a", "1", &[("x", "long enough")])).unwrap(),
            None
        );
    }

    #[test]
    fn growth_past_the_limit_is_refused_and_shrinking_is_not() {
        let storage = open_memory();
        let first = item("a", "1", &[("l", "k"), ("a", "0123456789")]);
        let one = collection_bytes(
            &create(&engine_on(&open_memory(), 0), "probe", true),
            &first,
        );
        let engine = engine_on(&storage, 2 * one + 5);
        let table = create(&engine, "t", true);
        put(&engine, &table, first.clone()).unwrap();
        put(
            &engine,
            &table,
            item("a", "2", &[("l", "k"), ("a", "0123456789")]),
        )
        .unwrap();
        let error = put(
            &engine,
            &table,
            item("a", "3", &[("l", "k"), ("a", "0123456789")]),
        )
        .unwrap_err();
        assert_eq!(error.kind, ErrorKind::ItemCollectionSizeLimitExceeded);
        assert_eq!(error.message, "Item collection size limit exceeded");
        assert!(engine.get_item(&table, &key("a", "3")).unwrap().is_none());
        // Replacing an item with a smaller one, or another partition, is fine.
        put(&engine, &table, item("a", "1", &[])).unwrap();
        put(
            &engine,
            &table,
            item("b", "1", &[("l", "k"), ("a", "0123456789")]),
        )
        .unwrap();
        // Exactly at the limit is allowed; one byte more is not.
        let room = 2 * one + 5 - described_bytes_of(&engine, &table, "a");
        let filler = "z".repeat(room as usize - item_size(&item("a", "4", &[("f", "")])));
        let m = put(&engine, &table, item("a", "4", &[("f", &filler)]))
            .unwrap()
            .unwrap();
        assert_eq!(m.size_bytes, 2 * one + 5);
        let error = put(&engine, &table, item("a", "5", &[])).unwrap_err();
        assert_eq!(error.kind, ErrorKind::ItemCollectionSizeLimitExceeded);
        // Deleting from a full collection always works.
        engine
            .write_item(&table, &key("a", "4"), Mutation::Delete, None, false)
            .unwrap();
    }

    fn described_bytes_of(engine: &Engine, table: &Table, p: &str) -> u64 {
        let change = CollectionChange::new(table, &key(p, "x"), 0);
        engine.collection_size(table, &change).unwrap()
    }

    #[test]
    fn transactions_and_batches_count_their_own_earlier_writes() {
        let storage = open_memory();
        let a1 = item("a", "1", &[("x", "0123456789")]);
        let limit = item_size(&a1) as u64 + 10;
        let engine = engine_on(&storage, limit);
        let table = create(&engine, "t", true);
        let action = |item: Item| {
            Ok(TransactWrite {
                table: Arc::clone(&table),
                key: table.schema.extract(&item),
                mutation: Mutation::Put(item),
                condition: None,
                return_old_on_failure: false,
            })
        };
        // Each fits alone; together they do not.
        let error = engine
            .transact_write(vec![
                action(a1.clone()),
                action(item("b", "1", &[])),
                action(item("a", "2", &[("x", "0123456789")])),
            ])
            .err()
            .expect("cancelled");
        assert_eq!(error.kind, ErrorKind::TransactionCanceled);
        let reasons = &error.extra.as_ref().unwrap()["CancellationReasons"];
        assert_eq!(reasons[0]["Code"], "None");
        assert_eq!(reasons[1]["Code"], "None");
        assert_eq!(reasons[2]["Code"], "ItemCollectionSizeLimitExceeded");
        assert_eq!(reasons[2]["Message"], "Collection size exceeded");
        assert!(engine.get_item(&table, &key("a", "1")).unwrap().is_none());
        let error = engine
            .batch_write(vec![
                (Arc::clone(&table), key("a", "1"), Mutation::Put(a1.clone())),
                (
                    Arc::clone(&table),
                    key("a", "2"),
                    Mutation::Put(item("a", "2", &[("x", "0123456789")])),
                ),
            ])
            .err()
            .map(ferrodyn_types::DynamoError::from)
            .expect("refused");
        assert_eq!(error.kind, ErrorKind::ItemCollectionSizeLimitExceeded);
        // Committed together, the sizes add up in order.
        let writes = engine
            .transact_write(vec![action(a1.clone()), action(item("a", "2", &[]))])
            .unwrap();
        let sizes: Vec<u64> = writes
            .iter()
            .map(|w| w.item_collection_metrics().unwrap().size_bytes)
            .collect();
        let first = item_size(&a1) as u64;
        assert_eq!(
            sizes,
            [first, first + item_size(&item("a", "2", &[])) as u64]
        );
    }

    #[test]
    fn sizes_survive_a_restart_and_untracked_collections_are_measured() {
        let storage = open_memory();
        let engine = engine_on(&storage, DEFAULT_COLLECTION_LIMIT_BYTES);
        let table = create(&engine, "t", true);
        put(&engine, &table, item("a", "1", &[("l", "k"), ("a", "v")])).unwrap();
        let before = put(&engine, &table, item("a", "2", &[])).unwrap().unwrap();
        drop(engine);
        let engine = engine_on(&storage, DEFAULT_COLLECTION_LIMIT_BYTES);
        let table = engine.table_for_items("t").unwrap();
        let record = record_key(table.id, &AttributeValue::S("a".into()));
        assert_eq!(
            storage.get(&record).unwrap(),
            Some(before.size_bytes.to_be_bytes().to_vec())
        );
        // Data from before collections were tracked has no record: the
        // collection is measured from its items on first touch.
        storage
            .write(vec![WriteOp::Delete(record.clone())])
            .unwrap();
        let after = engine
            .write_item(&table, &key("a", "2"), Mutation::Delete, None, false)
            .unwrap()
            .item_collection
            .unwrap();
        let remaining = item("a", "1", &[("l", "k"), ("a", "v")]);
        assert_eq!(after.size_bytes, collection_bytes(&table, &remaining));
        assert_eq!(after.size_bytes, described_bytes(&table));
        assert_eq!(
            storage.get(&record).unwrap(),
            Some(after.size_bytes.to_be_bytes().to_vec())
        );
        // Dropping the table purges the records with the index entries.
        engine.delete_table("t").unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while engine.background_jobs() > 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(storage.get(&record).unwrap(), None);
    }

    fn metrics(size_bytes: u64) -> CollectionMetrics {
        CollectionMetrics {
            key: Item::from_iter([("p".to_string(), AttributeValue::S("a".into()))]),
            size_bytes,
        }
    }

    #[test]
    fn range_brackets_the_size_in_whole_gigabytes() {
        assert_eq!(metrics(0).size_estimate_range_gb(), [0.0, 1.0]);
        assert_eq!(metrics(GIB - 1).size_estimate_range_gb(), [0.0, 1.0]);
        assert_eq!(metrics(GIB).size_estimate_range_gb(), [1.0, 2.0]);
        assert_eq!(
            metrics(DEFAULT_COLLECTION_LIMIT_BYTES).size_estimate_range_gb(),
            [10.0, 11.0]
        );
        assert_eq!(
            metrics(5).to_json(),
            json!({"ItemCollectionKey": {"p": {"S": "a"}}, "SizeEstimateRangeGB": [0.0, 1.0]})
        );
    }

    #[test]
    fn records_sort_apart_from_index_entries() {
        let key = record_key(7, &AttributeValue::S("a".into()));
        assert!(key.starts_with(&keyspace::table_index_entries(7)));
        assert_eq!(
            keyspace::index_id_of(&key),
            Some(keyspace::COLLECTION_RECORD_ID)
        );
    }
}
