//! Pre-image overlays: how the fjall backend keeps a view
//! ([`Storage::open_view`](crate::Storage::open_view)) of one instant while
//! writers go on.
//!
//! A fjall snapshot would be simpler, but lsm-tree 3.1 keeps every super
//! version (with its memtables) newer than the oldest open snapshot, flushed
//! or not, so a backup copying for half a minute under a snapshot held every
//! byte written meanwhile in memory, its own copy included: 500 MB for a
//! copy of 1,000,000 items, 1 GB with an import beside it (BENCHMARKS.md).
//!
//! Instead, from the view's instant, every batch that writes a key in the
//! view's ranges first records what the key held, on its first touch only;
//! the view reads live data and lays those records over it. Memory grows with
//! the distinct keys of the viewed ranges written while the view lives (a
//! backup's copy writes elsewhere, so none of its own).
//!
//! The instant: writers hold [`Overlays::writing`] (a shared lock) from
//! recording their pre-images to their commit, and a view opens under the
//! exclusive lock, so every batch is either wholly before the view (in the
//! live data, nothing recorded) or wholly after it (its pre-images recorded
//! before anything of it is visible). A view reads live data first and the
//! records after, so a change it sees live always has its record in place.

use crate::{view_covers, view_covers_key, Key, KeyRange, StorageError, Value};
use parking_lot::{Mutex, RwLock, RwLockReadGuard};
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::Arc;

/// The views open on one store.
#[derive(Default)]
pub(crate) struct Overlays {
    open: RwLock<Vec<Arc<PreImages>>>,
}

/// One view's ranges and the pre-images recorded for it.
pub(crate) struct PreImages {
    ranges: Vec<KeyRange>,
    /// Keys of `ranges` written since the view opened, with what they held
    /// then (`None`: absent).
    pre: Mutex<BTreeMap<Key, Option<Value>>>,
}

/// Reads live data: one key.
pub(crate) type LiveGet<'a> = &'a dyn Fn(&[u8]) -> Result<Option<Value>, StorageError>;

/// Reads live data: up to `limit` entries of a range, in order.
pub(crate) type LiveScan<'a> =
    &'a dyn Fn(Bound<&[u8]>, Bound<&[u8]>, usize) -> Result<Vec<(Key, Value)>, StorageError>;

impl Overlays {
    /// Held by a writer from [`record`] to its commit.
    pub fn writing(&self) -> RwLockReadGuard<'_, Vec<Arc<PreImages>>> {
        self.open.read()
    }

    /// Registers a view of `ranges` at this instant.
    pub fn open(&self, ranges: &[KeyRange]) -> Arc<PreImages> {
        let view = Arc::new(PreImages {
            ranges: ranges.to_vec(),
            pre: Mutex::new(BTreeMap::new()),
        });
        self.open.write().push(Arc::clone(&view));
        view
    }

    pub fn close(&self, view: &Arc<PreImages>) {
        self.open.write().retain(|open| !Arc::ptr_eq(open, view));
    }

    /// Whether an open view covers any key of `[start, end)` (`end` None:
    /// unbounded).
    pub fn any_overlaps(&self, start: &[u8], end: Option<&[u8]>) -> bool {
        (self.open.read().iter()).any(|view| {
            (view.ranges.iter()).any(|(from, to)| {
                to.as_ref().is_none_or(|to| start < to.as_slice())
                    && end.is_none_or(|end| end > from.as_slice())
            })
        })
    }
}

/// Before a batch writing `keys` commits: each key's current value, in
/// every open view covering it that has none recorded yet.
pub(crate) fn record<'k>(
    open: &[Arc<PreImages>],
    keys: impl Iterator<Item = &'k [u8]>,
    live: LiveGet<'_>,
) -> Result<(), StorageError> {
    for key in keys {
        for view in open
            .iter()
            .filter(|view| view_covers_key(&view.ranges, key))
        {
            let mut pre = view.pre.lock();
            if !pre.contains_key(key) {
                pre.insert(key.to_vec(), live(key)?);
            }
        }
    }
    Ok(())
}

impl PreImages {
    pub fn covers(&self, start: Bound<&[u8]>, end: Bound<&[u8]>) -> bool {
        view_covers(&self.ranges, start, end)
    }

    /// A key at the view's instant, given its live value read just before.
    pub fn get(&self, key: &[u8], live: Option<Value>) -> Option<Value> {
        match self.pre.lock().get(key) {
            Some(before) => before.clone(),
            None => live,
        }
    }

    /// A scan at the view's instant: live pages with the records of each
    /// page's span laid over them, until `limit` entries or the range's end.
    pub fn scan(
        &self,
        (start, end): (Bound<&[u8]>, Bound<&[u8]>),
        reverse: bool,
        limit: usize,
        live: LiveScan<'_>,
    ) -> Result<Vec<(Key, Value)>, StorageError> {
        let (mut start, mut end) = (owned(start), owned(end));
        let mut out = Vec::new();
        while out.len() < limit {
            let page = live(borrowed(&start), borrowed(&end), limit)?;
            let done = page.len() < limit;
            // The span this page covers; beyond it the next page's records.
            let last = page.last().map(|(key, _)| Bound::Included(key.clone()));
            let (from, to) = match (reverse, done, last) {
                (_, true, _) | (_, _, None) => (start.clone(), end.clone()),
                (false, false, Some(last)) => (start.clone(), last),
                (true, false, Some(last)) => (last, end.clone()),
            };
            let records: Vec<(Key, Option<Value>)> = (self.pre.lock())
                .range::<[u8], _>((borrowed(&from), borrowed(&to)))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            let next = page.last().map(|(key, _)| Bound::Excluded(key.clone()));
            merge(page, records, reverse, &mut out);
            match (done, next) {
                (true, _) | (_, None) => break,
                (false, Some(next)) if reverse => end = next,
                (false, Some(next)) => start = next,
            }
        }
        out.truncate(limit);
        Ok(out)
    }
}

/// Appends `live` (in scan order) with `records` (ascending) laid over it:
/// a recorded key reads as its record, or not at all when it was absent.
fn merge(
    live: Vec<(Key, Value)>,
    mut records: Vec<(Key, Option<Value>)>,
    reverse: bool,
    out: &mut Vec<(Key, Value)>,
) {
    if reverse {
        records.reverse();
    }
    let mut live = live.into_iter().peekable();
    let mut records = records.into_iter().peekable();
    loop {
        let order = match (live.peek(), records.peek()) {
            (None, None) => return,
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (Some((l, _)), Some((r, _))) if reverse => r.cmp(l),
            (Some((l, _)), Some((r, _))) => l.cmp(r),
        };
        match order {
            std::cmp::Ordering::Less => out.extend(live.next()),
            std::cmp::Ordering::Equal | std::cmp::Ordering::Greater => {
                if order == std::cmp::Ordering::Equal {
                    live.next();
                }
                if let Some((key, Some(value))) = records.next() {
                    out.push((key, value));
                }
            }
        }
    }
}

fn owned(bound: Bound<&[u8]>) -> Bound<Key> {
    bound.map(<[u8]>::to_vec)
}

fn borrowed(bound: &Bound<Key>) -> Bound<&[u8]> {
    bound.as_ref().map(Vec::as_slice)
}
