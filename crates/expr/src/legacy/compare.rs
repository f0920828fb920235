//! The legacy ComparisonOperator: which operators exist, how many arguments
//! of which types each takes, and the condition each builds.

use crate::ast::{Comparator, Condition, Operand};
use crate::path::Path;
use ferrodyn_types::{AttributeValue, DynamoError};

/// Every ComparisonOperator, in the order AWS lists them in its "Member must
/// satisfy enum value set" message.
pub const COMPARISON_OPERATORS: [&str; 13] = [
    "IN",
    "NULL",
    "BETWEEN",
    "LT",
    "NOT_CONTAINS",
    "EQ",
    "GT",
    "NOT_NULL",
    "NE",
    "LE",
    "BEGINS_WITH",
    "GE",
    "CONTAINS",
];

/// The number of arguments an operator takes (None: one or more), or None
/// for an unknown operator.
pub(super) fn arity(op: &str) -> Option<Option<usize>> {
    Some(match op {
        "NOT_NULL" | "NULL" => Some(0),
        "BETWEEN" => Some(2),
        "IN" => None,
        _ if COMPARISON_OPERATORS.contains(&op) => Some(1),
        _ => return None,
    })
}

/// The ComparisonOperator of one entry of a legacy map, checked as AWS's
/// request validation does. `param` is the map's member name in AWS's
/// messages ("queryFilter", "keyConditions", ...); without it (a caller that
/// cannot say which filter it has) the generic message is given.
pub(super) fn operator<'a>(
    op: Option<&'a str>,
    param: Option<&str>,
    name: &str,
) -> Result<&'a str, DynamoError> {
    let known = op.is_some_and(|op| arity(op).is_some());
    match (op, param) {
        (Some(op), _) if known => Ok(op),
        (_, None) => Err(DynamoError::validation(
            "Comparison type does not exist in DynamoDB",
        )),
        (None, Some(param)) => Err(DynamoError::validation(format!(
            "1 validation error detected: Value null at '{param}.{name}.member.comparisonOperator' failed to satisfy constraint: Member must not be null"
        ))),
        (Some(op), Some(param)) => Err(DynamoError::validation(format!(
            "1 validation error detected: Value '{op}' at '{param}.{name}.member.comparisonOperator' failed to satisfy constraint: Member must satisfy enum value set: [{}]",
            COMPARISON_OPERATORS.join(", ")
        ))),
    }
}

/// Builds the condition for `attribute OPERATOR args` (`op` known to
/// exist), validating the arguments as DynamoDB does.
pub(super) fn comparison(
    name: &str,
    op: &str,
    args: Vec<AttributeValue>,
) -> Result<Condition, DynamoError> {
    check_arguments(op, &args)?;
    build_condition(name, op, args)
}

/// The argument count and types DynamoDB checks before evaluating anything.
fn check_arguments(op: &str, args: &[AttributeValue]) -> Result<(), DynamoError> {
    let count_ok = match arity(op).flatten() {
        Some(n) => args.len() == n,
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
        for v in args {
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
    Ok(())
}

/// The condition a checked legacy comparison stands for.
fn build_condition(
    name: &str,
    op: &str,
    args: Vec<AttributeValue>,
) -> Result<Condition, DynamoError> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operator_messages() {
        let enum_set = "[IN, NULL, BETWEEN, LT, NOT_CONTAINS, EQ, GT, NOT_NULL, NE, LE, BEGINS_WITH, GE, CONTAINS]";
        type Case<'a> = (Option<&'a str>, Option<&'a str>, Result<&'a str, String>);
        let cases: [Case; 6] = [
            (Some("EQ"), Some("queryFilter"), Ok("EQ")),
            (Some("NOT_NULL"), None, Ok("NOT_NULL")),
            (Some("eq"), Some("queryFilter"), Err(format!("1 validation error detected: Value 'eq' at 'queryFilter.i.member.comparisonOperator' failed to satisfy constraint: Member must satisfy enum value set: {enum_set}"))),
            (Some("DOG"), Some("keyConditions"), Err(format!("1 validation error detected: Value 'DOG' at 'keyConditions.i.member.comparisonOperator' failed to satisfy constraint: Member must satisfy enum value set: {enum_set}"))),
            (None, Some("scanFilter"), Err("1 validation error detected: Value null at 'scanFilter.i.member.comparisonOperator' failed to satisfy constraint: Member must not be null".to_string())),
            (Some("DOG"), None, Err("Comparison type does not exist in DynamoDB".to_string())),
        ];
        for (op, param, want) in cases {
            assert_eq!(
                operator(op, param, "i").map_err(|e| e.message),
                want,
                "{op:?} {param:?}"
            );
        }
    }
}
