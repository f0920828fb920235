//! Single-item reads and writes: GetItem, and the one write path shared by
//! PutItem, UpdateItem and DeleteItem (read the current item, check the
//! condition, compute the new item, commit it with the table's statistics in
//! one atomic storage batch).
//!
//! A writer holds its item's lock (see [`crate::locks`]) from the read to the
//! commit, so the read-check-write sequence is atomic with respect to every
//! other write of that item, while writes of other items run in parallel;
//! readers never take a lock and see either the old or the new item, never
//! a mix. Table and index statistics are written as delta records (see
//! [`crate::stats`]), so parallel writers never overwrite each other's.

use crate::capacity::write_units;
use crate::collections::{
    tracks_collections, CollectionChange, CollectionMetrics, CollectionTracker,
};
use crate::error::{EngineResult, RetryPolicy};
use crate::index::{Index, IndexKind, IndexState};
use crate::keyspace::{index_stats_key, stats_key};
use crate::locks::{Holder, LockKey};
use crate::shared::ChangeSource;
use crate::table::{Table, TableStats};
use crate::vectors::{VectorChange, VectorIndex};
use crate::Engine;
use ferrodyn_expr::{Condition, Path, UpdateExpression};
use ferrodyn_storage::WriteOp;
use ferrodyn_types::limits::MAX_ATTRIBUTE_NAME_BYTES;
use ferrodyn_types::{
    item_size, DynamoError, ErrorKind, Item, Result, MAX_ITEM_SIZE, MAX_NESTING_DEPTH,
};
use smallvec::SmallVec;
use std::sync::Arc;

pub use crate::stored::{parse_item_json, StoredItem};

/// What a write does to the item under its key.
#[derive(Clone)]
pub enum Mutation<'a> {
    /// Replace the item (PutItem); the item carries its key.
    Put(Item),
    /// Apply an update expression, creating the item from its key if absent.
    Update(&'a UpdateExpression),
    /// Remove the item.
    Delete,
    /// Only check the condition (a transaction's ConditionCheck).
    Check,
}

/// Everything a caller needs to build the response of a write.
pub struct WriteOutcome {
    pub old: Option<Item>,
    pub new: Option<Item>,
    /// Paths an update touched, for ReturnValues UPDATED_OLD / UPDATED_NEW.
    pub updated_paths: Vec<Path>,
    pub write_units: f64,
    /// Units spent on each secondary index.
    pub index_units: Vec<(String, IndexKind, f64)>,
    /// VectorWriteRequestBytes spent on each vector index.
    pub vector_units: Vec<(String, f64)>,
    /// The item collection the write changed (tables with an LSI only).
    pub item_collection: Option<CollectionMetrics>,
}

pub use crate::error::transaction_conflict;

/// A failed condition, carrying the current item for
/// ReturnValuesOnConditionCheckFailure=ALL_OLD.
pub fn condition_failed(old: Option<&Item>, return_old: bool) -> DynamoError {
    let error = DynamoError::new(
        ErrorKind::ConditionalCheckFailed,
        "The conditional request failed",
    );
    match old {
        Some(item) if return_old => error.with_field(
            "Item",
            serde_json::to_value(item).expect("plain data always serialises"),
        ),
        _ => error,
    }
}

impl Engine {
    /// Reads one item by its (validated) key.
    pub fn get_item(&self, table: &Table, key: &Item) -> Result<Option<StoredItem>> {
        self.get_stored(&table.schema.encode(table.id, key))
    }

    /// Reads one item by its storage key.
    pub(crate) fn get_stored(&self, storage_key: &[u8]) -> Result<Option<StoredItem>> {
        match self
            .storage
            .get(storage_key)
            .map_err(crate::storage_error)?
        {
            Some(bytes) => Ok(Some(StoredItem::decode(bytes)?)),
            None => Ok(None),
        }
    }

    /// Conditionally writes one item. `key` must already be validated against
    /// the table's schema (for a Put it is extracted from the item).
    pub fn write_item(
        &self,
        table: &Arc<Table>,
        key: &Item,
        mutation: Mutation<'_>,
        condition: Option<&Condition>,
        return_old_on_failure: bool,
    ) -> Result<WriteOutcome> {
        let _writers = table.writers();
        let mut keys: SmallVec<[LockKey; 2]> = SmallVec::new();
        self.push_write_keys(table, key, &mut keys);
        let _held = self
            .locks
            .acquire(Holder::Write, &keys)
            .map_err(|_| transaction_conflict())?;
        // The item's lock key is its storage key: planning takes it.
        let mut storage_key = Some(keys.swap_remove(0).key);
        // Shared storage: a storage conflict (another node wrote a key this
        // plan read) re-plans on the table as now stored (cluster.rs); only
        // then is a spare copy of the mutation kept.
        let spare = self.shared().then(|| mutation.clone());
        let mut first = Some(mutation);
        let written = self.retry(RetryPolicy::Write, |retry| {
            let table = &self.refresh_table_on_retry(table, retry)?;
            let mutation = first.take().or_else(|| spare.clone()).expect("a mutation");
            let storage_key = storage_key
                .take()
                .unwrap_or_else(|| table.schema.encode(table.id, key));
            self.check_table_live(table)?;
            let mut planned = self.plan_write(
                table,
                key,
                storage_key,
                mutation,
                condition,
                return_old_on_failure,
            )?;
            self.admit_collection(&mut CollectionTracker::default(), &mut planned)?;
            self.admit_index_partitions(&planned)?;
            self.commit(std::slice::from_mut(&mut planned))?;
            self.charge_write_partitions(&planned, 1.0);
            Ok(planned.into_outcome())
        });
        Ok(written?)
    }

    /// Appends the keys a write of `key` holds: the item's storage key
    /// (first), and on a table with an LSI the size record of its item
    /// collection.
    pub(crate) fn push_write_keys(
        &self,
        table: &Table,
        key: &Item,
        keys: &mut impl Extend<LockKey>,
    ) {
        keys.extend([LockKey {
            key: table.schema.encode(table.id, key),
            item: true,
        }]);
        if tracks_collections(table) {
            if let Some(value) = key.get(&table.schema.hash.name) {
                keys.extend([LockKey {
                    key: crate::collections::record_key(table.id, value),
                    item: false,
                }]);
            }
        }
    }

    /// Fails if `table` is no longer the table of its name: it may have
    /// been deleted while the caller waited for its writers guard (which,
    /// once held, keeps it from being deleted until the write is done).
    pub(crate) fn check_table_live(&self, table: &Table) -> Result<()> {
        if self
            .tables
            .read()
            .get(&table.catalog_name)
            .is_none_or(|t| t.id != table.id)
        {
            return Err(DynamoError::resource_not_found(
                "Requested resource not found",
            ));
        }
        Ok(())
    }

    /// Reads the current item, checks the condition and computes the new
    /// item, without writing. `storage_key` is `key` encoded for `table`
    /// (the caller's lock key). Callers hold the item's lock (and the
    /// table's writers guard, having checked the table is live) from
    /// planning to [`Engine::commit`], which is what makes
    /// read-check-write atomic.
    pub(crate) fn plan_write(
        &self,
        table: &Arc<Table>,
        key: &Item,
        storage_key: Vec<u8>,
        mutation: Mutation<'_>,
        condition: Option<&Condition>,
        return_old_on_failure: bool,
    ) -> Result<PlannedWrite> {
        // Shared storage: the schema this plan uses, then the item (cluster.rs).
        let mut read = self.catalog_read(table);
        let found = self
            .storage
            .get(&storage_key)
            .map_err(crate::storage_error)?;
        read.extend(self.read_check(&storage_key, &found));
        let old = match found {
            Some(bytes) => Some(StoredItem::decode(bytes)?.parse()?),
            None => None,
        };
        if let Some(condition) = condition {
            if !condition.evaluate(old.as_ref())? {
                return Err(condition_failed(old.as_ref(), return_old_on_failure));
            }
        }
        let changes = !matches!(mutation, Mutation::Check);
        // Global tables: the item's version moves with it (replication/).
        let version = match changes && table.is_replicated() {
            true => Some(self.plan_version(table, &storage_key, &mut read)?),
            false => None,
        };
        let (new, updated_paths) = apply_mutation(mutation, key, old.as_ref())?;
        let old_size = old.as_ref().map_or(0, item_size);
        let new_size = new.as_ref().map_or(0, item_size);
        check_new_size(new_size, &updated_paths)?;
        if let Some(new) = &new {
            check_nesting(new, &updated_paths)?;
        }
        let (index_changes, vector_changes) = if changes {
            (
                self.index_changes(table, old.as_ref(), new.as_ref(), &mut read)?,
                self.vector_changes(table, &storage_key, old.as_ref(), new.as_ref(), &mut read)?,
            )
        } else {
            (Vec::new(), Vec::new())
        };
        // The item collection grows or shrinks by the item and its LSI
        // entries (tables with an LSI only; a ConditionCheck changes none).
        let collection = (changes && tracks_collections(table)).then(|| {
            let entries: i64 = index_changes
                .iter()
                .filter(|c| c.index.kind == IndexKind::Local)
                .map(|c| c.delta.size_bytes)
                .sum();
            CollectionChange::new(table, key, new_size as i64 - old_size as i64 + entries)
        });
        Ok(PlannedWrite {
            table: Arc::clone(table),
            collection,
            collection_size: None,
            partition_hash: crate::keyspace::item_hash_of(&storage_key),
            storage_key,
            read,
            index_changes,
            vector_changes,
            write_units: write_units(old_size.max(new_size)),
            delta: TableStats {
                item_count: i64::from(new.is_some()) - i64::from(old.is_some()),
                size_bytes: new_size as i64 - old_size as i64,
            },
            changes,
            version,
            old,
            new,
            updated_paths,
        })
    }

    /// Commits planned writes, with each touched table's statistics, in one
    /// atomic storage batch. The caller holds the writes' locks. The writes'
    /// storage keys move into the batch: a write is committed once.
    pub(crate) fn commit(&self, writes: &mut [PlannedWrite]) -> EngineResult<()> {
        self.commit_from(writes, ChangeSource::Application)
    }

    /// [`Engine::commit`], naming who made the change (for stream records).
    pub(crate) fn commit_from(
        &self,
        writes: &mut [PlannedWrite],
        source: ChangeSource,
    ) -> EngineResult<()> {
        // MRSC: a majority of regions holds each write before it commits here.
        if writes.iter().any(|w| w.table.is_strong()) {
            self.propose_strongly(writes)?;
        }
        // Shared storage: what planning read, checked at commit (cluster.rs).
        let mut checks = self.read_set(writes)?;
        let mut ops = Vec::with_capacity(writes.len() + 1);
        let mut deltas = StatsDeltas::default();
        for write in writes.iter_mut().filter(|w| w.changes) {
            write.take_ops(&mut ops, &mut deltas);
        }
        deltas.drop_unchanged();
        let writes = &*writes;
        let StatsDeltas {
            tables: deltas,
            indexes: index_deltas,
            vectors: vector_deltas,
        } = deltas;
        if ops.is_empty() {
            return Ok(());
        }
        for (index, table_id, delta) in &index_deltas {
            ops.push(self.stats_delta(index_stats_key(*table_id, index.id), *delta));
        }
        for (index, table_id, delta) in &vector_deltas {
            ops.push(self.stats_delta(index_stats_key(*table_id, index.id), *delta));
        }
        ops.extend(self.collection_ops(writes)?);
        let records = self.stream_records(writes, source);
        for (_, key, record) in &records.entries {
            self.check_absent(&mut checks, key);
            ops.push(WriteOp::Put(key.clone(), record.clone()));
        }
        for (table, delta) in &deltas {
            ops.push(self.stats_delta(stats_key(table.id), *delta));
        }
        let written = self.storage.write_checked(checks, ops);
        records.finish();
        written?;
        for (table, delta) in deltas {
            table.apply_stats_delta(delta);
            table.mark_stats_dirty();
        }
        for (index, _, delta) in index_deltas {
            index.apply_stats_delta(delta);
        }
        for (index, _, delta) in vector_deltas {
            index.figures.apply_stats_delta(delta);
        }
        // The search structures follow the commit, before the items' locks
        // are released (so they see writes of an item in commit order).
        for change in writes.iter().flat_map(|w| &w.vector_changes) {
            change.apply();
        }
        Ok(())
    }
}

impl Engine {
    /// Works out the collection size after `write`, given the writes before
    /// it in `tracker`, refusing a write that grows it past the limit.
    pub(crate) fn admit_collection(
        &self,
        tracker: &mut CollectionTracker,
        write: &mut PlannedWrite,
    ) -> Result<()> {
        if let Some(change) = &write.collection {
            let size = tracker.apply(
                self,
                &write.table,
                change,
                Some(self.collection_limit_bytes),
            )?;
            write.collection_size = Some(size);
        }
        Ok(())
    }

    /// The storage operations recording every collection `writes` change.
    /// The caller holds the writes' locks, collection records included.
    pub(crate) fn collection_ops(&self, writes: &[PlannedWrite]) -> Result<Vec<WriteOp>> {
        let mut tracker = CollectionTracker::default();
        for write in writes {
            if let Some(change) = write.collection.as_ref().filter(|c| c.delta != 0) {
                tracker.apply(self, &write.table, change, None)?;
            }
        }
        Ok(tracker.into_ops().collect())
    }
}

/// The item a mutation leaves under `key` (None: no item), given the item
/// there now, and the document paths an update changed.
fn apply_mutation(
    mutation: Mutation<'_>,
    key: &Item,
    old: Option<&Item>,
) -> Result<(Option<Item>, Vec<Path>)> {
    Ok(match mutation {
        Mutation::Put(item) => (Some(item), Vec::new()),
        Mutation::Delete => (None, Vec::new()),
        Mutation::Check => (old.cloned(), Vec::new()),
        Mutation::Update(update) => {
            let mut item = old.cloned().unwrap_or_else(|| key.clone());
            let updated_paths = match old {
                Some(_) => update.apply(&mut item)?,
                None => update.apply_to_missing(&mut item)?,
            };
            // An update that only removes things does not create a missing
            // item (an empty update does, as in DynamoDB).
            let only_removed =
                old.is_none() && !update.actions.is_empty() && item.len() == key.len();
            ((!only_removed).then_some(item), updated_paths)
        }
    })
}

/// Refuses a new item over DynamoDB's 400 KB, worded as DynamoDB words it
/// for a put and for an update.
fn check_new_size(new_size: usize, updated_paths: &[Path]) -> Result<()> {
    if new_size <= MAX_ITEM_SIZE {
        return Ok(());
    }
    let message = if updated_paths.is_empty() {
        "Item size has exceeded the maximum allowed size"
    } else {
        "Item size to update has exceeded the maximum allowed size"
    };
    Err(DynamoError::validation(message))
}

/// Refuses a new item nested deeper than DynamoDB stores (the item itself
/// counts as a level), worded as DynamoDB words it for a put and an update.
/// A request's values may be one level deeper: a condition can compare them.
fn check_nesting(item: &Item, updated_paths: &[Path]) -> Result<()> {
    if !item
        .values()
        .any(|v| 1 + v.nesting_depth() > MAX_NESTING_DEPTH)
    {
        return Ok(());
    }
    let message = if updated_paths.is_empty() {
        "Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond supported limit"
    } else {
        "Nesting Levels have exceeded supported limits"
    };
    Err(DynamoError::validation(message))
}

/// A write that has been checked and computed but not yet committed.
pub struct PlannedWrite {
    pub table: Arc<Table>,
    storage_key: Vec<u8>,
    /// The item's stored partition hash (kept: the key moves into the
    /// commit's batch before its stream record is made).
    partition_hash: u64,
    /// The catalog record and item as planning found them (shared storage
    /// only: checked at commit).
    pub(crate) read: Vec<ferrodyn_storage::ReadCheck>,
    /// How each secondary index's entry for this item changes.
    pub index_changes: Vec<IndexChange>,
    /// How each vector index's entry for this item changes.
    pub vector_changes: Vec<VectorChange>,
    pub old: Option<Item>,
    pub new: Option<Item>,
    pub updated_paths: Vec<Path>,
    pub write_units: f64,
    delta: TableStats,
    /// False for a ConditionCheck, which reads but never writes.
    changes: bool,
    /// Global tables: how the write moves its item's version.
    pub(crate) version: Option<crate::shared::VersionChange>,
    /// How the write changes its item collection (tables with an LSI).
    pub(crate) collection: Option<CollectionChange>,
    /// The collection's size after the write, once admitted.
    pub(crate) collection_size: Option<u64>,
}

impl PlannedWrite {
    /// The partition hash of the written item (its key's first field).
    pub(crate) fn partition_hash(&self) -> u64 {
        self.partition_hash
    }
}

/// The change one write makes to one secondary index.
pub struct IndexChange {
    pub index: Arc<Index>,
    delete: Option<Vec<u8>>,
    put: Option<(Vec<u8>, Vec<u8>)>,
    delta: TableStats,
    /// Write units the index update costs (reported with INDEXES).
    pub write_units: f64,
}

impl Engine {
    /// Works out how the item's entries in every index of `table` change.
    fn index_changes(
        &self,
        table: &Table,
        old: Option<&Item>,
        new: Option<&Item>,
        read: &mut Vec<ferrodyn_storage::ReadCheck>,
    ) -> Result<Vec<IndexChange>> {
        let mut changes = Vec::new();
        for index in table.indexes() {
            if let Some(new) = new {
                index.validate_item(new)?;
            }
            let mut old_entry = old.and_then(|o| {
                index
                    .entry_key(table.id, &table.schema, o)
                    .map(|k| (k, item_size(&index.project(&table.schema, o))))
            });
            // While an index is being backfilled, the old item may not have
            // its entry yet; only an entry that exists can be replaced.
            if index.state() == IndexState::Backfilling {
                if let Some((key, _)) = &old_entry {
                    let found = self.storage.get(key).map_err(crate::storage_error)?;
                    read.extend(self.read_check(key, &found)); // vs the backfill
                    if found.is_none() {
                        old_entry = None;
                    }
                }
            }
            let new_entry = new.and_then(|n| {
                index.entry_key(table.id, &table.schema, n).map(|k| {
                    let projected = index.project(&table.schema, n);
                    (k, item_size(&projected), StoredItem::encode(&projected))
                })
            });
            if old_entry.is_none() && new_entry.is_none() {
                continue;
            }
            let old_size = old_entry.as_ref().map_or(0, |(_, size)| *size);
            let new_size = new_entry.as_ref().map_or(0, |(_, size, _)| *size);
            // Moving an entry to a new key costs a delete and a put.
            let moved =
                matches!((&old_entry, &new_entry), (Some((a, _)), Some((b, _, _))) if a != b);
            let units = if moved {
                write_units(old_size) + write_units(new_size)
            } else {
                write_units(old_size.max(new_size))
            };
            changes.push(IndexChange {
                delete: old_entry
                    .as_ref()
                    .filter(|(k, _)| new_entry.as_ref().is_none_or(|(n, _, _)| n != k))
                    .map(|(k, _)| k.clone()),
                delta: TableStats {
                    item_count: i64::from(new_entry.is_some()) - i64::from(old_entry.is_some()),
                    size_bytes: new_size as i64 - old_size as i64,
                },
                put: new_entry.map(|(k, _, v)| (k, v)),
                index,
                write_units: units,
            });
        }
        Ok(changes)
    }
}

/// The statistics changes of a commit: one entry per table and per index.
#[derive(Default)]
struct StatsDeltas {
    tables: Vec<(Arc<Table>, TableStats)>,
    /// Each index with its table's id.
    indexes: Vec<(Arc<Index>, u64, TableStats)>,
    /// Each vector index with its table's id.
    vectors: Vec<(Arc<VectorIndex>, u64, TableStats)>,
}

impl StatsDeltas {
    /// Forgets the tables and indexes whose figures did not change (an
    /// overwrite by an item of the same size): a zero delta record would cost
    /// a storage write, and a tombstone when folded, for nothing.
    fn drop_unchanged(&mut self) {
        let unchanged = TableStats::default();
        self.tables.retain(|(_, delta)| *delta != unchanged);
        self.indexes.retain(|(_, _, delta)| *delta != unchanged);
        self.vectors.retain(|(_, _, delta)| *delta != unchanged);
    }

    fn add_table(&mut self, table: &Arc<Table>, delta: TableStats) {
        match self.tables.iter_mut().find(|(t, _)| t.id == table.id) {
            Some((_, total)) => *total = total.plus(delta),
            None => self.tables.push((Arc::clone(table), delta)),
        }
    }

    fn add_index(&mut self, index: &Arc<Index>, table_id: u64, delta: TableStats) {
        match self
            .indexes
            .iter_mut()
            .find(|(i, _, _)| Arc::ptr_eq(i, index))
        {
            Some((_, _, total)) => *total = total.plus(delta),
            None => self.indexes.push((Arc::clone(index), table_id, delta)),
        }
    }

    fn add_vector(&mut self, index: &Arc<VectorIndex>, table_id: u64, delta: TableStats) {
        match (self.vectors.iter_mut()).find(|(i, _, _)| Arc::ptr_eq(i, index)) {
            Some((_, _, total)) => *total = total.plus(delta),
            None => self.vectors.push((Arc::clone(index), table_id, delta)),
        }
    }
}

impl PlannedWrite {
    /// Moves this write's storage operations (the item, its index entries)
    /// into `ops`, adding its statistics changes to `deltas`. A write is
    /// committed once: its keys and entries are taken, not copied.
    fn take_ops(&mut self, ops: &mut Vec<WriteOp>, deltas: &mut StatsDeltas) {
        if let Some(version) = &self.version {
            // An unchanged item keeps its version (a write that changes
            // nothing is not replicated); a replicated change stores its own.
            if version.replicated || self.changes_item() {
                let value = version.new.encode(self.new.is_none());
                ops.push(WriteOp::Put(version.key.clone(), value));
            }
        }
        let key = std::mem::take(&mut self.storage_key);
        match &self.new {
            Some(item) => ops.push(WriteOp::Put(key, StoredItem::encode(item))),
            None if self.old.is_some() => ops.push(WriteOp::Delete(key)),
            None => return,
        }
        deltas.add_table(&self.table, self.delta);
        for change in &mut self.index_changes {
            if let Some(key) = change.delete.take() {
                ops.push(WriteOp::Delete(key));
            }
            if let Some((key, value)) = change.put.take() {
                ops.push(WriteOp::Put(key, value));
            }
            deltas.add_index(&change.index, self.table.id, change.delta);
        }
        for change in &mut self.vector_changes {
            ops.extend(change.op.take());
            deltas.add_vector(&change.index, self.table.id, change.delta);
        }
    }

    /// VectorWriteRequestBytes spent on each vector index, by index name.
    pub fn vector_units(&self) -> Vec<(String, f64)> {
        (self.vector_changes.iter())
            .map(|c| (c.index.name.clone(), c.write_bytes))
            .collect()
    }

    /// Whether the write changes its item (DynamoDB logs no change for a
    /// write that leaves it as it was).
    pub(crate) fn changes_item(&self) -> bool {
        match (&self.old, &self.new) {
            (None, None) => false,
            (Some(old), Some(new)) => !crate::shared::same_item(old, new),
            _ => true,
        }
    }

    /// Write units spent on each index, by index name.
    pub fn index_units(&self) -> Vec<(String, IndexKind, f64)> {
        self.index_changes
            .iter()
            .map(|c| (c.index.name.clone(), c.index.kind, c.write_units))
            .collect()
    }

    /// The ItemCollectionMetrics of this write: its collection and size
    /// (None for tables without an LSI, and for a ConditionCheck).
    pub fn item_collection_metrics(&self) -> Option<CollectionMetrics> {
        let change = self.collection.as_ref()?;
        Some(CollectionMetrics {
            key: change.partition.clone(),
            size_bytes: self.collection_size?,
        })
    }

    pub fn into_outcome(self) -> WriteOutcome {
        let index_units = self.index_units();
        WriteOutcome {
            vector_units: self.vector_units(),
            item_collection: self.item_collection_metrics(),
            index_units,
            old: self.old,
            new: self.new,
            updated_paths: self.updated_paths,
            write_units: self.write_units,
        }
    }
}

/// Rejects an item over DynamoDB's 400 KB limit, with an attribute name over
/// 64 KB, or nested too deep, before any work is done.
pub fn check_item_size(item: &Item) -> Result<()> {
    if item.keys().any(|n| n.is_empty()) {
        return Err(DynamoError::invalid_parameter("Empty attribute name"));
    }
    if let Some(name) = item.keys().find(|n| n.len() > MAX_ATTRIBUTE_NAME_BYTES) {
        return Err(DynamoError::invalid_parameter(format!(
            "Attribute name {}... exceeds the maximum attribute name length of {MAX_ATTRIBUTE_NAME_BYTES} bytes",
            name.chars().take(20).collect::<String>()
        )));
    }
    if item_size(item) > MAX_ITEM_SIZE {
        return Err(DynamoError::validation(
            "Item size has exceeded the maximum allowed size",
        ));
    }
    check_nesting(item, &[])
}
