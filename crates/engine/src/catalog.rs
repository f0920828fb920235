//! The table catalog: creating, describing, listing, updating and deleting
//! tables, persisted in storage so that tables survive a restart.
//!
//! Storage records: `'c' | name` holds a table's id and description,
//! `'s' | id` its item count and size, `'m' | "next_table_id"` the id
//! allocator, and `'p' | id` marks a deleted table whose items are still being
//! purged (so a purge interrupted by a crash resumes at the next start, see
//! `background.rs`). On shared storage the catalog is also other nodes':
//! it is reloaded when it changed, and commits check the record and the
//! id allocator they read (the last `impl` block).

use crate::error::{EngineResult, RetryPolicy};
use crate::index::{Index, IndexKind, IndexState};
use crate::keys::IndexKeySchema;
use crate::keyspace::{
    self, catalog_key, index_stats_key, prefix_end, purge_key, stats_key, NEXT_TABLE_ID,
};
use crate::quotas::RequestedUnits;
use crate::schema::{
    BillingMode, BillingModeSummary, ProvisionedThroughputDescription, ResourcePolicy,
    StreamSpecification, TableDescription,
};
use crate::shared::{PartitionMap, StreamInfo};
use crate::table::{Table, TableStats};
use crate::vectors::VectorIndex;
use crate::Engine;
use ferrodyn_storage::{ReadCheck, StorageError, WriteOp};
use ferrodyn_types::{DynamoError, Result};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// Items deleted per storage batch while purging a dropped table.
const PURGE_BATCH: usize = 1000;

#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct CatalogRecord {
    pub id: u64,
    pub description: TableDescription,
    /// Storage ids of the table's secondary indexes, by name.
    #[serde(default)]
    pub index_ids: BTreeMap<String, u32>,
    /// Global indexes whose backfill has not finished.
    #[serde(default)]
    pub backfilling: Vec<String>,
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    /// Resource-based policies of the table and its streams, by ARN
    /// (policies.rs); absent from records of tables that never had one.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub policies: BTreeMap<String, ResourcePolicy>,
    #[serde(default)]
    pub streams: Vec<StreamInfo>,
    /// Partitions of the table and its global indexes (partitions.rs);
    /// absent from records of tables created before partitions were kept,
    /// which have one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partitions: Option<PartitionMap>,
    /// Contributor Insights of the table ("") and its GSIs (insights.rs).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub insights: BTreeMap<String, crate::shared::InsightsState>,
    #[serde(default)]
    pub ttl_attribute: Option<String>,
    /// Point-in-time recovery, when enabled (recovery.rs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<crate::shared::PitrSettings>,
    /// Kinesis streaming destinations (kinesis.rs), when it ever had one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kinesis: Vec<crate::shared::KinesisDestination>,
    /// The replication group, when the table is a global table's replica.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global: Option<crate::shared::GlobalTable>,
    /// The next index id to hand out. Ids are never reused, so entries a
    /// deleted index left behind (a purge cut short by a crash) can never
    /// show up in a later index.
    #[serde(default)]
    pub next_index_id: u32,
}

impl CatalogRecord {
    /// The record describing `table` as it is now.
    pub fn of(table: &Table) -> CatalogRecord {
        let indexes = table.indexes();
        let vectors = table.vector_indexes();
        let ids = (indexes.iter().map(|i| (i.name.clone(), i.id, i.state()))).chain(
            vectors
                .iter()
                .map(|i| (i.name.clone(), i.id, i.figures.state())),
        );
        CatalogRecord {
            id: table.id,
            description: table.describe(),
            index_ids: ids.clone().map(|(name, id, _)| (name, id)).collect(),
            backfilling: ids
                .filter(|(_, _, state)| *state == IndexState::Backfilling)
                .map(|(name, _, _)| name)
                .collect(),
            tags: table.tags(),
            policies: table.policies(),
            streams: table.streams(),
            partitions: Some(PartitionMap::clone(&table.partitions())),
            insights: table.insights().into_iter().collect(),
            ttl_attribute: table.ttl_attribute(),
            recovery: table.recovery(),
            kinesis: table.kinesis_destinations(),
            global: table.global(),
            next_index_id: table.next_index_id(),
        }
    }

    /// Builds the in-memory indexes this record describes.
    fn indexes(&self, engine: &Engine) -> Result<Vec<Arc<Index>>> {
        let d = &self.description;
        let mut out = Vec::new();
        let lists = [
            (IndexKind::Global, &d.global_secondary_indexes),
            (IndexKind::Local, &d.local_secondary_indexes),
        ];
        for (kind, list) in lists {
            for index in list.iter().flatten() {
                let Some(&id) = self.index_ids.get(&index.index_name) else {
                    continue;
                };
                // The base plus the deltas not yet folded (see `stats`); on
                // shared storage read afterwards (cluster.rs refresh_stats).
                let stats = if engine.storage.shared() {
                    TableStats::default()
                } else {
                    engine.fold_stats(&index_stats_key(self.id, id))?
                };
                let state = if self.backfilling.contains(&index.index_name) {
                    IndexState::Backfilling
                } else {
                    IndexState::Active
                };
                let schema = IndexKeySchema::new(&index.key_schema, &d.attribute_definitions);
                let clock = Arc::clone(&engine.clock);
                out.push(Arc::new(Index::new(
                    id, kind, index, schema, state, stats, clock,
                )));
            }
        }
        Ok(out)
    }
}

fn storage_error(e: impl std::fmt::Display) -> DynamoError {
    DynamoError::internal(format!("storage error: {e}"))
}

/// A validated CreateTable request.
#[derive(Clone)]
pub struct NewTable {
    pub name: String,
    pub key_schema: Vec<crate::schema::KeySchemaElement>,
    pub attribute_definitions: Vec<crate::schema::AttributeDefinition>,
    pub billing_mode: BillingMode,
    /// (read, write) units for PROVISIONED tables.
    pub provisioned: Option<(u64, u64)>,
    pub global_secondary_indexes: Vec<crate::schema::IndexDescription>,
    pub local_secondary_indexes: Vec<crate::schema::IndexDescription>,
    pub vector_indexes: Vec<crate::schema::VectorIndexDescription>,
    pub stream: Option<StreamSpecification>,
    pub deletion_protection: bool,
    pub table_class: Option<String>,
    pub tags: Vec<(String, String)>,
    /// A resource-based policy document to attach (checked by
    /// [`crate::policies::check_policy_document`]).
    pub resource_policy: Option<String>,
}

/// A validated UpdateTable request: only the fields given change.
#[derive(Default)]
pub struct TableUpdate {
    pub billing_mode: Option<BillingMode>,
    pub provisioned: Option<(u64, u64)>,
    pub stream: Option<StreamSpecification>,
    pub deletion_protection: Option<bool>,
    pub table_class: Option<String>,
    /// New provisioned throughput of global indexes, by name (given with a
    /// switch to PROVISIONED, which every index needs).
    pub index_throughput: Vec<(String, u64, u64)>,
}

impl Engine {
    /// Loads the catalog from storage (interrupted purges and backfills are
    /// resumed by [`Engine::resume_background_work`]).
    pub(crate) fn load_catalog(&self) -> Result<()> {
        let records = scan_prefix(self, &keyspace::catalog_records())?;
        let mut tables = self.tables.write();
        for (key, value) in records {
            let table = self.table_from_record(&key, value, None)?;
            tables.insert(table.catalog_name.clone(), table);
        }
        drop(tables);
        let next = self
            .storage
            .get(NEXT_TABLE_ID)
            .map_err(storage_error)?
            .and_then(|v| v.try_into().ok().map(u64::from_be_bytes))
            .unwrap_or(1);
        self.next_table_id
            .store(next, std::sync::atomic::Ordering::SeqCst);
        self.restore_stream_sequence()?;
        Ok(())
    }

    /// Builds the in-memory table a stored catalog record describes, with
    /// its statistics.
    /// `known`: this node's current form of the table, whose built vector
    /// indexes may be kept (a reload on shared storage).
    pub(crate) fn table_from_record(
        &self,
        key: &[u8],
        value: Vec<u8>,
        known: Option<&Table>,
    ) -> Result<Arc<Table>> {
        let catalog_name = keyspace::catalog_name_of(key);
        let record: CatalogRecord = serde_json::from_slice(&value).map_err(storage_error)?;
        // Embedded storage: the base record plus every delta left, folded at
        // once (stats.rs). Shared storage: only the lease holder folds; the
        // figures are read below with the deltas not folded yet (cluster.rs).
        let stats = if self.storage.shared() {
            TableStats::default()
        } else {
            let total = self.fold_stats(&stats_key(record.id))?;
            crate::stats::check_complete_total(&catalog_name, total);
            total
        };
        let indexes = record.indexes(self)?;
        let vectors = self.load_vector_indexes(
            record.id,
            &record.description,
            (&record.index_ids, &record.backfilling),
            known,
        )?;
        let tags = record.tags.clone();
        let mut table = Table::new(
            record.id,
            record.description,
            stats,
            indexes,
            (self.burst_seconds, Arc::clone(&self.clock)),
        );
        table.catalog_name = catalog_name;
        *table.catalog_bytes.write() = value;
        table.set_vector_indexes(vectors);
        let table = Arc::new(table);
        table.set_tags(tags);
        table.set_policies(record.policies.clone());
        table.set_streams(record.streams.clone());
        self.observe_shard_boundaries(&record.streams);
        table.set_partitions(
            record
                .partitions
                .clone()
                .unwrap_or_else(PartitionMap::single),
        );
        table.set_ttl_attribute(record.ttl_attribute.clone());
        table.set_recovery(record.recovery.clone());
        table.set_kinesis_destinations(record.kinesis.clone());
        table.set_global(record.global.clone(), self.region_of(&table.catalog_name));
        let highest = record.index_ids.values().max().copied().unwrap_or(0);
        table.set_next_index_id(record.next_index_id.max(highest + 1));
        if self.storage.shared() {
            self.refresh_stats(&table)?;
        }
        Ok(table)
    }

    /// Ids of deleted tables whose data is not purged yet.
    pub(crate) fn unfinished_purges(&self) -> Result<Vec<u64>> {
        Ok(scan_prefix(self, &keyspace::purge_markers())?
            .into_iter()
            .filter_map(|(key, _)| keyspace::purged_table_of(&key))
            .collect())
    }

    /// The table a TableName (name or ARN) designates in the request's region.
    pub fn table(&self, name: &str) -> Result<Arc<Table>> {
        // A witness's copy of an MRSC table serves no request (strong.rs).
        let found = self.lookup(name).filter(|t| !t.is_witness());
        found.ok_or_else(|| {
            DynamoError::resource_not_found(format!(
                "Requested resource not found: Table: {name} not found"
            ))
        })
    }

    pub(crate) fn lookup(&self, name_or_arn: &str) -> Option<Arc<Table>> {
        let key = self.catalog_name(name_or_arn)?;
        let found = self.tables.read().get(&key).cloned();
        // Shared storage: another node may have created it just now.
        if found.is_none() && self.shared() && self.reload_catalog().is_ok() {
            return self.tables.read().get(&key).cloned();
        }
        found
    }

    /// The table an item operation names; DynamoDB words this error differently
    /// from the control-plane one.
    /// A table still being filled by a restore is not there for items yet.
    pub fn table_for_items(&self, name: &str) -> Result<Arc<Table>> {
        self.lookup(name)
            .filter(|table| !table.is_creating())
            .ok_or_else(|| DynamoError::resource_not_found("Requested resource not found"))
    }

    /// The table a table operation changes: not one a restore is still
    /// filling (ResourceInUseException, as DynamoDB answers for a CREATING table).
    pub(crate) fn table_to_change(&self, name: &str) -> Result<Arc<Table>> {
        let table = self.table(name)?;
        if table.is_creating() {
            return Err(DynamoError::new(
                ferrodyn_types::ErrorKind::ResourceInUse,
                format!(
                    "Attempt to change a resource which is still in use: Table is being created: {}",
                    table.name
                ),
            ));
        }
        Ok(table)
    }

    pub fn create_table(&self, new: NewTable) -> Result<TableDescription> {
        let _guard = self.catalog_lock.lock();
        // Shared storage: another node's CreateTable of the same name or
        // with the same id makes ours conflict; retry on the fresh catalog.
        let spare = self.shared().then(|| new.clone());
        let mut first = Some(new);
        let created = self.retry(RetryPolicy::Ddl, |_| {
            if self.shared() {
                self.reload_catalog()?;
            }
            let new = first.take().or_else(|| spare.clone()).expect("a request");
            self.create_table_once(new)
        });
        Ok(created?)
    }

    /// Commits the table's catalog record once, streams included, with its
    /// statistics base and the id allocator; then the table is in memory.
    fn create_table_once(&self, new: NewTable) -> EngineResult<TableDescription> {
        let region = self.request_region();
        let catalog_name = self.catalog_name_in(&region, &new.name);
        self.admit_new_table(&region, &catalog_name, &new.name)?;
        let units = requested_units(&new);
        self.check_table_units(&units)?;
        self.check_account_units(&units)?;
        let (id, id_check) = self.allocate_table_id()?;
        let now = self.now_seconds();
        let arn = self.table_arn(&region, &new.name);
        let tags = new.tags.clone();
        let policies = new
            .resource_policy
            .as_deref()
            .map(|document| (arn.clone(), crate::policies::initial_policy(document)))
            .into_iter()
            .collect();
        let description = new_description(new, id, &arn, now);
        let index_ids = index_ids(&description);
        let record = CatalogRecord {
            id,
            description: description.clone(),
            index_ids,
            backfilling: Vec::new(),
            tags: tags.into_iter().collect(),
            policies,
            streams: Vec::new(),
            partitions: None,
            insights: BTreeMap::new(),
            ttl_attribute: None,
            recovery: None,
            kinesis: Vec::new(),
            global: None,
            next_index_id: 0,
        };
        let indexes = record.indexes(self)?;
        let mut table = Table::new(
            id,
            description.clone(),
            TableStats::default(),
            indexes,
            (self.burst_seconds, Arc::clone(&self.clock)),
        );
        table.catalog_name = catalog_name.clone();
        let vectors = new_vector_indexes(&description, &record.index_ids);
        vectors.iter().for_each(|index| self.configure_store(index));
        table.set_vector_indexes(vectors);
        table.set_tags(record.tags);
        table.set_policies(record.policies);
        table.set_next_index_id(record.index_ids.values().max().copied().unwrap_or(0) + 1);
        let now_ms = (now * 1000.0) as u64;
        table.set_partitions(PartitionMap::initial(
            &description,
            self.partition_settings,
            now_ms,
        ));
        // The stream list first, so the one record committed holds it.
        self.sync_streams(&table);
        let record_bytes = serde_json::to_vec(&CatalogRecord::of(&table)).map_err(storage_error)?;
        *table.catalog_bytes.write() = record_bytes.clone();
        let absent = ferrodyn_storage::ReadCheck {
            key: catalog_key(&catalog_name),
            expected: None,
        };
        let stats = serde_json::to_vec(&TableStats::default()).map_err(storage_error)?;
        let catalog = self.reload_guard(); // until the table is in memory
        self.commit_catalog(
            vec![absent, id_check],
            vec![
                WriteOp::Put(catalog_key(&catalog_name), record_bytes),
                WriteOp::Put(stats_key(id), stats),
                WriteOp::Put(NEXT_TABLE_ID.to_vec(), (id + 1).to_be_bytes().to_vec()),
            ],
        )?;
        self.tables.write().insert(catalog_name, Arc::new(table));
        drop(catalog);
        // The table is usable at once, but like DynamoDB the creating call
        // reports CREATING; the next DescribeTable reports ACTIVE.
        Ok(as_creating(description))
    }

    /// CreateTable's refusals before anything is written: a name already
    /// taken in the region, the region's table quota, the rate of table
    /// operations.
    fn admit_new_table(&self, region: &str, catalog_name: &str, name: &str) -> Result<()> {
        if self.tables.read().contains_key(catalog_name) {
            return Err(DynamoError::new(
                ferrodyn_types::ErrorKind::ResourceInUse,
                format!("Table already exists: {name}"),
            ));
        }
        let in_region = (self.tables.read().keys())
            .filter(|key| self.name_in_region(key, region).is_some())
            .count();
        self.check_table_quota(in_region)?;
        self.check_table_operations()
    }

    pub fn describe_table(&self, name: &str) -> Result<TableDescription> {
        let mut table = self.table(name)?;
        if self.shared() {
            table = self.refresh_table(&table).map_err(|e| match e.kind {
                ferrodyn_types::ErrorKind::ResourceNotFound => DynamoError::resource_not_found(
                    format!("Requested resource not found: Table: {name} not found"),
                ),
                _ => e,
            })?;
            self.refresh_stats(&table)?;
        }
        Ok(table.describe())
    }

    /// Table names in order, starting after `start`, at most `limit`; the last
    /// name is returned as the continuation when more remain.
    pub fn list_tables(&self, start: Option<&str>, limit: usize) -> (Vec<String>, Option<String>) {
        if self.shared() {
            if let Err(e) = self.reload_catalog() {
                eprintln!("ferrodyn: cannot reload the catalog: {e}");
            }
        }
        let region = self.request_region();
        let mut names: Vec<String> = self
            .tables
            .read()
            .iter()
            .filter(|(_, table)| !table.is_witness())
            .filter_map(|(key, _)| self.name_in_region(key, &region))
            .filter(|n| start.is_none_or(|s| *n > s))
            .map(str::to_string)
            .collect();
        names.sort();
        let more = names.len() > limit;
        names.truncate(limit);
        let last = if more { names.last().cloned() } else { None };
        (names, last)
    }

    /// Removes the table at once (its name is free again) and purges its
    /// data in the background; answers with the table as DELETING.
    pub fn delete_table(self: &Arc<Self>, name: &str) -> Result<TableDescription> {
        // A replica leaves its group first (replication/group.rs): no lock
        // is held while the other regions hear of it.
        let replica = self.lookup(name).filter(|t| t.is_replicated());
        if let Some(table) = replica.filter(|t| !t.describe().deletion_protection_enabled) {
            self.depart_before_delete(&table)?;
        }
        let guard = self.catalog_lock.lock();
        let table = self.table_to_change(name)?;
        let writes = table.exclusive();
        self.check_table_operations()?;
        if table.describe().deletion_protection_enabled {
            return Err(DynamoError::validation(
                "Resource cannot be deleted as it is currently protected against deletion. Disable deletion protection first.",
            ));
        }
        // A table with point-in-time recovery leaves a SYSTEM backup of
        // itself as it is now, committed with its removal (recovery.rs).
        let kept = self.deletion_backup(&table)?;
        let catalog = self.reload_guard(); // until it is gone from memory
                                           // The statistics records are left to the purge (they are table
                                           // data): deleting them here made DeleteTable contend with the lease
                                           // holder's statistics fold on shared storage, and after its retries
                                           // fail with TransactionConflictException.
        self.retry(RetryPolicy::Ddl, |retry| {
            let mut checks = vec![self.fresh_catalog_check(&table, retry)?];
            let mut ops = vec![
                WriteOp::Delete(catalog_key(&table.catalog_name)),
                WriteOp::Put(purge_key(table.id), Vec::new()),
            ];
            if let Some(kept) = &kept {
                checks.extend(kept.checks.iter().cloned());
                ops.extend(kept.ops());
            }
            self.commit_catalog(checks, ops)
        })?;
        self.tables.write().remove(&table.catalog_name);
        self.forget_contributors(table.id); // its rules go with it
        drop(writes);
        drop(catalog);
        drop(guard);
        if let Some(kept) = kept {
            self.start_copy(kept)?;
        }
        let id = table.id;
        self.spawn_background(format!("purge-table-{id}"), move |engine| {
            engine.purge_table_data(id)
        })?;
        let mut description = table.describe();
        description.table_status = "DELETING".into();
        Ok(description)
    }

    /// Deletes every item, index entry and stream record of a dropped
    /// table, in bounded batches, then its purge marker.
    pub(crate) fn purge_table_data(&self, id: u64) -> Result<()> {
        let started = std::time::Instant::now();
        let mut purged = 0;
        for prefix in keyspace::table_data(id) {
            purged += self.purge_prefix(&prefix)?;
        }
        self.write_retrying_conflicts(vec![WriteOp::Delete(purge_key(id))])?;
        eprintln!(
            "ferrodyn: purged table {id} ({purged} keys) in {:.2} s",
            started.elapsed().as_secs_f64()
        );
        Ok(())
    }

    /// Deletes every key under `prefix`, in bounded batches, each scan
    /// continuing after the last key deleted: starting every batch from the
    /// prefix would step over all the tombstones left so far, which made a
    /// purge quadratic in the table's size on the LSM store. Returns how many
    /// keys were deleted.
    pub(crate) fn purge_prefix(&self, prefix: &[u8]) -> Result<usize> {
        // Storage files holding only this prefix go at once (their space
        // back without waiting for compaction); what is left is deleted
        // key by key below, which also catches anything the drop uncovered.
        self.storage
            .reclaim_range(prefix, prefix_end(prefix).as_deref())
            .map_err(storage_error)?;
        let mut deleted = 0;
        self.walk_prefix(prefix, PURGE_BATCH, |batch| {
            let ops: Vec<WriteOp> = batch
                .iter()
                .map(|(k, _)| WriteOp::Delete(k.clone()))
                .collect();
            deleted += ops.len();
            self.write_retrying_conflicts(ops)?;
            Ok(crate::read::Walk::Continue)
        })?;
        Ok(deleted)
    }

    /// A background write (a purge's batch) that a shared database may fail
    /// as a serialization conflict with the writers around it: retried like
    /// an item write's commit, not given up until the next upkeep round.
    pub(crate) fn write_retrying_conflicts(&self, ops: Vec<WriteOp>) -> EngineResult<()> {
        if !self.shared() {
            return Ok(self.storage.write(ops)?);
        }
        self.retry(RetryPolicy::Write, |_| {
            Ok(self.storage.write(ops.clone())?)
        })
    }

    pub fn update_table(&self, name: &str, update: TableUpdate) -> Result<TableDescription> {
        let _guard = self.catalog_lock.lock();
        let table = self.table_to_change(name)?;
        let _writes = table.exclusive();
        self.check_table_operations()?;
        self.check_table_units(&RequestedUnits {
            table: update.provisioned,
            indexes: (update.index_throughput.iter())
                .map(|(n, r, w)| (n.as_str(), *r, *w))
                .collect(),
        })?;
        let now = self.now_seconds();
        let description = table.update_description(|d| {
            if let Some(mode) = update.billing_mode {
                let summary = d.billing_mode_summary.get_or_insert(BillingModeSummary {
                    billing_mode: mode,
                    last_update_to_pay_per_request_date_time: None,
                });
                if mode == BillingMode::PayPerRequest && summary.billing_mode != mode {
                    summary.last_update_to_pay_per_request_date_time = Some(now);
                }
                summary.billing_mode = mode;
                if mode == BillingMode::PayPerRequest {
                    d.provisioned_throughput.read_capacity_units = 0;
                    d.provisioned_throughput.write_capacity_units = 0;
                    let indexes = d.global_secondary_indexes.iter_mut().flatten();
                    for throughput in indexes.filter_map(|i| i.provisioned_throughput.as_mut()) {
                        throughput.read_capacity_units = 0;
                        throughput.write_capacity_units = 0;
                    }
                }
            }
            if let Some((read, write)) = update.provisioned {
                d.provisioned_throughput.set(read, write, now);
            }
            for (name, read, write) in &update.index_throughput {
                let index = d.global_secondary_indexes.iter_mut().flatten();
                for index in index.filter(|i| &i.index_name == name) {
                    let throughput = index
                        .provisioned_throughput
                        .get_or_insert_with(Default::default);
                    throughput.set(*read, *write, now);
                }
            }
            if let Some(stream) = update.stream {
                if stream.stream_enabled {
                    let label = stream_label(now);
                    d.latest_stream_arn = Some(format!("{}/stream/{label}", d.table_arn));
                    d.latest_stream_label = Some(label);
                    d.stream_specification = Some(stream);
                } else {
                    d.stream_specification = None;
                }
            }
            if let Some(protection) = update.deletion_protection {
                d.deletion_protection_enabled = protection;
            }
            if let Some(class) = update.table_class {
                d.table_class_summary = Some(serde_json::json!({ "TableClass": class }));
            }
        });
        table.refresh_throughput();
        self.sync_streams(&table);
        self.grow_partitions_for_throughput(&table);
        self.save_catalog_record(&table)?;
        let mut reported = description;
        reported.table_status = "UPDATING".into();
        Ok(reported)
    }
}

/// The catalog on shared storage, where other nodes change it too: reloads,
/// checked catalog commits, the stored table-id allocator. (On embedded
/// storage these are the in-memory catalog and plain writes.)
impl Engine {
    /// The table as the database now describes it: its catalog record is
    /// read again and the catalog reloaded if it changed. ResourceNotFound
    /// if it was deleted (or re-created: a new id).
    pub(crate) fn refresh_table(&self, table: &Arc<Table>) -> Result<Arc<Table>> {
        if !self.shared() {
            return Ok(Arc::clone(table));
        }
        let stored = self
            .storage
            .get(&catalog_key(&table.catalog_name))
            .map_err(crate::storage_error)?;
        if stored.as_deref() != Some(table.catalog_bytes.read().as_slice()) {
            self.reload_catalog()?;
        }
        match self.tables.read().get(&table.catalog_name) {
            Some(current) if current.id == table.id => Ok(Arc::clone(current)),
            _ => Err(DynamoError::resource_not_found(
                "Requested resource not found",
            )),
        }
    }

    /// `table` on a first attempt, [`Engine::refresh_table`] on a retry.
    pub(crate) fn refresh_table_on_retry(
        &self,
        table: &Arc<Table>,
        retry: u32,
    ) -> Result<Arc<Table>> {
        if retry == 0 {
            Ok(Arc::clone(table))
        } else {
            self.refresh_table(table)
        }
    }

    /// Replaces the in-memory catalog by the stored one, keeping the
    /// tables whose record did not change (and their capacity buckets).
    pub(crate) fn reload_catalog(&self) -> Result<()> {
        let _reloading = self.reload_guard();
        let prefix = keyspace::catalog_records();
        let end = keyspace::prefix_end(&prefix);
        let end = end.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
        let records = self
            .storage
            .scan(Bound::Included(&prefix), end, false, usize::MAX)
            .map_err(crate::storage_error)?;
        let current = self.tables.read().clone();
        let mut fresh = HashMap::with_capacity(records.len());
        for (key, value) in records {
            let name = keyspace::catalog_name_of(&key);
            let table = match current.get(&name) {
                Some(t) if *t.catalog_bytes.read() == value => Arc::clone(t),
                known => self.table_from_record(&key, value, known.map(|t| &**t))?,
            };
            fresh.insert(name, table);
        }
        *self.tables.write() = fresh;
        Ok(())
    }

    /// Taken by DDL around its catalog commit and the in-memory change that
    /// follows (see [`Cluster`]'s `reload_lock`); never while reloading.
    /// Lock order: the engine's catalog lock first, then this.
    pub(crate) fn reload_guard(&self) -> parking_lot::MutexGuard<'_, ()> {
        self.cluster.reload_lock.lock()
    }

    /// Commits a catalog change: on shared storage only if `checks` (the
    /// catalog record as this node knows it, the id allocator) still hold.
    ///
    /// On shared storage a conflict is tried again as it is, a few times
    /// within a few milliseconds, before it reaches the caller: PostgreSQL
    /// reports a serialization failure for a transaction that merely
    /// overlapped another one on the same index pages, which contradicts
    /// nothing, and most catalog changes (tags, TTL, UpdateTable) cannot
    /// re-plan, so one such failure was the client's TransactionConflict
    /// (CI met it on RestoreTableFromBackup under a busy test suite). Sending
    /// the same checked write again is safe: the checks are evaluated again,
    /// so a record another node really changed still fails every attempt.
    pub(crate) fn commit_catalog(
        &self,
        checks: Vec<ReadCheck>,
        ops: Vec<WriteOp>,
    ) -> EngineResult<()> {
        if !self.shared() {
            return Ok(self.storage.write_checked(Vec::new(), ops)?);
        }
        const ATTEMPTS: u32 = 4;
        let mut attempt = 1;
        loop {
            match self.storage.write_checked(checks.clone(), ops.clone()) {
                Err(StorageError::Conflict { .. }) if attempt < ATTEMPTS => {
                    std::thread::sleep(Duration::from_millis(1 << attempt));
                    attempt += 1;
                }
                written => return Ok(written?),
            }
        }
    }

    /// A new table id and the check that makes it ours: on embedded storage
    /// the in-memory allocator (no check needed); on shared storage the
    /// stored allocator, checked unchanged at commit.
    pub(crate) fn allocate_table_id(&self) -> Result<(u64, ReadCheck)> {
        let key = keyspace::NEXT_TABLE_ID;
        if !self.shared() {
            let id = self.next_table_id.fetch_add(1, Ordering::SeqCst);
            let check = ReadCheck {
                key: key.to_vec(),
                expected: None,
            };
            return Ok((id, check));
        }
        let stored = self.storage.get(key).map_err(crate::storage_error)?;
        let id = (stored.clone())
            .and_then(|v| v.try_into().ok().map(u64::from_be_bytes))
            .unwrap_or(1);
        let check = ReadCheck {
            key: key.to_vec(),
            expected: stored,
        };
        Ok((id, check))
    }

    /// The check that a table's catalog record is still what this node has.
    pub(crate) fn catalog_check(&self, table: &Table) -> ReadCheck {
        let bytes = table.catalog_bytes.read().clone();
        ReadCheck {
            key: catalog_key(&table.catalog_name),
            expected: (!bytes.is_empty()).then_some(bytes),
        }
    }

    /// [`Engine::catalog_check`] for attempt `retry` of a catalog commit: on
    /// a retry the record is read again, so the commit checks what the
    /// database holds now rather than the bytes that already failed; a
    /// record gone or re-created (another id) is ResourceNotFound.
    pub(crate) fn fresh_catalog_check(&self, table: &Table, retry: u32) -> EngineResult<ReadCheck> {
        if retry == 0 {
            return Ok(self.catalog_check(table));
        }
        let key = catalog_key(&table.catalog_name);
        let stored = self.storage.get(&key)?;
        let same_table = (stored.as_deref())
            .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(bytes).ok())
            .is_some_and(|record| record["id"] == table.id);
        if !same_table {
            let gone = DynamoError::resource_not_found("Requested resource not found");
            return Err(gone.into());
        }
        Ok(ReadCheck {
            key,
            expected: stored,
        })
    }
}

fn scan_prefix(engine: &Engine, prefix: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    scan_prefix_limited(engine, prefix, usize::MAX)
}

fn scan_prefix_limited(
    engine: &Engine,
    prefix: &[u8],
    limit: usize,
) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let end = prefix_end(prefix);
    let end_bound = match &end {
        Some(e) => Bound::Excluded(e.as_slice()),
        None => Bound::Unbounded,
    };
    engine
        .storage
        .scan(Bound::Included(prefix), end_bound, false, limit)
        .map_err(storage_error)
}

/// A new table's description as CreateTable records it: ACTIVE, with its
/// ARN and its indexes' ARNs, the stream's label when a stream is enabled.
fn new_description(new: NewTable, id: u64, arn: &str, now: f64) -> TableDescription {
    let (read, write) = new.provisioned.unwrap_or((0, 0));
    let index_arn = |name: &str| format!("{arn}/index/{name}");
    let mut gsis = new.global_secondary_indexes;
    for gsi in &mut gsis {
        gsi.index_arn = index_arn(&gsi.index_name);
        gsi.index_status = Some("ACTIVE".into());
    }
    let mut lsis = new.local_secondary_indexes;
    for lsi in &mut lsis {
        lsi.index_arn = index_arn(&lsi.index_name);
    }
    let mut vectors = new.vector_indexes;
    for vector in &mut vectors {
        vector.index_arn = index_arn(&vector.index_name);
        vector.index_status = Some("ACTIVE".into());
    }
    let stream_enabled = new.stream.as_ref().is_some_and(|s| s.stream_enabled);
    let stream_label = stream_label(now);
    TableDescription {
        table_name: new.name,
        table_id: uuid_like(id, now),
        table_arn: arn.to_string(),
        table_status: "ACTIVE".into(),
        creation_date_time: now,
        key_schema: new.key_schema,
        attribute_definitions: new.attribute_definitions,
        provisioned_throughput: ProvisionedThroughputDescription {
            number_of_decreases_today: 0,
            read_capacity_units: read,
            write_capacity_units: write,
            ..Default::default()
        },
        billing_mode_summary: Some(BillingModeSummary {
            billing_mode: new.billing_mode,
            last_update_to_pay_per_request_date_time: (new.billing_mode
                == BillingMode::PayPerRequest)
                .then_some(now),
        }),
        item_count: 0,
        table_size_bytes: 0,
        global_secondary_indexes: (!gsis.is_empty()).then_some(gsis),
        local_secondary_indexes: (!lsis.is_empty()).then_some(lsis),
        stream_specification: new.stream.filter(|s| s.stream_enabled),
        latest_stream_arn: stream_enabled.then(|| format!("{arn}/stream/{stream_label}")),
        latest_stream_label: stream_enabled.then_some(stream_label),
        deletion_protection_enabled: new.deletion_protection,
        table_class_summary: new
            .table_class
            .map(|c| serde_json::json!({ "TableClass": c })),
        restore_summary: None,
        replicas: None,
        global_table_version: None,
        multi_region_consistency: None,
        global_table_witnesses: None,
        global_table_settings_replication_mode: None,
        disassociation_protection_enabled: None,
        vector_indexes: (!vectors.is_empty()).then_some(vectors),
    }
}

/// A new table's (empty) vector indexes.
fn new_vector_indexes(
    description: &TableDescription,
    index_ids: &BTreeMap<String, u32>,
) -> Vec<Arc<VectorIndex>> {
    let definitions = &description.attribute_definitions;
    (description.vector_indexes.iter().flatten())
        .filter_map(|d| {
            let id = *index_ids.get(&d.index_name)?;
            let (state, stats) = (IndexState::Active, TableStats::default());
            Some(Arc::new(VectorIndex::new(id, d, definitions, state, stats)))
        })
        .collect()
}

/// Storage ids of a new table's indexes: 1, 2, ... in GSI, LSI, vector
/// index order.
fn index_ids(description: &TableDescription) -> BTreeMap<String, u32> {
    let mut index_ids = BTreeMap::new();
    for (n, index) in description
        .global_secondary_indexes
        .iter()
        .chain(description.local_secondary_indexes.iter())
        .flatten()
        .map(|index| &index.index_name)
        .chain(
            description
                .vector_indexes
                .iter()
                .flatten()
                .map(|v| &v.index_name),
        )
        .enumerate()
    {
        index_ids.insert(index.clone(), n as u32 + 1);
    }
    index_ids
}

/// The provisioned units a new table asks for (none on demand).
fn requested_units(new: &NewTable) -> RequestedUnits<'_> {
    if new.billing_mode != BillingMode::Provisioned {
        return RequestedUnits {
            table: None,
            indexes: Vec::new(),
        };
    }
    let indexes = (new.global_secondary_indexes.iter())
        .filter_map(|i| {
            let t = i.provisioned_throughput.as_ref()?;
            Some((
                i.index_name.as_str(),
                t.read_capacity_units,
                t.write_capacity_units,
            ))
        })
        .collect();
    RequestedUnits {
        table: new.provisioned,
        indexes,
    }
}

/// A stream label in DynamoDB's form (an ISO-8601 timestamp).
fn stream_label(now: f64) -> String {
    let millis = (now * 1000.0) as u64;
    let secs = millis / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = ferrodyn_types::dates::civil_from_days(days as i64);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        millis % 1000
    )
}

/// A UUID-shaped table id derived from the storage id and creation time.
pub(crate) fn uuid_like(id: u64, now: f64) -> String {
    let a = crate::keys::partition_hash(&ferrodyn_types::AttributeValue::S(format!("{id}:{now}")));
    let b = crate::keys::partition_hash(&ferrodyn_types::AttributeValue::S(format!("{now}:{id}")));
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xfff,
        (b >> 48) & 0x3fff | 0x8000,
        b & 0xffff_ffff_ffff
    )
}

/// A new table's description as the creating call reports it: the table
/// and its GSIs CREATING.
fn as_creating(mut description: TableDescription) -> TableDescription {
    description.table_status = "CREATING".into();
    for gsi in description.global_secondary_indexes.iter_mut().flatten() {
        gsi.index_status = Some("CREATING".into());
    }
    for vector in description.vector_indexes.iter_mut().flatten() {
        vector.index_status = Some("CREATING".into());
    }
    description
}
