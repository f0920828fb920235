//! Regions: tables live in the region a request is signed for, a table ARN
//! names a table wherever a name does, and a table keeps its region across a
//! restart.

use crate::util::{self, attr_def, key, s};
use aws_sdk_dynamodb::types::{KeyType, ScalarAttributeType};
use aws_sdk_dynamodb::Client;

#[tokio::test]
async fn tables_live_in_the_region_the_request_is_signed_for() {
    let east1 = util::client();
    let east2 = util::client_in_region(util::endpoint(), "us-east-2");
    let table = util::create_table(&east2, "regional", &[("p", ScalarAttributeType::S)]).await;
    let described = east2
        .describe_table()
        .table_name(&table)
        .send()
        .await
        .unwrap()
        .table
        .unwrap();
    assert_eq!(
        described.table_arn.as_deref(),
        Some(format!("arn:aws:dynamodb:us-east-2:000000000000:table/{table}").as_str())
    );
    util::assert_error(
        east1.describe_table().table_name(&table).send().await,
        "ResourceNotFoundException",
        &format!("Requested resource not found: Table: {table} not found"),
    );
    let listed = east1
        .list_tables()
        .send()
        .await
        .unwrap()
        .table_names
        .unwrap_or_default();
    assert!(!listed.contains(&table));
    let listed = east2
        .list_tables()
        .send()
        .await
        .unwrap()
        .table_names
        .unwrap_or_default();
    assert!(listed.contains(&table));
    // The same name can exist in both regions, holding different items.
    util::create_table(&east1, "unused", &[("p", ScalarAttributeType::S)]).await;
    east1
        .create_table()
        .table_name(&table)
        .billing_mode(aws_sdk_dynamodb::types::BillingMode::PayPerRequest)
        .key_schema(key("p", KeyType::Hash))
        .attribute_definitions(attr_def("p", ScalarAttributeType::S))
        .send()
        .await
        .expect("the name is free in us-east-1");
    east2
        .put_item()
        .table_name(&table)
        .item("p", s("k"))
        .send()
        .await
        .unwrap();
    let got = east1
        .get_item()
        .table_name(&table)
        .key("p", s("k"))
        .send()
        .await
        .unwrap();
    assert!(got.item.is_none());
}

#[tokio::test]
async fn a_table_arn_is_accepted_wherever_a_table_name_is() {
    let client = util::client();
    let table = util::table_s(&client).await;
    let arn = format!("arn:aws:dynamodb:us-east-1:000000000000:table/{table}");
    client
        .put_item()
        .table_name(&arn)
        .item("p", s("k"))
        .send()
        .await
        .unwrap();
    let got = client
        .get_item()
        .table_name(&arn)
        .key("p", s("k"))
        .send()
        .await
        .unwrap();
    assert!(got.item.is_some());
    let scanned = client.scan().table_name(&arn).send().await.unwrap();
    assert_eq!(scanned.count, 1);
    let described = client
        .describe_table()
        .table_name(&arn)
        .send()
        .await
        .unwrap();
    assert_eq!(
        described.table.unwrap().table_name.as_deref(),
        Some(table.as_str())
    );
    client
        .batch_get_item()
        .request_items(
            &arn,
            aws_sdk_dynamodb::types::KeysAndAttributes::builder()
                .keys(std::collections::HashMap::from([("p".to_string(), s("k"))]))
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    // An ARN of another region or account names no table here.
    for other in [
        format!("arn:aws:dynamodb:us-west-2:000000000000:table/{table}"),
        format!("arn:aws:dynamodb:us-east-1:123456789012:table/{table}"),
    ] {
        util::assert_error(
            client
                .get_item()
                .table_name(&other)
                .key("p", s("k"))
                .send()
                .await,
            "ResourceNotFoundException",
            "Requested resource not found",
        );
    }
    let too_long = format!(
        "arn:aws:dynamodb:us-east-1:000000000000:table/{}",
        "x".repeat(1000)
    );
    util::assert_validation(
        client.get_item().table_name(&too_long).key("p", s("k")).send().await,
        &format!("1 validation error detected: Value '{too_long}' at 'tableName' failed to satisfy constraint: Member must have length less than or equal to 1024"),
    );
}

#[tokio::test]
async fn tables_keep_their_region_across_a_restart() {
    // Tables of the server's own --region are stored as before regions
    // existed, so older data directories read back unchanged.
    let dir = tempfile::tempdir().unwrap();
    let server = util::ServerProcess::with_data_dir(dir.path());
    let east1 = util::client_for(server.endpoint());
    let east2 = util::client_in_region(server.endpoint(), "us-east-2");
    let home = util::create_table(&east1, "home", &[("p", ScalarAttributeType::S)]).await;
    let away = util::create_table(&east2, "away", &[("p", ScalarAttributeType::S)]).await;
    east2
        .put_item()
        .table_name(&away)
        .item("p", s("k"))
        .send()
        .await
        .unwrap();
    assert!(server.terminate().success());

    let server = util::ServerProcess::with_data_dir(dir.path());
    let east1 = util::client_for(server.endpoint());
    let east2 = util::client_in_region(server.endpoint(), "us-east-2");
    let names = |client: Client| async move {
        client
            .list_tables()
            .send()
            .await
            .unwrap()
            .table_names
            .unwrap_or_default()
    };
    assert_eq!(names(east1.clone()).await, vec![home.clone()]);
    assert_eq!(names(east2.clone()).await, vec![away.clone()]);
    let got = east2
        .get_item()
        .table_name(&away)
        .key("p", s("k"))
        .send()
        .await
        .unwrap();
    assert!(got.item.is_some());
    let arn = east2
        .describe_table()
        .table_name(&away)
        .send()
        .await
        .unwrap();
    assert!(arn
        .table
        .unwrap()
        .table_arn
        .unwrap()
        .starts_with("arn:aws:dynamodb:us-east-2:"));
    drop(server);
}
