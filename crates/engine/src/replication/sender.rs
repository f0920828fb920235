//! Sending a replica's changes to the other regions of its group.
//!
//! Each replica keeps a durable cursor per other region (`'k' | table id |
//! replica/<region>`): the first change-log sequence number not yet applied
//! there. One background thread reads each table's log from each cursor up
//! to the readable sequence, keeps the changes this region made (a change
//! applied from elsewhere was sent by its own region), sends them as one
//! [`Message::Apply`], and moves the cursor once the target answered: at
//! least once, and harmless twice, since the target keeps the newer version.
//! A target that cannot be reached is retried with a back-off; the cursor
//! waits, and the log is kept below it (streams.rs `consumers_floor`), so a
//! replica that comes back gets everything, however long it was away.
//!
//! A new replica is filled by the region that created it: its cursor
//! starts with a fill position, and each round sends a page of the table's
//! items with their versions, while the log from the cursor on carries
//! what changes meanwhile; the replica becomes ACTIVE once the fill is done
//! and the log is sent. On shared storage only the lease holder sends.

use super::{address_in, Change, ItemVersion, Message};
use crate::keyspace;
use crate::locks::{Holder, LockKey};
use crate::shared::GlobalTable;
use crate::stored::StoredItem;
use crate::table::Table;
use crate::Engine;
use ferrodyn_storage::WriteOp;
use ferrodyn_types::{Item, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Log records read per Apply message.
const LOG_PAGE: usize = 500;
/// Items sent per fill message.
const FILL_PAGE: usize = 256;
/// Messages one target may take per round before others get a turn.
const MESSAGES_PER_ROUND: usize = 20;
/// Pause between rounds: short while there is work, longer when idle.
const BUSY_TICK: Duration = Duration::from_millis(5);
const IDLE_TICK: Duration = Duration::from_millis(20);
/// First and longest pause after a failed delivery.
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(2);
/// Latency samples kept per target.
const SAMPLES: usize = 16_384;
/// The consumer-name prefix of replication cursors.
const CONSUMER: &str = "replica/";

/// What one round of sending to a target did.
#[derive(Default)]
struct Sent {
    progress: bool,
    /// The log was read up to the readable sequence.
    drained: bool,
}

/// Pages of one table's log read this round, by first sequence number.
type PageCache = std::collections::HashMap<u64, Arc<LogPage>>;

/// One page of the change log, as [`Engine::log_changes`] reads it.
struct LogPage {
    changes: Vec<Change>,
    next: u64,
    drained: bool,
}

/// A target region's durable cursor.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ReplicaCursor {
    /// The first change-log sequence number not yet applied there.
    pub next_seq: u64,
    /// A replica being filled: the last item key sent (None: none yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fill: Option<Fill>,
    /// The fill ended and the replica is not yet marked ACTIVE (only the
    /// region that filled a replica marks it).
    #[serde(default)]
    pub filled: bool,
    /// Changes applied there so far.
    #[serde(default)]
    pub sent: u64,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Fill {
    pub after: Option<Vec<u8>>,
    pub items: u64,
}

/// What the sender knows of one target and does not store.
#[derive(Default)]
pub(crate) struct LinkState {
    last_error: Option<String>,
    retry_at: Option<Instant>,
    backoff: Option<Duration>,
    /// Replication latencies of recent changes (ms: applied there − committed here).
    latencies: VecDeque<u64>,
}

impl LinkState {
    /// ReplicationLatency of the recent changes: the last, p50, p99, the
    /// largest, and how many are sampled.
    fn latency_figures(&self) -> Value {
        let mut sorted: Vec<u64> = self.latencies.iter().copied().collect();
        sorted.sort_unstable();
        let at = |q: f64| {
            let rank = ((sorted.len() as f64 - 1.0) * q).round() as usize;
            sorted.get(rank).copied()
        };
        serde_json::json!({
            "Last": self.latencies.back(), "P50": at(0.5), "P99": at(0.99),
            "Max": sorted.last(), "Samples": sorted.len(),
        })
    }
}

fn consumer(region: &str) -> String {
    format!("{CONSUMER}{region}")
}

impl Engine {
    /// The cursors a replica of `group` in region `own` needs, as writes:
    /// one per other region (new ones start at the lowest existing cursor,
    /// so nothing a region already sent to its peers is missed, or at the
    /// next sequence number; `fill_for`'s with a fill), and none for
    /// regions gone. The caller holds the table's writes.
    pub(crate) fn reconcile_cursors(
        &self,
        table: &Table,
        group: Option<&GlobalTable>,
        own: &str,
        fill_for: Option<&str>,
    ) -> Result<Vec<WriteOp>> {
        let existing = self.replica_cursors(table.id)?;
        let wanted: Vec<&str> = (group.iter())
            .flat_map(|g| g.replicas.iter())
            .filter(|r| r.region != own && r.status != "DELETING")
            .map(|r| r.region.as_str())
            .collect();
        let boundary = self.sequence_boundary();
        let floor = (existing.values())
            .map(|c| c.next_seq)
            .min()
            .unwrap_or(boundary);
        let mut ops = Vec::new();
        for region in &wanted {
            if existing.contains_key(*region) {
                continue;
            }
            let filling = fill_for == Some(*region);
            let cursor = ReplicaCursor {
                next_seq: if filling { boundary } else { floor },
                fill: filling.then(Fill::default),
                filled: false,
                sent: 0,
            };
            ops.push(cursor_put(table.id, region, &cursor));
        }
        for region in existing.keys().filter(|r| !wanted.contains(&r.as_str())) {
            ops.push(WriteOp::Delete(keyspace::cursor_key(
                table.id,
                &consumer(region),
            )));
        }
        Ok(ops)
    }

    /// The replication cursors of table `id`, by target region.
    pub(crate) fn replica_cursors(&self, id: u64) -> Result<BTreeMap<String, ReplicaCursor>> {
        let start = keyspace::cursor_key(id, CONSUMER);
        let mut end = start.clone();
        *end.last_mut().expect("a prefix") += 1;
        let found = (self.storage)
            .scan(
                Bound::Included(&start),
                Bound::Excluded(&end),
                false,
                usize::MAX,
            )
            .map_err(crate::storage_error)?;
        let mut out = BTreeMap::new();
        for (key, value) in found {
            let region = String::from_utf8_lossy(&key[start.len()..]).into_owned();
            let cursor = serde_json::from_slice(&value).map_err(crate::storage_error)?;
            out.insert(region, cursor);
        }
        Ok(out)
    }

    /// The lowest sequence number a replication cursor of `table` still
    /// needs (u64::MAX: none): the change log is kept from there on.
    pub(crate) fn replication_floor(&self, table: &Table) -> Result<u64> {
        if !table.is_replicated() {
            return Ok(u64::MAX);
        }
        let cursors = self.replica_cursors(table.id)?;
        Ok(cursors
            .values()
            .map(|c| c.next_seq)
            .min()
            .unwrap_or(u64::MAX))
    }

    /// Starts the sending thread if a table is replicated and it is not running.
    pub(crate) fn start_replication_worker_if_needed(self: &Arc<Self>) {
        let busy = self.tables.read().values().any(|t| t.is_replicated());
        if !busy || self.replication.worker_started.swap(true, Ordering::SeqCst) {
            return;
        }
        let engine = Arc::downgrade(self);
        let spawned = std::thread::Builder::new()
            .name("ferrodyn-replication".into())
            .spawn(move || {
                let mut tick = IDLE_TICK;
                loop {
                    std::thread::sleep(tick);
                    let Some(engine) = engine.upgrade() else {
                        return;
                    };
                    tick = match engine.tend_replicas() {
                        Ok(true) => BUSY_TICK,
                        Ok(false) => IDLE_TICK,
                        Err(error) => {
                            eprintln!("ferrodyn: replication failed: {error}");
                            IDLE_TICK
                        }
                    };
                    if let Err(error) = engine.reclaim_tombstones_if_due() {
                        eprintln!("ferrodyn: tombstone sweep failed: {error}");
                    }
                }
            });
        if let Err(error) = spawned {
            self.replication
                .worker_started
                .store(false, Ordering::SeqCst);
            eprintln!("ferrodyn: cannot start the replication thread: {error}");
        }
    }

    /// One round: every replica's targets get what they lack. Returns
    /// whether anything was sent.
    fn tend_replicas(self: &Arc<Self>) -> Result<bool> {
        if !self.runs_background_work() {
            return Ok(false);
        }
        let tables: Vec<Arc<Table>> = (self.tables.read().values())
            .filter(|t| t.is_replicated())
            .cloned()
            .collect();
        let mut sent = false;
        for table in tables {
            let group = table.global();
            // Taken before any page is read: what a drained target can be
            // told it has (tombstones.rs).
            let delivered = self.delivery_time();
            // Targets at one position share the page read (and parsed) once.
            let mut pages = PageCache::new();
            for (region, cursor) in self.replica_cursors(table.id)? {
                let member = (group.as_ref())
                    .and_then(|g| g.replica(&region))
                    .is_some_and(|r| r.status != "DELETING");
                if !member {
                    // Left the group after this round read the cursors.
                    let key = keyspace::cursor_key(table.id, &consumer(&region));
                    self.write_retrying_conflicts(vec![WriteOp::Delete(key)])?;
                    continue;
                }
                if self.replica_backing_off(table.id, &region) {
                    continue;
                }
                self.deliver_settings(&table, &region)?;
                match self.send_to(&table, &region, cursor, (&mut pages, delivered)) {
                    Ok(round) => {
                        sent |= round.progress;
                        self.note_link(table.id, &region, None);
                    }
                    Err(error) => self.note_link(table.id, &region, Some(error.message)),
                }
            }
        }
        Ok(sent)
    }

    /// Sends the log past `cursor`, then a fill page, to `region`; marks a
    /// filled replica ACTIVE once the log is drained, and reports delivery
    /// up to `delivered` (a time taken before any of `pages` was read)
    /// when the log is drained and no fill remains.
    fn send_to(
        self: &Arc<Self>,
        table: &Arc<Table>,
        region: &str,
        mut cursor: ReplicaCursor,
        (pages, delivered): (&mut PageCache, u64),
    ) -> Result<Sent> {
        let own = self.region_of(&table.catalog_name).to_string();
        let to = address_in(self, table, region);
        let mut sent = Sent::default();
        for _ in 0..MESSAGES_PER_ROUND {
            let page = match pages.get(&cursor.next_seq) {
                Some(page) => Arc::clone(page),
                None => {
                    let page = Arc::new(self.log_changes(table, &own, cursor.next_seq)?);
                    pages.insert(cursor.next_seq, Arc::clone(&page));
                    page
                }
            };
            if !page.changes.is_empty() {
                let latest: Vec<u64> = page.changes.iter().map(|c| c.committed_ms).collect();
                self.send_apply(&to, &page.changes)?;
                self.note_latencies(table.id, region, &latest);
                cursor.sent += latest.len() as u64;
            }
            if page.next != cursor.next_seq {
                cursor.next_seq = page.next;
                self.write_cursor(table.id, region, &cursor)?;
                sent.progress = true;
            }
            if page.drained {
                sent.drained = true;
                break;
            }
        }
        if let Some(fill) = cursor.fill.clone() {
            cursor.fill = self.fill_page(table, &own, &to, fill)?;
            cursor.filled = cursor.fill.is_none();
            self.write_cursor(table.id, region, &cursor)?;
            sent.progress = true;
        }
        if cursor.filled && sent.drained {
            self.set_replica_status(table, region, "ACTIVE")?;
            cursor.filled = false;
            self.write_cursor(table.id, region, &cursor)?;
        }
        if sent.drained && cursor.fill.is_none() {
            self.report_delivery(table, region, delivered);
        }
        Ok(sent)
    }

    /// One page of the log from `from`: the changes this region sends,
    /// where the next page starts, and whether the page reached the
    /// readable sequence (nothing more to send now).
    fn log_changes(&self, table: &Table, own: &str, from: u64) -> Result<LogPage> {
        let readable = self.readable_sequence();
        if from >= readable {
            return Ok(LogPage {
                changes: Vec::new(),
                next: from,
                drained: true,
            });
        }
        let page = self.log_page(table.id, from, readable - 1, LOG_PAGE)?;
        let drained = page.len() < LOG_PAGE;
        let mut next = from;
        let mut changes = Vec::new();
        for (key, value) in page {
            next = keyspace::stream_seq_of(&key).expect("record keys carry a sequence number") + 1;
            if let Some(change) = change_to_send(&value, own, table.is_strong())? {
                changes.push(change);
            }
        }
        if drained {
            next = readable; // everything below the readable sequence is read
        }
        Ok(LogPage {
            changes,
            next,
            drained,
        })
    }

    /// Sends the next page of items to a replica being filled; None once
    /// every item was sent.
    fn fill_page(
        self: &Arc<Self>,
        table: &Table,
        own: &str,
        to: &super::Address,
        mut fill: Fill,
    ) -> Result<Option<Fill>> {
        let prefix = keyspace::table_items(table.id);
        let mut end = prefix.clone();
        *end.last_mut().expect("a prefix") += 1;
        let start = match &fill.after {
            Some(after) => Bound::Excluded(after.as_slice()),
            None => Bound::Included(prefix.as_slice()),
        };
        let page = (self.storage)
            .scan(start, Bound::Excluded(&end), false, FILL_PAGE)
            .map_err(crate::storage_error)?;
        let full = page.len() == FILL_PAGE;
        let changes = self.versioned_images(table, own, &page)?;
        if !changes.is_empty() {
            self.send(&Message::Apply {
                to: to.clone(),
                changes,
            })?;
        }
        fill.items += page.len() as u64;
        fill.after = page.last().map(|(key, _)| key.clone()).or(fill.after);
        Ok(full.then_some(fill))
    }

    /// The items of a fill page, each with its version, read together under
    /// the items' locks: an image read apart from its version could pair an
    /// older image with a newer write's version, which the replica would
    /// then keep over the newer image (a replica of 100,000 items under
    /// writes diverged so). Items deleted since the scan are left out (their
    /// deletion is in the log).
    fn versioned_images(
        &self,
        table: &Table,
        own: &str,
        page: &[(Vec<u8>, Vec<u8>)],
    ) -> Result<Vec<Change>> {
        let keys: Vec<LockKey> = (page.iter())
            .map(|(key, _)| LockKey {
                key: key.clone(),
                item: true,
            })
            .collect();
        let _held = (self.locks)
            .acquire(Holder::Batch, &keys)
            .expect("batch requests are never rejected");
        let mut changes = Vec::with_capacity(page.len());
        for (key, _) in page {
            let Some(stored) = self.storage.get(key).map_err(crate::storage_error)? else {
                continue;
            };
            let item: Item = StoredItem::decode(stored)?.parse()?;
            let version = (self.stored_version(key)?).unwrap_or(ItemVersion {
                micros: 0,
                origin: own.to_string(),
            });
            changes.push(Change {
                key: table.schema.extract(&item),
                image: Some(item),
                version,
                committed_ms: 0,
            });
        }
        Ok(changes)
    }

    /// Sends `region` everything of the log it has not been sent (an MRSC
    /// read barrier).
    pub(crate) fn send_pending(self: &Arc<Self>, table: &Arc<Table>, region: &str) -> Result<()> {
        loop {
            let Some(cursor) = self.replica_cursors(table.id)?.remove(region) else {
                return Ok(());
            };
            let delivered = self.delivery_time();
            if self
                .send_to(table, region, cursor, (&mut PageCache::new(), delivered))?
                .drained
            {
                return Ok(());
            }
        }
    }

    fn write_cursor(&self, table_id: u64, region: &str, cursor: &ReplicaCursor) -> Result<()> {
        Ok(self.write_retrying_conflicts(vec![cursor_put(table_id, region, cursor)])?)
    }

    fn replica_backing_off(&self, table_id: u64, region: &str) -> bool {
        let links = self.replication.links.lock();
        (links.get(&(table_id, region.to_string())))
            .and_then(|l| l.retry_at)
            .is_some_and(|at| Instant::now() < at)
    }

    fn note_link(&self, table_id: u64, region: &str, error: Option<String>) {
        let mut links = self.replication.links.lock();
        let link = links.entry((table_id, region.to_string())).or_default();
        match error {
            None => {
                link.backoff = None;
                link.retry_at = None;
            }
            Some(error) => {
                let backoff = link
                    .backoff
                    .map_or(FIRST_BACKOFF, |b| (b * 2).min(MAX_BACKOFF));
                link.backoff = Some(backoff);
                link.retry_at = Some(Instant::now() + backoff);
                link.last_error = Some(error);
            }
        }
    }

    fn note_latencies(&self, table_id: u64, region: &str, committed: &[u64]) {
        let now = self.clock.now_millis();
        let mut links = self.replication.links.lock();
        let link = links.entry((table_id, region.to_string())).or_default();
        for ms in committed.iter().filter(|ms| **ms > 0) {
            if link.latencies.len() == SAMPLES {
                link.latencies.pop_front();
            }
            link.latencies.push_back(now.saturating_sub(*ms));
        }
    }

    /// Ferrodyn's view of a table's replication (`GET
    /// /ferrodyn/replication?table=T`, `ferrodyn replicas T`, the console):
    /// per target region, what AWS shows in CloudWatch (ReplicationLatency,
    /// p50/p99 of recent changes, and the age of the oldest change not yet
    /// applied there), the changes sent, the fill's progress, the last error.
    pub fn replication_report(&self, table_name: &str) -> Result<Value> {
        let table = self.table(table_name)?;
        let own = self.region_of(&table.catalog_name).to_string();
        let group = table.global();
        let mut targets = Vec::new();
        for (region, cursor) in self.replica_cursors(table.id)? {
            let pending = self.oldest_pending_age(&table, &own, cursor.next_seq)?;
            let (settings_waiting, settings_error) = self.settings_waiting(&table, &region)?;
            let links = self.replication.links.lock();
            let link = links.get(&(table.id, region.clone()));
            targets.push(serde_json::json!({
                "RegionName": region,
                "ReplicaStatus": group.as_ref().and_then(|g| g.replica(&region)).map(|r| r.status.clone()),
                "ReplicationLatencyMs": link.map(LinkState::latency_figures),
                "PendingAgeMs": pending,
                "ChangesSent": cursor.sent,
                "FillItemsSent": cursor.fill.as_ref().map(|f| f.items),
                "LastError": link.and_then(|l| l.last_error.clone()),
                "Failing": link.is_some_and(|l| l.backoff.is_some()),
                "SettingsWaiting": settings_waiting,
                "SettingsError": settings_error,
            }));
        }
        let reports: serde_json::Map<String, Value> = (self.delivery_reports(&table)?.into_iter())
            .map(|(region, through)| (region, through.into()))
            .collect();
        Ok(serde_json::json!({
            "TableName": table.name,
            "RegionName": own,
            "GlobalTableVersion": group.as_ref().map(|g| g.version.clone()),
            "MultiRegionConsistency": group.as_ref().map(|g| if g.strong { "STRONG" } else { "EVENTUAL" }),
            "Targets": targets,
            "DeliveredThroughMicros": reports,
            "TombstonesReclaimed": self.tombstones_reclaimed(&table),
        }))
    }

    /// Every replicated table's ReplicationLatency per target region (ms,
    /// p50 and p99 of recent changes), for `GET /ferrodyn/usage`.
    pub fn replication_latencies(&self) -> Vec<Value> {
        let links = self.replication.links.lock();
        let tables = self.tables.read();
        let mut out = Vec::new();
        for ((table_id, region), link) in links.iter() {
            let Some(table) = tables.values().find(|t| t.id == *table_id) else {
                continue;
            };
            out.push(serde_json::json!({
                "TableName": table.name,
                "ReceivingRegion": region,
                "ReplicationLatencyMs": link.latency_figures(),
                "Failing": link.backoff.is_some(),
            }));
        }
        out
    }

    /// Milliseconds since this region's oldest change not yet applied at a
    /// target committed (0: none waiting).
    fn oldest_pending_age(&self, table: &Table, own: &str, from: u64) -> Result<u64> {
        let page = self.log_changes(table, own, from)?;
        let oldest = (page.changes)
            .iter()
            .map(|c| c.committed_ms)
            .filter(|ms| *ms > 0)
            .min();
        Ok(oldest.map_or(0, |ms| self.clock.now_millis().saturating_sub(ms)))
    }
}

fn cursor_put(table_id: u64, region: &str, cursor: &ReplicaCursor) -> WriteOp {
    WriteOp::Put(
        keyspace::cursor_key(table_id, &consumer(region)),
        serde_json::to_vec(cursor).expect("plain data always serialises"),
    )
}

/// A change-log record as the sender reads it: only what it sends,
/// parsed straight into items (no intermediate JSON tree).
#[derive(Deserialize)]
struct LoggedChange {
    #[serde(rename = "eventName")]
    event_name: String,
    dynamodb: LoggedBody,
    #[serde(rename = "ferrodyn", default)]
    facts: Option<LoggedFacts>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct LoggedBody {
    keys: Item,
    #[serde(default)]
    new_image: Option<Item>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LoggedFacts {
    #[serde(default)]
    version: Option<ItemVersion>,
    #[serde(default)]
    commit_millis: u64,
}

/// The change a log record describes, if it is `own` region's to send: a
/// change it made, or any change in an MRSC group (strong.rs).
fn change_to_send(record: &[u8], own: &str, strong: bool) -> Result<Option<Change>> {
    let record: LoggedChange = serde_json::from_slice(record).map_err(crate::storage_error)?;
    let Some(facts) = record.facts else {
        return Ok(None); // logged for a stream alone
    };
    let Some(version) = facts.version else {
        return Ok(None); // logged before the table was replicated
    };
    if version.origin != own && !strong {
        return Ok(None);
    }
    let image = match record.event_name.as_str() {
        "REMOVE" => None,
        _ => record.dynamodb.new_image,
    };
    Ok(Some(Change {
        key: record.dynamodb.keys,
        image,
        version,
        committed_ms: facts.commit_millis,
    }))
}
