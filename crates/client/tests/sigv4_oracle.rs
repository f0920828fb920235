//! The hand-written SigV4 signer checked against `aws-sigv4`, the signer of
//! the official AWS SDKs, over a spread of DynamoDB-shaped requests: both must
//! produce the same Authorization header byte for byte.

use aws_credential_types::Credentials as SdkCredentials;
use aws_sigv4::http_request::{sign as sdk_sign, SignableBody, SignableRequest, SigningSettings};
use aws_sigv4::sign::v4::SigningParams;
use aws_smithy_runtime_api::client::identity::Identity;
use ferrodyn_client::sigv4::{sign, Credentials, Request};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Signs with the SDK's signer and returns its headers, lowercased names.
fn sdk_headers(
    headers: &[(&str, &str)],
    body: &[u8],
    credentials: &Credentials,
    region: &str,
    time: SystemTime,
) -> Vec<(String, String)> {
    let identity: Identity = SdkCredentials::new(
        &credentials.access_key_id,
        &credentials.secret_access_key,
        credentials.session_token.clone(),
        None,
        "test",
    )
    .into();
    let params = SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name("dynamodb")
        .time(time)
        .settings(SigningSettings::default())
        .build()
        .unwrap()
        .into();
    let host = headers.iter().find(|(n, _)| *n == "host").unwrap().1;
    let uri = format!("https://{host}/");
    let request = SignableRequest::new(
        "POST",
        &uri,
        headers.iter().copied(),
        SignableBody::Bytes(body),
    )
    .unwrap();
    let (instructions, _) = sdk_sign(request, &params).unwrap().into_parts();
    instructions
        .headers()
        .map(|(n, v)| (n.to_ascii_lowercase(), v.to_string()))
        .collect()
}

fn ours(
    headers: &[(&str, &str)],
    body: &[u8],
    credentials: &Credentials,
    region: &str,
    time: SystemTime,
) -> Vec<(String, String)> {
    sign(
        &Request {
            method: "POST",
            path: "/",
            query: &[],
            headers,
            body,
        },
        credentials,
        region,
        "dynamodb",
        time,
    )
}

fn header<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

#[test]
fn signatures_match_the_aws_sdk_signer() {
    let long_term = Credentials {
        access_key_id: "AKIDEXAMPLE".into(),
        secret_access_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
        session_token: None,
    };
    let temporary = Credentials {
        access_key_id: "ASIAEXAMPLE".into(),
        secret_access_key: "secret/with+chars=".into(),
        session_token: Some("FwoGZXIvYXdzEJr//////////token==".into()),
    };
    let bodies: [&[u8]; 3] = [
        b"{}",
        br#"{"TableName":"users","Key":{"pk":{"S":"u1"}}}"#,
        "{\"TableName\":\"t\",\"Item\":{\"s\":{\"S\":\"é ✓ \\n\"}}}".as_bytes(),
    ];
    let times = [
        UNIX_EPOCH + Duration::from_secs(1_440_938_160),
        UNIX_EPOCH + Duration::from_secs(1_767_225_599), // 2025-12-31T23:59:59Z
        UNIX_EPOCH + Duration::from_secs(951_782_400),   // 2000-02-29
    ];
    let mut checked = 0;
    for credentials in [&long_term, &temporary] {
        for (i, body) in bodies.iter().enumerate() {
            for (region, host) in [
                ("us-east-1", "dynamodb.us-east-1.amazonaws.com"),
                ("eu-west-1", "127.0.0.1:8000"),
            ] {
                let target = format!(
                    "DynamoDB_20120810.{}",
                    ["ListTables", "GetItem", "PutItem"][i]
                );
                let headers = [
                    ("content-type", "application/x-amz-json-1.0"),
                    ("host", host),
                    ("x-amz-target", target.as_str()),
                ];
                let time = times[i];
                let expected = sdk_headers(&headers, body, credentials, region, time);
                let actual = ours(&headers, body, credentials, region, time);
                for name in ["authorization", "x-amz-date", "x-amz-security-token"] {
                    assert_eq!(
                        header(&actual, name),
                        header(&expected, name),
                        "{name} differs for body {i} in {region}"
                    );
                }
                assert!(header(&actual, "authorization").is_some());
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 12);
}
