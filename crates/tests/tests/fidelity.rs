//! Behaviours where DynamoDB differs from the obvious reading of its
//! documentation, each checked against AWS's recorded answers (ScyllaDB's
//! AWS-validated suite, moto's AWS-verified tests) and asserted exactly.

mod common;

use aws_sdk_dynamodb::types::{
    GlobalSecondaryIndex, KeyType, PutRequest, ReturnConsumedCapacity, ScalarAttributeType,
    WriteRequest,
};
use aws_sdk_dynamodb::Client;
use common::raw::{self, AUTHORIZATION, CONTENT_TYPE, TARGET_PREFIX};
use common::{attr_def, key, s};

/// A table keyed by `p` with a GSI `gsi` on `x` projecting everything.
async fn table_with_gsi(client: &Client) -> String {
    let name = common::unique_name("gsi");
    client
        .create_table()
        .table_name(&name)
        .billing_mode(aws_sdk_dynamodb::types::BillingMode::PayPerRequest)
        .key_schema(key("p", KeyType::Hash))
        .attribute_definitions(attr_def("p", ScalarAttributeType::S))
        .attribute_definitions(attr_def("x", ScalarAttributeType::S))
        .global_secondary_indexes(
            GlobalSecondaryIndex::builder()
                .index_name("gsi")
                .key_schema(key("x", KeyType::Hash))
                .projection(
                    aws_sdk_dynamodb::types::Projection::builder()
                        .projection_type(aws_sdk_dynamodb::types::ProjectionType::All)
                        .build(),
                )
                .build()
                .unwrap(),
        )
        .send()
        .await
        .expect("CreateTable succeeds");
    name
}

#[tokio::test]
async fn a_scan_is_charged_for_each_of_the_four_partitions_it_reads() {
    // AWS (ScyllaDB's test_scan_consumed_capacity): a full Scan of a table
    // holding one tiny item costs 4 units, 2 eventually consistent.
    let client = common::client();
    let table = common::table_s(&client).await;
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
    let client = common::client();
    let table = table_with_gsi(&client).await;
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
    let client = common::client();
    let table = table_with_gsi(&client).await;
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

#[tokio::test]
async fn an_index_projection_without_a_type_is_refused() {
    // AWS: "Unknown ProjectionType: null" (ScyllaDB's
    // test_gsi_missing_projection_type), although the API reference calls
    // ProjectionType optional.
    let response = raw::call_json(
        "CreateTable",
        serde_json::json!({
            "TableName": common::unique_name("noproj"),
            "BillingMode": "PAY_PER_REQUEST",
            "KeySchema": [{"AttributeName": "p", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "p", "AttributeType": "S"}],
            "GlobalSecondaryIndexes": [{
                "IndexName": "gsi",
                "KeySchema": [{"AttributeName": "p", "KeyType": "HASH"}],
                "Projection": {}
            }]
        }),
    )
    .await;
    assert_eq!(response.status, 400);
    assert_eq!(response.error_name(), "ValidationException");
    assert_eq!(response.json()["message"], "Unknown ProjectionType: null");
}

#[tokio::test]
async fn duplicate_non_key_attributes_in_a_projection_are_refused() {
    let response = raw::call_json(
        "CreateTable",
        serde_json::json!({
            "TableName": common::unique_name("dupproj"),
            "BillingMode": "PAY_PER_REQUEST",
            "KeySchema": [{"AttributeName": "p", "KeyType": "HASH"}],
            "AttributeDefinitions": [
                {"AttributeName": "p", "AttributeType": "S"},
                {"AttributeName": "x", "AttributeType": "S"}
            ],
            "GlobalSecondaryIndexes": [{
                "IndexName": "gsi",
                "KeySchema": [{"AttributeName": "x", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a", "a"]}
            }]
        }),
    )
    .await;
    assert_eq!(response.status, 400);
    assert_eq!(
        response.json()["message"],
        "One or more parameter values were invalid: Duplicate attribute name in NonKeyAttributes of index gsi: a"
    );
}

#[tokio::test]
async fn a_query_start_key_on_a_table_without_sort_key_is_invalid() {
    // AWS (ScyllaDB's test_query_no_sort_key_exclusive_start_key): a
    // partition of such a table holds one item, so no start key makes sense.
    let client = common::client();
    let table = common::table_s(&client).await;
    let result = client
        .query()
        .table_name(&table)
        .key_condition_expression("p = :p")
        .expression_attribute_values(":p", s("k1"))
        .exclusive_start_key("p", s("k1"))
        .send()
        .await;
    common::assert_validation(
        result,
        "The provided exclusive start key is invalid: ExclusiveStartKey: {p=AttributeValue: {S:k1}}",
    );
}

#[tokio::test]
async fn removing_a_nested_path_of_a_missing_item_is_ignored() {
    // AWS (ScyllaDB's test_nested_attribute_remove_from_missing_item): on an
    // existing item without `x` the same REMOVE is an invalid path.
    let client = common::client();
    let table = common::table_s(&client).await;
    for expression in ["REMOVE x.y", "REMOVE x[0]"] {
        client
            .update_item()
            .table_name(&table)
            .key("p", s("missing"))
            .update_expression(expression)
            .send()
            .await
            .unwrap_or_else(|e| panic!("{expression}: {e:?}"));
    }
    client
        .put_item()
        .table_name(&table)
        .item("p", s("present"))
        .send()
        .await
        .unwrap();
    let result = client
        .update_item()
        .table_name(&table)
        .key("p", s("present"))
        .update_expression("REMOVE x.y")
        .send()
        .await;
    common::assert_validation(
        result,
        "The document path provided in the update expression is invalid for update",
    );
}

#[tokio::test]
async fn headers_over_16_kb_get_bad_request() {
    let target = format!("{TARGET_PREFIX}ListTables");
    let long = "x".repeat(8192);
    let mut headers = vec![
        ("content-type", CONTENT_TYPE),
        ("x-amz-target", target.as_str()),
        ("authorization", AUTHORIZATION),
        ("header1", long.as_str()),
    ];
    let ok = raw::send("POST", "/", &headers, b"{}".to_vec())
        .await
        .unwrap();
    assert_eq!(ok.status, 200);
    headers.push(("header2", long.as_str()));
    let response = raw::send("POST", "/", &headers, b"{}".to_vec())
        .await
        .unwrap();
    assert_eq!(response.status, 400);
}

#[tokio::test]
async fn a_request_line_over_16_kb_gets_bad_request() {
    let target = format!("{TARGET_PREFIX}ListTables");
    let headers = [
        ("content-type", CONTENT_TYPE),
        ("x-amz-target", target.as_str()),
        ("authorization", AUTHORIZATION),
    ];
    let short = raw::send("POST", "/garbage", &headers, b"{}".to_vec())
        .await
        .unwrap();
    assert_eq!(short.status, 404);
    let path = format!("/{}", "x".repeat(17_000));
    let long = raw::send("POST", &path, &headers, b"{}".to_vec())
        .await
        .unwrap();
    assert_eq!(long.status, 400);
}

#[tokio::test]
async fn sets_come_back_sorted_as_the_emulators_return_them() {
    // AWS documents sets as unordered; DynamoDB Local and Dynoxide return
    // them sorted, and library tests compare whole items against that order.
    let client = common::client();
    let table = common::table_s(&client).await;
    client
        .put_item()
        .table_name(&table)
        .item("p", s("k"))
        .item("ss", common::ss(&["b", "a", "B", "é", "c"]))
        .item("ns", common::ns(&["10", "9", "-1", "1e2"]))
        .item(
            "bs",
            aws_sdk_dynamodb::types::AttributeValue::Bs(vec![
                aws_sdk_dynamodb::primitives::Blob::new(vec![0x80]),
                aws_sdk_dynamodb::primitives::Blob::new(vec![0x00]),
                aws_sdk_dynamodb::primitives::Blob::new(vec![0x7f]),
            ]),
        )
        .send()
        .await
        .unwrap();
    let item = client
        .get_item()
        .table_name(&table)
        .key("p", s("k"))
        .send()
        .await
        .unwrap()
        .item
        .unwrap();
    assert_eq!(item["ss"], common::ss(&["B", "a", "b", "c", "é"]));
    assert_eq!(item["ns"], common::ns(&["-1", "9", "10", "100"]));
    let bytes: Vec<Vec<u8>> = item["bs"]
        .as_bs()
        .unwrap()
        .iter()
        .map(|b| b.as_ref().to_vec())
        .collect();
    assert_eq!(bytes, vec![vec![0x00], vec![0x7f], vec![0x80]]);
    // ADD merges into the same order.
    let out = client
        .update_item()
        .table_name(&table)
        .key("p", s("k"))
        .update_expression("ADD ss :s, ns :n")
        .expression_attribute_values(":s", common::ss(&["zz", "0"]))
        .expression_attribute_values(":n", common::ns(&["5"]))
        .return_values(aws_sdk_dynamodb::types::ReturnValue::UpdatedNew)
        .send()
        .await
        .unwrap();
    let attributes = out.attributes.unwrap();
    assert_eq!(
        attributes["ss"],
        common::ss(&["0", "B", "a", "b", "c", "zz", "é"])
    );
    assert_eq!(attributes["ns"], common::ns(&["-1", "5", "9", "10", "100"]));
}

/// DynamoDB's newer validation prefixes these item-write checks.
const ONE_ERROR: &str = "1 validation error detected: ";

#[tokio::test]
async fn item_writes_word_expression_checks_as_one_validation_error() {
    // Messages from moto's AWS-verified tests (test_dynamodb_exceptions.py,
    // test_dynamodb_update_expressions.py).
    let client = common::client();
    let table = common::table_s(&client).await;
    let update = |expression: &str| {
        client
            .update_item()
            .table_name(&table)
            .key("p", s("k"))
            .update_expression(expression)
    };
    common::assert_validation(
        update("").send().await,
        &format!("{ONE_ERROR}Invalid UpdateExpression: The expression can not be empty;"),
    );
    for section in ["SET", "REMOVE", "ADD"] {
        let expression = match section {
            "SET" => "SET a = :v SET b = :v",
            "REMOVE" => "REMOVE a REMOVE b",
            _ => "ADD a :v ADD b :v",
        };
        let mut request = update(expression);
        if section != "REMOVE" {
            request = request.expression_attribute_values(":v", common::n("1"));
        }
        common::assert_validation(
            request.send().await,
            &format!("{ONE_ERROR}Invalid UpdateExpression: The \"{section}\" section can only be used once in an update expression;"),
        );
    }
    common::assert_validation(
        update("SET #d = :s")
            .expression_attribute_names("#d", "d")
            .set_expression_attribute_values(Some(Default::default()))
            .send()
            .await,
        &format!("{ONE_ERROR}ExpressionAttributeValues must not be empty"),
    );
    let unused = format!(
        "{ONE_ERROR}Value provided in ExpressionAttributeNames unused in expressions: keys: {{#count}}"
    );
    common::assert_validation(
        client
            .put_item()
            .table_name(&table)
            .item("p", s("k"))
            .condition_expression("attribute_not_exists(body)")
            .expression_attribute_names("#count", "count")
            .send()
            .await,
        &unused,
    );
    common::assert_validation(
        client
            .delete_item()
            .table_name(&table)
            .key("p", s("k"))
            .condition_expression("attribute_not_exists(body)")
            .expression_attribute_names("#count", "count")
            .send()
            .await,
        &unused,
    );
    // Reads keep the bare wording.
    common::assert_validation(
        client
            .get_item()
            .table_name(&table)
            .key("p", s("k"))
            .projection_expression("p")
            .expression_attribute_names("#count", "count")
            .send()
            .await,
        "Value provided in ExpressionAttributeNames unused in expressions: keys: {#count}",
    );
}

#[tokio::test]
async fn select_conflicts_are_prefixed_by_query_and_scan() {
    // moto 5.2.5's AWS-verified test_dynamodb_select.py (5.2.3 recorded
    // Scan's bare; AWS has since moved Scan to its newer validation).
    let client = common::client();
    let table = common::table_s(&client).await;
    let message = "Cannot specify the ProjectionExpression when choosing to get only the Count";
    let query = client
        .query()
        .table_name(&table)
        .key_condition_expression("p = :p")
        .expression_attribute_values(":p", s("k"))
        .select(aws_sdk_dynamodb::types::Select::Count)
        .projection_expression("p")
        .send()
        .await;
    common::assert_validation(query, &format!("{ONE_ERROR}{message}"));
    let scan = client
        .scan()
        .table_name(&table)
        .select(aws_sdk_dynamodb::types::Select::Count)
        .projection_expression("p")
        .send()
        .await;
    common::assert_validation(scan, &format!("{ONE_ERROR}{message}"));
}

#[tokio::test]
async fn a_segment_past_the_total_is_refused_without_echoing_either() {
    // moto 5.2.5's AWS-verified TestParallelScan.
    let client = common::client();
    let table = common::table_s(&client).await;
    let scan = client
        .scan()
        .table_name(&table)
        .segment(3)
        .total_segments(3)
        .send()
        .await;
    common::assert_validation(
        scan,
        "The Segment parameter is zero-based and must be less than parameter TotalSegments",
    );
}

#[tokio::test]
async fn tables_live_in_the_region_the_request_is_signed_for() {
    let east1 = common::client();
    let east2 = common::client_in_region(common::endpoint(), "us-east-2");
    let table = common::create_table(&east2, "regional", &[("p", ScalarAttributeType::S)]).await;
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
    common::assert_error(
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
    common::create_table(&east1, "unused", &[("p", ScalarAttributeType::S)]).await;
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
    let client = common::client();
    let table = common::table_s(&client).await;
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
        common::assert_error(
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
    common::assert_validation(
        client.get_item().table_name(&too_long).key("p", s("k")).send().await,
        &format!("1 validation error detected: Value '{too_long}' at 'tableName' failed to satisfy constraint: Member must have length less than or equal to 1024"),
    );
}

#[tokio::test]
async fn tables_keep_their_region_across_a_restart() {
    // Tables of the server's own --region are stored as before regions
    // existed, so older data directories read back unchanged.
    let dir = tempfile::tempdir().unwrap();
    let server = common::ServerProcess::with_data_dir(dir.path());
    let east1 = common::client_for(server.endpoint());
    let east2 = common::client_in_region(server.endpoint(), "us-east-2");
    let home = common::create_table(&east1, "home", &[("p", ScalarAttributeType::S)]).await;
    let away = common::create_table(&east2, "away", &[("p", ScalarAttributeType::S)]).await;
    east2
        .put_item()
        .table_name(&away)
        .item("p", s("k"))
        .send()
        .await
        .unwrap();
    assert!(server.terminate().success());

    let server = common::ServerProcess::with_data_dir(dir.path());
    let east1 = common::client_for(server.endpoint());
    let east2 = common::client_in_region(server.endpoint(), "us-east-2");
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

#[tokio::test]
async fn an_empty_key_fails_a_transaction_as_a_plain_validation_error() {
    // AWS (moto's AWS-verified test_transaction_with_empty_key): not a
    // cancellation, unlike a key of the wrong type.
    let client = common::client();
    let table = common::table_s(&client).await;
    let update = aws_sdk_dynamodb::types::Update::builder()
        .table_name(&table)
        .key("p", s(""))
        .update_expression("SET sth = :v")
        .expression_attribute_values(":v", common::n("0"))
        .build()
        .unwrap();
    let result = client
        .transact_write_items()
        .transact_items(
            aws_sdk_dynamodb::types::TransactWriteItem::builder()
                .update(update)
                .build(),
        )
        .send()
        .await;
    common::assert_validation(
        result,
        "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: p",
    );
    // So does an empty index key (DynamoDB Local agrees).
    let indexed = table_with_gsi(&client).await;
    let put = aws_sdk_dynamodb::types::Put::builder()
        .table_name(&indexed)
        .item("p", s("k"))
        .item("x", s(""))
        .build()
        .unwrap();
    let result = client
        .transact_write_items()
        .transact_items(
            aws_sdk_dynamodb::types::TransactWriteItem::builder()
                .put(put)
                .build(),
        )
        .send()
        .await;
    common::assert_validation(
        result,
        "One or more parameter values are not valid. A value specified for a secondary index key is not supported. The AttributeValue for a key attribute cannot contain an empty string value. IndexName: gsi, IndexKey: x",
    );
}

#[tokio::test]
async fn unused_attribute_definitions_beside_indexes_are_listed() {
    // AWS refuses definitions no key uses (moto's
    // test_create_table_with_redundant_attributes). DynamoDB Local accepts
    // them, and PynamoDB's integration tests (test_connection_integration,
    // test_table_integration) define an unused `number` beside their
    // indexes: those two tests fail here as they would on AWS.
    let response = raw::call_json(
        "CreateTable",
        serde_json::json!({
            "TableName": common::unique_name("unused"),
            "BillingMode": "PAY_PER_REQUEST",
            "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
            "AttributeDefinitions": [
                {"AttributeName": "id", "AttributeType": "S"},
                {"AttributeName": "user", "AttributeType": "S"},
                {"AttributeName": "created_at", "AttributeType": "N"}
            ],
            "GlobalSecondaryIndexes": [{
                "IndexName": "gsi_user-items",
                "KeySchema": [{"AttributeName": "user", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"}
            }]
        }),
    )
    .await;
    assert_eq!(response.status, 400);
    assert_eq!(
        response.json()["message"],
        "One or more parameter values were invalid: Some AttributeDefinitions are not used. AttributeDefinitions: [created_at, id, user], keys used: [id, user]"
    );
}

#[tokio::test]
async fn the_leniency_flag_drops_unused_definitions_as_dynamodb_local_does() {
    // PynamoDB's and ElectroDB's test setups declare attributes no key uses
    // (DynamoDB Local accepts them); --accept-unused-attribute-definitions
    // lets such a setup run here. The table is created without them.
    if common::is_external() {
        return;
    }
    let server =
        common::ServerProcess::spawn(&["--in-memory", "--accept-unused-attribute-definitions"]);
    let client = common::client_for(server.endpoint());
    let name = common::unique_name("lenient");
    client
        .create_table()
        .table_name(&name)
        .billing_mode(aws_sdk_dynamodb::types::BillingMode::PayPerRequest)
        .key_schema(key("id", KeyType::Hash))
        .attribute_definitions(attr_def("id", ScalarAttributeType::S))
        .attribute_definitions(attr_def("number", ScalarAttributeType::N))
        .send()
        .await
        .unwrap();
    let table = client
        .describe_table()
        .table_name(&name)
        .send()
        .await
        .unwrap();
    let defined: Vec<&str> = table
        .table()
        .unwrap()
        .attribute_definitions()
        .iter()
        .map(|d| d.attribute_name())
        .collect();
    assert_eq!(defined, vec!["id"]);
    server.terminate();
}

#[tokio::test]
async fn asking_for_the_throughput_a_table_has_is_refused() {
    let client = common::client();
    let name = common::unique_name("samept");
    let throughput = aws_sdk_dynamodb::types::ProvisionedThroughput::builder()
        .read_capacity_units(2)
        .write_capacity_units(3)
        .build()
        .unwrap();
    client
        .create_table()
        .table_name(&name)
        .key_schema(key("p", KeyType::Hash))
        .attribute_definitions(attr_def("p", ScalarAttributeType::S))
        .provisioned_throughput(throughput.clone())
        .send()
        .await
        .unwrap();
    let result = client
        .update_table()
        .table_name(&name)
        .provisioned_throughput(throughput)
        .send()
        .await;
    common::assert_validation(
        result,
        "The provisioned throughput for the table will not change. The requested value equals the current value. Current ReadCapacityUnits provisioned for the table: 2. Requested ReadCapacityUnits: 2. Current WriteCapacityUnits provisioned for the table: 3. Requested WriteCapacityUnits: 3. Refer to the Amazon DynamoDB Developer Guide for current limits and how to request higher limits.",
    );
}

#[tokio::test]
async fn asking_for_the_throughput_an_index_has_or_provisioned_mode_alone_is_refused() {
    // Recorded against AWS (ack-api-quirks DDB-TABLE-164, 2026-10-08).
    let response = raw::call_json(
        "CreateTable",
        serde_json::json!({
            "TableName": common::unique_name("samegsi"),
            "KeySchema": [{"AttributeName": "p", "KeyType": "HASH"}],
            "AttributeDefinitions": [
                {"AttributeName": "p", "AttributeType": "S"},
                {"AttributeName": "x", "AttributeType": "S"}
            ],
            "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
            "GlobalSecondaryIndexes": [{
                "IndexName": "gsi1",
                "KeySchema": [{"AttributeName": "x", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
                "ProvisionedThroughput": {"ReadCapacityUnits": 2, "WriteCapacityUnits": 2}
            }]
        }),
    )
    .await;
    let name = response.json()["TableDescription"]["TableName"]
        .as_str()
        .unwrap()
        .to_string();
    let update = |index_throughput: (u64, u64)| {
        raw::call_json(
            "UpdateTable",
            serde_json::json!({"TableName": name, "GlobalSecondaryIndexUpdates": [{"Update": {
                "IndexName": "gsi1",
                "ProvisionedThroughput": {
                    "ReadCapacityUnits": index_throughput.0,
                    "WriteCapacityUnits": index_throughput.1
                }
            }}]}),
        )
    };
    let same = update((2, 2)).await;
    assert_eq!(same.status, 400);
    assert_eq!(
        same.json()["message"],
        "The provisioned throughput for the index gsi1 will not change. The requested value equals the current value. Current ReadCapacityUnits provisioned for index gsi1: 2. Requested ReadCapacityUnits: 2. Current WriteCapacityUnits provisioned for index gsi1: 2. Requested WriteCapacityUnits: 2. Refer to the Amazon DynamoDB Developer Guide for current limits and how to request higher limits."
    );
    // Changing one of the two is accepted.
    assert_eq!(update((2, 3)).await.status, 200);
    let ghost = raw::call_json(
        "UpdateTable",
        serde_json::json!({"TableName": name, "GlobalSecondaryIndexUpdates": [{"Update": {
            "IndexName": "ghost",
            "ProvisionedThroughput": {"ReadCapacityUnits": 2, "WriteCapacityUnits": 2}
        }}]}),
    )
    .await;
    assert_eq!(
        ghost.json()["message"],
        format!("Requested resource not found: Index ghost for table {name}")
    );
    let alone = raw::call_json(
        "UpdateTable",
        serde_json::json!({"TableName": name, "BillingMode": "PROVISIONED"}),
    )
    .await;
    assert_eq!(alone.status, 400);
    assert_eq!(
        alone.json()["message"],
        "One or more parameter values were invalid: ProvisionedThroughput must be specified when BillingMode is PROVISIONED"
    );
    // On demand, an index's provisioned throughput cannot be updated.
    let on_demand = raw::call_json(
        "UpdateTable",
        serde_json::json!({"TableName": name, "BillingMode": "PAY_PER_REQUEST"}),
    )
    .await;
    assert_eq!(on_demand.status, 200, "{:?}", on_demand.json());
    assert_eq!(
        update((3, 3)).await.json()["message"],
        "One or more parameter values were invalid: The only Updates for index: gsi1 when TableThroughputMode is PAY_PER_REQUEST can be to OnDemandThroughput, WarmThroughput"
    );
}

#[tokio::test]
async fn no_op_table_updates_are_refused_in_aws_words() {
    // Recorded live against AWS in 2026-10 (ack-api-quirks DDB-TABLE-442).
    let client = common::client();
    let table = common::table_s(&client).await;
    let call = |op: &'static str, body: serde_json::Value| raw::call_json(op, body);
    let message = |r: &raw::Response| r.json()["message"].as_str().unwrap_or("").to_string();
    let nothing = call("UpdateTable", serde_json::json!({"TableName": table})).await;
    assert_eq!(
        message(&nothing),
        "At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, GlobalSecondaryIndexUpdates, SSESpecification, ReplicaUpdates, MultiAccountReplicaReady, ReplicaTransitRoleArn, MultiRegionConsistency, DeletionProtectionEnabled, OnDemandThroughput, WarmThroughput or TableClass is required"
    );
    let no_stream = call(
        "UpdateTable",
        serde_json::json!({"TableName": table, "StreamSpecification": {"StreamEnabled": false}}),
    )
    .await;
    assert_eq!(
        message(&no_stream),
        format!("Table has no stream to disable: TableName: {table}")
    );
    let enable = serde_json::json!({"TableName": table, "StreamSpecification": {
        "StreamEnabled": true, "StreamViewType": "KEYS_ONLY"}});
    assert_eq!(call("UpdateTable", enable.clone()).await.status, 200);
    assert_eq!(
        message(&call("UpdateTable", enable).await),
        format!("Table already has an enabled stream: TableName: {table}")
    );
    let ttl = |attribute: &str, enabled: bool| {
        call(
            "UpdateTimeToLive",
            serde_json::json!({"TableName": table, "TimeToLiveSpecification": {
                "AttributeName": attribute, "Enabled": enabled}}),
        )
    };
    assert_eq!(
        message(&ttl("exp", false).await),
        "TimeToLive is already disabled"
    );
    assert_eq!(ttl("exp", true).await.status, 200);
    assert_eq!(
        message(&ttl("exp", true).await),
        "TimeToLive is already enabled"
    );
    let other = "TimeToLive is active on a different AttributeName: current AttributeName is exp";
    assert_eq!(message(&ttl("other", true).await), other);
    assert_eq!(message(&ttl("other", false).await), other);
}

#[tokio::test]
async fn tagging_a_malformed_arn_is_a_validation_error() {
    let client = common::client();
    let tag = aws_sdk_dynamodb::types::Tag::builder()
        .key("k")
        .value("v")
        .build()
        .unwrap();
    common::assert_validation(
        client
            .tag_resource()
            .resource_arn("I_do_not_exist")
            .tags(tag)
            .send()
            .await,
        "One or more parameter values were invalid: ARNs must start with 'arn:': I_do_not_exist",
    );
    let arn = |table: &str| format!("arn:aws:dynamodb:us-east-1:000000000000:table/{table}");
    let table = common::table_s(&client).await;
    let empty_tags = raw::call_json(
        "TagResource",
        serde_json::json!({"ResourceArn": arn(&table), "Tags": []}),
    )
    .await;
    assert_eq!(
        empty_tags.json()["message"],
        "Atleast one Tag needs to be provided as Input."
    );
    let empty_keys = raw::call_json(
        "UntagResource",
        serde_json::json!({"ResourceArn": arn(&table), "TagKeys": []}),
    )
    .await;
    assert_eq!(
        empty_keys.json()["message"],
        "Atleast one Tag Key needs to be provided as Input."
    );
}

#[tokio::test]
async fn length_errors_echo_the_collection_not_its_size() {
    let response = raw::call_json(
        "TransactWriteItems",
        serde_json::json!({"TransactItems": []}),
    )
    .await;
    assert_eq!(
        response.json()["message"],
        "1 validation error detected: Value '[]' at 'transactItems' failed to satisfy constraint: Member must have length greater than or equal to 1"
    );
}

#[tokio::test]
async fn a_batch_write_list_out_of_bounds_is_one_map_value_violation() {
    // AWS's wording, as clients have recorded it (2016-2025): one violation
    // for RequestItems, the map echoed as {table=[...]}, both bounds named.
    let client = common::client();
    let table = common::table_s(&client).await;
    let response = raw::call_json(
        "BatchWriteItem",
        serde_json::json!({"RequestItems": {table.clone(): []}}),
    )
    .await;
    assert_eq!(
        response.json()["message"],
        format!("1 validation error detected: Value '{{{table}=[]}}' at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: [Member must have length less than or equal to 25, Member must have length greater than or equal to 1]")
    );
    let puts: Vec<serde_json::Value> = (0..26)
        .map(|i| serde_json::json!({"PutRequest": {"Item": {"p": {"S": format!("k{i}")}}}}))
        .collect();
    let response = raw::call_json(
        "BatchWriteItem",
        serde_json::json!({"RequestItems": {table.clone(): puts}}),
    )
    .await;
    let message = response.json()["message"].as_str().unwrap().to_string();
    assert!(
        message.starts_with(&format!(
            "1 validation error detected: Value '{{{table}=[{{\"PutRequest\":{{\"Item\":{{\"p\":{{\"S\":\"k0\"}}}}}}}}, "
        )),
        "{message}"
    );
    assert!(
        message.ends_with("}]}' at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: [Member must have length less than or equal to 25, Member must have length greater than or equal to 1]"),
        "{message}"
    );
}

#[tokio::test]
async fn query_reports_empty_expressions_and_unused_names_before_key_condition_rules() {
    // DynamoDB Local's order, and AWS's (moto's AWS-verified
    // test_query_unused_attribute_name): empty FilterExpression, then empty
    // ProjectionExpression, then syntax, then unused names, then the rules
    // of key conditions.
    let client = common::client();
    let table = common::table_s(&client).await;
    let query = |extra: serde_json::Value| {
        let mut body = serde_json::json!({"TableName": table});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        async move { raw::call_json("Query", body).await.json()["message"].clone() }
    };
    assert_eq!(
        query(serde_json::json!({
            "KeyConditionExpression": "p = :p AND",
            "FilterExpression": "",
            "ExpressionAttributeValues": {":p": {"S": "x"}}
        }))
        .await,
        "Invalid FilterExpression: The expression can not be empty;"
    );
    assert_eq!(
        query(serde_json::json!({
            "KeyConditionExpression": "p = :p AND",
            "ProjectionExpression": "",
            "ExpressionAttributeValues": {":p": {"S": "x"}}
        }))
        .await,
        "Invalid ProjectionExpression: The expression can not be empty;"
    );
    assert_eq!(
        query(serde_json::json!({
            "KeyConditionExpression": "#0 = x",
            "ExpressionAttributeNames": {"#0": "p", "#count": "count"}
        }))
        .await,
        "Value provided in ExpressionAttributeNames unused in expressions: keys: {#count}"
    );
    assert_eq!(
        query(serde_json::json!({
            "KeyConditionExpression": "#0 = x",
            "ExpressionAttributeNames": {"#0": "p"}
        }))
        .await,
        "Invalid condition in KeyConditionExpression: Multiple attribute names used in one condition"
    );
}

#[tokio::test]
async fn query_and_scan_word_a_bad_limit_and_start_key_differently() {
    // An AWS-characterised conformance suite (verified against AWS, 2026):
    // Query names `Limit` without its value and gives a short start-key
    // error; Scan reports the generic constraint and the key's reason.
    let client = common::client();
    let table = common::table_ss(&client).await;
    let query = || {
        client
            .query()
            .table_name(&table)
            .key_condition_expression("p = :v")
            .expression_attribute_values(":v", s("v"))
    };
    common::assert_validation(
        query().limit(0).send().await,
        "1 validation error detected: Value at 'Limit' failed to satisfy constraint: Member must have value greater than or equal to 1",
    );
    common::assert_validation(
        client.scan().table_name(&table).limit(0).send().await,
        "1 validation error detected: Value '0' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1",
    );
    common::assert_validation(
        query().exclusive_start_key("bad", s("p")).send().await,
        "The provided starting key is invalid",
    );
    common::assert_validation(
        query()
            .exclusive_start_key("p", common::n("7"))
            .exclusive_start_key("c", s("x"))
            .send()
            .await,
        "The provided key element does not match the schema",
    );
    common::assert_validation(
        client
            .scan()
            .table_name(&table)
            .exclusive_start_key("bad", s("p"))
            .send()
            .await,
        "The provided starting key is invalid: The provided key element does not match the schema",
    );
}

#[tokio::test]
async fn a_key_condition_reports_its_first_problem_in_written_order() {
    // Verified against AWS by the same suite: an undefined value and an
    // operand of the wrong type, whichever is written first.
    let client = common::client();
    let table = common::table_ss(&client).await;
    let query = |expression: &str| {
        client
            .query()
            .table_name(&table)
            .key_condition_expression(expression)
            .expression_attribute_values(":n", common::n("1"))
            .send()
    };
    let undefined = "Invalid KeyConditionExpression: An expression attribute value used in expression is not defined; attribute value: :missing";
    let operand = "Invalid KeyConditionExpression: Incorrect operand type for operator or function; operator or function: begins_with, operand type: N";
    common::assert_validation(
        query("p = :missing AND begins_with(c, :n)").await,
        undefined,
    );
    common::assert_validation(query("begins_with(c, :n) AND p = :missing").await, operand);
}

#[tokio::test]
async fn transact_get_items_reports_a_bad_key_as_that_gets_cancellation_reason() {
    // The AWS-characterised suite: a Get whose key does not fit cancels the
    // transaction (ValidationError), and too many Gets echo the list.
    let client = common::client();
    let table = common::table_s(&client).await;
    let get = |key: std::collections::HashMap<String, aws_sdk_dynamodb::types::AttributeValue>| {
        aws_sdk_dynamodb::types::TransactGetItem::builder()
            .get(
                aws_sdk_dynamodb::types::Get::builder()
                    .table_name(&table)
                    .set_key(Some(key))
                    .build()
                    .unwrap(),
            )
            .build()
    };
    let good = std::collections::HashMap::from([("p".to_string(), s("k"))]);
    let result = client
        .transact_get_items()
        .transact_items(get(good.clone()))
        .transact_items(get(Default::default()))
        .send()
        .await;
    let err = result.unwrap_err();
    let cancelled = err.as_service_error().expect("a service error");
    assert!(
        cancelled.is_transaction_canceled_exception(),
        "{cancelled:?}"
    );
    assert_eq!(
        cancelled.meta().message(),
        Some("Transaction cancelled, please refer cancellation reasons for specific reasons [None, ValidationError]")
    );
    let many: Vec<_> = (0..101)
        .map(|i| {
            get(std::collections::HashMap::from([(
                "p".to_string(),
                s(&format!("k{i}")),
            )]))
        })
        .collect();
    let err = common::service_error(
        client
            .transact_get_items()
            .set_transact_items(Some(many))
            .send()
            .await,
    );
    assert!(
        err.message.starts_with("1 validation error detected: Value '[{")
            && err.message.ends_with(
                "}]' at 'transactItems' failed to satisfy constraint: Member must have length less than or equal to 100"
            ),
        "{err:?}"
    );
}

/// The message of `op` answering `body`.
async fn message_of(op: &str, body: serde_json::Value) -> String {
    let response = raw::call_json(op, body).await;
    response.json()["message"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn an_existing_table_is_named_by_one_to_1024_characters_then_by_createtables_rules() {
    // AWS's answers (the AWS-verified dynamodb-conformance suite, 2026:
    // tier3/error-messages/putItem.test.ts; ScyllaDB's AWS-validated
    // test_item_operations_improper_named_table for `xx`): the service
    // model's 1..1024 first, reported alone; then, for a plain name, the
    // pattern and 3..255. CreateTable keeps 3..255 for every name.
    let violation = |name: &str, constraint: &str| {
        format!("1 validation error detected: Value '{name}' at 'tableName' failed to satisfy constraint: Member must {constraint}")
    };
    let too_long_for_a_name = "a".repeat(300);
    let too_long_for_an_arn = "a".repeat(1100);
    let cases = [
        ("", violation("", "have length greater than or equal to 1")),
        (
            "ab",
            violation("ab", "have length greater than or equal to 3"),
        ),
        (
            "bad!name",
            violation(
                "bad!name",
                "satisfy regular expression pattern: [a-zA-Z0-9_.-]+",
            ),
        ),
        (
            too_long_for_a_name.as_str(),
            violation(
                &too_long_for_a_name,
                "have length less than or equal to 255",
            ),
        ),
        (
            too_long_for_an_arn.as_str(),
            violation(
                &too_long_for_an_arn,
                "have length less than or equal to 1024",
            ),
        ),
    ];
    let key = serde_json::json!({"p": {"S": "k"}});
    for (name, expected) in &cases {
        let bodies = [
            (
                "GetItem",
                serde_json::json!({"TableName": name, "Key": key}),
            ),
            (
                "PutItem",
                serde_json::json!({"TableName": name, "Item": key}),
            ),
            (
                "DeleteItem",
                serde_json::json!({"TableName": name, "Key": key}),
            ),
            (
                "UpdateItem",
                serde_json::json!({"TableName": name, "Key": key}),
            ),
            ("Scan", serde_json::json!({"TableName": name})),
            (
                "Query",
                serde_json::json!({"TableName": name, "KeyConditionExpression": "p = :p",
                "ExpressionAttributeValues": {":p": {"S": "k"}}}),
            ),
            ("DescribeTable", serde_json::json!({"TableName": name})),
            ("DeleteTable", serde_json::json!({"TableName": name})),
            (
                "UpdateTable",
                serde_json::json!({"TableName": name, "BillingMode": "PAY_PER_REQUEST"}),
            ),
        ];
        for (op, body) in bodies {
            assert_eq!(&message_of(op, body).await, expected, "{op} {name:.12}");
        }
        // Members name tables too, with their own field names.
        let in_batch = expected.replace("'tableName'", "'requestItems.key'");
        let got = message_of(
            "BatchGetItem",
            serde_json::json!({"RequestItems": {*name: {"Keys": [key]}}}),
        )
        .await;
        assert!(
            got.starts_with(&in_batch[..in_batch.find(" at ").unwrap()]),
            "{got}"
        );
        assert!(got.contains("at 'requestItems.key'"), "{got}");
        let got = message_of(
            "TransactGetItems",
            serde_json::json!({"TransactItems": [{"Get": {"TableName": name, "Key": key}}]}),
        )
        .await;
        assert_eq!(
            got,
            expected.replace("'tableName'", "'transactItems.1.member.get.tableName'")
        );
    }
    let create = message_of(
        "CreateTable",
        serde_json::json!({"TableName": "", "BillingMode": "PAY_PER_REQUEST",
            "KeySchema": [{"AttributeName": "p", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "p", "AttributeType": "S"}]}),
    )
    .await;
    assert!(
        create.contains("Member must have length greater than or equal to 3"),
        "{create}"
    );
}

#[tokio::test]
async fn batch_and_create_requests_missing_their_subject_say_so_in_words() {
    // AWS's wording (the AWS-verified dynamodb-conformance suite, 2026,
    // tier3/error-messages/{batchGetItem,batchWriteItem,createTable}.test.ts).
    for op in ["BatchGetItem", "BatchWriteItem"] {
        assert_eq!(
            message_of(op, serde_json::json!({"RequestItems": {}})).await,
            format!("The requestItems parameter is required for {op}")
        );
    }
    assert_eq!(
        message_of(
            "CreateTable",
            serde_json::json!({"BillingMode": "PAY_PER_REQUEST",
                "KeySchema": [{"AttributeName": "p", "KeyType": "HASH"}],
                "AttributeDefinitions": [{"AttributeName": "p", "AttributeType": "S"}]}),
        )
        .await,
        "The parameter 'TableName' is required but was not present in the request"
    );
    // Item operations report it as a violation (same suite, putItem.test.ts).
    assert_eq!(
        message_of("PutItem", serde_json::json!({"Item": {"p": {"S": "k"}}})).await,
        "1 validation error detected: Value null at 'tableName' failed to satisfy constraint: Member must not be null"
    );
}

#[tokio::test]
async fn over_100_keys_for_one_table_are_reported_without_the_keys() {
    // AWS (the AWS-verified dynamodb-conformance suite, 2026,
    // tier3/error-messages/batchGetItem.test.ts): capitalized field, no echo.
    let client = common::client();
    let table = common::table_s(&client).await;
    let keys: Vec<serde_json::Value> = (0..101)
        .map(|i| serde_json::json!({"p": {"S": format!("k{i}")}}))
        .collect();
    assert_eq!(
        message_of(
            "BatchGetItem",
            serde_json::json!({"RequestItems": {table.clone(): {"Keys": keys}}}),
        )
        .await,
        format!("1 validation error detected: Value at 'RequestItems.{table}.member.Keys' failed to satisfy constraint: Member must have length less than or equal to 100")
    );
    // Within 100 per table but over 100 in all: the request-level limit.
    let half = |from: usize| -> Vec<serde_json::Value> {
        (from..from + 60)
            .map(|i| serde_json::json!({"p": {"S": format!("k{i}")}}))
            .collect()
    };
    let other = common::table_s(&client).await;
    assert_eq!(
        message_of(
            "BatchGetItem",
            serde_json::json!({"RequestItems": {table: {"Keys": half(0)}, other: {"Keys": half(60)}}}),
        )
        .await,
        "Too many items requested for the BatchGetItem call"
    );
}

#[tokio::test]
async fn a_table_keyed_twice_by_one_attribute_is_refused_in_aws_words() {
    // The AWS-verified dynamodb-conformance suite (2026),
    // tier3/error-messages/createTable.test.ts.
    assert_eq!(
        message_of(
            "CreateTable",
            serde_json::json!({"TableName": common::unique_name("twice"),
                "BillingMode": "PAY_PER_REQUEST",
                "KeySchema": [{"AttributeName": "p", "KeyType": "HASH"},
                    {"AttributeName": "p", "KeyType": "RANGE"}],
                "AttributeDefinitions": [{"AttributeName": "p", "AttributeType": "S"}]}),
        )
        .await,
        "Invalid KeySchema: Some index key attribute have no definition"
    );
    // Three elements: echoed as AWS prints key elements.
    assert_eq!(
        message_of(
            "CreateTable",
            serde_json::json!({"TableName": common::unique_name("three"),
                "BillingMode": "PAY_PER_REQUEST",
                "KeySchema": [{"AttributeName": "p", "KeyType": "HASH"},
                    {"AttributeName": "s", "KeyType": "RANGE"},
                    {"AttributeName": "x", "KeyType": "RANGE"}],
                "AttributeDefinitions": [{"AttributeName": "p", "AttributeType": "S"},
                    {"AttributeName": "s", "AttributeType": "S"},
                    {"AttributeName": "x", "AttributeType": "S"}]}),
        )
        .await,
        "1 validation error detected: Value '[KeySchemaElement(attributeName=p, keyType=HASH), KeySchemaElement(attributeName=s, keyType=RANGE), KeySchemaElement(attributeName=x, keyType=RANGE)]' at 'keySchema' failed to satisfy constraint: Member must have length less than or equal to 2"
    );
}

#[tokio::test]
async fn a_transaction_action_naming_no_kind_and_one_naming_two_are_told_apart() {
    let client = common::client();
    let table = common::table_s(&client).await;
    // No action at all: DynamoDB Local's and Dynoxide's words.
    assert_eq!(
        message_of(
            "TransactWriteItems",
            serde_json::json!({"TransactItems": [{}]})
        )
        .await,
        "Invalid Request: TransactWriteRequest should contain Delete or Put or Update request"
    );
    // Two: moto 5.2.5's record (test_transact_write_items__put_and_delete_on_same_item's sibling).
    let key = serde_json::json!({"p": {"S": "k"}});
    assert_eq!(
        message_of(
            "TransactWriteItems",
            serde_json::json!({"TransactItems": [{"Put": {"TableName": table, "Item": key},
                "Delete": {"TableName": table, "Key": key}}]}),
        )
        .await,
        "TransactItems can only contain one of Check, Put, Update or Delete"
    );
}

#[tokio::test]
async fn item_writes_report_a_bad_table_name_alone_and_reads_beside_the_rest() {
    // Dynoxide's captures from AWS eu-west-2 (2026) and the AWS-verified
    // dynamodb-conformance suite's validation-ordering tests: PutItem and
    // UpdateItem check the name first, GetItem aggregates it with the rest.
    let alone = "1 validation error detected: Value '' at 'tableName' failed to satisfy constraint: Member must have length greater than or equal to 1";
    assert_eq!(
        message_of(
            "PutItem",
            serde_json::json!({"TableName": "", "ReturnValues": "INVALID", "Item": {}}),
        )
        .await,
        alone
    );
    assert_eq!(
        message_of(
            "UpdateItem",
            serde_json::json!({"TableName": "", "ReturnValues": "INVALID", "Key": {}}),
        )
        .await,
        alone
    );
    let read = message_of(
        "GetItem",
        serde_json::json!({"TableName": "", "ReturnConsumedCapacity": "INVALID", "Key": {}}),
    )
    .await;
    assert!(read.starts_with("2 validation errors detected: "), "{read}");
}
