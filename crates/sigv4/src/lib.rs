//! AWS Signature Version 4, the request signing every AWS service (and every
//! DynamoDB-compatible server) expects: a canonical form of the request is
//! hashed, and that hash is signed with a key derived from the secret key,
//! the date, the region and the service.
//!
//! Reference: <https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_sigv-create-signed-request.html>.
//! The client signs with [`sign`]; the server checks a received request with
//! [`verify`] (when it is given credentials to check against). Both build the
//! same canonical request, so they cannot drift apart. The client's tests
//! check the output against the `aws-sigv4` crate used by the official SDKs.

mod verify;

pub use verify::{request_date, verify, Expected, Received, VerifyError};

use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};
use std::time::{SystemTime, UNIX_EPOCH};

const ALGORITHM: &str = "AWS4-HMAC-SHA256";

/// An access key pair, with a session token for temporary credentials.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    pub access_key_id: String,
    pub secret_access_key: String,
    pub session_token: Option<String>,
}

impl std::fmt::Debug for Credentials {
    // Never print the secret (errors and logs may include a config).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("access_key_id", &self.access_key_id)
            .field("secret_access_key", &"<redacted>")
            .field(
                "session_token",
                &self.session_token.as_ref().map(|_| "<redacted>"),
            )
            .finish()
    }
}

/// The parts of an HTTP request that the signature covers.
pub struct Request<'a> {
    pub method: &'a str,
    /// Absolute path, already percent-encoded as sent (DynamoDB: `/`).
    pub path: &'a str,
    /// Query parameters, not encoded (DynamoDB: none).
    pub query: &'a [(&'a str, &'a str)],
    /// Headers to sign; must include `host`. Names in any case.
    pub headers: &'a [(&'a str, &'a str)],
    pub body: &'a [u8],
}

/// Signs `request` and returns the headers to add to it: `x-amz-date`,
/// `x-amz-security-token` (with a session token) and `authorization`.
/// The added date and token headers are signed as well.
pub fn sign(
    request: &Request<'_>,
    credentials: &Credentials,
    region: &str,
    service: &str,
    time: SystemTime,
) -> Vec<(String, String)> {
    let (amz_date, date) = format_time(time);
    let mut headers: Vec<(String, String)> = request
        .headers
        .iter()
        .map(|(name, value)| (name.to_ascii_lowercase(), canonical_header_value(value)))
        .collect();
    headers.push(("x-amz-date".to_string(), amz_date.clone()));
    if let Some(token) = &credentials.session_token {
        headers.push(("x-amz-security-token".to_string(), token.clone()));
    }
    let (signed_headers, canonical_request) = canonical_request(
        request.method,
        request.path,
        request.query,
        headers,
        &hex::encode(Sha256::digest(request.body)),
    );
    let scope = format!("{date}/{region}/{service}/aws4_request");
    let signature = signature(
        &credentials.secret_access_key,
        &amz_date,
        &scope,
        &canonical_request,
    );

    let mut added = vec![("x-amz-date".to_string(), amz_date)];
    if let Some(token) = &credentials.session_token {
        added.push(("x-amz-security-token".to_string(), token.clone()));
    }
    added.push((
        "authorization".to_string(),
        format!(
            "{ALGORITHM} Credential={}/{scope}, SignedHeaders={signed_headers}, Signature={signature}",
            credentials.access_key_id
        ),
    ));
    added
}

/// The canonical request of the spec, from lower-cased header names and
/// canonical values; returns the signed-headers list and the request.
/// Repeated headers are signed as one, values joined by commas in order.
pub(crate) fn canonical_request(
    method: &str,
    path: &str,
    query: &[(&str, &str)],
    mut headers: Vec<(String, String)>,
    body_sha256: &str,
) -> (String, String) {
    headers.sort_by(|a, b| a.0.cmp(&b.0));
    let mut merged: Vec<(String, String)> = Vec::with_capacity(headers.len());
    for (name, value) in headers {
        match merged.last_mut() {
            Some((last, values)) if *last == name => {
                values.push(',');
                values.push_str(&value);
            }
            _ => merged.push((name, value)),
        }
    }
    let signed_headers = merged
        .iter()
        .map(|(name, _)| name.as_str())
        .collect::<Vec<_>>()
        .join(";");
    let canonical_headers: String = merged
        .iter()
        .map(|(name, value)| format!("{name}:{value}\n"))
        .collect();
    let canonical = format!(
        "{method}\n{}\n{}\n{canonical_headers}\n{signed_headers}\n{body_sha256}",
        canonical_path(path),
        canonical_query(query),
    );
    (signed_headers, canonical)
}

/// The hex signature of a canonical request under `scope`
/// (`date/region/service/aws4_request`).
pub(crate) fn signature(
    secret: &str,
    amz_date: &str,
    scope: &str,
    canonical_request: &str,
) -> String {
    let string_to_sign = format!(
        "{ALGORITHM}\n{amz_date}\n{scope}\n{}",
        hex::encode(Sha256::digest(canonical_request.as_bytes()))
    );
    let mut parts = scope.split('/');
    let (date, region, service) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    );
    let key = signing_key(secret, date, region, service);
    hex::encode(hmac(&key, string_to_sign.as_bytes()))
}

/// Trims and collapses a header value (for [`verify`]).
pub(crate) fn canonical_value(value: &str) -> String {
    canonical_header_value(value)
}

/// kSigning = HMAC(HMAC(HMAC(HMAC("AWS4" + secret, date), region), service), "aws4_request").
fn signing_key(secret: &str, date: &str, region: &str, service: &str) -> Vec<u8> {
    let k_date = hmac(format!("AWS4{secret}").as_bytes(), date.as_bytes());
    let k_region = hmac(&k_date, region.as_bytes());
    let k_service = hmac(&k_region, service.as_bytes());
    hmac(&k_service, b"aws4_request")
}

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).expect("HMAC accepts any key length");
    mac.update(data);
    mac.finalize().into_bytes().to_vec()
}

/// Trims a header value and collapses runs of spaces, as the spec requires.
fn canonical_header_value(value: &str) -> String {
    value.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The path as sent; an empty path is `/`. Services other than S3 would also
/// normalise `.`/`..` segments, which DynamoDB requests never contain.
fn canonical_path(path: &str) -> String {
    if path.is_empty() {
        "/".to_string()
    } else {
        // Each segment is encoded a second time (non-S3 services sign the
        // double-encoded path).
        path.split('/')
            .map(uri_encode)
            .collect::<Vec<_>>()
            .join("/")
    }
}

/// Query parameters encoded and sorted by name, then value.
fn canonical_query(query: &[(&str, &str)]) -> String {
    let mut pairs: Vec<(String, String)> = query
        .iter()
        .map(|(k, v)| (uri_encode(k), uri_encode(v)))
        .collect();
    pairs.sort();
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

/// RFC 3986 percent-encoding: everything but `A-Za-z0-9-._~`.
fn uri_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// `(YYYYMMDDTHHMMSSZ, YYYYMMDD)` in UTC.
pub fn format_time(time: SystemTime) -> (String, String) {
    let secs = time
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let (y, m, d) = ferrodyn_types::dates::civil_from_days(days);
    let date = format!("{y:04}{m:02}{d:02}");
    let amz = format!(
        "{date}T{:02}{:02}{:02}Z",
        rem / 3600,
        (rem / 60) % 60,
        rem % 60
    );
    (amz, date)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn dates_format_in_utc() {
        let t = UNIX_EPOCH + Duration::from_secs(1_440_938_160); // 2015-08-30T12:36:00Z
        assert_eq!(
            format_time(t),
            ("20150830T123600Z".into(), "20150830".into())
        );
        assert_eq!(format_time(UNIX_EPOCH).1, "19700101");
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(format_time(leap).1, "20000229");
    }

    /// AWS's published example ("get-vanilla" from the SigV4 test suite):
    /// GET / with host and x-amz-date, key AKIDEXAMPLE, 2015-08-30T12:36:00Z.
    #[test]
    fn matches_the_aws_get_vanilla_test_vector() {
        let credentials = Credentials {
            access_key_id: "AKIDEXAMPLE".into(),
            secret_access_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
            session_token: None,
        };
        let headers = sign(
            &Request {
                method: "GET",
                path: "/",
                query: &[],
                headers: &[("Host", "example.amazonaws.com")],
                body: b"",
            },
            &credentials,
            "us-east-1",
            "service",
            UNIX_EPOCH + Duration::from_secs(1_440_938_160),
        );
        let auth = &headers
            .iter()
            .find(|(n, _)| n == "authorization")
            .unwrap()
            .1;
        assert_eq!(
            auth,
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, \
             SignedHeaders=host;x-amz-date, \
             Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"
        );
    }

    #[test]
    fn header_values_are_trimmed_and_query_sorted() {
        assert_eq!(canonical_header_value("  a   b  c "), "a b c");
        assert_eq!(
            canonical_query(&[("b", "2"), ("a", "x y"), ("a", "1")]),
            "a=1&a=x%20y&b=2"
        );
        assert_eq!(uri_encode("a/b~"), "a%2Fb~");
    }
}
