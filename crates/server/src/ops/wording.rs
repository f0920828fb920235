//! AWS's current wording of the validation errors whose wording depends on
//! the operation. DynamoDB's newer request validation, which PutItem,
//! UpdateItem, DeleteItem and (for Select) Query and Scan go through,
//! reports some checks as "1 validation error detected: <message>", while
//! GetItem and the rest report the same messages bare; PartiQL names no
//! index in its unknown-index error. Which checks those are is said where
//! each error is raised ([`Family`], carried by the error); this module only
//! maps families to operations, so fixing a message's text never changes
//! which operations prefix it. The families and operations are those
//! AWS-verified tests record (moto 5.2.5's tests/test_dynamodb, marked
//! aws_verified; moto 5.2.3's record had Scan's Select errors bare, so AWS
//! moved Scan between the two).

use crate::ops::Operation;
use ferrodyn_types::{DynamoError, Family};

const PREFIX: &str = "1 validation error detected: ";

/// How the newer validation's wording applies to `operation`.
enum Newer {
    /// "1 validation error detected: " and the newer message.
    Prefixed,
    /// The newer message as it is.
    Bare,
}

fn wording(family: Family, operation: Operation) -> Option<Newer> {
    use Operation::*;
    match (family, operation) {
        (Family::WriteValidation, PutItem | UpdateItem | DeleteItem) => Some(Newer::Prefixed),
        (Family::SelectValidation, Query | Scan) => Some(Newer::Prefixed),
        (Family::UnknownIndex, ExecuteStatement) => Some(Newer::Bare),
        _ => None,
    }
}

/// `error` as AWS words it for `operation`.
pub fn as_aws_words(operation: Operation, mut error: DynamoError) -> DynamoError {
    let Some(newer) = error.newer.take() else {
        return error;
    };
    match wording(newer.family, operation) {
        Some(Newer::Prefixed) => error.message = format!("{PREFIX}{}", newer.message),
        Some(Newer::Bare) => error.message = newer.message,
        None => {}
    }
    error
}

#[cfg(test)]
mod tests {
    use super::*;

    fn worded(operation: Operation, error: DynamoError) -> String {
        as_aws_words(operation, error).message
    }

    fn write(message: &str) -> DynamoError {
        DynamoError::validation(message).in_family(Family::WriteValidation)
    }

    #[test]
    fn item_writes_prefix_the_write_family() {
        let unused = "Value provided in ExpressionAttributeNames unused in expressions: keys: {#c}";
        for op in [
            Operation::PutItem,
            Operation::UpdateItem,
            Operation::DeleteItem,
        ] {
            assert_eq!(worded(op, write(unused)), format!("{PREFIX}{unused}"));
        }
        let wrapped = DynamoError::validation(
            "ExpressionAttributeValues contains invalid value: One or more parameter values were invalid: An number set  may not be empty for key :one",
        )
        .worded_newer(
            Family::WriteValidation,
            "One or more parameter values were invalid: An number set  may not be empty",
        );
        assert_eq!(
            worded(Operation::UpdateItem, wrapped.clone()),
            "1 validation error detected: One or more parameter values were invalid: An number set  may not be empty"
        );
        assert!(worded(Operation::Query, wrapped)
            .starts_with("ExpressionAttributeValues contains invalid value"));
    }

    #[test]
    fn reads_keep_the_bare_wording_and_errors_without_a_family_are_untouched() {
        let unused = "Value provided in ExpressionAttributeNames unused in expressions: keys: {#c}";
        for op in [Operation::GetItem, Operation::Scan, Operation::Query] {
            assert_eq!(worded(op, write(unused)), unused);
        }
        let select = "Cannot specify the ProjectionExpression when choosing to get only the Count";
        let select_error = || DynamoError::validation(select).in_family(Family::SelectValidation);
        assert_eq!(worded(Operation::GetItem, select_error()), select);
        for read in [Operation::Query, Operation::Scan] {
            assert_eq!(worded(read, select_error()), format!("{PREFIX}{select}"));
        }
        let syntax = "Invalid UpdateExpression: Syntax error; token: \"<EOF>\", near: \",\"";
        assert_eq!(
            worded(Operation::UpdateItem, DynamoError::validation(syntax)),
            syntax
        );
    }

    #[test]
    fn partiql_names_no_index_in_its_unknown_index_error() {
        let unknown = || {
            DynamoError::validation("The table does not have the specified index: byEmail")
                .worded_newer(
                    Family::UnknownIndex,
                    "The table does not have the specified index",
                )
        };
        assert_eq!(
            worded(Operation::ExecuteStatement, unknown()),
            "The table does not have the specified index"
        );
        assert_eq!(
            worded(Operation::Query, unknown()),
            "The table does not have the specified index: byEmail"
        );
    }
}
