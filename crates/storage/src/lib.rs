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

use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

mod error;
mod fjall;
mod memory;

pub use crate::error::StorageError;
pub use crate::fjall::{FjallOptions, FjallStorage};
pub use crate::memory::MemoryStorage;

/// A stored key. Plain owned bytes: keys are short (tens of bytes), so a
/// copy at the trait boundary is cheaper than the API cost of a shared type.
pub type Key = Vec<u8>;

/// A stored value. Plain owned bytes, like [`Key`]; values are at most an
/// item (400 KB) and are usually decoded right away by the caller.
pub type Value = Vec<u8>;

/// One mutation inside an atomic [`Storage::write`] batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WriteOp {
    /// Sets `key` to `value`, replacing any previous value.
    Put(Key, Value),
    /// Removes `key`; deleting a missing key is not an error.
    Delete(Key),
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
    /// configured [`Durability`] when it returns.
    fn write(&self, ops: Vec<WriteOp>) -> Result<(), StorageError>;

    /// Forces everything written so far to disk (used at shutdown).
    fn flush(&self) -> Result<(), StorageError>;
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
}
