//! The durable backend: one fjall keyspace in one fjall database.
//!
//! Why fjall: it measured 3-5x faster than redb and SQLite on writes and on
//! fsync'd 100-item batches (shared/research/crates.md §2), commits a batch
//! atomically through its journal, and lets us choose durability per batch.
//!
//! Durability, from reading fjall 3.1.13's source (`journal/writer.rs`,
//! `batch/mod.rs`):
//! - `WriteBatch::commit` appends the batch (start marker, items, end marker
//!   with an xxh3 checksum) to the journal through a `BufWriter` of 8 KiB.
//!   Without a persist mode the batch can sit in that user-space buffer, so
//!   a kill -9 would lose an acknowledged write. With
//!   `durability(Some(PersistMode::Buffer))` the buffer is flushed to the OS
//!   (a `write(2)`) before `commit` returns: that is [`Durability::Buffered`].
//!   `Some(PersistMode::SyncAll)` adds an `fsync`: [`Durability::Sync`].
//!   We always set the mode explicitly rather than rely on `Database::batch`
//!   defaulting to `Buffer` (it does unless `manual_journal_persist`).
//! - On recovery fjall drops a trailing batch without a valid end marker and
//!   checksum (it truncates the journal there), so a crash never exposes half
//!   a batch; `tests/crash.rs` checks both properties with kill -9.
//! - `Keyspace::get`/`range` read at `SeqNo::MAX`, which can observe a batch
//!   whose items are still being inserted into the memtable (commit inserts
//!   item by item, then publishes the batch's sequence number). Reads here
//!   therefore go through `Database::snapshot()`, which reads at the last
//!   published sequence number: a reader sees whole batches only.
//!
//! Group commit ([`Durability::Sync`]): a batch is committed with
//! `PersistMode::Buffer` (in the journal, handed to the OS), then its writer
//! waits in [`GroupSync`] until an fsync (fdatasync, which also writes the
//! metadata needed to read the data back) that started after its commit has
//! finished. The first writer to find no fsync running runs one for
//! everybody whose batch is in the journal by then; the journal is written
//! in commit order, so one fsync makes all of them durable and each is
//! acknowledged only after its own data is on disk. Concurrent writers
//! therefore share fsyncs instead of queueing one each, and go on appending
//! while one runs (it is done outside fjall's journal lock; see
//! `group_sync.rs`). A reader may see a batch before it is durable (as in
//! any group-commit design); a power loss can take such a batch only along
//! with every later one, and no acknowledged one.
//!
//! Memory: opening a fresh database adds ~1 MB RSS and two background
//! worker threads (fjall uses min(cores, 4) workers; this machine has 2).
//! The block cache (`FjallOptions::cache_size_bytes`) fills lazily as table
//! blocks are read, and the memtable grows with unflushed writes (and with
//! journal replay at open) up to `FjallOptions::max_memtable_bytes`. The
//! journal file is preallocated to 64 MiB with `set_len` (sparse on disk,
//! not memory).
//!
//! Write tail latency: whenever a memtable is flushed, fjall's worker fsyncs
//! the whole journal while holding the journal lock (`worker_pool.rs`, fjall
//! issue 329), so every writer waits for all the journal bytes written since
//! the last fsync to reach the disk: 7-25 ms stalls every few seconds under
//! write load, which were the durable mode's PutItem p99. With
//! [`Durability::Buffered`] a background thread therefore fdatasyncs the
//! journal every [`JOURNAL_SYNC_INTERVAL`], so that fsync only finds the
//! last interval's bytes. Side effect: the power-loss window of the default
//! mode is bounded by that interval (a process crash never loses anything).
//!
//! Background CPU under sustained random-key writes (perf, BatchWriteItem):
//! fjall's workers take about a third of the samples, and part of that is
//! not compaction: with two or more workers, worker 0 hands every Compact
//! message back to the queue to stay free for flushes (`worker_tick` in
//! fjall 3.1.13's `worker_pool.rs`), so while worker 1 compacts, worker 0
//! takes the same message again at once, a busy loop (`worker_tick` and
//! flume's `send`: about 13 % of the server's samples). One worker avoids
//! it but lets sealed memtables and the journal pile up (1.4 GB RSS and a
//! 744 MB journal in 12 s; fjall issue 257 reports writes stuck the same
//! way), so the default two stay. A fix belongs upstream.

use parking_lot::Mutex;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::path::Path;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use ::fjall::{Database, Keyspace, KeyspaceCreateOptions, PersistMode, Readable};

use crate::group_sync::{ActiveJournal, GroupSync};
use crate::overlay::{self, Overlays, PreImages};
use crate::{
    first_failed_check, range_is_empty, storable_bounds, validate_ops, Durability, Key, KeyRange,
    ReadCheck, Storage, StorageError, StorageView, Value, WriteOp, MAX_KEY_LEN,
};

/// The single keyspace all of Ferrodyn's data lives in; the engine prefixes
/// its own keys, so one ordered space is all it needs.
const KEYSPACE: &str = "ferrodyn";

/// Tuning for [`FjallStorage::open`]. The defaults keep memory modest: the
/// server must idle in well under 20 MB RSS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FjallOptions {
    /// How far each write is persisted before it returns.
    pub durability: Durability,
    /// Block cache capacity in bytes (fjall's own default is 32 MiB too).
    pub cache_size_bytes: u64,
    /// Memtable size in bytes at which it is flushed to disk (fjall's default
    /// is 64 MiB). A trade of write throughput against memory:
    /// - Random-key writes: every flush adds a level-0 table that overlaps
    ///   all of level 1, so compaction rewrites level 1 once per flush, and
    ///   on two cores that compaction takes CPU from the writers. Measured
    ///   (bench/run.py bwrite, 25 random-key puts per request, alone beside
    ///   an in-memory server): 8 MiB 6,410 req/s, 16 MiB 7,256, 32 MiB
    ///   8,039, 64 MiB 8,506; PutItem within noise (BENCHMARKS.md).
    /// - Memory: the journal is replayed into the memtable at a restart, and
    ///   the allocator keeps those pages. After 4 s of batch writes and a
    ///   kill -9: 35 MB RSS with 8 MiB, 53 MB with 32 MiB; peak RSS over
    ///   the bench 187 / 229 / 335 MB for 8 / 32 / 64 MiB. A fresh server's
    ///   idle RSS does not depend on it.
    ///
    /// 32 MiB. Only applies when the keyspace is first created (fjall stores
    /// keyspace options in the database): older data directories keep 8.
    pub max_memtable_bytes: u64,
}

impl Default for FjallOptions {
    fn default() -> Self {
        Self {
            durability: Durability::Buffered,
            cache_size_bytes: 32 * 1024 * 1024,
            max_memtable_bytes: 32 * 1024 * 1024,
        }
    }
}

/// A fjall database holding one keyspace.
pub struct FjallStorage {
    db: Database,
    keyspace: Keyspace,
    persist: Option<PersistMode>,
    /// Shared fsyncs of [`Durability::Sync`] (None in the other modes), and
    /// the journal file they sync (None: fjall's own persist, under its lock).
    group: Option<(GroupSync, Option<Mutex<ActiveJournal>>)>,
    /// The background journal syncer (see the module header); dropping the
    /// sender stops it.
    syncer: Option<(mpsc::Sender<()>, JoinHandle<()>)>,
    /// Taken by checked writes from check to commit.
    commit_lock: parking_lot::Mutex<()>,
    /// The views open now (pre-image overlays, overlay.rs).
    overlays: std::sync::Arc<Overlays>,
    /// The data directory, whose `ferrodyn.pid` names this process.
    dir: std::path::PathBuf,
}

/// How often the default durability mode fdatasyncs the journal.
pub const JOURNAL_SYNC_INTERVAL: Duration = Duration::from_millis(50);

/// Starts the thread that keeps the journal's unsynced tail short.
fn spawn_journal_syncer(db: Database) -> std::io::Result<(mpsc::Sender<()>, JoinHandle<()>)> {
    let (stop, stopped) = mpsc::channel::<()>();
    let handle = std::thread::Builder::new()
        .name("journal-sync".into())
        .spawn(move || {
            while let Err(mpsc::RecvTimeoutError::Timeout) =
                stopped.recv_timeout(JOURNAL_SYNC_INTERVAL)
            {
                // A failure here is reported by the next write's commit:
                // fjall poisons the database on journal I/O errors.
                let _ = db.persist(PersistMode::SyncData);
            }
        })?;
    Ok((stop, handle))
}

impl FjallStorage {
    /// Opens (creating if needed) the database in directory `path`,
    /// replaying its journal, after checking its format version. Only one process may open a directory at once.
    pub fn open(path: &Path, options: FjallOptions) -> Result<Self, StorageError> {
        crate::format::check_or_create(path)?;
        let db = match Database::builder(path)
            .cache_size(options.cache_size_bytes)
            .open()
        {
            Err(::fjall::Error::Locked) => return Err(crate::holder::in_use(path)),
            opened => opened?,
        };
        crate::holder::record(path);
        let memtable = options.max_memtable_bytes;
        let keyspace = db.keyspace(KEYSPACE, || {
            KeyspaceCreateOptions::default().max_memtable_size(memtable)
        })?;
        // Sync commits buffered too, then waits for a shared fsync.
        let persist = match options.durability {
            Durability::Buffered | Durability::Sync => Some(PersistMode::Buffer),
            Durability::None => None,
        };
        let group = match options.durability {
            Durability::Sync => {
                let journal = ActiveJournal::open(path)?.map(Mutex::new);
                Some((GroupSync::default(), journal))
            }
            Durability::Buffered | Durability::None => None,
        };
        let syncer = match options.durability {
            Durability::Buffered => {
                Some(spawn_journal_syncer(db.clone()).map_err(::fjall::Error::from)?)
            }
            Durability::Sync | Durability::None => None,
        };
        Ok(Self {
            db,
            keyspace,
            persist,
            group,
            syncer,
            commit_lock: parking_lot::Mutex::new(()),
            overlays: Default::default(),
            dir: path.to_path_buf(),
        })
    }
}

impl FjallStorage {
    /// Commits a validated batch as one fjall batch.
    fn apply(&self, ops: Vec<WriteOp>) -> Result<(), StorageError> {
        if ops.is_empty() {
            return Ok(());
        }
        // Held to the commit: no view opens between the records and it.
        let views = self.overlays.writing();
        if !views.is_empty() {
            overlay::record(&views, ops.iter().map(WriteOp::key), &|key| self.get(key))?;
        }
        let mut batch = self.db.batch().durability(self.persist);
        for op in last_op_per_key(ops) {
            match op {
                WriteOp::Put(k, v) => batch.insert(&self.keyspace, k, v),
                WriteOp::Delete(k) => batch.remove(&self.keyspace, k),
            }
        }
        batch.commit()?;
        drop(views);
        if let Some((group, journal)) = &self.group {
            // fdatasync: the journal's data and the metadata needed to read
            // it back (its blocks), as the journal syncer uses.
            group.wait_durable(|| match journal {
                Some(journal) => Ok(journal.lock().sync()?),
                None => Ok(self.db.persist(PersistMode::SyncData)?),
            })?;
        }
        Ok(())
    }
}

/// The ops of a batch with only the last op on each key: all items of a
/// fjall batch share one sequence number, so two ops on the same key would
/// tie, and the last one is what "applied in order" means. The engine never
/// writes a key twice in one batch, so the common case only checks.
fn last_op_per_key(ops: Vec<WriteOp>) -> Vec<WriteOp> {
    if ops.len() < 2 {
        return ops;
    }
    let mut keys: Vec<&[u8]> = ops.iter().map(WriteOp::key).collect();
    keys.sort_unstable();
    if keys.windows(2).all(|pair| pair[0] != pair[1]) {
        return ops;
    }
    let mut last: BTreeMap<Key, Option<Value>> = BTreeMap::new();
    for op in ops {
        match op {
            WriteOp::Put(k, v) => last.insert(k, Some(v)),
            WriteOp::Delete(k) => last.insert(k, None),
        };
    }
    (last.into_iter())
        .map(|(k, v)| match v {
            Some(v) => WriteOp::Put(k, v),
            None => WriteOp::Delete(k),
        })
        .collect()
}

impl Storage for FjallStorage {
    fn get(&self, key: &[u8]) -> Result<Option<Value>, StorageError> {
        get_snapshot(&self.db.snapshot(), &self.keyspace, key)
    }

    fn scan(
        &self,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        reverse: bool,
        limit: usize,
    ) -> Result<Vec<(Key, Value)>, StorageError> {
        scan_snapshot(
            &self.db.snapshot(),
            &self.keyspace,
            (start, end),
            reverse,
            limit,
        )
    }

    fn write(&self, ops: Vec<WriteOp>) -> Result<(), StorageError> {
        self.write_checked(Vec::new(), ops)
    }

    /// A batch with checks is checked and applied under the commit lock,
    /// atomically with respect to every other checked batch. Unchecked
    /// batches (every item write: the engine passes checks on shared
    /// storage only) skip the lock, so parallel writers and the group
    /// commit's shared fsync are not serialised behind it; the engine's item
    /// locks are what keep two writers off one key in this one process.
    fn write_checked(&self, checks: Vec<ReadCheck>, ops: Vec<WriteOp>) -> Result<(), StorageError> {
        validate_ops(&ops)?;
        if checks.is_empty() {
            return self.apply(ops);
        }
        let _commit = self.commit_lock.lock();
        if let Some(key) = first_failed_check(&checks, |k| self.get(k))? {
            return Err(StorageError::Conflict { key: Some(key) });
        }
        self.apply(ops)
    }

    fn flush(&self) -> Result<(), StorageError> {
        self.db.persist(PersistMode::SyncAll)?;
        Ok(())
    }

    /// lsm-tree's drop-range compaction: tables whose whole key range lies
    /// inside the range are removed from the tree (their files deleted).
    fn reclaim_range(&self, start: &[u8], end: Option<&[u8]>) -> Result<(), StorageError> {
        use ::fjall::AbstractTree;
        // Dropping files bypasses the writes views record: not while a view
        // covers the range (best effort allows doing nothing).
        if self.overlays.any_overlaps(start, end) {
            return Ok(());
        }
        let start = Bound::Included(start.to_vec());
        let end = end.map_or(Bound::Unbounded, |e| Bound::Excluded(e.to_vec()));
        self.keyspace
            .tree
            .drop_range::<Vec<u8>, _>((start, end))
            .map_err(::fjall::Error::from)?;
        Ok(())
    }

    /// A pre-image overlay (overlay.rs), not a fjall snapshot: a snapshot
    /// held for a backup's copy keeps every memtable written meanwhile in
    /// memory.
    fn open_view(&self, ranges: &[KeyRange]) -> Result<Box<dyn StorageView>, StorageError> {
        Ok(Box::new(FjallView {
            pre: self.overlays.open(ranges),
            overlays: std::sync::Arc::clone(&self.overlays),
            db: self.db.clone(),
            keyspace: self.keyspace.clone(),
        }))
    }
}

/// [`Storage::get`] at one snapshot.
fn get_snapshot(
    snapshot: &::fjall::Snapshot,
    keyspace: &Keyspace,
    key: &[u8],
) -> Result<Option<Value>, StorageError> {
    // No such key can be stored, and lsm-tree panics on over-long ones.
    if key.is_empty() || key.len() > MAX_KEY_LEN {
        return Ok(None);
    }
    Ok(snapshot.get(keyspace, key)?.map(|v| v.to_vec()))
}

/// [`Storage::scan`] at one snapshot.
fn scan_snapshot(
    snapshot: &::fjall::Snapshot,
    keyspace: &Keyspace,
    (start, end): crate::Range<'_>,
    reverse: bool,
    limit: usize,
) -> Result<Vec<(Key, Value)>, StorageError> {
    let Some((start, end)) = storable_bounds(start, end).filter(|_| limit > 0) else {
        return Ok(Vec::new());
    };
    let iter = snapshot.range::<&[u8], _>(keyspace, (start, end));
    let mut out = Vec::with_capacity(limit.min(256));
    let mut push = |guard: ::fjall::Guard| -> Result<bool, StorageError> {
        let (k, v) = guard.into_inner()?;
        out.push((k.to_vec(), v.to_vec()));
        Ok(out.len() < limit)
    };
    if reverse {
        for guard in iter.rev() {
            if !push(guard)? {
                break;
            }
        }
    } else {
        for guard in iter {
            if !push(guard)? {
                break;
            }
        }
    }
    Ok(out)
}

/// Live data with a view's pre-images laid over it, restricted to the
/// ranges it was opened for.
struct FjallView {
    pre: std::sync::Arc<PreImages>,
    overlays: std::sync::Arc<Overlays>,
    db: Database,
    keyspace: Keyspace,
}

impl StorageView for FjallView {
    fn get(&self, key: &[u8]) -> Result<Option<Value>, StorageError> {
        if !self.pre.covers(Bound::Included(key), Bound::Included(key)) {
            return Err(StorageError::OutsideView);
        }
        let live = get_snapshot(&self.db.snapshot(), &self.keyspace, key)?;
        Ok(self.pre.get(key, live))
    }

    fn scan(
        &self,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        reverse: bool,
        limit: usize,
    ) -> Result<Vec<(Key, Value)>, StorageError> {
        if !self.pre.covers(start, end) {
            return Err(StorageError::OutsideView);
        }
        if limit == 0 || range_is_empty(start, end) {
            return Ok(Vec::new());
        }
        let live = |start: Bound<&[u8]>, end: Bound<&[u8]>, limit: usize| {
            scan_snapshot(
                &self.db.snapshot(),
                &self.keyspace,
                (start, end),
                reverse,
                limit,
            )
        };
        self.pre.scan((start, end), reverse, limit, &live)
    }
}

impl Drop for FjallView {
    fn drop(&mut self) {
        self.overlays.close(&self.pre);
    }
}

impl Drop for FjallStorage {
    fn drop(&mut self) {
        // Best effort: hand any buffered journal bytes (Durability::None) to
        // the OS so a clean exit keeps them. Callers wanting power-loss
        // safety call `flush` first.
        let _ = self.db.persist(PersistMode::Buffer);
        if let Some((stop, handle)) = self.syncer.take() {
            drop(stop);
            let _ = handle.join();
        }
        crate::holder::release(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::{FjallOptions, FjallStorage};
    use crate::{Durability, Storage, WriteOp};

    /// Power durability fsyncs fjall's journal file itself (group_sync.rs):
    /// a fjall whose journals are no longer `<id>.jnl` in the database
    /// directory must fail here, not fall back silently.
    #[test]
    fn power_durability_finds_the_journal_it_fsyncs() {
        let dir = tempfile::tempdir().unwrap();
        let options = FjallOptions {
            durability: Durability::Sync,
            ..FjallOptions::default()
        };
        let storage = FjallStorage::open(dir.path(), options).unwrap();
        let (_, journal) = storage.group.as_ref().expect("group commit");
        assert!(journal.is_some(), "no <id>.jnl in {:?}", dir.path());
        let put = WriteOp::Put(b"k".to_vec(), b"v".to_vec());
        storage.write(vec![put]).unwrap();
        assert_eq!(storage.get(b"k").unwrap(), Some(b"v".to_vec()));
    }
}

#[cfg(test)]
mod in_use_tests {
    use super::{FjallOptions, FjallStorage};
    use crate::StorageError;

    /// A second open of a held directory names the holder and the way out,
    /// and the holder's record goes away with it.
    #[test]
    fn a_held_directory_names_its_holder() {
        let dir = tempfile::tempdir().unwrap();
        let held = FjallStorage::open(dir.path(), FjallOptions::default()).unwrap();
        let refused = FjallStorage::open(dir.path(), FjallOptions::default());
        let Err(err @ StorageError::InUse { pid, .. }) = refused else {
            panic!("second open was not refused as in use");
        };
        assert_eq!(pid, Some(std::process::id()));
        let text = err.to_string();
        assert!(
            text.contains("in use by another Ferrodyn process"),
            "{text}"
        );
        assert!(text.contains("--data-dir"), "{text}");
        drop(held);
        assert!(!dir.path().join(crate::holder::PID_FILE).exists());
        FjallStorage::open(dir.path(), FjallOptions::default()).unwrap();
    }
}
