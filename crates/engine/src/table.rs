//! A table as the engine holds it in memory: its identity, key schema,
//! description, and live item count and size.

use crate::keys::KeySchema;
use crate::schema::TableDescription;
use parking_lot::RwLock;
use std::sync::atomic::{AtomicI64, Ordering};

pub struct Table {
    /// Storage id, unique for the life of the database: a re-created table with
    /// the same name gets a new id, so leftovers of the old one never leak in.
    pub id: u64,
    pub name: String,
    pub schema: KeySchema,
    description: RwLock<TableDescription>,
    item_count: AtomicI64,
    size_bytes: AtomicI64,
}

impl Table {
    pub fn new(id: u64, description: TableDescription, stats: TableStats) -> Table {
        Table {
            id,
            name: description.table_name.clone(),
            schema: KeySchema::new(&description.key_schema, &description.attribute_definitions),
            description: RwLock::new(description),
            item_count: AtomicI64::new(stats.item_count),
            size_bytes: AtomicI64::new(stats.size_bytes),
        }
    }

    /// The current description with live ItemCount and TableSizeBytes.
    pub fn describe(&self) -> TableDescription {
        let mut description = self.description.read().clone();
        description.item_count = self.item_count.load(Ordering::Relaxed).max(0) as u64;
        description.table_size_bytes = self.size_bytes.load(Ordering::Relaxed).max(0) as u64;
        description
    }

    pub fn update_description(
        &self,
        change: impl FnOnce(&mut TableDescription),
    ) -> TableDescription {
        change(&mut self.description.write());
        self.describe()
    }

    pub fn stats(&self) -> TableStats {
        TableStats {
            item_count: self.item_count.load(Ordering::Relaxed),
            size_bytes: self.size_bytes.load(Ordering::Relaxed),
        }
    }

    /// Applies a committed write's effect on the counters.
    pub fn apply_stats_delta(&self, delta: TableStats) {
        self.item_count
            .fetch_add(delta.item_count, Ordering::Relaxed);
        self.size_bytes
            .fetch_add(delta.size_bytes, Ordering::Relaxed);
    }
}

/// Item count and total item bytes of a table (or a change to them).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TableStats {
    pub item_count: i64,
    pub size_bytes: i64,
}

impl TableStats {
    pub fn plus(self, other: TableStats) -> TableStats {
        TableStats {
            item_count: self.item_count + other.item_count,
            size_bytes: self.size_bytes + other.size_bytes,
        }
    }
}
