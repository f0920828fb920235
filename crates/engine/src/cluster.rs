//! Several Ferrodyn processes over one shared database (issue 13): what the
//! engine does differently when [`Storage::shared`] is true. Embedded
//! storage never takes these paths, so they cost the embedded modes
//! nothing.
//!
//! - Checked commits: the item locks ([`crate::locks`]) order the writers of
//!   one process only, so a write's read set (the item as planned, the
//!   table's catalog record as this node knows it, LSI collection sizes)
//!   also goes to [`Storage::write_checked`]; a storage conflict (another
//!   node wrote one of those keys) re-plans and re-commits
//!   ([`Engine::retry`] on [`crate::error::EngineError::Conflict`], the one
//!   retry loop), then surfaces as TransactionConflict. Checking the
//!   catalog record means no node writes
//!   with a stale schema: a conflict there reloads the catalog first.
//! - No row every write touches: statistics are the insert-only delta
//!   records of [`crate::stats`], which here only the lease holder folds,
//!   in checked batches; describing a table sums base and deltas
//!   ([`Engine::refresh_stats`]).
//! - Sequence numbers (stream records, statistics deltas) are hybrid clocks:
//!   microseconds since the epoch shifted left 8 bits, plus an 8-bit node
//!   slot, and always above the last one this node handed out. Stream
//!   record keys are checked absent in the commit, so a collision between
//!   nodes is a conflict and a retry, never an overwrite; statistics delta
//!   keys carry the whole node id after the number instead. Two writes of one
//!   item are ordered by the database (each reads what the previous wrote),
//!   so their records are ordered as long as node clocks agree to within
//!   the time between the two writes (NTP-level skew; same clock on one
//!   machine). A stream reader is not held back by other nodes' writes in
//!   flight (the sequence gate of [`crate::streams`] is per process), so a
//!   record committed late with a lower number can be passed over by a
//!   reader already beyond it: streams here promise order per item.
//! - The catalog is reloaded when a name is not found, when a write's
//!   catalog check fails, before DDL and listings, and every second by the
//!   upkeep thread ([`Engine::start_cluster_upkeep`]); the reloads, checked
//!   catalog commits and the stored id allocator live with the catalog
//!   (catalog.rs), the statistics' refresh and fold with the statistics
//!   (stats.rs), TransactGetItems' checked snapshot with the transactions
//!   (transactions.rs). This module keeps what is only about nodes: their
//!   ids and sequence numbers, read sets, the lease and the upkeep.
//! - Vector indexes: each node's in-memory search structure follows the
//!   other nodes' writes through the table's change log, where such a table
//!   logs a keys-only record of every write (vector_ops/follow.rs).
//! - A lease (`"mlease"`, renewed every second, valid five) picks the one
//!   node that runs TTL sweeps, GSI backfills, purges, the statistics fold,
//!   (every minute) the sweep of orphaned index keys and the take-up of S3
//!   transfers whose node stopped (transfers.rs); another node takes it over
//!   when the holder stops renewing.

use crate::items::PlannedWrite;
use crate::keyspace::LEASE;
use crate::table::Table;
use crate::Engine;
use ferrodyn_storage::{ReadCheck, StorageError, WriteOp};
use ferrodyn_types::Result;
use parking_lot::Mutex;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How often the upkeep thread reloads the catalog and renews the lease.
const UPKEEP_INTERVAL: Duration = Duration::from_secs(1);
/// How long a lease lasts without renewal.
const LEASE_MILLIS: u64 = 5_000;
/// How often the lease holder sweeps orphaned index keys (and once when it
/// takes the lease).
const ORPHAN_SWEEP_MILLIS: u64 = 60_000;

/// This node's part in a shared database.
pub(crate) struct Cluster {
    /// A random id naming this process in the lease.
    node: u64,
    /// The last sequence number handed out.
    pub(crate) last_seq: Mutex<u64>,
    /// Until when (ms since the epoch) this node holds the lease; 0: not.
    lease_until: AtomicU64,
    /// Background jobs this node runs now, by name (no job twice).
    pub(crate) jobs: Mutex<HashSet<String>>,
    /// When (ms since the epoch) this node, as lease holder, last started
    /// the orphaned-index sweep; 0: never.
    last_orphan_sweep: AtomicU64,
    /// When this node, as lease holder, last read every S3 job's record
    /// looking for ones without a heartbeat (transfers.rs); 0: never.
    pub(crate) last_transfer_scan: AtomicU64,
    /// Held by a catalog reload from its scan to its swap, and by this
    /// node's DDL from its catalog commit to its in-memory update, so a
    /// reload never puts back a record this node has just replaced.
    pub(crate) reload_lock: Mutex<()>,
}

impl Default for Cluster {
    fn default() -> Cluster {
        // RandomState is seeded randomly per process; mix in pid and time.
        let seed = std::collections::hash_map::RandomState::new();
        let node = std::hash::BuildHasher::hash_one(&seed, (std::process::id(), now_micros()));
        Cluster {
            node,
            last_seq: Mutex::new(0),
            lease_until: AtomicU64::new(0),
            last_orphan_sweep: AtomicU64::new(0),
            last_transfer_scan: AtomicU64::new(0),
            jobs: Mutex::new(HashSet::new()),
            reload_lock: Mutex::new(()),
        }
    }
}

#[derive(Serialize, Deserialize)]
struct Lease {
    node: u64,
    until_ms: u64,
}

pub(crate) fn now_millis() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// How long a write on shared storage may take from taking its sequence
/// number to committing, as stream readers assume: a reader reads only
/// numbers older than this, so a record committed within it is never
/// skipped. (A commit slower than this, a stalled database, could still be
/// read past; DynamoDB Streams' own delay is of the same order.)
pub(crate) const COMMIT_WINDOW_MICROS: u64 = 2_000_000;

impl Engine {
    /// One past the highest hybrid-clock sequence number whose write has
    /// committed or never will (see [`COMMIT_WINDOW_MICROS`]).
    pub(crate) fn settled_sequence(&self) -> u64 {
        now_micros().saturating_sub(COMMIT_WINDOW_MICROS) << 8
    }
}

fn now_micros() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

impl Engine {
    /// True on shared storage.
    pub(crate) fn shared(&self) -> bool {
        self.storage.shared()
    }

    /// The check of a key a planner read (shared storage only).
    pub(crate) fn read_check(&self, key: &[u8], found: &Option<Vec<u8>>) -> Option<ReadCheck> {
        self.shared().then(|| ReadCheck {
            key: key.to_vec(),
            expected: found.clone(),
        })
    }

    /// Everything `writes` read that must still hold at commit: each item
    /// and its table's catalog record as planned, each LSI collection size (read here,
    /// before the commit computes the new sizes from it). Empty on embedded
    /// storage.
    pub(crate) fn read_set(&self, writes: &[PlannedWrite]) -> Result<Vec<ReadCheck>> {
        if !self.shared() {
            return Ok(Vec::new());
        }
        let mut checks: Vec<ReadCheck> = Vec::new();
        for write in writes {
            checks.extend(write.read.iter().cloned());
            if let Some(change) = &write.collection {
                let found = self
                    .storage
                    .get(&change.record)
                    .map_err(crate::storage_error)?;
                checks.push(ReadCheck {
                    key: change.record.clone(),
                    expected: found,
                });
            }
        }
        Ok(checks)
    }

    /// The check that `table`'s catalog record is what this node planned
    /// with, taken before planning reads anything (shared storage only).
    pub(crate) fn catalog_read(&self, table: &Table) -> Vec<ReadCheck> {
        if self.shared() {
            vec![self.catalog_check(table)]
        } else {
            Vec::new()
        }
    }

    /// Stream record keys must be new: checked absent (shared storage).
    pub(crate) fn check_absent(&self, checks: &mut Vec<ReadCheck>, key: &[u8]) {
        if self.shared() {
            checks.push(ReadCheck {
                key: key.to_vec(),
                expected: None,
            });
        }
    }

    /// This process's random 64-bit node id (the lease holder's name; its
    /// low 8 bits are the hybrid clock's node slot).
    pub(crate) fn node_id(&self) -> u64 {
        self.cluster.node
    }

    /// The next sequence number: the engine-wide counter on embedded
    /// storage, the hybrid clock (see the module header) on shared.
    pub(crate) fn allocate_sequence(&self) -> u64 {
        if !self.shared() {
            return self.next_stream_seq.fetch_add(1, Ordering::SeqCst);
        }
        let mut last = self.cluster.last_seq.lock();
        let clock = (now_micros() << 8) | (self.cluster.node & 0xff);
        let floor = self.next_stream_seq.load(Ordering::SeqCst);
        *last = clock.max(*last + 1).max(floor);
        self.next_stream_seq.store(*last + 1, Ordering::SeqCst);
        *last
    }

    /// True when this process may run background work: always on embedded
    /// storage, only while holding the lease on shared storage.
    pub(crate) fn runs_background_work(&self) -> bool {
        !self.shared() || self.cluster.lease_until.load(Ordering::SeqCst) > now_millis()
    }

    /// Whether a background job may start here now (always on embedded
    /// storage). On shared storage: not while this node runs a job of the
    /// same name, and only on the lease holder, except an index purge,
    /// which runs where the index was deleted (nothing stored names it; a
    /// purge cut short is finished by the lease holder's orphan sweep).
    pub(crate) fn claim_job(&self, name: &str) -> bool {
        if !self.shared() {
            return true;
        }
        if !name.starts_with("purge-index-") && !self.runs_background_work() {
            return false;
        }
        self.cluster.jobs.lock().insert(name.to_string())
    }

    /// A job claimed with [`Engine::claim_job`] ended.
    pub(crate) fn release_job(&self, name: &str) {
        if self.shared() {
            self.cluster.jobs.lock().remove(name);
        }
    }

    /// Takes or renews the lease; returns whether this node holds it.
    fn renew_lease(&self) -> Result<bool> {
        let now = now_millis();
        let stored = self.storage.get(LEASE).map_err(crate::storage_error)?;
        let current: Option<Lease> = stored.as_ref().and_then(|v| serde_json::from_slice(v).ok());
        if current
            .as_ref()
            .is_some_and(|l| l.node != self.cluster.node && l.until_ms > now)
        {
            self.cluster.lease_until.store(0, Ordering::SeqCst);
            return Ok(false);
        }
        let lease = Lease {
            node: self.cluster.node,
            until_ms: now + LEASE_MILLIS,
        };
        let ops = vec![WriteOp::Put(
            LEASE.to_vec(),
            serde_json::to_vec(&lease).expect("plain data always serialises"),
        )];
        let checks = vec![ReadCheck {
            key: LEASE.to_vec(),
            expected: stored,
        }];
        match self.storage.write_checked(checks, ops) {
            Ok(()) => {
                // Count the lease from before the read, so it never
                // outlives what other nodes see stored.
                self.cluster
                    .lease_until
                    .store(now + LEASE_MILLIS - 1_000, Ordering::SeqCst);
                Ok(true)
            }
            Err(StorageError::Conflict { .. }) => Ok(false),
            Err(e) => Err(crate::storage_error(e)),
        }
    }

    /// On shared storage, starts the thread that every second reloads the
    /// catalog, renews the lease and, as lease holder, resumes purges and
    /// backfills no node is running and folds statistics deltas.
    pub fn start_cluster_upkeep(self: &Arc<Self>) {
        if !self.shared() {
            return;
        }
        self.run_periodically("ferrodyn-cluster", UPKEEP_INTERVAL, "cluster upkeep", |e| {
            e.upkeep()
        });
        self.start_vector_follower();
    }

    fn upkeep(self: &Arc<Self>) -> Result<()> {
        self.reload_catalog()?;
        self.beat_transfers()?;
        if !self.renew_lease()? {
            return Ok(());
        }
        self.resume_shared_jobs()?;
        self.start_kinesis_worker_if_needed(); // a destination enabled on another node
        let tables: Vec<_> = self.tables.read().values().cloned().collect();
        for table in tables {
            self.fold_all(table.id, None)?;
            for id in table.all_index_ids() {
                self.fold_all(table.id, Some(id))?;
            }
        }
        Ok(())
    }

    /// The lease holder's share of [`Engine::resume_background_work`]:
    /// purges and backfills, each started unless this node runs it already,
    /// and now and then the sweep of orphaned index keys (a GSI purge cut
    /// short by the death of the node that ran it: nothing stored names it,
    /// so the sweep looks for keys of index ids the catalog no longer has).
    fn resume_shared_jobs(self: &Arc<Self>) -> Result<()> {
        let tables: Vec<_> = self.tables.read().values().cloned().collect();
        let now = now_millis();
        let last = self.cluster.last_orphan_sweep.load(Ordering::SeqCst);
        if now.saturating_sub(last) >= ORPHAN_SWEEP_MILLIS {
            self.cluster.last_orphan_sweep.store(now, Ordering::SeqCst);
            self.spawn_orphan_sweep(tables.clone())?;
        }
        self.resume_table_purges()?;
        self.resume_backup_work()?;
        self.resume_stalled_transfers()?;
        self.resume_backfills(tables)
    }
}
