//! Ferrodyn's engine: everything between a validated request and storage.
//!
//! - [`catalog`]: tables (create, describe, list, update, delete), persisted.
//! - [`background`]: table purges and GSI backfills off the request path,
//!   resumed after a restart.
//! - [`collections`]: item-collection sizes of LSI tables and their limit.
//! - [`items`]: GetItem and the conditional single-item write path.
//! - [`transactions`]: TransactWriteItems/TransactGetItems and batch writes.
//! - [`idempotency`]: ClientRequestToken bookkeeping.
//! - [`read`]: Query and Scan pages.
//! - [`keys`]: key-schema checks and the storage-key encoding.
//! - [`capacity`]: read and write units by DynamoDB's rules.
//! - [`schema`]: table descriptions in DynamoDB's wire shape.
//! - [`region`]: which region a request addresses; tables are per region.
//! - [`quotas`]: tables per region and simultaneous table operations.
//!
//! Concurrency: one write lock serialises every write (and table change), so
//! each read-check-write is atomic and writes are serializable; readers go
//! straight to storage, whose batches are atomic.

pub mod background;
pub mod capacity;
pub mod catalog;
pub mod collections;
pub mod idempotency;
pub mod index;
pub mod index_changes;
pub mod items;
pub mod keys;
pub mod keyspace;
pub mod quotas;
pub mod read;
pub mod region;
pub mod schema;
pub mod shared;
pub mod streams;
pub mod table;
pub mod tags;
pub mod throughput;
pub mod transactions;
pub mod ttl;
pub mod usage;

use ferrodyn_storage::Storage;
use ferrodyn_types::{DynamoError, Result};
use parking_lot::{Mutex, RwLock};
use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use table::Table;

pub use catalog::{NewTable, TableUpdate};
pub use items::{Mutation, PlannedWrite, StoredItem, WriteOutcome};

pub struct Engine {
    storage: Arc<dyn Storage>,
    tables: RwLock<HashMap<String, Arc<Table>>>,
    write_lock: Mutex<()>,
    next_table_id: AtomicU64,
    /// Next stream-record sequence number (engine-wide).
    pub(crate) next_stream_seq: AtomicU64,
    /// Requests served since start, by operation (for `ferrodyn usage`).
    pub requests: usage::RequestCounter,
    /// When the engine was opened (seconds since the epoch).
    started: f64,
    /// ClientRequestTokens of recent transactions.
    pub tokens: idempotency::TokenRegistry,
    region: String,
    account: String,
    /// Seconds of unused provisioned capacity a table may bank.
    burst_seconds: f64,
    /// Largest item collection (LSI tables) a write may grow, in bytes.
    collection_limit_bytes: u64,
    /// Purges and backfills running in the background.
    background: background::BackgroundJobs,
    /// Most tables (DynamoDB's per-region quota).
    max_tables: usize,
    /// Most table operations in progress at once.
    max_table_operations: usize,
    /// This node's part in a shared database (unused on embedded storage).
    cluster: shared::Cluster,
}

/// Engine settings.
#[derive(Clone, Debug)]
pub struct EngineOptions {
    /// Region shown in ARNs.
    pub region: String,
    /// Burst window of provisioned tables (DynamoDB: 300 seconds).
    pub burst_seconds: f64,
    /// Largest item collection of a table with an LSI (DynamoDB: 10 GB);
    /// lower it to reach ItemCollectionSizeLimitExceeded in tests.
    pub item_collection_limit_bytes: u64,
    /// Most tables (DynamoDB: 2,500 per region).
    pub max_tables: usize,
    /// Most table operations in progress at once (DynamoDB: 500).
    pub max_table_operations: usize,
}

impl Default for EngineOptions {
    fn default() -> EngineOptions {
        EngineOptions {
            region: "us-east-1".into(),
            burst_seconds: 300.0,
            item_collection_limit_bytes: collections::DEFAULT_COLLECTION_LIMIT_BYTES,
            max_tables: quotas::DEFAULT_MAX_TABLES,
            max_table_operations: quotas::DEFAULT_MAX_TABLE_OPERATIONS,
        }
    }
}

impl Engine {
    /// Opens the engine over a storage backend, loading the catalog, and
    /// resumes unfinished purges and backfills in the background.
    pub fn open(storage: Arc<dyn Storage>, options: EngineOptions) -> Result<Arc<Engine>> {
        let tokens = idempotency::TokenRegistry::over(&storage);
        let engine = Engine {
            storage,
            tables: RwLock::new(HashMap::new()),
            write_lock: Mutex::new(()),
            next_table_id: AtomicU64::new(1),
            tokens,
            requests: usage::RequestCounter::default(),
            started: catalog::now_seconds(),
            next_stream_seq: AtomicU64::new(1),
            region: options.region,
            burst_seconds: options.burst_seconds,
            collection_limit_bytes: options.item_collection_limit_bytes,
            account: "000000000000".to_string(),
            background: background::BackgroundJobs::default(),
            max_tables: options.max_tables,
            max_table_operations: options.max_table_operations,
            cluster: shared::Cluster::default(),
        };
        engine.load_catalog()?;
        let engine = Arc::new(engine);
        engine.resume_background_work()?;
        engine.start_cluster_upkeep();
        Ok(engine)
    }

    /// The region the server answers for (ARNs, signature scopes).
    pub fn region(&self) -> &str {
        &self.region
    }

    /// True when storage is a database shared with other Ferrodyn processes
    /// (see [`ferrodyn_storage::Storage::shared`]).
    pub fn storage_is_shared(&self) -> bool {
        self.storage.shared()
    }

    /// Forces all acknowledged writes to disk (used at shutdown).
    pub fn flush(&self) -> Result<()> {
        self.storage.flush().map_err(storage_error)
    }
}

pub(crate) fn storage_error(e: impl std::fmt::Display) -> DynamoError {
    DynamoError::internal(format!("storage error: {e}"))
}
