//! What several operations share: decoding the body, the expression
//! parameters, the checks of the return options (their enums are
//! `choice.rs`'s), and response assembly.

use crate::ops::choice::{chosen, Choice, CollectionMetrics, ReturnValues};
use crate::validate::Violations;
use ferrodyn_engine::capacity::{CapacityDetail, Consumed};
use ferrodyn_engine::PlannedWrite;
use ferrodyn_expr::ExpressionContext;
use ferrodyn_types::{json_error_to_dynamo, AttributeValue, DynamoError, Result};
use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// Decodes a request body; a body that is not JSON, or a field of the wrong
/// JSON type, is a SerializationException as in DynamoDB.
pub fn parse_body<T: DeserializeOwned>(body: &[u8]) -> Result<T> {
    let body = if body.is_empty() {
        b"{}".as_slice()
    } else {
        body
    };
    serde_json::from_slice(body).map_err(|e| json_error_to_dynamo(&e))
}

/// ExpressionAttributeNames / ExpressionAttributeValues of a request.
pub type Names = Option<HashMap<String, String>>;
pub type Values = Option<HashMap<String, AttributeValue>>;

/// Builds the expression context, refusing names or values when the request
/// has no expression to use them in (DynamoDB's wording). `missing` names
/// the absent expressions as DynamoDB does in that refusal: "UpdateExpression
/// and ConditionExpression are null".
pub fn expression_context(
    names: &Names,
    values: &Values,
    has_expression: bool,
    missing: &str,
) -> Result<ExpressionContext> {
    if !has_expression {
        if names.is_some() {
            return Err(DynamoError::validation(
                "ExpressionAttributeNames can only be specified when using expressions",
            ));
        }
        if values.is_some() {
            return Err(DynamoError::validation(format!(
                "ExpressionAttributeValues can only be specified when using expressions: {missing}"
            )));
        }
    }
    ExpressionContext::new(names.as_ref(), values.as_ref())
}

/// Checks ReturnConsumedCapacity and ReturnItemCollectionMetrics.
pub fn check_return_options(
    v: &mut Violations,
    consumed: &Option<Choice<CapacityDetail>>,
    metrics: &Option<Choice<CollectionMetrics>>,
) {
    v.choice("returnConsumedCapacity", consumed);
    v.choice("returnItemCollectionMetrics", metrics);
}

/// A response object under construction.
#[derive(Default)]
pub struct ResponseBody {
    fields: Map<String, Value>,
}

impl ResponseBody {
    pub fn value(&mut self, name: &str, value: Value) {
        self.fields.insert(name.into(), value);
    }

    pub fn finish(self) -> Result<Vec<u8>> {
        Ok(serde_json::to_vec(&self.fields).expect("plain data always serialises"))
    }
}

/// PutItem and DeleteItem accept only NONE and ALL_OLD.
pub fn only_none_or_all_old(value: ReturnValues) -> Result<()> {
    if matches!(value, ReturnValues::None | ReturnValues::AllOld) {
        Ok(())
    } else {
        Err(DynamoError::validation(
            "ReturnValues can only be ALL_OLD or NONE",
        ))
    }
}

/// "Can not use both expression and non-expression parameters" check.
pub fn no_mixing(legacy: &[(&str, bool)], expressions: &[(&str, bool)]) -> Result<()> {
    let legacy: Vec<&str> = legacy
        .iter()
        .filter(|(_, set)| *set)
        .map(|(n, _)| *n)
        .collect();
    let modern: Vec<&str> = expressions
        .iter()
        .filter(|(_, set)| *set)
        .map(|(n, _)| *n)
        .collect();
    if legacy.is_empty() || modern.is_empty() {
        return Ok(());
    }
    Err(DynamoError::validation(format!(
        "Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {{{}}} Expression parameters: {{{}}}",
        legacy.join(", "),
        modern.join(", ")
    )))
}

// ---- capacity and item-collection metrics of several items -------------------

/// One read entry per table, for ConsumedCapacity.
pub fn read_capacity(units: &[(String, f64)]) -> Vec<Consumed> {
    units
        .iter()
        .map(|(table, units)| Consumed::read(table, *units))
        .collect()
}

/// ConsumedCapacity as the list multi-table operations return: one entry
/// per table.
pub fn capacity_list(consumed: &[Consumed], detail: CapacityDetail) -> Option<Value> {
    let list: Vec<Value> = consumed.iter().filter_map(|c| c.to_json(detail)).collect();
    (detail != CapacityDetail::None).then_some(Value::Array(list))
}

/// ItemCollectionMetrics as BatchWriteItem and TransactWriteItems return
/// them: for each table with an LSI, one entry per write, in request order.
/// None when no write touched such a table.
pub fn collection_metrics(writes: &[PlannedWrite]) -> Option<Value> {
    let mut tables = serde_json::Map::new();
    for write in writes {
        if let Some(metrics) = write.item_collection_metrics() {
            tables
                .entry(write.table.name.clone())
                .or_insert_with(|| json!([]))
                .as_array_mut()
                .expect("array")
                .push(metrics.to_json());
        }
    }
    (!tables.is_empty()).then_some(Value::Object(tables))
}

/// Whether ReturnItemCollectionMetrics (already checked) asks for SIZE.
pub fn wants_collection_metrics(value: &Option<Choice<CollectionMetrics>>) -> bool {
    chosen(value) == CollectionMetrics::Size
}
