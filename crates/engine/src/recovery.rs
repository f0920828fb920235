//! Point-in-time recovery: UpdateContinuousBackups, DescribeContinuousBackups
//! and RestoreTableToPointInTime, built on the two things backups and the
//! change log already provide (docs/design/change-log.md, point 4):
//!
//! - **A base.** Enabling recovery takes a backup of the table at that
//!   instant (type `PointInTimeBase`, never listed), while the table's
//!   writes are held off for the moment it takes to open a storage view, so
//!   every change after the base is in the log.
//! - **The log.** While recovery is on, every write of the table adds its
//!   change-log record (streams.rs) with both images and its commit time,
//!   whether or not a stream is enabled.
//! - **A restore** copies the base into a new table and replays, through the
//!   ordinary write path (indexes and statistics follow), every logged
//!   change committed up to the restore time. Replaying is idempotent (each
//!   record carries the item's whole new image, and one item's records are
//!   in commit order), so it starts a little before the base on shared
//!   storage, where node clocks differ, and a crash resumes it from its
//!   cursor.
//!
//! LatestRestorableDateTime is now: every acknowledged write is in the log
//! when its request answers (DynamoDB's lags about five minutes). The
//! earliest is the later of the base and now minus the recovery period.
//! Deleting a table with recovery on keeps a SYSTEM backup of it for 35
//! days, as DynamoDB does; its base and log go with the table.
//!
//! History is kept to the recovery period: a new base is taken once the
//! newest is half a period old, and the oldest base and the log before the
//! next one go once the next alone covers the period
//! ([`Engine::maintain_recovery`]), so at most three bases live at once.

use crate::backups::{BackupType, OpenBackup};
use crate::items::Mutation;
use crate::keyspace::{self, catalog_key};
use crate::locks::{Holder, LockKey};
use crate::restore::{RestoreJob, RestoreOverrides, RestoreSource};
use crate::schema::TableDescription;
use crate::shared::{PitrBase, PitrSettings, Replay};
use crate::streams::{ChangeSource, RECOVERY_MEMBER};
use crate::table::Table;
use crate::Engine;
use ferrodyn_storage::WriteOp;
use ferrodyn_types::{DynamoError, ErrorKind, Item, Result};
use serde::Serialize;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

/// How long the SYSTEM backup of a deleted table is kept (DynamoDB: 35 days).
const DELETED_TABLE_BACKUP_DAYS: f64 = 35.0;

/// DynamoDB's default recovery period, in days.
pub const DEFAULT_RECOVERY_DAYS: u32 = 35;

/// Log records replayed per commit.
const REPLAY_PAGE: usize = 500;

/// Shared storage: how far before the base a replay starts (in hybrid-clock
/// units: microseconds shifted by 8 bits), covering other nodes' clocks.
const SHARED_REPLAY_MARGIN: u64 = 10_000_000 << 8;

/// DescribeContinuousBackups' `ContinuousBackupsDescription`.
#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "PascalCase")]
pub struct ContinuousBackups {
    pub continuous_backups_status: &'static str,
    pub point_in_time_recovery_description: RecoveryDescription,
}

#[derive(Clone, Debug, Serialize, PartialEq)]
#[serde(rename_all = "PascalCase")]
pub struct RecoveryDescription {
    pub point_in_time_recovery_status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovery_period_in_days: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub earliest_restorable_date_time: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latest_restorable_date_time: Option<f64>,
}

/// When a point-in-time restore restores to.
#[derive(Clone, Copy, Debug)]
pub enum RestoreTime {
    At(f64),
    Latest,
}

impl Engine {
    /// The table continuous-backup operations name; TableNotFoundException
    /// as DynamoDB words it for them.
    fn recovery_table(&self, name: &str) -> Result<Arc<Table>> {
        (self.lookup(name))
            .filter(|table| !table.is_creating())
            .ok_or_else(|| {
                DynamoError::new(ErrorKind::TableNotFound, format!("Table not found: {name}"))
            })
    }

    /// DescribeContinuousBackups.
    pub fn describe_continuous_backups(&self, table_name: &str) -> Result<ContinuousBackups> {
        let table = self.recovery_table(table_name)?;
        Ok(self.continuous_backups_of(&table))
    }

    fn continuous_backups_of(&self, table: &Table) -> ContinuousBackups {
        let description = match table.recovery() {
            Some(settings) => {
                let (earliest, latest) = self.restorable_window(&settings);
                RecoveryDescription {
                    point_in_time_recovery_status: "ENABLED",
                    recovery_period_in_days: Some(settings.recovery_days),
                    earliest_restorable_date_time: Some(earliest),
                    latest_restorable_date_time: Some(latest),
                }
            }
            None => RecoveryDescription {
                point_in_time_recovery_status: "DISABLED",
                recovery_period_in_days: None,
                earliest_restorable_date_time: None,
                latest_restorable_date_time: None,
            },
        };
        ContinuousBackups {
            continuous_backups_status: "ENABLED",
            point_in_time_recovery_description: description,
        }
    }

    /// The earliest and latest restorable instants (seconds, to the ms).
    fn restorable_window(&self, settings: &PitrSettings) -> (f64, f64) {
        let now = (self.now_seconds() * 1000.0).floor() / 1000.0;
        (earliest_restorable(settings, now), now)
    }

    /// UpdateContinuousBackups: enables recovery (taking its base), changes
    /// its period, or disables it (its base and history go).
    pub fn update_continuous_backups(
        self: &Arc<Self>,
        table_name: &str,
        enabled: bool,
        recovery_days: Option<u32>,
    ) -> Result<ContinuousBackups> {
        let _catalog = self.catalog_lock.lock();
        let table = self.recovery_table(table_name)?;
        match (table.recovery(), enabled) {
            (None, true) => {
                let days = recovery_days.unwrap_or(DEFAULT_RECOVERY_DAYS);
                self.enable_recovery(&table, days)?;
            }
            (Some(mut settings), true) => {
                settings.recovery_days = recovery_days.unwrap_or(settings.recovery_days);
                table.set_recovery(Some(settings));
                self.save_catalog_record(&table)?;
            }
            (Some(settings), false) => self.disable_recovery(&table, &settings)?,
            (None, false) => {}
        }
        Ok(self.continuous_backups_of(&table))
    }

    /// Takes the first base and turns logging on in one catalog write.
    fn enable_recovery(self: &Arc<Self>, table: &Arc<Table>, days: u32) -> Result<()> {
        let taken = self.commit_base(table, |bases| {
            Some(PitrSettings {
                recovery_days: days,
                bases,
            })
        })?;
        self.start_copy(taken)
    }

    /// Takes a base of `table` now and commits the recovery settings
    /// `settings(bases)` builds from the table's bases with the new one last,
    /// in one catalog write, with the table's writes held off from the
    /// view's opening to the commit (so every later write is logged and
    /// every earlier one is in the view). The base still has to be copied.
    fn commit_base(
        &self,
        table: &Arc<Table>,
        settings: impl FnOnce(Vec<PitrBase>) -> Option<PitrSettings>,
    ) -> Result<OpenBackup> {
        let _writes = table.exclusive();
        let name = format!("{}$PointInTimeRecoveryBase", table.name);
        let not_found = || {
            DynamoError::new(
                ErrorKind::TableNotFound,
                format!("Table not found: {}", table.name),
            )
        };
        let taken =
            (self.open_backup(table, BackupType::PointInTimeBase, &name)?).ok_or_else(not_found)?;
        let log_from = if self.shared() {
            self.allocate_sequence()
                .saturating_sub(SHARED_REPLAY_MARGIN)
        } else {
            // No write of this table is in flight: every record below
            // this number is committed, so in the view.
            self.next_sequence()
        };
        let previous = table.recovery();
        let mut bases = previous
            .as_ref()
            .map(|s| s.bases.clone())
            .unwrap_or_default();
        bases.push(PitrBase {
            time: taken.record.created,
            backup: taken.record.id,
            log_from,
        });
        table.set_recovery(settings(bases));
        let record = crate::catalog::CatalogRecord::of(table);
        let bytes = serde_json::to_vec(&record).map_err(crate::storage_error)?;
        let mut checks = taken.checks.clone();
        checks.push(self.catalog_check(table));
        let mut ops = taken.ops();
        ops.push(WriteOp::Put(
            catalog_key(&table.catalog_name),
            bytes.clone(),
        ));
        let _reload = self.reload_guard();
        if let Err(error) = self.commit_catalog(checks, ops) {
            table.set_recovery(previous);
            return Err(error.into());
        }
        *table.catalog_bytes.write() = bytes;
        Ok(taken)
    }

    /// Keeps each table's history to its recovery period (the TTL
    /// sweeper's thread and clock moves call this): a new base once the
    /// newest is half a period old, and the oldest base with the log before
    /// the next one dropped once the next one alone covers the period.
    /// Streams lose nothing: what is dropped is older than a day.
    pub fn maintain_recovery(&self, now: f64) -> Result<()> {
        let tables: Vec<Arc<Table>> = self.tables.read().values().cloned().collect();
        for table in tables {
            let Some(settings) = table.recovery() else {
                continue;
            };
            let period = f64::from(settings.recovery_days) * 86_400.0;
            let newest = settings.bases.last().map_or(f64::MIN, |base| base.time);
            if now - newest >= period / 2.0 {
                let taken = {
                    let _catalog = self.catalog_lock.lock();
                    let days = settings.recovery_days;
                    self.commit_base(&table, |bases| {
                        Some(PitrSettings {
                            recovery_days: days,
                            bases,
                        })
                    })?
                };
                self.copy_now(taken)?;
            }
            self.drop_old_bases(&table, now - period)?;
        }
        Ok(())
    }

    /// Drops the oldest base (and the log below the next base) while the
    /// next base is at or before `horizon`.
    fn drop_old_bases(&self, table: &Arc<Table>, horizon: f64) -> Result<()> {
        loop {
            let (dropped, keep_from) = {
                let _catalog = self.catalog_lock.lock();
                let Some(mut settings) = table.recovery() else {
                    return Ok(());
                };
                if settings.bases.len() < 2 || settings.bases[1].time > horizon {
                    return Ok(());
                }
                let dropped = settings.bases.remove(0);
                let keep_from = settings.bases[0].log_from;
                table.set_recovery(Some(settings));
                self.save_catalog_record(table)?;
                (self.discard_backup(dropped.backup)?, keep_from)
            };
            if let Some(id) = dropped {
                self.purge_backup(id)?;
            }
            // Not past what a Kinesis destination has yet to deliver.
            let keep_from = keep_from.min(self.consumers_floor(table)?);
            self.trim_log(table.id, keep_from)?;
        }
    }

    /// Deletes the change-log records of `table_id` below `seq`.
    pub(crate) fn trim_log(&self, table_id: u64, seq: u64) -> Result<()> {
        let start = keyspace::stream_record_key(table_id, 0);
        let end = keyspace::stream_record_key(table_id, seq);
        loop {
            let page = (self.storage)
                .scan(Bound::Included(&start), Bound::Excluded(&end), false, 1000)
                .map_err(crate::storage_error)?;
            if page.is_empty() {
                return Ok(());
            }
            let deletes = page
                .into_iter()
                .map(|(key, _)| WriteOp::Delete(key))
                .collect();
            self.write_retrying_conflicts(deletes)?;
        }
    }

    /// Turns logging off; the base goes now, or after the restores using it.
    fn disable_recovery(
        self: &Arc<Self>,
        table: &Arc<Table>,
        settings: &PitrSettings,
    ) -> Result<()> {
        table.set_recovery(None);
        // A failed save puts the table back as stored (save_catalog_record).
        self.save_catalog_record(table)?;
        self.discard_base(settings)
    }

    /// Deletes every base of recovery `settings`, their data purged in the
    /// background.
    fn discard_base(self: &Arc<Self>, settings: &PitrSettings) -> Result<()> {
        for base in &settings.bases {
            if let Some(id) = self.discard_backup(base.backup)? {
                self.spawn_background(format!("purge-backup-{id}"), move |engine| {
                    engine.purge_backup(id)
                })?;
            }
        }
        Ok(())
    }

    /// Deletes a base's record, leaving its purge marker (the id returned:
    /// the caller purges its data), or marks it to go once the restores
    /// using it end.
    fn discard_backup(&self, id: u64) -> Result<Option<u64>> {
        let Some(mut base) = self.backup_record(id)? else {
            return Ok(None);
        };
        if !base.restores.is_empty() {
            base.discard_when_unused = true;
            self.write_backup_record(&base)?;
            return Ok(None);
        }
        self.write_retrying_conflicts(vec![
            WriteOp::Delete(keyspace::backup_record_key(id)),
            WriteOp::Put(keyspace::backup_purge_key(id), Vec::new()),
        ])?;
        Ok(Some(id))
    }

    /// Takes a new base for every table whose recovery lost its own (a base
    /// still being copied when the process stopped is abandoned, like any
    /// backup): the earliest restorable time moves to now, as when recovery
    /// is first enabled.
    pub(crate) fn resume_recovery_bases(self: &Arc<Self>) -> Result<()> {
        let tables: Vec<Arc<Table>> = self.tables.read().values().cloned().collect();
        for table in tables {
            let Some(mut settings) = table.recovery() else {
                continue;
            };
            let count = settings.bases.len();
            let mut kept = Vec::with_capacity(count);
            for base in settings.bases {
                if self.backup_record(base.backup)?.is_some() {
                    kept.push(base);
                }
            }
            if kept.len() == count {
                continue;
            }
            let _catalog = self.catalog_lock.lock();
            eprintln!(
                "ferrodyn: a point-in-time recovery base of {} was lost (cut short by a stop): the window starts later",
                table.catalog_name
            );
            settings.bases = kept;
            if settings.bases.is_empty() {
                self.enable_recovery(&table, settings.recovery_days)?;
            } else {
                table.set_recovery(Some(settings));
                self.save_catalog_record(&table)?;
            }
        }
        Ok(())
    }

    /// DeleteTable of a table with recovery on: the SYSTEM backup it leaves
    /// (named `<table>$DeletedTableBackup`, expiring in 35 days), opened now
    /// for the caller to commit with the table's removal. Its base goes
    /// (now, or after the restores using it). None without recovery.
    pub(crate) fn deletion_backup(self: &Arc<Self>, table: &Table) -> Result<Option<OpenBackup>> {
        let Some(settings) = table.recovery() else {
            return Ok(None);
        };
        let name = format!("{}$DeletedTableBackup", table.name);
        let Some(mut kept) = self.open_backup(table, BackupType::System, &name)? else {
            return Ok(None);
        };
        kept.record.expires = Some(kept.record.created + DELETED_TABLE_BACKUP_DAYS * 86_400.0);
        self.discard_base(&settings)?;
        Ok(Some(kept))
    }

    /// Deletes SYSTEM backups past their expiry (their data purged before
    /// this returns: it runs on the TTL sweeper's thread or a clock move);
    /// returns how many.
    pub fn expire_backups(&self, now: f64) -> Result<usize> {
        let mut expired = 0;
        for (key, bytes) in self.scan_all_under(&keyspace::backup_records())? {
            let Ok(record) = serde_json::from_slice::<crate::backups::BackupRecord>(&bytes) else {
                continue;
            };
            if record.expires.is_some_and(|at| at <= now) && record.restores.is_empty() {
                let id = record.id;
                self.write_retrying_conflicts(vec![
                    WriteOp::Delete(key),
                    WriteOp::Put(keyspace::backup_purge_key(id), Vec::new()),
                ])?;
                self.purge_backup(id)?;
                expired += 1;
            }
        }
        Ok(expired)
    }

    /// RestoreTableToPointInTime.
    pub fn restore_table_to_point_in_time(
        self: &Arc<Self>,
        source_table: &str,
        target: &str,
        time: RestoreTime,
        overrides: RestoreOverrides,
    ) -> Result<TableDescription> {
        self.start_restore(target, &overrides, |engine| {
            engine.point_in_time_source(source_table, time)
        })
    }

    /// What a point-in-time restore of `source_table` starts from.
    pub(crate) fn point_in_time_source(
        &self,
        source_table: &str,
        time: RestoreTime,
    ) -> Result<RestoreSource> {
        let table = self.recovery_table(source_table)?;
        let unavailable = || {
            DynamoError::new(
                ErrorKind::PointInTimeRecoveryUnavailable,
                format!(
                    "Point in time recovery is not enabled for table '{}'",
                    table.name
                ),
            )
        };
        let settings = table.recovery().ok_or_else(unavailable)?;
        let (earliest, latest) = self.restorable_window(&settings);
        let at = match time {
            RestoreTime::At(at) => at,
            RestoreTime::Latest => latest,
        };
        if at < earliest || at > latest {
            return Err(DynamoError::new(
                ErrorKind::InvalidRestoreTime,
                "RestoreDateTime must be between EarliestRestorableDateTime and LatestRestorableDateTime",
            ));
        }
        // The newest base at or before the instant.
        let chosen = (settings.bases.iter().rev())
            .find(|base| base.time <= at)
            .or(settings.bases.first())
            .ok_or_else(unavailable)?;
        let base = self.backup_record(chosen.backup)?.ok_or_else(unavailable)?;
        let schema = crate::catalog::CatalogRecord::of(&table);
        Ok(RestoreSource {
            schema,
            // Correct once the replay is done: the statistics follow it.
            stats: base.stats,
            backup_arn: None,
            restore_time: (at * 1000.0).round() / 1000.0,
            replay: Some(Replay {
                source_table: table.id,
                from_seq: chosen.log_from,
                until_ms: (at * 1000.0).round() as u64,
                next_seq: chosen.log_from,
            }),
            backup: base,
        })
    }

    /// The replay phase of a point-in-time restore: every logged change of
    /// the source committed by the restore time, applied in log order a page
    /// at a time, the job's cursor saved after each page.
    pub(crate) fn replay_changes(
        &self,
        table_id: u64,
        job: &mut RestoreJob,
        job_key: &[u8],
    ) -> Result<()> {
        let Some(table) = self.tables.read().get(&job.catalog_name).cloned() else {
            return Ok(()); // dropped meanwhile: finish_restore cleans up
        };
        if table.id != table_id {
            return Ok(());
        }
        while let Some(mut replay) = job.replay.clone() {
            let start = keyspace::stream_record_key(replay.source_table, replay.next_seq);
            let end = keyspace::stream_record_key(replay.source_table, u64::MAX);
            let page = (self.storage)
                .scan(
                    Bound::Included(&start),
                    Bound::Included(&end),
                    false,
                    REPLAY_PAGE,
                )
                .map_err(crate::storage_error)?;
            let Some((last, _)) = page.last() else { break };
            let last_seq = keyspace::stream_seq_of(last).unwrap_or(u64::MAX);
            let full = page.len() == REPLAY_PAGE;
            let mut changes: BTreeMap<Vec<u8>, (Item, Option<Item>)> = BTreeMap::new();
            for (_, value) in page {
                if let Some((key, image)) = logged_change(&value, replay.until_ms)? {
                    changes.insert(table.schema.encode(table.id, &key), (key, image));
                }
            }
            self.apply_changes(&table, changes)?;
            replay.next_seq = last_seq.saturating_add(1);
            job.replay = Some(replay);
            self.write_retrying_conflicts(vec![WriteOp::Put(job_key.to_vec(), job.encode())])?;
            if !full {
                break;
            }
        }
        Ok(())
    }

    /// Puts or deletes each item (its last change in a page only: the
    /// planner reads what the table holds before the page, so the net
    /// change is one write), through the write path, in one commit.
    pub(crate) fn apply_changes(
        &self,
        table: &Arc<Table>,
        changes: BTreeMap<Vec<u8>, (Item, Option<Item>)>,
    ) -> Result<()> {
        if changes.is_empty() {
            return Ok(());
        }
        let _writers = table.writers();
        let mut keys: Vec<LockKey> = Vec::with_capacity(changes.len());
        for (key, _) in changes.values() {
            self.push_write_keys(table, key, &mut keys);
        }
        let _held = self
            .locks
            .acquire(Holder::Batch, &keys)
            .expect("batch requests are never rejected");
        let mut planned = Vec::with_capacity(changes.len());
        for (storage_key, (key, image)) in changes {
            let mutation = match image {
                Some(item) => Mutation::Put(item),
                None => Mutation::Delete,
            };
            planned.push(self.plan_write(table, &key, storage_key, mutation, None, false)?);
        }
        self.commit_from(&mut planned, ChangeSource::Application)?;
        Ok(())
    }
}

/// The earliest instant `settings` can restore to at `now`: the oldest
/// base, or now minus the recovery period if later.
pub(crate) fn earliest_restorable(settings: &PitrSettings, now: f64) -> f64 {
    let period = f64::from(settings.recovery_days) * 86_400.0;
    let oldest = settings.bases.first().map_or(now, |base| base.time);
    oldest.max(now - period)
}

/// A log record's change if it was logged for recovery and committed by
/// `until_ms`: the item's key, and its new image (None: deleted).
fn logged_change(value: &[u8], until_ms: u64) -> Result<Option<(Item, Option<Item>)>> {
    let record: serde_json::Value = serde_json::from_slice(value).map_err(crate::storage_error)?;
    let Some(committed) = record[RECOVERY_MEMBER]["commitMillis"].as_u64() else {
        return Ok(None); // written for a stream before recovery was on
    };
    if committed > until_ms {
        return Ok(None);
    }
    let body = &record["dynamodb"];
    let key: Item = serde_json::from_value(body["Keys"].clone()).map_err(crate::storage_error)?;
    let image = match record["eventName"].as_str() {
        Some("REMOVE") => None,
        _ => Some(serde_json::from_value(body["NewImage"].clone()).map_err(crate::storage_error)?),
    };
    Ok(Some((key, image)))
}
