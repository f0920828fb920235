//! UpdateTable's VectorIndexUpdates: adding a vector index to a populated
//! table and backfilling it while the table keeps serving, and deleting one.
//!
//! As for GSIs (index_changes.rs): a new index is maintained by every write
//! from the moment it is added; the backfill walks the table in chunks,
//! holding the table's writes for each chunk and re-reading every item, so
//! an item written meanwhile is never indexed from a stale copy. The index
//! is CREATING with Backfilling true until the walk ends (SearchVectors
//! refuses it meanwhile, as DynamoDB does), then ACTIVE; both states
//! survive a restart. A deleted index's entries and statistics are purged
//! in the background.

use crate::error::EngineError;
use crate::index::IndexState;
use crate::items::StoredItem;
use crate::keyspace::{index_stats_key, table_items, vector_entry_key};
use crate::read::Walk;
use crate::schema::{AttributeDefinition, TableDescription, VectorIndexDescription};
use crate::table::{Table, TableStats};
use crate::vectors::{VectorChange, VectorIndex};
use crate::Engine;
use ferrodyn_storage::WriteOp;
use ferrodyn_types::{item_size, DynamoError, Result};
use std::sync::Arc;

/// Base items read per backfill step (one hold of the table's writes).
const BACKFILL_CHUNK: usize = 256;

impl Engine {
    /// Adds a vector index and starts backfilling it in the background.
    pub fn create_vector_index(
        self: &Arc<Self>,
        table_name: &str,
        mut description: VectorIndexDescription,
        definitions: Vec<AttributeDefinition>,
    ) -> Result<TableDescription> {
        let (table, index) = {
            let _guard = self.catalog_lock.lock();
            let table = self.table_to_change(table_name)?;
            let _writes = table.exclusive();
            self.check_table_operations()?;
            let current = table.describe();
            if table.vector_index(&description.index_name).is_some() {
                return Err(DynamoError::validation(
                    "Attempting to create an index which already exists",
                ));
            }
            let mut with_definitions = current.clone();
            for definition in &definitions {
                let known = (with_definitions.attribute_definitions.iter())
                    .any(|a| a.attribute_name == definition.attribute_name);
                if !known {
                    with_definitions
                        .attribute_definitions
                        .push(definition.clone());
                }
            }
            crate::vectors::check_index_set(&with_definitions, std::slice::from_ref(&description))?;
            let id = table.allocate_index_id();
            description.index_arn =
                format!("{}/index/{}", current.table_arn, description.index_name);
            description.index_status = Some("CREATING".into());
            description.backfilling = Some(true);
            let updated = table.update_description(|d| {
                for definition in &definitions {
                    let known = (d.attribute_definitions.iter())
                        .any(|a| a.attribute_name == definition.attribute_name);
                    if !known {
                        d.attribute_definitions.push(definition.clone());
                    }
                }
                d.vector_indexes
                    .get_or_insert_with(Vec::new)
                    .push(description.clone());
            });
            let index = Arc::new(VectorIndex::new(
                id,
                &description,
                &updated.attribute_definitions,
                IndexState::Backfilling,
                TableStats::default(),
            ));
            self.configure_store(&index);
            table.add_vector_index(Arc::clone(&index));
            self.save_catalog_record(&table)?;
            drop(_writes);
            (table, index)
        };
        let name = index.name.clone();
        self.backfill_in_background(table, &name, move |engine, table| {
            engine.backfill_vector_index(table, &index)
        })
    }

    /// Removes a vector index at once and purges its entries.
    pub fn delete_vector_index(
        self: &Arc<Self>,
        table_name: &str,
        index_name: &str,
    ) -> Result<TableDescription> {
        let _guard = self.catalog_lock.lock();
        let table = self.table_to_change(table_name)?;
        let _writes = table.exclusive();
        self.check_table_operations()?;
        let Some(index) = table.remove_vector_index(index_name) else {
            return Err(DynamoError::resource_not_found(format!(
                "Requested resource not found: Index {index_name} for table {}",
                table.name
            )));
        };
        let mut reported = table.update_description(|d| {
            if let Some(list) = &mut d.vector_indexes {
                list.retain(|i| i.index_name != index_name);
                if list.is_empty() {
                    d.vector_indexes = None;
                }
            }
        });
        self.save_catalog_record(&table)?;
        self.purge_index(&table, index.id, index_name)?;
        reported.table_status = "UPDATING".into();
        Ok(reported)
    }

    /// Fills `index` from the table's existing items, then marks it ACTIVE.
    pub(crate) fn backfill_vector_index(
        &self,
        table: &Arc<Table>,
        index: &Arc<VectorIndex>,
    ) -> Result<()> {
        self.walk_prefix(&table_items(table.id), BACKFILL_CHUNK, |chunk| {
            let _writes = table.exclusive();
            let current = self.tables.read().get(&table.catalog_name).cloned();
            if current.is_none_or(|t| t.id != table.id) || !still_current(table, index) {
                return Ok(Walk::Stop);
            }
            self.backfill_vector_chunk(table, index, chunk)?;
            Ok(Walk::Continue)
        })?;
        let _guard = self.catalog_lock.lock();
        let _writes = table.exclusive();
        if still_current(table, index) {
            index.figures.set_state(IndexState::Active);
            table.update_description(|d| {
                for shown in d.vector_indexes.iter_mut().flatten() {
                    if shown.index_name == index.name {
                        shown.index_status = Some("ACTIVE".into());
                        shown.backfilling = None;
                    }
                }
            });
            self.save_catalog_record(table)?;
        }
        Ok(())
    }

    /// Indexes the items of one chunk that have no entry yet (the caller
    /// holds the table's writes).
    fn backfill_vector_chunk(
        &self,
        table: &Arc<Table>,
        index: &Arc<VectorIndex>,
        chunk: &[(Vec<u8>, Vec<u8>)],
    ) -> Result<()> {
        let mut ops = Vec::new();
        let mut checks = Vec::new(); // shared storage: what was read (cluster.rs)
        let mut added = Vec::new();
        let mut delta = TableStats::default();
        for (key, _) in chunk {
            let Some(bytes) = self.storage.get(key).map_err(crate::storage_error)? else {
                continue;
            };
            checks.extend(self.read_check(key, &Some(bytes.clone())));
            let item = StoredItem::decode(bytes)?.parse()?;
            let Some(entry) = index.entry_of(&item) else {
                continue;
            };
            let entry_key = vector_entry_key(table.id, index.id, key);
            let found = self.storage.get(&entry_key).map_err(crate::storage_error)?;
            if found.is_some() {
                continue;
            }
            checks.extend(self.read_check(&entry_key, &None));
            delta.item_count += 1;
            delta.size_bytes += item_size(&index.project(&table.schema, &item)) as i64;
            ops.push(WriteOp::Put(entry_key, entry.encode(index)));
            added.push((key.clone(), entry));
        }
        if ops.is_empty() {
            return Ok(());
        }
        ops.push(self.stats_delta(index_stats_key(table.id, index.id), delta));
        (self.storage.write_checked(checks, ops)).map_err(EngineError::from)?;
        index.figures.apply_stats_delta(delta);
        table.mark_stats_dirty();
        for (item_key, entry) in added {
            let change = VectorChange {
                index: Arc::clone(index),
                item_key,
                op: None,
                delta,
                write_bytes: 0.0,
                new: Some(entry),
            };
            change.apply();
        }
        Ok(())
    }
}

/// True while `index` is the table's vector index of that name.
fn still_current(table: &Table, index: &Arc<VectorIndex>) -> bool {
    table
        .vector_index(&index.name)
        .is_some_and(|current| Arc::ptr_eq(&current, index))
}
