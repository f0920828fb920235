//! The control plane: CreateTable (and its validation), DescribeTable's shape,
//! ListTables pagination, DeleteTable, UpdateTable, and secondary index
//! definitions.
//!
//! CreateTable's validation messages follow AWS. DynamoDB Local words almost
//! all of them its own way (for example "No provisioned throughput specified
//! for the table", "Cannot create preexisting table"), omits TableId, reports
//! a deleted table as ACTIVE and accepts PAY_PER_REQUEST with
//! ProvisionedThroughput, so those tests fail there by design.

use std::time::SystemTime;

use crate::util::{self, assert_error, assert_error_one_of, assert_validation, attr_def, key};
use aws_sdk_dynamodb::types::{
    BillingMode, GlobalSecondaryIndex, KeyType, LocalSecondaryIndex, Projection, ProjectionType,
    ProvisionedThroughput, ScalarAttributeType as T, StreamSpecification, StreamViewType,
    TableStatus,
};

fn throughput(read: i64, write: i64) -> ProvisionedThroughput {
    ProvisionedThroughput::builder()
        .read_capacity_units(read)
        .write_capacity_units(write)
        .build()
        .unwrap()
}

#[tokio::test]
async fn create_hash_only_table_describes_it_active() {
    let client = util::client();
    let name = util::unique_name("hash-only");
    let created = client
        .create_table()
        .table_name(&name)
        .key_schema(key("pk", KeyType::Hash))
        .attribute_definitions(attr_def("pk", T::S))
        .billing_mode(BillingMode::PayPerRequest)
        .send()
        .await
        .unwrap();
    let created = created.table_description.unwrap();
    assert_eq!(created.table_name(), Some(name.as_str()));
    assert_eq!(created.key_schema(), [key("pk", KeyType::Hash)]);

    let table = client
        .describe_table()
        .table_name(&name)
        .send()
        .await
        .unwrap()
        .table
        .unwrap();
    assert_eq!(table.table_name(), Some(name.as_str()));
    assert_eq!(table.table_status(), Some(&TableStatus::Active));
    assert_eq!(table.key_schema(), [key("pk", KeyType::Hash)]);
    assert_eq!(table.attribute_definitions(), [attr_def("pk", T::S)]);
    assert_eq!(table.item_count(), Some(0));
    assert_eq!(table.table_size_bytes(), Some(0));
    let arn = table.table_arn().unwrap();
    assert!(
        arn.starts_with("arn:aws:dynamodb:") && arn.ends_with(&format!(":table/{name}")),
        "{arn}"
    );
    // DynamoDB Local has no TableId.
    let id = table.table_id().expect("TableId is present");
    assert_eq!(id.len(), 36, "TableId is a UUID: {id}");
    assert_eq!(id.matches('-').count(), 4, "TableId is a UUID: {id}");
    let created_at = table.creation_date_time().unwrap();
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let age = now - created_at.as_secs_f64();
    assert!((-5.0..120.0).contains(&age), "created {age} s ago");
    assert_eq!(
        table.billing_mode_summary().and_then(|b| b.billing_mode()),
        Some(&BillingMode::PayPerRequest)
    );
    let pt = table.provisioned_throughput().unwrap();
    assert_eq!(pt.read_capacity_units(), Some(0));
    assert_eq!(pt.write_capacity_units(), Some(0));
    assert_eq!(pt.number_of_decreases_today(), Some(0));
}

#[tokio::test]
async fn create_table_with_each_scalar_key_type_and_sort_key() {
    let client = util::client();
    for (hash, range) in [(T::S, T::N), (T::N, T::B), (T::B, T::S)] {
        let name = util::unique_name("hash-range");
        client
            .create_table()
            .table_name(&name)
            .key_schema(key("h", KeyType::Hash))
            .key_schema(key("r", KeyType::Range))
            .attribute_definitions(attr_def("h", hash.clone()))
            .attribute_definitions(attr_def("r", range.clone()))
            .billing_mode(BillingMode::Provisioned)
            .provisioned_throughput(throughput(3, 4))
            .send()
            .await
            .unwrap();
        let table = client
            .describe_table()
            .table_name(&name)
            .send()
            .await
            .unwrap()
            .table
            .unwrap();
        assert_eq!(
            table.key_schema(),
            [key("h", KeyType::Hash), key("r", KeyType::Range)]
        );
        let mut defs = table.attribute_definitions().to_vec();
        defs.sort_by(|a, b| a.attribute_name().cmp(b.attribute_name()));
        assert_eq!(defs, [attr_def("h", hash), attr_def("r", range)]);
        let pt = table.provisioned_throughput().unwrap();
        assert_eq!(
            (pt.read_capacity_units(), pt.write_capacity_units()),
            (Some(3), Some(4))
        );
    }
}

#[tokio::test]
async fn table_name_with_invalid_characters_is_rejected() {
    let client = util::client();
    let result = client
        .create_table()
        .table_name("no spaces allowed")
        .key_schema(key("p", KeyType::Hash))
        .attribute_definitions(attr_def("p", T::S))
        .billing_mode(BillingMode::PayPerRequest)
        .send()
        .await;
    assert_validation(
        result,
        "1 validation error detected: Value 'no spaces allowed' at 'tableName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+",
    );
}

#[tokio::test]
async fn table_name_shorter_than_three_characters_is_rejected() {
    let client = util::client();
    let result = client
        .create_table()
        .table_name("ab")
        .key_schema(key("p", KeyType::Hash))
        .attribute_definitions(attr_def("p", T::S))
        .billing_mode(BillingMode::PayPerRequest)
        .send()
        .await;
    assert_error_one_of(
        result,
        "ValidationException",
        &[
            "TableName must be at least 3 characters long and at most 255 characters long",
            "1 validation error detected: Value 'ab' at 'tableName' failed to satisfy constraint: Member must have length greater than or equal to 3",
        ],
    );
}

#[tokio::test]
async fn table_name_of_255_characters_is_accepted_and_256_rejected() {
    let client = util::client();
    let prefix = util::unique_name("long");
    let ok = format!("{prefix}{}", "x".repeat(255 - prefix.len()));
    client
        .create_table()
        .table_name(&ok)
        .key_schema(key("p", KeyType::Hash))
        .attribute_definitions(attr_def("p", T::S))
        .billing_mode(BillingMode::PayPerRequest)
        .send()
        .await
        .unwrap();
    let too_long = format!("{ok}x");
    let result = client
        .create_table()
        .table_name(&too_long)
        .key_schema(key("p", KeyType::Hash))
        .attribute_definitions(attr_def("p", T::S))
        .billing_mode(BillingMode::PayPerRequest)
        .send()
        .await;
    let message_256 = format!(
        "1 validation error detected: Value '{too_long}' at 'tableName' failed to satisfy constraint: Member must have length less than or equal to 255"
    );
    assert_error_one_of(
        result,
        "ValidationException",
        &[
            "TableName must be at least 3 characters long and at most 255 characters long",
            &message_256,
        ],
    );
}

#[tokio::test]
async fn key_attribute_missing_from_definitions_is_rejected() {
    let client = util::client();
    let result = client
        .create_table()
        .table_name(util::unique_name("bad"))
        .key_schema(key("p", KeyType::Hash))
        .attribute_definitions(attr_def("q", T::S))
        .billing_mode(BillingMode::PayPerRequest)
        .send()
        .await;
    assert_validation(
        result,
        "One or more parameter values were invalid: Some index key attributes are not defined in AttributeDefinitions. Keys: [p], AttributeDefinitions: [q]",
    );
}

#[tokio::test]
async fn unused_attribute_definition_is_rejected() {
    let client = util::client();
    let result = client
        .create_table()
        .table_name(util::unique_name("bad"))
        .key_schema(key("p", KeyType::Hash))
        .attribute_definitions(attr_def("p", T::S))
        .attribute_definitions(attr_def("unused", T::S))
        .billing_mode(BillingMode::PayPerRequest)
        .send()
        .await;
    assert_validation(
        result,
        "One or more parameter values were invalid: Number of attributes in KeySchema does not exactly match number of attributes defined in AttributeDefinitions",
    );
}

#[tokio::test]
async fn first_key_that_is_not_hash_is_rejected() {
    let client = util::client();
    let result = client
        .create_table()
        .table_name(util::unique_name("bad"))
        .key_schema(key("p", KeyType::Range))
        .attribute_definitions(attr_def("p", T::S))
        .billing_mode(BillingMode::PayPerRequest)
        .send()
        .await;
    assert_validation(
        result,
        "Invalid KeySchema: The first KeySchemaElement is not a HASH key type",
    );
}

#[tokio::test]
async fn two_hash_keys_are_rejected() {
    let client = util::client();
    let result = client
        .create_table()
        .table_name(util::unique_name("bad"))
        .key_schema(key("p", KeyType::Hash))
        .key_schema(key("q", KeyType::Hash))
        .attribute_definitions(attr_def("p", T::S))
        .attribute_definitions(attr_def("q", T::S))
        .billing_mode(BillingMode::PayPerRequest)
        .send()
        .await;
    assert_validation(
        result,
        "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type",
    );
}

#[tokio::test]
async fn key_attribute_type_other_than_s_n_b_is_rejected() {
    let client = util::client();
    let result = client
        .create_table()
        .table_name(util::unique_name("bad"))
        .key_schema(key("p", KeyType::Hash))
        .attribute_definitions(attr_def("p", T::from("BOOL")))
        .billing_mode(BillingMode::PayPerRequest)
        .send()
        .await;
    assert_validation(
        result,
        "1 validation error detected: Value 'BOOL' at 'attributeDefinitions.1.member.attributeType' failed to satisfy constraint: Member must satisfy enum value set: [B, N, S]",
    );
}

#[tokio::test]
async fn pay_per_request_with_provisioned_throughput_is_rejected() {
    // DynamoDB Local accepts this request.
    let client = util::client();
    let result = client
        .create_table()
        .table_name(util::unique_name("bad"))
        .key_schema(key("p", KeyType::Hash))
        .attribute_definitions(attr_def("p", T::S))
        .billing_mode(BillingMode::PayPerRequest)
        .provisioned_throughput(throughput(1, 1))
        .send()
        .await;
    assert_validation(
        result,
        "One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST",
    );
}

#[tokio::test]
async fn provisioned_without_throughput_is_rejected() {
    let client = util::client();
    for billing in [Some(BillingMode::Provisioned), None] {
        let result = client
            .create_table()
            .table_name(util::unique_name("bad"))
            .key_schema(key("p", KeyType::Hash))
            .attribute_definitions(attr_def("p", T::S))
            .set_billing_mode(billing)
            .send()
            .await;
        assert_validation(
            result,
            "One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED",
        );
    }
}

#[tokio::test]
async fn zero_read_capacity_is_rejected() {
    let client = util::client();
    let result = client
        .create_table()
        .table_name(util::unique_name("bad"))
        .key_schema(key("p", KeyType::Hash))
        .attribute_definitions(attr_def("p", T::S))
        .billing_mode(BillingMode::Provisioned)
        .provisioned_throughput(throughput(0, 1))
        .send()
        .await;
    assert_validation(
        result,
        "1 validation error detected: Value '0' at 'provisionedThroughput.readCapacityUnits' failed to satisfy constraint: Member must have value greater than or equal to 1",
    );
}

#[tokio::test]
async fn creating_an_existing_table_is_resource_in_use() {
    let client = util::client();
    let name = util::table_s(&client).await;
    let result = client
        .create_table()
        .table_name(&name)
        .key_schema(key("p", KeyType::Hash))
        .attribute_definitions(attr_def("p", T::S))
        .billing_mode(BillingMode::PayPerRequest)
        .send()
        .await;
    assert_error(
        result,
        "ResourceInUseException",
        &format!("Table already exists: {name}"),
    );
}

#[tokio::test]
async fn describing_a_missing_table_is_resource_not_found() {
    let client = util::client();
    let name = util::unique_name("missing");
    let result = client.describe_table().table_name(&name).send().await;
    assert_error(
        result,
        "ResourceNotFoundException",
        &format!("Requested resource not found: Table: {name} not found"),
    );
}

#[tokio::test]
async fn list_tables_pages_through_names_in_order() {
    let client = util::client();
    let prefix = util::unique_name("list");
    let mut mine = Vec::new();
    for i in 0..3 {
        let name = format!("{prefix}-{i}");
        client
            .create_table()
            .table_name(&name)
            .key_schema(key("p", KeyType::Hash))
            .attribute_definitions(attr_def("p", T::S))
            .billing_mode(BillingMode::PayPerRequest)
            .send()
            .await
            .unwrap();
        mine.push(name);
    }

    // Page with Limit 2 from just before our names: they come back in order,
    // each page at most 2 long, LastEvaluatedTableName the page's last name.
    let mut seen = Vec::new();
    let mut start = Some(format!("{prefix}-"));
    let mut pages = 0;
    while let Some(from) = start.take() {
        let page = client
            .list_tables()
            .limit(2)
            .exclusive_start_table_name(&from)
            .send()
            .await
            .unwrap();
        pages += 1;
        let names = page.table_names().to_vec();
        assert!(names.len() <= 2, "{names:?}");
        assert!(
            names.iter().all(|n| n.as_str() > from.as_str()),
            "{names:?}"
        );
        if let Some(last) = page.last_evaluated_table_name() {
            assert_eq!(Some(last), names.last().map(String::as_str));
        }
        let done = names.iter().any(|n| !n.starts_with(&prefix));
        seen.extend(names.into_iter().filter(|n| n.starts_with(&prefix)));
        if !done {
            start = page.last_evaluated_table_name().map(str::to_string);
        }
        assert!(pages < 10, "pagination does not end");
    }
    assert_eq!(seen, mine);

    // ExclusiveStartTableName need not be an existing table.
    let after_first = client
        .list_tables()
        .exclusive_start_table_name(&mine[0])
        .limit(1)
        .send()
        .await
        .unwrap();
    assert_eq!(after_first.table_names(), [mine[1].clone()]);
    assert_eq!(
        after_first.last_evaluated_table_name(),
        Some(mine[1].as_str())
    );
}

#[tokio::test]
async fn list_tables_limit_out_of_range_is_rejected() {
    // DynamoDB Local: "Limit must be greater than or equal to 1".
    let client = util::client();
    assert_validation(
        client.list_tables().limit(0).send().await,
        "1 validation error detected: Value '0' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1",
    );
    assert_validation(
        client.list_tables().limit(101).send().await,
        "1 validation error detected: Value '101' at 'limit' failed to satisfy constraint: Member must have value less than or equal to 100",
    );
}

#[tokio::test]
async fn deleted_table_is_gone() {
    let client = util::client();
    let name = util::table_s(&client).await;
    let deleted = client
        .delete_table()
        .table_name(&name)
        .send()
        .await
        .unwrap()
        .table_description
        .unwrap();
    assert_eq!(deleted.table_name(), Some(name.as_str()));
    // DynamoDB Local reports ACTIVE here.
    assert_eq!(deleted.table_status(), Some(&TableStatus::Deleting));

    let not_found = format!("Requested resource not found: Table: {name} not found");
    assert_error(
        client.describe_table().table_name(&name).send().await,
        "ResourceNotFoundException",
        &not_found,
    );
    assert_error(
        client.delete_table().table_name(&name).send().await,
        "ResourceNotFoundException",
        &not_found,
    );
    assert_error(
        client
            .put_item()
            .table_name(&name)
            .item("p", util::s("x"))
            .send()
            .await,
        "ResourceNotFoundException",
        "Requested resource not found",
    );
    assert_error(
        client
            .get_item()
            .table_name(&name)
            .key("p", util::s("x"))
            .send()
            .await,
        "ResourceNotFoundException",
        "Requested resource not found",
    );
    let listed = client
        .list_tables()
        .exclusive_start_table_name(&name[..name.len() - 1])
        .limit(5)
        .send()
        .await
        .unwrap();
    assert!(!listed.table_names().contains(&name));
}

#[tokio::test]
async fn table_can_be_recreated_after_delete() {
    let client = util::client();
    let name = util::table_s(&client).await;
    client
        .put_item()
        .table_name(&name)
        .item("p", util::s("old"))
        .send()
        .await
        .unwrap();
    client
        .delete_table()
        .table_name(&name)
        .send()
        .await
        .unwrap();
    client
        .create_table()
        .table_name(&name)
        .key_schema(key("p", KeyType::Hash))
        .attribute_definitions(attr_def("p", T::S))
        .billing_mode(BillingMode::PayPerRequest)
        .send()
        .await
        .unwrap();
    let got = client
        .get_item()
        .table_name(&name)
        .key("p", util::s("old"))
        .consistent_read(true)
        .send()
        .await
        .unwrap();
    assert!(got.item.is_none(), "a recreated table starts empty");
}

#[tokio::test]
async fn update_table_switches_billing_mode_and_throughput() {
    let client = util::client();
    let name = util::table_s(&client).await;
    client
        .update_table()
        .table_name(&name)
        .billing_mode(BillingMode::Provisioned)
        .provisioned_throughput(throughput(5, 7))
        .send()
        .await
        .unwrap();
    let table = client
        .describe_table()
        .table_name(&name)
        .send()
        .await
        .unwrap()
        .table
        .unwrap();
    assert_eq!(
        table.billing_mode_summary().and_then(|b| b.billing_mode()),
        Some(&BillingMode::Provisioned)
    );
    let pt = table.provisioned_throughput().unwrap();
    assert_eq!(
        (pt.read_capacity_units(), pt.write_capacity_units()),
        (Some(5), Some(7))
    );

    client
        .update_table()
        .table_name(&name)
        .provisioned_throughput(throughput(10, 20))
        .send()
        .await
        .unwrap();
    let pt = client
        .describe_table()
        .table_name(&name)
        .send()
        .await
        .unwrap()
        .table
        .unwrap()
        .provisioned_throughput
        .unwrap();
    assert_eq!(
        (pt.read_capacity_units(), pt.write_capacity_units()),
        (Some(10), Some(20))
    );
}

#[tokio::test]
async fn update_table_stores_stream_specification() {
    let client = util::client();
    let name = util::table_s(&client).await;
    client
        .update_table()
        .table_name(&name)
        .stream_specification(
            StreamSpecification::builder()
                .stream_enabled(true)
                .stream_view_type(StreamViewType::NewAndOldImages)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let table = client
        .describe_table()
        .table_name(&name)
        .send()
        .await
        .unwrap()
        .table
        .unwrap();
    let spec = table.stream_specification().expect("StreamSpecification");
    assert!(spec.stream_enabled());
    assert_eq!(
        spec.stream_view_type(),
        Some(&StreamViewType::NewAndOldImages)
    );
    let arn = table.latest_stream_arn().expect("LatestStreamArn");
    assert!(arn.contains(&format!(":table/{name}/stream/")), "{arn}");
    assert!(table.latest_stream_label().is_some());
}

#[tokio::test]
async fn update_of_a_missing_table_is_resource_not_found() {
    let client = util::client();
    let name = util::unique_name("missing");
    assert_error(
        client
            .update_table()
            .table_name(&name)
            .billing_mode(BillingMode::PayPerRequest)
            .send()
            .await,
        "ResourceNotFoundException",
        &format!("Requested resource not found: Table: {name} not found"),
    );
}

#[tokio::test]
async fn secondary_index_definitions_are_accepted_and_described() {
    let client = util::client();
    let name = util::unique_name("indexed");
    client
        .create_table()
        .table_name(&name)
        .key_schema(key("p", KeyType::Hash))
        .key_schema(key("c", KeyType::Range))
        .attribute_definitions(attr_def("p", T::S))
        .attribute_definitions(attr_def("c", T::N))
        .attribute_definitions(attr_def("g", T::S))
        .attribute_definitions(attr_def("l", T::B))
        .billing_mode(BillingMode::PayPerRequest)
        .global_secondary_indexes(
            GlobalSecondaryIndex::builder()
                .index_name("by-g")
                .key_schema(key("g", KeyType::Hash))
                .key_schema(key("c", KeyType::Range))
                .projection(
                    Projection::builder()
                        .projection_type(ProjectionType::Include)
                        .non_key_attributes("z")
                        .build(),
                )
                .build()
                .unwrap(),
        )
        .local_secondary_indexes(
            LocalSecondaryIndex::builder()
                .index_name("by-l")
                .key_schema(key("p", KeyType::Hash))
                .key_schema(key("l", KeyType::Range))
                .projection(
                    Projection::builder()
                        .projection_type(ProjectionType::KeysOnly)
                        .build(),
                )
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let table = client
        .describe_table()
        .table_name(&name)
        .send()
        .await
        .unwrap()
        .table
        .unwrap();
    let table_arn = table.table_arn().unwrap().to_string();

    let [gsi] = table.global_secondary_indexes() else {
        panic!("one GSI: {:?}", table.global_secondary_indexes());
    };
    assert_eq!(gsi.index_name(), Some("by-g"));
    assert_eq!(
        gsi.key_schema(),
        [key("g", KeyType::Hash), key("c", KeyType::Range)]
    );
    let projection = gsi.projection().unwrap();
    assert_eq!(projection.projection_type(), Some(&ProjectionType::Include));
    assert_eq!(projection.non_key_attributes(), ["z".to_string()]);
    assert_eq!(
        gsi.index_arn(),
        Some(format!("{table_arn}/index/by-g").as_str())
    );
    assert_eq!(
        gsi.index_status(),
        Some(&aws_sdk_dynamodb::types::IndexStatus::Active)
    );

    let [lsi] = table.local_secondary_indexes() else {
        panic!("one LSI: {:?}", table.local_secondary_indexes());
    };
    assert_eq!(lsi.index_name(), Some("by-l"));
    assert_eq!(
        lsi.key_schema(),
        [key("p", KeyType::Hash), key("l", KeyType::Range)]
    );
    assert_eq!(
        lsi.projection().unwrap().projection_type(),
        Some(&ProjectionType::KeysOnly)
    );
    assert_eq!(
        lsi.index_arn(),
        Some(format!("{table_arn}/index/by-l").as_str())
    );
}

#[tokio::test]
async fn local_index_on_a_hash_only_table_is_rejected() {
    let client = util::client();
    let result = client
        .create_table()
        .table_name(util::unique_name("bad"))
        .key_schema(key("p", KeyType::Hash))
        .attribute_definitions(attr_def("p", T::S))
        .attribute_definitions(attr_def("l", T::S))
        .billing_mode(BillingMode::PayPerRequest)
        .local_secondary_indexes(
            LocalSecondaryIndex::builder()
                .index_name("lsi")
                .key_schema(key("p", KeyType::Hash))
                .key_schema(key("l", KeyType::Range))
                .projection(
                    Projection::builder()
                        .projection_type(ProjectionType::All)
                        .build(),
                )
                .build()
                .unwrap(),
        )
        .send()
        .await;
    assert_validation(
        result,
        "One or more parameter values were invalid: Table KeySchema does not have a range key, which is required when specifying a LocalSecondaryIndex",
    );
}

#[tokio::test]
async fn global_index_key_missing_from_definitions_is_rejected() {
    let client = util::client();
    let result = client
        .create_table()
        .table_name(util::unique_name("bad"))
        .key_schema(key("p", KeyType::Hash))
        .attribute_definitions(attr_def("p", T::S))
        .billing_mode(BillingMode::PayPerRequest)
        .global_secondary_indexes(
            GlobalSecondaryIndex::builder()
                .index_name("gsi")
                .key_schema(key("x", KeyType::Hash))
                .projection(
                    Projection::builder()
                        .projection_type(ProjectionType::All)
                        .build(),
                )
                .build()
                .unwrap(),
        )
        .send()
        .await;
    assert_validation(
        result,
        "One or more parameter values were invalid: Some index key attributes are not defined in AttributeDefinitions. Keys: [x], AttributeDefinitions: [p]",
    );
}

/// UpdateTable's GSI Create gets CreateTable's member constraints: a
/// missing IndexName or Projection, an unknown ProjectionType or
/// AttributeType is a ValidationException (the SDK refuses to send these,
/// so they go raw). A missing member used to end the connection.
#[tokio::test]
async fn update_table_index_create_members_are_validated() {
    let client = util::client();
    let table = util::table_s(&client).await;
    let keys = serde_json::json!([{"AttributeName": "g", "KeyType": "HASH"}]);
    let cases = [
        (
            serde_json::json!({"IndexName": "gix", "KeySchema": keys}),
            "S",
            "Value null at 'globalSecondaryIndexUpdates.1.member.create.projection' failed to satisfy constraint: Member must not be null",
        ),
        (
            serde_json::json!({"KeySchema": keys, "Projection": {"ProjectionType": "ALL"}}),
            "S",
            "Value null at 'globalSecondaryIndexUpdates.1.member.create.indexName' failed to satisfy constraint: Member must not be null",
        ),
        (
            serde_json::json!({"IndexName": "gix", "KeySchema": keys, "Projection": {"ProjectionType": "FOO"}}),
            "S",
            "Value 'FOO' at 'globalSecondaryIndexUpdates.1.member.create.projection.projectionType' failed to satisfy constraint: Member must satisfy enum value set: [ALL, KEYS_ONLY, INCLUDE]",
        ),
        (
            serde_json::json!({"IndexName": "gix", "KeySchema": keys, "Projection": {"ProjectionType": "ALL"}}),
            "X",
            "Value 'X' at 'attributeDefinitions.1.member.attributeType' failed to satisfy constraint: Member must satisfy enum value set: [B, N, S]",
        ),
    ];
    for (create, attribute_type, expected) in cases {
        let response = util::raw::call_json(
            "UpdateTable",
            serde_json::json!({
                "TableName": table,
                "AttributeDefinitions": [{"AttributeName": "g", "AttributeType": attribute_type}],
                "GlobalSecondaryIndexUpdates": [{"Create": create}],
            }),
        )
        .await;
        assert_eq!(response.status, 400);
        assert_eq!(response.error_name(), "ValidationException");
        assert_eq!(
            response.json()["message"],
            format!("1 validation error detected: {expected}")
        );
    }
}
