//! `ferrodyn serve`: storage selection, the listener and clean shutdown.

use clap::{Args, ValueEnum};
use ferrodyn_engine::clock::ClockMode;
use ferrodyn_engine::locks::ConflictPolicy;
use ferrodyn_engine::{Engine, EngineOptions};
use ferrodyn_server::faults::{FaultConfig, FaultRule, Faults};
use ferrodyn_storage::{open_fjall, open_memory, Durability, Storage};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    host: String,
    /// Port to listen on (0 picks a free port, printed at startup).
    #[arg(long, default_value_t = 8000)]
    port: u16,
    /// Directory of the durable embedded database.
    #[arg(long, default_value = "./ferrodyn-data")]
    data_dir: PathBuf,
    /// Keep everything in memory and lose it at exit (tests, throwaway runs).
    #[arg(long, conflicts_with = "storage")]
    in_memory: bool,
    /// Store everything in a shared PostgreSQL-protocol database instead of
    /// the embedded one: postgres://USER[:PASS]@HOST[:PORT][,HOST2:PORT2...]/DB
    /// (options such as ?target_session_attrs=read-write allowed). Any number
    /// of `ferrodyn serve` processes may share one database.
    #[arg(long, value_name = "URL", conflicts_with = "data_dir")]
    storage: Option<String>,
    /// When an acknowledged write is safe: `process` survives a crash of the
    /// server (kill -9), `power` fsyncs each write and survives power loss.
    #[arg(long, value_enum, default_value_t = DurabilityArg::Process)]
    durability: DurabilityArg,
    /// Seconds of unused capacity a PROVISIONED table may bank and spend in a
    /// burst (DynamoDB: 300). Lower it to reach throttling quickly in tests.
    #[arg(long, default_value_t = 300.0)]
    burst_seconds: f64,
    /// Seconds between Time to Live sweeps that delete expired items (0
    /// turns expiry off). DynamoDB takes up to days; tests want seconds.
    #[arg(long, default_value_t = 1.0)]
    ttl_interval: f64,
    /// Region reported in ARNs.
    #[arg(long, default_value = "us-east-1")]
    region: String,
    /// The S3-compatible store exports write to and imports and bulk puts
    /// read from (AWS's https://s3.<region>.amazonaws.com, MinIO, moto...),
    /// with credentials from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY.
    /// Without it those jobs fail (FAILED, saying so).
    #[arg(long, value_name = "URL")]
    s3_endpoint: Option<String>,
    /// The Kinesis Data Streams endpoint Kinesis streaming destinations
    /// deliver to (AWS's https://kinesis.<region>.amazonaws.com, moto,
    /// LocalStack...), signed with AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY.
    /// Without it EnableKinesisStreamingDestination ends ENABLE_FAILED.
    #[arg(long, value_name = "URL")]
    kinesis_endpoint: Option<String>,
    /// Verify request signatures against this access key, given as
    /// ACCESS_KEY_ID:SECRET_ACCESS_KEY (repeatable). Unknown keys then get
    /// UnrecognizedClientException and bad signatures
    /// InvalidSignatureException, as from DynamoDB. Off by default: like
    /// DynamoDB Local, any credentials are accepted.
    #[arg(long = "credentials", value_name = "ID:SECRET")]
    credentials: Vec<String>,
    /// Another Ferrodyn server that holds REGION of this server's global
    /// tables (repeatable): UpdateTable's ReplicaUpdates for REGION create
    /// the replica there, and changes replicate to it. The servers sign
    /// their calls with the first --credentials key, which they share.
    /// Regions without a peer are held by this server.
    #[arg(long = "peer", value_name = "REGION=URL")]
    peers: Vec<String>,
    /// Reject requests whose X-Amz-Date is more than 15 minutes from the
    /// server's clock, as DynamoDB does (off by default: signatures are not
    /// verified, and benchmarks replay fixed timestamps).
    #[arg(long)]
    check_request_time: bool,
    /// What a request does when an item it needs is held by a transaction in
    /// flight: `reject` fails it as DynamoDB does (TransactionConflictException,
    /// or a TransactionConflict cancellation reason); `queue` waits its turn,
    /// like DynamoDB Local, for suites written against its serial behaviour.
    #[arg(long, value_enum, default_value_t = ConflictsArg::Reject)]
    conflicts: ConflictsArg,
    /// Inject a failure on purpose, to test retry code:
    /// OPERATION[:TABLE]=FAULT@RATE, where FAULT is unprocessed (batches leave
    /// requests unprocessed), conflict (transactions cancelled with
    /// TransactionConflict), throttling, provisioned, internal, or hold:Nms
    /// (TransactWriteItems only: keep the transaction's items locked N ms, so
    /// concurrent requests on them really conflict), and RATE a probability
    /// per request; OPERATION may be '*'. Repeatable.
    /// Example: --fault BatchWriteItem=unprocessed@0.2
    #[arg(long = "fault", value_name = "RULE")]
    faults: Vec<String>,
    /// Seed of the fault-injection random draws (same seed, same failures).
    #[arg(long, default_value_t = 0)]
    fault_seed: u64,
    /// JSON file of fault rules: {"seed": 7, "rules": [{"operation":
    /// "BatchWriteItem", "table": "t", "fault": "unprocessed", "rate": 0.2}]}
    #[arg(long, value_name = "FILE")]
    fault_config: Option<PathBuf>,
    /// Largest item collection (a partition's items plus their LSI entries)
    /// a write may grow, in bytes (DynamoDB: 10 GB). Lower it to reach
    /// ItemCollectionSizeLimitExceededException in tests.
    #[arg(long, hide = true, default_value_t = ferrodyn_engine::collections::DEFAULT_COLLECTION_LIMIT_BYTES)]
    item_collection_limit_bytes: u64,
    /// Seconds a stream shard stays open before it closes and a child shard
    /// takes over (DynamoDB: about four hours). Shorten it to test stream
    /// consumers that follow shard lineage.
    #[arg(long, value_name = "SECONDS", default_value_t = ferrodyn_engine::shards::DEFAULT_SHARD_LIFETIME_SECONDS)]
    stream_shard_lifetime: f64,
    /// Seconds a global table keeps a deleted item's version (its
    /// tombstone) at least; it goes once, in addition, every other region
    /// has delivered what it made before the delete. Shorten it to see
    /// tombstones reclaimed in GET /ferrodyn/replication.
    #[arg(long, value_name = "SECONDS", default_value_t = ferrodyn_engine::replication::tombstones::DEFAULT_RETENTION.as_secs_f64())]
    tombstone_retention: f64,
    /// Bytes after which a table partition splits in two, closing its
    /// stream shard with two children (DynamoDB: about 10 GB). Lower it to
    /// reach splits with little data.
    #[arg(long, value_name = "BYTES", default_value_t = ferrodyn_engine::partitions::DEFAULT_SPLIT_BYTES)]
    partition_split_size: u64,
    /// Partitions (and so stream shards) of a new on-demand table. DynamoDB
    /// does not publish its number; its new on-demand tables serve 4,000
    /// writes a second, four partitions' worth. 1 gives one shard per
    /// stream, as DynamoDB Local does.
    #[arg(long, value_name = "N", default_value_t = ferrodyn_engine::partitions::DEFAULT_ON_DEMAND_PARTITIONS)]
    on_demand_partitions: u32,
    /// `on`: each partition of a table or global index serves at most
    /// 3,000 read and 1,000 write units a second, as DynamoDB's do; a hot
    /// key gets ThrottlingException (on-demand) or
    /// ProvisionedThroughputExceededException (provisioned), and a partition
    /// one key keeps hot splits around it. Off by default.
    #[arg(long, value_enum, default_value_t = crate::console::Switch::Off)]
    partition_limits: crate::console::Switch,
    /// How SearchVectors finds the nearest vectors: `approximate` (HNSW
    /// graphs for large partitions, exact scans for small ones and for
    /// selective filters) or `exact` (a brute-force scan every time: exact
    /// results at brute-force speed, for tests that compare scores and for
    /// benchmarks' baseline).
    #[arg(long, value_enum, default_value_t = VectorSearchArg::Approximate)]
    vector_search: VectorSearchArg,
    /// Most tables (DynamoDB's default quota per region: 2,500); CreateTable
    /// beyond it gets LimitExceededException.
    #[arg(long, default_value_t = ferrodyn_engine::quotas::DEFAULT_MAX_TABLES)]
    max_tables: usize,
    /// Most table operations in progress at once (DynamoDB: 500): while that
    /// many purges and GSI backfills run, CreateTable, UpdateTable,
    /// DeleteTable and UpdateTimeToLive get LimitExceededException.
    #[arg(long, default_value_t = ferrodyn_engine::quotas::DEFAULT_MAX_TABLE_OPERATIONS)]
    max_table_operations: usize,
    /// Accept CreateTable AttributeDefinitions that no key uses and leave
    /// them out of the table, as DynamoDB Local does (AWS refuses them with
    /// "Some AttributeDefinitions are not used"). For test setups written
    /// against DynamoDB Local; off by default
    #[arg(long)]
    accept_unused_attribute_definitions: bool,
    /// Seconds a client has to send a request's complete headers, from
    /// opening the connection or from the request's first byte; slower
    /// senders (slowloris) are disconnected.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    header_timeout: f64,
    /// Seconds a keep-alive connection may sit idle between requests, and a
    /// request body may take to arrive after its headers, before the
    /// connection is closed.
    #[arg(long, default_value_t = 60.0, value_name = "SECONDS")]
    idle_timeout: f64,
    /// Most connections open at once (default: the descriptor limit, raised
    /// to its hard maximum at start-up, less a reserve for storage, at most
    /// 16384). At the cap a connection that sent nothing (or the slowest, or the longest idle) is closed to make room.
    #[arg(long, value_name = "N")]
    max_connections: Option<usize>,
    /// Set the process's open-file limit to this instead of raising it to the
    /// hard maximum (tests of the connection cap).
    #[arg(long, hide = true)]
    open_files_limit: Option<u64>,
    /// Exit when standard input closes (lets a parent process, such as a test
    /// harness, tie the server's life to its own).
    #[arg(long, hide = true)]
    exit_on_stdin_eof: bool,
    /// `access-key`: each access key ID gets tables of its own (in every
    /// region), as DynamoDB Local does without -sharedDb, so parallel tests
    /// isolate themselves by choosing a key. `off`: one account, as on AWS.
    #[arg(long, value_enum, default_value_t = NamespacesArg::Off)]
    namespaces: NamespacesArg,
    /// `manual`: the clock starts at the real time and moves only when told
    /// (POST /ferrodyn/clock {"advance": "25h"}); Time to Live, stream
    /// retention and iterators, burst capacity, ClientRequestTokens and
    /// timestamps follow it. Not with --storage.
    #[arg(long, value_enum, default_value_t = ClockArg::Wall)]
    clock: ClockArg,
    /// The web console at /console on the same port (on by default; a
    /// token printed at start-up is required when --host is not loopback or
    /// --credentials are given).
    #[arg(long, value_enum, default_value_t = crate::console::Switch::On)]
    console: crate::console::Switch,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum NamespacesArg {
    Off,
    AccessKey,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum ClockArg {
    Wall,
    Manual,
}

#[derive(Clone, Copy, ValueEnum)]
enum ConflictsArg {
    Reject,
    Queue,
}

#[derive(Clone, Copy, ValueEnum)]
enum DurabilityArg {
    Process,
    Power,
}

/// The access keys signatures are verified against (none by default).
fn credentials(
    specs: &[String],
) -> Result<Option<Arc<std::collections::HashMap<String, String>>>, String> {
    if specs.is_empty() {
        return Ok(None);
    }
    let mut keys = std::collections::HashMap::new();
    for spec in specs {
        let (id, secret) = spec
            .split_once(':')
            .filter(|(id, secret)| !id.is_empty() && !secret.is_empty())
            .ok_or_else(|| {
                format!(
                    "invalid --credentials '{id}': expected ACCESS_KEY_ID:SECRET",
                    id = spec.split(':').next().unwrap_or("")
                )
            })?;
        keys.insert(id.to_string(), secret.to_string());
    }
    Ok(Some(Arc::new(keys)))
}

/// Builds the fault-injection settings from the flags (none by default).
fn faults(args: &ServeArgs) -> Result<Faults, String> {
    let mut rules = Vec::new();
    let mut seed = args.fault_seed;
    if let Some(path) = &args.fault_config {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let config = FaultConfig::parse(&text)?;
        if seed == 0 {
            seed = config.seed.unwrap_or(0);
        }
        rules.extend(config.rules);
    }
    for spec in &args.faults {
        rules.push(FaultRule::parse(spec)?);
    }
    Ok(Faults::new(rules, seed))
}

pub fn run(args: ServeArgs) -> Result<(), String> {
    let faults = Arc::new(faults(&args)?);
    let credentials = credentials(&args.credentials)?;
    let limits = connection_limits(&args)?;
    if faults.is_active() {
        eprintln!(
            "ferrodyn: fault injection is ON ({} rule(s))",
            args.faults.len() + usize::from(args.fault_config.is_some())
        );
    }
    if args.clock == ClockArg::Manual && args.storage.is_some() {
        return Err(
            "--clock manual needs one process's storage (embedded or --in-memory): \
                    the nodes sharing --storage would each keep their own clock"
                .into(),
        );
    }
    check_partition_args(&args)?;
    let engine = open_engine(&args, &faults)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start runtime: {e}"))?;
    runtime.block_on(async {
        let listener = ferrodyn_server::bind(&args.host, args.port)
            .await
            .map_err(|e| format!("cannot listen on {}:{}: {e}", args.host, args.port))?;
        let address = listener.local_addr().map_err(|e| e.to_string())?;
        let storage_note = storage_note(&args);
        let mut banner = format!("ferrodyn listening on http://{address} ({storage_note})\n");
        let mut extra = axum::Router::new();
        if args.console == crate::console::Switch::On {
            let (router, url) = crate::console::for_server(
                &args.host,
                address,
                &args.region,
                credentials.as_deref(),
            )?;
            banner.push_str(&format!("console: {url}\n"));
            extra = router;
        }
        // One write: a parent that reads only the first line and closes the
        // pipe must not make a later write fail.
        let mut stdout = std::io::stdout();
        let _ = stdout
            .write_all(banner.as_bytes())
            .and_then(|()| stdout.flush());
        ferrodyn_server::serve_with(
            ferrodyn_server::AppState {
                engine: engine.clone(),
                check_request_time: args.check_request_time,
                faults,
                credentials,
                namespaces: args.namespaces == NamespacesArg::AccessKey,
            },
            listener,
            limits,
            extra,
            shutdown_signal(args.exit_on_stdin_eof),
        )
        .await
        .map_err(|e| format!("server error: {e}"))
    })?;
    engine
        .flush()
        .map_err(|e| format!("flush at shutdown failed: {e}"))?;
    // Don't wait for the stdin watcher: its blocking read may never return.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    Ok(())
}

/// The engine over the chosen storage, with the S3 store and Kinesis
/// client it is given, its interrupted work resumed and its TTL sweeper on.
fn open_engine(args: &ServeArgs, faults: &Faults) -> Result<Arc<Engine>, String> {
    let storage = open_storage(args)?;
    let engine = Engine::open(storage, engine_options(args, faults)).map_err(|e| e.to_string())?;
    if let Some(endpoint) = &args.s3_endpoint {
        let sink = crate::s3::S3Sink::new(endpoint, &args.region)?;
        engine.set_objects(std::sync::Arc::new(sink));
    }
    // Destinations a stop left live deliver again (or fail, without an endpoint).
    engine.set_kinesis(crate::kinesis::client(&args.kinesis_endpoint, &args.region));
    // Global tables' other regions, where other servers hold them.
    let peers = crate::peers::parse(&args.peers, &args.region)?;
    let key = (args.credentials.first())
        .and_then(|spec| spec.split_once(':'))
        .map(|(id, secret)| (id.to_string(), secret.to_string()));
    engine.set_peers(
        peers,
        std::sync::Arc::new(crate::peers::PeerClient::new(key)),
    );
    // Exports and imports a stop cut short go on (or fail, without a store).
    engine.resume_transfers().map_err(|e| e.to_string())?;
    if args.ttl_interval > 0.0 {
        engine.start_ttl_sweeper(std::time::Duration::from_secs_f64(args.ttl_interval));
    }
    Ok(engine)
}

/// The storage `serve` was asked for: a shared PostgreSQL database, memory,
/// or the embedded fjall store in `--data-dir`.
fn open_storage(args: &ServeArgs) -> Result<Arc<dyn Storage>, String> {
    Ok(if let Some(url) = &args.storage {
        if !url.starts_with("postgres://") && !url.starts_with("postgresql://") {
            return Err(format!(
                "--storage takes a postgres://USER[:PASS]@HOST:PORT/DB connection string, not {url:?}"
            ));
        }
        ferrodyn_storage_postgres::open_postgres(url)
            .map_err(|e| format!("cannot open --storage: {e}"))?
    } else if args.in_memory {
        open_memory()
    } else {
        let durability = match args.durability {
            DurabilityArg::Process => Durability::Buffered,
            DurabilityArg::Power => Durability::Sync,
        };
        std::fs::create_dir_all(&args.data_dir)
            .map_err(|e| format!("cannot create {}: {e}", args.data_dir.display()))?;
        open_fjall(&args.data_dir, durability)
            .map_err(|e| format!("cannot open storage in {}: {e}", args.data_dir.display()))?
    })
}

/// The partition, shard and tombstone options are in range.
fn check_partition_args(args: &ServeArgs) -> Result<(), String> {
    if !(args.stream_shard_lifetime > 0.0 && args.stream_shard_lifetime.is_finite()) {
        return Err("--stream-shard-lifetime must be a positive number of seconds".into());
    }
    if !(args.tombstone_retention > 0.0 && args.tombstone_retention.is_finite()) {
        return Err("--tombstone-retention must be a positive number of seconds".into());
    }
    if args.partition_split_size == 0 {
        return Err("--partition-split-size must be at least 1 byte".into());
    }
    if !(1..=1024).contains(&args.on_demand_partitions) {
        return Err("--on-demand-partitions must be between 1 and 1024".into());
    }
    Ok(())
}

/// The engine's settings from the command line.
/// `--vector-search`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum VectorSearchArg {
    Approximate,
    Exact,
}

fn engine_options(args: &ServeArgs, faults: &Faults) -> EngineOptions {
    EngineOptions {
        region: args.region.clone(),
        burst_seconds: args.burst_seconds,
        item_collection_limit_bytes: args.item_collection_limit_bytes,
        partitions: ferrodyn_engine::partitions::PartitionSettings {
            split_bytes: args.partition_split_size,
            on_demand_partitions: args.on_demand_partitions,
        },
        shard_lifetime_seconds: args.stream_shard_lifetime,
        tombstone_retention: std::time::Duration::from_secs_f64(args.tombstone_retention),
        partition_limits: args.partition_limits == crate::console::Switch::On,
        exact_vector_search: args.vector_search == VectorSearchArg::Exact,
        max_tables: args.max_tables,
        max_table_operations: args.max_table_operations,
        accept_unused_attribute_definitions: args.accept_unused_attribute_definitions,
        conflicts: match args.conflicts {
            ConflictsArg::Reject => ConflictPolicy::Reject,
            ConflictsArg::Queue => ConflictPolicy::Queue,
        },
        // An fsync per write group, or transactions held on purpose, would
        // stall the async workers that serve every connection.
        blocking_writes: (!args.in_memory && matches!(args.durability, DurabilityArg::Power))
            || faults.holds_transactions(),
        clock: match args.clock {
            ClockArg::Wall => ClockMode::Wall,
            ClockArg::Manual => ClockMode::Manual,
        },
    }
}

/// Where the banner says the data lives.
fn storage_note(args: &ServeArgs) -> String {
    if args.storage.is_some() {
        "data in PostgreSQL".to_string()
    } else if args.in_memory {
        "in memory".to_string()
    } else {
        format!("data in {}", args.data_dir.display())
    }
}

/// Connections the server may hold open above which the storage engine could
/// run out of descriptors: a quarter of the limit, at most 256, is kept back.
fn connection_cap(descriptors: u64) -> usize {
    let reserve = (descriptors / 4).min(256);
    (descriptors - reserve).min(16_384) as usize
}

/// The timeouts and connection cap from the flags, after raising the
/// open-file limit (the soft limit to the hard one, or as asked).
fn connection_limits(args: &ServeArgs) -> Result<ferrodyn_server::ConnectionLimits, String> {
    let seconds = |value: f64, flag: &str| {
        if value > 0.0 && value.is_finite() {
            Ok(std::time::Duration::from_secs_f64(value))
        } else {
            Err(format!("{flag} must be a positive number of seconds"))
        }
    };
    let descriptors = raise_open_files_limit(args.open_files_limit)?;
    let cap = connection_cap(descriptors);
    let max_connections = match args.max_connections {
        Some(0) => return Err("--max-connections must be at least 1".into()),
        Some(n) if n > cap => {
            eprintln!(
                "ferrodyn: --max-connections {n} lowered to {cap} (open-file limit {descriptors})"
            );
            cap
        }
        Some(n) => n,
        None => cap,
    };
    Ok(ferrodyn_server::ConnectionLimits {
        header_timeout: seconds(args.header_timeout, "--header-timeout")?,
        idle_timeout: seconds(args.idle_timeout, "--idle-timeout")?,
        max_connections,
    })
}

/// Sets the soft open-file limit to `wanted` or else to the hard limit, and
/// returns the limit in force.
#[allow(unsafe_code)]
fn raise_open_files_limit(wanted: Option<u64>) -> Result<u64, String> {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct passed.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } != 0 {
        return Err(format!(
            "cannot read the open-file limit: {}",
            std::io::Error::last_os_error()
        ));
    }
    let target = wanted.unwrap_or(limit.rlim_max).min(limit.rlim_max);
    if target != limit.rlim_cur {
        let raised = libc::rlimit {
            rlim_cur: target,
            rlim_max: limit.rlim_max,
        };
        // SAFETY: as above.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raised) } == 0 {
            limit.rlim_cur = target;
        }
    }
    Ok(limit.rlim_cur)
}

/// Resolves on SIGINT, SIGTERM or (if asked) end of standard input.
async fn shutdown_signal(exit_on_stdin_eof: bool) {
    use tokio::signal::unix::{signal, SignalKind};
    let mut terminate = signal(SignalKind::terminate()).expect("SIGTERM handler");
    let stdin_closed = async {
        if exit_on_stdin_eof {
            // A blocking read on a helper thread: returns at EOF or error.
            let _ = tokio::task::spawn_blocking(|| {
                let mut sink = Vec::new();
                let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut sink);
            })
            .await;
        } else {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = terminate.recv() => {}
        _ = stdin_closed => {}
    }
}
