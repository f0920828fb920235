//! Persisted table and index statistics (ItemCount, TableSizeBytes,
//! IndexSizeBytes) that parallel writers can update without a shared lock.
//!
//! The live figures are atomics in memory ([`crate::table::Table`],
//! [`crate::index::Index`]). On disk each table (and index) has a base
//! record (JSON), under its stats key, and delta records (two big-endian
//! i64), under the stats key followed by an 8-byte engine-wide sequence
//! number (on shared storage the hybrid clock and the node's 64-bit id,
//! unique across nodes): every write puts the
//! change it made as a new delta record in the same storage batch as the
//! item, so it is exact after a crash, and no two writers ever write the same
//! key (an absolute record written by each writer would let a later batch
//! carry an older total). A background folder adds the deltas of tables
//! written since its last pass into the base and deletes them, in one batch
//! per table or index; a delta committed after the folder's scan is simply
//! left for the next pass. Only the folder (and start-up) writes a base, under
//! the catalog lock, so folds never race each other or a DeleteTable; each
//! fold is one checked write ([`Engine::fold_page`], the one fold of both
//! storages), so on shared storage, where the lease holder folds, a fold
//! that lost a race with another node's folds nothing.
//!
//! Recovery: at start-up a table's figures are its base plus every delta
//! left on disk, and are folded at once, so restart is exact whatever was
//! folded before a kill -9. DynamoDB itself refreshes ItemCount only about
//! every six hours; ours are exact at every moment.

use crate::error::{EngineResult, RetryPolicy};
use crate::keyspace::{self, prefix_end};
use crate::table::{Table, TableStats};
use crate::Engine;
use ferrodyn_storage::{ReadCheck, StorageError, WriteOp};
use ferrodyn_types::{DynamoError, Result};
use std::ops::Bound;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

/// How often the folder folds delta records into the bases.
pub const FOLD_INTERVAL: Duration = Duration::from_millis(500);

/// Delta records folded per storage batch (a short batch keeps the pause
/// it causes other writers short).
const FOLD_PAGE: usize = 1_000;

/// Fold pages per table or index per upkeep round on shared storage.
const FOLD_BATCHES: usize = 20;

/// The invariant of a complete total (a base with every delta folded in,
/// as a table is loaded): no count or size below zero, which only a delta
/// lost or applied twice could cause. Debug builds (every test) stop there;
/// a release server says so and goes on with the figure it has.
pub(crate) fn check_complete_total(table: &str, total: TableStats) {
    let sound = total.item_count >= 0 && total.size_bytes >= 0;
    debug_assert!(sound, "statistics of {table} below zero: {total:?}");
    if !sound {
        eprintln!("ferrodyn: statistics of {table} are below zero ({total:?}): a delta record was lost or applied twice");
    }
}

/// What one [`Engine::fold_page`] did.
pub(crate) struct FoldedPage {
    /// The base's total after the fold (meaningless when `raced`).
    pub total: TableStats,
    /// Deltas folded.
    pub folded: usize,
    /// The key of the last delta folded.
    pub last_folded: Option<Vec<u8>>,
    /// Another node changed the base or a delta first: nothing was folded.
    pub raced: bool,
}

/// A base record: JSON (its format since format 1).
pub(crate) fn decode(value: &[u8]) -> Result<TableStats> {
    serde_json::from_slice(value)
        .map_err(|e| DynamoError::internal(format!("corrupt statistics record: {e}")))
}

pub(crate) fn encode(stats: TableStats) -> Vec<u8> {
    serde_json::to_vec(&stats).expect("plain data always serialises")
}

/// A delta record: item count then bytes, two big-endian i64 (written on
/// every write, so kept cheaper than JSON).
fn encode_delta(delta: TableStats) -> Vec<u8> {
    let mut out = Vec::with_capacity(16);
    out.extend_from_slice(&delta.item_count.to_be_bytes());
    out.extend_from_slice(&delta.size_bytes.to_be_bytes());
    out
}

pub(crate) fn decode_delta(value: &[u8]) -> Result<TableStats> {
    let field = |at: usize| value.get(at..at + 8).and_then(|b| b.try_into().ok());
    match (field(0), field(8), value.len()) {
        (Some(count), Some(bytes), 16) => Ok(TableStats {
            item_count: i64::from_be_bytes(count),
            size_bytes: i64::from_be_bytes(bytes),
        }),
        _ => Err(DynamoError::internal("corrupt statistics delta record")),
    }
}

impl Engine {
    /// The delta record of a write's change to the statistics under `base`.
    pub(crate) fn stats_delta(&self, mut base: Vec<u8>, delta: TableStats) -> WriteOp {
        if self.shared() {
            // The hybrid clock (cluster.rs) carries only 8 bits of the node
            // id, so two nodes can draw the same number in one microsecond;
            // the whole 64-bit node id after it keeps their records apart
            // (these keys are not checked absent: an equal key would be a
            // silent overwrite, a lost delta).
            base.extend_from_slice(&self.allocate_sequence().to_be_bytes());
            base.extend_from_slice(&self.node_id().to_be_bytes());
        } else {
            let seq = self.next_stats_seq.fetch_add(1, Ordering::Relaxed);
            base.extend_from_slice(&seq.to_be_bytes());
        }
        WriteOp::Put(base, encode_delta(delta))
    }

    /// Adds the deltas under `base` into it and deletes them, a page at a
    /// time, until none is left; returns the folded total. Called at
    /// start-up and by the embedded folder (catalog lock).
    pub(crate) fn fold_stats(&self, base: &[u8]) -> Result<TableStats> {
        // Each page continues after the last key folded, not over the
        // tombstones of the pages before it.
        let mut after = base.to_vec();
        loop {
            let page = self.fold_page(base, &after, FOLD_PAGE)?;
            match page.last_folded {
                Some(last) if page.folded == FOLD_PAGE => after = last,
                // A page cut short by another node's fold is not the end:
                // re-read from the base.
                _ if page.raced => after = base.to_vec(),
                _ => return Ok(page.total),
            }
        }
    }

    /// Folds up to `limit` deltas under `base` (those after `after`) into
    /// it, in one checked write (the base as read, each delta still
    /// present): the one fold of both storages, which on shared storage
    /// never races another node's (a lost race folds nothing and says so)
    /// and on embedded storage is one batch.
    pub(crate) fn fold_page(&self, base: &[u8], after: &[u8], limit: usize) -> Result<FoldedPage> {
        let stored = self.storage.get(base).map_err(crate::storage_error)?;
        let mut total = match &stored {
            Some(value) => decode(value)?,
            None => TableStats::default(),
        };
        let deltas = self.stats_deltas(base, after, limit)?;
        let Some((last, _)) = deltas.last() else {
            return Ok(FoldedPage {
                total,
                folded: 0,
                last_folded: None,
                raced: false,
            });
        };
        let last_folded = Some(last.clone());
        let folded = deltas.len();
        let mut checks = vec![ReadCheck {
            key: base.to_vec(),
            expected: stored,
        }];
        let mut ops = Vec::with_capacity(folded + 1);
        for (key, value) in deltas {
            total = total.plus(decode_delta(&value)?);
            ops.push(WriteOp::Delete(key.clone()));
            checks.push(ReadCheck {
                key,
                expected: Some(value),
            });
        }
        ops.push(WriteOp::Put(base.to_vec(), encode(total)));
        match self.storage.write_checked(checks, ops) {
            Ok(()) => Ok(FoldedPage {
                total,
                folded,
                last_folded,
                raced: false,
            }),
            Err(StorageError::Conflict { .. }) => Ok(FoldedPage {
                total: TableStats::default(),
                folded: 0,
                last_folded: None,
                raced: true,
            }),
            Err(e) => Err(crate::storage_error(e)),
        }
    }

    /// Up to `limit` delta records under the statistics base `base` after
    /// the key `after` (the base itself to start).
    pub(crate) fn stats_deltas(
        &self,
        base: &[u8],
        after: &[u8],
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let end = prefix_end(base);
        let end = end.as_deref().map_or(Bound::Unbounded, Bound::Excluded);
        self.storage
            .scan(Bound::Excluded(after), end, false, limit)
            .map_err(crate::storage_error)
    }

    // ---- shared storage: nodes see each other's writes only through the
    // stored base and deltas (cluster.rs runs `fold_all` on the lease holder).

    /// Sets a table's in-memory item count and size (and its indexes') to
    /// the stored totals plus every delta not folded yet (shared storage).
    pub(crate) fn refresh_stats(&self, table: &Table) -> Result<()> {
        // A fold between reading a total and its deltas would count some
        // twice or not at all: the read is confirmed by the total unchanged.
        Ok(self.retry(RetryPolicy::Write, |_| self.refresh_stats_once(table))?)
    }

    fn refresh_stats_once(&self, table: &Table) -> EngineResult<()> {
        let fresh = self.stored_stats(table.id, None)?;
        table.apply_stats_delta(minus(fresh, table.stats()));
        for index in table.indexes() {
            let fresh = self.stored_stats(table.id, Some(index.id))?;
            index.apply_stats_delta(minus(fresh, index.stats()));
        }
        for index in table.vector_indexes() {
            let fresh = self.stored_stats(table.id, Some(index.id))?;
            (index.figures).apply_stats_delta(minus(fresh, index.figures.stats()));
        }
        Ok(())
    }

    fn stored_stats(&self, table_id: u64, index: Option<u32>) -> EngineResult<TableStats> {
        let base = stats_base(table_id, index);
        let stored = self.storage.get(&base)?;
        let mut total = match &stored {
            Some(value) => decode(value)?,
            None => TableStats::default(),
        };
        for (_, value) in self.stats_deltas(&base, &base, usize::MAX)? {
            total = total.plus(decode_delta(&value)?);
        }
        let unchanged = ReadCheck {
            key: base,
            expected: stored,
        };
        self.storage.write_checked(vec![unchanged], Vec::new())?;
        Ok(total)
    }

    /// Folds the deltas of one table or index, a page at a time, at most
    /// [`FOLD_BATCHES`] pages per upkeep round (so a write burst is caught
    /// up with over a few rounds instead of stalling the lease renewal); a
    /// page that lost a race with another node's fold ends the round.
    pub(crate) fn fold_all(&self, table_id: u64, index: Option<u32>) -> Result<()> {
        let base = stats_base(table_id, index);
        let mut after = base.clone();
        for _ in 0..FOLD_BATCHES {
            let page = self.fold_page(&base, &after, FOLD_PAGE)?;
            match page.last_folded {
                Some(last) if page.folded == FOLD_PAGE => after = last,
                _ => break,
            }
        }
        Ok(())
    }

    /// One pass of the folder: every table written since the last pass.
    pub fn fold_all_stats(&self) -> Result<()> {
        let _catalog = self.catalog_lock.lock();
        let tables: Vec<_> = self.tables.read().values().cloned().collect();
        for table in tables {
            if !table.take_stats_dirty() {
                continue;
            }
            self.fold_stats(&crate::keyspace::stats_key(table.id))?;
            for id in table.all_index_ids() {
                self.fold_stats(&crate::keyspace::index_stats_key(table.id, id))?;
            }
        }
        Ok(())
    }

    /// Starts the thread that folds statistics every [`FOLD_INTERVAL`]; it
    /// ends with the engine.
    pub(crate) fn start_stats_folder(self: &Arc<Self>) {
        self.run_periodically("ferrodyn-stats", FOLD_INTERVAL, "statistics fold", |e| {
            e.fold_all_stats()
        });
    }
}

/// The statistics base record of a table (`index` None) or of one index.
fn stats_base(table_id: u64, index: Option<u32>) -> Vec<u8> {
    match index {
        None => keyspace::stats_key(table_id),
        Some(id) => keyspace::index_stats_key(table_id, id),
    }
}

fn minus(a: TableStats, b: TableStats) -> TableStats {
    TableStats {
        item_count: a.item_count - b.item_count,
        size_bytes: a.size_bytes - b.size_bytes,
    }
}

#[cfg(test)]
mod tests {
    use crate::table::TableStats;
    use crate::{Engine, EngineOptions};
    use ferrodyn_storage::open_memory;
    use std::sync::Arc;

    #[test]
    fn deltas_add_up_and_fold_into_the_base() {
        let storage = open_memory();
        let engine = Engine::open(Arc::clone(&storage), EngineOptions::default()).unwrap();
        let base = crate::keyspace::stats_key(99);
        let one = TableStats {
            item_count: 1,
            size_bytes: 10,
        };
        let ops = (0..5)
            .map(|_| engine.stats_delta(base.clone(), one))
            .collect();
        storage.write(ops).unwrap();
        let folded = engine.fold_stats(&base).unwrap();
        assert_eq!(
            folded,
            TableStats {
                item_count: 5,
                size_bytes: 50
            }
        );
        // Only the base is left, and folding again changes nothing.
        let end = crate::keyspace::prefix_end(&base).unwrap();
        let left = storage
            .scan(
                std::ops::Bound::Included(base.as_slice()),
                std::ops::Bound::Excluded(end.as_slice()),
                false,
                100,
            )
            .unwrap();
        assert_eq!(left.len(), 1);
        assert_eq!(engine.fold_stats(&base).unwrap(), folded);
        let minus = TableStats {
            item_count: -2,
            size_bytes: -20,
        };
        storage
            .write(vec![engine.stats_delta(base.clone(), minus)])
            .unwrap();
        assert_eq!(
            engine.fold_stats(&base).unwrap(),
            TableStats {
                item_count: 3,
                size_bytes: 30
            }
        );
    }
}
