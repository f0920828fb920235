//! Provisioned throughput and injected faults, on servers of their own:
//! a PROVISIONED table whose burst is spent throttles single writes with
//! ProvisionedThroughputExceededException while batches hand the overflow
//! back in UnprocessedItems; fault rules produce ThrottlingException and
//! InternalServerError on demand, scoped to an operation and a table.

use std::time::Duration;

use crate::util::{self, attr_def, item, key, s};
use aws_sdk_dynamodb::types::{
    BillingMode, KeyType, ProvisionedThroughput, PutRequest, ScalarAttributeType, WriteRequest,
};
use aws_sdk_dynamodb::Client;

const EXCEEDED: &str = "The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.";

/// A PROVISIONED table with 1 WCU and plenty of reads (the tests read back
/// what was written without being throttled themselves).
async fn provisioned_table(client: &Client, name: &str) -> String {
    client
        .create_table()
        .table_name(name)
        .billing_mode(BillingMode::Provisioned)
        .provisioned_throughput(
            ProvisionedThroughput::builder()
                .read_capacity_units(1000)
                .write_capacity_units(1)
                .build()
                .unwrap(),
        )
        .key_schema(key("p", KeyType::Hash))
        .attribute_definitions(attr_def("p", ScalarAttributeType::S))
        .send()
        .await
        .unwrap();
    name.to_string()
}

fn put_request(p: &str) -> WriteRequest {
    WriteRequest::builder()
        .put_request(
            PutRequest::builder()
                .set_item(Some(item(&[("p", s(p)), ("d", s(&"x".repeat(900)))])))
                .build()
                .unwrap(),
        )
        .build()
}

#[tokio::test]
async fn provisioned_table_throttles_put_item_once_its_burst_is_spent() {
    let (_server, client) = util::own_server(&["--burst-seconds", "1"]);
    let table = provisioned_table(&client, "slow").await;
    let mut throttled = None;
    for i in 0..100 {
        let result = client
            .put_item()
            .table_name(&table)
            .set_item(Some(item(&[
                ("p", s(&format!("k{i}"))),
                ("d", s(&"x".repeat(3000))),
            ])))
            .send()
            .await;
        if result.is_err() {
            throttled = Some((i, result));
            break;
        }
    }
    let (attempt, result) =
        throttled.expect("1 WCU with a 1 s burst throttles 100 quick 3 KB puts");
    assert!(attempt >= 1, "the first put fits the burst");
    util::assert_error(result, "ProvisionedThroughputExceededException", EXCEEDED);
    // Capacity refills: the write eventually goes through again.
    util::poll_until("capacity to refill", Duration::from_secs(30), || {
        let client = client.clone();
        let table = table.clone();
        async move {
            client
                .put_item()
                .table_name(&table)
                .item("p", s("later"))
                .send()
                .await
                .ok()
        }
    })
    .await;
}

#[tokio::test]
async fn batch_write_on_a_throttled_table_returns_unprocessed_items() {
    let (_server, client) = util::own_server(&["--burst-seconds", "1"]);
    let slow = provisioned_table(&client, "slow").await;
    let fast = util::table_s(&client).await;
    // Spend the burst, then keep batching to both tables: the provisioned
    // table's requests come back unprocessed, the on-demand table's are written.
    let mut round = 0;
    let (unprocessed, fast_keys) = loop {
        round += 1;
        assert!(
            round < 50,
            "the provisioned table never ran out of capacity"
        );
        let slow_requests: Vec<WriteRequest> = (0..3)
            .map(|i| put_request(&format!("r{round}-{i}")))
            .collect();
        let fast_keys: Vec<String> = (0..5).map(|i| format!("f{round}-{i}")).collect();
        let out = client
            .batch_write_item()
            .request_items(&slow, slow_requests.clone())
            .request_items(&fast, fast_keys.iter().map(|k| put_request(k)).collect())
            .send()
            .await
            .expect("a batch with processable requests succeeds");
        let unprocessed = out.unprocessed_items().cloned().unwrap_or_default();
        assert!(
            !unprocessed.contains_key(&fast),
            "the on-demand table is never throttled"
        );
        if let Some(left) = unprocessed.get(&slow) {
            assert!(!left.is_empty());
            break (left.clone(), fast_keys);
        }
    };
    // What came back was not written; the other table's requests were.
    for request in &unprocessed {
        let p = request.put_request().unwrap().item()["p"].clone();
        let out = client
            .get_item()
            .table_name(&slow)
            .key("p", p)
            .consistent_read(true)
            .send()
            .await
            .unwrap();
        assert!(out.item().is_none(), "an unprocessed request was applied");
    }
    for k in fast_keys {
        let out = client
            .get_item()
            .table_name(&fast)
            .key("p", s(&k))
            .consistent_read(true)
            .send()
            .await
            .unwrap();
        assert!(out.item().is_some(), "{k} was not written");
    }

    // A batch with nothing processable fails as a whole (DynamoDB: "If none
    // of the items can be processed due to insufficient provisioned
    // throughput on all of the tables in the request").
    let result = client
        .batch_write_item()
        .request_items(&slow, vec![put_request("alone")])
        .send()
        .await;
    util::assert_error(result, "ProvisionedThroughputExceededException", EXCEEDED);

    // Retried after a pause, the unprocessed requests go through.
    let mut pending = unprocessed;
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while !pending.is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the unprocessed items were never written"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
        if let Ok(out) = client
            .batch_write_item()
            .request_items(&slow, pending.clone())
            .send()
            .await
        {
            pending = out
                .unprocessed_items()
                .and_then(|u| u.get(&slow))
                .cloned()
                .unwrap_or_default();
        }
    }
}

#[tokio::test]
async fn fault_rules_fail_the_named_operation_and_table_only() {
    let (_server, client) = util::own_server(&[
        "--fault",
        "PutItem:victim=throttling@1",
        "--fault",
        "GetItem:victim=internal@1",
        "--fault",
        "DeleteItem:victim=conflict@1",
        "--fault-seed",
        "3",
    ]);
    for name in ["victim", "bystander"] {
        client
            .create_table()
            .table_name(name)
            .billing_mode(BillingMode::PayPerRequest)
            .key_schema(key("p", KeyType::Hash))
            .attribute_definitions(attr_def("p", ScalarAttributeType::S))
            .send()
            .await
            .unwrap();
    }
    let err = util::service_error(
        client
            .put_item()
            .table_name("victim")
            .item("p", s("a"))
            .send()
            .await,
    );
    assert_eq!(err.code, "ThrottlingException", "{err:?}");
    let err = util::service_error(
        client
            .get_item()
            .table_name("victim")
            .key("p", s("a"))
            .send()
            .await,
    );
    assert_eq!(err.code, "InternalServerError", "{err:?}");
    util::assert_error(
        client
            .delete_item()
            .table_name("victim")
            .key("p", s("a"))
            .send()
            .await,
        "TransactionConflictException",
        "Transaction is ongoing for the item",
    );
    // Other operations on the table, and the other table, are untouched.
    client
        .update_item()
        .table_name("victim")
        .key("p", s("a"))
        .update_expression("SET v = :v")
        .expression_attribute_values(":v", s("1"))
        .send()
        .await
        .expect("UpdateItem is not faulted");
    client
        .put_item()
        .table_name("bystander")
        .item("p", s("a"))
        .send()
        .await
        .expect("PutItem on another table is not faulted");
    let out = client
        .get_item()
        .table_name("bystander")
        .key("p", s("a"))
        .send()
        .await
        .expect("GetItem on another table is not faulted");
    assert!(out.item().is_some());
}

#[tokio::test]
async fn batch_get_with_injected_unprocessed_keys_is_completed_by_retrying() {
    let (_server, client) = util::own_server(&[
        "--fault",
        "BatchGetItem=unprocessed@0.5",
        "--fault-seed",
        "11",
    ]);
    let table = util::table_s(&client).await;
    for chunk in 0..4 {
        client
            .batch_write_item()
            .request_items(
                &table,
                (chunk * 25..(chunk + 1) * 25)
                    .map(|i| put_request(&format!("k{i:03}")))
                    .collect(),
            )
            .send()
            .await
            .unwrap();
    }
    let mut request = Some(
        aws_sdk_dynamodb::types::KeysAndAttributes::builder()
            .set_keys(Some(
                (0..100)
                    .map(|i| item(&[("p", s(&format!("k{i:03}")))]))
                    .collect(),
            ))
            .projection_expression("p")
            .build()
            .unwrap(),
    );
    let mut got = Vec::new();
    let (mut calls, mut unprocessed) = (0, 0);
    while let Some(keys) = request.take() {
        calls += 1;
        assert!(calls < 40, "keys stayed unprocessed");
        let out = client
            .batch_get_item()
            .request_items(&table, keys)
            .send()
            .await
            .unwrap();
        if let Some(items) = out.responses().and_then(|r| r.get(&table)) {
            got.extend(items.iter().map(|i| util::get_s(i, "p").to_string()));
        }
        request = out
            .unprocessed_keys()
            .and_then(|u| u.get(&table))
            .filter(|k| !k.keys().is_empty())
            .cloned();
        if let Some(left) = &request {
            unprocessed += left.keys().len();
            // The projection travels with the unprocessed keys.
            assert_eq!(left.projection_expression(), Some("p"));
        }
    }
    assert!(unprocessed > 0, "no key came back unprocessed");
    got.sort();
    let expected: Vec<String> = (0..100).map(|i| format!("k{i:03}")).collect();
    assert_eq!(got, expected, "every item exactly once");
}
