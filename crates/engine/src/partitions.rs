//! Partitions as DynamoDB documents them: a table (and each global index)
//! is split into ranges of the 64-bit partition hash its item keys start
//! with, each holding up to 10 GB and serving up to 3,000 read and 1,000
//! write units a second. A partition that outgrows `--partition-split-size`
//! splits in two at its byte median, and its stream shard closes with two
//! children (shards.rs).
//!
//! The map is plain data ([`PartitionMap`], shared.rs) kept in the table's
//! catalog record, so it is durable on every storage and a split reaches
//! other nodes with the next catalog reload. Partitions are ranges of an
//! item's [`placement`] (its stored partition hash, mixed), so keys that
//! differ only at their end spread over them. Sizes are not kept: the size
//! check reads the table's keys, and only once the table as a whole has
//! grown past the threshold since it last looked
//! (docs/design/partitions-and-streams.md §7.3 says why and what a
//! per-partition size record would cost).

use crate::schema::{BillingMode, TableDescription};
pub use crate::shared::{placement, Partition, PartitionMap};
use crate::table::Table;
use crate::Engine;
use ferrodyn_types::Result;
use std::ops::Bound;
use std::sync::Arc;

/// Read units a second one partition serves.
pub const PARTITION_READ_UNITS: u64 = 3_000;
/// Write units a second one partition serves.
pub const PARTITION_WRITE_UNITS: u64 = 1_000;
/// Bytes after which a partition splits (DynamoDB: about 10 GB).
pub const DEFAULT_SPLIT_BYTES: u64 = 10 * 1024 * 1024 * 1024;
/// Partitions of a new on-demand table. DynamoDB does not publish it; a new
/// on-demand table sustains 4,000 writes and 12,000 reads a second at once
/// (its warm throughput), which takes four partitions of 1,000 and 3,000.
pub const DEFAULT_ON_DEMAND_PARTITIONS: u32 = 4;
/// Keys read per page while measuring partitions.
const SIZE_PAGE: usize = 2_000;

/// How partitions are laid out and split (`ferrodyn serve` options).
#[derive(Clone, Copy, Debug)]
pub struct PartitionSettings {
    pub split_bytes: u64,
    pub on_demand_partitions: u32,
}

impl Default for PartitionSettings {
    fn default() -> PartitionSettings {
        PartitionSettings {
            split_bytes: DEFAULT_SPLIT_BYTES,
            on_demand_partitions: DEFAULT_ON_DEMAND_PARTITIONS,
        }
    }
}

/// How many partitions capacity of `read`/`write` units needs: DynamoDB's
/// published rule for provisioned tables, `ceil(RCU / 3000 + WCU / 1000)`.
fn partitions_for(read: u64, write: u64) -> u32 {
    let needed =
        read as f64 / PARTITION_READ_UNITS as f64 + write as f64 / PARTITION_WRITE_UNITS as f64;
    (needed.ceil() as u32).max(1)
}

/// `count` equal ranges covering the whole hash space, in order.
fn even_ranges(count: u32) -> Vec<(u64, u64)> {
    let count = u128::from(count.max(1));
    let span = (u128::from(u64::MAX) + 1) / count;
    (0..count)
        .map(|i| {
            let lo = i * span;
            let hi = if i + 1 == count {
                u128::from(u64::MAX)
            } else {
                lo + span - 1
            };
            (lo as u64, hi as u64)
        })
        .collect()
}

impl PartitionMap {
    /// The partitions of a new table: by its provisioned capacity (table
    /// and each global index on its own), or `settings`' count on demand.
    pub fn initial(d: &TableDescription, settings: PartitionSettings, now_ms: u64) -> PartitionMap {
        let on_demand = d.billing_mode() == BillingMode::PayPerRequest;
        let count = |throughput: Option<(u64, u64)>| match throughput {
            _ if on_demand => settings.on_demand_partitions.max(1),
            Some((read, write)) => partitions_for(read, write),
            None => 1,
        };
        let mut map = PartitionMap::default();
        let table_rates = &d.provisioned_throughput;
        let table_count = count(Some((
            table_rates.read_capacity_units,
            table_rates.write_capacity_units,
        )));
        map.table = map.fresh(table_count, now_ms);
        for index in d.global_secondary_indexes.iter().flatten() {
            let rates = (index.provisioned_throughput.as_ref())
                .map(|t| (t.read_capacity_units, t.write_capacity_units));
            let partitions = map.fresh(count(rates), now_ms);
            map.indexes.insert(index.index_name.clone(), partitions);
        }
        map
    }

    /// The map of a table from before partitions were kept: one partition.
    pub fn single() -> PartitionMap {
        let mut map = PartitionMap::default();
        map.table = map.fresh(1, 0);
        map
    }

    fn fresh(&mut self, count: u32, now_ms: u64) -> Vec<Partition> {
        even_ranges(count)
            .into_iter()
            .map(|(lo, hi)| {
                let id = self.next_id;
                self.next_id += 1;
                Partition {
                    id,
                    lo,
                    hi,
                    parent: None,
                    created_ms: now_ms,
                }
            })
            .collect()
    }

    /// The table partition holding an item with this stored partition hash.
    pub fn table_partition(&self, hash: u64) -> &Partition {
        let placed = placement(hash);
        let at = self.table.partition_point(|p| p.hi < placed);
        &self.table[at.min(self.table.len() - 1)]
    }

    /// Splits table partition `id` into `lo..mid` and `mid..=hi` (of
    /// placement, [`placement`]); returns the two children, or None when
    /// `mid` does not fall inside it.
    pub fn split(&mut self, id: u32, mid: u64, now_ms: u64) -> Option<(Partition, Partition)> {
        split_in(&mut self.table, &mut self.next_id, (id, mid), now_ms)
    }

    /// [`PartitionMap::split`] for a partition of global index `index`.
    pub fn split_index(
        &mut self,
        index: &str,
        id: u32,
        mid: u64,
        now_ms: u64,
    ) -> Option<(Partition, Partition)> {
        let list = self.indexes.get_mut(index)?;
        split_in(list, &mut self.next_id, (id, mid), now_ms)
    }

    /// A global index added after the table was created gets partitions of
    /// its own; a deleted one loses them.
    pub fn follow_indexes(
        &mut self,
        d: &TableDescription,
        settings: PartitionSettings,
        now_ms: u64,
    ) {
        let names: Vec<String> = (d.global_secondary_indexes.iter().flatten())
            .map(|i| i.index_name.clone())
            .collect();
        self.indexes.retain(|name, _| names.contains(name));
        let fresh = PartitionMap::initial(d, settings, now_ms);
        for name in names {
            if !self.indexes.contains_key(&name) {
                let count = fresh.indexes.get(&name).map_or(1, |p| p.len() as u32);
                let partitions = self.fresh(count, now_ms);
                self.indexes.insert(name, partitions);
            }
        }
    }
}

/// Splits partition `id` of `list` at `mid` (ids from `next_id`).
fn split_in(
    list: &mut Vec<Partition>,
    next_id: &mut u32,
    (id, mid): (u32, u64),
    now_ms: u64,
) -> Option<(Partition, Partition)> {
    let at = list.iter().position(|p| p.id == id)?;
    let parent = list[at].clone();
    if mid <= parent.lo || mid > parent.hi {
        return None;
    }
    let child = |id, lo, hi| Partition {
        id,
        lo,
        hi,
        parent: Some(parent.id),
        created_ms: now_ms,
    };
    let left = child(*next_id, parent.lo, mid - 1);
    let right = child(*next_id + 1, mid, parent.hi);
    *next_id += 2;
    list.splice(at..=at, [left.clone(), right.clone()]);
    Some((left, right))
}

/// Each partition of `partitions` split in two at the middle of its range
/// (ids from `next_id`): a global index's partitions when its throughput
/// outgrows them.
pub(crate) fn doubled(partitions: &[Partition], next_id: &mut u32, now_ms: u64) -> Vec<Partition> {
    let mut out = Vec::with_capacity(partitions.len() * 2);
    for p in partitions {
        let mid = p.lo + (p.hi - p.lo) / 2;
        for (lo, hi) in [(p.lo, mid), (mid + 1, p.hi)] {
            out.push(Partition {
                id: *next_id,
                lo,
                hi,
                parent: Some(p.id),
                created_ms: now_ms,
            });
            *next_id += 1;
        }
    }
    out
}

/// What measuring one partition found: its items, their bytes, and the
/// placement below which about half of those bytes lie.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PartitionSize {
    pub items: u64,
    pub bytes: u64,
    pub median: u64,
}

/// Sub-ranges a partition's bytes are counted in to find its median.
const HISTOGRAM_BUCKETS: u64 = 1024;

/// Bytes per equal sub-range of one partition's placement range.
struct Histogram {
    lo: u64,
    width: u64,
    bytes: Vec<u64>,
}

impl Histogram {
    fn over(p: &Partition) -> Histogram {
        let width = ((p.hi - p.lo) / HISTOGRAM_BUCKETS).max(1);
        Histogram {
            lo: p.lo,
            width,
            bytes: vec![0; HISTOGRAM_BUCKETS as usize + 1],
        }
    }

    fn add(&mut self, at: u64, bytes: u64) {
        let bucket = ((at - self.lo) / self.width).min(HISTOGRAM_BUCKETS) as usize;
        self.bytes[bucket] += bytes;
    }

    /// The start of the first sub-range at which the bytes before it reach
    /// half of the total (the partition's start when one sub-range holds
    /// more than half: it cannot split there).
    fn median(&self, total: u64) -> u64 {
        let mut before = 0;
        for (bucket, bytes) in self.bytes.iter().enumerate() {
            if before * 2 >= total {
                return self.lo + bucket as u64 * self.width;
            }
            before += bytes;
        }
        self.lo
    }
}

impl Engine {
    /// Measures each table partition: one pass over the table's items
    /// (partitions are ranges of placement, not of stored key order).
    pub fn partition_sizes(&self, table: &Table) -> Result<Vec<(Partition, PartitionSize)>> {
        let map = table.partitions();
        let prefix = crate::keyspace::table_items(table.id);
        self.measure(&prefix, &map.table)
    }

    /// [`Engine::partition_sizes`] for global index `index`: a pass over its
    /// entries (their keys carry the index key's hash after the prefix).
    pub fn index_partition_sizes(
        &self,
        table: &Table,
        index: &crate::index::Index,
    ) -> Result<Vec<(Partition, PartitionSize)>> {
        let map = table.partitions();
        let Some(partitions) = map.indexes.get(&index.name) else {
            return Ok(Vec::new());
        };
        let prefix = crate::keyspace::index_entries(table.id, index.id);
        self.measure(&prefix, partitions)
    }

    /// Items and bytes per partition of the keys under `prefix`, whose
    /// partition hash follows the prefix.
    fn measure(
        &self,
        prefix: &[u8],
        partitions: &[Partition],
    ) -> Result<Vec<(Partition, PartitionSize)>> {
        let mut sizes = vec![PartitionSize::default(); partitions.len()];
        let mut histograms: Vec<Histogram> = partitions.iter().map(Histogram::over).collect();
        let end = crate::keyspace::prefix_end(prefix).map_or(Bound::Unbounded, Bound::Excluded);
        let mut low = Bound::Included(prefix.to_vec());
        loop {
            let page = (self.storage)
                .scan(
                    low.as_ref().map(Vec::as_slice),
                    end.as_ref().map(Vec::as_slice),
                    false,
                    SIZE_PAGE,
                )
                .map_err(crate::storage_error)?;
            for (key, value) in &page {
                let at = placement(hash_after(key, prefix.len()));
                let which = partitions
                    .partition_point(|p| p.hi < at)
                    .min(partitions.len() - 1);
                let bytes = (key.len() + value.len()) as u64;
                sizes[which].items += 1;
                sizes[which].bytes += bytes;
                histograms[which].add(at, bytes);
            }
            match page.last() {
                Some((key, _)) if page.len() == SIZE_PAGE => low = Bound::Excluded(key.clone()),
                _ => break,
            }
        }
        for (size, histogram) in sizes.iter_mut().zip(&histograms) {
            size.median = histogram.median(size.bytes);
        }
        Ok(partitions.iter().cloned().zip(sizes).collect())
    }

    /// Splits every partition of `table` larger than the split size, at its
    /// byte median (a partition whose bytes are all under one hash cannot
    /// split: DynamoDB would split by sort key, Ferrodyn does not). Cheap
    /// when nothing can be over: the table's own size is checked first.
    pub(crate) fn split_large_partitions(&self, table: &Arc<Table>) -> Result<usize> {
        let limit = self.partition_settings.split_bytes;
        if self.shared() {
            // Other nodes' writes reach this node's figures only here.
            self.refresh_stats(table)?;
        }
        let total = table.stats().size_bytes.max(0) as u64;
        let globals: Vec<_> = (table.indexes().into_iter())
            .filter(|i| i.kind == crate::index::IndexKind::Global)
            .collect();
        let largest = globals
            .iter()
            .map(|i| i.stats().size_bytes.max(0) as u64)
            .max()
            .unwrap_or(0);
        if total.max(largest) <= limit || !table.partitions_grew(total + largest, limit) {
            return Ok(0);
        }
        let mut splits = 0;
        for (partition, size) in self.partition_sizes(table)? {
            if size.bytes > limit && size.median > partition.lo {
                splits += usize::from(self.split_partition(table, partition.id, size.median)?);
            }
        }
        for index in &globals {
            for (partition, size) in self.index_partition_sizes(table, index)? {
                if size.bytes > limit && size.median > partition.lo {
                    splits += usize::from(self.split_index_partition(
                        table,
                        &index.name,
                        partition.id,
                        size.median,
                    )?);
                }
            }
        }
        if splits > 0 {
            // A child may still be over: measure again next time.
            table.remeasure_partitions();
        }
        Ok(splits)
    }
}

/// The partition hash stored right after a key's `prefix_len` bytes.
fn hash_after(key: &[u8], prefix_len: usize) -> u64 {
    key.get(prefix_len..prefix_len + 8)
        .and_then(|bytes| bytes.try_into().ok())
        .map_or(0, u64::from_be_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provisioned_counts_follow_the_published_rule() {
        assert_eq!(partitions_for(1_000, 500), 1);
        assert_eq!(partitions_for(1_000, 1_000), 2);
        assert_eq!(partitions_for(5_000, 2_000), 4);
        assert_eq!(partitions_for(0, 0), 1);
    }

    #[test]
    fn placement_spreads_keys_that_differ_only_at_their_end() {
        let mut map = PartitionMap::default();
        map.table = map.fresh(4, 0);
        let mut counts = [0usize; 4];
        for i in 0..1000 {
            let hash = crate::keys::partition_hash(&ferrodyn_types::AttributeValue::S(format!(
                "order-{i:03}"
            )));
            counts[map.table_partition(hash).id as usize] += 1;
        }
        assert!(counts.iter().all(|&c| c > 200), "{counts:?}");
    }

    #[test]
    fn even_ranges_cover_the_hash_space_without_gaps() {
        for count in [1, 2, 3, 4, 7] {
            let ranges = even_ranges(count);
            assert_eq!(ranges.len(), count as usize);
            assert_eq!(ranges[0].0, 0);
            assert_eq!(ranges.last().unwrap().1, u64::MAX);
            for pair in ranges.windows(2) {
                assert_eq!(pair[0].1 + 1, pair[1].0);
            }
        }
    }

    #[test]
    fn lookup_and_split_keep_the_ranges_contiguous() {
        let mut map = PartitionMap::default();
        map.table = map.fresh(4, 0);
        let p = map.table.iter().find(|p| p.holds(7)).unwrap().clone();
        assert_eq!(map.table_partition(7).id, p.id);
        let at = placement(7);
        let (left, right) = map.split(p.id, at, 5).unwrap();
        assert_eq!((left.lo, left.hi + 1), (p.lo, right.lo));
        assert_eq!(right.hi, p.hi);
        assert_eq!(map.table.len(), 5);
        assert_eq!(
            map.table_partition(7).id,
            right.id,
            "its placement starts the right half"
        );
        assert!(
            map.split(right.id, right.lo, 6).is_none(),
            "a split needs room on both sides"
        );
    }
}
