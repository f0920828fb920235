//! CORS, as DynamoDB answers it: a request carrying `Origin` gets
//! `Access-Control-Allow-Origin: *` and the exposed headers; a preflight
//! (OPTIONS) also gets the requested methods and headers allowed and a
//! max age. Without `Origin`, no CORS header is sent.

use axum::http::{HeaderMap, HeaderValue, Method};

/// How long a browser may cache a preflight answer (DynamoDB: 30 days).
const MAX_AGE_SECONDS: &str = "2592000";
const EXPOSED: &str = "x-amzn-RequestId,x-amzn-ErrorType,x-amzn-ErrorMessage,x-amz-crc32,Date";

pub fn apply(method: &Method, request: &HeaderMap, response: &mut HeaderMap) {
    if !request.contains_key("origin") {
        return;
    }
    response.insert("access-control-allow-origin", HeaderValue::from_static("*"));
    response.insert(
        "access-control-expose-headers",
        HeaderValue::from_static(EXPOSED),
    );
    if method == Method::OPTIONS {
        response.insert(
            "access-control-max-age",
            HeaderValue::from_static(MAX_AGE_SECONDS),
        );
        for (asked, allowed) in [
            (
                "access-control-request-method",
                "access-control-allow-methods",
            ),
            (
                "access-control-request-headers",
                "access-control-allow-headers",
            ),
        ] {
            if let Some(value) = request.get(asked) {
                response.insert(allowed, value.clone());
            }
        }
    }
}
