//! The Authorization checks DynamoDB makes before looking at a request.
//!
//! By default Ferrodyn does not know the callers' secret keys, so like
//! DynamoDB Local it does not verify signatures; it checks what can be checked
//! without a secret: the header must be present and well formed and, with
//! `--check-request-time`, the request time (`X-Amz-Date`, or `Date` when
//! there is no `X-Amz-Date`: whichever the signature covers) must be within
//! 15 minutes of now (DynamoDB's exact wording for expired and future
//! signatures; off by default because load generators replay fixed
//! timestamps). Given credentials (`ferrodyn serve --credentials ID:SECRET`),
//! it verifies every signature as DynamoDB does, request time included, and
//! the credential scope must name the server's `--region` and `dynamodb`.

use axum::http::{HeaderMap, Method, Uri};
use ferrodyn_sigv4::{request_date, verify, Expected, Received, VerifyError};
use ferrodyn_types::dates::{civil_from_days, days_from_civil};
use ferrodyn_types::{DynamoError, ErrorKind};
use std::collections::HashMap;

/// How far `X-Amz-Date` may be from the server's clock.
const MAX_SKEW_SECONDS: i64 = 15 * 60;

/// The access keys (id → secret) signatures are checked against, if any.
pub type KnownCredentials = HashMap<String, String>;

/// What a request's signature is checked against.
pub struct AuthPolicy<'a> {
    /// Reject request times more than 15 minutes off.
    pub check_request_time: bool,
    /// Access keys to verify signatures with (None: not verified).
    pub credentials: Option<&'a KnownCredentials>,
    /// The region a credential scope must name (the server's `--region`).
    pub region: &'a str,
}

/// Checks a request's authentication: the header always, the signature when
/// credentials are configured.
pub fn authenticate(
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: &[u8],
    policy: &AuthPolicy<'_>,
) -> Result<(), DynamoError> {
    let credentials = policy.credentials;
    check(headers, policy.check_request_time || credentials.is_some())?;
    let Some(credentials) = credentials else {
        return Ok(());
    };
    let authorization = headers
        .get("authorization")
        .and_then(|a| a.to_str().ok())
        .unwrap_or("");
    let pairs: Vec<(&str, &str)> = headers
        .iter()
        .filter_map(|(name, value)| Some((name.as_str(), value.to_str().ok()?)))
        .collect();
    let received = Received {
        method: method.as_str(),
        path: uri.path(),
        query: uri.query().unwrap_or(""),
        headers: &pairs,
        body,
    };
    let expected = Expected {
        region: policy.region,
        service: "dynamodb",
    };
    verify(&received, authorization, &expected, |key| credentials.get(key).cloned()).map_err(|error| match error {
        VerifyError::Incomplete(message) => DynamoError::new(ErrorKind::IncompleteSignature, message),
        VerifyError::Invalid(message) => DynamoError::new(ErrorKind::InvalidSignature, message),
        VerifyError::UnknownAccessKey => DynamoError::new(
            ErrorKind::UnrecognizedClient,
            "The security token included in the request is invalid.",
        ),
        VerifyError::Mismatch => DynamoError::new(
            ErrorKind::InvalidSignature,
            "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.",
        ),
    })
}

pub fn check(headers: &HeaderMap, check_request_time: bool) -> Result<(), DynamoError> {
    let Some(authorization) = headers.get("authorization") else {
        return Err(DynamoError::new(
            ErrorKind::MissingAuthenticationToken,
            "Request is missing Authentication Token",
        ));
    };
    let authorization = authorization.to_str().unwrap_or("");
    let Some(parameters) = authorization.strip_prefix("AWS4-HMAC-SHA256") else {
        return Err(DynamoError::new(
            ErrorKind::IncompleteSignature,
            format!("Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. Authorization={authorization}"),
        ));
    };
    let mut missing = Vec::new();
    for part in ["Credential", "SignedHeaders", "Signature"] {
        if !parameters.contains(&format!("{part}=")) {
            missing.push(format!("Authorization header requires '{part}' parameter."));
        }
    }
    if !missing.is_empty() {
        return Err(DynamoError::new(
            ErrorKind::IncompleteSignature,
            format!("{} Authorization={authorization}", missing.join(" ")),
        ));
    }
    if check_request_time {
        let pairs: Vec<(&str, &str)> = ["x-amz-date", "date"]
            .iter()
            .filter_map(|name| Some((*name, headers.get(*name)?.to_str().ok()?)))
            .collect();
        if let Some((_, date)) = request_date(&pairs) {
            check_date(date)?;
        }
    }
    Ok(())
}

fn check_date(date: &str) -> Result<(), DynamoError> {
    let Some(then) = parse_amz_date(date) else {
        return Err(DynamoError::new(
            ErrorKind::IncompleteSignature,
            format!("Date must be in ISO-8601 'basic format'. Got '{date}'. See http://en.wikipedia.org/wiki/ISO_8601"),
        ));
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    if then < now - MAX_SKEW_SECONDS {
        return Err(DynamoError::new(
            ErrorKind::InvalidSignature,
            format!(
                "Signature expired: {date} is now earlier than {} ({} - 15 min.)",
                format_amz_date(now - MAX_SKEW_SECONDS),
                format_amz_date(now)
            ),
        ));
    }
    if then > now + MAX_SKEW_SECONDS {
        return Err(DynamoError::new(
            ErrorKind::InvalidSignature,
            format!(
                "Signature not yet current: {date} is still later than {} ({} + 15 min.)",
                format_amz_date(now + MAX_SKEW_SECONDS),
                format_amz_date(now)
            ),
        ));
    }
    Ok(())
}

/// Parses `YYYYMMDDTHHMMSSZ` into seconds since the epoch.
fn parse_amz_date(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    if b.len() != 16 || b[8] != b'T' || b[15] != b'Z' {
        return None;
    }
    let num = |range: std::ops::Range<usize>| -> Option<i64> { text.get(range)?.parse().ok() };
    let (year, month, day) = (num(0..4)?, num(4..6)?, num(6..8)?);
    let (hour, minute, second) = (num(9..11)?, num(11..13)?, num(13..15)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    Some(
        days_from_civil(year, month as u32, day as u32) * 86_400
            + hour * 3600
            + minute * 60
            + second,
    )
}

fn format_amz_date(seconds: i64) -> String {
    let (days, rem) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// The region of the request's SigV4 credential scope
/// (`Credential=<key>/<date>/<region>/<service>/aws4_request`), which is
/// the region the request addresses. None when absent or not a region name.
pub fn credential_region(headers: &HeaderMap) -> Option<&str> {
    let region = credential_scope(headers)?.split('/').nth(2)?;
    let plausible = !region.is_empty()
        && region.len() <= 64
        && region
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    plausible.then_some(region)
}

/// The access key ID in the Authorization header's credential scope: the
/// namespace of a server started with `--namespaces access-key`.
pub fn credential_access_key(headers: &HeaderMap) -> Option<&str> {
    let key = credential_scope(headers)?.split('/').next()?;
    (!key.is_empty()).then_some(key)
}

/// `<key>/<date>/<region>/<service>/aws4_request` of the Authorization header.
fn credential_scope(headers: &HeaderMap) -> Option<&str> {
    let authorization = headers.get("authorization")?.to_str().ok()?;
    let credential = authorization.split("Credential=").nth(1)?;
    credential.split([',', ' ']).next()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_credential_scope_names_the_region() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "authorization",
            "AWS4-HMAC-SHA256 Credential=AKID/20261201/us-east-2/dynamodb/aws4_request, SignedHeaders=host, Signature=0"
                .parse()
                .unwrap(),
        );
        assert_eq!(credential_region(&headers), Some("us-east-2"));
        headers.insert(
            "authorization",
            "AWS4-HMAC-SHA256 Credential=a/2/x%2Fy/4/aws4_request"
                .parse()
                .unwrap(),
        );
        assert_eq!(credential_region(&headers), None);
    }

    #[test]
    fn dates_round_trip() {
        let t = parse_amz_date("20261130T120000Z").unwrap();
        assert_eq!(format_amz_date(t), "20261130T120000Z");
        assert!(parse_amz_date("2026-11-30").is_none());
    }

    #[test]
    fn missing_header_is_reported() {
        let err = check(&HeaderMap::new(), false).unwrap_err();
        assert_eq!(err.kind, ErrorKind::MissingAuthenticationToken);
    }

    #[test]
    fn stale_dates_are_rejected() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "authorization",
            "AWS4-HMAC-SHA256 Credential=a/2/3/4/aws4_request SignedHeaders=host Signature=1"
                .parse()
                .unwrap(),
        );
        headers.insert("x-amz-date", "20170101T010101Z".parse().unwrap());
        assert!(check(&headers, false).is_ok());
        let err = check(&headers, true).unwrap_err();
        assert!(
            err.message.starts_with("Signature expired"),
            "{}",
            err.message
        );
    }

    #[test]
    fn a_stale_date_header_is_checked_when_there_is_no_x_amz_date() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "authorization",
            "AWS4-HMAC-SHA256 Credential=a/2/3/4/aws4_request SignedHeaders=host;date Signature=1"
                .parse()
                .unwrap(),
        );
        headers.insert("date", "20170101T010101Z".parse().unwrap());
        let err = check(&headers, true).unwrap_err();
        assert!(
            err.message
                .starts_with("Signature expired: 20170101T010101Z"),
            "{}",
            err.message
        );
        headers.insert("date", "Sun, 01 Jan 2017 01:01:01 GMT".parse().unwrap());
        let err = check(&headers, true).unwrap_err();
        assert_eq!(err.kind, ErrorKind::IncompleteSignature);
        assert!(
            err.message
                .starts_with("Date must be in ISO-8601 'basic format'."),
            "{}",
            err.message
        );
    }
}
