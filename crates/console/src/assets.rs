//! The console's page, script modules and stylesheet, embedded in the binary
//! with `include_bytes!` (no Node, no build step, no CDN, no network at run
//! time). Every response carries a strict Content-Security-Policy: the page
//! loads nothing but these files and talks to nothing but its own API.

use axum::body::Body;
use axum::http::{header, HeaderValue, Response, StatusCode};

/// `(path under /console/assets/, content type, bytes)`.
pub const FILES: &[(&str, &str, &[u8])] = &[
    (
        "style.css",
        "text/css; charset=utf-8",
        include_bytes!("../assets/style.css"),
    ),
    ("js/app.js", JS, include_bytes!("../assets/js/app.js")),
    ("js/api.js", JS, include_bytes!("../assets/js/api.js")),
    ("js/ui.js", JS, include_bytes!("../assets/js/ui.js")),
    ("js/values.js", JS, include_bytes!("../assets/js/values.js")),
    ("js/tables.js", JS, include_bytes!("../assets/js/tables.js")),
    ("js/items.js", JS, include_bytes!("../assets/js/items.js")),
    (
        "js/vectors.js",
        JS,
        include_bytes!("../assets/js/vectors.js"),
    ),
    ("js/stage.js", JS, include_bytes!("../assets/js/stage.js")),
    ("js/bulk.js", JS, include_bytes!("../assets/js/bulk.js")),
    ("js/tools.js", JS, include_bytes!("../assets/js/tools.js")),
    (
        "js/partitions.js",
        JS,
        include_bytes!("../assets/js/partitions.js"),
    ),
    (
        "js/replicas.js",
        JS,
        include_bytes!("../assets/js/replicas.js"),
    ),
    (
        "js/backups.js",
        JS,
        include_bytes!("../assets/js/backups.js"),
    ),
    (
        "favicon.svg",
        "image/svg+xml",
        include_bytes!("../assets/favicon.svg"),
    ),
];

const JS: &str = "text/javascript; charset=utf-8";
const INDEX: &[u8] = include_bytes!("../assets/index.html");
const CSP: &str = "default-src 'self'; img-src 'self' data:; style-src 'self'; \
                   script-src 'self'; connect-src 'self'; frame-ancestors 'none'; \
                   base-uri 'none'; form-action 'self'";

/// Total size of the embedded assets, page included (BENCHMARKS.md).
pub fn total_bytes() -> usize {
    INDEX.len() + FILES.iter().map(|(_, _, bytes)| bytes.len()).sum::<usize>()
}

fn respond(status: StatusCode, content_type: &str, bytes: &'static [u8]) -> Response<Body> {
    let mut response = Response::new(Body::from(bytes));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_str(content_type).expect("valid"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    headers.insert("x-frame-options", HeaderValue::from_static("DENY"));
    headers.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    response
}

/// The console page.
pub fn index() -> Response<Body> {
    respond(StatusCode::OK, "text/html; charset=utf-8", INDEX)
}

/// One embedded asset, or 404.
pub fn serve(path: &str) -> Response<Body> {
    match FILES.iter().find(|(name, _, _)| *name == path) {
        Some((_, content_type, bytes)) => respond(StatusCode::OK, content_type, bytes),
        None => respond(StatusCode::NOT_FOUND, "text/plain", b"no such asset"),
    }
}

/// What a browser without the token sees.
pub fn token_page() -> Response<Body> {
    respond(
        StatusCode::UNAUTHORIZED,
        "text/html; charset=utf-8",
        include_bytes!("../assets/token.html"),
    )
}
