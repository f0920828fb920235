//! The legacy (pre-expression) parameters, converted into the same trees as
//! expressions: Expected and QueryFilter/ScanFilter into a [`Condition`],
//! KeyConditions into a [`KeyCondition`], AttributeUpdates into an
//! [`UpdateExpression`], AttributesToGet into a [`Projection`].
//!
//! Inputs are the raw JSON of the request parameter, so that each entry's
//! validation happens here with the legacy API's own messages.
//!
//! - `compare`: the ComparisonOperator table and argument checks.
//! - `expected`: Expected and ConditionalOperator.
//! - `filter`: QueryFilter / ScanFilter and KeyConditions.
//! - `updates`: AttributeUpdates and AttributesToGet.
//!
//! [`Condition`]: crate::Condition
//! [`KeyCondition`]: crate::KeyCondition
//! [`UpdateExpression`]: crate::UpdateExpression
//! [`Projection`]: crate::Projection

mod compare;
mod expected;
mod filter;
mod updates;

pub use compare::COMPARISON_OPERATORS;
pub use expected::legacy_expected;
pub use filter::{legacy_filter, legacy_key_conditions, legacy_query_filter, legacy_scan_filter};
pub use updates::{legacy_attribute_updates, legacy_attributes_to_get};

use ferrodyn_types::{json_error_to_dynamo, AttributeValue, DynamoError};
use serde_json::{Map, Value};

pub use ferrodyn_types::limits::MAX_ATTRIBUTE_NAME_BYTES;

fn decode(v: &Value) -> Result<AttributeValue, DynamoError> {
    serde_json::from_value::<AttributeValue>(v.clone()).map_err(|e| json_error_to_dynamo(&e))
}

fn as_object<'a>(v: &'a Value, what: &str) -> Result<&'a Map<String, Value>, DynamoError> {
    v.as_object().ok_or_else(|| {
        DynamoError::serialization(format!("Unexpected value type in payload for {what}"))
    })
}

fn field<'a>(entry: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    entry.get(key).filter(|v| !v.is_null())
}

fn value_list(entry: &Map<String, Value>) -> Result<Option<Vec<AttributeValue>>, DynamoError> {
    match entry.get("AttributeValueList") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(list)) => list.iter().map(decode).collect::<Result<_, _>>().map(Some),
        Some(_) => Err(DynamoError::serialization(
            "Unexpected value type in payload for AttributeValueList",
        )),
    }
}

/// An attribute name given directly (not through a placeholder): not empty,
/// at most [`MAX_ATTRIBUTE_NAME_BYTES`].
fn check_name(name: &str) -> Result<(), DynamoError> {
    if name.is_empty() {
        return Err(DynamoError::validation("Empty attribute name"));
    }
    if name.len() > MAX_ATTRIBUTE_NAME_BYTES {
        return Err(DynamoError::validation(
            "Attribute name is too large, must be less than 65536 bytes",
        ));
    }
    Ok(())
}
