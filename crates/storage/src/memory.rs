//! The in-memory backend: a `BTreeMap` behind a `parking_lot::RwLock`.
//!
//! Used by `ferrodyn serve --in-memory` and by tests. A write takes the lock
//! once for the whole batch, so readers see all of it or none of it. Keys and
//! values are kept as boxed slices: a `Vec` handed in by a caller often has
//! spare capacity (up to twice its length), which would otherwise stay
//! allocated for as long as the entry lives.

use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::RwLock;

use crate::{
    first_failed_check, range_is_empty, validate_ops, Key, ReadCheck, Storage, StorageError, Value,
    WriteOp,
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
    map: RwLock<BTreeMap<Bytes, Bytes>>,
    /// Bytes deleted since freed memory was last handed back.
    freed: AtomicUsize,
}

impl MemoryStorage {
    /// A new, empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Storage for MemoryStorage {
    fn get(&self, key: &[u8]) -> Result<Option<Value>, StorageError> {
        Ok(self.map.read().get(key).map(|v| v.to_vec()))
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
        let map = self.map.read();
        let range = map.range::<[u8], _>((start, end));
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
        let mut map = self.map.write();
        let changed = first_failed_check(&checks, |k| Ok(map.get(k).map(|v| v.to_vec())))?;
        if let Some(key) = changed {
            return Err(StorageError::Conflict { key: Some(key) });
        }
        for op in ops {
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
        drop(map);
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
}
