//! The wire protocol as DynamoDB speaks it, checked with raw HTTP: response
//! headers (request id, CRC32 of the body, content type), the error body's
//! shape, and what happens to malformed, unknown, unauthenticated, oversized
//! and pathologically nested requests.
//!
//! Where DynamoDB Local answers differently from AWS (it returns 500
//! InternalFailure for malformed JSON, has no health check and words the
//! missing-token error its own way), the tests follow AWS and say so.

use crate::util;
use crate::util::raw::{self, AUTHORIZATION, CONTENT_TYPE, TARGET_PREFIX};
use serde_json::json;

/// A request that always succeeds, so the server is known to be alive.
async fn assert_alive() {
    let response = raw::call_json("ListTables", json!({})).await;
    assert_eq!(response.status, 200, "server still answers ListTables");
}

#[tokio::test]
async fn success_response_has_request_id_crc32_and_json_content_type() {
    let response = raw::call_json("ListTables", json!({"Limit": 1})).await;
    assert_eq!(response.status, 200);
    assert_eq!(response.header("content-type"), Some(CONTENT_TYPE));
    let request_id = response.header("x-amzn-requestid").unwrap_or_default();
    assert!(!request_id.is_empty(), "x-amzn-RequestId is present");
    let crc: u32 = response
        .header("x-amz-crc32")
        .expect("x-amz-crc32 is present")
        .parse()
        .expect("x-amz-crc32 is a decimal u32");
    assert_eq!(crc, crc32fast::hash(&response.body));
}

#[tokio::test]
async fn crc32_covers_the_exact_bytes_of_a_non_ascii_item() {
    let client = util::client();
    let table = util::table_s(&client).await;
    client
        .put_item()
        .table_name(&table)
        .set_item(Some(util::item(&[
            ("p", util::s("ключ")),
            ("v", util::s("日本語 ✓ \"quoted\" \\ slash")),
        ])))
        .send()
        .await
        .unwrap();
    let response = raw::call_json(
        "GetItem",
        json!({"TableName": table, "Key": {"p": {"S": "ключ"}}, "ConsistentRead": true}),
    )
    .await;
    assert_eq!(response.status, 200);
    let crc: u32 = response.header("x-amz-crc32").unwrap().parse().unwrap();
    assert_eq!(crc, crc32fast::hash(&response.body));
    assert_eq!(
        response.json()["Item"]["v"]["S"],
        "日本語 ✓ \"quoted\" \\ slash"
    );
}

#[tokio::test]
async fn every_response_gets_its_own_request_id() {
    let first = raw::call_json("ListTables", json!({})).await;
    let second = raw::call_json("ListTables", json!({})).await;
    assert_ne!(
        first.header("x-amzn-requestid"),
        second.header("x-amzn-requestid")
    );
}

#[tokio::test]
async fn error_body_is_type_and_message() {
    // DynamoDB Local: "Cannot do operations on a non-existent table" with a
    // capitalised "Message" key; AWS sends the text below under "message".
    let response =
        raw::call_json("DescribeTable", json!({"TableName": "no-such-table-here"})).await;
    assert_eq!(response.status, 400);
    assert_eq!(response.header("content-type"), Some(CONTENT_TYPE));
    assert!(response.header("x-amzn-requestid").is_some());
    assert_eq!(
        response.json(),
        json!({
            "__type": "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException",
            "message": "Requested resource not found: Table: no-such-table-here not found"
        })
    );
}

#[tokio::test]
async fn malformed_json_is_a_serialization_exception() {
    // DynamoDB Local answers 500 InternalFailure; AWS answers 400.
    let response = raw::call("ListTables", "{not json").await;
    assert_eq!(response.status, 400);
    assert_eq!(response.error_name(), "SerializationException");
}

#[tokio::test]
async fn wrongly_typed_field_is_a_serialization_exception() {
    // DynamoDB Local answers 500 InternalFailure; AWS answers 400.
    let response = raw::call_json("ListTables", json!({"Limit": "ten"})).await;
    assert_eq!(response.status, 400);
    assert_eq!(response.error_name(), "SerializationException");
}

#[tokio::test]
async fn json_body_that_is_not_an_object_is_rejected() {
    // DynamoDB Local answers 500 InternalFailure; AWS answers 400 with a
    // SerializationException or ValidationException.
    for body in ["[]", "null", "42"] {
        let response = raw::call("ListTables", body).await;
        assert_eq!(response.status, 400, "body {body}");
        let name = response.error_name();
        assert!(
            name == "SerializationException" || name == "ValidationException",
            "body {body}: {name}"
        );
    }
}

#[tokio::test]
async fn unknown_operation_is_rejected() {
    let response = raw::call("Frobnicate", "{}").await;
    assert_eq!(response.status, 400);
    assert_eq!(response.error_name(), "UnknownOperationException");
}

#[tokio::test]
async fn missing_authorization_header_is_rejected() {
    // AWS: 400 MissingAuthenticationTokenException "Request is missing
    // Authentication Token". DynamoDB Local names it MissingAuthenticationToken
    // and says "Request must contain either a valid (registered) AWS access
    // key ID or X.509 certificate."
    let target = format!("{TARGET_PREFIX}ListTables");
    let response = raw::send(
        "POST",
        "/",
        &[("content-type", CONTENT_TYPE), ("x-amz-target", &target)],
        b"{}".to_vec(),
    )
    .await
    .expect("the server answers");
    assert_eq!(response.status, 400);
    assert_eq!(response.error_name(), "MissingAuthenticationTokenException");
    assert_eq!(
        response.json()["message"],
        "Request is missing Authentication Token"
    );
}

#[tokio::test]
async fn any_well_formed_signature_is_accepted() {
    // A local endpoint does not verify signatures: the SDK's real signature
    // and this all-zero one are equally good.
    let target = format!("{TARGET_PREFIX}ListTables");
    let response = raw::send(
        "POST",
        "/",
        &[
            ("content-type", CONTENT_TYPE),
            ("x-amz-target", &target),
            ("x-amz-date", "20200101T000000Z"),
            ("authorization", AUTHORIZATION),
        ],
        b"{}".to_vec(),
    )
    .await
    .unwrap();
    assert_eq!(response.status, 200);
    assert!(response.json()["TableNames"].is_array());
}

#[tokio::test]
async fn get_root_is_a_health_check() {
    // AWS answers `healthy: dynamodb.<region>.amazonaws.com`; DynamoDB Local
    // has no health check (it answers 400 MissingAuthenticationToken).
    let response = raw::send("GET", "/", &[], Vec::new()).await.unwrap();
    assert_eq!(response.status, 200);
    let body = String::from_utf8_lossy(&response.body);
    assert!(body.starts_with("healthy: "), "body: {body}");
}

#[tokio::test]
async fn request_body_over_16_mib_is_rejected_with_413() {
    let client = util::client();
    let table = util::table_s(&client).await;
    // Valid JSON padded with whitespace past DynamoDB's 16 MiB request limit:
    // without a limit this would be a successful PutItem.
    let mut body = format!("{{\"TableName\": \"{table}\", ").into_bytes();
    body.resize(body.len() + 17 * 1024 * 1024, b' ');
    body.extend_from_slice(br#""Item": {"p": {"S": "big"}}}"#);
    let target = format!("{TARGET_PREFIX}PutItem");
    let result = raw::send(
        "POST",
        "/",
        &[
            ("content-type", CONTENT_TYPE),
            ("x-amz-target", &target),
            ("authorization", AUTHORIZATION),
        ],
        body,
    )
    .await;
    // A server may also close the connection without reading the rest; what
    // it must not do is accept the request.
    if let Ok(response) = result {
        assert_eq!(response.status, 413);
    }
    let got = client
        .get_item()
        .table_name(&table)
        .key("p", util::s("big"))
        .consistent_read(true)
        .send()
        .await
        .unwrap();
    assert!(got.item.is_none(), "the oversized PutItem was not applied");
}

#[tokio::test]
async fn deeply_nested_json_is_answered_with_an_error_not_a_crash() {
    let client = util::client();
    let table = util::table_s(&client).await;
    let depth = 200_000;
    let mut body = format!(r#"{{"TableName": "{table}", "Item": {{"p": {{"S": "x"}}, "a": "#);
    body.push_str(&r#"{"L": ["#.repeat(depth));
    body.push_str(&"]}".repeat(depth));
    body.push_str("}}");
    let response = raw::call("PutItem", body).await;
    // DynamoDB Local answers 500 InternalFailure.
    assert_eq!(response.status, 400);
    let name = response.error_name();
    assert!(
        name == "SerializationException" || name == "ValidationException",
        "{name}"
    );
    assert_alive().await;
}

#[tokio::test]
async fn item_nested_beyond_32_levels_is_rejected() {
    let client = util::client();
    let table = util::table_s(&client).await;
    // 31 nested maps inside the item are accepted, 32 are not (the item itself
    // is the first level).
    let nested = |levels: usize| {
        let mut v = json!({"S": "leaf"});
        for _ in 0..levels {
            v = json!({"M": {"a": v}});
        }
        v
    };
    let ok = raw::call_json(
        "PutItem",
        json!({"TableName": table, "Item": {"p": {"S": "ok"}, "a": nested(31)}}),
    )
    .await;
    assert_eq!(ok.status, 200, "{}", String::from_utf8_lossy(&ok.body));
    let too_deep = raw::call_json(
        "PutItem",
        json!({"TableName": table, "Item": {"p": {"S": "deep"}, "a": nested(32)}}),
    )
    .await;
    assert_eq!(too_deep.status, 400);
    assert_eq!(too_deep.error_name(), "ValidationException");
    let body = too_deep.json();
    let message = body["message"]
        .as_str()
        .or(body["Message"].as_str())
        .unwrap_or_default();
    assert_eq!(
        message,
        "Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond supported limit"
    );
}
