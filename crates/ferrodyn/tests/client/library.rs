//! The library against a real server: calls and error shapes, batch writes
//! and reads, and pagination.

use super::Server;
use ferrodyn_client::backoff::RetryPolicy;
use ferrodyn_client::batch::{BatchGetter, BatchWriter};
use ferrodyn_client::config::Environment;
use ferrodyn_client::paginate;
use ferrodyn_client::{Client, ClientError, ConnectionOptions};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::sync::Mutex;

fn item(pk: &str, sk: u64) -> Value {
    json!({ "pk": {"S": pk}, "sk": {"N": sk.to_string()}, "data": {"S": "x".repeat(100)} })
}

#[test]
fn a_call_returns_the_response_json() {
    let server = Server::start(&[]);
    server.create_table("tab", false);
    let client = server.client();
    assert_eq!(client.credentials_source(), "dummy (local endpoint)");
    let tables = client.call("ListTables", &json!({})).unwrap();
    assert_eq!(tables["TableNames"], json!(["tab"]));
    client
        .call(
            "PutItem",
            &json!({"TableName": "tab", "Item": {"pk": {"S": "a"}, "n": {"N": "1.50"}}}),
        )
        .unwrap();
    let got = client
        .call(
            "GetItem",
            &json!({"TableName": "tab", "Key": {"pk": {"S": "a"}}}),
        )
        .unwrap();
    assert_eq!(got["Item"]["n"], json!({"N": "1.5"}));
}

#[test]
fn api_errors_carry_code_status_and_the_full_body() {
    let server = Server::start(&[]);
    server.create_table("tab", false);
    let client = server.client();
    match client.call("DescribeTable", &json!({"TableName": "missing"})) {
        Err(ClientError::Api {
            code,
            status,
            message,
            ..
        }) => {
            assert_eq!(code, "ResourceNotFoundException");
            assert_eq!(status, 400);
            assert!(
                message.contains("missing") || message.contains("not found"),
                "{message}"
            );
        }
        other => panic!("{other:?}"),
    }
    client
        .call(
            "PutItem",
            &json!({"TableName": "tab", "Item": {"pk": {"S": "a"}, "v": {"N": "1"}}}),
        )
        .unwrap();
    let err = client
        .call(
            "PutItem",
            &json!({
                "TableName": "tab",
                "Item": {"pk": {"S": "a"}},
                "ConditionExpression": "attribute_not_exists(pk)",
                "ReturnValuesOnConditionCheckFailure": "ALL_OLD"
            }),
        )
        .unwrap_err();
    let ClientError::Api { code, body, .. } = &err else {
        panic!("{err:?}")
    };
    assert_eq!(code, "ConditionalCheckFailedException");
    // The body is kept whole: here DynamoDB returns the current item in it.
    assert_eq!(body["Item"]["v"], json!({"N": "1"}));
    assert!(!err.is_retryable());
}

#[test]
fn an_unreachable_endpoint_is_a_transport_error() {
    // Port 9 (discard) on loopback: nothing listens there in the test sandbox.
    let client = Client::connect_with_env(
        &ConnectionOptions {
            endpoint_url: Some("http://127.0.0.1:9".into()),
            ..Default::default()
        },
        &Environment::default(),
    )
    .unwrap();
    let err = client.call("ListTables", &json!({})).unwrap_err();
    assert!(matches!(err, ClientError::Transport(_)), "{err:?}");
    assert!(err.is_retryable());
}

#[test]
fn batch_writer_writes_in_chunks_of_25_and_reports() {
    let server = Server::start(&[]);
    server.create_table("tab", true);
    let client = server.client();
    let mut writer = BatchWriter::new(&client, "tab");
    for i in 0..1010 {
        writer.put(item("p", i)).unwrap();
    }
    assert_eq!(writer.pending(), 10, "full batches are sent as they fill");
    writer
        .delete(json!({"pk": {"S": "p"}, "sk": {"N": "0"}}))
        .unwrap();
    let report = writer.finish().unwrap();
    assert_eq!(report.requested, 1011);
    assert_eq!(report.written, 1011);
    assert_eq!(report.calls, 41); // 1011 / 25, rounded up
    assert_eq!(report.retries, 0);
    assert!(report.not_written.is_empty());
    assert_eq!(server.all_items("tab").len(), 1009);
}

#[test]
fn a_bad_item_spoils_only_itself_not_its_batch() {
    let server = Server::start(&[]);
    server.create_table("tab", true);
    let client = server.client();
    let mut writer = BatchWriter::new(&client, "tab");
    for i in 0..10 {
        writer.put(item("p", i)).unwrap();
    }
    // No sort key: DynamoDB rejects the whole BatchWriteItem for this one.
    writer.put(json!({"pk": {"S": "p"}})).unwrap();
    let report = writer.finish().unwrap();
    assert_eq!(report.written, 10);
    assert_eq!(report.not_written.len(), 1);
    assert_eq!(
        report.not_written[0].request["PutRequest"]["Item"],
        json!({"pk": {"S": "p"}})
    );
    assert!(
        report.not_written[0].reason.contains("ValidationException"),
        "{}",
        report.not_written[0].reason
    );
    assert_eq!(server.all_items("tab").len(), 10);
}

#[test]
fn batch_getter_reads_many_keys_once_each() {
    let server = Server::start(&[]);
    server.create_table("tab", true);
    let client = server.client();
    let mut writer = BatchWriter::new(&client, "tab");
    for i in 0..250 {
        writer.put(item("p", i)).unwrap();
    }
    writer.finish().unwrap();
    let mut keys: Vec<Value> = (0..260)
        .map(|i| json!({"pk": {"S": "p"}, "sk": {"N": i.to_string()}}))
        .collect();
    keys.push(keys[0].clone()); // a duplicate would make DynamoDB reject the call
    let report = BatchGetter::new(&client)
        .projection("sk", Default::default())
        .get("tab", keys)
        .unwrap();
    assert_eq!(report.items.len(), 250, "10 keys have no item");
    assert_eq!(report.calls, 3); // 260 distinct keys, 100 a call
    assert!(report.not_read.is_empty());
    assert!(
        report.items.iter().all(|i| i.get("data").is_none()),
        "projection applied"
    );
}

#[test]
fn pages_follow_last_evaluated_key_to_the_end() {
    let server = Server::start(&[]);
    server.create_table("tab", true);
    let client = server.client();
    let mut writer = BatchWriter::new(&client, "tab");
    for i in 0..95 {
        writer.put(item("q", i)).unwrap();
        writer.put(item(&format!("other{i}"), i)).unwrap();
    }
    writer.finish().unwrap();
    let request = json!({
        "TableName": "tab",
        "KeyConditionExpression": "pk = :p",
        "ExpressionAttributeValues": {":p": {"S": "q"}},
        "Limit": 10
    });
    let pages: Vec<Value> = paginate::query(&client, request.clone())
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(pages.len() >= 10, "95 items in pages of 10");
    let items: Vec<Value> = paginate::query(&client, request)
        .items()
        .collect::<Result<_, _>>()
        .unwrap();
    let sks: Vec<u64> = items
        .iter()
        .map(|i| i["sk"]["N"].as_str().unwrap().parse().unwrap())
        .collect();
    assert_eq!(
        sks,
        (0..95).collect::<Vec<_>>(),
        "every item once, in sort-key order"
    );

    // Stopping early leaves a key to resume from.
    let mut pages = paginate::scan(&client, json!({"TableName": "tab", "Limit": 7}));
    pages.next().unwrap().unwrap();
    let resume = pages.last_evaluated_key().cloned().expect("more to read");
    let rest: Vec<Value> = paginate::scan(
        &client,
        json!({"TableName": "tab", "Limit": 50, "ExclusiveStartKey": resume}),
    )
    .items()
    .collect::<Result<_, _>>()
    .unwrap();
    assert_eq!(rest.len(), 190 - 7);
}

#[test]
fn parallel_scan_segments_cover_the_table_exactly_once() {
    let server = Server::start(&[]);
    server.create_table("tab", true);
    let client = server.client();
    let mut writer = BatchWriter::new(&client, "tab");
    for i in 0..600 {
        writer.put(item(&format!("p{}", i % 97), i)).unwrap();
    }
    writer.finish().unwrap();
    let seen = Mutex::new(Vec::new());
    let segments_used = Mutex::new(HashSet::new());
    let summary = paginate::parallel_scan(
        &client,
        json!({"TableName": "tab", "Limit": 40}),
        4,
        |segment, page| {
            segments_used.lock().unwrap().insert(segment);
            for item in page["Items"].as_array().unwrap() {
                seen.lock()
                    .unwrap()
                    .push(item["sk"]["N"].as_str().unwrap().to_string());
            }
            Ok(())
        },
    )
    .unwrap();
    let mut seen = seen.into_inner().unwrap();
    assert_eq!(summary.items, 600);
    assert_eq!(seen.len(), 600);
    seen.sort();
    seen.dedup();
    assert_eq!(seen.len(), 600, "no item in two segments");
    assert!(segments_used.into_inner().unwrap().len() > 1);
}

#[test]
fn a_callback_error_stops_a_parallel_scan() {
    let server = Server::start(&[]);
    server.create_table("tab", false);
    let client = server.client();
    let err = paginate::parallel_scan(&client, json!({"TableName": "tab"}), 3, |_, _| {
        Err(ClientError::Transport("disk full".into()))
    })
    .unwrap_err();
    assert_eq!(err.to_string(), "cannot reach the endpoint: disk full");
}

#[test]
fn retry_policy_is_configurable_on_the_writer() {
    // Only the schedule's shape matters here; the retry path itself is
    // covered with fault injection in batch_retry.rs.
    let server = Server::start(&[]);
    server.create_table("tab", false);
    let client = server.client();
    let policy = RetryPolicy {
        max_attempts: 1,
        ..RetryPolicy::default()
    };
    let mut writer = BatchWriter::new(&client, "tab")
        .with_policy(policy)
        .with_seed(3);
    writer.put(json!({"pk": {"S": "a"}})).unwrap();
    let report = writer.finish().unwrap();
    assert_eq!(report.max_attempts_used, 1);
    assert_eq!(report.written, 1);
}
