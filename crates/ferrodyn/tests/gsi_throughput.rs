//! UpdateTable's GlobalSecondaryIndexUpdates.Update: a GSI's provisioned
//! throughput changes and DescribeTable shows it; an on-demand table or an
//! unknown index is refused.

use crate::util::{self, attr_def, key, unique_name};
use aws_sdk_dynamodb::types::{
    BillingMode, GlobalSecondaryIndex, GlobalSecondaryIndexUpdate, KeyType, Projection,
    ProjectionType, ProvisionedThroughput, ScalarAttributeType, UpdateGlobalSecondaryIndexAction,
};
use aws_sdk_dynamodb::Client;

fn throughput(read: i64, write: i64) -> ProvisionedThroughput {
    ProvisionedThroughput::builder()
        .read_capacity_units(read)
        .write_capacity_units(write)
        .build()
        .unwrap()
}

async fn table_with_gsi(client: &Client, mode: BillingMode) -> String {
    let name = unique_name("gsitp");
    let mut gsi = GlobalSecondaryIndex::builder()
        .index_name("by_g")
        .key_schema(key("g", KeyType::Hash))
        .projection(
            Projection::builder()
                .projection_type(ProjectionType::All)
                .build(),
        );
    let mut request = client
        .create_table()
        .table_name(&name)
        .billing_mode(mode.clone())
        .key_schema(key("p", KeyType::Hash))
        .attribute_definitions(attr_def("p", ScalarAttributeType::S))
        .attribute_definitions(attr_def("g", ScalarAttributeType::S));
    if mode == BillingMode::Provisioned {
        gsi = gsi.provisioned_throughput(throughput(5, 5));
        request = request.provisioned_throughput(throughput(5, 5));
    }
    request
        .global_secondary_indexes(gsi.build().unwrap())
        .send()
        .await
        .unwrap();
    name
}

fn update(index: &str, read: i64, write: i64) -> GlobalSecondaryIndexUpdate {
    GlobalSecondaryIndexUpdate::builder()
        .update(
            UpdateGlobalSecondaryIndexAction::builder()
                .index_name(index)
                .provisioned_throughput(throughput(read, write))
                .build()
                .unwrap(),
        )
        .build()
}

#[tokio::test]
async fn gsi_throughput_update_is_described() {
    let client = util::client();
    let table = table_with_gsi(&client, BillingMode::Provisioned).await;
    client
        .update_table()
        .table_name(&table)
        .global_secondary_index_updates(update("by_g", 7, 3))
        .send()
        .await
        .unwrap();
    let described = client
        .describe_table()
        .table_name(&table)
        .send()
        .await
        .unwrap();
    let gsi = &described.table().unwrap().global_secondary_indexes()[0];
    let t = gsi.provisioned_throughput().unwrap();
    assert_eq!(
        (t.read_capacity_units(), t.write_capacity_units()),
        (Some(7), Some(3))
    );
    assert_eq!(t.number_of_decreases_today(), Some(1));
}

#[tokio::test]
async fn gsi_throughput_update_is_refused_on_demand_and_for_unknown_indexes() {
    let client = util::client();
    let table = table_with_gsi(&client, BillingMode::PayPerRequest).await;
    let error = client
        .update_table()
        .table_name(&table)
        .global_secondary_index_updates(update("by_g", 7, 3))
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        error.into_service_error().meta().code(),
        Some("ValidationException")
    );
    let error = client
        .update_table()
        .table_name(&table)
        .global_secondary_index_updates(update("nope", 7, 3))
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        error.into_service_error().meta().code(),
        Some("ResourceNotFoundException")
    );
}

/// A PROVISIONED table whose GSI has 1 write unit: once the GSI's burst is
/// spent, writes to the table are throttled with DynamoDB's GSI message, while
/// the table itself still has plenty of capacity.
#[tokio::test]
async fn an_under_provisioned_gsi_throttles_the_tables_writes() {
    let (_server, client) = util::own_server(&["--burst-seconds", "1"]);
    let name = unique_name("gsiwcu");
    client
        .create_table()
        .table_name(&name)
        .billing_mode(BillingMode::Provisioned)
        .provisioned_throughput(throughput(1000, 1000))
        .key_schema(key("p", KeyType::Hash))
        .attribute_definitions(attr_def("p", ScalarAttributeType::S))
        .attribute_definitions(attr_def("g", ScalarAttributeType::S))
        .global_secondary_indexes(
            GlobalSecondaryIndex::builder()
                .index_name("by_g")
                .key_schema(key("g", KeyType::Hash))
                .projection(
                    Projection::builder()
                        .projection_type(ProjectionType::All)
                        .build(),
                )
                .provisioned_throughput(throughput(1000, 1))
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let mut throttled = None;
    for i in 0..20 {
        let result = client
            .put_item()
            .table_name(&name)
            .item("p", util::s(&format!("k{i}")))
            .item("g", util::s("x"))
            .send()
            .await;
        if let Err(error) = result {
            throttled = Some(error.into_service_error());
            break;
        }
    }
    let error = throttled.expect("writes through a 1-WCU GSI are throttled within 20 puts");
    assert_eq!(
        error.meta().code(),
        Some("ProvisionedThroughputExceededException")
    );
    assert!(
        error
            .meta()
            .message()
            .unwrap_or_default()
            .contains("global secondary indexes"),
        "{error:?}"
    );
    // The table's own read capacity is untouched by the GSI's shortage.
    client
        .get_item()
        .table_name(&name)
        .key("p", util::s("k0"))
        .send()
        .await
        .unwrap();
}
