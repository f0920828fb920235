//! Capacity DynamoDB charges where the documentation reads otherwise: a
//! Scan pays per partition it reads, index capacity in batch writes, and an
//! index Query charged to the index.

use crate::util::{self, s};
use aws_sdk_dynamodb::types::{PutRequest, ReturnConsumedCapacity, WriteRequest};

#[tokio::test]
async fn a_scan_is_charged_for_each_of_the_four_partitions_it_reads() {
    // AWS (ScyllaDB's test_scan_consumed_capacity): a full Scan of a table
    // holding one tiny item costs 4 units, 2 eventually consistent.
    let client = util::client();
    let table = util::table_s(&client).await;
    client
        .put_item()
        .table_name(&table)
        .item("p", s("only"))
        .send()
        .await
        .unwrap();
    for (consistent, expected) in [(true, 4.0), (false, 2.0)] {
        let out = client
            .scan()
            .table_name(&table)
            .consistent_read(consistent)
            .return_consumed_capacity(ReturnConsumedCapacity::Total)
            .send()
            .await
            .unwrap();
        assert_eq!(out.count, 1);
        assert_eq!(
            out.consumed_capacity.unwrap().capacity_units,
            Some(expected)
        );
    }
    // One segment of four covers a single partition.
    let out = client
        .scan()
        .table_name(&table)
        .segment(0)
        .total_segments(4)
        .consistent_read(true)
        .return_consumed_capacity(ReturnConsumedCapacity::Total)
        .send()
        .await
        .unwrap();
    assert_eq!(out.consumed_capacity.unwrap().capacity_units, Some(1.0));
}

#[tokio::test]
async fn batch_writes_report_index_capacity_with_indexes() {
    let client = util::client();
    let table = super::table_with_gsi(&client).await;
    let put = PutRequest::builder()
        .item("p", s("a"))
        .item("x", s("x"))
        .build()
        .unwrap();
    let out = client
        .batch_write_item()
        .request_items(
            &table,
            vec![WriteRequest::builder().put_request(put).build()],
        )
        .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
        .send()
        .await
        .unwrap();
    let consumed = &out.consumed_capacity.unwrap()[0];
    assert_eq!(consumed.capacity_units, Some(2.0));
    assert_eq!(consumed.table.as_ref().unwrap().capacity_units, Some(1.0));
    let gsi = &consumed.global_secondary_indexes.as_ref().unwrap()["gsi"];
    assert_eq!(gsi.capacity_units, Some(1.0));
}

#[tokio::test]
async fn a_query_of_an_index_is_charged_to_the_index() {
    let client = util::client();
    let table = super::table_with_gsi(&client).await;
    client
        .put_item()
        .table_name(&table)
        .item("p", s("a"))
        .item("x", s("x"))
        .send()
        .await
        .unwrap();
    let out = client
        .query()
        .table_name(&table)
        .index_name("gsi")
        .key_condition_expression("x = :x")
        .expression_attribute_values(":x", s("x"))
        .return_consumed_capacity(ReturnConsumedCapacity::Indexes)
        .send()
        .await
        .unwrap();
    let consumed = out.consumed_capacity.unwrap();
    assert_eq!(consumed.capacity_units, Some(0.5));
    let gsi = &consumed.global_secondary_indexes.as_ref().unwrap()["gsi"];
    assert_eq!(gsi.capacity_units, Some(0.5));
    assert_eq!(consumed.table.unwrap().capacity_units, Some(0.0));
}
