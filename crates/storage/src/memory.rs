//! The in-memory backend: a `BTreeMap` behind a `parking_lot::RwLock`.
//!
//! Used by `ferrodyn serve --in-memory` and by tests. A write takes the lock
//! once for the whole batch, so readers see all of it or none of it. Keys and
//! values are kept as boxed slices: a `Vec` handed in by a caller often has
//! spare capacity (up to twice its length), which would otherwise stay
//! allocated for as long as the entry lives.
//!
//! Views ([`Storage::open_view`]) are pre-image overlays: opening one
//! registers it under the write lock (that is its instant), and from then on
//! every write to a key in its ranges first records what the key held, on
//! its first touch only, so the view reads the map through what it
//! recorded. Writes pay one emptiness check while no view is open; memory
//! grows with the keys of the viewed ranges written while the view lives.

use std::collections::BTreeMap;
use std::iter::Peekable;
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;

use crate::{
    first_failed_check, range_is_empty, validate_ops, view_covers, view_covers_key, Key, KeyRange,
    ReadCheck, Storage, StorageError, StorageView, Value, WriteOp,
};

/// Once deletes have freed this many bytes of keys and values since the last
/// time (a dropped table being purged), freed memory goes back to the
/// operating system. Counted in bytes, not per batch: `malloc_trim` walks the
/// whole heap, and the statistics folder deletes 1,000 small delta records a
/// batch several times a second under write load; trimming after each such
/// batch (as a 1,000-delete threshold did) cost more than the writes and
/// collapsed in-memory throughput.
const RELEASE_AFTER_BYTES: usize = 16 << 20;

/// Returns freed heap pages to the OS. glibc keeps freed memory for reuse, so
/// without this a server that deleted a big in-memory table would keep its
/// peak size forever.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn release_free_memory() {
    // SAFETY: malloc_trim only walks glibc's own allocator state; it takes no
    // pointers from us and is documented as safe to call at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn release_free_memory() {}

/// A stored key or value, exactly as long as its bytes.
type Bytes = Box<[u8]>;

/// An ordered map in RAM; nothing survives the process.
#[derive(Debug, Default)]
pub struct MemoryStorage {
    inner: Arc<RwLock<Inner>>,
    /// Bytes deleted since freed memory was last handed back.
    freed: AtomicUsize,
    /// The id of the next view.
    next_view: AtomicU64,
}

/// The map and the views open on it, under one lock.
#[derive(Debug, Default)]
struct Inner {
    map: BTreeMap<Bytes, Bytes>,
    views: Vec<ViewState>,
}

/// What one open view needs beyond the live map.
#[derive(Debug)]
struct ViewState {
    id: u64,
    ranges: Vec<KeyRange>,
    /// Keys of `ranges` written since the view opened, with what they held
    /// then (`None`: absent).
    pre: BTreeMap<Bytes, Option<Bytes>>,
}

impl MemoryStorage {
    /// A new, empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Inner {
    /// Records `old` as `key`'s pre-image in every view covering it that
    /// has none yet. Called before each op while views are open.
    fn remember(&mut self, key: &[u8]) {
        let Inner { map, views } = self;
        for view in views.iter_mut() {
            if view_covers_key(&view.ranges, key) && !view.pre.contains_key(key) {
                view.pre.insert(key.into(), map.get(key).cloned());
            }
        }
    }
}

impl Storage for MemoryStorage {
    fn get(&self, key: &[u8]) -> Result<Option<Value>, StorageError> {
        Ok(self.inner.read().map.get(key).map(|v| v.to_vec()))
    }

    fn scan(
        &self,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        reverse: bool,
        limit: usize,
    ) -> Result<Vec<(Key, Value)>, StorageError> {
        if limit == 0 || range_is_empty(start, end) {
            return Ok(Vec::new());
        }
        let inner = self.inner.read();
        let range = inner.map.range::<[u8], _>((start, end));
        let clone = |(k, v): (&Bytes, &Bytes)| (k.to_vec(), v.to_vec());
        Ok(if reverse {
            range.rev().take(limit).map(clone).collect()
        } else {
            range.take(limit).map(clone).collect()
        })
    }

    fn write(&self, ops: Vec<WriteOp>) -> Result<(), StorageError> {
        self.write_checked(Vec::new(), ops)
    }

    /// Checks and applies under one hold of the map's write lock.
    fn write_checked(&self, checks: Vec<ReadCheck>, ops: Vec<WriteOp>) -> Result<(), StorageError> {
        validate_ops(&ops)?;
        let mut freed = 0;
        let mut inner = self.inner.write();
        let changed = first_failed_check(&checks, |k| Ok(inner.map.get(k).map(|v| v.to_vec())))?;
        if let Some(key) = changed {
            return Err(StorageError::Conflict { key: Some(key) });
        }
        let viewed = !inner.views.is_empty();
        for op in ops {
            if viewed {
                inner.remember(op.key());
            }
            let map = &mut inner.map;
            match op {
                WriteOp::Put(k, v) => {
                    map.insert(k.into_boxed_slice(), v.into_boxed_slice());
                }
                WriteOp::Delete(k) => {
                    if let Some(value) = map.remove(k.as_slice()) {
                        freed += k.len() + value.len();
                    }
                }
            }
        }
        drop(inner);
        if freed > 0
            && self.freed.fetch_add(freed, Ordering::Relaxed) + freed >= RELEASE_AFTER_BYTES
        {
            self.freed.store(0, Ordering::Relaxed);
            release_free_memory();
        }
        Ok(())
    }

    fn flush(&self) -> Result<(), StorageError> {
        Ok(())
    }

    fn open_view(&self, ranges: &[KeyRange]) -> Result<Box<dyn StorageView>, StorageError> {
        let id = self.next_view.fetch_add(1, Ordering::Relaxed);
        self.inner.write().views.push(ViewState {
            id,
            ranges: ranges.to_vec(),
            pre: BTreeMap::new(),
        });
        Ok(Box::new(MemoryView {
            inner: Arc::clone(&self.inner),
            id,
            ranges: ranges.to_vec(),
        }))
    }
}

/// A view of the map at the instant it was registered.
struct MemoryView {
    inner: Arc<RwLock<Inner>>,
    id: u64,
    ranges: Vec<KeyRange>,
}

impl MemoryView {
    fn state<'a>(&self, inner: &'a Inner) -> &'a ViewState {
        (inner.views.iter())
            .find(|view| view.id == self.id)
            .expect("a view stays registered until it is dropped")
    }
}

impl StorageView for MemoryView {
    fn get(&self, key: &[u8]) -> Result<Option<Value>, StorageError> {
        if !view_covers_key(&self.ranges, key) {
            return Err(StorageError::OutsideView);
        }
        let inner = self.inner.read();
        let value = match self.state(&inner).pre.get(key) {
            Some(before) => before.as_ref(),
            None => inner.map.get(key),
        };
        Ok(value.map(|v| v.to_vec()))
    }

    fn scan(
        &self,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        reverse: bool,
        limit: usize,
    ) -> Result<Vec<(Key, Value)>, StorageError> {
        if !view_covers(&self.ranges, start, end) {
            return Err(StorageError::OutsideView);
        }
        if limit == 0 || range_is_empty(start, end) {
            return Ok(Vec::new());
        }
        let inner = self.inner.read();
        let live = inner.map.range::<[u8], _>((start, end));
        let pre = self.state(&inner).pre.range::<[u8], _>((start, end));
        Ok(if reverse {
            Overlaid::new(live.rev(), pre.rev(), true)
                .take(limit)
                .collect()
        } else {
            Overlaid::new(live, pre, false).take(limit).collect()
        })
    }
}

impl Drop for MemoryView {
    fn drop(&mut self) {
        self.inner.write().views.retain(|view| view.id != self.id);
    }
}

/// The live map's entries with a view's pre-images laid over them: a key
/// with a pre-image reads as that (or not at all, when it was absent).
struct Overlaid<'a, L, P>
where
    L: Iterator<Item = (&'a Bytes, &'a Bytes)>,
    P: Iterator<Item = (&'a Bytes, &'a Option<Bytes>)>,
{
    live: Peekable<L>,
    pre: Peekable<P>,
    reverse: bool,
}

impl<'a, L, P> Overlaid<'a, L, P>
where
    L: Iterator<Item = (&'a Bytes, &'a Bytes)>,
    P: Iterator<Item = (&'a Bytes, &'a Option<Bytes>)>,
{
    fn new(live: L, pre: P, reverse: bool) -> Self {
        Overlaid {
            live: live.peekable(),
            pre: pre.peekable(),
            reverse,
        }
    }
}

impl<'a, L, P> Iterator for Overlaid<'a, L, P>
where
    L: Iterator<Item = (&'a Bytes, &'a Bytes)>,
    P: Iterator<Item = (&'a Bytes, &'a Option<Bytes>)>,
{
    type Item = (Key, Value);

    fn next(&mut self) -> Option<(Key, Value)> {
        loop {
            let order = match (self.live.peek(), self.pre.peek()) {
                (None, None) => return None,
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (Some((live, _)), Some((pre, _))) if self.reverse => pre.cmp(live),
                (Some((live, _)), Some((pre, _))) => live.cmp(pre),
            };
            if order == std::cmp::Ordering::Less {
                let (k, v) = self.live.next()?;
                return Some((k.to_vec(), v.to_vec()));
            }
            if order == std::cmp::Ordering::Equal {
                self.live.next();
            }
            if let (k, Some(v)) = self.pre.next()? {
                return Some((k.to_vec(), v.to_vec()));
            }
        }
    }
}
