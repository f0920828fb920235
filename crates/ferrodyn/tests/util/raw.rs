//! Raw HTTP access to the server, for what the SDK hides: headers, status
//! codes, checksums, malformed bodies and the error body's exact shape.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::HeaderMap;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use serde_json::Value;

/// The `X-Amz-Target` prefix of DynamoDB's current API version.
pub const TARGET_PREFIX: &str = "DynamoDB_20120810.";

/// DynamoDB's JSON content type.
pub const CONTENT_TYPE: &str = "application/x-amz-json-1.0";

/// A syntactically valid SigV4 Authorization header. Signatures are not
/// verified by a local endpoint (DynamoDB Local checks only the shape).
pub const AUTHORIZATION: &str = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261130/us-east-1/dynamodb/aws4_request, SignedHeaders=content-type;host;x-amz-date;x-amz-target, Signature=0000000000000000000000000000000000000000000000000000000000000000";

/// A complete HTTP response.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Vec<u8>,
}

impl Response {
    /// A header's value, if present and ASCII.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The body parsed as JSON; panics (showing the body) if it is not JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "body is not JSON ({e}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// The error name: the part of `__type` after `#`.
    pub fn error_name(&self) -> String {
        let body = self.json();
        let ty = body["__type"]
            .as_str()
            .unwrap_or_else(|| panic!("no __type in {body}"));
        ty.rsplit('#').next().unwrap_or_default().to_string()
    }
}

/// Sends one request to the shared server. `Err` means no HTTP response was
/// received (for example the server closed the connection).
pub async fn send(
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> Result<Response, String> {
    send_to(super::endpoint(), method, path, headers, body).await
}

/// Sends one request to `endpoint`.
pub async fn send_to(
    endpoint: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> Result<Response, String> {
    let client = Client::builder(TokioExecutor::new()).build_http::<Full<Bytes>>();
    let mut request = hyper::Request::builder()
        .method(method)
        .uri(format!("{endpoint}{path}"));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let request = request
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| e.to_string())?;
    let response = client
        .request(request)
        .await
        .map_err(|e| format!("{e:?}"))?;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes()
        .to_vec();
    Ok(Response {
        status,
        headers,
        body,
    })
}

/// POSTs `body` as operation `op` with the headers an SDK would send.
pub async fn call(op: &str, body: impl Into<Vec<u8>>) -> Response {
    let target = format!("{TARGET_PREFIX}{op}");
    send(
        "POST",
        "/",
        &[
            ("content-type", CONTENT_TYPE),
            ("x-amz-target", &target),
            ("x-amz-date", "20261130T000000Z"),
            ("authorization", AUTHORIZATION),
        ],
        body.into(),
    )
    .await
    .expect("the server answers")
}

/// POSTs a JSON request as operation `op`.
pub async fn call_json(op: &str, body: Value) -> Response {
    call(op, body.to_string()).await
}

/// A GET of `path` with `query` (plain names and values), signed for
/// `region` with the tests' key, `AKIDEXAMPLE:secret`: what a server run
/// with `--credentials AKIDEXAMPLE:secret` answers.
pub async fn signed_get(
    endpoint: &str,
    path: &str,
    query: &[(&str, &str)],
    region: &str,
) -> Result<Response, String> {
    let host = endpoint.trim_start_matches("http://");
    let credentials = ferrodyn_sigv4::Credentials {
        access_key_id: "AKIDEXAMPLE".into(),
        secret_access_key: "secret".into(),
        session_token: None,
    };
    let request = ferrodyn_sigv4::Request {
        method: "GET",
        path,
        query,
        headers: &[("host", host)],
        body: b"",
    };
    let now = std::time::SystemTime::now();
    let signed = ferrodyn_sigv4::sign(&request, &credentials, region, "dynamodb", now);
    let mut headers: Vec<(&str, &str)> = vec![("host", host)];
    headers.extend(signed.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let query: Vec<String> = query.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let uri = format!("{path}?{}", query.join("&"));
    send_to(endpoint, "GET", &uri, &headers, Vec::new()).await
}
