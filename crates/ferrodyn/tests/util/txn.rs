//! Building blocks for TransactWriteItems/TransactGetItems requests and for
//! reading a TransactionCanceledException through the SDK.

use std::collections::HashMap;
use std::fmt::Debug;

use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::operation::transact_get_items::TransactGetItemsError;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{
    AttributeValue, CancellationReason, ConditionCheck, Delete, Get, Put, TransactGetItem,
    TransactWriteItem, Update,
};

pub type Item = HashMap<String, AttributeValue>;

fn values(pairs: &[(&str, AttributeValue)]) -> Option<Item> {
    (!pairs.is_empty()).then(|| super::item(pairs))
}

/// ExpressionAttributeNames for the `#name` placeholders in `expressions`:
/// each `#x` stands for the attribute `x` (handy for reserved words such as
/// `status` and `owner`).
pub fn names(expressions: &[Option<&str>]) -> Option<HashMap<String, String>> {
    let mut map = HashMap::new();
    for text in expressions.iter().flatten() {
        let mut rest = *text;
        while let Some(at) = rest.find('#') {
            let tail = &rest[at + 1..];
            let len = tail
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(tail.len());
            map.insert(format!("#{}", &tail[..len]), tail[..len].to_string());
            rest = &tail[len..];
        }
    }
    (!map.is_empty()).then_some(map)
}

/// A Put action, optionally guarded by `condition` (with `:placeholders`
/// from `vals`, and `#x` placeholders meaning attribute `x`).
pub fn put(
    table: &str,
    item: Item,
    condition: Option<&str>,
    vals: &[(&str, AttributeValue)],
) -> TransactWriteItem {
    let put = Put::builder()
        .table_name(table)
        .set_item(Some(item))
        .set_condition_expression(condition.map(str::to_string))
        .set_expression_attribute_names(names(&[condition]))
        .set_expression_attribute_values(values(vals))
        .build()
        .expect("Put is complete");
    TransactWriteItem::builder().put(put).build()
}

/// A Put guarded by `attribute_not_exists(attr)`.
pub fn put_new(table: &str, item: Item, attr: &str) -> TransactWriteItem {
    put(
        table,
        item,
        Some(&format!("attribute_not_exists({attr})")),
        &[],
    )
}

/// An Update action.
pub fn update(
    table: &str,
    key: Item,
    update: &str,
    condition: Option<&str>,
    vals: &[(&str, AttributeValue)],
) -> TransactWriteItem {
    let update = Update::builder()
        .table_name(table)
        .set_key(Some(key))
        .update_expression(update)
        .set_condition_expression(condition.map(str::to_string))
        .set_expression_attribute_names(names(&[Some(update), condition]))
        .set_expression_attribute_values(values(vals))
        .build()
        .expect("Update is complete");
    TransactWriteItem::builder().update(update).build()
}

/// A Delete action.
pub fn delete(
    table: &str,
    key: Item,
    condition: Option<&str>,
    vals: &[(&str, AttributeValue)],
) -> TransactWriteItem {
    let delete = Delete::builder()
        .table_name(table)
        .set_key(Some(key))
        .set_condition_expression(condition.map(str::to_string))
        .set_expression_attribute_names(names(&[condition]))
        .set_expression_attribute_values(values(vals))
        .build()
        .expect("Delete is complete");
    TransactWriteItem::builder().delete(delete).build()
}

/// A ConditionCheck action.
pub fn check(
    table: &str,
    key: Item,
    condition: &str,
    vals: &[(&str, AttributeValue)],
) -> TransactWriteItem {
    let check = ConditionCheck::builder()
        .table_name(table)
        .set_key(Some(key))
        .condition_expression(condition)
        .set_expression_attribute_names(names(&[Some(condition)]))
        .set_expression_attribute_values(values(vals))
        .build()
        .expect("ConditionCheck is complete");
    TransactWriteItem::builder().condition_check(check).build()
}

/// A Get for TransactGetItems.
pub fn get(table: &str, key: Item) -> TransactGetItem {
    TransactGetItem::builder()
        .get(
            Get::builder()
                .table_name(table)
                .set_key(Some(key))
                .build()
                .expect("Get is complete"),
        )
        .build()
}

/// The message and the reasons of a TransactionCanceledException from
/// TransactWriteItems; panics on success or any other error.
#[track_caller]
pub fn canceled<T: Debug, R: Debug + Send + Sync + 'static>(
    result: Result<T, SdkError<TransactWriteItemsError, R>>,
) -> (String, Vec<CancellationReason>) {
    match result {
        Ok(out) => panic!("expected TransactionCanceledException, got success: {out:?}"),
        Err(err) => match err.into_service_error() {
            TransactWriteItemsError::TransactionCanceledException(e) => (
                e.message().unwrap_or_default().to_string(),
                e.cancellation_reasons().to_vec(),
            ),
            other => panic!("expected TransactionCanceledException, got {other:?}"),
        },
    }
}

/// The same for TransactGetItems.
#[track_caller]
pub fn get_canceled<T: Debug, R: Debug + Send + Sync + 'static>(
    result: Result<T, SdkError<TransactGetItemsError, R>>,
) -> (String, Vec<CancellationReason>) {
    match result {
        Ok(out) => panic!("expected TransactionCanceledException, got success: {out:?}"),
        Err(err) => match err.into_service_error() {
            TransactGetItemsError::TransactionCanceledException(e) => (
                e.message().unwrap_or_default().to_string(),
                e.cancellation_reasons().to_vec(),
            ),
            other => panic!("expected TransactionCanceledException, got {other:?}"),
        },
    }
}

/// The reason codes, in request order.
pub fn codes(reasons: &[CancellationReason]) -> Vec<&str> {
    reasons
        .iter()
        .map(|r| r.code().unwrap_or("<none>"))
        .collect()
}

/// DynamoDB's cancellation message for these codes.
pub fn canceled_message(codes: &[&str]) -> String {
    format!(
        "Transaction cancelled, please refer cancellation reasons for specific reasons [{}]",
        codes.join(", ")
    )
}
