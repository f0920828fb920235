//! Snapshots and reset, for test suites: save every table of a namespace
//! (region.rs) under a name, put them back exactly later, or empty the
//! namespace. A suite creates its tables and fixtures once, saves them, and
//! restores them before each test instead of recreating them.
//!
//! A snapshot is a copy, in this process's memory, of each table's catalog
//! record and every key of its data (items, index entries, statistics,
//! stream records), read while the table's writes are held off, so each
//! table is copied at one instant. Restoring drops the namespace's current
//! tables (purged in the background, as DeleteTable does) and writes the
//! copies back under new table ids: ids are never reused (keyspace.rs), so a
//! purge still running for a dropped table can never delete restored data.
//! Names, ARNs, stream ARNs and sequence numbers, index statistics and
//! settings come back as they were saved. Deletion protection does not stop
//! a reset or a restore: they are the test harness's, not an application's.
//!
//! Not on shared storage (PostgreSQL): other nodes cache the catalog, and a
//! snapshot held in one node's memory is no backup (see issue "data
//! protection" for backups).

use crate::catalog::CatalogRecord;
use crate::keyspace::{self, catalog_key, purge_key, NEXT_TABLE_ID};
use crate::table::Table;
use crate::Engine;
use ferrodyn_storage::WriteOp;
use ferrodyn_types::{DynamoError, Result};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::ops::Bound;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Storage operations per batch while writing a restored table back.
const RESTORE_BATCH: usize = 50_000;

/// One table as saved.
struct SavedTable {
    catalog_name: String,
    /// The catalog record as stored.
    record: Vec<u8>,
    /// Every key of the table's data, under its id at the time.
    data: Vec<(Vec<u8>, Vec<u8>)>,
}

/// The saved tables of one namespace.
pub struct Snapshot {
    tables: Vec<SavedTable>,
}

/// What a snapshot holds (or a restore put back).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotSummary {
    pub tables: usize,
    /// Stored keys: items, index entries, statistics, stream records.
    pub keys: usize,
}

impl Snapshot {
    fn summary(&self) -> SnapshotSummary {
        SnapshotSummary {
            tables: self.tables.len(),
            keys: self.tables.iter().map(|t| t.data.len()).sum(),
        }
    }
}

/// A snapshot's namespace (None: the shared account) and name.
type SnapshotKey = (Option<String>, String);

/// Snapshots by namespace and name.
#[derive(Default)]
pub struct Snapshots(Mutex<HashMap<SnapshotKey, Arc<Snapshot>>>);

impl Engine {
    /// Saves every table of the request's namespace (all regions) as
    /// snapshot `name`, replacing one of that name.
    pub fn save_snapshot(&self, name: &str) -> Result<SnapshotSummary> {
        self.refuse_on_shared_storage("snapshots")?;
        let _catalog = self.catalog_lock.lock();
        let mut tables = Vec::new();
        for table in self.namespace_tables() {
            let _writes = table.exclusive();
            let mut data = Vec::new();
            for prefix in keyspace::table_data(table.id) {
                data.extend(self.scan_all(&prefix)?);
            }
            tables.push(SavedTable {
                catalog_name: table.catalog_name.clone(),
                record: table.catalog_bytes.read().clone(),
                data,
            });
        }
        let snapshot = Arc::new(Snapshot { tables });
        let summary = snapshot.summary();
        let key = (crate::region::request_namespace(), name.to_string());
        self.snapshots.0.lock().insert(key, snapshot);
        Ok(summary)
    }

    /// Replaces the request namespace's tables with snapshot `name`'s.
    pub fn restore_snapshot(self: &Arc<Self>, name: &str) -> Result<SnapshotSummary> {
        self.refuse_on_shared_storage("snapshots")?;
        let key = (crate::region::request_namespace(), name.to_string());
        let snapshot = self.snapshots.0.lock().get(&key).cloned();
        let Some(snapshot) = snapshot else {
            return Err(DynamoError::resource_not_found(format!(
                "No snapshot named {name} in this namespace"
            )));
        };
        let _catalog = self.catalog_lock.lock();
        self.drop_namespace_tables()?;
        let mut restored = Vec::new();
        for saved in &snapshot.tables {
            restored.push(self.write_back(saved)?);
        }
        self.resume_backfills(restored)?;
        Ok(snapshot.summary())
    }

    /// Deletes every table of the request's namespace (all regions); their
    /// data is purged in the background. Returns how many there were.
    pub fn reset_namespace(self: &Arc<Self>) -> Result<usize> {
        self.refuse_on_shared_storage("reset")?;
        let _catalog = self.catalog_lock.lock();
        self.drop_namespace_tables()
    }

    /// Names of the request namespace's snapshots, sorted.
    pub fn snapshot_names(&self) -> Vec<String> {
        let namespace = crate::region::request_namespace();
        let mut names: Vec<String> = (self.snapshots.0.lock().keys())
            .filter(|(ns, _)| *ns == namespace)
            .map(|(_, name)| name.clone())
            .collect();
        names.sort();
        names
    }

    /// Forgets snapshot `name`; false when there was none.
    pub fn delete_snapshot(&self, name: &str) -> bool {
        let key = (crate::region::request_namespace(), name.to_string());
        self.snapshots.0.lock().remove(&key).is_some()
    }

    fn refuse_on_shared_storage(&self, what: &str) -> Result<()> {
        if self.shared() {
            return Err(DynamoError::validation(format!(
                "{what} are not available on shared storage (--storage): use embedded or \
                 in-memory storage"
            )));
        }
        Ok(())
    }

    /// The request namespace's tables in every region, by catalog name.
    pub(crate) fn namespace_tables(&self) -> Vec<Arc<Table>> {
        let namespace = crate::region::request_namespace();
        let mut tables: Vec<Arc<Table>> = (self.tables.read().iter())
            .filter(|(key, _)| crate::region::in_namespace(key, namespace.as_deref()))
            .map(|(_, table)| Arc::clone(table))
            .collect();
        tables.sort_by(|a, b| a.catalog_name.cmp(&b.catalog_name));
        tables
    }

    /// Removes the namespace's tables as DeleteTable does (catalog record
    /// gone, purge marker, purge in the background). Holds the catalog lock.
    fn drop_namespace_tables(self: &Arc<Self>) -> Result<usize> {
        let tables = self.namespace_tables();
        for table in &tables {
            let _writes = table.exclusive();
            self.storage
                .write(vec![
                    WriteOp::Delete(catalog_key(&table.catalog_name)),
                    WriteOp::Put(purge_key(table.id), Vec::new()),
                ])
                .map_err(crate::storage_error)?;
            self.tables.write().remove(&table.catalog_name);
            let id = table.id;
            self.spawn_background(format!("purge-table-{id}"), move |engine| {
                engine.purge_table_data(id)
            })?;
        }
        Ok(tables.len())
    }

    /// Writes a saved table back under a new id and loads it. A purge
    /// marker covers the new id until the catalog record lands with the last
    /// batch, so a crash in between leaves nothing a restart keeps.
    fn write_back(&self, saved: &SavedTable) -> Result<Arc<Table>> {
        let id = self.next_table_id.fetch_add(1, Ordering::SeqCst);
        let mut record: CatalogRecord =
            serde_json::from_slice(&saved.record).map_err(crate::storage_error)?;
        record.id = id;
        let record = serde_json::to_vec(&record).map_err(crate::storage_error)?;
        let write = |ops| self.storage.write(ops).map_err(crate::storage_error);
        write(vec![
            WriteOp::Put(purge_key(id), Vec::new()),
            WriteOp::Put(NEXT_TABLE_ID.to_vec(), (id + 1).to_be_bytes().to_vec()),
        ])?;
        let mut ops: Vec<WriteOp> = (saved.data.iter())
            .map(|(key, value)| WriteOp::Put(keyspace::rehomed(key, id), value.clone()))
            .collect();
        while ops.len() > RESTORE_BATCH {
            let rest = ops.split_off(RESTORE_BATCH);
            write(std::mem::replace(&mut ops, rest))?;
        }
        let catalog = catalog_key(&saved.catalog_name);
        ops.push(WriteOp::Put(catalog.clone(), record.clone()));
        ops.push(WriteOp::Delete(purge_key(id)));
        write(ops)?;
        let table = self.table_from_record(&catalog, record, None)?;
        self.tables
            .write()
            .insert(saved.catalog_name.clone(), Arc::clone(&table));
        Ok(table)
    }

    /// Every key-value under `prefix`.
    fn scan_all(&self, prefix: &[u8]) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let end = keyspace::prefix_end(prefix);
        let end = match &end {
            Some(end) => Bound::Excluded(end.as_slice()),
            None => Bound::Unbounded,
        };
        (self.storage)
            .scan(Bound::Included(prefix), end, false, usize::MAX)
            .map_err(crate::storage_error)
    }
}
