//! The HTTP server: every POST to `/` is a DynamoDB call named by
//! `X-Amz-Target`; `GET /` is the health check DynamoDB answers with
//! `healthy: <host>`; `GET /ferrodyn/usage` is Ferrodyn's own capacity report.
//! Bodies are capped so no request can exhaust memory.

use crate::faults::Faults;
use crate::ops;
use crate::protocol::connections::{serve_connections, ConnectionLimits, RequestReceived};
use crate::protocol::{auth, cors, encoding, harness, response};
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, Method, Response, StatusCode, Uri};
use axum::{Extension, Router};
use ferrodyn_engine::Engine;
use ferrodyn_types::{DynamoError, ErrorKind};
use std::future::Future;
use std::sync::Arc;
use tokio::net::TcpListener;

/// Largest request body accepted: DynamoDB's 16 MB request limit plus room
/// for JSON framing.
pub const MAX_BODY_BYTES: usize = 16 * 1024 * 1024 + 64 * 1024;

/// DynamoDB answers 400 Bad Request when the request line (the URL) or the
/// headers together exceed 16 KB.
pub const MAX_REQUEST_LINE_BYTES: usize = 16 * 1024;
pub const MAX_HEADER_BYTES: usize = 16 * 1024;

/// Ferrodyn's own (non-DynamoDB) report of the capacity consumed since start,
/// per table and operation, read by `ferrodyn usage`.
pub const USAGE_PATH: &str = "/ferrodyn/usage";

#[derive(Clone)]
pub struct AppState {
    pub engine: Arc<Engine>,
    /// Reject requests whose X-Amz-Date is more than 15 minutes off.
    pub check_request_time: bool,
    /// Failures injected on purpose (none unless configured).
    pub faults: Arc<Faults>,
    /// Access keys to verify signatures against (None: not verified).
    pub credentials: Option<Arc<auth::KnownCredentials>>,
    /// Each access key ID has tables of its own (`--namespaces access-key`;
    /// see `ferrodyn_engine::region`).
    pub namespaces: bool,
}

impl AppState {
    /// The namespace a request addresses: its access key ID when the
    /// server keeps one per key, else the one shared account.
    pub fn namespace_of(&self, headers: &HeaderMap) -> Option<String> {
        self.namespaces
            .then(|| auth::credential_access_key(headers).map(str::to_string))
            .flatten()
    }
}

pub fn router(state: AppState) -> Router {
    Router::new()
        .fallback(handle)
        .with_state(state)
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
}

/// Serves until `shutdown` resolves, then lets in-flight requests finish,
/// with the default connection limits.
pub async fn serve(
    state: AppState,
    listener: TcpListener,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_with(
        state,
        listener,
        ConnectionLimits::default(),
        Router::new(),
        shutdown,
    )
    .await
}

/// [`serve`] within the given timeouts and connection cap, with `extra`
/// routes beside the DynamoDB API on the same port (the web console at
/// `/console`): they answer their own paths, every other path is the API's.
pub async fn serve_with(
    state: AppState,
    listener: TcpListener,
    limits: ConnectionLimits,
    extra: Router,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    serve_connections(listener, router(state).merge(extra), limits, shutdown).await
}

async fn handle(
    State(state): State<AppState>,
    received: Option<Extension<RequestReceived>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response<Body> {
    // The body is in: from here on the connection is busy, not slow.
    if let Some(Extension(received)) = received {
        received.mark();
    }
    // Shared storage (PostgreSQL): every engine call waits on the network,
    // so every request goes to the blocking pool (issue 13).
    if !state.engine.storage_is_shared() && !runs_on_blocking_pool(&state, &method, &uri, &headers)
    {
        let mut response = route(&state, &method, &uri, &headers, &body);
        cors::apply(&method, &headers, response.headers_mut());
        return response;
    }
    // Table-level work can wait (the catalog lock, a table's in-flight
    // writes, catalog fsyncs), and so can writes that may block: on the
    // blocking pool it cannot stall the few async workers that serve every
    // other connection.
    let answer = tokio::task::spawn_blocking(move || {
        let mut response = route(&state, &method, &uri, &headers, &body);
        cors::apply(&method, &headers, response.headers_mut());
        response
    })
    .await;
    answer.unwrap_or_else(|_| {
        let error = DynamoError::internal("the operation failed unexpectedly");
        response::encoded_json_response(error.kind.status(), error.to_body(), None)
    })
}

/// Whether a request runs on the blocking pool rather than inline on an
/// async worker (see [`ops::Operation::runs_on_blocking_pool`]). Item writes
/// go there too when they may block for long (an fsync shared by a group of
/// writers, queued conflicts, held transactions): inline, the few workers
/// would be all the writers there are.
/// Harness requests (snapshots, reset) wait out tables' writes: blocking too.
fn runs_on_blocking_pool(
    state: &AppState,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
) -> bool {
    if uri.path().starts_with(harness::PREFIX) && uri.path() != USAGE_PATH {
        return true;
    }
    method == Method::POST
        && headers
            .get("x-amz-target")
            .and_then(|t| t.to_str().ok())
            .and_then(ops::Operation::from_target)
            .is_some_and(|op| {
                op.runs_on_blocking_pool()
                    || (op.writes_items() && state.engine.writes_may_block())
                    || (op.serves_items() && state.engine.items_wait_for_peers())
            })
}

fn route(
    state: &AppState,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: &[u8],
) -> Response<Body> {
    if exceeds_request_limits(uri, headers) {
        return plain(StatusCode::BAD_REQUEST, "Bad Request".into());
    }
    if uri.path() == USAGE_PATH && method == Method::GET {
        let report =
            serde_json::to_vec(&state.engine.usage_report()).expect("plain data always serialises");
        return response::json_response(200, report);
    }
    if let Some(response) = harness::answer(state, method, uri, headers, body) {
        return response;
    }
    if uri.path() != "/" {
        return plain(StatusCode::NOT_FOUND, "Page Not Found".into());
    }
    if method == Method::OPTIONS {
        return plain(StatusCode::OK, String::new());
    }
    if method == Method::GET {
        let host = headers
            .get("host")
            .and_then(|h| h.to_str().ok())
            .unwrap_or("localhost");
        return plain(StatusCode::OK, format!("healthy: {host}"));
    }
    if method != Method::POST {
        return plain(StatusCode::METHOD_NOT_ALLOWED, String::new());
    }
    let accept = headers.get("accept-encoding").and_then(|a| a.to_str().ok());
    let encoding = encoding::response_encoding(accept);
    match call(state, method, uri, headers, body) {
        Ok(body) => response::encoded_json_response(200, body, encoding),
        Err(error) => {
            response::encoded_json_response(error.kind.status(), error.to_body(), encoding)
        }
    }
}

fn call(
    state: &AppState,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: &[u8],
) -> Result<Vec<u8>, DynamoError> {
    let target = headers
        .get("x-amz-target")
        .and_then(|t| t.to_str().ok())
        .unwrap_or("");
    let operation = ops::Operation::from_target(target);
    let policy = auth::AuthPolicy {
        check_request_time: state.check_request_time,
        credentials: state.credentials.as_deref(),
        region: state.engine.region(),
    };
    auth::authenticate(method, uri, headers, body, &policy)?;
    let encoding = headers
        .get("content-encoding")
        .and_then(|e| e.to_str().ok());
    let decoded = encoding::decode(encoding, body, MAX_BODY_BYTES)?;
    let body = decoded.as_deref().unwrap_or(body);
    // DescribeEndpoints answers with the address the client used, so it is
    // served here, where the Host header is known.
    if target == "DynamoDB_20120810.DescribeEndpoints" {
        let host = headers
            .get("host")
            .and_then(|h| h.to_str().ok())
            .unwrap_or("localhost");
        return Ok(ops::describe_endpoints(host));
    }
    let Some(operation) = operation else {
        return Err(DynamoError::new(
            ErrorKind::UnknownOperation,
            "An unknown operation was requested.",
        ));
    };
    // Tables live per region: the request addresses its credential scope's.
    let scope = ferrodyn_engine::region::RequestScope {
        region: auth::credential_region(headers).map(str::to_string),
        namespace: state.namespace_of(headers),
    };
    ferrodyn_engine::region::with_request_scope(scope, || {
        ops::dispatch(&state.engine, &state.faults, operation, body)
    })
}

/// Whether the URL or the headers are larger than DynamoDB accepts.
fn exceeds_request_limits(uri: &Uri, headers: &HeaderMap) -> bool {
    let header_bytes: usize = headers
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len() + 4)
        .sum();
    let line_bytes = uri.path_and_query().map_or(0, |p| p.as_str().len());
    line_bytes > MAX_REQUEST_LINE_BYTES || header_bytes > MAX_HEADER_BYTES
}

fn plain(status: StatusCode, text: String) -> Response<Body> {
    let mut response = Response::new(Body::from(text));
    *response.status_mut() = status;
    response
}
