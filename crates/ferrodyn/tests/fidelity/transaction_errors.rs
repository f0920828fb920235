//! Transaction errors: an empty key is a plain validation error, a bad key
//! in TransactGetItems is that Get's cancellation reason, and an action naming
//! no kind or two kinds is told apart.

use crate::util::{self, s};

#[tokio::test]
async fn an_empty_key_fails_a_transaction_as_a_plain_validation_error() {
    // AWS (moto's AWS-verified test_transaction_with_empty_key): not a
    // cancellation, unlike a key of the wrong type.
    let client = util::client();
    let table = util::table_s(&client).await;
    let update = aws_sdk_dynamodb::types::Update::builder()
        .table_name(&table)
        .key("p", s(""))
        .update_expression("SET sth = :v")
        .expression_attribute_values(":v", util::n("0"))
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
    util::assert_validation(
        result,
        "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: p",
    );
    // So does an empty index key (DynamoDB Local agrees).
    let indexed = super::table_with_gsi(&client).await;
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
    util::assert_validation(
        result,
        "One or more parameter values are not valid. A value specified for a secondary index key is not supported. The AttributeValue for a key attribute cannot contain an empty string value. IndexName: gsi, IndexKey: x",
    );
}

#[tokio::test]
async fn transact_get_items_reports_a_bad_key_as_that_gets_cancellation_reason() {
    // The AWS-characterised suite: a Get whose key does not fit cancels the
    // transaction (ValidationError), and too many Gets echo the list.
    let client = util::client();
    let table = util::table_s(&client).await;
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
    let err = util::service_error(
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

#[tokio::test]
async fn a_transaction_action_naming_no_kind_and_one_naming_two_are_told_apart() {
    let client = util::client();
    let table = util::table_s(&client).await;
    // No action at all: DynamoDB Local's and Dynoxide's words.
    assert_eq!(
        super::message_of(
            "TransactWriteItems",
            serde_json::json!({"TransactItems": [{}]})
        )
        .await,
        "Invalid Request: TransactWriteRequest should contain Delete or Put or Update request"
    );
    // Two: moto 5.2.5's record (test_transact_write_items__put_and_delete_on_same_item's sibling).
    let key = serde_json::json!({"p": {"S": "k"}});
    assert_eq!(
        super::message_of(
            "TransactWriteItems",
            serde_json::json!({"TransactItems": [{"Put": {"TableName": table, "Item": key},
                "Delete": {"TableName": table, "Key": key}}]}),
        )
        .await,
        "TransactItems can only contain one of Check, Put, Update or Delete"
    );
}
