//! RestoreTableFromBackup: a new table filled from a backup's copy.
//!
//! The request commits, in one catalog write, the new table's catalog
//! record (TableStatus CREATING, with its RestoreSummary), the restore job
//! `'o' table-id` and the backup's note of the restore (`restores`); it answers at
//! once. A background job copies the backup's keys under the new table id
//! a page at a time, each page in one batch with the job's cursor, so a
//! crash resumes exactly where the copy stopped; the last batch turns the
//! table ACTIVE, deletes the job and frees the backup. Until then the table
//! is listed and described (CREATING) but no item operation reaches it, and
//! table operations on it are refused as DynamoDB refuses them on a
//! CREATING table.
//!
//! What a restore leaves out, as DynamoDB's do (developer guide, "Restoring
//! a DynamoDB table from a backup"): stream settings, Time to Live, tags,
//! resource policies, deletion protection and the table class; indexes the
//! overrides leave out are not copied.

use crate::backups::BackupRecord;
use crate::catalog::CatalogRecord;
use crate::error::EngineResult;
use crate::keyspace::{self, catalog_key, prefix_end, NEXT_TABLE_ID};
use crate::schema::{
    BillingMode, BillingModeSummary, IndexDescription, ProvisionedThroughputDescription,
    RestoreSummary, TableDescription,
};
use crate::Engine;
use ferrodyn_storage::{ReadCheck, WriteOp};
use ferrodyn_types::{DynamoError, ErrorKind, Result};
use serde::{Deserialize, Serialize};
use std::ops::Bound;
use std::sync::Arc;

/// Keys copied per storage batch.
const RESTORE_PAGE: usize = 1000;

/// A restore's overrides (RestoreTableFromBackup's `...Override` members).
#[derive(Clone, Debug, Default)]
pub struct RestoreOverrides {
    pub billing_mode: Option<BillingMode>,
    /// Read and write units of the table.
    pub provisioned: Option<(u64, u64)>,
    /// The GSIs to restore (None: all), with their read and write units.
    pub global_indexes: Option<Vec<IndexOverride>>,
    /// The LSIs to restore (None: all).
    pub local_indexes: Option<Vec<IndexOverride>>,
}

/// One index of an index override.
#[derive(Clone, Debug)]
pub struct IndexOverride {
    pub name: String,
    pub provisioned: Option<(u64, u64)>,
}

/// The job filling a restored table, stored under `'o' table-id`.
#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct RestoreJob {
    pub backup_id: u64,
    pub catalog_name: String,
    /// Index ids of the backup that the overrides left out.
    pub dropped_indexes: Vec<u32>,
    /// The last backup-data key copied.
    pub cursor: Option<Vec<u8>>,
    /// Point-in-time restores: the changes to replay on top of the copy.
    #[serde(default)]
    pub replay: Option<crate::shared::Replay>,
}

impl RestoreJob {
    pub(crate) fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("plain data always serialises")
    }

    /// Whether `table_key` (a key of the backed-up table) belongs to an
    /// index the restore leaves out (its entries or its statistics).
    fn drops(&self, table_key: &[u8]) -> bool {
        keyspace::index_of_table_key(table_key).is_some_and(|id| self.dropped_indexes.contains(&id))
    }
}

impl Engine {
    /// RestoreTableFromBackup: commits the CREATING table and its job, and
    /// starts the copy; answers the table as described now.
    pub fn restore_table_from_backup(
        self: &Arc<Self>,
        target: &str,
        backup_arn: &str,
        overrides: RestoreOverrides,
    ) -> Result<TableDescription> {
        self.start_restore(target, &overrides, |engine| {
            let backup = engine.find_backup(backup_arn)?;
            engine.admit_backup(&backup)?;
            Ok(RestoreSource::of_backup(backup))
        })
    }

    /// The restore of `target` from what `source` finds (under the catalog
    /// lock, again on each retry): commits the CREATING table and its job,
    /// starts the copy, answers the table as described now.
    pub(crate) fn start_restore(
        self: &Arc<Self>,
        target: &str,
        overrides: &RestoreOverrides,
        source: impl Fn(&Engine) -> Result<RestoreSource>,
    ) -> Result<TableDescription> {
        let guard = self.catalog_lock.lock();
        let table_id = self.retry(crate::error::RetryPolicy::Ddl, |_| {
            if self.shared() {
                self.reload_catalog()?;
            }
            let source = source(self)?;
            self.commit_restore(target, source, overrides)
        })?;
        drop(guard);
        let description = self.table(target)?.describe();
        self.spawn_background(format!("restore-{table_id}"), move |engine| {
            engine.run_restore(table_id)
        })?;
        Ok(description)
    }

    /// The admission checks and the one catalog write of a restore; the
    /// table is in memory (CREATING) when it returns its id. A storage
    /// conflict stays [`crate::error::EngineError::Conflict`], for the caller to retry
    /// (answered as TransactionConflictException at once, it failed restores
    /// whenever another write on the database met this one's checks).
    fn commit_restore(
        &self,
        target: &str,
        source: RestoreSource,
        overrides: &RestoreOverrides,
    ) -> EngineResult<u64> {
        self.admit_restore(target)?;
        let mut backup = source.backup.clone();
        let region = self.request_region();
        let catalog_name = self.catalog_name_in(&region, target);
        let (table_id, id_check) = self.allocate_table_id()?;
        let now = self.now_seconds();
        let arn = self.table_arn(&region, target);
        let (mut record, dropped_indexes) =
            restored_record(&source, target, (table_id, &arn), overrides, now)?;
        // Laid out as a new table with its settings; the upkeep splits any
        // partition the restored data outgrows.
        let now_ms = (now * 1000.0) as u64;
        record.partitions = Some(crate::partitions::PartitionMap::initial(
            &record.description,
            self.partition_settings,
            now_ms,
        ));
        let job = RestoreJob {
            backup_id: backup.id,
            catalog_name: catalog_name.clone(),
            dropped_indexes,
            cursor: None,
            replay: source.replay,
        };
        let backup_check = ReadCheck {
            key: keyspace::backup_record_key(backup.id),
            expected: Some(backup.encode()),
        };
        backup.restores.push(table_id);
        let absent = ReadCheck {
            key: catalog_key(&catalog_name),
            expected: None,
        };
        let record_bytes = serde_json::to_vec(&record).map_err(crate::storage_error)?;
        let catalog = self.reload_guard();
        self.commit_catalog(
            vec![absent, id_check, backup_check],
            vec![
                WriteOp::Put(catalog_key(&catalog_name), record_bytes.clone()),
                WriteOp::Put(keyspace::restore_job_key(table_id), job.encode()),
                WriteOp::Put(
                    NEXT_TABLE_ID.to_vec(),
                    (table_id + 1).to_be_bytes().to_vec(),
                ),
                WriteOp::Put(keyspace::backup_record_key(backup.id), backup.encode()),
            ],
        )?;
        let table = self.table_from_record(&catalog_key(&catalog_name), record_bytes, None)?;
        self.tables.write().insert(catalog_name, table);
        drop(catalog);
        Ok(table_id)
    }

    /// A backup a restore may start from: AVAILABLE, feeding no other restore.
    fn admit_backup(&self, backup: &BackupRecord) -> Result<()> {
        let arn = &backup.arn;
        if backup.status != crate::backups::BackupStatus::Available {
            return Err(DynamoError::new(
                ErrorKind::BackupInUse,
                format!("Backup is being created: {arn}"),
            ));
        }
        if !backup.restores.is_empty() {
            return Err(DynamoError::new(
                ErrorKind::BackupInUse,
                format!("Backup is being used to restore another table: {arn}"),
            ));
        }
        Ok(())
    }

    /// A restore's refusals about its target before anything is written.
    fn admit_restore(&self, target: &str) -> Result<()> {
        if let Some(existing) = self.lookup(target) {
            let restoring = existing
                .describe()
                .restore_summary
                .filter(|_| existing.is_creating());
            if let Some(summary) = restoring {
                let from = (summary.source_backup_arn).unwrap_or(summary.source_table_arn);
                return Err(DynamoError::new(
                    ErrorKind::TableInUse,
                    format!("Table: {target} is already being restored from backup: {from}"),
                ));
            }
            return Err(DynamoError::new(
                ErrorKind::TableAlreadyExists,
                format!("Table already exists: {target}"),
            ));
        }
        let region = self.request_region();
        let in_region = (self.tables.read().keys())
            .filter(|key| self.name_in_region(key, &region).is_some())
            .count();
        self.check_table_quota(in_region)?;
        self.check_table_operations()
    }

    /// The background half of a restore (resumable: see the module header).
    pub(crate) fn run_restore(&self, table_id: u64) -> Result<()> {
        let job_key = keyspace::restore_job_key(table_id);
        let Some(bytes) = self.storage.get(&job_key).map_err(crate::storage_error)? else {
            return Ok(()); // finished by an earlier run
        };
        let mut job: RestoreJob = serde_json::from_slice(&bytes).map_err(crate::storage_error)?;
        if !self.wait_for_backup(job.backup_id)? {
            return self.abandon_restore(table_id, &job);
        }
        let data = keyspace::backup_data(job.backup_id);
        let end = prefix_end(&data);
        let end = end.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
        loop {
            let start = job
                .cursor
                .as_deref()
                .map_or(Bound::Included(data.as_slice()), Bound::Excluded);
            let page = (self.storage.scan(start, end, false, RESTORE_PAGE))
                .map_err(crate::storage_error)?;
            let Some((last, _)) = page.last() else { break };
            job.cursor = Some(last.clone());
            let full = page.len() == RESTORE_PAGE;
            let mut ops: Vec<WriteOp> = Vec::with_capacity(page.len() + 1);
            for (key, value) in page {
                let table_key = keyspace::table_key_of_backup_data(&key);
                if !job.drops(table_key) {
                    ops.push(WriteOp::Put(keyspace::rehomed(table_key, table_id), value));
                }
            }
            ops.push(WriteOp::Put(job_key.clone(), job.encode()));
            self.write_retrying_conflicts(ops)?;
            if !full {
                break;
            }
        }
        if job.replay.is_some() {
            self.replay_changes(table_id, &mut job, &job_key)?;
        }
        self.finish_restore(table_id, &job)
    }

    /// Waits while the backup is still being copied (a point-in-time base
    /// taken moments ago); false when it is gone.
    fn wait_for_backup(&self, backup_id: u64) -> Result<bool> {
        loop {
            match self.backup_record(backup_id)? {
                None => return Ok(false),
                Some(backup) if backup.status == crate::backups::BackupStatus::Available => {
                    return Ok(true)
                }
                Some(_) => std::thread::sleep(std::time::Duration::from_millis(20)),
            }
        }
    }

    /// The last batch of a restore: the table ACTIVE, the job gone, the
    /// backup free; then the table is loaded as it now is.
    fn finish_restore(&self, table_id: u64, job: &RestoreJob) -> Result<()> {
        let guard = self.catalog_lock.lock();
        let key = catalog_key(&job.catalog_name);
        let stored = self.storage.get(&key).map_err(crate::storage_error)?;
        let record = (stored.as_deref())
            .map(serde_json::from_slice::<CatalogRecord>)
            .transpose()
            .map_err(crate::storage_error)?
            .filter(|record| record.id == table_id);
        let (Some(stored), Some(mut record)) = (stored, record) else {
            // The test harness dropped the table meanwhile (reset, snapshot
            // restore): what was copied is purged like any dropped table's.
            drop(guard);
            return self.abandon_restore(table_id, job);
        };
        record.description.table_status = "ACTIVE".into();
        if let Some(summary) = &mut record.description.restore_summary {
            summary.restore_in_progress = false;
        }
        let record_bytes = serde_json::to_vec(&record).map_err(crate::storage_error)?;
        let mut ops = vec![
            WriteOp::Put(key.clone(), record_bytes.clone()),
            WriteOp::Delete(keyspace::restore_job_key(table_id)),
        ];
        let discarded = self.release_backup(job.backup_id, table_id, &mut ops)?;
        let catalog = self.reload_guard();
        let check = ReadCheck {
            key: key.clone(),
            expected: Some(stored),
        };
        self.retry(crate::error::RetryPolicy::Ddl, |_| {
            self.commit_catalog(vec![check.clone()], ops.clone())
        })?;
        let table = self.table_from_record(&key, record_bytes, None)?;
        self.tables
            .write()
            .insert(job.catalog_name.clone(), Arc::clone(&table));
        drop(catalog);
        drop(guard);
        if let Some(id) = discarded {
            self.purge_backup(id)?;
        }
        // Indexes the backup did not hold (or held half-filled) are filled
        // now, the table ACTIVE meanwhile, as after UpdateTable.
        for index in table.indexes() {
            if index.state() == crate::index::IndexState::Backfilling {
                self.backfill_index(&table, &index)?;
            }
        }
        for index in table.vector_indexes() {
            if index.figures.state() == crate::index::IndexState::Backfilling {
                self.backfill_vector_index(&table, &index)?;
            }
        }
        Ok(())
    }

    /// Adds to `ops` the backup record without restore `table_id`; a
    /// discarded point-in-time base no restore uses any more goes instead
    /// (its id returned, for the caller to purge once `ops` committed).
    fn release_backup(
        &self,
        backup_id: u64,
        table_id: u64,
        ops: &mut Vec<WriteOp>,
    ) -> Result<Option<u64>> {
        let Some(mut backup) = self.backup_record(backup_id)? else {
            return Ok(None);
        };
        backup.restores.retain(|id| *id != table_id);
        let key = keyspace::backup_record_key(backup.id);
        if backup.discard_when_unused && backup.restores.is_empty() {
            ops.push(WriteOp::Delete(key));
            ops.push(WriteOp::Put(
                keyspace::backup_purge_key(backup.id),
                Vec::new(),
            ));
            return Ok(Some(backup.id));
        }
        ops.push(WriteOp::Put(key, backup.encode()));
        Ok(None)
    }

    /// Ends a restore whose table is gone: the job goes, the backup is
    /// freed, and the copied keys are purged.
    fn abandon_restore(&self, table_id: u64, job: &RestoreJob) -> Result<()> {
        let guard = self.catalog_lock.lock();
        let mut ops = vec![
            WriteOp::Delete(keyspace::restore_job_key(table_id)),
            WriteOp::Put(keyspace::purge_key(table_id), Vec::new()),
        ];
        // The CREATING table goes too (when it is still this restore's).
        let catalog = catalog_key(&job.catalog_name);
        let ours = (self.tables.read().get(&job.catalog_name)).is_some_and(|t| t.id == table_id);
        if ours {
            ops.push(WriteOp::Delete(catalog.clone()));
        }
        let discarded = self.release_backup(job.backup_id, table_id, &mut ops)?;
        let reload = self.reload_guard();
        self.write_retrying_conflicts(ops)?;
        if ours {
            self.tables.write().remove(&job.catalog_name);
        }
        drop(reload);
        drop(guard);
        eprintln!(
            "ferrodyn: the restore of {} could not go on (its backup is gone): the table was removed",
            job.catalog_name
        );
        if let Some(id) = discarded {
            self.purge_backup(id)?;
        }
        self.purge_table_data(table_id)
    }

    /// Starts every restore a crash or shutdown cut short (and, once a
    /// restored table is ACTIVE, the backfills it brought along).
    pub(crate) fn resume_restores(self: &Arc<Self>) -> Result<()> {
        for (key, _) in self.scan_all_under(&keyspace::restore_jobs())? {
            if let Some(table_id) = keyspace::id_of(&key) {
                self.spawn_background(format!("restore-{table_id}"), move |engine| {
                    engine.run_restore(table_id)
                })?;
            }
        }
        Ok(())
    }
}

/// What a restore rebuilds a table from: a backup's data, the schema to
/// give the table (the backup's, or the source table's now for a
/// point-in-time restore), and the changes to replay on top.
#[derive(Clone)]
pub(crate) struct RestoreSource {
    pub backup: BackupRecord,
    pub schema: CatalogRecord,
    pub stats: crate::table::TableStats,
    /// RestoreSummary's SourceBackupArn (None for point-in-time restores).
    pub backup_arn: Option<String>,
    /// RestoreSummary's RestoreDateTime: the backup's creation time, or the
    /// point in time restored to.
    pub restore_time: f64,
    pub replay: Option<crate::shared::Replay>,
}

impl RestoreSource {
    fn of_backup(backup: BackupRecord) -> RestoreSource {
        RestoreSource {
            schema: backup.source.clone(),
            stats: backup.stats,
            backup_arn: Some(backup.arn.clone()),
            restore_time: backup.created,
            replay: None,
            backup,
        }
    }
}

/// The names of every index of `description`: GSIs, LSIs, vector indexes.
fn index_names(description: &crate::schema::TableDescription) -> Vec<&str> {
    (description.global_secondary_indexes.iter().flatten())
        .chain(description.local_secondary_indexes.iter().flatten())
        .map(|index| index.index_name.as_str())
        .chain((description.vector_indexes.iter().flatten()).map(|v| v.index_name.as_str()))
        .collect()
}

/// Vector indexes are restored with the table (their entries are in the
/// backup beside the GSIs'), under the new table's ARN.
fn rehome_vector_indexes(description: &mut crate::schema::TableDescription, arn: &str) {
    for vector in description.vector_indexes.iter_mut().flatten() {
        vector.index_arn = format!("{arn}/index/{}", vector.index_name);
    }
}

/// The catalog record of a table restored from `source` as `target` with
/// id and ARN `new`, and the backup's index ids the table leaves out.
fn restored_record(
    source: &RestoreSource,
    target: &str,
    (table_id, arn): (u64, &str),
    overrides: &RestoreOverrides,
    now: f64,
) -> Result<(CatalogRecord, Vec<u32>)> {
    let mut description = source.schema.description.clone();
    description.table_name = target.to_string();
    description.table_arn = arn.to_string();
    description.table_id = crate::catalog::uuid_like(table_id, now);
    description.table_status = "CREATING".into();
    description.creation_date_time = now;
    description.item_count = source.stats.item_count.max(0) as u64;
    description.table_size_bytes = source.stats.size_bytes.max(0) as u64;
    description.stream_specification = None;
    description.latest_stream_arn = None;
    description.latest_stream_label = None;
    description.deletion_protection_enabled = false;
    description.table_class_summary = None;
    description.restore_summary = Some(RestoreSummary {
        source_backup_arn: source.backup_arn.clone(),
        source_table_arn: source.schema.description.table_arn.clone(),
        restore_date_time: source.restore_time,
        restore_in_progress: true,
    });
    apply_billing(&mut description, overrides, now);
    let gsis = keep_indexes(
        description.global_secondary_indexes.take(),
        &overrides.global_indexes,
        "GlobalSecondaryIndexOverride",
    )?;
    let lsis = keep_indexes(
        description.local_secondary_indexes.take(),
        &overrides.local_indexes,
        "LocalSecondaryIndexOverride",
    )?;
    let provisioned = description.billing_mode() == BillingMode::Provisioned;
    check_units(
        provisioned,
        overrides,
        gsis.as_deref().unwrap_or_default(),
        &description,
    )?;
    description.global_secondary_indexes = gsis.map(|list| {
        (list.into_iter())
            .map(|mut index| {
                index.index_arn = format!("{arn}/index/{}", index.index_name);
                let units = (overrides.global_indexes.iter().flatten())
                    .find(|o| o.name == index.index_name)
                    .and_then(|o| o.provisioned);
                index.provisioned_throughput = match (provisioned, units) {
                    (false, _) => Some(units_of(0, 0)),
                    (true, Some((read, write))) => Some(units_of(read, write)),
                    (true, None) => index.provisioned_throughput.take(),
                };
                index
            })
            .collect()
    });
    description.local_secondary_indexes = lsis.map(|list| {
        (list.into_iter())
            .map(|mut index| {
                index.index_arn = format!("{arn}/index/{}", index.index_name);
                index
            })
            .collect()
    });
    rehome_vector_indexes(&mut description, arn);
    let kept = index_names(&description);
    let schema = &source.schema;
    let kept_ids: Vec<u32> = (schema.index_ids.iter())
        .filter(|(name, _)| kept.contains(&name.as_str()))
        .map(|(_, id)| *id)
        .collect();
    // The backup's indexes the table will not have (by id: an index
    // dropped and re-created under its name since is another index).
    let dropped = (source.backup.source.index_ids.values())
        .filter(|id| !kept_ids.contains(id))
        .copied()
        .collect();
    // Indexes the backup does not hold are filled once the table is.
    let in_backup: Vec<u32> = source.backup.source.index_ids.values().copied().collect();
    let backfilling = (schema.index_ids.iter())
        .filter(|(name, id)| {
            kept.contains(&name.as_str())
                && (schema.backfilling.contains(name) || !in_backup.contains(id))
        })
        .map(|(name, _)| name.clone())
        .collect();
    let record = CatalogRecord {
        id: table_id,
        index_ids: (schema.index_ids.clone().into_iter())
            .filter(|(name, _)| kept.contains(&name.as_str()))
            .collect(),
        backfilling,
        description,
        tags: Default::default(),
        policies: Default::default(),
        streams: Vec::new(),
        partitions: None,
        insights: Default::default(),
        ttl_attribute: None,
        recovery: None,
        kinesis: Vec::new(),
        // A restored table is not a replica (DynamoDB restores plain tables).
        global: None,
        next_index_id: schema.next_index_id,
    };
    Ok((record, dropped))
}

/// Throughput overrides against the restored table's billing mode: a
/// provisioned table needs units for itself and each GSI (from the backup
/// or the overrides), an on-demand one takes none.
fn check_units(
    provisioned: bool,
    overrides: &RestoreOverrides,
    gsis: &[IndexDescription],
    description: &TableDescription,
) -> Result<()> {
    let invalid = |detail: String| {
        DynamoError::validation(format!(
            "One or more parameter values were invalid: {detail}"
        ))
    };
    let given = |index: &IndexDescription| {
        (overrides.global_indexes.iter().flatten())
            .any(|o| o.name == index.index_name && o.provisioned.is_some())
    };
    if !provisioned {
        if overrides.provisioned.is_some() || gsis.iter().any(given) {
            return Err(invalid(
                "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST".into(),
            ));
        }
        return Ok(());
    }
    if description.provisioned_throughput.read_capacity_units == 0 {
        return Err(invalid(
            "ProvisionedThroughputOverride must be specified when BillingModeOverride is PROVISIONED".into(),
        ));
    }
    let has_units = |index: &IndexDescription| {
        index
            .provisioned_throughput
            .as_ref()
            .is_some_and(|p| p.read_capacity_units > 0)
    };
    match gsis.iter().find(|index| !has_units(index) && !given(index)) {
        Some(index) => Err(invalid(format!(
            "GlobalSecondaryIndexOverride must be specified for index: {} when BillingModeOverride is PROVISIONED",
            index.index_name
        ))),
        None => Ok(()),
    }
}

fn units_of(read: u64, write: u64) -> ProvisionedThroughputDescription {
    ProvisionedThroughputDescription {
        read_capacity_units: read,
        write_capacity_units: write,
        ..Default::default()
    }
}

/// The billing mode and table throughput after the overrides.
fn apply_billing(description: &mut TableDescription, overrides: &RestoreOverrides, now: f64) {
    if let Some(mode) = overrides.billing_mode {
        let switched_to_demand = mode == BillingMode::PayPerRequest
            && description.billing_mode() != BillingMode::PayPerRequest;
        let last_switch = description
            .billing_mode_summary
            .as_ref()
            .and_then(|s| s.last_update_to_pay_per_request_date_time);
        description.billing_mode_summary = Some(BillingModeSummary {
            billing_mode: mode,
            last_update_to_pay_per_request_date_time: match mode {
                BillingMode::PayPerRequest if switched_to_demand => Some(now),
                BillingMode::PayPerRequest => last_switch,
                BillingMode::Provisioned => None,
            },
        });
        if mode == BillingMode::PayPerRequest {
            description.provisioned_throughput = units_of(0, 0);
        }
    }
    if let Some((read, write)) = overrides.provisioned {
        description.provisioned_throughput = units_of(read, write);
    }
}

/// The indexes of `list` an override keeps (all when there is none); an
/// override naming an index the backup does not hold is refused.
fn keep_indexes(
    list: Option<Vec<IndexDescription>>,
    keep: &Option<Vec<IndexOverride>>,
    member: &str,
) -> Result<Option<Vec<IndexDescription>>> {
    let Some(keep) = keep else { return Ok(list) };
    let list = list.unwrap_or_default();
    if let Some(unknown) = keep
        .iter()
        .find(|o| !list.iter().any(|i| i.index_name == o.name))
    {
        return Err(DynamoError::validation(format!(
            "One or more parameter values were invalid: {member} names index {} which the backup does not have",
            unknown.name
        )));
    }
    let kept: Vec<IndexDescription> = (list.into_iter())
        .filter(|index| keep.iter().any(|o| o.name == index.index_name))
        .collect();
    Ok((!kept.is_empty()).then_some(kept))
}
