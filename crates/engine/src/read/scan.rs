//! The storage key range of a Scan: every item of the table (or every entry
//! of a secondary index), or one segment of a parallel scan, resumed after
//! an ExclusiveStartKey; and the partition hashes a page covered, which is
//! what it costs.

use super::{KeyRange, Page};
use crate::capacity::scan_units;
use crate::index::{hash_bound as index_hash_bound, Index};
use crate::keys::{hash_bound, partition_hash};
use crate::keyspace::{index_entries, prefix_end, table_items};
use crate::table::Table;
use ferrodyn_types::{DynamoError, Item, Result};
use std::ops::Bound;

/// One part of a parallel scan: segment `segment` (zero-based, below
/// `total`) of `total`.
#[derive(Clone, Copy, Debug)]
pub struct Segment {
    pub segment: u64,
    pub total: u64,
}

impl Segment {
    /// The hash range [low, high) of the segment; `None` for the top of the space.
    pub fn hashes(self) -> (u64, Option<u64>) {
        let bound = |s: u64| ((u128::from(s) << 64) / u128::from(self.total)) as u64;
        let high = (self.segment + 1 < self.total).then(|| bound(self.segment + 1));
        (bound(self.segment), high)
    }
}

/// Where a Scan page starts in the partition-hash space, to price the page.
pub struct ScanStart {
    first_hash: u64,
    segment: Option<Segment>,
}

/// The range a Scan reads, and where it starts. Table items and index
/// entries are both laid out by partition hash, so segments are hash ranges
/// in either; a start key must lie inside the segment.
pub fn scan_range(
    table: &Table,
    index: Option<&Index>,
    segment: Option<Segment>,
    start_key: Option<&Item>,
) -> Result<(KeyRange, ScanStart)> {
    let at_hash = |hash: u64| match index {
        Some(index) => index_hash_bound(table.id, index.id, hash),
        None => hash_bound(table.id, hash),
    };
    let prefix = match index {
        Some(index) => index_entries(table.id, index.id),
        None => table_items(table.id),
    };
    let whole_end = prefix_end(&prefix).map_or(Bound::Unbounded, Bound::Excluded);
    let mut range = match segment {
        None => KeyRange {
            start: Bound::Included(prefix.clone()),
            end: whole_end,
        },
        Some(segment) => {
            let (low, high) = segment.hashes();
            KeyRange {
                start: Bound::Included(at_hash(low)),
                end: match high {
                    Some(high) => Bound::Excluded(at_hash(high)),
                    None => whole_end,
                },
            }
        }
    };
    let mut first_hash = segment.map_or(0, |s| s.hashes().0);
    if let Some(start_key) = start_key {
        let (encoded, hash) = start_entry(table, index, start_key)?;
        if let Some(segment) = segment {
            let (low, high) = segment.hashes();
            if hash < low || high.is_some_and(|h| hash >= h) {
                return Err(DynamoError::validation(
                    "The provided Exclusive start key does not map to the provided segment",
                ));
            }
        }
        range.start = Bound::Excluded(encoded);
        first_hash = hash;
    }
    Ok((
        range,
        ScanStart {
            first_hash,
            segment,
        },
    ))
}

/// The storage key and partition hash of a Scan's ExclusiveStartKey,
/// checked against the key schema it must follow.
fn start_entry(table: &Table, index: Option<&Index>, start_key: &Item) -> Result<(Vec<u8>, u64)> {
    match index {
        Some(index) => {
            let encoded = index.start_key(table.id, &table.schema, start_key)?;
            Ok((encoded, index.schema.partition_hash(start_key)))
        }
        None => {
            table.schema.validate_key(start_key).map_err(|e| {
                DynamoError::validation(format!(
                    "The provided starting key is invalid: {}",
                    e.message
                ))
            })?;
            Ok((
                table.schema.encode(table.id, start_key),
                partition_hash(&start_key[&table.schema.hash.name]),
            ))
        }
    }
}

impl ScanStart {
    /// The partition hash the scan starts at.
    pub fn first_hash(&self) -> u64 {
        self.first_hash
    }

    /// What the page read costs: its bytes, over the partition hashes from
    /// where it started to its last key (or the segment's or space's end).
    pub fn units(
        &self,
        table: &Table,
        index: Option<&Index>,
        page: &Page,
        consistent: bool,
    ) -> f64 {
        let last = match (&page.last_evaluated, self.segment) {
            (Some(key), _) => match index {
                Some(index) => index.schema.partition_hash(key),
                None => partition_hash(&key[&table.schema.hash.name]),
            },
            (None, Some(segment)) => segment.hashes().1.map_or(u64::MAX, |h| h - 1),
            (None, None) => u64::MAX,
        };
        scan_units(page.bytes_read, consistent, self.first_hash, last)
    }
}

#[cfg(test)]
mod tests {
    use super::Segment;

    #[test]
    fn segments_cover_the_hash_space_without_overlap() {
        for total in [1u64, 2, 3, 7, 1000] {
            let mut expected_low = 0;
            for segment in 0..total {
                let (low, high) = Segment { segment, total }.hashes();
                assert_eq!(low, expected_low);
                match high {
                    Some(h) => expected_low = h,
                    None => assert_eq!(segment, total - 1),
                }
            }
        }
    }
}
