//! Response framing: status, content type, request id and CRC32 header.

use axum::body::Body;
use axum::http::{HeaderValue, Response, StatusCode};

pub const CONTENT_TYPE: &str = "application/x-amz-json-1.0";

/// A 52-character request id shaped like DynamoDB's (upper-case letters and
/// digits): 36^52 random ids, so two never meet in practice.
pub fn new_request_id() -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    (0..52)
        .map(|_| ALPHABET[fastrand::usize(..ALPHABET.len())] as char)
        .collect()
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
