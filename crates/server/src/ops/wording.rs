//! AWS's current wording of some validation errors, which depends on the
//! operation: DynamoDB's newer request validation, which PutItem, UpdateItem,
//! DeleteItem and (for Select) Query and Scan go through, reports these
//! checks as "1 validation error detected: <message>", while GetItem reports
//! the same messages bare. The families and operations below are those
//! AWS-verified tests record (moto 5.2.5's tests/test_dynamodb, marked
//! aws_verified; moto 5.2.3's record had Scan's Select errors bare, so AWS
//! moved Scan between the two); everything else keeps the wording its check
//! produced.

use crate::ops::Operation;
use ferrodyn_types::{DynamoError, ErrorKind};

const PREFIX: &str = "1 validation error detected: ";

/// Messages the item writes report with the prefix.
const WRITE_FAMILIES: &[&str] = &[
    "Value provided in ExpressionAttributeNames unused in expressions",
    "Value provided in ExpressionAttributeValues unused in expressions",
    "ExpressionAttributeNames must not be empty",
    "ExpressionAttributeValues must not be empty",
    "One or more parameter values were invalid: An string set  may not be empty",
    "One or more parameter values were invalid: An number set  may not be empty",
    "One or more parameter values were invalid: Binary sets should not be empty",
    "Invalid UpdateExpression: The expression can not be empty;",
    "Invalid UpdateExpression: Two document paths overlap with each other;",
];

/// UpdateExpression sections repeated: `The "SET" section can only be used
/// once in an update expression;`.
const REPEATED_SECTION: (&str, &str) = (
    "Invalid UpdateExpression: The \"",
    "\" section can only be used once in an update expression;",
);

/// Messages Query and Scan report with the prefix.
const READ_FAMILIES: &[&str] = &[
    "ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName",
    "Must specify the AttributesToGet or ProjectionExpression when choosing to get",
    "Cannot specify the ProjectionExpression when choosing to get",
    "Cannot specify the AttributesToGet when choosing to get",
];

/// PartiQL names no index in its unknown-index error; Query and Scan do
/// (`The table does not have the specified index: byEmail`).
const UNKNOWN_INDEX: &str = "The table does not have the specified index";

/// An invalid set inside ExpressionAttributeValues, as the older validation
/// words it: `ExpressionAttributeValues contains invalid value: <set
/// message> for key :v`. The newer one reports the set message alone.
const INVALID_VALUE: (&str, &str) = (
    "ExpressionAttributeValues contains invalid value: ",
    " for key ",
);

/// `error` as AWS words it for `operation`.
pub fn as_aws_words(operation: Operation, mut error: DynamoError) -> DynamoError {
    if error.kind != ErrorKind::Validation {
        return error;
    }
    let families = match operation {
        Operation::PutItem | Operation::UpdateItem | Operation::DeleteItem => WRITE_FAMILIES,
        Operation::Query | Operation::Scan => READ_FAMILIES,
        Operation::ExecuteStatement => {
            if error.message.starts_with(UNKNOWN_INDEX) {
                error.message = UNKNOWN_INDEX.to_string();
            }
            return error;
        }
        _ => return error,
    };
    if families == WRITE_FAMILIES {
        if let Some(inner) = unwrapped_set_error(&error.message) {
            error.message = inner;
        }
    }
    let message = error.message.as_str();
    let repeated = families == WRITE_FAMILIES
        && message.starts_with(REPEATED_SECTION.0)
        && message.ends_with(REPEATED_SECTION.1);
    if repeated || families.iter().any(|family| message.starts_with(family)) {
        error.message = format!("{PREFIX}{message}");
    }
    error
}

/// The set message inside an "ExpressionAttributeValues contains invalid
/// value" error, when that is what it wraps.
fn unwrapped_set_error(message: &str) -> Option<String> {
    let rest = message.strip_prefix(INVALID_VALUE.0)?;
    let (inner, _key) = rest.rsplit_once(INVALID_VALUE.1)?;
    WRITE_FAMILIES[4..7]
        .contains(&inner)
        .then(|| inner.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn worded(operation: Operation, message: &str) -> String {
        as_aws_words(operation, DynamoError::validation(message)).message
    }

    #[test]
    fn item_writes_prefix_their_expression_checks() {
        assert_eq!(
            worded(
                Operation::DeleteItem,
                "Value provided in ExpressionAttributeNames unused in expressions: keys: {#c}"
            ),
            "1 validation error detected: Value provided in ExpressionAttributeNames unused in expressions: keys: {#c}"
        );
        assert_eq!(
            worded(
                Operation::UpdateItem,
                "Invalid UpdateExpression: The \"SET\" section can only be used once in an update expression;"
            ),
            "1 validation error detected: Invalid UpdateExpression: The \"SET\" section can only be used once in an update expression;"
        );
        assert_eq!(
            worded(
                Operation::UpdateItem,
                "ExpressionAttributeValues contains invalid value: One or more parameter values were invalid: An number set  may not be empty for key :one"
            ),
            "1 validation error detected: One or more parameter values were invalid: An number set  may not be empty"
        );
    }

    #[test]
    fn reads_keep_the_bare_wording() {
        let unused = "Value provided in ExpressionAttributeNames unused in expressions: keys: {#c}";
        assert_eq!(worded(Operation::GetItem, unused), unused);
        assert_eq!(worded(Operation::Scan, unused), unused);
        assert_eq!(worded(Operation::Query, unused), unused);
        let select = "Cannot specify the ProjectionExpression when choosing to get only the Count";
        assert_eq!(worded(Operation::GetItem, select), select);
        for read in [Operation::Query, Operation::Scan] {
            assert_eq!(worded(read, select), format!("{PREFIX}{select}"));
        }
        let syntax = "Invalid UpdateExpression: Syntax error; token: \"<EOF>\", near: \",\"";
        assert_eq!(worded(Operation::UpdateItem, syntax), syntax);
    }

    #[test]
    fn partiql_names_no_index_in_its_unknown_index_error() {
        let unknown = "The table does not have the specified index: byEmail";
        assert_eq!(worded(Operation::ExecuteStatement, unknown), UNKNOWN_INDEX);
        assert_eq!(worded(Operation::Query, unknown), unknown);
    }
}
