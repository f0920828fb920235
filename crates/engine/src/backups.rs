//! On-demand backups: CreateBackup, DescribeBackup, ListBackups and
//! DeleteBackup (restores are `restore.rs`). docs/design/backups.md has the
//! research behind this; the short of it:
//!
//! - A backup is a copy of its table's items, index entries and statistics
//!   at one instant: CreateBackup opens a storage view
//!   ([`ferrodyn_storage::Storage::open_view`]) of the table's ranges and
//!   its catalog record, writes the record (CREATING) and answers; a
//!   background job copies the view under `'b' backup-id` and marks the
//!   backup AVAILABLE. Writers are never held off, and writes acknowledged
//!   after CreateBackup answered are not in the backup.
//! - Statistics are folded on the way (base plus deltas as of the view), so
//!   a backup holds one base record per table and index.
//! - A backup is independent of its table: it outlives DeleteTable, and its
//!   record keeps the source's catalog record, which is what a restore
//!   rebuilds the table from.
//! - Crash safety: a view does not survive the process, so a backup still
//!   CREATING when its copier died can never be finished: at start-up
//!   (embedded) or when its heartbeat stops (shared storage, the lease
//!   holder) it becomes a purge marker `'d'`, and the backup never existed.
//!   DeleteBackup leaves the same marker; purges resume after a restart.
//! - On shared storage the view lives on the node that answered
//!   CreateBackup, so that node copies (not the lease holder) and refreshes
//!   the record's heartbeat with each page.

use crate::catalog::CatalogRecord;
use crate::keyspace::{self, catalog_key, prefix_end};
use crate::schema::{KeySchemaElement, Projection, StreamSpecification};
use crate::table::{Table, TableStats};
use crate::Engine;
use ferrodyn_storage::{KeyRange, ReadCheck, StorageView, WriteOp};
use ferrodyn_types::{DynamoError, ErrorKind, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

/// Keys copied per storage batch.
const COPY_PAGE: usize = 1000;

/// After each page a copy rests this many times as long as the page took,
/// so it takes at most a quarter of one core and concurrent writers keep the
/// rest: unpaced, a 1,000,000-item copy cut PutItem to a third of its
/// throughput on two cores (bench/backups.py, BENCHMARKS.md).
const COPY_REST_FACTOR: u32 = 3;

/// A CREATING backup whose heartbeat is older than this (shared storage)
/// lost its copier: it is abandoned.
const ABANDON_AFTER_MS: u64 = 60_000;

/// Who made a backup: a user (CreateBackup) or the service (DeleteTable of
/// a table with point-in-time recovery).
#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum BackupType {
    User,
    System,
    /// The base of a table's point-in-time recovery (recovery.rs): no
    /// client sees it as a backup.
    PointInTimeBase,
}

#[derive(Clone, Copy, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum BackupStatus {
    Creating,
    Available,
    Deleted,
}

/// A backup as stored under `'a' id`.
#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct BackupRecord {
    pub id: u64,
    pub arn: String,
    pub name: String,
    pub backup_type: BackupType,
    pub status: BackupStatus,
    /// Seconds since the epoch, to the millisecond.
    pub created: f64,
    #[serde(default)]
    pub expires: Option<f64>,
    pub region: String,
    #[serde(default)]
    pub namespace: Option<String>,
    /// The source table's catalog record at the backup's instant.
    pub source: CatalogRecord,
    /// The source's item count and bytes at that instant.
    pub stats: TableStats,
    /// The tables restores from this backup are filling: a backup feeds
    /// one restore at a time (a point-in-time base any number) and cannot
    /// be deleted meanwhile.
    #[serde(default)]
    pub restores: Vec<u64>,
    /// A point-in-time base whose recovery was disabled while restores
    /// used it: deleted when the last of them ends.
    #[serde(default)]
    pub discard_when_unused: bool,
    /// Shared storage: the node copying a CREATING backup, and when it last
    /// wrote (ms since the epoch).
    #[serde(default)]
    pub node: u64,
    #[serde(default)]
    pub heartbeat_ms: u64,
}

impl BackupRecord {
    pub(crate) fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("plain data always serialises")
    }

    fn decode(bytes: &[u8]) -> Result<BackupRecord> {
        serde_json::from_slice(bytes).map_err(crate::storage_error)
    }

    fn details(&self) -> BackupDetails {
        BackupDetails {
            backup_arn: self.arn.clone(),
            backup_name: self.name.clone(),
            backup_size_bytes: (self.status != BackupStatus::Creating)
                .then_some(self.stats.size_bytes.max(0) as u64),
            backup_status: self.status,
            backup_type: self.backup_type,
            backup_creation_date_time: self.created,
            backup_expiry_date_time: self.expires,
        }
    }

    /// DescribeBackup's answer.
    pub(crate) fn describe(&self) -> BackupDescription {
        let table = &self.source.description;
        let throughput = |read, write| ProvisionedThroughput {
            read_capacity_units: read,
            write_capacity_units: write,
        };
        let index_info = |index: &crate::schema::IndexDescription| IndexInfo {
            index_name: index.index_name.clone(),
            key_schema: index.key_schema.clone(),
            projection: index.projection.clone(),
            provisioned_throughput: (index.provisioned_throughput.as_ref())
                .map(|p| throughput(p.read_capacity_units, p.write_capacity_units)),
        };
        let infos = |list: &Option<Vec<_>>| {
            (list.as_ref()).map(|list: &Vec<_>| list.iter().map(index_info).collect())
        };
        BackupDescription {
            backup_details: self.details(),
            source_table_details: SourceTableDetails {
                table_name: table.table_name.clone(),
                table_id: table.table_id.clone(),
                table_arn: table.table_arn.clone(),
                table_size_bytes: self.stats.size_bytes.max(0) as u64,
                key_schema: table.key_schema.clone(),
                table_creation_date_time: table.creation_date_time,
                provisioned_throughput: throughput(
                    table.provisioned_throughput.read_capacity_units,
                    table.provisioned_throughput.write_capacity_units,
                ),
                item_count: self.stats.item_count.max(0) as u64,
                billing_mode: table.billing_mode(),
            },
            source_table_feature_details: SourceTableFeatureDetails {
                local_secondary_indexes: infos(&table.local_secondary_indexes),
                global_secondary_indexes: infos(&table.global_secondary_indexes),
                stream_description: table.stream_specification.clone(),
                time_to_live_description: (self.source.ttl_attribute.clone()).map(|name| {
                    TimeToLiveDescription {
                        attribute_name: name,
                        time_to_live_status: "ENABLED".into(),
                    }
                }),
            },
        }
    }

    fn summary(&self) -> BackupSummary {
        let table = &self.source.description;
        let details = self.details();
        BackupSummary {
            table_name: table.table_name.clone(),
            table_id: table.table_id.clone(),
            table_arn: table.table_arn.clone(),
            backup_arn: details.backup_arn,
            backup_name: details.backup_name,
            backup_creation_date_time: details.backup_creation_date_time,
            backup_expiry_date_time: details.backup_expiry_date_time,
            backup_status: details.backup_status,
            backup_type: details.backup_type,
            backup_size_bytes: details.backup_size_bytes,
        }
    }
}

/// `BackupDetails` in DynamoDB's wire shape.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "PascalCase")]
pub struct BackupDetails {
    pub backup_arn: String,
    pub backup_name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backup_size_bytes: Option<u64>,
    pub backup_status: BackupStatus,
    pub backup_type: BackupType,
    pub backup_creation_date_time: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backup_expiry_date_time: Option<f64>,
}

/// `BackupDescription` (DescribeBackup, DeleteBackup).
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "PascalCase")]
pub struct BackupDescription {
    pub backup_details: BackupDetails,
    pub source_table_details: SourceTableDetails,
    pub source_table_feature_details: SourceTableFeatureDetails,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "PascalCase")]
pub struct ProvisionedThroughput {
    pub read_capacity_units: u64,
    pub write_capacity_units: u64,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "PascalCase")]
pub struct SourceTableDetails {
    pub table_name: String,
    pub table_id: String,
    pub table_arn: String,
    pub table_size_bytes: u64,
    pub key_schema: Vec<KeySchemaElement>,
    pub table_creation_date_time: f64,
    pub provisioned_throughput: ProvisionedThroughput,
    pub item_count: u64,
    pub billing_mode: crate::schema::BillingMode,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "PascalCase")]
pub struct SourceTableFeatureDetails {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local_secondary_indexes: Option<Vec<IndexInfo>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub global_secondary_indexes: Option<Vec<IndexInfo>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stream_description: Option<StreamSpecification>,
    #[serde(rename = "TimeToLiveDescription")]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_to_live_description: Option<TimeToLiveDescription>,
}

/// A secondary index as a backup describes it (`LocalSecondaryIndexInfo`,
/// `GlobalSecondaryIndexInfo`).
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "PascalCase")]
pub struct IndexInfo {
    pub index_name: String,
    pub key_schema: Vec<KeySchemaElement>,
    pub projection: Projection,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub provisioned_throughput: Option<ProvisionedThroughput>,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "PascalCase")]
pub struct TimeToLiveDescription {
    pub attribute_name: String,
    pub time_to_live_status: String,
}

/// One entry of ListBackups.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "PascalCase")]
pub struct BackupSummary {
    pub table_name: String,
    pub table_id: String,
    pub table_arn: String,
    pub backup_arn: String,
    pub backup_name: String,
    pub backup_creation_date_time: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backup_expiry_date_time: Option<f64>,
    pub backup_status: BackupStatus,
    pub backup_type: BackupType,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backup_size_bytes: Option<u64>,
}

/// ListBackups' BackupType filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BackupTypeFilter {
    #[default]
    User,
    System,
    /// Backups made by AWS Backup: Ferrodyn has none.
    AwsBackup,
    All,
}

impl BackupTypeFilter {
    fn admits(self, backup_type: BackupType) -> bool {
        match self {
            BackupTypeFilter::User => backup_type == BackupType::User,
            BackupTypeFilter::System => backup_type == BackupType::System,
            BackupTypeFilter::AwsBackup => false,
            BackupTypeFilter::All => backup_type != BackupType::PointInTimeBase,
        }
    }
}

/// A validated ListBackups request.
#[derive(Clone, Debug, Default)]
pub struct BackupListing {
    /// A table name or ARN.
    pub table_name: Option<String>,
    /// Created at or after (seconds since the epoch).
    pub created_from: Option<f64>,
    /// Created before.
    pub created_before: Option<f64>,
    pub backup_type: BackupTypeFilter,
    pub limit: usize,
    pub exclusive_start_arn: Option<String>,
}

/// A backup opened at one instant and not committed yet (see
/// [`Engine::open_backup`]): the caller commits `ops` under `checks`, with
/// whatever else must change at the same time, then starts the copy.
pub(crate) struct OpenBackup {
    view: Box<dyn StorageView>,
    pub record: BackupRecord,
    pub checks: Vec<ReadCheck>,
    /// The id allocator's next value.
    allocator: WriteOp,
}

impl OpenBackup {
    /// What records the backup: its record as it stands, and the allocator.
    pub(crate) fn ops(&self) -> Vec<WriteOp> {
        let record = WriteOp::Put(
            keyspace::backup_record_key(self.record.id),
            self.record.encode(),
        );
        vec![record, self.allocator.clone()]
    }
}

/// The table ranges a backup reads through its view, and the catalog key.
fn backup_ranges(table: &Table) -> Vec<KeyRange> {
    let mut ranges: Vec<KeyRange> = keyspace::backup_sources(table.id)
        .into_iter()
        .map(|prefix| {
            let end = prefix_end(&prefix);
            (prefix, end)
        })
        .collect();
    let catalog = catalog_key(&table.catalog_name);
    let mut after = catalog.clone();
    after.push(0);
    ranges.push((catalog, Some(after)));
    ranges
}

/// Milliseconds since the epoch, from the engine clock's seconds.
fn millis(seconds: f64) -> u64 {
    (seconds * 1000.0) as u64
}

impl Engine {
    /// CreateBackup: opens a view of the table now, records the backup
    /// CREATING and copies it in the background.
    pub fn create_backup(
        self: &Arc<Self>,
        table_name: &str,
        backup_name: &str,
    ) -> Result<BackupDetails> {
        let _catalog = self.catalog_lock.lock();
        let not_found = || {
            DynamoError::new(
                ErrorKind::TableNotFound,
                format!("Table not found: {table_name}"),
            )
        };
        let table = (self.lookup(table_name))
            .filter(|table| !table.is_creating())
            .ok_or_else(not_found)?;
        let taken = self
            .open_backup(&table, BackupType::User, backup_name)?
            .ok_or_else(not_found)?;
        self.retry(crate::error::RetryPolicy::Ddl, |_| {
            self.commit_catalog(taken.checks.clone(), taken.ops())
        })?;
        let details = taken.record.details();
        self.start_copy(taken)?;
        Ok(details)
    }

    /// A backup of `table` at this instant, not yet committed: its view,
    /// its record (CREATING) and the catalog write that records it (with
    /// the id allocator). None when the table is gone as of the view.
    pub(crate) fn open_backup(
        &self,
        table: &Table,
        backup_type: BackupType,
        name: &str,
    ) -> Result<Option<OpenBackup>> {
        let view = (self.storage)
            .open_view(&backup_ranges(table))
            .map_err(crate::storage_error)?;
        // The table as of the view: on shared storage another node may
        // have deleted (or re-created) it since this node last looked.
        let source = (view.get(&catalog_key(&table.catalog_name)))
            .map_err(crate::storage_error)?
            .map(|bytes| serde_json::from_slice::<CatalogRecord>(&bytes))
            .transpose()
            .map_err(crate::storage_error)?
            .filter(|record| record.id == table.id);
        let Some(source) = source else {
            return Ok(None);
        };
        let stats = fold_through(&*view, &keyspace::stats_key(table.id))?;
        let stored_next =
            (self.storage.get(keyspace::NEXT_BACKUP_ID)).map_err(crate::storage_error)?;
        let id = (stored_next.clone())
            .and_then(|v| v.try_into().ok().map(u64::from_be_bytes))
            .unwrap_or(1);
        let created = (self.now_seconds() * 1000.0).floor() / 1000.0;
        let table_arn = &source.description.table_arn;
        let arn = format!("{table_arn}/backup/{:014}-{id:08x}", millis(created));
        let record = BackupRecord {
            id,
            arn,
            name: name.to_string(),
            backup_type,
            status: BackupStatus::Creating,
            created,
            expires: None,
            region: self.request_region(),
            namespace: crate::region::request_namespace(),
            source,
            stats,
            restores: Vec::new(),
            discard_when_unused: false,
            node: self.node_id(),
            heartbeat_ms: millis(self.now_seconds()),
        };
        let checks = vec![ReadCheck {
            key: keyspace::NEXT_BACKUP_ID.to_vec(),
            expected: stored_next,
        }];
        let allocator = WriteOp::Put(
            keyspace::NEXT_BACKUP_ID.to_vec(),
            (id + 1).to_be_bytes().to_vec(),
        );
        Ok(Some(OpenBackup {
            view,
            record,
            checks,
            allocator,
        }))
    }

    /// Copies a committed [`OpenBackup`] on this thread, before returning.
    pub(crate) fn copy_now(&self, taken: OpenBackup) -> Result<()> {
        self.copy_backup(taken.record.id, taken.view)
    }

    /// Starts copying a committed [`OpenBackup`] on this node.
    pub(crate) fn start_copy(self: &Arc<Self>, taken: OpenBackup) -> Result<()> {
        let id = taken.record.id;
        let view = taken.view;
        self.spawn_job_here(format!("backup-{id}"), move |engine| {
            engine.copy_backup(id, view)
        })
    }

    /// The background half of CreateBackup: copies the view, page by page,
    /// then marks the backup AVAILABLE.
    fn copy_backup(&self, id: u64, view: Box<dyn StorageView>) -> Result<()> {
        let Some(mut record) = self.backup_record(id)? else {
            return Ok(()); // abandoned meanwhile (a stalled node)
        };
        let sources = keyspace::backup_sources(record.source.id);
        for prefix in &sources {
            if keyspace::stats_base_len(prefix).is_some() {
                self.copy_folded_stats(id, &*view, prefix)?;
            } else {
                self.copy_range(&mut record, &*view, prefix)?;
            }
        }
        drop(view);
        record.status = BackupStatus::Available;
        self.write_backup_record(&record)?;
        Ok(())
    }

    /// Copies every key under `prefix` as of the view into the backup.
    fn copy_range(
        &self,
        record: &mut BackupRecord,
        view: &dyn StorageView,
        prefix: &[u8],
    ) -> Result<()> {
        let end = prefix_end(prefix);
        let end = end.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
        let mut after: Option<Vec<u8>> = None;
        loop {
            let started = std::time::Instant::now();
            let start = after
                .as_deref()
                .map_or(Bound::Included(prefix), Bound::Excluded);
            let page = (view.scan(start, end, false, COPY_PAGE)).map_err(crate::storage_error)?;
            let Some((last, _)) = page.last() else {
                return Ok(());
            };
            after = Some(last.clone());
            let full = page.len() == COPY_PAGE;
            let mut ops: Vec<WriteOp> = (page.into_iter())
                .map(|(key, value)| WriteOp::Put(keyspace::backup_data_key(record.id, &key), value))
                .collect();
            if self.shared() {
                record.heartbeat_ms = millis(self.now_seconds());
                ops.push(WriteOp::Put(
                    keyspace::backup_record_key(record.id),
                    record.encode(),
                ));
            }
            self.write_retrying_conflicts(ops)?;
            if !full {
                return Ok(());
            }
            std::thread::sleep(started.elapsed() * COPY_REST_FACTOR);
        }
    }

    /// Writes the statistics under `prefix` (a table's, or all its
    /// indexes') as of the view, each folded into one base record.
    fn copy_folded_stats(&self, id: u64, view: &dyn StorageView, prefix: &[u8]) -> Result<()> {
        let mut totals: BTreeMap<Vec<u8>, TableStats> = BTreeMap::new();
        for (key, value) in scan_view(view, prefix)? {
            let base_len = keyspace::stats_base_len(&key).unwrap_or(key.len());
            let change = if key.len() == base_len {
                crate::stats::decode(&value)?
            } else {
                crate::stats::decode_delta(&value)?
            };
            let total = totals
                .entry(key[..base_len.min(key.len())].to_vec())
                .or_default();
            total.item_count += change.item_count;
            total.size_bytes += change.size_bytes;
        }
        let ops = (totals.into_iter())
            .map(|(base, total)| {
                WriteOp::Put(
                    keyspace::backup_data_key(id, &base),
                    crate::stats::encode(total),
                )
            })
            .collect();
        self.write_retrying_conflicts(ops)?;
        Ok(())
    }

    pub(crate) fn backup_record(&self, id: u64) -> Result<Option<BackupRecord>> {
        let stored =
            (self.storage.get(&keyspace::backup_record_key(id))).map_err(crate::storage_error)?;
        stored.map(|bytes| BackupRecord::decode(&bytes)).transpose()
    }

    pub(crate) fn write_backup_record(&self, record: &BackupRecord) -> Result<()> {
        let put = WriteOp::Put(keyspace::backup_record_key(record.id), record.encode());
        self.write_retrying_conflicts(vec![put])?;
        Ok(())
    }

    /// The backup a BackupArn names, in the request's account, region and
    /// namespace: ValidationException for what is no backup ARN at all,
    /// BackupNotFoundException for one that names no backup here.
    pub(crate) fn find_backup(&self, arn: &str) -> Result<BackupRecord> {
        let not_found = || {
            DynamoError::new(
                ErrorKind::BackupNotFound,
                format!("Backup not found: {arn}"),
            )
        };
        let id = backup_id_in_arn(arn)?;
        if !arn.starts_with(&format!(
            "arn:aws:dynamodb:{}:{}:",
            self.request_region(),
            self.account
        )) {
            return Err(not_found());
        }
        match self.backup_record(id)? {
            Some(record)
                if record.arn == arn && record.namespace == crate::region::request_namespace() =>
            {
                Ok(record)
            }
            _ => Err(not_found()),
        }
    }

    /// DescribeBackup.
    pub fn describe_backup(&self, arn: &str) -> Result<BackupDescription> {
        Ok(self.find_backup(arn)?.describe())
    }

    /// ListBackups: the request namespace's and region's backups, oldest
    /// first, and the ARN to continue after when more remain.
    pub fn list_backups(
        &self,
        listing: &BackupListing,
    ) -> Result<(Vec<BackupSummary>, Option<String>)> {
        let region = self.request_region();
        let namespace = crate::region::request_namespace();
        let table_name =
            (listing.table_name.as_deref()).map(|name| match name.strip_prefix("arn:") {
                Some(_) => name.rsplit('/').next().unwrap_or(name),
                None => name,
            });
        let start_after = match &listing.exclusive_start_arn {
            Some(arn) => backup_id_in_arn(arn)?,
            None => 0,
        };
        let mut matching = Vec::new();
        for (_, bytes) in self.scan_all_under(&keyspace::backup_records())? {
            let record = BackupRecord::decode(&bytes)?;
            let admitted = record.id > start_after
                && record.region == region
                && record.namespace == namespace
                && listing.backup_type.admits(record.backup_type)
                && table_name.is_none_or(|name| record.source.description.table_name == name)
                && listing
                    .created_from
                    .is_none_or(|from| record.created >= from)
                && listing
                    .created_before
                    .is_none_or(|before| record.created < before);
            if admitted {
                matching.push(record.summary());
            }
        }
        let more = matching.len() > listing.limit;
        matching.truncate(listing.limit);
        let last = more
            .then(|| matching.last().map(|s| s.backup_arn.clone()))
            .flatten();
        Ok((matching, last))
    }

    /// DeleteBackup: the record goes at once (the answer says DELETED), its
    /// data is purged in the background.
    pub fn delete_backup(self: &Arc<Self>, arn: &str) -> Result<BackupDescription> {
        let _catalog = self.catalog_lock.lock();
        let record = self.find_backup(arn)?;
        let in_use = |message: String| DynamoError::new(ErrorKind::BackupInUse, message);
        if record.backup_type == BackupType::System {
            let expiry = record
                .expires
                .map(ferrodyn_types::dates::iso8601_utc)
                .unwrap_or_default();
            return Err(DynamoError::validation(format!(
                "User is not allowed to delete the system backup with arn {arn}. It will automatically expire on {expiry}"
            )));
        }
        if record.status == BackupStatus::Creating {
            return Err(in_use(format!("Backup is being created: {arn}")));
        }
        if !record.restores.is_empty() {
            return Err(in_use(format!(
                "Backup is being used to restore table: {arn}"
            )));
        }
        let id = record.id;
        let check = ReadCheck {
            key: keyspace::backup_record_key(id),
            expected: Some(record.encode()),
        };
        self.retry(crate::error::RetryPolicy::Ddl, |_| {
            self.commit_catalog(
                vec![check.clone()],
                vec![
                    WriteOp::Delete(keyspace::backup_record_key(id)),
                    WriteOp::Put(keyspace::backup_purge_key(id), Vec::new()),
                ],
            )
        })?;
        self.spawn_background(format!("purge-backup-{id}"), move |engine| {
            engine.purge_backup(id)
        })?;
        let mut description = record.describe();
        description.backup_details.backup_status = BackupStatus::Deleted;
        Ok(description)
    }

    pub(crate) fn purge_backup(&self, id: u64) -> Result<()> {
        self.purge_prefix(&keyspace::backup_data(id))?;
        self.write_retrying_conflicts(vec![WriteOp::Delete(keyspace::backup_purge_key(id))])?;
        Ok(())
    }

    /// After a restart (embedded: every CREATING backup lost its view) or
    /// on the lease holder's upkeep (shared: those whose copier stopped
    /// writing): abandons unfinishable backups, then resumes backup purges.
    pub(crate) fn resume_backup_work(self: &Arc<Self>) -> Result<()> {
        let now = millis(self.now_seconds());
        for (key, bytes) in self.scan_all_under(&keyspace::backup_records())? {
            let record = BackupRecord::decode(&bytes)?;
            let stalled = now.saturating_sub(record.heartbeat_ms) > ABANDON_AFTER_MS;
            if record.status == BackupStatus::Creating && (!self.shared() || stalled) {
                let check = ReadCheck {
                    key: key.clone(),
                    expected: Some(bytes),
                };
                let abandon = vec![
                    WriteOp::Delete(key),
                    WriteOp::Put(keyspace::backup_purge_key(record.id), Vec::new()),
                ];
                // A conflict: the copier wrote a page after all; next round.
                if self.commit_catalog(vec![check], abandon).is_ok() {
                    eprintln!(
                        "ferrodyn: backup {} of table {} was still being copied when its copier stopped: discarded",
                        record.arn, record.source.description.table_name
                    );
                }
            }
        }
        // Recovery whose base was just abandoned gets a new one.
        self.resume_recovery_bases()?;
        for (key, _) in self.scan_all_under(&keyspace::backup_purge_markers())? {
            if let Some(id) = keyspace::id_of(&key) {
                self.spawn_background(format!("purge-backup-{id}"), move |engine| {
                    engine.purge_backup(id)
                })?;
            }
        }
        self.resume_restores()
    }

    /// Every key-value under `prefix`, read live.
    pub(crate) fn scan_all_under(&self, prefix: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let end = prefix_end(prefix);
        let end = end.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
        (self.storage)
            .scan(Bound::Included(prefix), end, false, usize::MAX)
            .map_err(crate::storage_error)
    }
}

/// Every key-value under `prefix` as of `view`.
fn scan_view(view: &dyn StorageView, prefix: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let end = prefix_end(prefix);
    let end = end.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
    (view.scan(Bound::Included(prefix), end, false, usize::MAX)).map_err(crate::storage_error)
}

/// A table's statistics (base plus deltas) under `base` as of `view`.
fn fold_through(view: &dyn StorageView, base: &[u8]) -> Result<TableStats> {
    let mut total = TableStats::default();
    for (key, value) in scan_view(view, base)? {
        let change = if key.len() == base.len() {
            crate::stats::decode(&value)?
        } else {
            crate::stats::decode_delta(&value)?
        };
        total.item_count += change.item_count;
        total.size_bytes += change.size_bytes;
    }
    Ok(total)
}

/// The backup id in `arn:aws:dynamodb:R:A:table/T/backup/<ms>-<id hex>`,
/// or ValidationException "Invalid Backup ARN" for anything else.
pub(crate) fn backup_id_in_arn(arn: &str) -> Result<u64> {
    let invalid = || DynamoError::validation("Invalid Backup ARN");
    let parts: Vec<&str> = arn.splitn(6, ':').collect();
    let [prefix, _partition, service, _region, _account, resource] = parts[..] else {
        return Err(invalid());
    };
    if prefix != "arn" || service != "dynamodb" {
        return Err(invalid());
    }
    let (_table, backup) = (resource.strip_prefix("table/"))
        .and_then(|rest| rest.split_once("/backup/"))
        .ok_or_else(invalid)?;
    let (millis, id) = backup.split_once('-').ok_or_else(invalid)?;
    let well_formed =
        millis.len() == 14 && millis.bytes().all(|b| b.is_ascii_digit()) && id.len() == 8;
    (well_formed
        .then(|| u64::from_str_radix(id, 16).ok())
        .flatten())
    .ok_or_else(invalid)
}

#[cfg(test)]
mod tests {
    use super::backup_id_in_arn;

    #[test]
    fn backup_arns_hold_their_id() {
        let arn = "arn:aws:dynamodb:us-east-1:000000000000:table/t/backup/01733300000000-0000002a";
        assert_eq!(backup_id_in_arn(arn).unwrap(), 42);
        for bad in [
            "not-an-arn",
            "arn:aws:dynamodb:us-east-1:000000000000:table/t",
            "arn:aws:dynamodb:us-east-1:000000000000:table/t/backup/0173-0000002a",
            "arn:aws:s3:us-east-1:000000000000:table/t/backup/01733300000000-0000002a",
            "arn:aws:dynamodb:us-east-1:000000000000:table/t/backup/01733300000000-zz00002a",
        ] {
            assert!(backup_id_in_arn(bad).is_err(), "{bad}");
        }
    }
}
