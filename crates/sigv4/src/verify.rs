//! Checking a received request's signature, as DynamoDB does: the request
//! time and the credential scope must be the ones AWS accepts, the headers
//! that must be signed must be, the access key must be known, and the
//! signature recomputed from the request (with the signed headers, the path,
//! the query and the exact body received) must be the one sent. The
//! comparison takes the same time whatever the bytes.
//!
//! The checks run in the order AWS applies them, so the first refusal is the
//! one AWS reports: the Authorization header's form, then the credential's
//! form, then its scope (region, service, terminator, date; every mismatch
//! reported in one message, as AWS does), then the signed-header list, then
//! the key, then the signature. The request-time window is checked by the
//! caller before all of this (`Signature expired` wins over a bad scope).

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

/// What the credential scope must name: the server's region and service.
pub struct Expected<'a> {
    pub region: &'a str,
    pub service: &'a str,
}

/// Why a signature is not accepted, worded as DynamoDB words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VerifyError {
    /// The Authorization header is not a well-formed SigV4 header
    /// (IncompleteSignatureException).
    Incomplete(String),
    /// A scope or signed-header rule is broken (InvalidSignatureException).
    Invalid(String),
    /// The access key is not one we know.
    UnknownAccessKey,
    /// The signature does not match.
    Mismatch,
}

/// The request time the signature is computed over: `X-Amz-Date`, or
/// `Date` when there is no `X-Amz-Date`, with the name of the header used.
pub fn request_date<'a>(headers: &[(&'a str, &'a str)]) -> Option<(&'static str, &'a str)> {
    header(headers, "x-amz-date")
        .map(|v| ("x-amz-date", v))
        .or_else(|| header(headers, "date").map(|v| ("date", v)))
}

/// Verifies the `authorization` header of `request`; `secret_for` gives the
/// secret key of an access key id, if known. The request's date header is
/// expected to have been checked for presence, form and skew already.
pub fn verify(
    request: &Received<'_>,
    authorization: &str,
    expected: &Expected<'_>,
    secret_for: impl Fn(&str) -> Option<String>,
) -> Result<(), VerifyError> {
    let parts = parse_authorization(authorization)?;
    let (date_header, amz_date) = request_date(request.headers).ok_or_else(|| {
        VerifyError::Incomplete(format!(
            "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. Authorization={authorization}"
        ))
    })?;
    let (access_key, scope) = check_scope(parts.credential, amz_date, expected)?;
    let signed: Vec<&str> = parts.signed_headers.split(';').collect();
    check_signed_headers(&signed, request.headers, date_header)?;
    let secret = secret_for(access_key).ok_or(VerifyError::UnknownAccessKey)?;
    let canonical = canonical_of(request, &signed);
    let expected = signature(&secret, amz_date, scope, &canonical);
    if constant_time_eq(expected.as_bytes(), parts.signature.as_bytes()) {
        Ok(())
    } else {
        Err(VerifyError::Mismatch)
    }
}

/// Splits `keyid/date/region/service/aws4_request` and checks the scope
/// against the server and the request's date; returns the key id and the
/// scope (everything after the key id).
///
/// Wordings, as AWS sends them (each sentence ends with ". "; several are
/// concatenated): "Credential should be scoped to a valid region, not 'x'. "
/// (aws/aws-sdk-js#4002), "Credential should be scoped to correct service:
/// 'dynamodb'. " (arnemolland/sigv4#15, a DynamoDB reply), the terminator
/// and date sentences from AWS's "Troubleshoot signed requests" page with
/// the values AWS appends, and "Credential must have exactly 5
/// slash-delimited elements, e.g. keyid/date/region/service/term, got '…'"
/// (mhart/aws4#97).
fn check_scope<'a>(
    credential: &'a str,
    amz_date: &str,
    expected: &Expected<'_>,
) -> Result<(&'a str, &'a str), VerifyError> {
    let elements: Vec<&str> = credential.split('/').collect();
    let [key, date, region, service, terminator] = elements[..] else {
        return Err(VerifyError::Incomplete(format!(
            "Credential must have exactly 5 slash-delimited elements, e.g. keyid/date/region/service/term, got '{credential}'"
        )));
    };
    let mut problems = String::new();
    if region != expected.region {
        problems.push_str(&format!(
            "Credential should be scoped to a valid region, not '{region}'. "
        ));
    }
    if service != expected.service {
        problems.push_str(&format!(
            "Credential should be scoped to correct service: '{}'. ",
            expected.service
        ));
    }
    if terminator != "aws4_request" {
        problems.push_str(&format!(
            "Credential should be scoped with a valid terminator: 'aws4_request', not '{terminator}'. "
        ));
    }
    let day = amz_date.get(..8).unwrap_or(amz_date);
    if date != day {
        problems.push_str(&format!(
            "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '{date}' != '{day}', from '{amz_date}'. "
        ));
    }
    if !problems.is_empty() {
        return Err(VerifyError::Invalid(problems));
    }
    Ok((key, &credential[key.len() + 1..]))
}

/// Host and the date header used must be signed, and so must
/// `X-Amz-Target` when the request has one (every SDK signs it; unsigned,
/// a captured GetItem could be replayed as a DeleteItem with the same
/// body). The host wording is AWS's ("'Host' or ':authority' must be a
/// 'SignedHeader' in the AWS Authorization.", aws/aws-sdk-php#2469); the
/// date and target sentences are Ferrodyn's, worded the same way, as AWS
/// publishes none for them.
fn check_signed_headers(
    signed: &[&str],
    headers: &[(&str, &str)],
    date_header: &str,
) -> Result<(), VerifyError> {
    let must = |name: &str, shown: &str| {
        if signed.contains(&name) {
            Ok(())
        } else {
            Err(VerifyError::Invalid(format!(
                "{shown} must be a 'SignedHeader' in the AWS Authorization."
            )))
        }
    };
    must("host", "'Host' or ':authority'")?;
    let shown_date = if date_header == "date" {
        "'Date'"
    } else {
        "'X-Amz-Date'"
    };
    must(date_header, shown_date)?;
    if header(headers, "x-amz-target").is_some() {
        must("x-amz-target", "'X-Amz-Target'")?;
    }
    Ok(())
}

/// The canonical request of `request` over the `signed` header names.
fn canonical_of(request: &Received<'_>, signed: &[&str]) -> String {
    let mut headers = Vec::with_capacity(signed.len());
    for (name, value) in request.headers {
        let lower = name.to_ascii_lowercase();
        if signed.contains(&lower.as_str()) {
            headers.push((lower, canonical_value(value)));
        }
    }
    let query: Vec<(&str, &str)> = request
        .query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| p.split_once('=').unwrap_or((p, "")))
        .collect();
    let body_hash = hex::encode(Sha256::digest(request.body));
    canonical_request(request.method, request.path, &query, headers, &body_hash).1
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

fn header<'a>(headers: &[(&'a str, &'a str)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.trim())
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{sign, Credentials, Request};
    use std::time::{Duration, UNIX_EPOCH};

    const TARGET: (&str, &str) = ("x-amz-target", "DynamoDB_20120810.ListTables");

    /// A request signed for `region`, signing `signed_headers` and then
    /// carrying `extra` unsigned headers too.
    fn signed_with(
        region: &str,
        signed_headers: &[(&str, &str)],
        extra: &[(&str, &str)],
    ) -> Vec<(String, String)> {
        let credentials = Credentials {
            access_key_id: "AKID".into(),
            secret_access_key: "secret".into(),
            session_token: None,
        };
        let request = Request {
            method: "POST",
            path: "/",
            query: &[],
            headers: signed_headers,
            body: b"{}",
        };
        let mut headers: Vec<(String, String)> = signed_headers
            .iter()
            .chain(extra)
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        headers.extend(sign(
            &request,
            &credentials,
            region,
            "dynamodb",
            UNIX_EPOCH + Duration::from_secs(1_796_000_000),
        ));
        headers
    }

    fn signed(body: &[u8]) -> Vec<(String, String)> {
        assert_eq!(body, b"{}");
        signed_with(
            "us-east-1",
            &[
                ("host", "localhost:8000"),
                ("content-type", "application/x-amz-json-1.0"),
                TARGET,
            ],
            &[],
        )
    }

    fn check(headers: &[(String, String)], body: &[u8], secret: &str) -> Result<(), VerifyError> {
        let pairs: Vec<(&str, &str)> = headers
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let authorization = header(&pairs, "authorization").unwrap().to_string();
        let received = Received {
            method: "POST",
            path: "/",
            query: "",
            headers: &pairs,
            body,
        };
        let expected = Expected {
            region: "us-east-1",
            service: "dynamodb",
        };
        verify(&received, &authorization, &expected, |key| {
            (key == "AKID").then(|| secret.to_string())
        })
    }

    fn edit_authorization(headers: &mut [(String, String)], from: &str, to: &str) {
        for (name, value) in headers {
            if name == "authorization" {
                *value = value.replace(from, to);
            }
        }
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
        edit_authorization(&mut headers, "AKID", "NOPE");
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
        let expected = Expected {
            region: "us-east-1",
            service: "dynamodb",
        };
        assert!(matches!(
            verify(&received, "AWS4-HMAC-SHA256 Signature=x", &expected, |_| {
                None
            }),
            Err(VerifyError::Incomplete(_))
        ));
    }

    #[test]
    fn a_scope_naming_another_region_is_refused() {
        let headers = signed_with("eu-west-1", &[("host", "h"), TARGET], &[]);
        assert_eq!(
            check(&headers, b"{}", "secret"),
            Err(VerifyError::Invalid(
                "Credential should be scoped to a valid region, not 'eu-west-1'. ".into()
            ))
        );
    }

    #[test]
    fn every_scope_mismatch_is_reported_at_once() {
        let mut headers = signed(b"{}");
        edit_authorization(
            &mut headers,
            "/20261130/us-east-1/dynamodb/aws4_request",
            "/20261128/us-east-1/s3/aws5_request",
        );
        assert_eq!(
            check(&headers, b"{}", "secret"),
            Err(VerifyError::Invalid(
                "Credential should be scoped to correct service: 'dynamodb'. \
                 Credential should be scoped with a valid terminator: 'aws4_request', not 'aws5_request'. \
                 Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: \
                 '20261128' != '20261130', from '20261130T005320Z'. "
                    .into()
            ))
        );
        edit_authorization(&mut headers, "/20261128/us-east-1/s3/aws5_request", "/x");
        assert!(matches!(
            check(&headers, b"{}", "secret"),
            Err(VerifyError::Incomplete(m)) if m.starts_with("Credential must have exactly 5 slash-delimited elements")
        ));
    }

    #[test]
    fn host_date_and_target_must_be_signed() {
        let headers = signed_with("us-east-1", &[TARGET], &[("host", "h")]);
        assert_eq!(
            check(&headers, b"{}", "secret"),
            Err(VerifyError::Invalid(
                "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.".into()
            ))
        );
        let headers = signed_with("us-east-1", &[("host", "h")], &[TARGET]);
        assert_eq!(
            check(&headers, b"{}", "secret"),
            Err(VerifyError::Invalid(
                "'X-Amz-Target' must be a 'SignedHeader' in the AWS Authorization.".into()
            ))
        );
        let mut headers = signed_with("us-east-1", &[("host", "h"), TARGET], &[]);
        edit_authorization(
            &mut headers,
            "host;x-amz-date;x-amz-target",
            "host;x-amz-target",
        );
        assert_eq!(
            check(&headers, b"{}", "secret"),
            Err(VerifyError::Invalid(
                "'X-Amz-Date' must be a 'SignedHeader' in the AWS Authorization.".into()
            ))
        );
    }
}
