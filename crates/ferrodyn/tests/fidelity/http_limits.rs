//! HTTP-level limits: a request line or headers over 16 KB get 400 Bad
//! Request before DynamoDB's JSON protocol is reached.

use crate::util::raw::{self, AUTHORIZATION, CONTENT_TYPE, TARGET_PREFIX};

#[tokio::test]
async fn headers_over_16_kb_get_bad_request() {
    let target = format!("{TARGET_PREFIX}ListTables");
    let long = "x".repeat(8192);
    let mut headers = vec![
        ("content-type", CONTENT_TYPE),
        ("x-amz-target", target.as_str()),
        ("authorization", AUTHORIZATION),
        ("header1", long.as_str()),
    ];
    let ok = raw::send("POST", "/", &headers, b"{}".to_vec())
        .await
        .unwrap();
    assert_eq!(ok.status, 200);
    headers.push(("header2", long.as_str()));
    let response = raw::send("POST", "/", &headers, b"{}".to_vec())
        .await
        .unwrap();
    assert_eq!(response.status, 400);
}

#[tokio::test]
async fn a_request_line_over_16_kb_gets_bad_request() {
    let target = format!("{TARGET_PREFIX}ListTables");
    let headers = [
        ("content-type", CONTENT_TYPE),
        ("x-amz-target", target.as_str()),
        ("authorization", AUTHORIZATION),
    ];
    let short = raw::send("POST", "/garbage", &headers, b"{}".to_vec())
        .await
        .unwrap();
    assert_eq!(short.status, 404);
    let path = format!("/{}", "x".repeat(17_000));
    let long = raw::send("POST", &path, &headers, b"{}".to_vec())
        .await
        .unwrap();
    assert_eq!(long.status, 400);
}
