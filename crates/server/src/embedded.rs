//! Ferrodyn inside another program's process, for Rust users' own tests: an
//! in-memory server on a free loopback port, with its own threads, stopped
//! when the handle is dropped.
//!
//! ```no_run
//! let server = ferrodyn_server::EmbeddedServer::start().unwrap();
//! // Point any DynamoDB client at it, e.g. the AWS SDK for Rust:
//! // aws_sdk_dynamodb::config::Builder::new().endpoint_url(server.endpoint())...
//! println!("DynamoDB endpoint: {}", server.endpoint());
//! // Dropping `server` stops it and frees its data.
//! ```
//!
//! The controls the pytest and vitest fixtures reach over HTTP are methods
//! here: namespaces ([`EmbeddedOptions::namespaces`], then an access key per
//! test), snapshots and reset, the manual clock (`engine.clock` set to
//! `ClockMode::Manual` in [`EmbeddedOptions::engine`]) and fault rules.
//!
//! The server runs on a Tokio runtime of its own in a background thread, so
//! it works the same from a plain `#[test]` and from a `#[tokio::test]`
//! (whose single-threaded runtime must not be asked to serve requests while
//! the test blocks on them).

use crate::faults::{FaultConfig, FaultRule, Faults};
use crate::AppState;
use ferrodyn_engine::region::{with_request_scope, RequestScope};
use ferrodyn_engine::snapshots::SnapshotSummary;
use ferrodyn_engine::{Engine, EngineOptions};
use ferrodyn_types::Result;
use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::oneshot;

/// A running in-memory Ferrodyn; see the module documentation.
pub struct EmbeddedServer {
    endpoint: String,
    address: SocketAddr,
    engine: Arc<Engine>,
    faults: Arc<Faults>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

/// Settings of an [`EmbeddedServer`]; the defaults are those of
/// `ferrodyn serve --in-memory`.
#[derive(Clone, Debug, Default)]
pub struct EmbeddedOptions {
    /// Engine settings (region, burst window, item-collection limit).
    pub engine: EngineOptions,
    /// Fault rules in `--fault` syntax (`OPERATION[:TABLE]=FAULT@RATE`).
    pub faults: Vec<String>,
    /// Seed of the fault draws.
    pub fault_seed: u64,
    /// Seconds between TTL sweeps (0: expiry off, the default here so that a
    /// test decides when items expire).
    pub ttl_interval_seconds: f64,
    /// Each access key ID has tables of its own (`--namespaces access-key`).
    pub namespaces: bool,
}

impl EmbeddedServer {
    /// Starts a server with default settings.
    pub fn start() -> std::io::Result<EmbeddedServer> {
        EmbeddedServer::start_with(EmbeddedOptions::default())
    }

    /// Starts a server with `options`; fails on a malformed fault rule or
    /// when no loopback port can be bound.
    pub fn start_with(options: EmbeddedOptions) -> std::io::Result<EmbeddedServer> {
        let invalid = |e: String| std::io::Error::new(std::io::ErrorKind::InvalidInput, e);
        let rules = options
            .faults
            .iter()
            .map(|spec| FaultRule::parse(spec))
            .collect::<Result<Vec<_>, _>>()
            .map_err(invalid)?;
        let storage = ferrodyn_storage::open_memory();
        let engine = Engine::open(storage, options.engine).map_err(|e| invalid(e.to_string()))?;
        if options.ttl_interval_seconds > 0.0 {
            engine.start_ttl_sweeper(Duration::from_secs_f64(options.ttl_interval_seconds));
        }
        let faults = Arc::new(Faults::new(rules, options.fault_seed));
        let state = AppState {
            engine: engine.clone(),
            check_request_time: false,
            faults: Arc::clone(&faults),
            credentials: None,
            namespaces: options.namespaces,
        };
        let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
        listener.set_nonblocking(true)?;
        let address = listener.local_addr()?;
        let (stop, stopped) = oneshot::channel();
        let thread = std::thread::Builder::new()
            .name("ferrodyn-embedded".into())
            .spawn(move || run(state, listener, stopped))?;
        Ok(EmbeddedServer {
            endpoint: format!("http://{address}"),
            address,
            engine,
            faults,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The endpoint URL to give a DynamoDB client, e.g. `http://127.0.0.1:40123`.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The address it listens on.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The engine behind it, for tests that inspect state directly.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }
}

/// The test controls; `namespace` is an access key ID (None: the tables of
/// a server without namespaces). Errors are DynamoDB's, as over HTTP.
impl EmbeddedServer {
    /// Saves the namespace's tables as snapshot `name`.
    pub fn snapshot(&self, namespace: Option<&str>, name: &str) -> Result<SnapshotSummary> {
        in_namespace(namespace, || self.engine.save_snapshot(name))
    }

    /// Puts the namespace's tables back as snapshot `name` saved them.
    pub fn restore(&self, namespace: Option<&str>, name: &str) -> Result<SnapshotSummary> {
        in_namespace(namespace, || self.engine.restore_snapshot(name))
    }

    /// Deletes every table of the namespace; returns how many.
    pub fn reset(&self, namespace: Option<&str>) -> Result<usize> {
        in_namespace(namespace, || self.engine.reset_namespace())
    }

    /// Moves the manual clock forward; returns the items TTL then deleted.
    pub fn advance(&self, by: Duration) -> Result<usize> {
        self.engine.advance_clock(by)
    }

    /// Sets the manual clock (never backwards); returns the items TTL deleted.
    pub fn set_time(&self, time: SystemTime) -> Result<usize> {
        let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
        self.engine.set_clock(since.as_millis() as u64)
    }

    /// The engine's clock.
    pub fn now(&self) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(self.engine.clock.now_millis())
    }

    /// Replaces the namespace's fault rules (`--fault` syntax; None: the
    /// rules for every request); an empty list clears them.
    pub fn set_faults(
        &self,
        namespace: Option<&str>,
        rules: &[&str],
        seed: Option<u64>,
    ) -> std::result::Result<(), String> {
        let rules = (rules.iter())
            .map(|spec| FaultRule::parse(spec))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        self.faults.replace(namespace, FaultConfig { seed, rules })
    }
}

fn in_namespace<T>(namespace: Option<&str>, f: impl FnOnce() -> T) -> T {
    let scope = RequestScope {
        region: None,
        namespace: namespace.map(str::to_string),
    };
    with_request_scope(scope, f)
}

/// The server thread: its own runtime, serving until told to stop.
fn run(state: AppState, listener: std::net::TcpListener, stopped: oneshot::Receiver<()>) {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => return eprintln!("ferrodyn (embedded): cannot start a runtime: {e}"),
    };
    runtime.block_on(async move {
        let listener = match tokio::net::TcpListener::from_std(listener) {
            Ok(listener) => listener,
            Err(e) => return eprintln!("ferrodyn (embedded): cannot listen: {e}"),
        };
        let shutdown = async move {
            let _ = stopped.await;
        };
        if let Err(e) = crate::serve(state, listener, shutdown).await {
            eprintln!("ferrodyn (embedded): server error: {e}");
        }
    });
    // Keep-alive connections a client still holds must not keep the thread.
    runtime.shutdown_timeout(Duration::from_millis(100));
}

impl Drop for EmbeddedServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
