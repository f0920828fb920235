//! ReturnConsumedCapacity (TOTAL, INDEXES, NONE) with capacity units computed
//! by AWS's documented rules: a write costs 1 unit per started KB of the
//! larger of the old and new item, a read 1 unit per started 4 KB, halved
//! when eventually consistent; a missing item still costs the minimum.
//!
//! The expected numbers are AWS's documented rules. DynamoDB Local's capacity
//! accounting is known to be wrong for transactions and index queries; for
//! the single-item cases here it agrees with AWS.

use crate::util::{self, s};
use aws_sdk_dynamodb::types::{ConsumedCapacity, ReturnConsumedCapacity};
use aws_sdk_dynamodb::Client;

/// Item `p = key` padded with a string attribute `d` to exactly `bytes`
/// bytes, sized the DynamoDB way (names plus values).
fn sized_item(
    key: &str,
    bytes: usize,
) -> std::collections::HashMap<String, aws_sdk_dynamodb::types::AttributeValue> {
    let overhead = "p".len() + key.len() + "d".len();
    util::item(&[("p", s(key)), ("d", s(&"x".repeat(bytes - overhead)))])
}

fn units(capacity: Option<&ConsumedCapacity>) -> f64 {
    capacity
        .expect("ConsumedCapacity is returned")
        .capacity_units()
        .expect("CapacityUnits is set")
}

async fn put_sized(client: &Client, table: &str, key: &str, bytes: usize) -> f64 {
    let out = client
        .put_item()
        .table_name(table)
        .set_item(Some(sized_item(key, bytes)))
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .unwrap();
    let cc = out.consumed_capacity().unwrap();
    assert_eq!(cc.table_name(), Some(table));
    units(Some(cc))
}

async fn get_units(client: &Client, table: &str, key: &str, consistent: bool) -> f64 {
    let out = client
        .get_item()
        .table_name(table)
        .key("p", s(key))
        .consistent_read(consistent)
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .unwrap();
    units(out.consumed_capacity())
}

#[tokio::test]
async fn put_item_costs_one_unit_per_started_kilobyte() {
    let client = util::client();
    let table = util::table_s(&client).await;
    assert_eq!(put_sized(&client, &table, "small", 100).await, 1.0);
    assert_eq!(put_sized(&client, &table, "exact", 1024).await, 1.0);
    assert_eq!(put_sized(&client, &table, "over", 1025).await, 2.0);
    assert_eq!(put_sized(&client, &table, "1.5k", 1536).await, 2.0);
    assert_eq!(put_sized(&client, &table, "10k", 10 * 1024).await, 10.0);
}

#[tokio::test]
async fn overwrite_is_charged_on_the_larger_item() {
    let client = util::client();
    let table = util::table_s(&client).await;
    put_sized(&client, &table, "k", 3000).await;
    // Replacing a 3 KB item with a tiny one still costs 3 units.
    assert_eq!(put_sized(&client, &table, "k", 10).await, 3.0);
    let out = client
        .delete_item()
        .table_name(&table)
        .key("p", s("k"))
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .unwrap();
    assert_eq!(units(out.consumed_capacity()), 1.0);
}

#[tokio::test]
async fn update_and_delete_charge_the_old_item_size() {
    let client = util::client();
    let table = util::table_s(&client).await;
    put_sized(&client, &table, "k", 2500).await;
    let out = client
        .update_item()
        .table_name(&table)
        .key("p", s("k"))
        .update_expression("REMOVE d")
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .unwrap();
    assert_eq!(units(out.consumed_capacity()), 3.0);
    put_sized(&client, &table, "big", 5000).await;
    let out = client
        .delete_item()
        .table_name(&table)
        .key("p", s("big"))
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .unwrap();
    assert_eq!(units(out.consumed_capacity()), 5.0);
    // Deleting nothing still costs one unit.
    let out = client
        .delete_item()
        .table_name(&table)
        .key("p", s("nothing"))
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .unwrap();
    assert_eq!(units(out.consumed_capacity()), 1.0);
}

#[tokio::test]
async fn get_item_costs_one_unit_per_started_4_kb_halved_when_eventual() {
    let client = util::client();
    let table = util::table_s(&client).await;
    put_sized(&client, &table, "5k", 5 * 1024).await;
    assert_eq!(get_units(&client, &table, "5k", true).await, 2.0);
    assert_eq!(get_units(&client, &table, "5k", false).await, 1.0);
    put_sized(&client, &table, "4k", 4096).await;
    assert_eq!(get_units(&client, &table, "4k", true).await, 1.0);
    assert_eq!(get_units(&client, &table, "4k", false).await, 0.5);
    put_sized(&client, &table, "9k", 9 * 1024).await;
    assert_eq!(get_units(&client, &table, "9k", true).await, 3.0);
    assert_eq!(get_units(&client, &table, "9k", false).await, 1.5);
    // A missing item costs the minimum.
    assert_eq!(get_units(&client, &table, "none", true).await, 1.0);
    assert_eq!(get_units(&client, &table, "none", false).await, 0.5);
}

#[tokio::test]
async fn indexes_mode_breaks_down_the_table_share() {
    let client = util::client();
    let table = util::table_s(&client).await;
    let out = client
        .put_item()
        .table_name(&table)
        .set_item(Some(sized_item("k", 1536)))
        .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
        .send()
        .await
        .unwrap();
    let cc = out.consumed_capacity().unwrap();
    assert_eq!(cc.capacity_units(), Some(2.0));
    assert_eq!(cc.table().and_then(|t| t.capacity_units()), Some(2.0));
    let out = client
        .get_item()
        .table_name(&table)
        .key("p", s("k"))
        .consistent_read(true)
        .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
        .send()
        .await
        .unwrap();
    let cc = out.consumed_capacity().unwrap();
    assert_eq!(cc.capacity_units(), Some(1.0));
    assert_eq!(cc.table().and_then(|t| t.capacity_units()), Some(1.0));
}

#[tokio::test]
async fn none_and_absent_return_no_capacity() {
    let client = util::client();
    let table = util::table_s(&client).await;
    let out = client
        .put_item()
        .table_name(&table)
        .item("p", s("k"))
        .return_consumed_capacity(ReturnConsumedCapacity::None)
        .send()
        .await
        .unwrap();
    assert!(out.consumed_capacity().is_none());
    let out = client
        .get_item()
        .table_name(&table)
        .key("p", s("k"))
        .send()
        .await
        .unwrap();
    assert!(out.consumed_capacity().is_none());
}
