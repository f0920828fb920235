//! The legacy (pre-expression) parameters, converted into the same trees as
//! expressions: Expected and QueryFilter/ScanFilter into a [`Condition`],
//! KeyConditions into a [`KeyCondition`], AttributeUpdates into an
//! [`UpdateExpression`], AttributesToGet into a [`Projection`].
//!
//! Inputs are the raw JSON of the request parameter, so that each entry's
//! validation happens here with the legacy API's own messages.

use crate::ast::{Comparator, Condition, Operand, Projection, UpdateAction, UpdateExpression};
use crate::keycond::KeyCondition;
use crate::path::Path;
use ferrodyn_types::{json_error_to_dynamo, AttributeValue, DynamoError};
use serde_json::{Map, Value};

fn decode(v: &Value) -> Result<AttributeValue, DynamoError> {
    serde_json::from_value::<AttributeValue>(v.clone()).map_err(|e| json_error_to_dynamo(&e))
}

fn as_object<'a>(v: &'a Value, what: &str) -> Result<&'a Map<String, Value>, DynamoError> {
    v.as_object().ok_or_else(|| {
        DynamoError::serialization(format!("Unexpected value type in payload for {what}"))
    })
}

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

/// The legacy comparison operators and their argument counts (None: one or
/// more).
const OPERATORS: [(&str, Option<usize>); 13] = [
    ("EQ", Some(1)),
    ("NE", Some(1)),
    ("LE", Some(1)),
    ("LT", Some(1)),
    ("GE", Some(1)),
    ("GT", Some(1)),
    ("NOT_NULL", Some(0)),
    ("NULL", Some(0)),
    ("CONTAINS", Some(1)),
    ("NOT_CONTAINS", Some(1)),
    ("BEGINS_WITH", Some(1)),
    ("IN", None),
    ("BETWEEN", Some(2)),
];

/// Builds the condition for `attribute OPERATOR args`, validating the
/// arguments as DynamoDB does.
fn comparison(name: &str, op: &str, args: Vec<AttributeValue>) -> Result<Condition, DynamoError> {
    let Some((_, count)) = OPERATORS.iter().find(|(o, _)| *o == op) else {
        return Err(DynamoError::validation(
            "Comparison type does not exist in DynamoDB",
        ));
    };
    let count_ok = match count {
        Some(n) => args.len() == *n,
        None => !args.is_empty(),
    };
    if !count_ok {
        return Err(DynamoError::invalid_parameter(format!(
            "Invalid number of argument(s) for the {op} ComparisonOperator"
        )));
    }
    let allowed: &[&str] = match op {
        "LE" | "LT" | "GE" | "GT" | "BETWEEN" | "IN" | "CONTAINS" | "NOT_CONTAINS" => {
            &["S", "N", "B"]
        }
        "BEGINS_WITH" => &["S", "B"],
        _ => &[],
    };
    if !allowed.is_empty() {
        for v in &args {
            if !allowed.contains(&v.type_name()) {
                return Err(DynamoError::invalid_parameter(format!(
                    "ComparisonOperator {op} is not valid for {} AttributeValue type",
                    v.type_name()
                )));
            }
        }
    }
    if args
        .windows(2)
        .any(|w| w[0].type_name() != w[1].type_name())
    {
        return Err(DynamoError::invalid_parameter(
            "AttributeValues inside AttributeValueList must be of same type",
        ));
    }
    let path = || Operand::Path(Path::attr(name));
    let mut values = args.into_iter().map(Operand::Value);
    let mut first = || {
        values
            .next()
            .unwrap_or(Operand::Value(AttributeValue::Null))
    };
    let compare = |c: Comparator, v: Operand| Condition::Compare(c, path(), v);
    Ok(match op {
        "EQ" => compare(Comparator::Eq, first()),
        "NE" => compare(Comparator::Ne, first()),
        "LE" => compare(Comparator::Le, first()),
        "LT" => compare(Comparator::Lt, first()),
        "GE" => compare(Comparator::Ge, first()),
        "GT" => compare(Comparator::Gt, first()),
        "NOT_NULL" => Condition::AttributeExists(Path::attr(name)),
        "NULL" => Condition::AttributeNotExists(Path::attr(name)),
        "CONTAINS" => Condition::Contains(path(), first()),
        // Unlike `NOT contains(...)`, the legacy operator is false for a
        // missing attribute.
        "NOT_CONTAINS" => Condition::And(
            Box::new(Condition::AttributeExists(Path::attr(name))),
            Box::new(Condition::Not(Box::new(Condition::Contains(
                path(),
                first(),
            )))),
        ),
        "BEGINS_WITH" => Condition::BeginsWith(path(), first()),
        "BETWEEN" => {
            let lo = first();
            let hi = first();
            if let (Operand::Value(l), Operand::Value(h)) = (&lo, &hi) {
                if l.compare(h) == Some(std::cmp::Ordering::Greater) {
                    return Err(DynamoError::validation(
                        "The BETWEEN condition was provided a range where the lower bound is greater than the upper bound",
                    ));
                }
            }
            Condition::Between(path(), lo, hi)
        }
        _ => Condition::In(path(), values.collect()),
    })
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

fn field<'a>(entry: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    entry.get(key).filter(|v| !v.is_null())
}

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
        let op = op.as_str().unwrap_or_default();
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
                if OPERATORS.iter().any(|(o, n)| *o == op && *n != Some(0)) {
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
fn combine(
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

/// One QueryFilter / ScanFilter / KeyConditions entry: a ComparisonOperator
/// and its AttributeValueList.
fn filter_entry(name: &str, entry: &Map<String, Value>) -> Result<Condition, DynamoError> {
    let op = field(entry, "ComparisonOperator")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let args = value_list(entry)?.unwrap_or_default();
    comparison(name, op, args)
}

/// QueryFilter / ScanFilter.
pub fn legacy_filter(
    filter: &Value,
    conditional_operator: Option<&str>,
) -> Result<Condition, DynamoError> {
    let map = as_object(filter, "Filter")?;
    let mut parts = Vec::with_capacity(map.len());
    for (name, entry) in map {
        parts.push(filter_entry(name, as_object(entry, "Filter")?)?);
    }
    combine(parts, conditional_operator)
}

/// KeyConditions (Query); validate the result with
/// [`KeyCondition::validate`].
pub fn legacy_key_conditions(conditions: &Value) -> Result<KeyCondition, DynamoError> {
    let map = as_object(conditions, "KeyConditions")?;
    let mut parts = Vec::with_capacity(map.len());
    for (name, entry) in map {
        let entry = as_object(entry, "KeyConditions")?;
        let op = field(entry, "ComparisonOperator")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !matches!(
            op,
            "EQ" | "LE" | "LT" | "GE" | "GT" | "BEGINS_WITH" | "BETWEEN"
        ) {
            if OPERATORS.iter().any(|(o, _)| *o == op) {
                return Err(DynamoError::validation(
                    "Attempted conditional constraint is not an indexable operation",
                ));
            }
            return Err(DynamoError::validation(
                "Comparison type does not exist in DynamoDB",
            ));
        }
        parts.push(filter_entry(name, entry)?);
    }
    let cond = combine(parts, None)?;
    KeyCondition::from_condition(&cond)
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
        let value = field(entry, "Value").map(decode).transpose()?;
        let path = Path::attr(name.as_str());
        actions.push(match (action, value) {
            ("DELETE", None) => UpdateAction::Remove(path),
            (_, None) => {
                return Err(DynamoError::invalid_parameter(
                    "Only DELETE action is allowed when no attribute value is specified",
                ))
            }
            ("PUT", Some(v)) => UpdateAction::Set(path, crate::ast::UpdateOperand::Value(v)),
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
