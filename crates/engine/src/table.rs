//! A table as the engine holds it in memory: its identity, key schema,
//! description, secondary indexes, live item count and size, and the guard
//! that lets a table operation wait out the table's in-flight writes.
//!
//! Other crates read a table; what changes it is crate-private: its
//! metadata (description, indexes, streams, tags, TTL) changes only through
//! the catalog's table operations, and capacity is admitted and charged
//! only by the front door (api/).

use crate::index::{Index, IndexKind, IndexState};
use crate::keys::KeySchema;
use crate::schema::{BillingMode, ResourcePolicy, TableDescription};
pub use crate::shared::TableStats;
use crate::shared::{
    GlobalTable, InsightsState, KinesisDestination, PartitionMap, PitrSettings, StreamInfo,
};
use crate::throughput::{Capacity, Throughput};
use crate::usage::UsageLedger;
use crate::vectors::VectorIndex;
use parking_lot::RwLock;
use parking_lot::{RwLockReadGuard, RwLockWriteGuard};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;

pub struct Table {
    /// Storage id, unique for the life of the database: a re-created table with
    /// the same name gets a new id, so leftovers of the old one never leak in.
    pub id: u64,
    pub name: String,
    /// The key of the table in the catalog: its name, qualified by its
    /// region when that is not the server's (see [`crate::region`]).
    pub catalog_name: String,
    pub schema: KeySchema,
    description: RwLock<TableDescription>,
    /// Secondary indexes every write maintains (including ones still being
    /// backfilled; an index being deleted is removed from here first).
    indexes: RwLock<Vec<Arc<Index>>>,
    /// Vector indexes every write maintains (vectors/), likewise.
    vector_indexes: RwLock<Vec<Arc<VectorIndex>>>,
    tags: RwLock<BTreeMap<String, String>>,
    /// Resource-based policies of the table and its streams, by ARN.
    policies: RwLock<BTreeMap<String, ResourcePolicy>>,
    /// The id the next created index gets (ids are never reused).
    next_index_id: std::sync::atomic::AtomicU32,
    /// The attribute Time to Live reads expiry times from, when enabled.
    ttl_attribute: RwLock<Option<String>>,
    /// Point-in-time recovery, when enabled: every write is then logged
    /// with both of its images (streams.rs).
    recovery: RwLock<Option<PitrSettings>>,
    /// Kinesis streaming destinations (kinesis.rs), current and ended.
    kinesis: RwLock<Vec<KinesisDestination>>,
    /// Whether one of them delivers: writes then log whole changes, as
    /// for recovery (read on every write, so not behind the lock).
    kinesis_delivers: AtomicBool,
    /// The global table's replication group, when the table is a replica
    /// (replication/); every write then carries an item version.
    /// (With the table's own region, which DescribeTable leaves out of Replicas.)
    global: RwLock<Option<Arc<(GlobalTable, String)>>>,
    /// Whether `global` is set, and whether its group is MRSC (read on
    /// every write, so not behind the lock).
    replicated: AtomicBool,
    strong: AtomicBool,
    /// The table's streams, oldest first; the last one may be enabled.
    streams: RwLock<Vec<StreamInfo>>,
    /// Contributor Insights of the table ("") and its global indexes, by
    /// name (insights.rs), and whether any of them counts traffic.
    insights: RwLock<BTreeMap<String, InsightsState>>,
    insights_counting: AtomicBool,
    /// The table's and its global indexes' partitions (partitions.rs).
    partitions: RwLock<Arc<PartitionMap>>,
    /// The table size at which partition sizes were last measured.
    sizes_measured_at: AtomicU64,
    /// Change-log records below this sequence number are past the streams'
    /// 24 hours (shards.rs; moves forward only).
    pub(crate) trim_point: AtomicU64,
    /// Change-log records below this were deleted (shards.rs).
    pub(crate) log_reclaimed_to: AtomicU64,
    /// When the partition upkeep last did each kind of its work here
    /// (seconds, wall clock; shards.rs).
    upkeep_done: parking_lot::Mutex<[f64; 2]>,
    /// Provisioned read/write capacity buckets (unlimited when on-demand).
    pub throughput: Throughput,
    /// Seconds of unused capacity the table and its GSIs bank.
    burst_seconds: f64,
    /// Capacity consumed since start, by operation.
    pub usage: UsageLedger,
    item_count: AtomicI64,
    size_bytes: AtomicI64,
    /// Item writes hold this shared from planning to commit; a table
    /// operation that changes what a write must do (indexes, streams,
    /// deletion, a backfill step) holds it exclusively, so no write is
    /// planned against one shape and committed against another.
    writers: RwLock<()>,
    /// Written since the statistics were last folded (see `stats`).
    stats_dirty: AtomicBool,
    /// The catalog record this table was built from or last saved as, as
    /// stored: on shared storage every write checks that it is still what
    /// the database holds (see `cluster.rs`), so no node writes with a stale
    /// schema.
    pub(crate) catalog_bytes: RwLock<Vec<u8>>,
    /// Being filled by a restore (TableStatus CREATING): no item operation
    /// sees it yet. A restore's end loads a new `Table`, so this never changes.
    creating: bool,
}

impl Table {
    pub fn new(
        id: u64,
        description: TableDescription,
        stats: TableStats,
        indexes: Vec<Arc<Index>>,
        (burst_seconds, clock): (f64, Arc<crate::clock::Clock>),
    ) -> Table {
        let (read, write) = provisioned_rates(&description);
        let table = Table {
            throughput: Throughput::new(read, write, burst_seconds, clock),
            usage: UsageLedger::default(),
            burst_seconds,
            id,
            name: description.table_name.clone(),
            catalog_name: description.table_name.clone(),
            schema: KeySchema::new(&description.key_schema, &description.attribute_definitions),
            creating: description.is_creating(),
            description: RwLock::new(description),
            indexes: RwLock::new(indexes),
            vector_indexes: RwLock::new(Vec::new()),
            tags: RwLock::new(BTreeMap::new()),
            policies: RwLock::new(BTreeMap::new()),
            streams: RwLock::new(Vec::new()),
            insights: RwLock::new(BTreeMap::new()),
            insights_counting: AtomicBool::new(false),
            partitions: RwLock::new(Arc::new(PartitionMap::single())),
            sizes_measured_at: AtomicU64::new(0),
            trim_point: AtomicU64::new(0),
            log_reclaimed_to: AtomicU64::new(0),
            upkeep_done: parking_lot::Mutex::new([0.0; 2]),
            ttl_attribute: RwLock::new(None),
            recovery: RwLock::new(None),
            kinesis: RwLock::new(Vec::new()),
            kinesis_delivers: AtomicBool::new(false),
            global: RwLock::new(None),
            replicated: AtomicBool::new(false),
            strong: AtomicBool::new(false),
            next_index_id: std::sync::atomic::AtomicU32::new(1),
            item_count: AtomicI64::new(stats.item_count),
            size_bytes: AtomicI64::new(stats.size_bytes),
            writers: RwLock::new(()),
            stats_dirty: AtomicBool::new(false),
            catalog_bytes: RwLock::new(Vec::new()),
        };
        table.refresh_throughput();
        table
    }

    /// The current description with live ItemCount and TableSizeBytes.
    pub fn describe(&self) -> TableDescription {
        let mut description = self.description.read().clone();
        description.item_count = self.item_count.load(Ordering::Relaxed).max(0) as u64;
        description.table_size_bytes = self.size_bytes.load(Ordering::Relaxed).max(0) as u64;
        let indexes = self.indexes.read();
        let lists = description
            .global_secondary_indexes
            .iter_mut()
            .chain(description.local_secondary_indexes.iter_mut())
            .flatten();
        for shown in lists {
            if let Some(index) = indexes.iter().find(|i| i.name == shown.index_name) {
                let stats = index.stats();
                shown.item_count = stats.item_count.max(0) as u64;
                shown.index_size_bytes = stats.size_bytes.max(0) as u64;
                if index.kind == IndexKind::Global {
                    let backfilling = index.state() == IndexState::Backfilling;
                    shown.index_status =
                        Some(if backfilling { "CREATING" } else { "ACTIVE" }.into());
                    shown.backfilling = backfilling.then_some(true);
                }
            }
        }
        // Shown from the group alone (a stored description may hold old ones).
        description.replicas = None;
        description.global_table_version = None;
        description.multi_region_consistency = None;
        description.global_table_witnesses = None;
        description.global_table_settings_replication_mode = None;
        description.disassociation_protection_enabled = None;
        if let Some(global) = self.global.read().as_ref() {
            crate::shared::describe_global(&mut description, &global.0, &global.1);
        }
        drop(indexes);
        self.describe_vector_indexes(&mut description);
        description
    }

    /// DescribeTable's live figures and status of each vector index.
    fn describe_vector_indexes(&self, description: &mut TableDescription) {
        let vectors = self.vector_indexes.read();
        for shown in description.vector_indexes.iter_mut().flatten() {
            if let Some(index) = vectors.iter().find(|i| i.name == shown.index_name) {
                let stats = index.figures.stats();
                shown.item_count = stats.item_count.max(0) as u64;
                shown.index_size_bytes = stats.size_bytes.max(0) as u64;
                let backfilling = index.figures.state() == IndexState::Backfilling;
                shown.index_status = Some(if backfilling { "CREATING" } else { "ACTIVE" }.into());
                shown.backfilling = backfilling.then_some(true);
            }
        }
    }

    pub fn next_index_id(&self) -> u32 {
        self.next_index_id.load(Ordering::SeqCst)
    }

    pub(crate) fn set_next_index_id(&self, id: u32) {
        self.next_index_id.store(id, Ordering::SeqCst);
    }

    /// Hands out an index id no index of this table has had.
    pub(crate) fn allocate_index_id(&self) -> u32 {
        self.next_index_id.fetch_add(1, Ordering::SeqCst)
    }

    pub fn ttl_attribute(&self) -> Option<String> {
        self.ttl_attribute.read().clone()
    }

    pub(crate) fn set_ttl_attribute(&self, attribute: Option<String>) {
        *self.ttl_attribute.write() = attribute;
    }

    /// Point-in-time recovery's settings, when it is enabled.
    pub fn recovery(&self) -> Option<PitrSettings> {
        self.recovery.read().clone()
    }

    /// Whether writes must log their whole change (both images, commit
    /// time): for point-in-time recovery, a Kinesis destination or the
    /// replicas of a global table.
    pub fn logs_whole_changes(&self) -> bool {
        self.kinesis_delivers.load(Ordering::Relaxed)
            || self.replicated.load(Ordering::Relaxed)
            || self.recovery.read().is_some()
    }

    /// The replication group of a global table's replica.
    pub fn global(&self) -> Option<GlobalTable> {
        self.global.read().as_ref().map(|g| g.0.clone())
    }

    /// Whether the table is a replica of a global table.
    pub fn is_replicated(&self) -> bool {
        self.replicated.load(Ordering::Relaxed)
    }

    /// Whether the table is a replica of an MRSC global table.
    pub fn is_strong(&self) -> bool {
        self.strong.load(Ordering::Relaxed)
    }

    /// Whether this is a witness's copy: it serves no request.
    pub fn is_witness(&self) -> bool {
        let global = self.global.read();
        (global.as_ref()).is_some_and(|g| g.0.witnesses.iter().any(|w| w.region == g.1))
    }

    /// Sets the replication group; `region` is the table's own.
    pub(crate) fn set_global(&self, global: Option<GlobalTable>, region: &str) {
        self.replicated.store(global.is_some(), Ordering::Relaxed);
        let strong = global.as_ref().is_some_and(|g| g.strong);
        self.strong.store(strong, Ordering::Relaxed);
        *self.global.write() = global.map(|g| Arc::new((g, region.to_string())));
    }

    /// The table's Kinesis streaming destinations, oldest first.
    pub fn kinesis_destinations(&self) -> Vec<KinesisDestination> {
        self.kinesis.read().clone()
    }

    pub(crate) fn set_kinesis_destinations(&self, destinations: Vec<KinesisDestination>) {
        let delivers = destinations.iter().any(|d| d.status.delivers());
        *self.kinesis.write() = destinations;
        self.kinesis_delivers.store(delivers, Ordering::Relaxed);
    }

    pub(crate) fn set_recovery(&self, settings: Option<PitrSettings>) {
        *self.recovery.write() = settings;
    }

    pub fn streams(&self) -> Vec<StreamInfo> {
        self.streams.read().clone()
    }

    pub(crate) fn set_streams(&self, streams: Vec<StreamInfo>) {
        *self.streams.write() = streams;
    }

    /// The streams without copying them (the write path reads the enabled
    /// one for every write; a copy would clone its shard list).
    pub(crate) fn streams_ref(&self) -> RwLockReadGuard<'_, Vec<StreamInfo>> {
        self.streams.read()
    }

    /// Changes the stream list in place (shard rollovers and splits).
    pub(crate) fn edit_streams<R>(&self, edit: impl FnOnce(&mut Vec<StreamInfo>) -> R) -> R {
        edit(&mut self.streams.write())
    }

    /// Contributor Insights settings by resource ("" is the table).
    pub fn insights(&self) -> Vec<(String, InsightsState)> {
        self.insights
            .read()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }

    pub fn insights_state(&self, resource: &str) -> Option<InsightsState> {
        self.insights.read().get(resource).cloned()
    }

    pub(crate) fn set_insights(&self, all: BTreeMap<String, InsightsState>) {
        let counting = all.values().any(InsightsState::counting);
        *self.insights.write() = all;
        self.insights_counting.store(counting, Ordering::Relaxed);
    }

    pub(crate) fn set_insights_state(&self, resource: &str, state: InsightsState) {
        let mut all = self.insights.read().clone();
        all.insert(resource.to_string(), state);
        self.set_insights(all);
    }

    /// Whether any Contributor Insights rule of the table counts traffic.
    pub(crate) fn counts_contributors(&self) -> bool {
        self.insights_counting.load(Ordering::Relaxed)
    }

    /// The partition- and sort-key attribute names of the table (`index`
    /// None) or of one of its indexes.
    pub fn key_names(&self, index: Option<&str>) -> (Vec<String>, Vec<String>) {
        let found = index.and_then(|name| self.indexes().into_iter().find(|i| i.name == name));
        match found {
            Some(index) => (
                index.schema.hash.iter().map(|a| a.name.clone()).collect(),
                index.schema.range.iter().map(|a| a.name.clone()).collect(),
            ),
            None => (
                vec![self.schema.hash.name.clone()],
                self.schema.range.iter().map(|a| a.name.clone()).collect(),
            ),
        }
    }

    pub fn partitions(&self) -> Arc<PartitionMap> {
        Arc::clone(&self.partitions.read())
    }

    pub(crate) fn set_partitions(&self, map: PartitionMap) {
        *self.partitions.write() = Arc::new(map);
    }

    /// Whether the table has grown by an eighth of `limit` since its
    /// partitions were last measured (`size` is its size now); if so, the
    /// caller measures them and this records `size`.
    pub(crate) fn partitions_grew(&self, size: u64, limit: u64) -> bool {
        let last = self.sizes_measured_at.load(Ordering::Relaxed);
        let grew = last == 0 || size >= last.saturating_add(limit / 8);
        if grew {
            self.sizes_measured_at.store(size, Ordering::Relaxed);
        }
        grew
    }

    /// Whether the partition upkeep's `work` is due (`every` seconds after
    /// it was last done, at `now`); if so, it counts as done now.
    pub(crate) fn upkeep_due(&self, work: UpkeepWork, now: f64, every: f64) -> bool {
        let mut done = self.upkeep_done.lock();
        let last = &mut done[work as usize];
        let due = now - *last >= every;
        if due {
            *last = now;
        }
        due
    }

    /// Makes the next [`Table::partitions_grew`] say yes.
    pub(crate) fn remeasure_partitions(&self) {
        self.sizes_measured_at.store(0, Ordering::Relaxed);
    }

    /// The enabled stream, if any.
    pub fn current_stream(&self) -> Option<StreamInfo> {
        self.streams.read().last().filter(|s| s.enabled()).cloned()
    }

    pub(crate) fn add_stream(&self, stream: StreamInfo) {
        self.streams.write().push(stream);
    }

    pub fn tags(&self) -> BTreeMap<String, String> {
        self.tags.read().clone()
    }

    pub(crate) fn set_tags(&self, tags: BTreeMap<String, String>) {
        *self.tags.write() = tags;
    }

    pub fn policies(&self) -> BTreeMap<String, ResourcePolicy> {
        self.policies.read().clone()
    }

    pub(crate) fn set_policies(&self, policies: BTreeMap<String, ResourcePolicy>) {
        *self.policies.write() = policies;
    }

    /// The indexes every write must maintain.
    pub fn indexes(&self) -> Vec<Arc<Index>> {
        self.indexes.read().clone()
    }

    /// Whether the table has an LSI (without copying the index list: every
    /// write asks).
    pub fn has_local_index(&self) -> bool {
        self.indexes
            .read()
            .iter()
            .any(|i| i.kind == IndexKind::Local)
    }

    pub fn index(&self, name: &str) -> Option<Arc<Index>> {
        self.indexes.read().iter().find(|i| i.name == name).cloned()
    }

    pub(crate) fn add_index(&self, index: Arc<Index>) {
        self.indexes.write().push(index);
    }

    /// The ids of every index with statistics records: secondary and vector.
    pub(crate) fn all_index_ids(&self) -> Vec<u32> {
        let secondary = self.indexes.read().iter().map(|i| i.id).collect::<Vec<_>>();
        let vectors = self
            .vector_indexes
            .read()
            .iter()
            .map(|i| i.id)
            .collect::<Vec<_>>();
        [secondary, vectors].concat()
    }

    /// The vector indexes every write must maintain.
    pub fn vector_indexes(&self) -> Vec<Arc<VectorIndex>> {
        self.vector_indexes.read().clone()
    }

    /// Whether the table has a vector index (without copying the list:
    /// every write asks).
    pub fn has_vector_index(&self) -> bool {
        !self.vector_indexes.read().is_empty()
    }

    pub fn vector_index(&self, name: &str) -> Option<Arc<VectorIndex>> {
        (self.vector_indexes.read().iter())
            .find(|i| i.name == name)
            .cloned()
    }

    pub(crate) fn set_vector_indexes(&self, indexes: Vec<Arc<VectorIndex>>) {
        *self.vector_indexes.write() = indexes;
    }

    pub(crate) fn add_vector_index(&self, index: Arc<VectorIndex>) {
        self.vector_indexes.write().push(index);
    }

    pub(crate) fn remove_vector_index(&self, name: &str) -> Option<Arc<VectorIndex>> {
        let mut indexes = self.vector_indexes.write();
        let position = indexes.iter().position(|i| i.name == name)?;
        Some(indexes.remove(position))
    }

    pub(crate) fn remove_index(&self, name: &str) -> Option<Arc<Index>> {
        let mut indexes = self.indexes.write();
        let position = indexes.iter().position(|i| i.name == name)?;
        Some(indexes.remove(position))
    }

    /// Charges what an operation consumed: against the provisioned capacity
    /// and in the usage ledger.
    pub(crate) fn charge(&self, kind: Capacity, units: f64) {
        self.throughput.charge(kind, units);
        self.usage.record(kind, units);
    }

    /// Applies the description's provisioned rates to the table and to each
    /// GSI (which has capacity of its own; LSIs share the table's).
    pub(crate) fn refresh_throughput(&self) {
        let description = self.description.read().clone();
        let (read, write) = provisioned_rates(&description);
        self.throughput.set_rates(read, write, self.burst_seconds);
        let provisioned = description.billing_mode() == BillingMode::Provisioned;
        for index in self.indexes() {
            if index.kind != IndexKind::Global {
                continue;
            }
            let rates = description
                .global_secondary_indexes
                .iter()
                .flatten()
                .find(|d| d.index_name == index.name)
                .and_then(|d| d.provisioned_throughput.as_ref())
                .filter(|_| provisioned)
                .map_or((0, 0), |t| (t.read_capacity_units, t.write_capacity_units));
            index
                .throughput
                .set_rates(rates.0, rates.1, self.burst_seconds);
        }
    }

    /// Admits a write if the table, and every GSI it may update, have write
    /// capacity left: in DynamoDB an under-provisioned GSI throttles the
    /// table's writes.
    pub(crate) fn admit_write(&self) -> ferrodyn_types::Result<()> {
        self.throughput.admit(Capacity::Write)?;
        if self
            .indexes()
            .iter()
            .any(|i| i.kind == IndexKind::Global && !i.throughput.has_capacity(Capacity::Write))
        {
            return Err(crate::throughput::index_exceeded());
        }
        Ok(())
    }

    /// Whether a write can be admitted now (batch writes leave it unprocessed otherwise).
    pub(crate) fn has_write_capacity(&self) -> bool {
        self.admit_write().is_ok()
    }

    /// Charges a committed write: `base` units (the item and its LSI
    /// entries) to the table, each GSI's units to that GSI.
    pub(crate) fn charge_write(&self, base: f64, index_units: &[(String, IndexKind, f64)]) {
        let mut table_units = base;
        for (name, kind, units) in index_units {
            match (kind, self.index(name)) {
                (IndexKind::Global, Some(index)) => {
                    index.throughput.charge(Capacity::Write, *units)
                }
                _ => table_units += units,
            }
        }
        self.throughput.charge(Capacity::Write, table_units);
        let total = base + index_units.iter().map(|(_, _, u)| u).sum::<f64>();
        self.usage.record(Capacity::Write, total);
    }

    /// Admits a read of the table, or of one of its GSIs (which has its own
    /// read capacity).
    pub(crate) fn admit_read(&self, index: Option<&Index>) -> ferrodyn_types::Result<()> {
        match index {
            Some(index) if index.kind == IndexKind::Global => {
                index.throughput.admit(Capacity::Read)
            }
            _ => self.throughput.admit(Capacity::Read),
        }
    }

    /// Charges a read of the table or of one of its GSIs.
    pub(crate) fn charge_read(&self, index: Option<&Index>, units: f64) {
        match index {
            Some(index) if index.kind == IndexKind::Global => {
                index.throughput.charge(Capacity::Read, units)
            }
            _ => self.throughput.charge(Capacity::Read, units),
        }
        self.usage.record(Capacity::Read, units);
    }

    pub(crate) fn update_description(
        &self,
        change: impl FnOnce(&mut TableDescription),
    ) -> TableDescription {
        change(&mut self.description.write());
        self.describe()
    }

    /// Whether a restore is still filling the table (see the field).
    pub fn is_creating(&self) -> bool {
        self.creating
    }

    pub fn stats(&self) -> TableStats {
        TableStats {
            item_count: self.item_count.load(Ordering::Relaxed),
            size_bytes: self.size_bytes.load(Ordering::Relaxed),
        }
    }

    /// Held by an item write from planning to commit (shared: writes of a
    /// table never wait for each other here).
    pub fn writers(&self) -> RwLockReadGuard<'_, ()> {
        self.writers.read()
    }

    /// Held by a table operation: waits for in-flight writes to finish and
    /// keeps new ones out.
    pub fn exclusive(&self) -> RwLockWriteGuard<'_, ()> {
        self.writers.write()
    }

    pub(crate) fn mark_stats_dirty(&self) {
        if !self.stats_dirty.load(Ordering::Relaxed) {
            self.stats_dirty.store(true, Ordering::Relaxed);
        }
    }

    /// Whether the table was written since the last call.
    pub(crate) fn take_stats_dirty(&self) -> bool {
        self.stats_dirty.swap(false, Ordering::Relaxed)
    }

    /// Applies a committed write's effect on the counters.
    pub(crate) fn apply_stats_delta(&self, delta: TableStats) {
        self.item_count
            .fetch_add(delta.item_count, Ordering::Relaxed);
        self.size_bytes
            .fetch_add(delta.size_bytes, Ordering::Relaxed);
    }
}

/// The partition upkeep's periodic work on a table (shards.rs).
#[derive(Clone, Copy)]
pub(crate) enum UpkeepWork {
    /// Measuring partitions and splitting the large ones.
    Sizes = 0,
    /// Deleting stream records past 24 hours.
    Log = 1,
}

/// (read, write) units per second a table is provisioned for; (0, 0) for
/// on-demand tables, which are never throttled.
fn provisioned_rates(description: &TableDescription) -> (u64, u64) {
    if description.billing_mode() == BillingMode::PayPerRequest {
        return (0, 0);
    }
    let t = &description.provisioned_throughput;
    (t.read_capacity_units, t.write_capacity_units)
}
