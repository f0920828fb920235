//! Response framing: status, content type, request id and CRC32 header.

use axum::body::Body;
use axum::http::{HeaderValue, Response, StatusCode};
use std::sync::atomic::{AtomicU64, Ordering};

pub const CONTENT_TYPE: &str = "application/x-amz-json-1.0";

static REQUEST_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A 52-character request id shaped like DynamoDB's (upper-case letters and
/// digits), unique within the process.
pub fn new_request_id() -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let seed = std::process::id() as u64;
    let mut state = REQUEST_COUNTER.fetch_add(1, Ordering::Relaxed) ^ seed.rotate_left(32);
    let mut id = String::with_capacity(52);
    for _ in 0..52 {
        // splitmix64: cheap, and distinct counters give distinct ids.
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        id.push(ALPHABET[(z % ALPHABET.len() as u64) as usize] as char);
    }
    id
}

/// A DynamoDB JSON response with its request id and CRC32.
pub fn json_response(status: u16, body: Vec<u8>) -> Response<Body> {
    encoded_json_response(status, body, None)
}

/// A response compressed with `encoding` when it is big enough to be worth
/// it; the CRC32 covers the bytes actually sent, as DynamoDB's does.
pub fn encoded_json_response(
    status: u16,
    body: Vec<u8>,
    encoding: Option<&'static str>,
) -> Response<Body> {
    let encoding =
        encoding.filter(|_| body.len() >= super::encoding::RESPONSE_COMPRESSION_THRESHOLD);
    let body = match encoding {
        Some(encoding) => super::encoding::compress(encoding, &body),
        None => body,
    };
    let crc = crc32fast::hash(&body);
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = StatusCode::from_u16(status).unwrap_or(StatusCode::BAD_REQUEST);
    let headers = response.headers_mut();
    headers.insert("content-type", HeaderValue::from_static(CONTENT_TYPE));
    // DynamoDB names itself "Server"; some clients look for the header.
    headers.insert("server", HeaderValue::from_static("Server"));
    headers.insert(
        "x-amzn-requestid",
        HeaderValue::from_str(&new_request_id()).expect("request ids are ASCII"),
    );
    headers.insert("x-amz-crc32", HeaderValue::from(crc));
    if let Some(encoding) = encoding {
        headers.insert("content-encoding", HeaderValue::from_static(encoding));
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_ids_are_unique_and_well_formed() {
        let a = new_request_id();
        let b = new_request_id();
        assert_ne!(a, b);
        assert_eq!(a.len(), 52);
        assert!(a
            .bytes()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit()));
    }
}
