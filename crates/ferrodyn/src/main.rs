//! The `ferrodyn` binary: a thin command line over the library crates.
//! `ferrodyn serve` opens storage, loads the engine and serves the DynamoDB
//! API until SIGINT or SIGTERM, then flushes and exits. Every other command
//! is a DynamoDB client (`cli/`, over `ferrodyn-client`) that talks to a
//! running Ferrodyn or to AWS DynamoDB.

mod cli;
mod console;
mod kinesis;
mod peers;
mod s3;
mod serve;

use clap::{Parser, Subcommand};

/// mimalloc instead of glibc's allocator. Measured side by side on this
/// machine (bench/results/2026-12-02-allocator.md): the in-memory store's
/// BTreeMap of small boxed keys and values, under steady writes, spent a
/// quarter of its time in glibc's `_int_malloc` and lost half its
/// throughput as the heap grew; with mimalloc BatchWriteItem ran ~1.8x and
/// PutItem ~1.1-1.9x faster, with no slow-down as the table grew.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Hands the pages mimalloc holds freed back to the operating system. The
/// vector indexes call it after moving a large batch into their graphs
/// (engine vectors/store.rs says why).
#[allow(unsafe_code)]
fn release_freed_memory() {
    // SAFETY: mi_collect only walks this thread's heap and the arenas.
    unsafe { libmimalloc_sys::mi_collect(true) }
}

#[derive(Parser)]
#[command(
    name = "ferrodyn",
    version,
    about = "A DynamoDB-compatible database, and a DynamoDB client for it and for AWS",
    long_about = None,
    after_help = "Start a server with `ferrodyn serve`; the other commands talk to it at\n\
                  http://127.0.0.1:8000 unless --endpoint-url says otherwise\n\
                  (`--endpoint-url aws` for AWS DynamoDB in --region).\n\n\
                  Try: ferrodyn tables create users --pk id\n     \
                  ferrodyn put users '{\"id\": \"u1\", \"name\": \"Ada\"}'\n     \
                  ferrodyn get users u1"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the DynamoDB-compatible server (and its web console at /console).
    Serve(serve::ServeArgs),
    /// Run the web console in front of any DynamoDB endpoint, AWS included.
    Console(console::ConsoleArgs),
    /// List, describe, create and delete tables.
    #[command(subcommand)]
    Tables(cli::tables::TablesCommand),
    /// Read one item by its key.
    Get(cli::items::GetArgs),
    /// Write one item (replacing any item with the same key).
    Put(cli::items::PutArgs),
    /// Change attributes of one item (creating it if absent).
    Update(cli::items::UpdateArgs),
    /// Delete one item by its key.
    Delete(cli::items::DeleteArgs),
    /// Read the items of one partition, optionally narrowed by sort key.
    Query(cli::read::QueryArgs),
    /// Read items of a whole table (or index), optionally filtered.
    Scan(cli::read::ScanArgs),
    /// Find the items most similar to a vector (SearchVectors on a vector index).
    SearchVectors(cli::vectors::SearchVectorsArgs),
    /// Run a PartiQL statement (SELECT, INSERT, UPDATE, DELETE).
    #[command(visible_alias = "partiql")]
    Sql(cli::sql::SqlArgs),
    /// Load a JSON, JSON-lines, CSV or DynamoDB-JSON file into a table.
    Import(cli::import::ImportArgs),
    /// Write a table's items to a JSON, JSON-lines, CSV or DynamoDB-JSON file.
    Export(cli::export::ExportArgs),
    /// On-demand backups: list, create, describe, delete, restore.
    #[command(subcommand)]
    Backups(cli::backups::BackupsCommand),
    /// Point-in-time recovery: status, on, off, restore to an instant.
    #[command(subcommand)]
    Recovery(cli::backups::RecoveryCommand),
    /// Exports to and imports from S3 (ExportTableToPointInTime, ImportTable).
    #[command(subcommand)]
    S3(cli::s3::S3Command),
    /// Convert between plain JSON and DynamoDB JSON.
    #[command(subcommand)]
    Convert(cli::convert::ConvertCommand),
    /// Stage several writes, review a diff, commit them all or nothing.
    Stage(cli::patterns::StageArgs),
    /// Keep non-key attributes (e-mail, username) unique with marker items.
    Unique(cli::patterns::UniqueArgs),
    /// Build condition, update and key-condition expressions.
    Expr(cli::patterns::ExprArgs),
    /// Estimate capacity units and monthly price of a workload.
    Cost(cli::patterns::CostArgs),
    /// Show the capacity a running Ferrodyn has seen consumed, and its price.
    Usage(cli::usage::UsageArgs),
    /// Show the shard tree of a table's stream (open and closed shards, lineage).
    Shards(cli::shards::ShardsArgs),
    /// Show a running Ferrodyn's partitions of a table: ranges, sizes, heat.
    Partitions(cli::partitions::PartitionsArgs),
    /// Show a table's most accessed and most throttled keys (Contributor Insights).
    Insights(cli::insights::InsightsArgs),
    /// Show a table's Kinesis streaming destinations: status, lag, errors.
    Destinations(cli::destinations::DestinationsArgs),
    /// Show a global table's replicas and replication lag; add or remove one.
    Replicas(cli::replicas::ReplicasArgs),
    /// Show or move a running Ferrodyn's clock (test harness).
    Clock(cli::harness::ClockArgs),
    /// Save and restore a namespace's tables (test harness).
    Snapshot(cli::harness::SnapshotArgs),
    /// Delete every table of a namespace (test harness).
    Reset(cli::harness::ResetArgs),
}

fn main() {
    ferrodyn_engine::vectors::store::set_memory_release(release_freed_memory);
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Serve(args) => serve::run(args),
        Command::Console(args) => console::run(args),
        Command::Tables(command) => cli::tables::run(command),
        Command::Backups(command) => cli::backups::backups(command),
        Command::Recovery(command) => cli::backups::recovery(command),
        Command::S3(command) => cli::s3::run(command),
        Command::Get(args) => cli::items::get(args),
        Command::Put(args) => cli::items::put(args),
        Command::Update(args) => cli::items::update(args),
        Command::Delete(args) => cli::items::delete(args),
        Command::Query(args) => cli::read::query(args),
        Command::Scan(args) => cli::read::scan(args),
        Command::SearchVectors(args) => cli::vectors::run(args),
        Command::Sql(args) => cli::sql::run(args),
        Command::Import(args) => cli::import::run(args),
        Command::Export(args) => cli::export::run(args),
        Command::Convert(command) => cli::convert::run(command),
        Command::Stage(args) => cli::patterns::stage(args),
        Command::Unique(args) => cli::patterns::unique(args),
        Command::Expr(args) => cli::patterns::expr(args),
        Command::Cost(args) => cli::patterns::cost(args),
        Command::Usage(args) => cli::usage::run(args),
        Command::Shards(args) => cli::shards::run(args),
        Command::Partitions(args) => cli::partitions::run(args),
        Command::Insights(args) => cli::insights::run(args),
        Command::Destinations(args) => cli::destinations::run(args),
        Command::Replicas(args) => cli::replicas::run(args),
        Command::Clock(args) => cli::harness::clock(args),
        Command::Snapshot(args) => cli::harness::snapshot(args),
        Command::Reset(args) => cli::harness::reset(args),
    };
    if let Err(message) = result {
        eprintln!("ferrodyn: {message}");
        std::process::exit(1);
    }
}
