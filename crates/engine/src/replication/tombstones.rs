//! Reclaiming the tombstones of eventually consistent (MREC) global tables.
//!
//! A deleted item keeps its version as a tombstone (versions.rs) so that a
//! change made before the delete in another region, arriving late, cannot
//! bring the item back. A tombstone of version V in region R is dropped once
//! both hold:
//!
//! 1. it is older than the retention period (`--tombstone-retention`, a day
//!    by default), and
//! 2. every other region of the group has reported to R that everything it
//!    made before V has been applied at R. Each sender reports, at most every
//!    [`REPORT_INTERVAL`] and only when its cursor for R has drained the
//!    readable log with no fill pending, the time its round started
//!    ([`Message::Delivered`]; on shared storage minus the commit window, the
//!    age below which writes may still be committing). Every change it made
//!    later has a later log position, hence was either sent since or has a
//!    version from after that time. R keeps the latest report per region
//!    durably (`'k' | table id | delivered/<region>`), and takes a margin of
//!    [`MARGIN`] (or the retention, if shorter) for clock skew and the time
//!    between a write's version and its log position.
//!
//! So a region that is away (a peer down, a link cut) stops its peers'
//! reclaiming until it is back and caught up: it may hold changes made
//! before their deletes. MRSC tables keep their tombstones: there a region
//! that has not yet received a delete may propose a change based on the
//! version before it, and the tombstone is what makes the others refuse
//! it; reclaiming needs reports of what each region has applied, not only
//! of what it has delivered.
//!
//! The sweep runs on the replication thread every [`sweep_interval`], on
//! the node that runs background work, reading at most [`SWEEP_PAGE`]
//! version records per table per round from where the last one stopped,
//! the rounds of an unfinished pass [`PASS_PAUSE`] apart.
//! Each tombstone goes in a write checked against its record and the item's
//! absence, under the item's lock: a write of the item since wins.

use super::{address_in, ItemVersion, Message};
use crate::keyspace;
use crate::locks::{Holder, LockKey};
use crate::table::Table;
use crate::Engine;
use ferrodyn_storage::{ReadCheck, WriteOp};
use ferrodyn_types::Result;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ops::Bound;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The default retention period of a tombstone.
pub const DEFAULT_RETENTION: Duration = Duration::from_secs(24 * 60 * 60);
/// Version records read per table per sweep round: a pass over a table of
/// 10 million items takes some 8 minutes of rounds a second apart.
const SWEEP_PAGE: usize = 20_000;
/// The pause between two rounds of one unfinished pass.
const PASS_PAUSE: Duration = Duration::from_secs(1);
/// Tombstones deleted per checked write.
const DROP_BATCH: usize = 100;
/// The most a sender waits between two delivery reports to one target.
const REPORT_INTERVAL: Duration = Duration::from_secs(10);
/// Clock skew and version-to-log-position time allowed for.
const MARGIN: Duration = Duration::from_secs(60);
/// The consumer-name prefix of delivery reports, beside the cursors.
const REPORTS: &str = "delivered/";

/// What the sweep and the reports keep between rounds (lost on restart:
/// the sweep starts again from the first key, reports are sent again).
pub(crate) struct TombstoneState {
    pub(crate) retention: Duration,
    last_sweep: Mutex<Option<Instant>>,
    /// Per table id: the version key the next sweep starts after.
    positions: Mutex<HashMap<u64, Vec<u8>>>,
    /// Per table id: tombstones reclaimed since the server started.
    reclaimed: Mutex<HashMap<u64, u64>>,
    /// Per (table id, target region): when a report was last sent.
    reported: Mutex<HashMap<(u64, String), Instant>>,
}

impl Default for TombstoneState {
    fn default() -> Self {
        TombstoneState {
            retention: DEFAULT_RETENTION,
            last_sweep: Mutex::new(None),
            positions: Mutex::default(),
            reclaimed: Mutex::default(),
            reported: Mutex::default(),
        }
    }
}

/// How often the sweep runs: a quarter of the retention, at most a minute.
fn sweep_interval(retention: Duration) -> Duration {
    (retention / 4).min(Duration::from_secs(60))
}

impl Engine {
    /// The time (µs of this engine's clock) a sender round may report as
    /// delivered once it drains a target's log: now, less the commit
    /// window on shared storage (writes of other nodes younger than that
    /// may still get log positions below the readable sequence).
    pub(crate) fn delivery_time(&self) -> u64 {
        let now = self.clock.now_micros();
        match self.shared() {
            true => now.saturating_sub(crate::cluster::COMMIT_WINDOW_MICROS),
            false => now,
        }
    }

    /// Tells `region` that everything this region made before `through` is
    /// applied there, if no report went there within [`REPORT_INTERVAL`]
    /// (the sender calls it after draining that region's log).
    pub(crate) fn report_delivery(self: &Arc<Self>, table: &Table, region: &str, through: u64) {
        let key = (table.id, region.to_string());
        let interval = REPORT_INTERVAL.min(sweep_interval(self.replication.tombstones.retention));
        let due = (self.replication.tombstones.reported.lock().get(&key))
            .is_none_or(|sent| sent.elapsed() >= interval);
        if !due || table.is_strong() {
            return;
        }
        (self.replication.tombstones.reported.lock()).insert(key, Instant::now());
        let from = self.region_of(&table.catalog_name).to_string();
        let to = address_in(self, table, region);
        // A failed report is tried again after the interval, and is no
        // failure of the link: the Apply sends say how the link is, and a
        // peer that does not know the message (an older Ferrodyn) only
        // keeps its tombstones.
        let _ = self.send(&Message::Delivered { to, from, through });
    }

    /// [`Message::Delivered`]: keeps the newest report of `from`.
    pub(crate) fn take_delivery_report(
        &self,
        table_name: &str,
        from: &str,
        through: u64,
    ) -> Result<serde_json::Value> {
        let table = self.replica_table(table_name)?;
        let key = keyspace::cursor_key(table.id, &format!("{REPORTS}{from}"));
        let stored = self.storage.get(&key).map_err(crate::storage_error)?;
        if stored_micros(stored.as_deref()).is_none_or(|known| known < through) {
            let put = WriteOp::Put(key, through.to_be_bytes().to_vec());
            self.write_retrying_conflicts(vec![put])?;
        }
        Ok(serde_json::json!({}))
    }

    /// Every other region's latest delivery report, by region (None for
    /// a region that has sent none).
    pub(crate) fn delivery_reports(&self, table: &Table) -> Result<Vec<(String, Option<u64>)>> {
        let own = self.region_of(&table.catalog_name);
        let Some(group) = table.global() else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for replica in group.replicas.iter().filter(|r| r.region != own) {
            let key = keyspace::cursor_key(table.id, &format!("{REPORTS}{}", replica.region));
            let stored = self.storage.get(&key).map_err(crate::storage_error)?;
            out.push((replica.region.clone(), stored_micros(stored.as_deref())));
        }
        Ok(out)
    }

    /// Tombstones of `table` reclaimed since the server started.
    pub(crate) fn tombstones_reclaimed(&self, table: &Table) -> u64 {
        let reclaimed = self.replication.tombstones.reclaimed.lock();
        reclaimed.get(&table.id).copied().unwrap_or(0)
    }

    /// Runs the sweep over every MREC replica if [`sweep_interval`] has
    /// passed since the last one (the replication thread calls it each round).
    pub(crate) fn reclaim_tombstones_if_due(&self) -> Result<()> {
        let state = &self.replication.tombstones;
        {
            // A pass left unfinished (a large table) goes on a second later.
            let unfinished = !state.positions.lock().is_empty();
            let wait = match unfinished {
                true => PASS_PAUSE.min(sweep_interval(state.retention)),
                false => sweep_interval(state.retention),
            };
            let mut last = state.last_sweep.lock();
            if last.is_some_and(|at| at.elapsed() < wait) {
                return Ok(());
            }
            *last = Some(Instant::now());
        }
        if !self.runs_background_work() {
            return Ok(());
        }
        let tables: Vec<Arc<Table>> = (self.tables.read().values())
            .filter(|t| t.is_replicated() && !t.is_strong())
            .cloned()
            .collect();
        for table in tables {
            self.reclaim_tombstones(&table)?;
        }
        Ok(())
    }

    /// The version time below which a tombstone of `table` may go: None
    /// while some other region has not reported a delivery.
    fn reclaim_before(&self, table: &Table) -> Result<Option<u64>> {
        let state = &self.replication.tombstones;
        let aged = (self.clock.now_micros()).saturating_sub(micros(state.retention));
        let margin = micros(MARGIN.min(state.retention));
        let mut before = aged;
        for (_, reported) in self.delivery_reports(table)? {
            let Some(reported) = reported else {
                return Ok(None);
            };
            before = before.min(reported.saturating_sub(margin));
        }
        Ok(Some(before))
    }

    /// One sweep round over `table`'s version records.
    fn reclaim_tombstones(&self, table: &Arc<Table>) -> Result<()> {
        let Some(before) = self.reclaim_before(table)? else {
            return Ok(());
        };
        let prefix = keyspace::table_versions(table.id);
        let end = keyspace::prefix_end(&prefix);
        let after = self
            .replication
            .tombstones
            .positions
            .lock()
            .remove(&table.id);
        let start = match &after {
            Some(key) => Bound::Excluded(key.as_slice()),
            None => Bound::Included(prefix.as_slice()),
        };
        let end = end.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
        let page =
            (self.storage.scan(start, end, false, SWEEP_PAGE)).map_err(crate::storage_error)?;
        if page.len() == SWEEP_PAGE {
            let last = page.last().map(|(key, _)| key.clone());
            (self.replication.tombstones.positions.lock()).extend(last.map(|k| (table.id, k)));
        }
        let expired: Vec<(Vec<u8>, Vec<u8>)> = (page.into_iter())
            .filter(|(_, value)| is_expired_tombstone(value, before))
            .collect();
        if expired.is_empty() {
            return Ok(());
        }
        let reclaimed = self.drop_tombstones(table, expired)?;
        *(self.replication.tombstones.reclaimed.lock())
            .entry(table.id)
            .or_default() += reclaimed;
        Ok(())
    }

    /// Deletes the given version records, each only if it is still the
    /// same tombstone and the item is still absent; how many went. One
    /// checked write per [`DROP_BATCH`] records, under those items' locks,
    /// record by record when a batch meets a write made since.
    fn drop_tombstones(&self, table: &Arc<Table>, expired: Vec<(Vec<u8>, Vec<u8>)>) -> Result<u64> {
        let mut dropped = 0;
        for batch in expired.chunks(DROP_BATCH) {
            let keys: Vec<LockKey> = (batch.iter())
                .map(|(key, _)| LockKey {
                    key: keyspace::item_key_of_version(key),
                    item: true,
                })
                .collect();
            let _held = (self.locks)
                .acquire(Holder::Batch, &keys)
                .expect("batch requests are never rejected");
            let _writers = table.writers();
            if self.drop_checked(batch)? {
                dropped += batch.len() as u64;
                continue;
            }
            for one in batch {
                dropped += u64::from(self.drop_checked(std::slice::from_ref(one))?);
            }
        }
        Ok(dropped)
    }

    /// Deletes `records` in one write checked against each record and its
    /// item's absence; false when a check failed (nothing deleted).
    fn drop_checked(&self, records: &[(Vec<u8>, Vec<u8>)]) -> Result<bool> {
        let mut checks = Vec::with_capacity(records.len() * 2);
        let mut ops = Vec::with_capacity(records.len());
        for (version_key, value) in records {
            checks.push(ReadCheck {
                key: version_key.clone(),
                expected: Some(value.clone()),
            });
            checks.push(ReadCheck {
                key: keyspace::item_key_of_version(version_key),
                expected: None,
            });
            ops.push(WriteOp::Delete(version_key.clone()));
        }
        match self.storage.write_checked(checks, ops) {
            Ok(()) => Ok(true),
            Err(ferrodyn_storage::StorageError::Conflict { .. }) => Ok(false),
            Err(error) => Err(crate::storage_error(error)),
        }
    }
}

/// Whether a stored version is a tombstone older than `before` (µs).
fn is_expired_tombstone(value: &[u8], before: u64) -> bool {
    ItemVersion::decode(value).is_some_and(|(version, deleted)| deleted && version.micros < before)
}

fn stored_micros(stored: Option<&[u8]>) -> Option<u64> {
    Some(u64::from_be_bytes(stored?.try_into().ok()?))
}

fn micros(duration: Duration) -> u64 {
    u64::try_from(duration.as_micros()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_tombstones_older_than_the_bound_are_expired() {
        let version = |micros| ItemVersion {
            micros,
            origin: "us-east-1".into(),
        };
        assert!(is_expired_tombstone(&version(5).encode(true), 6));
        assert!(!is_expired_tombstone(&version(6).encode(true), 6));
        assert!(!is_expired_tombstone(&version(5).encode(false), 6));
        assert!(!is_expired_tombstone(b"garbage", 6));
    }

    #[test]
    fn the_sweep_runs_at_most_every_minute_and_four_times_a_retention() {
        assert_eq!(sweep_interval(DEFAULT_RETENTION), Duration::from_secs(60));
        assert_eq!(
            sweep_interval(Duration::from_secs(2)),
            Duration::from_millis(500)
        );
    }
}
