//! AttributeUpdates (UpdateItem) and AttributesToGet (GetItem, Query,
//! Scan, BatchGetItem).

use super::{as_object, check_name, decode, field};
use crate::ast::{Projection, UpdateAction, UpdateExpression, UpdateOperand};
use crate::path::Path;
use ferrodyn_types::{AttributeValue, DynamoError};
use serde_json::Value;

/// The long type names legacy messages use.
fn long_type(v: &AttributeValue) -> &'static str {
    match v {
        AttributeValue::S(_) => "STRING",
        AttributeValue::N(_) => "NUMBER",
        AttributeValue::B(_) => "BINARY",
        AttributeValue::Bool(_) => "BOOLEAN",
        AttributeValue::Null => "NULL",
        AttributeValue::L(_) => "LIST",
        AttributeValue::M(_) => "MAP",
        AttributeValue::Ss(_) => "STRING_SET",
        AttributeValue::Ns(_) => "NUMBER_SET",
        AttributeValue::Bs(_) => "BINARY_SET",
    }
}

/// AttributeUpdates (UpdateItem).
pub fn legacy_attribute_updates(updates: &Value) -> Result<UpdateExpression, DynamoError> {
    let map = as_object(updates, "AttributeUpdates")?;
    let mut actions = Vec::with_capacity(map.len());
    for (name, entry) in map {
        let entry = as_object(entry, "AttributeUpdates")?;
        let action = field(entry, "Action")
            .map(|a| a.as_str().unwrap_or_default())
            .unwrap_or("PUT");
        if !matches!(action, "PUT" | "ADD" | "DELETE") {
            return Err(DynamoError::validation(
                "Member must satisfy enum value set: [ADD, DELETE, PUT]",
            ));
        }
        check_name(name)?;
        let value = field(entry, "Value").map(decode).transpose()?;
        let path = Path::attr(name.as_str());
        actions.push(match (action, value) {
            ("DELETE", None) => UpdateAction::Remove(path),
            (_, None) => {
                return Err(DynamoError::invalid_parameter(
                    "Only DELETE action is allowed when no attribute value is specified",
                ))
            }
            ("PUT", Some(v)) => UpdateAction::Set(path, UpdateOperand::Value(v)),
            ("ADD", Some(v)) => {
                if !matches!(
                    v,
                    AttributeValue::N(_)
                        | AttributeValue::L(_)
                        | AttributeValue::Ss(_)
                        | AttributeValue::Ns(_)
                        | AttributeValue::Bs(_)
                ) {
                    return Err(DynamoError::invalid_parameter(format!(
                        "ADD action is not supported for the type {}",
                        long_type(&v)
                    )));
                }
                UpdateAction::LegacyAdd(path, v)
            }
            (_, Some(v)) => {
                if !v.is_set() {
                    return Err(DynamoError::invalid_parameter(format!(
                        "DELETE action with value is not supported for the type {}",
                        long_type(&v)
                    )));
                }
                UpdateAction::LegacyDelete(path, v)
            }
        });
    }
    Ok(UpdateExpression { actions })
}

/// AttributesToGet.
pub fn legacy_attributes_to_get(names: &[String]) -> Result<Projection, DynamoError> {
    for (i, name) in names.iter().enumerate() {
        check_name(name)?;
        if names[..i].contains(name) {
            // DynamoDB Local says "Cannot have two attributes with the same
            // name"; AWS names the duplicate, which is what we follow.
            return Err(DynamoError::invalid_parameter(format!(
                "Duplicate value in attribute name: {name}"
            )));
        }
    }
    Ok(Projection {
        paths: names.iter().map(|n| Path::attr(n.as_str())).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attribute_names_are_checked() {
        let long = "x".repeat(65536);
        let ok = "y".repeat(65535);
        let get = |names: &[&str]| {
            let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
            legacy_attributes_to_get(&names)
                .map(drop)
                .map_err(|e| e.message)
        };
        let update = |name: &str| {
            let v = serde_json::json!({ name: {"Action": "PUT", "Value": {"N": "1"}} });
            legacy_attribute_updates(&v)
                .map(drop)
                .map_err(|e| e.message)
        };
        let too_large = "Attribute name is too large, must be less than 65536 bytes";
        type Case<'a> = (Result<(), String>, Result<(), &'a str>);
        let cases: [Case; 8] = [
            (get(&["a", ok.as_str()]), Ok(())),
            (get(&["a", ""]), Err("Empty attribute name")),
            (get(&[long.as_str()]), Err(too_large)),
            (get(&["a", "a"]), Err("One or more parameter values were invalid: Duplicate value in attribute name: a")),
            (update(&ok), Ok(())),
            (update(""), Err("Empty attribute name")),
            (update(&long), Err(too_large)),
            (update("a.b"), Ok(())),
        ];
        for (i, (got, want)) in cases.into_iter().enumerate() {
            assert_eq!(got, want.map_err(str::to_string), "case {i}");
        }
    }
}
