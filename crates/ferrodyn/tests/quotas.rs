//! DynamoDB's table quota (issue 14): CreateTable beyond `--max-tables`
//! (default 2,500, DynamoDB's per-region default) is LimitExceededException
//! with DynamoDB's wording, and a deleted table frees its place at once.
//! (The simultaneous-operations quota is tested in the engine, where a
//! background job can be held open.) Provisioned capacity (issue 21):
//! DescribeLimits reports 40,000 units per table and index and 80,000 per
//! account, and CreateTable and UpdateTable refuse more with AWS's texts.

use crate::util::{self, assert_error, own_server};
use aws_sdk_dynamodb::types::{BillingMode, KeyType, ScalarAttributeType};

/// CreateTable of an on-demand table keyed by `p` (S), its result as sent.
async fn create_hash_table(
    client: &aws_sdk_dynamodb::Client,
    name: &str,
) -> Result<
    aws_sdk_dynamodb::operation::create_table::CreateTableOutput,
    aws_sdk_dynamodb::error::SdkError<aws_sdk_dynamodb::operation::create_table::CreateTableError>,
> {
    client
        .create_table()
        .table_name(name)
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(util::key("p", KeyType::Hash))
        .attribute_definitions(util::attr_def("p", ScalarAttributeType::S))
        .send()
        .await
}

#[tokio::test]
async fn create_table_beyond_the_table_quota_is_limit_exceeded() {
    let (_server, client) = own_server(&["--max-tables", "3"]);
    let mut tables = Vec::new();
    for _ in 0..3 {
        tables.push(util::table_s(&client).await);
    }
    let refused = util::unique_name("quota");
    let result = create_hash_table(&client, &refused).await;
    assert_error(
        result,
        "LimitExceededException",
        "Subscriber limit exceeded: There is a limit of 3 tables per subscriber",
    );
    let listed = client.list_tables().send().await.unwrap();
    assert_eq!(
        listed.table_names().len(),
        3,
        "the refused table was not created"
    );
    client
        .delete_table()
        .table_name(&tables[0])
        .send()
        .await
        .unwrap();
    util::table_s(&client).await;
}

/// The quota is per region, as DynamoDB's is: a region at its limit does not
/// stop a table in another.
#[tokio::test]
async fn the_table_quota_counts_each_region_separately() {
    let (server, client) = own_server(&["--max-tables", "1"]);
    util::table_s(&client).await;
    let east2 = util::client_in_region(server.endpoint(), "us-east-2");
    util::table_s(&east2).await;
    let third = util::unique_name("quota");
    let result = create_hash_table(&client, &third).await;
    assert_error(
        result,
        "LimitExceededException",
        "Subscriber limit exceeded: There is a limit of 1 tables per subscriber",
    );
}

/// CreateTable of a provisioned table keyed by `p` (S) with `units` read
/// and write units, and a GSI on `g` with `index_units` when given.
async fn create_provisioned(
    client: &aws_sdk_dynamodb::Client,
    name: &str,
    units: (i64, i64),
    index_units: Option<(i64, i64)>,
) -> Result<
    aws_sdk_dynamodb::operation::create_table::CreateTableOutput,
    aws_sdk_dynamodb::error::SdkError<aws_sdk_dynamodb::operation::create_table::CreateTableError>,
> {
    let throughput = |(read, write): (i64, i64)| {
        aws_sdk_dynamodb::types::ProvisionedThroughput::builder()
            .read_capacity_units(read)
            .write_capacity_units(write)
            .build()
            .unwrap()
    };
    let mut request = client
        .create_table()
        .table_name(name)
        .billing_mode(BillingMode::Provisioned)
        .provisioned_throughput(throughput(units))
        .key_schema(util::key("p", KeyType::Hash))
        .attribute_definitions(util::attr_def("p", ScalarAttributeType::S));
    if let Some(index_units) = index_units {
        let gsi = aws_sdk_dynamodb::types::GlobalSecondaryIndex::builder()
            .index_name("gsi1")
            .key_schema(util::key("g", KeyType::Hash))
            .projection(
                aws_sdk_dynamodb::types::Projection::builder()
                    .projection_type(aws_sdk_dynamodb::types::ProjectionType::KeysOnly)
                    .build(),
            )
            .provisioned_throughput(throughput(index_units))
            .build()
            .unwrap();
        request = request
            .attribute_definitions(util::attr_def("g", ScalarAttributeType::S))
            .global_secondary_indexes(gsi);
    }
    request.send().await
}

const REFERENCE: &str =
    "Refer to the Amazon DynamoDB Developer Guide for current limits and how to request higher limits.";

#[tokio::test]
async fn describe_limits_reports_the_capacity_quotas_create_and_update_table_enforce() {
    let (_server, client) = own_server(&[]);
    let limits = client.describe_limits().send().await.unwrap();
    assert_eq!(limits.account_max_read_capacity_units(), Some(80_000));
    assert_eq!(limits.account_max_write_capacity_units(), Some(80_000));
    assert_eq!(limits.table_max_read_capacity_units(), Some(40_000));
    assert_eq!(limits.table_max_write_capacity_units(), Some(40_000));

    let over_table = create_provisioned(&client, "big-table", (40_001, 5), None).await;
    assert_error(over_table, "LimitExceededException", &format!("The requested ReadCapacityUnits, 40001, is above the per table maximum for the account in us-east-1. Per table maximum: 40000. {REFERENCE}"));
    let over_index = create_provisioned(&client, "big-index", (5, 5), Some((5, 40_001))).await;
    assert_error(over_index, "LimitExceededException", &format!("The requested WriteCapacityUnits for index gsi1, 40001, is above the per index maximum for the account in us-east-1. Per index maximum: 40000. {REFERENCE}"));

    // 40,000 + 30,000 + 5,000 (index) read units are provisioned; 5,001 more would pass 80,000.
    create_provisioned(&client, "first", (40_000, 10), None)
        .await
        .unwrap();
    create_provisioned(&client, "second", (30_000, 10), Some((5_000, 10)))
        .await
        .unwrap();
    let over_account = create_provisioned(&client, "third", (5_001, 10), None).await;
    assert_error(over_account, "LimitExceededException", &format!("This request would have caused the ReadCapacityUnits limit to be exceeded for the account in us-east-1. Current ReadCapacityUnits reserved by the account: 75000. Limit: 80000. Requested: 5001. {REFERENCE}"));
    create_provisioned(&client, "third", (5_000, 10), None)
        .await
        .unwrap();
    // On-demand tables reserve nothing.
    create_hash_table(&client, "on-demand").await.unwrap();

    let raise = aws_sdk_dynamodb::types::ProvisionedThroughput::builder()
        .read_capacity_units(10)
        .write_capacity_units(40_001)
        .build()
        .unwrap();
    let updated = client
        .update_table()
        .table_name("third")
        .provisioned_throughput(raise)
        .send()
        .await;
    assert_error(updated, "LimitExceededException", &format!("The requested WriteCapacityUnits, 40001, is above the per table maximum for the account in us-east-1. Per table maximum: 40000. {REFERENCE}"));
}

#[tokio::test]
async fn a_global_index_created_by_update_table_is_held_to_the_per_index_maximum() {
    let (_server, client) = own_server(&[]);
    create_provisioned(&client, "grows", (5, 5), None)
        .await
        .unwrap();
    let create = |units: i64| {
        aws_sdk_dynamodb::types::GlobalSecondaryIndexUpdate::builder()
            .create(
                aws_sdk_dynamodb::types::CreateGlobalSecondaryIndexAction::builder()
                    .index_name("late")
                    .key_schema(util::key("g", KeyType::Hash))
                    .projection(
                        aws_sdk_dynamodb::types::Projection::builder()
                            .projection_type(aws_sdk_dynamodb::types::ProjectionType::KeysOnly)
                            .build(),
                    )
                    .provisioned_throughput(
                        aws_sdk_dynamodb::types::ProvisionedThroughput::builder()
                            .read_capacity_units(units)
                            .write_capacity_units(5)
                            .build()
                            .unwrap(),
                    )
                    .build()
                    .unwrap(),
            )
            .build()
    };
    let refused = client
        .update_table()
        .table_name("grows")
        .attribute_definitions(util::attr_def("g", ScalarAttributeType::S))
        .global_secondary_index_updates(create(40_001))
        .send()
        .await;
    assert_error(refused, "LimitExceededException", &format!("The requested ReadCapacityUnits for index late, 40001, is above the per index maximum for the account in us-east-1. Per index maximum: 40000. {REFERENCE}"));
    client
        .update_table()
        .table_name("grows")
        .attribute_definitions(util::attr_def("g", ScalarAttributeType::S))
        .global_secondary_index_updates(create(40_000))
        .send()
        .await
        .unwrap();
}
