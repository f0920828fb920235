//! QueryFilter / ScanFilter (a Condition) and KeyConditions (a
//! KeyCondition): maps of attribute → ComparisonOperator and
//! AttributeValueList.

use super::compare::{comparison, operator};
use super::expected::combine;
use super::{as_object, field, value_list};
use crate::ast::Condition;
use crate::keycond::KeyCondition;
use ferrodyn_types::DynamoError;
use serde_json::{Map, Value};

/// One QueryFilter / ScanFilter / KeyConditions entry: a ComparisonOperator
/// and its AttributeValueList. `param` names the map in messages.
fn filter_entry(
    name: &str,
    entry: &Map<String, Value>,
    param: Option<&str>,
) -> Result<Condition, DynamoError> {
    let op = field(entry, "ComparisonOperator").map(|v| v.as_str().unwrap_or_default());
    let op = operator(op, param, name)?;
    let args = value_list(entry)?.unwrap_or_default();
    comparison(name, op, args)
}

fn filter(
    filter: &Value,
    conditional_operator: Option<&str>,
    param: Option<&str>,
) -> Result<Condition, DynamoError> {
    let map = as_object(filter, "Filter")?;
    let mut parts = Vec::with_capacity(map.len());
    for (name, entry) in map {
        parts.push(filter_entry(name, as_object(entry, "Filter")?, param)?);
    }
    combine(parts, conditional_operator)
}

/// QueryFilter (Query). An unknown or missing ComparisonOperator is
/// reported as AWS does, naming `queryFilter.<attribute>`.
pub fn legacy_query_filter(
    query_filter: &Value,
    conditional_operator: Option<&str>,
) -> Result<Condition, DynamoError> {
    filter(query_filter, conditional_operator, Some("queryFilter"))
}

/// ScanFilter (Scan). An unknown or missing ComparisonOperator is reported
/// as AWS does, naming `scanFilter.<attribute>`.
pub fn legacy_scan_filter(
    scan_filter: &Value,
    conditional_operator: Option<&str>,
) -> Result<Condition, DynamoError> {
    filter(scan_filter, conditional_operator, Some("scanFilter"))
}

/// QueryFilter or ScanFilter, for a caller that does not say which: an
/// unknown ComparisonOperator gets the generic "Comparison type does not
/// exist in DynamoDB". Prefer [`legacy_query_filter`] /
/// [`legacy_scan_filter`], whose messages are AWS's.
pub fn legacy_filter(
    filter_map: &Value,
    conditional_operator: Option<&str>,
) -> Result<Condition, DynamoError> {
    filter(filter_map, conditional_operator, None)
}

/// KeyConditions (Query); validate the result with
/// [`KeyCondition::validate`].
pub fn legacy_key_conditions(conditions: &Value) -> Result<KeyCondition, DynamoError> {
    let map = as_object(conditions, "KeyConditions")?;
    let mut parts = Vec::with_capacity(map.len());
    for (name, entry) in map {
        let entry = as_object(entry, "KeyConditions")?;
        let op = field(entry, "ComparisonOperator").map(|v| v.as_str().unwrap_or_default());
        let op = operator(op, Some("keyConditions"), name)?;
        if !matches!(
            op,
            "EQ" | "LE" | "LT" | "GE" | "GT" | "BEGINS_WITH" | "BETWEEN"
        ) {
            return Err(DynamoError::validation(
                "Attempted conditional constraint is not an indexable operation",
            ));
        }
        parts.push(filter_entry(name, entry, Some("keyConditions"))?);
    }
    let cond = combine(parts, None)?;
    KeyCondition::from_condition(&cond)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrodyn_types::ScalarType;

    const ENUM: &str = "[IN, NULL, BETWEEN, LT, NOT_CONTAINS, EQ, GT, NOT_NULL, NE, LE, BEGINS_WITH, GE, CONTAINS]";

    fn key_conditions(json: &str) -> Result<(), String> {
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        let kc = legacy_key_conditions(&v).map_err(|e| e.message)?;
        kc.validate(("p", ScalarType::S), Some(("c", ScalarType::N)))
            .map(drop)
            .map_err(|e| e.message)
    }

    #[test]
    fn key_conditions_messages() {
        let cases: [(&str, Result<(), String>); 7] = [
            (r#"{"p":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"x"}]}}"#, Ok(())),
            (r#"{"p":{"ComparisonOperator":"eq","AttributeValueList":[{"S":"x"}]}}"#,
             Err(format!("1 validation error detected: Value 'eq' at 'keyConditions.p.member.comparisonOperator' failed to satisfy constraint: Member must satisfy enum value set: {ENUM}"))),
            (r#"{"p":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"x"}]},"c":{"ComparisonOperator":"DOG","AttributeValueList":[{"N":"1"}]}}"#,
             Err(format!("1 validation error detected: Value 'DOG' at 'keyConditions.c.member.comparisonOperator' failed to satisfy constraint: Member must satisfy enum value set: {ENUM}"))),
            (r#"{"p":{"AttributeValueList":[{"S":"x"}]}}"#,
             Err("1 validation error detected: Value null at 'keyConditions.p.member.comparisonOperator' failed to satisfy constraint: Member must not be null".to_string())),
            (r#"{"p":{"ComparisonOperator":"EQ","AttributeValueList":[{"S":"x"}]},"c":{"ComparisonOperator":"NE","AttributeValueList":[{"N":"1"}]}}"#,
             Err("Attempted conditional constraint is not an indexable operation".to_string())),
            (r#"{"p":{"ComparisonOperator":"LT","AttributeValueList":[{"S":"x"}]}}"#,
             Err("Query key condition not supported".to_string())),
            (r#"{"c":{"ComparisonOperator":"EQ","AttributeValueList":[{"N":"1"}]}}"#,
             Err("Query condition missed key schema element: p".to_string())),
        ];
        for (json, want) in cases {
            assert_eq!(key_conditions(json), want, "{json}");
        }
    }

    #[test]
    fn filter_operator_messages_name_the_parameter() {
        let v: serde_json::Value = serde_json::from_str(
            r#"{"i":{"ComparisonOperator":"DOG","AttributeValueList":[{"N":"1"}]}}"#,
        )
        .unwrap();
        let err = |r: Result<Condition, DynamoError>| r.unwrap_err().message;
        assert_eq!(
            err(legacy_query_filter(&v, None)),
            format!("1 validation error detected: Value 'DOG' at 'queryFilter.i.member.comparisonOperator' failed to satisfy constraint: Member must satisfy enum value set: {ENUM}")
        );
        assert_eq!(
            err(legacy_scan_filter(&v, None)),
            format!("1 validation error detected: Value 'DOG' at 'scanFilter.i.member.comparisonOperator' failed to satisfy constraint: Member must satisfy enum value set: {ENUM}")
        );
        assert_eq!(
            err(legacy_filter(&v, None)),
            "Comparison type does not exist in DynamoDB"
        );
    }
}
