//! DynamoDB's wire protocol: JSON 1.0 over HTTP POST, the operation named by
//! `X-Amz-Target`, errors as `{"__type": ..., "message": ...}`, every response
//! carrying `x-amzn-RequestId` and an `x-amz-crc32` of its body.
//!
//! - [`connections`]: accepting connections, timeouts for slow or idle
//!   clients, the connection cap.
//! - [`http`]: the HTTP server, routing and the health check.
//! - [`harness`]: `/ferrodyn/` endpoints for test suites (clock, snapshots,
//!   reset).
//! - [`auth`]: the Authorization header checks done before any operation.
//! - [`cors`]: CORS headers, so browser code (and the web console) can call us.
//! - [`encoding`]: gzip/deflate request bodies.
//! - [`response`]: response framing (request ids, CRC32, error bodies).

pub mod auth;
pub mod connections;
pub mod cors;
pub mod encoding;
pub mod harness;
pub mod http;
pub mod response;
