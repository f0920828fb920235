//! Checking a received request's signature, as DynamoDB does: the access key
//! must be known, and the signature recomputed from the request (with the
//! signed headers, the path, the query and the exact body received) must be
//! the one sent. The comparison takes the same time whatever the bytes.

use crate::{canonical_request, canonical_value, signature};
use sha2::{Digest, Sha256};

/// The parts of a received request the signature covers.
pub struct Received<'a> {
    pub method: &'a str,
    pub path: &'a str,
    /// Raw query string (without `?`), possibly empty.
    pub query: &'a str,
    /// Every header as received (name, value); repeated names allowed.
    pub headers: &'a [(&'a str, &'a str)],
    /// The body exactly as received (before any decompression).
    pub body: &'a [u8],
}

/// Why a signature is not accepted, worded as DynamoDB words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VerifyError {
    /// The Authorization header is not a well-formed SigV4 header.
    Incomplete(String),
    /// The access key is not one we know.
    UnknownAccessKey,
    /// The signature does not match.
    Mismatch,
}

/// Verifies the `authorization` header of `request`; `secret_for` gives the
/// secret key of an access key id, if known.
pub fn verify(
    request: &Received<'_>,
    authorization: &str,
    secret_for: impl Fn(&str) -> Option<String>,
) -> Result<(), VerifyError> {
    let parts = parse_authorization(authorization)?;
    let mut scope = parts.credential.splitn(2, '/');
    let access_key = scope.next().unwrap_or_default();
    let scope = scope.next().ok_or_else(|| incomplete("Credential"))?;
    let secret = secret_for(access_key).ok_or(VerifyError::UnknownAccessKey)?;
    let amz_date = header(request.headers, "x-amz-date")
        .or_else(|| header(request.headers, "date"))
        .ok_or_else(|| incomplete("X-Amz-Date"))?;
    let signed: Vec<&str> = parts.signed_headers.split(';').collect();
    let mut headers = Vec::with_capacity(signed.len());
    for (name, value) in request.headers {
        let lower = name.to_ascii_lowercase();
        if signed.contains(&lower.as_str()) {
            headers.push((lower, canonical_value(value)));
        }
    }
    let query: Vec<(String, String)> = request
        .query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => (p.to_string(), String::new()),
        })
        .collect();
    let query: Vec<(&str, &str)> = query
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let body_hash = hex::encode(Sha256::digest(request.body));
    let (_, canonical) =
        canonical_request(request.method, request.path, &query, headers, &body_hash);
    let expected = signature(&secret, &amz_date, scope, &canonical);
    if constant_time_eq(expected.as_bytes(), parts.signature.as_bytes()) {
        Ok(())
    } else {
        Err(VerifyError::Mismatch)
    }
}

struct Authorization<'a> {
    credential: &'a str,
    signed_headers: &'a str,
    signature: &'a str,
}

fn incomplete(part: &str) -> VerifyError {
    VerifyError::Incomplete(format!("Authorization header requires '{part}' parameter."))
}

/// Splits `AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...`
/// (commas and spaces between the parts are both accepted, as by AWS).
fn parse_authorization(header: &str) -> Result<Authorization<'_>, VerifyError> {
    let rest = header
        .strip_prefix("AWS4-HMAC-SHA256")
        .ok_or_else(|| VerifyError::Incomplete("Unsupported Authorization type".into()))?;
    let mut credential = None;
    let mut signed_headers = None;
    let mut signature = None;
    for part in rest.split([',', ' ']).filter(|p| !p.is_empty()) {
        if let Some(v) = part.strip_prefix("Credential=") {
            credential = Some(v);
        } else if let Some(v) = part.strip_prefix("SignedHeaders=") {
            signed_headers = Some(v);
        } else if let Some(v) = part.strip_prefix("Signature=") {
            signature = Some(v);
        }
    }
    Ok(Authorization {
        credential: credential.ok_or_else(|| incomplete("Credential"))?,
        signed_headers: signed_headers.ok_or_else(|| incomplete("SignedHeaders"))?,
        signature: signature.ok_or_else(|| incomplete("Signature"))?,
    })
}

fn header(headers: &[(&str, &str)], name: &str) -> Option<String> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.trim().to_string())
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{sign, Credentials, Request};
    use std::time::{Duration, UNIX_EPOCH};

    fn signed(body: &[u8]) -> Vec<(String, String)> {
        let credentials = Credentials {
            access_key_id: "AKID".into(),
            secret_access_key: "secret".into(),
            session_token: None,
        };
        let request = Request {
            method: "POST",
            path: "/",
            query: &[],
            headers: &[
                ("host", "localhost:8000"),
                ("content-type", "application/x-amz-json-1.0"),
                ("x-amz-target", "DynamoDB_20120810.ListTables"),
            ],
            body,
        };
        let mut headers = vec![
            ("host".to_string(), "localhost:8000".to_string()),
            (
                "content-type".to_string(),
                "application/x-amz-json-1.0".to_string(),
            ),
            (
                "x-amz-target".to_string(),
                "DynamoDB_20120810.ListTables".to_string(),
            ),
        ];
        headers.extend(sign(
            &request,
            &credentials,
            "us-east-1",
            "dynamodb",
            UNIX_EPOCH + Duration::from_secs(1_796_000_000),
        ));
        headers
    }

    fn check(headers: &[(String, String)], body: &[u8], secret: &str) -> Result<(), VerifyError> {
        let pairs: Vec<(&str, &str)> = headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let authorization = header(&pairs, "authorization").unwrap();
        let received = Received {
            method: "POST",
            path: "/",
            query: "",
            headers: &pairs,
            body,
        };
        verify(&received, &authorization, |key| {
            (key == "AKID").then(|| secret.to_string())
        })
    }

    #[test]
    fn what_sign_signs_verify_accepts() {
        let headers = signed(b"{}");
        assert_eq!(check(&headers, b"{}", "secret"), Ok(()));
    }

    #[test]
    fn a_changed_body_or_secret_is_a_mismatch() {
        let headers = signed(b"{}");
        assert_eq!(
            check(&headers, b"{ }", "secret"),
            Err(VerifyError::Mismatch)
        );
        assert_eq!(check(&headers, b"{}", "other"), Err(VerifyError::Mismatch));
    }

    #[test]
    fn unknown_keys_and_garbled_headers_are_reported() {
        let mut headers = signed(b"{}");
        for (name, value) in &mut headers {
            if name == "authorization" {
                *value = value.replace("AKID", "NOPE");
            }
        }
        assert_eq!(
            check(&headers, b"{}", "secret"),
            Err(VerifyError::UnknownAccessKey)
        );
        let received = Received {
            method: "POST",
            path: "/",
            query: "",
            headers: &[],
            body: b"",
        };
        assert!(matches!(
            verify(&received, "AWS4-HMAC-SHA256 Signature=x", |_| None),
            Err(VerifyError::Incomplete(_))
        ));
    }
}
