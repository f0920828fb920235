//! DynamoDB's table quota (issue 14): CreateTable beyond `--max-tables`
//! (default 2,500, DynamoDB's per-region default) is LimitExceededException
//! with DynamoDB's wording, and a deleted table frees its place at once.
//! (The simultaneous-operations quota is tested in the engine, where a
//! background job can be held open.)

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
