//! DynamoDB's wire protocol: JSON 1.0 over HTTP POST, the operation named by
//! `X-Amz-Target`, errors as `{"__type": ..., "message": ...}`, every response
//! carrying `x-amzn-RequestId` and an `x-amz-crc32` of its body.
//!
//! - [`http`]: the HTTP server, routing and the health check.
//! - [`auth`]: the Authorization header checks done before any operation.
//! - [`response`]: response framing (request ids, CRC32, error bodies).

pub mod auth;
pub mod http;
pub mod response;
