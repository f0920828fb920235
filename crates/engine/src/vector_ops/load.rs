//! Building the vector indexes a catalog record describes, their search
//! structures filled from their stored entries (at start-up, after a
//! restore, and when another node's catalog is read on shared storage,
//! where an index this node has already built and follows is kept).
//! The entries are read in one pass; the HNSW graphs are then built by the
//! indexer threads in the background while searches scan what is not in a
//! graph yet, so a search is exact and complete from the first request.

use crate::index::IndexState;
use crate::keyspace::{index_entries, index_stats_key, item_key_of_vector_entry};
use crate::read::Walk;
use crate::schema::TableDescription;
use crate::shared::TableStats;
use crate::vectors::{Entry, VectorIndex};
use crate::Engine;
use ferrodyn_types::Result;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Entries read per storage scan while filling a search structure.
const LOAD_CHUNK: usize = 1024;

impl Engine {
    /// The vector indexes of a table's catalog record (`ids`: index ids by
    /// name; `backfilling`: the names of indexes still being filled).
    /// `known`: this node's current form of the table, whose active indexes
    /// are kept as they are (shared storage: their structures follow the
    /// other nodes' writes, vector_ops/follow.rs, so rebuilding them for
    /// every change of the catalog record would only cost time).
    pub(crate) fn load_vector_indexes(
        &self,
        table_id: u64,
        description: &TableDescription,
        (ids, backfilling): (&BTreeMap<String, u32>, &[String]),
        known: Option<&crate::table::Table>,
    ) -> Result<Vec<Arc<VectorIndex>>> {
        let mut out = Vec::new();
        for shown in description.vector_indexes.iter().flatten() {
            let Some(&id) = ids.get(&shown.index_name) else {
                continue;
            };
            let kept = (known.filter(|t| t.id == table_id))
                .and_then(|t| t.vector_index(&shown.index_name))
                .filter(|i| i.id == id && i.figures.state() == IndexState::Active);
            if let Some(kept) = kept.filter(|_| !backfilling.contains(&shown.index_name)) {
                out.push(kept);
                continue;
            }
            let stats = if self.storage.shared() {
                TableStats::default()
            } else {
                self.fold_stats(&index_stats_key(table_id, id))?
            };
            let state = if backfilling.contains(&shown.index_name) {
                IndexState::Backfilling
            } else {
                IndexState::Active
            };
            let definitions = &description.attribute_definitions;
            let index = Arc::new(VectorIndex::new(id, shown, definitions, state, stats));
            self.configure_store(&index);
            self.fill_vector_store(table_id, &index, &mut |_| {})?;
            out.push(index);
        }
        Ok(out)
    }

    /// A new search structure as the server's options want it (no graphs
    /// under `--vector-search exact`), following other nodes' writes from
    /// now on (shared storage).
    pub(crate) fn configure_store(&self, index: &VectorIndex) {
        if self.exact_vector_search {
            index.store.without_graphs();
        }
        self.start_following(index);
    }

    /// Puts every stored entry of `index` into its search structure, telling
    /// `seen` each item's key.
    pub(crate) fn fill_vector_store(
        &self,
        table_id: u64,
        index: &VectorIndex,
        seen: &mut dyn FnMut(&[u8]),
    ) -> Result<()> {
        self.walk_prefix(&index_entries(table_id, index.id), LOAD_CHUNK, |chunk| {
            for (key, value) in chunk {
                let entry = Entry::decode(index, value)?;
                let item = item_key_of_vector_entry(table_id, key);
                index.store.set(&item, Some(&entry));
                seen(&item);
            }
            Ok(Walk::Continue)
        })
    }
}
