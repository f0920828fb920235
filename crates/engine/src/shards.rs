//! Stream shards that follow partitions, as DynamoDB's do: a stream has
//! one open shard per table partition; a shard closes and one child opens
//! when its lifetime passes (DynamoDB: about four hours,
//! `--stream-shard-lifetime`), and two children open when its partition
//! splits (partitions.rs). Closed shards stay listed for 24 hours.
//!
//! A shard is a range of partition hashes and a range of sequence numbers
//! over the one change log (streams.rs): no record moves when shards close
//! or split. A change is always in exactly one shard, and for one item the
//! parent's records all come before its child's, so a reader that finishes
//! a parent before its children (as the Kinesis Client Library does) reads
//! every item's changes in order. A shard closes and its children appear in
//! the same catalog commit, so no reader ever sees a closed shard without
//! its children while the stream is enabled.
//!
//! Also here: [`Engine::partition_upkeep`], the once-a-second work that
//! rolls shards over, splits partitions that outgrew their size and
//! reclaims the log past the streams' 24 hours. Reading a shard is
//! shard_reads.rs.

use crate::shared::{shard_id, Partition, PartitionMap, Shard, StreamInfo};
use crate::table::{Table, UpkeepWork};
use crate::Engine;
use ferrodyn_types::Result;
use std::sync::Arc;
use std::time::Duration;

/// How long a shard stays open by default (DynamoDB: about four hours).
pub const DEFAULT_SHARD_LIFETIME_SECONDS: f64 = 4.0 * 3600.0;
/// Seconds between size checks of a table on shared storage (every
/// upkeep on embedded storage, where the figures are in memory).
const SHARED_SIZE_CHECK_SECONDS: f64 = 10.0;
/// Seconds between deletions of a table's stream records past 24 hours.
const LOG_RECLAIM_SECONDS: f64 = 60.0;

/// How long a closed shard stays listed (its records' 24 hours).
const CLOSED_SHARD_KEPT_MS: u64 = 24 * 3600 * 1000;
/// How often the upkeep runs.
const UPKEEP_INTERVAL: Duration = Duration::from_secs(1);

/// The shards of a new stream: one per table partition.
pub(crate) fn first_shards(
    arn: &str,
    map: &PartitionMap,
    start_seq: u64,
    now_ms: u64,
) -> Vec<Shard> {
    map.table
        .iter()
        .map(|p| new_shard(arn, p, start_seq, None, now_ms))
        .collect()
}

fn new_shard(
    arn: &str,
    p: &Partition,
    start_seq: u64,
    parent: Option<&Shard>,
    now_ms: u64,
) -> Shard {
    // A child is newer than its parent even on a clock that has not moved,
    // so listing by id (creation time first) puts parents before children.
    let created_ms = parent.map_or(now_ms, |parent| now_ms.max(parent.created_ms + 1));
    Shard {
        id: shard_id(
            created_ms,
            &format!(
                "{arn}/{start_seq}/{}/{}",
                p.lo,
                parent.map_or("", |s| &s.id)
            ),
        ),
        partition: p.id,
        lo: p.lo,
        hi: p.hi,
        start_seq,
        end_seq: None,
        parent: parent.map(|parent| parent.id.clone()),
        created_ms,
        closed_ms: None,
    }
}

/// Closes every open shard of `stream` at `end_seq` (a disabled stream).
pub(crate) fn close_open(stream: &mut StreamInfo, end_seq: u64, now_ms: u64) {
    stream.shards = stream.shards();
    for shard in stream.shards.iter_mut().filter(|s| s.is_open()) {
        shard.end_seq = Some(end_seq);
        shard.closed_ms = Some(now_ms);
    }
}

/// Closes the open shards older than `lifetime_ms`, each with one child
/// over the same partition from `boundary` on; true if any rolled over.
fn roll_over(stream: &mut StreamInfo, lifetime_ms: u64, boundary: u64, now_ms: u64) -> bool {
    stream.shards = stream.shards();
    let due: Vec<usize> = (stream.shards.iter().enumerate())
        .filter(|(_, s)| s.is_open() && now_ms.saturating_sub(s.created_ms) >= lifetime_ms)
        .map(|(at, _)| at)
        .collect();
    for &at in &due {
        let parent = close(&mut stream.shards[at], boundary, now_ms);
        let partition = Partition {
            id: parent.partition,
            lo: parent.lo,
            hi: parent.hi,
            parent: None,
            created_ms: now_ms,
        };
        let child = new_shard(&stream.arn, &partition, boundary, Some(&parent), now_ms);
        stream.shards.push(child);
    }
    !due.is_empty()
}

fn close(shard: &mut Shard, boundary: u64, now_ms: u64) -> Shard {
    shard.end_seq = Some(
        boundary
            .saturating_sub(1)
            .max(shard.start_seq.saturating_sub(1)),
    );
    shard.closed_ms = Some(now_ms);
    shard.clone()
}

/// Closes the open shard of partition `parent` with one child per new
/// partition, from `boundary` on.
fn split(
    stream: &mut StreamInfo,
    parent: u32,
    children: &[&Partition],
    boundary: u64,
    now_ms: u64,
) {
    stream.shards = stream.shards();
    let Some(at) = (stream.shards.iter()).position(|s| s.is_open() && s.partition == parent) else {
        return;
    };
    let closed = close(&mut stream.shards[at], boundary, now_ms);
    for &child in children {
        let shard = new_shard(&stream.arn, child, boundary, Some(&closed), now_ms);
        stream.shards.push(shard);
    }
}

/// Splits table partition `id` at `mid`, with two child shards for its
/// stream's shard; the caller holds the table's writes. False when `mid`
/// does not split it.
fn split_held(table: &Table, id: u32, mid: u64, boundary: u64, now_ms: u64) -> bool {
    let mut map = PartitionMap::clone(&table.partitions());
    let Some((left, right)) = map.split(id, mid, now_ms) else {
        return false;
    };
    table.set_partitions(map);
    table.edit_streams(|streams| {
        if let Some(stream) = streams.last_mut().filter(|s| s.enabled()) {
            split(stream, id, &[&left, &right], boundary, now_ms);
        }
    });
    true
}

/// Forgets shards closed more than 24 hours ago; true if any went.
fn forget_old(stream: &mut StreamInfo, now_ms: u64) -> bool {
    let before = stream.shards.len();
    stream.shards.retain(|s| {
        s.closed_ms
            .is_none_or(|closed| now_ms.saturating_sub(closed) < CLOSED_SHARD_KEPT_MS)
    });
    stream.shards.len() != before
}

/// Whether any shard of the table's streams is due to roll over or go.
fn shards_due(streams: &[StreamInfo], lifetime_ms: u64, now_ms: u64) -> bool {
    streams
        .iter()
        .flat_map(|s| &s.shards)
        .any(|s| match s.closed_ms {
            None => now_ms.saturating_sub(s.created_ms) >= lifetime_ms,
            Some(closed) => now_ms.saturating_sub(closed) >= CLOSED_SHARD_KEPT_MS,
        })
        || streams.iter().any(|s| s.enabled() && s.shards.is_empty())
}

impl Engine {
    /// Starts the thread that runs [`Engine::partition_upkeep`] every
    /// second (the lease holder's on shared storage).
    pub(crate) fn start_partition_upkeep(self: &Arc<Self>) {
        self.run_periodically(
            "ferrodyn-partitions",
            UPKEEP_INTERVAL,
            "partition upkeep",
            |e| {
                if !e.runs_background_work() {
                    return Ok(());
                }
                e.partition_upkeep()
            },
        );
    }

    /// Rolls over shards past their lifetime, splits partitions past the
    /// split size, settles Contributor Insights' statuses, and deletes
    /// stream records nobody may read any more.
    /// Runs every second, and at once when a test moves the manual clock.
    pub fn partition_upkeep(&self) -> Result<()> {
        let tables: Vec<Arc<Table>> = self.tables.read().values().cloned().collect();
        let now = crate::shared::now_seconds();
        for table in tables.iter().filter(|t| !t.is_creating()) {
            self.roll_over_shards(table)?;
            self.split_hot_partitions(table)?;
            self.settle_contributor_insights(table)?;
            // Reading sizes and the log costs queries on shared storage,
            // whose serializable checks every read can make writers retry.
            let (sizes, log) = if self.shared() {
                (SHARED_SIZE_CHECK_SECONDS, LOG_RECLAIM_SECONDS)
            } else {
                (0.0, LOG_RECLAIM_SECONDS)
            };
            if table.upkeep_due(UpkeepWork::Sizes, now, sizes) {
                self.split_large_partitions(table)?;
            }
            if table.upkeep_due(UpkeepWork::Log, now, log) {
                self.reclaim_stream_log(table)?;
            }
        }
        Ok(())
    }

    /// Runs `change` on the current form of `table` with the catalog lock
    /// and the table's writes held, then saves its catalog record when
    /// `change` says it changed something. Nothing happens if the table was
    /// deleted or re-created meanwhile.
    fn change_table_shape(
        &self,
        table: &Table,
        change: impl FnOnce(&Table, u64) -> bool,
    ) -> Result<bool> {
        let _catalog = self.catalog_lock.lock();
        let current = self.tables.read().get(&table.catalog_name).cloned();
        let Some(current) = current.filter(|t| t.id == table.id) else {
            return Ok(false);
        };
        let _writes = current.exclusive();
        let boundary = self.sequence_boundary();
        if !change(&current, boundary) {
            return Ok(false);
        }
        self.save_catalog_record(&current)?;
        Ok(true)
    }

    fn roll_over_shards(&self, table: &Table) -> Result<()> {
        let now_ms = self.clock.now_millis();
        let lifetime = self.shard_lifetime_ms;
        if !shards_due(&table.streams_ref(), lifetime, now_ms) {
            return Ok(());
        }
        self.change_table_shape(table, |table, boundary| {
            table.edit_streams(|streams| {
                let mut changed = false;
                for stream in streams.iter_mut() {
                    changed |= forget_old(stream, now_ms);
                    if stream.enabled() {
                        changed |= roll_over(stream, lifetime, boundary, now_ms);
                    }
                }
                changed
            })
        })?;
        Ok(())
    }

    /// Splits table partition `id` of `table` at hash `mid`: the partition
    /// map gains two children, and the stream's shard over it closes with
    /// two children, in one catalog commit.
    pub(crate) fn split_partition(&self, table: &Table, id: u32, mid: u64) -> Result<bool> {
        let now_ms = self.clock.now_millis();
        self.change_table_shape(table, |table, boundary| {
            split_held(table, id, mid, boundary, now_ms)
        })
    }

    /// Splits partition `id` of global index `index` at `mid` (an index has
    /// no stream: only its map changes).
    pub(crate) fn split_index_partition(
        &self,
        table: &Table,
        index: &str,
        id: u32,
        mid: u64,
    ) -> Result<bool> {
        let now_ms = self.clock.now_millis();
        self.change_table_shape(table, |table, _| {
            let mut map = PartitionMap::clone(&table.partitions());
            let split = map.split_index(index, id, mid, now_ms).is_some();
            if split {
                table.set_partitions(map);
            }
            split
        })
    }

    /// After UpdateTable raised provisioned throughput: while the table's
    /// (or a global index's) partitions cannot carry it at 3,000 read and
    /// 1,000 write units each, every one of them splits in two (DynamoDB
    /// doubles the partition count). The caller holds the catalog lock and
    /// the table's writes, and saves the catalog record.
    pub(crate) fn grow_partitions_for_throughput(&self, table: &Table) {
        let description = table.describe();
        let now_ms = self.clock.now_millis();
        let wanted = PartitionMap::initial(&description, self.partition_settings, now_ms);
        let provisioned = description.billing_mode() == crate::schema::BillingMode::Provisioned;
        if !provisioned {
            return;
        }
        let boundary = self.sequence_boundary();
        let before = table.partitions().table.clone();
        let mut map = PartitionMap::clone(&table.partitions());
        while map.table.len() < wanted.table.len() {
            let mut next_id = map.next_id;
            map.table = crate::partitions::doubled(&map.table, &mut next_id, now_ms);
            map.next_id = next_id;
        }
        if map.table.len() != before.len() {
            table.edit_streams(|streams| {
                if let Some(stream) = streams.last_mut().filter(|s| s.enabled()) {
                    for parent in &before {
                        let children: Vec<&Partition> = (map.table.iter())
                            .filter(|p| parent.lo <= p.lo && p.hi <= parent.hi)
                            .collect();
                        split(stream, parent.id, &children, boundary, now_ms);
                    }
                }
            });
        }
        for (name, partitions) in map.indexes.iter_mut() {
            let needed = wanted.indexes.get(name).map_or(0, Vec::len);
            while partitions.len() < needed {
                let mut next_id = map.next_id;
                *partitions = crate::partitions::doubled(partitions, &mut next_id, now_ms);
                map.next_id = next_id;
            }
        }
        table.set_partitions(map);
    }

    /// A global index created since the partitions were laid out gets
    /// partitions of its own; a deleted one's go.
    pub(crate) fn follow_index_partitions(&self, table: &Table) {
        let mut map = PartitionMap::clone(&table.partitions());
        let before = map.clone();
        map.follow_indexes(
            &table.describe(),
            self.partition_settings,
            self.clock.now_millis(),
        );
        if map != before {
            table.set_partitions(map);
        }
    }
}
