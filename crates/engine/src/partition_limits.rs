//! Per-partition throughput limits, opt-in (`ferrodyn serve
//! --partition-limits on`): every partition of a table and of each global
//! secondary index (partitions.rs) serves at most 3,000 read units and
//! 1,000 write units a second, reads and writes limited apart, in both
//! capacity modes, as DynamoDB's partitions do
//! (docs/design/partitions-and-streams.md §1). Each partition has a read
//! and a write bucket (throughput.rs's) holding one second of capacity on
//! the engine's clock: an operation is admitted while its partition's
//! bucket is positive and then charged what it consumed, like the table
//! buckets. A refusal is DynamoDB's answer: ThrottlingException with the
//! hot-key text on on-demand tables, ProvisionedThroughputExceededException
//! on provisioned ones, both with ThrottlingReasons.
//!
//! Heat: each partition counts units and throttles per clock second (the
//! last minute is kept for [`Engine::partition_heat`]) and its busiest keys;
//! one kept hot by a single key for [`HEAT_SECONDS`] seconds splits around
//! that key (adaptive capacity's split for heat), run by the partition
//! upkeep (shards.rs). Off, nothing here runs: callers test one bool.

use crate::index::Index;
use crate::items::PlannedWrite;
use crate::partitions::{PARTITION_READ_UNITS, PARTITION_WRITE_UNITS};
use crate::schema::BillingMode;
use crate::shared::{IndexKind, Partition};
use crate::table::Table;
use crate::throughput::{Bucket, Capacity};
use crate::Engine;
use ferrodyn_types::{AttributeValue, DynamoError, ErrorKind, Item, Result};
use parking_lot::Mutex;
use serde_json::json;
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

/// A second counts towards a heat split when its partition served at
/// least this share of its rate and still refused some requests. DynamoDB
/// publishes no threshold (design §1: not found); these are Ferrodyn's.
pub const HEAT_RATE_SHARE: f64 = 0.8;
/// ...and when one partition key carried at least this share of the units.
pub const HEAT_KEY_SHARE: f64 = 0.5;
/// Consecutive such seconds after which the partition splits around the
/// key. DynamoDB says only that throttling "stops after a short period"
/// once the table has adapted; five seconds keeps tests short.
pub const HEAT_SECONDS: u32 = 5;
/// Seconds of counts each partition keeps (the heat report's minute).
const HISTORY_SECONDS: usize = 60;
/// Busiest keys counted per partition and second (space-saving counts).
const TOP_KEYS: usize = 8;

/// The on-demand answer: what AWS returns for a hot partition in practice
/// (design §1, [Obs-Thr]).
pub const HOT_KEY_MESSAGE: &str = "Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling your table or index so please try again shortly. If exceptions persist, check if you have a hot key: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html";

/// One partition's place: table id, global index id (None: the table's
/// own partitions) and partition id.
type Slot = (u64, Option<u32>, u32);

/// The partitions' buckets and heat, while limits are on.
#[derive(Default)]
pub(crate) struct PartitionLimits {
    /// `--partition-limits on`: the one check the request path makes.
    pub(crate) on: bool,
    states: Mutex<HashMap<Slot, PartitionState>>,
}

/// What one partition did in one clock second.
#[derive(Clone, Default)]
pub(crate) struct Second {
    /// The clock second (epoch seconds).
    pub(crate) at: u64,
    pub(crate) units: [f64; 2],
    pub(crate) throttles: [u64; 2],
    /// The busiest partition keys by hash, per kind: (hash, units).
    keys: [Vec<(u64, f64)>; 2],
}

fn slot_of(kind: Capacity) -> usize {
    match kind {
        Capacity::Read => 0,
        Capacity::Write => 1,
    }
}

fn rate_of(kind: Capacity) -> u64 {
    match kind {
        Capacity::Read => PARTITION_READ_UNITS,
        Capacity::Write => PARTITION_WRITE_UNITS,
    }
}

impl Second {
    /// Counts `units` for key `hash`: a space-saving top list, so a key
    /// that carries most of the traffic is always in it.
    fn note_key(&mut self, kind: Capacity, hash: u64, units: f64) {
        let keys = &mut self.keys[slot_of(kind)];
        if let Some(entry) = keys.iter_mut().find(|(h, _)| *h == hash) {
            entry.1 += units;
        } else if keys.len() < TOP_KEYS {
            keys.push((hash, units));
        } else if let Some(least) = keys.iter_mut().min_by(|a, b| a.1.total_cmp(&b.1)) {
            *least = (hash, least.1 + units);
        }
    }

    /// The key that made this second hot for `kind`, if it was.
    fn hot_key(&self, kind: Capacity) -> Option<u64> {
        let at = slot_of(kind);
        let units = self.units[at];
        if units < rate_of(kind) as f64 * HEAT_RATE_SHARE || self.throttles[at] == 0 {
            return None;
        }
        let (hash, top) = self.keys[at].iter().max_by(|a, b| a.1.total_cmp(&b.1))?;
        (*top >= units * HEAT_KEY_SHARE).then_some(*hash)
    }
}

/// One partition's buckets and counts.
pub(crate) struct PartitionState {
    buckets: [Bucket; 2],
    pub(crate) current: Second,
    /// Closed seconds, oldest first.
    pub(crate) history: VecDeque<Second>,
    pub(crate) throttles_total: u64,
    /// The last hot second and how many came in a row before it.
    last_hot: u64,
    streak: u32,
    /// The key to split around, once hot for long enough.
    pub(crate) split_at: Option<u64>,
}

impl PartitionState {
    fn new(now_ms: u64) -> PartitionState {
        let bucket = |kind| Bucket::full(rate_of(kind), 1.0, now_ms);
        PartitionState {
            buckets: [bucket(Capacity::Read), bucket(Capacity::Write)],
            current: Second {
                at: now_ms / 1000,
                ..Second::default()
            },
            history: VecDeque::new(),
            throttles_total: 0,
            last_hot: 0,
            streak: 0,
            split_at: None,
        }
    }

    /// Closes the current second when the clock has left it, judging its heat.
    pub(crate) fn roll(&mut self, now_ms: u64) {
        let second = now_ms / 1000;
        if second <= self.current.at {
            return;
        }
        let fresh = Second {
            at: second,
            ..Second::default()
        };
        let closed = std::mem::replace(&mut self.current, fresh);
        let hot = closed
            .hot_key(Capacity::Write)
            .or_else(|| closed.hot_key(Capacity::Read));
        if let Some(hash) = hot {
            self.streak = if closed.at == self.last_hot + 1 {
                self.streak + 1
            } else {
                1
            };
            self.last_hot = closed.at;
            if self.streak >= HEAT_SECONDS {
                self.split_at = Some(hash);
            }
        }
        self.history.push_back(closed);
        while self.history.len() > HISTORY_SECONDS {
            self.history.pop_front();
        }
    }

    fn admit(&mut self, kind: Capacity, now_ms: u64) -> bool {
        self.roll(now_ms);
        let admitted = self.buckets[slot_of(kind)].admits(now_ms);
        if !admitted {
            self.current.throttles[slot_of(kind)] += 1;
            self.throttles_total += 1;
        }
        admitted
    }

    fn charge(&mut self, kind: Capacity, hash: u64, units: f64, now_ms: u64) {
        self.roll(now_ms);
        self.buckets[slot_of(kind)].spend(units, now_ms);
        self.current.units[slot_of(kind)] += units;
        self.current.note_key(kind, hash, units);
    }
}

impl PartitionLimits {
    pub(crate) fn new(on: bool) -> PartitionLimits {
        PartitionLimits {
            on,
            states: Mutex::default(),
        }
    }

    fn with<T>(&self, slot: Slot, now_ms: u64, f: impl FnOnce(&mut PartitionState) -> T) -> T {
        let mut states = self.states.lock();
        let state = states
            .entry(slot)
            .or_insert_with(|| PartitionState::new(now_ms));
        f(state)
    }

    /// Runs `f` over the states of table `table_id`'s partitions (rolled to now).
    pub(crate) fn each_of_table(
        &self,
        table_id: u64,
        now_ms: u64,
        mut f: impl FnMut(Option<u32>, u32, &mut PartitionState),
    ) {
        let mut states = self.states.lock();
        for ((table, index, partition), state) in states.iter_mut() {
            if *table == table_id {
                state.roll(now_ms);
                f(*index, *partition, state);
            }
        }
    }

    /// Hands a split partition's buckets to its children (their counts
    /// start afresh): a split adds no capacity at once, so the hot key
    /// goes on at the partition maximum rather than getting a second's
    /// worth extra.
    pub(crate) fn inherit(&self, table_id: u64, parent: u32, children: &[u32], now_ms: u64) {
        let mut states = self.states.lock();
        let Some(old) = states.remove(&(table_id, None, parent)) else {
            return;
        };
        for child in children {
            let mut state = PartitionState::new(now_ms);
            state.buckets = old.buckets.clone();
            states.insert((table_id, None, *child), state);
        }
    }
}

/// The global index an operation's units go to; LSI entries live in the
/// table's partitions, so they count as the table's.
fn global(index: Option<&Index>) -> Option<&Index> {
    index.filter(|i| i.kind == IndexKind::Global)
}

/// The partition of `table` (or of global index `index`) holding `hash`.
fn partition_of(table: &Table, index: Option<&Index>, hash: u64) -> Option<Partition> {
    let map = table.partitions();
    let list = match index {
        Some(index) => map.indexes.get(&index.name)?,
        None => &map.table,
    };
    list.iter().find(|p| p.holds(hash)).cloned()
}

/// The partition hash of an item key of `table`.
pub(crate) fn key_hash(table: &Table, key: &Item) -> u64 {
    crate::keys::partition_hash(&key[&table.schema.hash.name])
}

/// DynamoDB's answer to an operation its partition refused.
pub fn throttled(table: &Table, index: Option<&Index>, kind: Capacity) -> DynamoError {
    let description = table.describe();
    let (resource, arn) = match index {
        Some(index) => (
            "Index",
            format!("{}/index/{}", description.table_arn, index.name),
        ),
        None => ("Table", description.table_arn.clone()),
    };
    let operation = match kind {
        Capacity::Read => "Read",
        Capacity::Write => "Write",
    };
    let reasons = json!([{
        "reason": format!("{resource}{operation}KeyRangeThroughputExceeded"),
        "resource": arn,
    }]);
    // The member's casing follows botocore's service model (dynamodb
    // 2012-08-10 service-2.json): `ThrottlingReasons` on
    // ProvisionedThroughputExceededException, `throttlingReasons` on
    // ThrottlingException (what AWS sends on the wire is not documented).
    match description.billing_mode() {
        BillingMode::Provisioned => {
            crate::throughput::exceeded().with_field("ThrottlingReasons", reasons)
        }
        BillingMode::PayPerRequest => DynamoError::new(ErrorKind::Throttling, HOT_KEY_MESSAGE)
            .with_field("throttlingReasons", reasons),
    }
}

impl Engine {
    /// Whether `--partition-limits on` was given.
    pub fn partition_limits_on(&self) -> bool {
        self.partition_limits.on
    }

    /// Admits an operation of `kind` on the partition holding `hash` (of
    /// the table, or of global index `index`), or refuses it with
    /// DynamoDB's answer. Without partition limits, admits everything.
    pub(crate) fn admit_partition(
        &self,
        table: &Table,
        index: Option<&Index>,
        kind: Capacity,
        hash: u64,
    ) -> Result<()> {
        if !self.partition_limits.on {
            return Ok(());
        }
        let index = global(index);
        let Some(partition) = partition_of(table, index, hash) else {
            return Ok(());
        };
        let now = self.clock.now_millis();
        let slot = (table.id, index.map(|i| i.id), partition.id);
        match self
            .partition_limits
            .with(slot, now, |s| s.admit(kind, now))
        {
            true => Ok(()),
            false => Err(throttled(table, index, kind)),
        }
    }

    /// Charges what an admitted operation consumed to its partition.
    pub(crate) fn charge_partition(
        &self,
        table: &Table,
        index: Option<&Index>,
        kind: Capacity,
        hash: u64,
        units: f64,
    ) {
        if !self.partition_limits.on {
            return;
        }
        let index = global(index);
        let Some(partition) = partition_of(table, index, hash) else {
            return;
        };
        let now = self.clock.now_millis();
        let slot = (table.id, index.map(|i| i.id), partition.id);
        (self.partition_limits).with(slot, now, |s| s.charge(kind, hash, units, now));
    }

    /// Admits a read or write of item `key` on its table partition.
    pub(crate) fn admit_key(&self, table: &Table, key: &Item, kind: Capacity) -> Result<()> {
        if !self.partition_limits.on {
            return Ok(());
        }
        let admitted = self.admit_partition(table, None, kind, key_hash(table, key));
        if admitted.is_err() {
            self.count_throttled(table, key);
        }
        admitted
    }

    /// Charges a read of item `key` to its table partition (and counts it
    /// for Contributor Insights).
    pub(crate) fn charge_key_read(&self, table: &Table, key: &Item, units: f64) {
        self.count_contributor(table, None, key, units, false);
        if self.partition_limits.on {
            self.charge_partition(table, None, Capacity::Read, key_hash(table, key), units);
        }
    }

    /// Admits a Query's partition: the table's, or the global index's,
    /// holding the partition-key values `hash_values` (`None`: limits off).
    pub(crate) fn admit_query(
        &self,
        table: &Table,
        index: Option<&Index>,
        hash_values: &[&AttributeValue],
    ) -> Result<Option<u64>> {
        if !self.partition_limits.on {
            return Ok(None);
        }
        let hash = match hash_values {
            [one] => crate::keys::partition_hash(one),
            many => crate::keys::combined_partition_hash(many.iter().copied()),
        };
        self.admit_partition(table, index, Capacity::Read, hash)?;
        Ok(Some(hash))
    }

    /// Admits the global-index partitions a planned write changes (its old
    /// and new entries): checked between planning and commit, so that a
    /// refusal commits nothing.
    pub(crate) fn admit_index_partitions(&self, write: &PlannedWrite) -> Result<()> {
        if !self.partition_limits.on {
            return Ok(());
        }
        for (index, hash, _) in index_landings(write) {
            self.admit_partition(&write.table, Some(&index), Capacity::Write, hash)?;
        }
        Ok(())
    }

    /// Charges a committed write to its table partition and its global
    /// index partitions; `factor` is 2 for a transaction's writes.
    pub(crate) fn charge_write_partitions(&self, write: &PlannedWrite, factor: f64) {
        self.count_write_contributors(write, factor);
        if !self.partition_limits.on {
            return;
        }
        let (table, hash) = (&write.table, write.partition_hash());
        self.charge_partition(
            table,
            None,
            Capacity::Write,
            hash,
            factor * write.write_units,
        );
        for (index, hash, units) in index_landings(write) {
            self.charge_partition(table, Some(&index), Capacity::Write, hash, factor * units);
        }
    }
}

impl Engine {
    /// Counts a committed write for Contributor Insights: 3 units per write
    /// unit (ConsumedThroughputUnits), on the table's rules and on each
    /// global index's it changes.
    fn count_write_contributors(&self, write: &PlannedWrite, factor: f64) {
        if !write.table.counts_contributors() {
            return;
        }
        let Some(item) = write.new.as_ref().or(write.old.as_ref()) else {
            return;
        };
        let table = &write.table;
        self.count_contributor(table, None, item, 3.0 * factor * write.write_units, false);
        for (index, _, units) in index_landings(write) {
            self.count_contributor(table, Some(&index.name), item, 3.0 * factor * units, false);
        }
    }
}

/// The global-index partitions a write lands on (its new entry's and
/// its old one's), with the share of the index change's units each takes.
fn index_landings(write: &PlannedWrite) -> Vec<(Arc<Index>, u64, f64)> {
    let mut out = Vec::new();
    for change in write.index_changes.iter() {
        let index = &change.index;
        if index.kind != IndexKind::Global {
            continue;
        }
        let mut hashes: Vec<u64> = [write.new.as_ref(), write.old.as_ref()]
            .into_iter()
            .flatten()
            .filter(|item| index.covers(item))
            .map(|item| index.schema.partition_hash(item))
            .collect();
        hashes.dedup();
        // A moved entry deletes in one partition and puts in another.
        let share = change.write_units / hashes.len().max(1) as f64;
        out.extend(hashes.into_iter().map(|h| (Arc::clone(index), h, share)));
    }
    out
}

/// Whether adaptive capacity may split `table`'s partitions for heat:
/// DynamoDB's guide excludes tables with a local secondary index and
/// provisioned tables with a stream (design §1, [G:bp-partition-key-design]).
fn splits_for_heat(table: &Table) -> bool {
    let description = table.describe();
    let has_lsi = (description.local_secondary_indexes.as_ref()).is_some_and(|l| !l.is_empty());
    let provisioned = description.billing_mode() == BillingMode::Provisioned;
    let provisioned_with_stream = provisioned && table.current_stream().is_some();
    !(has_lsi || provisioned_with_stream)
}

impl Engine {
    /// Splits the table partitions of `table` that one key has kept hot
    /// (see [`HEAT_SECONDS`]) so that the key has a partition of its own:
    /// the other keys that shared it stop being throttled by it, and the
    /// key itself keeps the partition maximum. Global index partitions
    /// are not split for heat (partitions.rs splits table partitions only).
    pub(crate) fn split_hot_partitions(&self, table: &Table) -> Result<usize> {
        if !self.partition_limits.on {
            return Ok(0);
        }
        let mut due = Vec::new();
        let now = self.clock.now_millis();
        (self.partition_limits).each_of_table(table.id, now, |index, partition, state| {
            if let (None, Some(hash)) = (index, state.split_at.take()) {
                due.push((partition, hash));
            }
        });
        if due.is_empty() || !splits_for_heat(table) {
            return Ok(0);
        }
        let mut splits = 0;
        for (partition, hash) in due {
            splits += self.isolate_key(table, partition, hash)?;
        }
        Ok(splits)
    }

    /// Splits partition `id` at the placement of `hash` and the part holding
    /// it again after it, leaving the key alone in its range (a split needs room:
    /// a key at a partition's edge needs one split, a lone key none).
    fn isolate_key(&self, table: &Table, id: u32, hash: u64) -> Result<usize> {
        // Partitions are ranges of placement, not of the stored hash.
        let at = crate::partitions::placement(hash);
        let mut splits = usize::from(self.split_handing_over(table, id, at)?);
        let holder = table.partitions().table_partition(hash).clone();
        if let Some(next) = at.checked_add(1).filter(|n| *n <= holder.hi) {
            splits += usize::from(self.split_handing_over(table, holder.id, next)?);
        }
        Ok(splits)
    }

    /// [`Engine::split_partition`], the children taking over its buckets.
    fn split_handing_over(&self, table: &Table, id: u32, mid: u64) -> Result<bool> {
        if !self.split_partition(table, id, mid)? {
            return Ok(false);
        }
        let children: Vec<u32> = (table.partitions().table.iter())
            .filter(|p| p.parent == Some(id))
            .map(|p| p.id)
            .collect();
        let now = self.clock.now_millis();
        self.partition_limits.inherit(table.id, id, &children, now);
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A partition driven at `per_second` write units of key 7 (plus one
    /// unit of key 8) for `seconds` whole seconds, from `start_ms`.
    fn drive(state: &mut PartitionState, start_ms: u64, seconds: u64, per_second: u64) {
        for ms in (0..seconds * 1000).step_by(100) {
            let now = start_ms + ms;
            for _ in 0..per_second / 100 {
                if state.admit(Capacity::Write, now) {
                    state.charge(Capacity::Write, 7, 10.0, now);
                }
            }
            if state.admit(Capacity::Write, now) {
                state.charge(Capacity::Write, 8, 1.0, now);
            }
        }
    }

    #[test]
    fn a_partition_admits_its_rate_and_splits_for_a_key_hot_for_five_seconds() {
        let mut state = PartitionState::new(10_000);
        drive(&mut state, 10_000, HEAT_SECONDS as u64 - 1, 3_000);
        state.roll(10_000 + (HEAT_SECONDS as u64 - 1) * 1000);
        assert_eq!(state.split_at, None, "not yet hot for long enough");
        let steady = &state.history[1];
        assert!(
            (steady.units[1] - 1_000.0).abs() <= 11.0,
            "{:?}",
            steady.units
        );
        assert!(steady.throttles[1] > 0);
        drive(&mut state, 14_000, 2, 3_000);
        state.roll(16_000);
        assert_eq!(state.split_at, Some(7));
    }

    #[test]
    fn a_partition_below_its_rate_never_splits() {
        let mut state = PartitionState::new(10_000);
        drive(&mut state, 10_000, 10, 700);
        state.roll(20_000);
        assert_eq!(state.split_at, None);
        assert_eq!(state.throttles_total, 0);
    }
}
