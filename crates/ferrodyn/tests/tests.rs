//! Ferrodyn's integration tests: one test binary (so the AWS SDK is compiled
//! and linked once), one module per area of behaviour. Every test drives a
//! real `ferrodyn serve` (the binary Cargo built for this run, see
//! `util::process`) through the official AWS SDK for Rust, raw HTTP, the
//! `ferrodyn-client` library or the `ferrodyn` CLI; `embedded` runs the server
//! inside the test process instead.
//!
//! Run one area with a module filter, e.g.
//! `cargo test -p ferrodyn --test tests items::`. The PostgreSQL tests
//! (`cluster::`, `failover::`, one in `resource_policies::` and
//! `vectors::postgres::`) are ignored
//! unless asked for: `scripts/pg-tests.sh` starts PostgreSQL and runs them
//! with `--ignored`.

mod util;

// The DynamoDB API through the AWS SDK, one module per area.
mod api_coverage;
mod authentication;
mod background_work;
mod backup_recovery;
mod backups;
mod batches;
mod capacity;
mod concurrency;
mod conditions;
mod connections;
mod contention;
mod data_format;
mod durability;
mod embedded;
mod fidelity;
mod global_tables;
mod global_tables_legacy;
mod gsi_throughput;
mod harness;
mod hot_keys;
mod indexes;
mod insights;
mod item_collections;
mod items;
mod kinesis;
mod legacy;
mod multi_attribute_gsi;
mod partiql;
mod protocol;
mod query;
mod quotas;
mod recovery;
mod recovery_model;
mod resource_policies;
mod scan;
mod seeds;
mod stream_shards;
mod streams;
mod tables;
mod throttling;
mod transactions;
mod types;
mod updates;
mod usage;
mod vectors;

// Shared storage on PostgreSQL (ignored without it; run by scripts/pg-tests.sh).
mod cluster;
mod failover;

// Ferrodyn's own client library, CLI and patterns against a running server.
mod client;
mod patterns;
