//! The subject of a request: table names checked 1..1024 characters before
//! CreateTable's pattern, missing RequestItems or TableName said in words, and
//! a bad name reported alone by item writes and beside the rest by reads.

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
            assert_eq!(
                &super::message_of(op, body).await,
                expected,
                "{op} {name:.12}"
            );
        }
        // Members name tables too, with their own field names.
        let in_batch = expected.replace("'tableName'", "'requestItems.key'");
        let got = super::message_of(
            "BatchGetItem",
            serde_json::json!({"RequestItems": {*name: {"Keys": [key]}}}),
        )
        .await;
        assert!(
            got.starts_with(&in_batch[..in_batch.find(" at ").unwrap()]),
            "{got}"
        );
        assert!(got.contains("at 'requestItems.key'"), "{got}");
        let got = super::message_of(
            "TransactGetItems",
            serde_json::json!({"TransactItems": [{"Get": {"TableName": name, "Key": key}}]}),
        )
        .await;
        assert_eq!(
            got,
            expected.replace("'tableName'", "'transactItems.1.member.get.tableName'")
        );
    }
    let create = super::message_of(
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
            super::message_of(op, serde_json::json!({"RequestItems": {}})).await,
            format!("The requestItems parameter is required for {op}")
        );
    }
    assert_eq!(
        super::message_of(
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
        super::message_of("PutItem", serde_json::json!({"Item": {"p": {"S": "k"}}})).await,
        "1 validation error detected: Value null at 'tableName' failed to satisfy constraint: Member must not be null"
    );
}

#[tokio::test]
async fn item_writes_report_a_bad_table_name_alone_and_reads_beside_the_rest() {
    // Dynoxide's captures from AWS eu-west-2 (2026) and the AWS-verified
    // dynamodb-conformance suite's validation-ordering tests: PutItem and
    // UpdateItem check the name first, GetItem aggregates it with the rest.
    let alone = "1 validation error detected: Value '' at 'tableName' failed to satisfy constraint: Member must have length greater than or equal to 1";
    assert_eq!(
        super::message_of(
            "PutItem",
            serde_json::json!({"TableName": "", "ReturnValues": "INVALID", "Item": {}}),
        )
        .await,
        alone
    );
    assert_eq!(
        super::message_of(
            "UpdateItem",
            serde_json::json!({"TableName": "", "ReturnValues": "INVALID", "Key": {}}),
        )
        .await,
        alone
    );
    let read = super::message_of(
        "GetItem",
        serde_json::json!({"TableName": "", "ReturnConsumedCapacity": "INVALID", "Key": {}}),
    )
    .await;
    assert!(read.starts_with("2 validation errors detected: "), "{read}");
}
