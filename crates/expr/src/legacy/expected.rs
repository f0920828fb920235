//! Expected (PutItem, UpdateItem, DeleteItem): per-attribute Value / Exists
//! / ComparisonOperator entries, combined with ConditionalOperator.

use super::compare::{arity, comparison, operator};
use super::{as_object, decode, field, value_list};
use crate::ast::{Comparator, Condition, Operand};
use crate::path::Path;
use ferrodyn_types::DynamoError;
use serde_json::{Map, Value};

/// One Expected entry.
fn expected_entry(name: &str, entry: &Map<String, Value>) -> Result<Condition, DynamoError> {
    let value = field(entry, "Value").map(decode).transpose()?;
    let list = value_list(entry)?;
    let exists = match field(entry, "Exists") {
        None => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => {
            return Err(DynamoError::serialization(
                "Unexpected value type in payload for Exists",
            ))
        }
    };
    if let Some(op) = field(entry, "ComparisonOperator") {
        let op = operator(
            Some(op.as_str().unwrap_or_default()),
            Some("expected"),
            name,
        )?;
        if exists.is_some() {
            return Err(DynamoError::invalid_parameter(format!(
                "Exists and ComparisonOperator cannot be used together for Attribute: {name}"
            )));
        }
        let args = match (value, list) {
            (Some(_), Some(_)) => {
                return Err(DynamoError::invalid_parameter(format!(
                    "Value and AttributeValueList cannot be used together for Attribute: {name}"
                )))
            }
            (Some(v), None) => vec![v],
            (None, Some(l)) => l,
            (None, None) => {
                if arity(op) != Some(Some(0)) {
                    return Err(DynamoError::invalid_parameter(format!(
                        "Value or AttributeValueList must be used with ComparisonOperator: {op} for Attribute: {name}"
                    )));
                }
                Vec::new()
            }
        };
        return comparison(name, op, args);
    }
    if list.is_some() {
        return Err(DynamoError::invalid_parameter(format!(
            "AttributeValueList can only be used with a ComparisonOperator for Attribute: {name}"
        )));
    }
    match (exists, value) {
        (Some(false), Some(_)) => Err(DynamoError::invalid_parameter(format!(
            "Value cannot be used when Exists is false for Attribute: {name}"
        ))),
        (Some(false), None) => Ok(Condition::AttributeNotExists(Path::attr(name))),
        (Some(true), None) => Err(DynamoError::invalid_parameter(format!(
            "Value must be provided when Exists is true for Attribute: {name}"
        ))),
        (None, None) => Err(DynamoError::invalid_parameter(format!(
            "Value must be provided when Exists is null for Attribute: {name}"
        ))),
        (_, Some(v)) => Ok(Condition::Compare(
            Comparator::Eq,
            Operand::Path(Path::attr(name)),
            Operand::Value(v),
        )),
    }
}

/// Combines per-attribute conditions with ConditionalOperator (AND by
/// default).
pub(super) fn combine(
    parts: Vec<Condition>,
    conditional_operator: Option<&str>,
) -> Result<Condition, DynamoError> {
    let or = match conditional_operator {
        None | Some("AND") => false,
        Some("OR") => true,
        Some(_) if parts.len() < 2 => return Err(DynamoError::validation(
            "ConditionalOperator can only be used when Filter or Expected has two or more elements",
        )),
        Some(_) => {
            return Err(DynamoError::validation(
                "Member must satisfy enum value set: [AND, OR]",
            ))
        }
    };
    if conditional_operator.is_some() && parts.len() < 2 {
        return Err(DynamoError::validation(
            "ConditionalOperator can only be used when Filter or Expected has two or more elements",
        ));
    }
    let mut iter = parts.into_iter();
    let Some(mut acc) = iter.next() else {
        return Ok(Condition::True);
    };
    for c in iter {
        acc = if or {
            Condition::Or(Box::new(acc), Box::new(c))
        } else {
            Condition::And(Box::new(acc), Box::new(c))
        };
    }
    Ok(acc)
}

/// Expected (PutItem, UpdateItem, DeleteItem).
pub fn legacy_expected(
    expected: &Value,
    conditional_operator: Option<&str>,
) -> Result<Condition, DynamoError> {
    let map = as_object(expected, "Expected")?;
    let mut parts = Vec::with_capacity(map.len());
    for (name, entry) in map {
        parts.push(expected_entry(name, as_object(entry, "Expected")?)?);
    }
    combine(parts, conditional_operator)
}
