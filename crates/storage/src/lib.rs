//! Ferrodyn's embedded storage layer: one ordered byte-key/byte-value map
//! behind the small [`Storage`] trait, with two backends.
//!
//! - [`open_fjall`] / [`FjallStorage`]: the durable backend, built on the
//!   fjall LSM-tree (chosen for its write throughput and per-batch durability
//!   control; see `shared/research/crates.md` §2; redb is the fallback, which
//!   is why everything above this crate talks to the trait only).
//! - [`open_memory`] / [`MemoryStorage`]: a `BTreeMap` behind a lock, for
//!   `ferrodyn serve --in-memory` and tests.
//!
//! The engine above owns the key layout (it prefixes its own keys) and
//! serializes writers itself; backends only promise that concurrent readers
//! and writes are safe and that every [`Storage::write`] batch is atomic.
//!
//! Shared backends (PostgreSQL, in the `ferrodyn-storage-postgres` crate)
//! serve several engine processes at once, whose locks know nothing of each
//! other. For them [`Storage::write_checked`] is the optimistic-concurrency
//! commit: a batch applied only if every key the planner read still holds
//! what it read, else [`StorageError::Conflict`].

use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

mod error;
mod fjall;
mod format;
mod group_sync;
mod holder;
mod memory;
mod overlay;

pub use crate::error::StorageError;
pub use crate::fjall::{FjallOptions, FjallStorage};
pub use crate::format::{DATA_FORMAT, FORMAT_FILE};

/// The tag and version a data directory's marker (or a shared database's
/// metadata row) records: `ferrodyn-data-format N`.
pub const FORMAT_TAG: &str = "ferrodyn-data-format";
pub use crate::memory::MemoryStorage;

/// The first check that does not hold against `current` (a reader of the
/// stored value), for embedded backends checking under their commit lock.
pub(crate) fn first_failed_check(
    checks: &[ReadCheck],
    mut current: impl FnMut(&[u8]) -> Result<Option<Value>, StorageError>,
) -> Result<Option<Key>, StorageError> {
    for check in checks {
        if current(&check.key)? != check.expected {
            return Ok(Some(check.key.clone()));
        }
    }
    Ok(None)
}

/// A stored key. Plain owned bytes: keys are short (tens of bytes), so a
/// copy at the trait boundary is cheaper than the API cost of a shared type.
pub type Key = Vec<u8>;

/// A stored value. Plain owned bytes, like [`Key`]; values are at most an
/// item (400 KB) and are usually decoded right away by the caller.
pub type Value = Vec<u8>;

/// Longest key a backend accepts. Keys must also be non-empty. This is
/// fjall's limit (it stores key lengths as `u16` and panics on empty keys);
/// the in-memory backend enforces the same so the two stay interchangeable.
pub const MAX_KEY_LEN: usize = u16::MAX as usize;

/// One mutation inside an atomic [`Storage::write`] batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteOp {
    /// Sets `key` to `value`, replacing any previous value.
    Put(Key, Value),
    /// Removes `key`; deleting a missing key is not an error.
    Delete(Key),
}

/// A key a write planner read, and what it saw there (`None`: absent).
/// [`Storage::write_checked`] commits only while every check still holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadCheck {
    pub key: Key,
    pub expected: Option<Value>,
}

/// How far a [`Storage::write`] is persisted before it returns.
///
/// The in-memory backend ignores this (it has nothing to persist).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// Written to the OS before returning: survives a process crash
    /// (kill -9), not a power loss or kernel crash. The default.
    #[default]
    Buffered,
    /// fsync before returning: survives power loss.
    Sync,
    /// Nothing forced: the write may sit in a user-space buffer and be lost
    /// by a process crash (fastest; tests). [`Storage::flush`] still works.
    None,
}

/// An ordered, atomic-batch key-value store.
///
/// Keys sort as unsigned bytes (lexicographic, shorter prefix first).
pub trait Storage: Send + Sync + 'static {
    /// Value stored under key.
    fn get(&self, key: &[u8]) -> Result<Option<Value>, StorageError>;

    /// Up to `limit` entries with start <= key < end (per the bounds, each
    /// inclusive, exclusive or unbounded), ascending or, if `reverse`,
    /// descending; pages are how callers bound memory. An empty or inverted
    /// range yields no entries (never a panic); `limit == 0` yields none.
    /// Each call reads one consistent snapshot: never half of a batch.
    fn scan(
        &self,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        reverse: bool,
        limit: usize,
    ) -> Result<Vec<(Key, Value)>, StorageError>;

    /// Applies all ops atomically (all or none visible, all or none after a
    /// crash), in order (a later op on the same key wins), durable per the
    /// configured [`Durability`] when it returns. A batch with an empty key or
    /// one over [`MAX_KEY_LEN`] bytes is rejected whole
    /// ([`StorageError::InvalidKey`]).
    fn write(&self, ops: Vec<WriteOp>) -> Result<(), StorageError>;

    /// [`Storage::write`], committed only if every key in `checks` still
    /// holds its `expected` value (or absence) at the moment the batch is
    /// applied, atomically with the check; otherwise nothing is written and
    /// [`StorageError::Conflict`] names the first key that changed (or none,
    /// when the backend's own concurrency control aborted the commit).
    /// Embedded backends check under their own commit lock (one process,
    /// where the engine's locks already keep planners apart, so the check
    /// only fails if a caller broke that rule); shared backends run check
    /// and batch in one serializable database transaction.
    fn write_checked(&self, checks: Vec<ReadCheck>, ops: Vec<WriteOp>) -> Result<(), StorageError>;

    /// True when every call is a network round trip to a database shared
    /// with other Ferrodyn processes: the server then runs every request on
    /// its blocking pool, and the engine keeps its catalog, tokens, stream
    /// sequence and background-work lease in storage rather than in memory.
    fn shared(&self) -> bool {
        false
    }

    /// Forces everything written so far to disk (used at shutdown).
    fn flush(&self) -> Result<(), StorageError>;

    /// Frees at once the space of keys in `start <= key < end` (`end` None:
    /// unbounded) that the caller will never read again, by dropping whole
    /// storage files holding nothing else. Best effort: keys in memory
    /// buffers or in files that straddle the range stay, and keys earlier
    /// deleted may even reappear (their tombstones' files dropped), so the
    /// caller deletes every key left in the range afterwards. Keys outside
    /// the range are never touched. The default does nothing.
    fn reclaim_range(&self, start: &[u8], end: Option<&[u8]>) -> Result<(), StorageError> {
        let _ = (start, end);
        Ok(())
    }

    /// Opens a read-only [`StorageView`] of the keys in `ranges` as they are
    /// at this instant: every batch whose `write` returned before this call
    /// is in it, none that begins after it returned. Opening costs O(1) and
    /// holding the view never holds off writers, but it costs the backend
    /// resources (pinned versions, an open database transaction) for as long
    /// as it lives, so a view lives for one copy only (a backup). No default:
    /// a backend that read live data here would silently break consistency.
    fn open_view(&self, ranges: &[KeyRange]) -> Result<Box<dyn StorageView>, StorageError>;
}

/// A key range `[start, end)` (`end` None: unbounded), as [`Storage::open_view`] takes them.
pub type KeyRange = (Key, Option<Key>);

/// A read-only view of a store at one instant (see [`Storage::open_view`]).
/// Reads outside the ranges it was opened for fail with
/// [`StorageError::OutsideView`] (the in-memory backend keeps the past of
/// those ranges only).
pub trait StorageView: Send {
    /// Value stored under key at the view's instant.
    fn get(&self, key: &[u8]) -> Result<Option<Value>, StorageError>;

    /// [`Storage::scan`] at the view's instant.
    fn scan(
        &self,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        reverse: bool,
        limit: usize,
    ) -> Result<Vec<(Key, Value)>, StorageError>;
}

/// Whether a read of `[start, end)` lies inside one of `ranges` (every view
/// checks this first, so all backends refuse the same reads).
pub fn view_covers(ranges: &[KeyRange], start: Bound<&[u8]>, end: Bound<&[u8]>) -> bool {
    ranges.iter().any(|(from, to)| {
        let start_inside = match start {
            Bound::Included(s) | Bound::Excluded(s) => s >= from.as_slice(),
            Bound::Unbounded => from.is_empty(),
        };
        let end_inside = match (end, to) {
            (_, None) => true,
            (Bound::Included(e), Some(to)) => e < to.as_slice(),
            (Bound::Excluded(e), Some(to)) => e <= to.as_slice(),
            (Bound::Unbounded, Some(_)) => false,
        };
        start_inside && end_inside
    })
}

/// [`view_covers`] for one key.
pub fn view_covers_key(ranges: &[KeyRange], key: &[u8]) -> bool {
    view_covers(ranges, Bound::Included(key), Bound::Included(key))
}

/// Opens (creating if needed) a fjall database in directory `path`, with the
/// default memory budget (see [`FjallOptions`]).
pub fn open_fjall(path: &Path, durability: Durability) -> Result<Arc<dyn Storage>, StorageError> {
    let options = FjallOptions {
        durability,
        ..FjallOptions::default()
    };
    Ok(Arc::new(FjallStorage::open(path, options)?))
}

/// A new, empty in-memory store.
pub fn open_memory() -> Arc<dyn Storage> {
    Arc::new(MemoryStorage::new())
}

impl WriteOp {
    /// The key this op writes.
    pub fn key(&self) -> &[u8] {
        match self {
            WriteOp::Put(k, _) | WriteOp::Delete(k) => k,
        }
    }
}

/// Rejects a batch holding a key outside `1..=MAX_KEY_LEN` bytes, before any
/// of it is applied (every backend calls this first).
pub fn validate_ops(ops: &[WriteOp]) -> Result<(), StorageError> {
    match ops
        .iter()
        .map(|op| op.key().len())
        .find(|len| *len == 0 || *len > MAX_KEY_LEN)
    {
        Some(len) => Err(StorageError::InvalidKey { len }),
        None => Ok(()),
    }
}

/// A pair of scan bounds, start then end.
pub(crate) type Range<'a> = (Bound<&'a [u8]>, Bound<&'a [u8]>);

/// Rewrites scan bounds into equivalent ones that fjall accepts (it panics
/// on bound keys over [`MAX_KEY_LEN`] bytes), given that every stored key is
/// 1..=MAX_KEY_LEN bytes. `None` means the range holds no storable key.
///
/// For a bound `b` longer than the limit and `p` its first MAX_KEY_LEN bytes,
/// a storable key `k` satisfies `k < b` exactly when `k <= p`, and `k > b`
/// exactly when `k > p` (`k == b` is impossible). An empty bound key is below
/// every storable key.
pub(crate) fn storable_bounds<'a>(
    start: Bound<&'a [u8]>,
    end: Bound<&'a [u8]>,
) -> Option<Range<'a>> {
    let start = match start {
        Bound::Included(s) | Bound::Excluded(s) if s.is_empty() => Bound::Unbounded,
        Bound::Included(s) | Bound::Excluded(s) if s.len() > MAX_KEY_LEN => {
            Bound::Excluded(&s[..MAX_KEY_LEN])
        }
        other => other,
    };
    let end = match end {
        Bound::Included(e) | Bound::Excluded(e) if e.is_empty() => return None,
        Bound::Included(e) | Bound::Excluded(e) if e.len() > MAX_KEY_LEN => {
            Bound::Included(&e[..MAX_KEY_LEN])
        }
        other => other,
    };
    (!range_is_empty(start, end)).then_some((start, end))
}

/// Whether the range `(start, end)` can hold no key at all: start above end,
/// or start == end with either side exclusive. Both backends check this first,
/// because `BTreeMap::range` panics on such ranges and fjall's behaviour on
/// them is not documented.
pub(crate) fn range_is_empty(start: Bound<&[u8]>, end: Bound<&[u8]>) -> bool {
    match (start, end) {
        (Bound::Included(s), Bound::Included(e)) => s > e,
        (Bound::Included(s), Bound::Excluded(e))
        | (Bound::Excluded(s), Bound::Included(e))
        | (Bound::Excluded(s), Bound::Excluded(e)) => s >= e,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_ranges() {
        use Bound::*;
        let (a, b): (&[u8], &[u8]) = (b"a", b"b");
        assert!(!range_is_empty(Included(a), Included(a)));
        assert!(range_is_empty(Included(a), Excluded(a)));
        assert!(range_is_empty(Excluded(a), Included(a)));
        assert!(range_is_empty(Included(b), Included(a)));
        assert!(!range_is_empty(Excluded(a), Excluded(b)));
        assert!(!range_is_empty(Unbounded, Excluded(a)));
        assert!(!range_is_empty(Included(b), Unbounded));
    }

    #[test]
    fn storable_bounds_clamp_long_and_empty_keys() {
        use Bound::*;
        let long = vec![7u8; MAX_KEY_LEN + 3];
        let p = &long[..MAX_KEY_LEN];
        let empty: &[u8] = b"";
        // assert! rather than assert_eq!: a failure would print 64 KiB keys.
        assert!(storable_bounds(Included(&long), Unbounded) == Some((Excluded(p), Unbounded)));
        assert!(storable_bounds(Unbounded, Excluded(&long)) == Some((Unbounded, Included(p))));
        assert!(storable_bounds(Included(&long), Included(&long)).is_none());
        assert_eq!(
            storable_bounds(Included(empty), Unbounded),
            Some((Unbounded, Unbounded))
        );
        assert_eq!(storable_bounds(Unbounded, Excluded(empty)), None);
        assert_eq!(storable_bounds(Excluded(&long), Included(p)), None);
    }
}
