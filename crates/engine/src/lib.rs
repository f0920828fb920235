//! Ferrodyn's engine: everything between a validated request and storage.
//!
//! - [`api`]: the front door, one method per item operation (admission,
//!   the read or write, capacity charging); the server calls these.
//! - [`catalog`]: tables (create, describe, list, update, delete), persisted.
//! - [`background`]: table purges and GSI backfills off the request path,
//!   resumed after a restart.
//! - [`backups`]: on-demand backups (a storage view copied in the
//!   background); [`restore`]: tables restored from them; [`recovery`]:
//!   point-in-time recovery (a base backup and the change log replayed);
//!   [`exports`]: full exports to S3 in DynamoDB's layout; [`imports`]:
//!   tables filled from S3 objects ([`imports_format`]: the line formats);
//!   [`bulk_loads`]: StartBulkPutItems into existing tables; [`transfers`]:
//!   where those three kinds of job run and how they resume;
//!   [`objects`]: the S3 store they use, provided by the binary;
//!   [`kinesis`]: Kinesis streaming destinations (the client, likewise,
//!   provided by the binary); [`replication`]: global tables, replicas in
//!   other regions of this server or of peers.
//! - [`collections`]: item-collection sizes of LSI tables and their limit.
//! - [`error`]: the engine's error (a client answer, a storage conflict, a
//!   storage failure) and the one retry loop.
//! - [`items`]: GetItem and the conditional single-item write path.
//! - [`stored`]: an item's stored form (size header and JSON).
//! - [`transactions`]: TransactWriteItems/TransactGetItems and batch writes.
//! - [`idempotency`]: ClientRequestToken bookkeeping.
//! - [`read`]: Query and Scan pages.
//! - [`keys`]: key-schema checks and the storage-key encoding.
//! - [`capacity`]: read and write units by DynamoDB's rules.
//! - [`schema`]: table descriptions in DynamoDB's wire shape.
//! - [`shared`]: plain data several modules share (index kind, table
//!   statistics, stream identity, the clock), so they need not import each other.
//! - [`clock`]: "now" for everything time-based (wall, or manual for tests).
//! - [`snapshots`]: save, restore and reset a namespace's tables (tests).
//! - [`region`]: which region a request addresses; tables are per region.
//! - [`quotas`]: tables per region and simultaneous table operations.
//!
//! - [`locks`]: item locks and DynamoDB's transaction-conflict rules.
//! - [`cluster`]: what changes when several processes share one database
//!   (checked commits and their retries, catalog reloads, the lease).
//! - [`stats`]: table and index statistics as delta records, folded.
//!
//! Concurrency: every item write holds the locks of the keys it reads and
//! writes (its item, its item-collection record) from its read to its
//! commit, acquired in key order ([`locks`]); a write's storage batch is
//! atomic. So each write, and each transaction as a whole, takes effect at
//! one instant between its reads and its commit with none of its keys
//! changed in between by anyone else (two-phase locking): the history of
//! committed writes is serializable, and writes of different items run in
//! parallel. TransactGetItems shares its items' locks while it reads them,
//! so it reads all of them at one instant too. Table operations take the
//! catalog lock and wait out the in-flight writes of the table they change
//! ([`table::Table::exclusive`]). Readers go straight to storage.

// Public: what the server, the binary and the console name. Private: the
// engine's own machinery (the catalog's storage, background work, the
// cluster paths, the key layouts, statistics, the error type and retry),
// reachable only through `Engine`'s methods.
pub mod api;
mod background;
pub mod backups;
pub mod bulk_loads;
pub mod capacity;
mod catalog;
pub mod clock;
mod cluster;
pub mod collections;
mod error;
pub mod exports;
mod idempotency;
pub mod imports;
pub mod imports_format;
pub mod index;
mod index_changes;
pub mod insights;
pub mod items;
pub mod keys;
mod keyspace;
pub mod kinesis;
pub mod locks;
pub mod objects;
pub mod partition_limits;
pub mod partition_report;
pub mod partitions;
pub mod policies;
pub mod quotas;
pub mod read;
pub mod recovery;
pub mod region;
pub mod replication;
pub mod restore;
pub mod schema;
pub mod shard_reads;
pub mod shards;
mod shared;
pub mod snapshots;
mod stats;
mod stored;
pub mod streams;
pub mod table;
pub mod tags;
pub mod throughput;
pub mod transactions;
mod transfers;
mod ttl;
pub mod usage;
pub mod vector_ops;
pub mod vectors;

#[cfg(test)]
mod contention_tests;
#[cfg(test)]
mod engine_tests;

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
    /// Serialises table operations (create, update, delete, tags, TTL
    /// settings) and statistics folds; item writes never take it.
    catalog_lock: Mutex<()>,
    /// The keys item writes hold (see [`locks`]).
    pub(crate) locks: locks::LockTable,
    next_table_id: AtomicU64,
    /// Next stream-record sequence number (engine-wide).
    pub(crate) next_stream_seq: AtomicU64,
    /// Sequence numbers handed out whose records are not yet committed.
    pub(crate) stream_gate: streams::SequenceGate,
    /// Next statistics delta-record number (see [`stats`]).
    next_stats_seq: AtomicU64,
    /// Writes may block their thread for long (fsync per write, queued
    /// conflicts, held transactions): the server runs them off its async
    /// workers.
    blocking_writes: bool,
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
    /// CreateTable drops AttributeDefinitions no key uses instead of
    /// refusing them (DynamoDB Local's leniency; AWS refuses).
    accept_unused_attribute_definitions: bool,
    /// This node's part in a shared database (unused on embedded storage).
    cluster: cluster::Cluster,
    /// "Now" for everything time-based a client can observe.
    pub clock: Arc<clock::Clock>,
    /// Saved snapshots of namespaces' tables (test harness).
    snapshots: snapshots::Snapshots,
    /// The S3 store exports and imports use (`--s3-endpoint`; objects.rs).
    objects: RwLock<Option<Arc<dyn objects::Objects>>>,
    /// Contributor Insights' counts of the last hour (insights.rs).
    pub(crate) insights: insights::InsightsCounts,
    /// How tables are partitioned and when partitions split.
    pub(crate) partition_settings: partitions::PartitionSettings,
    /// How long a stream shard stays open before a child takes over.
    pub(crate) shard_lifetime_ms: u64,
    /// Per-partition throughput limits (`--partition-limits on`).
    pub(crate) partition_limits: partition_limits::PartitionLimits,
    /// Kinesis destinations' client and delivery (`--kinesis-endpoint`).
    kinesis: kinesis::KinesisState,
    /// Global tables' replication: versions, peers, the sender (replication/).
    replication: replication::ReplicationState,
    /// SearchVectors scans every candidate instead of using the HNSW
    /// graphs (`--vector-search exact`: exact results, brute-force speed).
    pub(crate) exact_vector_search: bool,
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
    /// Accept CreateTable AttributeDefinitions no key uses, as DynamoDB
    /// Local does (AWS refuses them); off by default.
    pub accept_unused_attribute_definitions: bool,
    /// What a request does on meeting a transaction conflict: DynamoDB's
    /// rejection (the default) or waiting its turn.
    pub conflicts: locks::ConflictPolicy,
    /// Writes may block for long even without queued conflicts (an fsync
    /// per write, transactions held on purpose by fault injection).
    pub blocking_writes: bool,
    /// The wall clock, or a manual one tests move (see [`clock`]).
    pub clock: clock::ClockMode,
    /// Partition layout and split size (partitions.rs).
    pub partitions: partitions::PartitionSettings,
    /// Seconds a stream shard stays open (DynamoDB: about four hours).
    pub shard_lifetime_seconds: f64,
    /// Each partition serves at most 3,000 read and 1,000 write units a
    /// second (partition_limits.rs); off by default.
    pub partition_limits: bool,
    /// SearchVectors scans exactly instead of searching HNSW graphs.
    pub exact_vector_search: bool,
    /// How long a global table keeps a deleted item's version at least
    /// (replication/tombstones.rs; a day by default).
    pub tombstone_retention: std::time::Duration,
}

impl Default for EngineOptions {
    fn default() -> EngineOptions {
        EngineOptions {
            region: "us-east-1".into(),
            burst_seconds: 300.0,
            item_collection_limit_bytes: collections::DEFAULT_COLLECTION_LIMIT_BYTES,
            max_tables: quotas::DEFAULT_MAX_TABLES,
            max_table_operations: quotas::DEFAULT_MAX_TABLE_OPERATIONS,
            accept_unused_attribute_definitions: false,
            conflicts: locks::ConflictPolicy::Reject,
            blocking_writes: false,
            clock: clock::ClockMode::Wall,
            partitions: partitions::PartitionSettings::default(),
            shard_lifetime_seconds: shards::DEFAULT_SHARD_LIFETIME_SECONDS,
            partition_limits: false,
            exact_vector_search: false,
            tombstone_retention: replication::tombstones::DEFAULT_RETENTION,
        }
    }
}

impl Engine {
    /// Opens the engine over a storage backend, loading the catalog, and
    /// resumes unfinished purges and backfills in the background.
    pub fn open(storage: Arc<dyn Storage>, options: EngineOptions) -> Result<Arc<Engine>> {
        let clock = Arc::new(clock::Clock::new(options.clock));
        let tokens = idempotency::TokenRegistry::over(&storage, Arc::clone(&clock));
        let engine = Engine {
            storage,
            tables: RwLock::new(HashMap::new()),
            catalog_lock: Mutex::new(()),
            locks: locks::LockTable::new(options.conflicts),
            stream_gate: streams::SequenceGate::default(),
            next_stats_seq: AtomicU64::new(1),
            blocking_writes: options.blocking_writes
                || options.conflicts == locks::ConflictPolicy::Queue,
            next_table_id: AtomicU64::new(1),
            tokens,
            requests: usage::RequestCounter::default(),
            started: clock.now_seconds(),
            next_stream_seq: AtomicU64::new(1),
            region: options.region,
            burst_seconds: options.burst_seconds,
            collection_limit_bytes: options.item_collection_limit_bytes,
            account: "000000000000".to_string(),
            background: background::BackgroundJobs::default(),
            max_tables: options.max_tables,
            max_table_operations: options.max_table_operations,
            accept_unused_attribute_definitions: options.accept_unused_attribute_definitions,
            exact_vector_search: options.exact_vector_search,
            cluster: cluster::Cluster::default(),
            clock,
            snapshots: snapshots::Snapshots::default(),
            objects: RwLock::new(None),
            insights: insights::InsightsCounts::default(),
            partition_settings: options.partitions,
            shard_lifetime_ms: (options.shard_lifetime_seconds * 1000.0) as u64,
            partition_limits: partition_limits::PartitionLimits::new(options.partition_limits),
            kinesis: kinesis::KinesisState::default(),
            replication: replication::ReplicationState::with_tombstone_retention(
                options.tombstone_retention,
            ),
        };

        engine.load_catalog()?;
        let engine = Arc::new(engine);
        *engine.replication.me.write() = Arc::downgrade(&engine);
        engine.resume_background_work()?;
        engine.start_replication_worker_if_needed();
        // Statistics are folded by this process alone on embedded storage,
        // by the lease holder's upkeep on shared storage (cluster.rs).
        if engine.storage.shared() {
            engine.start_cluster_upkeep();
        } else {
            engine.start_stats_folder();
        }
        engine.start_partition_upkeep();
        Ok(engine)
    }

    /// Whether item writes may block their thread for long, so that the
    /// server should run them on its blocking pool.
    pub fn writes_may_block(&self) -> bool {
        self.blocking_writes
    }

    /// The region the server answers for (ARNs, signature scopes).
    pub fn region(&self) -> &str {
        &self.region
    }

    /// Whether CreateTable drops unused AttributeDefinitions instead of
    /// refusing them (see [`EngineOptions`]).
    pub fn accepts_unused_attribute_definitions(&self) -> bool {
        self.accept_unused_attribute_definitions
    }

    /// True when storage is a database shared with other Ferrodyn processes
    /// (see [`ferrodyn_storage::Storage::shared`]).
    pub fn storage_is_shared(&self) -> bool {
        self.storage.shared()
    }

    /// Now, in seconds since the epoch, on the engine's clock.
    pub fn now_seconds(&self) -> f64 {
        self.clock.now_seconds()
    }

    /// Sets the S3 store exports and imports use (`--s3-endpoint`).
    pub fn set_objects(&self, objects: Arc<dyn objects::Objects>) {
        *self.objects.write() = Some(objects);
    }

    /// Forces all acknowledged writes to disk (used at shutdown).
    pub fn flush(&self) -> Result<()> {
        self.storage.flush().map_err(storage_error)
    }
}

pub(crate) fn storage_error(e: impl std::fmt::Display) -> DynamoError {
    DynamoError::internal(format!("storage error: {e}"))
}
