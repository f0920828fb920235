//! The rule that a request uses either the expression parameters or the
//! legacy ones, never both, with DynamoDB's message listing each side in its
//! fixed order.

use ferrodyn_types::DynamoError;

/// Which of the expression-related parameters a request carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ParamSet {
    pub attributes_to_get: bool,
    pub attribute_updates: bool,
    pub expected: bool,
    pub query_filter: bool,
    pub scan_filter: bool,
    pub key_conditions: bool,
    pub projection_expression: bool,
    pub update_expression: bool,
    pub condition_expression: bool,
    pub filter_expression: bool,
    pub key_condition_expression: bool,
}

/// Fails when legacy and expression parameters are mixed:
/// "Can not use both expression and non-expression parameters in the same
/// request: Non-expression parameters: {Expected} Expression parameters:
/// {ConditionExpression}".
pub fn check_no_mixing(p: &ParamSet) -> Result<(), DynamoError> {
    let legacy: Vec<&str> = [
        (p.attributes_to_get, "AttributesToGet"),
        (p.attribute_updates, "AttributeUpdates"),
        (p.expected, "Expected"),
        (p.query_filter, "QueryFilter"),
        (p.scan_filter, "ScanFilter"),
        (p.key_conditions, "KeyConditions"),
    ]
    .into_iter()
    .filter_map(|(on, name)| on.then_some(name))
    .collect();
    let expressions: Vec<&str> = [
        (p.projection_expression, "ProjectionExpression"),
        (p.update_expression, "UpdateExpression"),
        (p.condition_expression, "ConditionExpression"),
        (p.filter_expression, "FilterExpression"),
        (p.key_condition_expression, "KeyConditionExpression"),
    ]
    .into_iter()
    .filter_map(|(on, name)| on.then_some(name))
    .collect();
    if legacy.is_empty() || expressions.is_empty() {
        return Ok(());
    }
    Err(DynamoError::validation(format!(
        "Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {{{}}} Expression parameters: {{{}}}",
        legacy.join(", "),
        expressions.join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixing_message_lists_both_sides_in_dynamodb_order() {
        let p = ParamSet {
            attributes_to_get: true,
            query_filter: true,
            key_conditions: true,
            projection_expression: true,
            filter_expression: true,
            key_condition_expression: true,
            ..Default::default()
        };
        assert_eq!(
            check_no_mixing(&p).unwrap_err().message,
            "Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {AttributesToGet, QueryFilter, KeyConditions} Expression parameters: {ProjectionExpression, FilterExpression, KeyConditionExpression}"
        );
        let only_legacy = ParamSet {
            expected: true,
            attribute_updates: true,
            ..Default::default()
        };
        assert!(check_no_mixing(&only_legacy).is_ok());
    }
}
