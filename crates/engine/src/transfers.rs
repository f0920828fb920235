//! Where the jobs that move data through S3 (exports, imports, bulk puts)
//! run, and how one cut short is taken up again.
//!
//! - Embedded storage: the process that accepted the request runs the job;
//!   a job a stop cut short runs again when the binary starts
//!   ([`Engine::resume_transfers`], once the S3 store is set).
//! - Shared storage (several nodes over PostgreSQL): the node that accepted
//!   it runs it and beats its heart every second (`"mtransfer/<job>"`: the
//!   node and the time), from the cluster upkeep. The lease holder takes up
//!   any job left IN_PROGRESS whose heartbeat is older than
//!   [`TRANSFER_STALL_MS`] (its node died or was cut off), provided it has
//!   an S3 store itself. Every second it reads the heartbeats only (one per
//!   running job); every [`FULL_SCAN_MS`] it also reads every job's record,
//!   for a job whose node died before its first heartbeat. A node that was only cut off and comes back runs on
//!   too: each job is safe to run twice (an export rewrites the same
//!   objects, an import or bulk put puts the same items), and the last to
//!   end writes the description.
//!
//! Each job module says how its jobs resume (`resume_exports`,
//! `resume_imports`, `resume_bulk_puts`); this module decides which.

use crate::cluster::now_millis;
use crate::keyspace;
use crate::Engine;
use ferrodyn_storage::WriteOp;
use ferrodyn_types::Result;
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// How long a job on shared storage may go without a heartbeat before the
/// lease holder takes it up.
pub(crate) const TRANSFER_STALL_MS: u64 = 10_000;

/// How often the lease holder reads every job record, not only heartbeats.
const FULL_SCAN_MS: u64 = 60_000;

/// The names of transfer jobs (as given to [`Engine::spawn_transfer`]).
const JOB_PREFIXES: [&str; 3] = ["export-", "import-", "bulk-put-"];

/// A job's last sign of life.
#[derive(Serialize, Deserialize)]
struct Heartbeat {
    /// The node running it; 0 before any node has claimed it.
    node: u64,
    at_ms: u64,
}

impl Engine {
    /// Jobs a stop cut short run again, once the binary has set the S3
    /// store ([`Engine::set_objects`]). Embedded storage only: on shared
    /// storage the cluster upkeep takes up stalled jobs instead.
    pub fn resume_transfers(self: &Arc<Self>) -> Result<()> {
        if self.shared() {
            return Ok(());
        }
        let every = |_: &str| true;
        self.resume_exports(&every)?;
        self.resume_imports(&every)?;
        self.resume_bulk_puts(&every)
    }

    /// The S3 store the jobs use, or DynamoDB's (FailureCode, FailureMessage)
    /// for a server started without one.
    pub(crate) fn object_store(
        &self,
    ) -> std::result::Result<Arc<dyn crate::objects::Objects>, (String, String)> {
        self.objects.read().clone().ok_or_else(|| {
            let message = "Ferrodyn has no S3 endpoint: start it with --s3-endpoint URL";
            ("S3NoSuchBucket".to_string(), message.to_string())
        })
    }

    /// Runs a transfer job on a thread of its own; on shared storage,
    /// registered and heartbeating until it ends (not started twice here).
    pub(crate) fn spawn_transfer(
        self: &Arc<Self>,
        name: String,
        job: impl FnOnce() -> Result<()> + Send + 'static,
    ) -> Result<()> {
        if self.shared() {
            if !self.cluster.jobs.lock().insert(name.clone()) {
                return Ok(());
            }
            if let Err(error) = self.beat(&name) {
                self.release_job(&name);
                return Err(error);
            }
        }
        let engine = Arc::clone(self);
        let heartbeat = keyspace::transfer_heartbeat_key(&name);
        self.spawn_job_here(name, move |_| {
            let outcome = job();
            if engine.shared() {
                engine.write_retrying_conflicts(vec![WriteOp::Delete(heartbeat)])?;
            }
            outcome
        })
    }

    fn beat(&self, name: &str) -> Result<()> {
        let beat = Heartbeat {
            node: self.node_id(),
            at_ms: now_millis(),
        };
        let bytes = serde_json::to_vec(&beat).map_err(crate::storage_error)?;
        let key = keyspace::transfer_heartbeat_key(name);
        Ok(self.write_retrying_conflicts(vec![WriteOp::Put(key, bytes)])?)
    }

    /// Every node, every upkeep round: the heartbeats of its transfer jobs.
    pub(crate) fn beat_transfers(&self) -> Result<()> {
        let names: Vec<String> = (self.cluster.jobs.lock().iter())
            .filter(|name| JOB_PREFIXES.iter().any(|prefix| name.starts_with(prefix)))
            .cloned()
            .collect();
        names.iter().try_for_each(|name| self.beat(name))
    }

    /// The lease holder, every upkeep round: jobs whose node stopped,
    /// found by their heartbeats (and now and then by every record).
    pub(crate) fn resume_stalled_transfers(self: &Arc<Self>) -> Result<()> {
        if self.objects.read().is_none() {
            return Ok(());
        }
        let now = now_millis();
        let last = self.cluster.last_transfer_scan.load(Ordering::SeqCst);
        let full = now.saturating_sub(last) >= FULL_SCAN_MS;
        let silent = self.silent_heartbeats()?;
        if silent.is_empty() && !full {
            return Ok(());
        }
        if full {
            self.cluster.last_transfer_scan.store(now, Ordering::SeqCst);
        }
        let take = |name: &str| match full {
            true => self.stalled(name).unwrap_or(false),
            false => silent.contains(name) && self.stalled(name).unwrap_or(false),
        };
        self.resume_exports(&take)?;
        self.resume_imports(&take)?;
        self.resume_bulk_puts(&take)
    }

    /// The jobs whose heartbeat is older than [`TRANSFER_STALL_MS`].
    fn silent_heartbeats(&self) -> Result<HashSet<String>> {
        let now = now_millis();
        let beats = self.scan_all_under(keyspace::TRANSFER_HEARTBEATS)?;
        Ok((beats.into_iter())
            .filter_map(|(key, bytes)| {
                let beat: Heartbeat = serde_json::from_slice(&bytes).ok()?;
                let name = key.strip_prefix(keyspace::TRANSFER_HEARTBEATS)?;
                let silent = now.saturating_sub(beat.at_ms) > TRANSFER_STALL_MS;
                silent.then(|| String::from_utf8_lossy(name).into_owned())
            })
            .collect())
    }

    /// Whether an unfinished job has gone without a heartbeat too long. A
    /// job seen without one gets one now (its node may be about to write
    /// its first), so it is taken up only if nothing beats after that.
    fn stalled(&self, name: &str) -> Result<bool> {
        if self.cluster.jobs.lock().contains(name) {
            return Ok(false);
        }
        let key = keyspace::transfer_heartbeat_key(name);
        let stored = self.storage.get(&key).map_err(crate::storage_error)?;
        let Some(beat) = stored.and_then(|bytes| serde_json::from_slice::<Heartbeat>(&bytes).ok())
        else {
            let first_seen = Heartbeat {
                node: 0,
                at_ms: now_millis(),
            };
            let bytes = serde_json::to_vec(&first_seen).map_err(crate::storage_error)?;
            self.write_retrying_conflicts(vec![WriteOp::Put(key, bytes)])?;
            return Ok(false);
        };
        let silent = now_millis().saturating_sub(beat.at_ms);
        if silent > TRANSFER_STALL_MS {
            eprintln!(
                "ferrodyn: {name} has had no heartbeat for {silent} ms: taking it up on this node"
            );
            return Ok(true);
        }
        Ok(false)
    }
}
