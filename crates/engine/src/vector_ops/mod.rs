//! The engine's operations on vector indexes (the index itself, its
//! entries and its search structure are `vectors/`): the entries a write
//! changes ([`Engine::vector_changes`], called by the one write plan in
//! `items.rs` beside the GSI entries), adding and deleting vector indexes
//! with an online backfill (`changes.rs`), loading their search structures
//! at start-up (`load.rs`), following other nodes' writes on shared storage
//! (`follow.rs`), and SearchVectors (`search.rs`).

mod changes;
mod follow;
mod load;
mod search;

pub use search::{SearchOutput, SearchRequest, SearchResult, VectorIndexReport};

use crate::index::IndexState;
use crate::keyspace::vector_entry_key;
use crate::table::{Table, TableStats};
use crate::vectors::{Entry, VectorChange};
use crate::Engine;
use ferrodyn_storage::{ReadCheck, WriteOp};
use ferrodyn_types::{item_size, Item, Result};
use std::sync::Arc;

impl Engine {
    /// How the entries of the item stored under `item_key` change in every
    /// vector index of `table` when it goes from `old` to `new`; refuses a
    /// `new` item whose vector or search-schema attributes are malformed.
    pub(crate) fn vector_changes(
        &self,
        table: &Table,
        item_key: &[u8],
        old: Option<&Item>,
        new: Option<&Item>,
        read: &mut Vec<ReadCheck>,
    ) -> Result<Vec<VectorChange>> {
        if !table.has_vector_index() {
            return Ok(Vec::new());
        }
        let mut changes = Vec::new();
        for index in table.vector_indexes() {
            if let Some(new) = new {
                index.validate_item(new)?;
            }
            let key = vector_entry_key(table.id, index.id, item_key);
            let mut old_entry = old.and_then(|o| index.entry_of(o));
            // While the index is backfilled the old item may have no entry yet.
            if old_entry.is_some() && index.figures.state() == IndexState::Backfilling {
                let found = self.storage.get(&key).map_err(crate::storage_error)?;
                read.extend(self.read_check(&key, &found));
                if found.is_none() {
                    old_entry = None;
                }
            }
            let new_entry = new.and_then(|n| index.entry_of(n));
            let sized = |item: Option<&Item>, entry: &Option<Entry>| {
                let item = item.filter(|_| entry.is_some())?;
                Some(item_size(&index.project(&table.schema, item)) as i64)
            };
            let (old_size, new_size) = (sized(old, &old_entry), sized(new, &new_entry));
            if old_entry == new_entry && old_size == new_size {
                continue;
            }
            let op = match &new_entry {
                Some(entry) if Some(entry) == old_entry.as_ref() => None,
                Some(entry) => Some(WriteOp::Put(key, entry.encode(&index))),
                None => Some(WriteOp::Delete(key)),
            };
            let written = new
                .filter(|_| new_entry.is_some())
                .or(old.filter(|_| old_entry.is_some()));
            let write_bytes = written.map_or(0, |item| index.write_bytes(&table.schema, item));
            changes.push(VectorChange {
                item_key: item_key.to_vec(),
                op,
                delta: TableStats {
                    item_count: i64::from(new_entry.is_some()) - i64::from(old_entry.is_some()),
                    size_bytes: new_size.unwrap_or(0) - old_size.unwrap_or(0),
                },
                write_bytes: write_bytes as f64,
                new: new_entry,
                index: Arc::clone(&index),
            });
        }
        Ok(changes)
    }
}
