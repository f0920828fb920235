//! BatchWriteItem and BatchGetItem request rules: limits, duplicate keys,
//! several tables in one call, missing keys, projections, and that a batch
//! is not atomic (each request stands alone).

use std::collections::BTreeSet;

use crate::util::txn::Item;
use crate::util::{self, get_s, item, n, s};
use aws_sdk_dynamodb::types::{DeleteRequest, KeysAndAttributes, PutRequest, WriteRequest};

fn put(p: &str) -> WriteRequest {
    WriteRequest::builder()
        .put_request(
            PutRequest::builder()
                .set_item(Some(item(&[("p", s(p)), ("v", n("1")), ("w", s("w"))])))
                .build()
                .unwrap(),
        )
        .build()
}

fn delete(p: &str) -> WriteRequest {
    WriteRequest::builder()
        .delete_request(DeleteRequest::builder().key("p", s(p)).build().unwrap())
        .build()
}

fn keys(ps: &[&str]) -> KeysAndAttributes {
    KeysAndAttributes::builder()
        .set_keys(Some(ps.iter().map(|p| item(&[("p", s(p))])).collect()))
        .consistent_read(true)
        .build()
        .unwrap()
}

#[tokio::test]
async fn batch_write_puts_and_deletes_across_tables() {
    let client = util::client();
    let a = util::table_s(&client).await;
    let b = util::table_s(&client).await;
    client
        .batch_write_item()
        .request_items(&a, vec![put("x"), put("y")])
        .request_items(&b, vec![put("z")])
        .send()
        .await
        .unwrap();
    let out = client
        .batch_write_item()
        .request_items(&a, vec![delete("x"), put("w")])
        .request_items(&b, vec![delete("missing")])
        .send()
        .await
        .unwrap();
    assert!(out.unprocessed_items().is_none_or(|u| u.is_empty()));
    let ids = |items: Vec<Item>| -> BTreeSet<String> {
        items.iter().map(|i| get_s(i, "p").to_string()).collect()
    };
    assert_eq!(
        ids(util::scan_all(&client, &a, None).await),
        BTreeSet::from(["w".to_string(), "y".to_string()])
    );
    assert_eq!(
        ids(util::scan_all(&client, &b, None).await),
        BTreeSet::from(["z".to_string()])
    );
}

#[tokio::test]
async fn batch_write_limits_and_duplicates_are_validation_errors() {
    let client = util::client();
    let a = util::table_s(&client).await;
    let result = client
        .batch_write_item()
        .request_items(&a, (0..26).map(|i| put(&format!("k{i}"))).collect())
        .send()
        .await;
    let err = util::service_error(result);
    assert_eq!(err.code, "ValidationException", "{err:?}");
    let result = client
        .batch_write_item()
        .request_items(&a, vec![put("k"), delete("k")])
        .send()
        .await;
    util::assert_validation(result, "Provided list of item keys contains duplicates");
    assert!(util::scan_all(&client, &a, None).await.is_empty());
    // 25 is allowed.
    client
        .batch_write_item()
        .request_items(&a, (0..25).map(|i| put(&format!("k{i}"))).collect())
        .send()
        .await
        .unwrap();
    assert_eq!(util::scan_all(&client, &a, None).await.len(), 25);
}

#[tokio::test]
async fn batch_get_returns_found_items_across_tables_and_skips_missing_keys() {
    let client = util::client();
    let a = util::table_s(&client).await;
    let b = util::table_s(&client).await;
    client
        .batch_write_item()
        .request_items(&a, vec![put("x"), put("y")])
        .request_items(&b, vec![put("z")])
        .send()
        .await
        .unwrap();
    let out = client
        .batch_get_item()
        .request_items(&a, keys(&["x", "y", "nope"]))
        .request_items(
            &b,
            KeysAndAttributes::builder()
                .keys(item(&[("p", s("z"))]))
                .projection_expression("p, #v")
                .expression_attribute_names("#v", "v")
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let responses = out.responses().unwrap();
    let mut got: Vec<&str> = responses[&a].iter().map(|i| get_s(i, "p")).collect();
    got.sort();
    assert_eq!(got, ["x", "y"]);
    assert_eq!(responses[&b], vec![item(&[("p", s("z")), ("v", n("1"))])]);
    assert!(out.unprocessed_keys().is_none_or(|u| u.is_empty()));
}

#[tokio::test]
async fn batch_get_limits_and_duplicates_are_validation_errors() {
    let client = util::client();
    let a = util::table_s(&client).await;
    let hundred_one: Vec<String> = (0..101).map(|i| format!("k{i}")).collect();
    let refs: Vec<&str> = hundred_one.iter().map(String::as_str).collect();
    let result = client
        .batch_get_item()
        .request_items(&a, keys(&refs))
        .send()
        .await;
    let err = util::service_error(result);
    assert_eq!(err.code, "ValidationException", "{err:?}");
    assert!(
        err.message == "Too many items requested for the BatchGetItem call"
            || err
                .message
                .contains("Member must have length less than or equal to 100"),
        "{err:?}"
    );
    let result = client
        .batch_get_item()
        .request_items(&a, keys(&["k", "k"]))
        .send()
        .await;
    util::assert_validation(result, "Provided list of item keys contains duplicates");
    // 100 keys are allowed (missing items simply do not come back).
    let out = client
        .batch_get_item()
        .request_items(&a, keys(&refs[..100]))
        .send()
        .await
        .unwrap();
    assert!(out.responses().unwrap()[&a].is_empty());
}
