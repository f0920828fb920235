//! Group commit for [`crate::Durability::Sync`]: writers whose batches are
//! in fjall's journal share fsyncs, and each is acknowledged only once an
//! fsync that began after its batch was appended has finished.
//!
//! Rounds: the first writer to find no fsync running leads a round. It
//! fixes the round's target (every batch appended by then: the journal is
//! written in commit order, so one fsync covers them all), fsyncs, and wakes
//! the writers the round covered. Writers arriving during the fsync wait for
//! the next round, whose leader is one of them, woken by the finishing
//! leader. The two groups wait on two condition variables (by round parity),
//! so a finished round wakes only the writers it made durable, plus one
//! leader, not everyone (64 writers each woken every round cost more CPU
//! than the fsyncs).
//!
//! The fsync is done on our own handle of fjall's active journal file, not
//! with `Database::persist`, which holds fjall's journal lock for the whole
//! fsync: every writer of the next round would then wait for it to append
//! its batch, and a round would cover little more than its leader
//! ([`ActiveJournal`]). After a failed fsync every later write fails too
//! (the kernel may have dropped the unsynced pages; a later fsync that
//! succeeds proves nothing), as fjall poisons itself after a journal error.

use parking_lot::{Condvar, Mutex};
use std::fs::File;
use std::path::{Path, PathBuf};

use crate::StorageError;

/// Shared fsyncs: see the module header.
#[derive(Default)]
pub(crate) struct GroupSync {
    state: Mutex<SyncState>,
    /// Writers waiting for a round, by the parity of its number.
    rounds: [Condvar; 2],
}

#[derive(Default)]
struct SyncState {
    /// Batches appended to the journal (each writer's ticket).
    committed: u64,
    /// Every ticket up to this one is durable.
    durable: u64,
    /// Rounds started so far (the last one's number).
    started: u64,
    /// The round running now: its number and target ticket.
    running: Option<(u64, u64)>,
    /// An fsync failed: nothing is acknowledged any more.
    failed: bool,
}

impl GroupSync {
    /// Returns once an fsync (`sync`) that started after this call has
    /// succeeded, running it if no other writer is; the caller's batch must
    /// already be in the journal (handed to the OS).
    pub(crate) fn wait_durable(
        &self,
        sync: impl Fn() -> Result<(), StorageError>,
    ) -> Result<(), StorageError> {
        let mut state = self.state.lock();
        state.committed += 1;
        let ticket = state.committed;
        loop {
            if state.failed {
                return Err(failed_before());
            }
            if state.durable >= ticket {
                return Ok(());
            }
            if let Some((round, target)) = state.running {
                // Covered by the running round, or else by the next one.
                let covering = if ticket <= target { round } else { round + 1 };
                self.rounds[parity(covering)].wait(&mut state);
                continue;
            }
            state.started += 1;
            let (round, target) = (state.started, state.committed);
            state.running = Some((round, target));
            let result = parking_lot::MutexGuard::unlocked(&mut state, &sync);
            state.running = None;
            match result {
                Ok(()) => state.durable = state.durable.max(target),
                Err(_) => state.failed = true,
            }
            self.rounds[parity(round)].notify_all();
            if result.is_ok() {
                // One of the writers that arrived meanwhile leads the next round.
                self.rounds[parity(round + 1)].notify_one();
            } else {
                // No round follows a failure: every waiter must see it.
                self.rounds[parity(round + 1)].notify_all();
            }
            result?;
        }
    }
}

fn parity(round: u64) -> usize {
    (round % 2) as usize
}

fn failed_before() -> StorageError {
    StorageError::Io(std::io::Error::other(
        "an earlier fsync of the journal failed; restart the server",
    ))
}

/// fjall's active journal file, for fsyncs outside fjall's journal lock.
///
/// From fjall 3.1.13's source (`journal/writer.rs`, `journal/recovery.rs`,
/// `db.rs`; the version is pinned in Cargo.toml): journals are
/// `<id>.jnl` in the database directory, the active one has the highest id,
/// and rotation fsyncs the active journal (`rotate` persists with
/// `SyncAll`) before it creates `<id + 1>.jnl`, to which every later batch
/// goes. So if, once a round's batches are appended, no `<id + 1>.jnl`
/// exists, they are all in `<id>.jnl` or in journals already synced;
/// otherwise the newest journal holds the rest. fdatasync on our handle
/// flushes the file's pages whichever handle wrote them.
pub(crate) struct ActiveJournal {
    dir: PathBuf,
    id: u64,
    file: File,
}

impl ActiveJournal {
    /// The newest journal in `dir` (None if it holds none).
    pub(crate) fn open(dir: &Path) -> std::io::Result<Option<ActiveJournal>> {
        let mut newest = None;
        for entry in std::fs::read_dir(dir)? {
            let name = entry?.file_name();
            let id = (name.to_str())
                .and_then(|n| n.strip_suffix(".jnl"))
                .and_then(|n| n.parse::<u64>().ok());
            newest = newest.max(id);
        }
        let Some(id) = newest else {
            return Ok(None);
        };
        let file = File::open(journal_path(dir, id))?;
        Ok(Some(ActiveJournal {
            dir: dir.to_path_buf(),
            id,
            file,
        }))
    }

    /// fdatasyncs the journal holding the batches appended so far.
    pub(crate) fn sync(&mut self) -> std::io::Result<()> {
        let mut newest = self.id;
        while journal_path(&self.dir, newest + 1).exists() {
            newest += 1;
        }
        if newest != self.id {
            self.file = File::open(journal_path(&self.dir, newest))?;
            self.id = newest;
        }
        self.file.sync_data()
    }
}

fn journal_path(dir: &Path, id: u64) -> PathBuf {
    dir.join(format!("{id}.jnl"))
}

#[cfg(test)]
mod tests {
    use super::{ActiveJournal, GroupSync};
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    /// Sixteen writers sharing fsyncs: each returns only after an fsync that
    /// began after its own commit, and far fewer fsyncs run than writes.
    #[test]
    fn writers_share_fsyncs_and_wait_for_their_own() {
        let group = Arc::new(GroupSync::default());
        let written = Arc::new(AtomicU64::new(0));
        let durable = Arc::new(AtomicU64::new(0));
        let fsyncs = Arc::new(AtomicU64::new(0));
        let threads: Vec<_> = (0..16)
            .map(|_| {
                let (group, written) = (Arc::clone(&group), Arc::clone(&written));
                let (durable, fsyncs) = (Arc::clone(&durable), Arc::clone(&fsyncs));
                std::thread::spawn(move || {
                    for _ in 0..50 {
                        let mine = written.fetch_add(1, Ordering::SeqCst) + 1;
                        group
                            .wait_durable(|| {
                                let covered = written.load(Ordering::SeqCst);
                                std::thread::sleep(Duration::from_micros(300));
                                durable.fetch_max(covered, Ordering::SeqCst);
                                fsyncs.fetch_add(1, Ordering::SeqCst);
                                Ok(())
                            })
                            .unwrap();
                        assert!(durable.load(Ordering::SeqCst) >= mine);
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
        let fsyncs = fsyncs.load(Ordering::SeqCst);
        assert!(fsyncs < 800 / 2, "{fsyncs} fsyncs for 800 writes");
    }

    #[test]
    fn a_failed_fsync_fails_every_later_write() {
        let group = GroupSync::default();
        let failing = || Err(std::io::Error::other("disk gone").into());
        assert!(group.wait_durable(failing).is_err());
        assert!(group.wait_durable(|| Ok(())).is_err());
    }

    /// Writers waiting for the round after a failed fsync must all wake and
    /// fail, not wait for a round that will never start.
    #[test]
    fn a_failed_fsync_wakes_every_waiting_writer() {
        let group = Arc::new(GroupSync::default());
        let (done, finished) = std::sync::mpsc::channel();
        for _ in 0..8 {
            let (group, done) = (Arc::clone(&group), done.clone());
            std::thread::spawn(move || {
                let failing = || {
                    std::thread::sleep(Duration::from_millis(20));
                    Err(std::io::Error::other("disk gone").into())
                };
                done.send(group.wait_durable(failing).is_err()).unwrap();
            });
        }
        for _ in 0..8 {
            let failed = finished.recv_timeout(Duration::from_secs(5));
            assert_eq!(failed, Ok(true), "a writer still waits after the failure");
        }
    }

    #[test]
    fn the_active_journal_follows_rotations() {
        let dir = tempfile::tempdir().unwrap();
        assert!(ActiveJournal::open(dir.path()).unwrap().is_none());
        for name in ["3.jnl", "4.jnl", "version", "lock"] {
            std::fs::write(dir.path().join(name), b"x").unwrap();
        }
        let mut journal = ActiveJournal::open(dir.path()).unwrap().unwrap();
        assert_eq!(journal.id, 4);
        std::fs::write(dir.path().join("5.jnl"), b"x").unwrap();
        std::fs::write(dir.path().join("6.jnl"), b"x").unwrap();
        journal.sync().unwrap();
        assert_eq!(journal.id, 6);
    }
}
