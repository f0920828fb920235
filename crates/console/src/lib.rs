//! Ferrodyn's web console: an axum [`Router`] serving the console's page and
//! assets (embedded in the binary, see [`assets`]) under `/console`, and its
//! own JSON API under `/console/api/...` ([`api`]).
//!
//! The console is a *client*: every API call goes to a DynamoDB endpoint
//! through `ferrodyn-client` (which signs with SigV4), and the patterns the
//! CLI offers (staged edits, bulk writes with backoff, uniqueness locks, the
//! expression builder, the cost calculator) run here in Rust through
//! `ferrodyn-patterns`. The browser only renders and calls this API, so the
//! same console works in front of Ferrodyn (`ferrodyn serve`) and AWS
//! (`ferrodyn console --endpoint-url aws`), and secrets never reach it.
//!
//! The API is same-origin only ([`guard`]): no CORS headers, the Host header
//! checked against DNS rebinding, cross-origin writes refused, and a start-up
//! token demanded when the console is reachable beyond loopback or the server
//! verifies signatures.

pub mod api;
pub mod assets;
pub(crate) mod bulk;
pub mod guard;
mod locks;
mod read;
mod snippets;
mod stage;
mod streams;
mod transfer;

use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, Path, RawQuery, State};
use axum::http::{HeaderMap, Method, Response, StatusCode};
use axum::routing::{any, get};
use axum::Router;
use ferrodyn_client::Client;
use std::sync::Arc;

/// Path the console is served under.
pub const BASE: &str = "/console";

/// How a console is set up.
pub struct ConsoleOptions {
    /// The DynamoDB endpoint the console drives.
    pub client: Client,
    /// Where DynamoDB Streams calls go, when not to `client`'s endpoint
    /// (AWS serves them on `streams.dynamodb.<region>.amazonaws.com`).
    pub streams_client: Option<Client>,
    /// The token every request must carry (None: open, loopback only).
    pub token: Option<String>,
    /// Host names (without port) the console answers to, besides
    /// `localhost`, `127.0.0.1` and `[::1]`.
    pub hosts: Vec<String>,
    /// Answer to any Host header (a console bound to `0.0.0.0`, which then
    /// always requires the token, so a rebinding page still cannot use it).
    pub any_host: bool,
}

/// The state every handler shares.
pub(crate) struct Console {
    pub client: Client,
    pub streams_client: Client,
    pub guard: guard::Guard,
    pub jobs: bulk::Jobs,
}

/// The console's routes: the page, its assets and its API.
pub fn router(options: ConsoleOptions) -> Router {
    let console = Arc::new(Console {
        streams_client: options
            .streams_client
            .unwrap_or_else(|| options.client.clone()),
        client: options.client,
        guard: guard::Guard::new(options.token, options.hosts, options.any_host),
        jobs: bulk::Jobs::default(),
    });
    Router::new()
        .route(BASE, get(page))
        .route("/console/", get(page))
        .route("/console/assets/{*file}", get(asset))
        .route("/console/api/{*path}", any(api_call))
        .with_state(console)
        .layer(DefaultBodyLimit::max(MAX_UPLOAD_BYTES))
}

/// Largest request to the console API (an imported file travels in one).
pub const MAX_UPLOAD_BYTES: usize = 64 * 1024 * 1024;

/// Whether a console on `host` must demand a token: when it is reachable
/// from other machines, or when the server verifies signatures (otherwise the
/// console would be a way around them).
pub fn needs_token(host: &str, server_verifies_signatures: bool) -> bool {
    server_verifies_signatures || !guard::is_loopback(host)
}

/// A fresh random token (128 bits from the OS, hex).
pub fn new_token() -> String {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    let filled = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .is_ok();
    if !filled {
        // No /dev/urandom: std's per-process random hash keys.
        use std::hash::{BuildHasher, Hasher};
        for chunk in bytes.chunks_mut(8) {
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u64(std::process::id() as u64);
            chunk.copy_from_slice(&h.finish().to_le_bytes()[..chunk.len()]);
        }
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

async fn page(
    State(console): State<Arc<Console>>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response<Body> {
    if let Err(refused) = console.guard.check_host(&headers) {
        return refused.response();
    }
    console.guard.page(&headers, query.as_deref())
}

async fn asset(
    State(console): State<Arc<Console>>,
    Path(file): Path<String>,
    headers: HeaderMap,
) -> Response<Body> {
    if let Err(refused) = console.guard.check_host(&headers) {
        return refused.response();
    }
    assets::serve(&file)
}

async fn api_call(
    State(console): State<Arc<Console>>,
    method: Method,
    Path(path): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response<Body> {
    if let Err(refused) = console.guard.check_api(&method, &headers) {
        return refused.response();
    }
    let worker = console.clone();
    let outcome =
        tokio::task::spawn_blocking(move || api::dispatch(&worker, &method, &path, &body)).await;
    match outcome {
        Ok(Ok(value)) => api::json(StatusCode::OK, &value),
        Ok(Err(error)) => error.response(),
        Err(_) => {
            api::ApiFailure::console("InternalError", "the request handler failed").response()
        }
    }
}
