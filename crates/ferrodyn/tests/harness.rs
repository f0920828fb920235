//! The test-harness features, through the AWS SDK and the `/ferrodyn/`
//! endpoints: namespaces per access key, snapshots restored exactly
//! (indexes and streams included), reset, and the manual clock driving Time
//! to Live, stream retention and ClientRequestTokens.

use std::collections::HashMap;
use std::time::Duration;

use aws_sdk_dynamodb::types::{
    AttributeValue, GlobalSecondaryIndex, KeyType, Projection, ProjectionType, ScalarAttributeType,
    StreamSpecification, StreamViewType, TimeToLiveSpecification,
};
use aws_sdk_dynamodb::Client;
use serde_json::{json, Value};

use crate::util::streams::stream_records;
use crate::util::{self, attr_def, key, n, raw, s, ServerProcess};

/// A harness request to `server` as access key `key`; the status and JSON.
async fn harness(
    server: &ServerProcess,
    key: &str,
    method: &str,
    path: &str,
    body: Value,
) -> (u16, Value) {
    let authorization = format!(
        "AWS4-HMAC-SHA256 Credential={key}/20261204/us-east-1/dynamodb/aws4_request, \
         SignedHeaders=host, Signature=0"
    );
    let headers = [("authorization", authorization.as_str())];
    let body = if body.is_null() {
        Vec::new()
    } else {
        body.to_string().into_bytes()
    };
    let response = raw::send_to(server.endpoint(), method, path, &headers, body)
        .await
        .expect("the server answers");
    (response.status, response.json())
}

/// Like [`harness`], failing the test unless it answers 200.
async fn harness_ok(
    server: &ServerProcess,
    key: &str,
    method: &str,
    path: &str,
    body: Value,
) -> Value {
    let (status, answer) = harness(server, key, method, path, body).await;
    assert_eq!(status, 200, "{method} {path}: {answer}");
    answer
}

/// POST /ferrodyn/clock with `body`.
async fn move_clock(server: &ServerProcess, body: Value) -> (u16, Value) {
    harness(server, "k", "POST", "/ferrodyn/clock", body).await
}

async fn move_clock_ok(server: &ServerProcess, body: Value) -> Value {
    harness_ok(server, "k", "POST", "/ferrodyn/clock", body).await
}

async fn table_names(client: &Client) -> Vec<String> {
    let listed = client.list_tables().send().await.unwrap();
    listed.table_names().to_vec()
}

async fn put(client: &Client, table: &str, pk: &str, extra: &[(&str, AttributeValue)]) {
    let mut request = client.put_item().table_name(table).item("pk", s(pk));
    for (name, value) in extra {
        request = request.item(*name, value.clone());
    }
    request.send().await.unwrap();
}

/// Table `name`: key `pk`, GSI `by_email` on `email` (KEYS_ONLY), a
/// NEW_AND_OLD_IMAGES stream.
async fn accounts_table(client: &Client, name: &str) {
    let gsi = GlobalSecondaryIndex::builder()
        .index_name("by_email")
        .key_schema(key("email", KeyType::Hash))
        .projection(
            Projection::builder()
                .projection_type(ProjectionType::KeysOnly)
                .build(),
        )
        .build()
        .unwrap();
    let stream = StreamSpecification::builder()
        .stream_enabled(true)
        .stream_view_type(StreamViewType::NewAndOldImages)
        .build()
        .unwrap();
    client
        .create_table()
        .table_name(name)
        .key_schema(key("pk", KeyType::Hash))
        .attribute_definitions(attr_def("pk", ScalarAttributeType::S))
        .attribute_definitions(attr_def("email", ScalarAttributeType::S))
        .global_secondary_indexes(gsi)
        .stream_specification(stream)
        .billing_mode(aws_sdk_dynamodb::types::BillingMode::PayPerRequest)
        .send()
        .await
        .unwrap();
}

#[tokio::test]
async fn each_access_key_has_its_own_tables_and_reset_empties_only_its_own() {
    let (server, _) = util::own_server(&["--namespaces", "access-key"]);
    let alice = util::client_with_key(server.endpoint(), "us-east-1", "alice");
    let bob = util::client_with_key(server.endpoint(), "us-east-1", "bob");
    let alice_west = util::client_with_key(server.endpoint(), "us-west-2", "alice");
    for client in [&alice, &bob, &alice_west] {
        util::create_table(client, "t", &[("pk", ScalarAttributeType::S)]).await;
        accounts_table(client, "accounts").await;
    }
    put(&alice, "accounts", "A", &[("email", s("a@example.com"))]).await;
    put(&bob, "accounts", "B", &[("email", s("b@example.com"))]).await;

    let scan = bob.scan().table_name("accounts").send().await.unwrap();
    assert_eq!(scan.items().len(), 1);
    assert_eq!(scan.items()[0]["pk"], s("B"), "bob sees only his item");
    assert_eq!(table_names(&alice).await.len(), 2);
    let carol = util::client_with_key(server.endpoint(), "us-east-1", "carol");
    assert!(
        table_names(&carol).await.is_empty(),
        "a new key starts empty"
    );

    let reset = harness_ok(&server, "alice", "DELETE", "/ferrodyn/data", Value::Null).await;
    assert_eq!(
        reset["tablesDeleted"], 4,
        "both of alice's regions: {reset}"
    );
    assert!(table_names(&alice).await.is_empty());
    assert!(table_names(&alice_west).await.is_empty());
    assert_eq!(table_names(&bob).await.len(), 2, "bob keeps his tables");
    // The name is free again at once.
    accounts_table(&alice, "accounts").await;
}

#[tokio::test]
async fn without_namespaces_every_key_shares_one_account() {
    let (server, _) = util::own_server(&[]);
    let alice = util::client_with_key(server.endpoint(), "us-east-1", "alice");
    let bob = util::client_with_key(server.endpoint(), "us-east-1", "bob");
    util::create_table(&alice, "t", &[("pk", ScalarAttributeType::S)]).await;
    assert_eq!(table_names(&bob).await.len(), 1);
}

/// Every item of `table`'s scan and of its `by_email` index, sorted by key.
async fn contents(
    client: &Client,
    table: &str,
) -> (Vec<HashMap<String, AttributeValue>>, Vec<String>) {
    let mut items = util::scan_all(client, table, None).await;
    items.sort_by_key(|item| util::get_s(item, "pk").to_string());
    let index = client
        .scan()
        .table_name(table)
        .index_name("by_email")
        .send()
        .await
        .unwrap();
    let mut emails: Vec<String> = index
        .items()
        .iter()
        .map(|i| util::get_s(i, "email").into())
        .collect();
    emails.sort();
    (items, emails)
}

#[tokio::test]
async fn a_restored_snapshot_is_the_saved_tables_exactly() {
    let (server, client) = util::own_server(&[]);
    accounts_table(&client, "accounts").await;
    for i in 0..50 {
        let email = format!("u{i}@example.com");
        put(
            &client,
            "accounts",
            &format!("USER#{i}"),
            &[("email", s(&email)), ("n", n(&i.to_string()))],
        )
        .await;
    }
    let described = client
        .describe_table()
        .table_name("accounts")
        .send()
        .await
        .unwrap();
    let arn = described
        .table()
        .unwrap()
        .latest_stream_arn()
        .unwrap()
        .to_string();
    let saved_contents = contents(&client, "accounts").await;
    let saved_records = stream_records(server.endpoint(), &arn).await;
    assert_eq!(saved_records.len(), 50);

    let saved = harness_ok(
        &server,
        "k",
        "POST",
        "/ferrodyn/snapshots/fixtures",
        Value::Null,
    )
    .await;
    assert_eq!(saved["tables"], 1, "{saved}");

    // Change everything a test could change.
    put(
        &client,
        "accounts",
        "USER#0",
        &[("email", s("changed@example.com"))],
    )
    .await;
    client
        .delete_item()
        .table_name("accounts")
        .key("pk", s("USER#1"))
        .send()
        .await
        .unwrap();
    put(
        &client,
        "accounts",
        "USER#new",
        &[("email", s("new@example.com"))],
    )
    .await;
    util::create_table(&client, "scratch", &[("pk", ScalarAttributeType::S)]).await;

    let restored = harness_ok(
        &server,
        "k",
        "POST",
        "/ferrodyn/snapshots/fixtures/restore",
        Value::Null,
    )
    .await;
    assert_eq!(restored, saved);
    assert_eq!(table_names(&client).await, ["accounts"]);
    assert_eq!(contents(&client, "accounts").await, saved_contents);
    let after = client
        .describe_table()
        .table_name("accounts")
        .send()
        .await
        .unwrap();
    let after = after.table().unwrap();
    assert_eq!(after.latest_stream_arn(), Some(arn.as_str()));
    assert_eq!(after.item_count(), Some(50));
    assert_eq!(after.global_secondary_indexes()[0].item_count(), Some(50));
    assert_eq!(stream_records(server.endpoint(), &arn).await, saved_records);

    // Writes go on after a restore, into the restored table and its index.
    put(
        &client,
        "accounts",
        "USER#after",
        &[("email", s("after@example.com"))],
    )
    .await;
    let (items, emails) = contents(&client, "accounts").await;
    assert_eq!((items.len(), emails.len()), (51, 51));
    // Restoring twice gives the same again.
    harness_ok(
        &server,
        "k",
        "POST",
        "/ferrodyn/snapshots/fixtures/restore",
        Value::Null,
    )
    .await;
    assert_eq!(contents(&client, "accounts").await, saved_contents);

    let listed = harness_ok(&server, "k", "GET", "/ferrodyn/snapshots", Value::Null).await;
    assert_eq!(listed["snapshots"], json!(["fixtures"]));
    let (status, missing) = harness(
        &server,
        "k",
        "POST",
        "/ferrodyn/snapshots/nope/restore",
        Value::Null,
    )
    .await;
    assert_eq!(status, 400);
    assert_eq!(
        missing["message"],
        "No snapshot named nope in this namespace"
    );
}

#[tokio::test]
async fn snapshots_belong_to_their_namespace() {
    let (server, _) = util::own_server(&["--namespaces", "access-key"]);
    let alice = util::client_with_key(server.endpoint(), "us-east-1", "alice");
    let bob = util::client_with_key(server.endpoint(), "us-east-1", "bob");
    accounts_table(&alice, "accounts").await;
    accounts_table(&bob, "accounts").await;
    put(&bob, "accounts", "B", &[("email", s("b@example.com"))]).await;
    harness_ok(
        &server,
        "alice",
        "POST",
        "/ferrodyn/snapshots/empty",
        Value::Null,
    )
    .await;
    put(&alice, "accounts", "A", &[("email", s("a@example.com"))]).await;
    let (status, _) = harness(
        &server,
        "bob",
        "POST",
        "/ferrodyn/snapshots/empty/restore",
        Value::Null,
    )
    .await;
    assert_eq!(status, 400, "bob has no snapshot of that name");
    harness_ok(
        &server,
        "alice",
        "POST",
        "/ferrodyn/snapshots/empty/restore",
        Value::Null,
    )
    .await;
    assert_eq!(util::scan_all(&alice, "accounts", None).await.len(), 0);
    assert_eq!(
        util::scan_all(&bob, "accounts", None).await.len(),
        1,
        "bob's item stays"
    );
}

#[tokio::test]
async fn the_manual_clock_drives_ttl_stream_retention_and_tokens() {
    let (server, client) = util::own_server(&["--clock", "manual", "--ttl-interval", "0"]);
    let clock = harness_ok(&server, "k", "GET", "/ferrodyn/clock", Value::Null).await;
    assert_eq!(clock["mode"], "manual");
    let start_ms = clock["epochMillis"].as_u64().unwrap();
    tokio::time::sleep(Duration::from_millis(30)).await;
    let still = harness_ok(&server, "k", "GET", "/ferrodyn/clock", Value::Null).await;
    assert_eq!(
        still["epochMillis"], start_ms,
        "a manual clock does not move by itself"
    );

    accounts_table(&client, "sessions").await;
    let ttl = TimeToLiveSpecification::builder()
        .enabled(true)
        .attribute_name("exp")
        .build()
        .unwrap();
    client
        .update_time_to_live()
        .table_name("sessions")
        .time_to_live_specification(ttl)
        .send()
        .await
        .unwrap();
    let in_an_hour = (start_ms / 1000 + 3600).to_string();
    put(
        &client,
        "sessions",
        "S1",
        &[("email", s("s@example.com")), ("exp", n(&in_an_hour))],
    )
    .await;
    let described = client
        .describe_table()
        .table_name("sessions")
        .send()
        .await
        .unwrap();
    let table = described.table().unwrap();
    // Created on the clock's time (to the millisecond, through f64 seconds).
    let created = table.creation_date_time().unwrap().to_millis().unwrap();
    assert!(
        created.abs_diff(start_ms as i64) <= 1,
        "{created} vs {start_ms}"
    );
    let arn = table.latest_stream_arn().unwrap().to_string();

    // 59 minutes: not yet. 61: deleted by the advance itself.
    let moved = move_clock_ok(&server, json!({ "advance": "59m" })).await;
    assert_eq!(moved["expiredItems"], 0);
    let moved = move_clock_ok(&server, json!({ "advance": "2m" })).await;
    assert_eq!(moved["expiredItems"], 1);
    assert_eq!(
        moved["epochMillis"].as_u64().unwrap(),
        start_ms + 61 * 60 * 1000
    );
    let got = client
        .get_item()
        .table_name("sessions")
        .key("pk", s("S1"))
        .send()
        .await
        .unwrap();
    assert!(got.item().is_none(), "expired and deleted");
    let records = stream_records(server.endpoint(), &arn).await;
    let names: Vec<&str> = records
        .iter()
        .map(|r| r["eventName"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["INSERT", "REMOVE"]);
    assert_eq!(
        records[1]["userIdentity"]["principalId"],
        "dynamodb.amazonaws.com"
    );
    let removed_at = records[1]["dynamodb"]["ApproximateCreationDateTime"]
        .as_f64()
        .unwrap();
    assert_eq!(removed_at as u64, (start_ms + 61 * 60 * 1000) / 1000);

    // Stream records older than 24 hours are trimmed: the INSERT (made at
    // the start) first, then the REMOVE (61 minutes later).
    let records_after = |advance: &'static str| {
        let (server, arn) = (&server, &arn);
        async move {
            let body = json!({ "advance": advance });
            move_clock_ok(server, body).await;
            let records = stream_records(server.endpoint(), arn).await;
            let names: Vec<String> = (records.iter())
                .map(|r| r["eventName"].as_str().unwrap().to_string())
                .collect();
            names
        }
    };
    assert_eq!(records_after("22h").await, ["INSERT", "REMOVE"]);
    assert_eq!(records_after("1h").await, ["REMOVE"]);
    assert!(records_after("1h 1s").await.is_empty(), "past 24 hours");

    // A ClientRequestToken is remembered for ten minutes of the clock.
    let transact = |v: &str| {
        let put = aws_sdk_dynamodb::types::Put::builder()
            .table_name("sessions")
            .item("pk", s("T"))
            .item("v", n(v))
            .build()
            .unwrap();
        let item = aws_sdk_dynamodb::types::TransactWriteItem::builder()
            .put(put)
            .build();
        client
            .transact_write_items()
            .transact_items(item)
            .client_request_token("tok")
            .send()
    };
    transact("1").await.unwrap();
    let mismatch = transact("2").await;
    util::assert_error(
        mismatch,
        "IdempotentParameterMismatchException",
        "Specified idempotent token was used with different request parameters",
    );
    move_clock_ok(&server, json!({ "advance": "10m" })).await;
    transact("2")
        .await
        .expect("the token is forgotten after ten minutes");

    let set = move_clock_ok(&server, json!({ "set": "2040-01-01T00:00:00Z" })).await;
    assert_eq!(set["now"], "2040-01-01T00:00:00.000Z");
    let (status, back) = move_clock(&server, json!({ "set": "2030-01-01T00:00:00Z" })).await;
    assert_eq!(status, 400);
    assert!(
        back["message"].as_str().unwrap().contains("cannot go back"),
        "{back}"
    );
}

#[tokio::test]
async fn the_wall_clock_refuses_to_move_and_bad_requests_say_why() {
    let (server, _) = util::own_server(&[]);
    let (status, answer) = move_clock(&server, json!({ "advance": "1h" })).await;
    assert_eq!(status, 400);
    assert_eq!(
        answer["__type"],
        "com.amazon.coral.validate#ValidationException"
    );
    assert!(
        answer["message"]
            .as_str()
            .unwrap()
            .contains("--clock manual"),
        "{answer}"
    );
    let clock = harness_ok(&server, "k", "GET", "/ferrodyn/clock", Value::Null).await;
    assert_eq!(clock["mode"], "wall");
    let (status, answer) = harness(
        &server,
        "k",
        "POST",
        "/ferrodyn/snapshots/a%20b",
        Value::Null,
    )
    .await;
    assert_eq!(status, 400, "{answer}");
    let (status, _) = harness(
        &server,
        "k",
        "DELETE",
        "/ferrodyn/snapshots/none",
        Value::Null,
    )
    .await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn fault_rules_change_while_the_server_runs() {
    let (server, client) = util::own_server(&[]);
    let table = util::create_table(&client, "faults", &[("pk", ScalarAttributeType::S)]).await;
    let batch = || {
        let put = aws_sdk_dynamodb::types::PutRequest::builder()
            .item("pk", s("a"))
            .build()
            .unwrap();
        let request = aws_sdk_dynamodb::types::WriteRequest::builder()
            .put_request(put)
            .build();
        client
            .batch_write_item()
            .request_items(table.clone(), vec![request])
            .send()
    };
    let rules = json!({ "seed": 7, "rules": ["BatchWriteItem=unprocessed@1.0"] });
    let set = harness_ok(&server, "k", "PUT", "/ferrodyn/faults", rules).await;
    assert_eq!(set["rules"], 1);
    let answer = batch().await.unwrap();
    assert_eq!(answer.unprocessed_items().unwrap()[&table].len(), 1);

    harness_ok(&server, "k", "DELETE", "/ferrodyn/faults", Value::Null).await;
    let answer = batch().await.unwrap();
    assert!(answer.unprocessed_items().is_none_or(|u| u.is_empty()));

    let hold = json!({ "rules": ["TransactWriteItems=hold:100ms@1.0"] });
    let (status, refused) = harness(&server, "k", "PUT", "/ferrodyn/faults", hold).await;
    assert_eq!(status, 400);
    assert!(
        refused["message"].as_str().unwrap().contains("start-up"),
        "{refused}"
    );
    let bad = json!({ "rules": ["BatchWriteItem=unprocessed@2"] });
    let (status, _) = harness(&server, "k", "PUT", "/ferrodyn/faults", bad).await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn with_namespaces_fault_rules_belong_to_the_namespace_that_set_them() {
    let (server, _) = util::own_server(&["--namespaces", "access-key"]);
    let scan_fails = |key: &'static str| {
        let client = util::client_with_key(server.endpoint(), "us-east-1", key);
        async move {
            let table = util::create_table(&client, "f", &[("pk", ScalarAttributeType::S)]).await;
            client.scan().table_name(table).send().await.is_err()
        }
    };
    let rules = json!({ "rules": ["Scan=internal@1.0"] });
    let set = harness_ok(&server, "alice", "PUT", "/ferrodyn/faults", rules).await;
    assert_eq!(set["rules"], 1);
    assert!(scan_fails("alice").await, "alice's rule fires for alice");
    assert!(!scan_fails("bob").await, "and not for bob");
    let bob = harness_ok(&server, "bob", "GET", "/ferrodyn/faults", Value::Null).await;
    assert_eq!(bob["rules"], 0);
    harness_ok(&server, "alice", "DELETE", "/ferrodyn/faults", Value::Null).await;
    assert!(!scan_fails("alice").await);
}
