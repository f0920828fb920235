//! Range reads for Query and Scan (of a table or of one of its secondary
//! indexes, whose entries are stored the same way): walk a storage key range in bounded
//! chunks, stopping at DynamoDB's page limits (Limit items evaluated, or 1 MB
//! of item data read), apply the filter, and report where to resume.
//!
//! Memory is bounded by the page, never by the table: storage is read in
//! chunks of at most [`CHUNK`] entries.
//!
//! The ranges themselves are built here too, from what the request names:
//! read/query.rs (a partition and its sort-key condition) and read/scan.rs
//! (the whole table or a parallel-scan segment), each resumed after an
//! ExclusiveStartKey; the server never builds a storage key.

use crate::capacity::read_units;
use crate::index::Index;
use crate::items::{parse_item_json, StoredItem};
use crate::table::Table;
use crate::Engine;
use ferrodyn_expr::Condition;
use ferrodyn_types::{Item, Result};
use std::ops::Bound;

mod query;
mod scan;

pub use query::{query_range, QueryKeys};
pub use scan::{scan_range, ScanStart, Segment};

/// DynamoDB stops a Query or Scan page once it has read 1 MB of items.
pub const PAGE_BYTES: usize = 1024 * 1024;
/// Storage entries fetched per call.
const CHUNK: usize = 256;

/// A storage key range to read.
pub struct KeyRange {
    pub start: Bound<Vec<u8>>,
    pub end: Bound<Vec<u8>>,
}

impl KeyRange {
    /// Whether a storage key lies within the range.
    pub fn contains(&self, key: &[u8]) -> bool {
        let above = match &self.start {
            Bound::Included(start) => key >= start.as_slice(),
            Bound::Excluded(start) => key > start.as_slice(),
            Bound::Unbounded => true,
        };
        let below = match &self.end {
            Bound::Included(end) => key <= end.as_slice(),
            Bound::Excluded(end) => key < end.as_slice(),
            Bound::Unbounded => true,
        };
        above && below
    }
}

/// An item of a page: its stored JSON, decoded only when something needs to
/// look inside (a filter, a projection, the page's last key), so that a plain
/// Query or Scan sends stored bytes without decoding and re-encoding them.
pub struct PageItem {
    pub json: Vec<u8>,
    parsed: Option<Item>,
}

impl PageItem {
    pub fn new(json: Vec<u8>, parsed: Option<Item>) -> PageItem {
        PageItem { json, parsed }
    }

    /// The decoded item.
    pub fn item(&mut self) -> Result<&Item> {
        if self.parsed.is_none() {
            self.parsed = Some(parse_item_json(&self.json)?);
        }
        Ok(self.parsed.as_ref().expect("just decoded"))
    }
}

/// One page of a Query or Scan.
pub struct Page {
    /// Items read that passed the filter.
    pub items: Vec<PageItem>,
    /// Items read (before the filter): ScannedCount.
    pub scanned: usize,
    /// The key of the last item read, when the page stopped before the end.
    pub last_evaluated: Option<Item>,
    /// Total size of the items read, which is what the page costs.
    pub bytes_read: usize,
}

impl Page {
    pub fn read_units(&self, consistent: bool) -> f64 {
        read_units(self.bytes_read, consistent)
    }
}

impl Engine {
    /// Reads one page of `table` within `range`, in key order or reversed.
    pub fn read_page(
        &self,
        table: &Table,
        index: Option<&Index>,
        range: KeyRange,
        reverse: bool,
        limit: Option<usize>,
        filter: Option<&Condition>,
    ) -> Result<Page> {
        let mut page = Page {
            items: Vec::new(),
            scanned: 0,
            last_evaluated: None,
            bytes_read: 0,
        };
        let (mut start, mut end) = (range.start, range.end);
        let limit = limit.unwrap_or(usize::MAX);
        loop {
            let want = CHUNK.min(limit - page.scanned);
            let chunk = self
                .storage
                .scan(as_ref(&start), as_ref(&end), reverse, want)
                .map_err(crate::storage_error)?;
            let exhausted = chunk.len() < want;
            let mut last_key = None;
            for (key, value) in chunk {
                let stored = StoredItem::decode(value)?;
                page.scanned += 1;
                page.bytes_read += stored.size;
                let full = page.scanned >= limit || page.bytes_read >= PAGE_BYTES;
                let mut entry = PageItem::new(stored.json, None);
                if full {
                    let item = entry.item()?;
                    page.last_evaluated = Some(match index {
                        Some(index) => index.last_evaluated_key(&table.schema, item),
                        None => table.schema.extract(item),
                    });
                }
                let passes = match filter {
                    Some(f) => f.evaluate(Some(entry.item()?))?,
                    None => true,
                };
                if passes {
                    page.items.push(entry);
                }
                if full {
                    return Ok(page);
                }
                last_key = Some(key);
            }
            if exhausted {
                return Ok(page);
            }
            let resume = last_key.expect("a full chunk has a last key");
            if reverse {
                end = Bound::Excluded(resume);
            } else {
                start = Bound::Excluded(resume);
            }
        }
    }
}

fn as_ref(bound: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    match bound {
        Bound::Included(k) => Bound::Included(k.as_slice()),
        Bound::Excluded(k) => Bound::Excluded(k.as_slice()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// Whether a chunk walk goes on.
pub(crate) enum Walk {
    Continue,
    Stop,
}

impl Engine {
    /// Walks every entry whose key starts with `prefix`, `size` entries at a
    /// time, for background work (index backfill, TTL sweeps) that must not
    /// hold a table's writes (or its items' locks) for the whole table.
    pub(crate) fn walk_prefix(
        &self,
        prefix: &[u8],
        size: usize,
        mut visit: impl FnMut(&[(Vec<u8>, Vec<u8>)]) -> Result<Walk>,
    ) -> Result<()> {
        let end = crate::keyspace::prefix_end(prefix);
        let mut start = Bound::Included(prefix.to_vec());
        loop {
            let end_bound = end.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
            let chunk = self
                .storage
                .scan(as_ref(&start), end_bound, false, size)
                .map_err(crate::storage_error)?;
            let Some((last, _)) = chunk.last() else {
                return Ok(());
            };
            let last = last.clone();
            if let Walk::Stop = visit(&chunk)? {
                return Ok(());
            }
            if chunk.len() < size {
                return Ok(());
            }
            start = Bound::Excluded(last);
        }
    }
}
