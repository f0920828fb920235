//! Query's rule that a filter may not touch the key attributes of the table
//! or index queried (those belong in the key condition), with the messages
//! of each filter parameter. Scan has no such rule.
//!
//! The filter is parsed before the table is known, so this is a separate
//! check the Query operation runs once it has the key schema.

use crate::ast::{Condition, Operand};
use crate::keycond::not_scalar;
use crate::path::Path;
use ferrodyn_types::DynamoError;

/// Which Query parameter a filter came from; it names the parameter in
/// messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueryFilterParam {
    /// FilterExpression.
    Expression,
    /// The legacy QueryFilter map.
    Legacy,
}

impl QueryFilterParam {
    fn name(self) -> &'static str {
        match self {
            QueryFilterParam::Expression => "Filter Expression",
            QueryFilterParam::Legacy => "QueryFilter",
        }
    }
}

impl Condition {
    /// Every document path the condition reads, in expression order.
    pub fn paths(&self) -> Vec<&Path> {
        let mut out = Vec::new();
        collect(self, &mut out);
        out
    }

    /// Rejects a Query filter that uses one of `keys` (the partition and
    /// sort key names of the table or index queried), as DynamoDB does: the
    /// first such path in expression order is reported.
    pub fn check_no_key_attributes(
        &self,
        keys: &[&str],
        param: QueryFilterParam,
    ) -> Result<(), DynamoError> {
        for path in self.paths() {
            let root = path.root();
            if !keys.contains(&root) {
                continue;
            }
            if !path.is_top_level() {
                return Err(not_scalar(root));
            }
            return Err(DynamoError::validation(format!(
                "{} can only contain non-primary key attributes: Primary key attribute: {root}",
                param.name()
            )));
        }
        Ok(())
    }
}

fn operand<'a>(op: &'a Operand, out: &mut Vec<&'a Path>) {
    match op {
        Operand::Path(p) => out.push(p),
        Operand::Value(_) => {}
        Operand::Size(inner) => operand(inner, out),
    }
}

fn collect<'a>(cond: &'a Condition, out: &mut Vec<&'a Path>) {
    // Iterative along AND/OR chains, which may be ~300 deep.
    let mut pending = vec![cond];
    while let Some(cond) = pending.pop() {
        match cond {
            Condition::And(a, b) | Condition::Or(a, b) => {
                pending.push(b);
                pending.push(a);
            }
            Condition::Not(a) => pending.push(a),
            Condition::True => {}
            Condition::AttributeExists(p) | Condition::AttributeNotExists(p) => out.push(p),
            Condition::Compare(_, a, b)
            | Condition::AttributeType(a, b)
            | Condition::BeginsWith(a, b)
            | Condition::Contains(a, b) => {
                operand(a, out);
                operand(b, out);
            }
            Condition::Between(x, lo, hi) => {
                for o in [x, lo, hi] {
                    operand(o, out);
                }
            }
            Condition::In(x, list) => {
                operand(x, out);
                for o in list {
                    operand(o, out);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{legacy_filter, parse_filter, ExpressionContext, QueryFilterParam};
    use ferrodyn_types::AttributeValue;
    use std::collections::HashMap;

    const KEYS: [&str; 2] = ["p", "c"];

    fn expression(text: &str) -> Result<(), String> {
        let values: HashMap<String, AttributeValue> =
            [(":v".to_string(), AttributeValue::S("x".into()))].into();
        let mut ctx = ExpressionContext::new(None, Some(&values)).unwrap();
        parse_filter(text, &mut ctx)
            .unwrap()
            .check_no_key_attributes(&KEYS, QueryFilterParam::Expression)
            .map_err(|e| e.message)
    }

    #[test]
    fn filter_expression_on_keys() {
        let cases: [(&str, Result<(), &str>); 8] = [
            ("i = :v", Ok(())),
            ("i = j OR contains(l, :v)", Ok(())),
            ("p = :v", Err("Filter Expression can only contain non-primary key attributes: Primary key attribute: p")),
            ("i = c", Err("Filter Expression can only contain non-primary key attributes: Primary key attribute: c")),
            ("i = :v AND attribute_exists(c)", Err("Filter Expression can only contain non-primary key attributes: Primary key attribute: c")),
            ("i IN (j, p)", Err("Filter Expression can only contain non-primary key attributes: Primary key attribute: p")),
            ("NOT (c = :v AND p = :v)", Err("Filter Expression can only contain non-primary key attributes: Primary key attribute: c")),
            ("size(c.d) > :v OR i = :v", Err("Key attributes must be scalars; list random access '[]' and map lookup '.' are not allowed: Key: c")),
        ];
        for (text, want) in cases {
            assert_eq!(expression(text), want.map_err(str::to_string), "{text}");
        }
    }

    #[test]
    fn query_filter_on_keys() {
        let check = |json: &str| {
            let v: serde_json::Value = serde_json::from_str(json).unwrap();
            legacy_filter(&v, None)
                .unwrap()
                .check_no_key_attributes(&KEYS, QueryFilterParam::Legacy)
                .map_err(|e| e.message)
        };
        assert_eq!(check(r#"{"i":{"ComparisonOperator":"NOT_NULL"}}"#), Ok(()));
        assert_eq!(
            check(r#"{"c":{"ComparisonOperator":"EQ","AttributeValueList":[{"N":"3"}]}}"#),
            Err(
                "QueryFilter can only contain non-primary key attributes: Primary key attribute: c"
                    .to_string()
            )
        );
        // A legacy name is a whole attribute name, dots included.
        assert_eq!(check(r#"{"c.d":{"ComparisonOperator":"NULL"}}"#), Ok(()));
    }
}
