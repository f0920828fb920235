//! Background table work: purging the data of deleted tables and GSIs and
//! backfilling new GSIs, each on its own thread so the request that started
//! it answers at once (DynamoDB answers DeleteTable with DELETING and
//! CreateTable-of-an-index with CREATING and does the work afterwards).
//!
//! The work is resumable: a deleted table leaves a `'p' id` marker until its
//! purge ends, and an index being backfilled stays Backfilling in the
//! catalog, so after a crash [`Engine::resume_background_work`] picks both up
//! again, in the background too, so the server answers within a second of
//! starting. The jobs in flight are counted: that is what DynamoDB's quota
//! of simultaneous table operations measures here.
//!
//! It also starts the engine's periodic threads ([`Engine::run_periodically`]:
//! TTL sweeps, statistics folds, partition and cluster upkeep, Kinesis
//! delivery, the vector follower), each ending with the engine.

use crate::index::IndexState;
use crate::table::Table;
use crate::Engine;
use ferrodyn_types::{DynamoError, Result};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Background jobs running now.
#[derive(Default)]
pub(crate) struct BackgroundJobs {
    running: AtomicUsize,
}

/// Decrements the running count when a job ends, however it ends.
struct Running<'a>(&'a AtomicUsize);

impl Drop for Running<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Engine {
    /// Runs `job` every `interval` on a thread named `thread` for as long as
    /// the engine lives (the thread holds it weakly), logging its failures
    /// as "`what` failed"; false if the thread could not be started.
    pub(crate) fn run_periodically(
        self: &Arc<Self>,
        thread: &str,
        interval: std::time::Duration,
        what: &'static str,
        job: impl Fn(&Arc<Engine>) -> Result<()> + Send + 'static,
    ) -> bool {
        let engine = Arc::downgrade(self);
        let spawned = std::thread::Builder::new()
            .name(thread.into())
            .spawn(move || loop {
                std::thread::sleep(interval);
                let Some(engine) = engine.upgrade() else {
                    return;
                };
                if let Err(error) = job(&engine) {
                    eprintln!("ferrodyn: {what} failed: {error}");
                }
            });
        if let Err(error) = &spawned {
            eprintln!("ferrodyn: cannot start the {what} thread: {error}");
        }
        spawned.is_ok()
    }

    /// Table-level jobs (purges, backfills) running in the background.
    pub fn background_jobs(&self) -> usize {
        self.background.running.load(Ordering::SeqCst)
    }

    /// Runs `job` on a thread of its own, counted in [`Self::background_jobs`]
    /// until it ends; a failure is logged (the work resumes at next start).
    pub(crate) fn spawn_background(
        self: &Arc<Self>,
        name: String,
        job: impl FnOnce(&Engine) -> Result<()> + Send + 'static,
    ) -> Result<()> {
        self.spawn_job(name, true, job)
    }

    /// Like [`Self::spawn_background`] for upkeep that is no table operation
    /// (the start-up sweep of orphaned index entries): not counted, so it
    /// never takes a place in the quota of simultaneous table operations.
    pub(crate) fn spawn_upkeep(
        self: &Arc<Self>,
        name: String,
        job: impl FnOnce(&Engine) -> Result<()> + Send + 'static,
    ) -> Result<()> {
        self.spawn_job(name, false, job)
    }

    /// Like [`Self::spawn_background`] for work that must run on this node
    /// whoever holds the lease (a backup copies through a storage view that
    /// lives in this process). Not counted: backups are no table operation.
    pub(crate) fn spawn_job_here(
        self: &Arc<Self>,
        name: String,
        job: impl FnOnce(&Engine) -> Result<()> + Send + 'static,
    ) -> Result<()> {
        self.start_thread(name, false, job)
    }

    fn spawn_job(
        self: &Arc<Self>,
        name: String,
        counted: bool,
        job: impl FnOnce(&Engine) -> Result<()> + Send + 'static,
    ) -> Result<()> {
        // Shared storage: only the lease holder runs it, once (cluster.rs).
        if !self.claim_job(&name) {
            return Ok(());
        }
        self.start_thread(name, counted, job)
    }

    fn start_thread(
        self: &Arc<Self>,
        name: String,
        counted: bool,
        job: impl FnOnce(&Engine) -> Result<()> + Send + 'static,
    ) -> Result<()> {
        if counted {
            self.background.running.fetch_add(1, Ordering::SeqCst);
        }
        let engine = Arc::clone(self);
        let thread_name = format!("ferrodyn-{name}");
        let job_name = name.clone();
        let spawned = std::thread::Builder::new()
            .name(thread_name)
            .spawn(move || {
                let _running = counted.then(|| Running(&engine.background.running));
                if let Err(error) = job(&engine) {
                    eprintln!("ferrodyn: background {name} failed: {error}");
                }
                engine.release_job(&name);
            });
        spawned.map(|_| ()).map_err(|e| {
            self.release_job(&job_name);
            if counted {
                self.background.running.fetch_sub(1, Ordering::SeqCst);
            }
            DynamoError::internal(format!("cannot start background work: {e}"))
        })
    }

    /// Restarts what a crash or shutdown cut short: purges of deleted tables,
    /// purges of deleted indexes' entries, and GSI backfills.
    pub(crate) fn resume_background_work(self: &Arc<Self>) -> Result<()> {
        self.resume_table_purges()?;
        self.resume_backup_work()?;
        let tables: Vec<_> = self.tables.read().values().cloned().collect();
        if !tables.is_empty() {
            self.spawn_orphan_sweep(tables.clone())?;
        }
        self.resume_backfills(tables)
    }

    /// Starts the purge of every deleted table whose purge marker is left.
    pub(crate) fn resume_table_purges(self: &Arc<Self>) -> Result<()> {
        for id in self.unfinished_purges()? {
            self.spawn_background(format!("purge-table-{id}"), move |engine| {
                engine.purge_table_data(id)
            })?;
        }
        Ok(())
    }

    /// Starts the sweep of index keys whose index is gone, over `tables`.
    pub(crate) fn spawn_orphan_sweep(self: &Arc<Self>, tables: Vec<Arc<Table>>) -> Result<()> {
        self.spawn_upkeep("purge-orphan-index-entries".into(), move |engine| {
            tables
                .iter()
                .try_for_each(|table| engine.purge_orphan_index_entries(table))
        })
    }

    /// Starts the backfill of every index of `tables` still backfilling.
    pub(crate) fn resume_backfills(self: &Arc<Self>, tables: Vec<Arc<Table>>) -> Result<()> {
        for table in tables {
            for index in table.indexes() {
                if index.state() == IndexState::Backfilling {
                    let table = Arc::clone(&table);
                    self.spawn_background(format!("backfill-{}", index.name), move |engine| {
                        engine.backfill_index(&table, &index)
                    })?;
                }
            }
            for index in table.vector_indexes() {
                if index.figures.state() == IndexState::Backfilling {
                    let table = Arc::clone(&table);
                    self.spawn_background(format!("backfill-{}", index.name), move |engine| {
                        engine.backfill_vector_index(&table, &index)
                    })?;
                }
            }
        }
        Ok(())
    }
}
