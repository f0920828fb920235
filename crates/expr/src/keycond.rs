//! KeyConditionExpression: a condition restricted to `hash = :v [AND range
//! op ...]`, reduced to per-key parts and checked against the key schema.
//!
//! Parsing reuses the condition grammar (so syntax errors and placeholder
//! errors are the usual ones); this module adds Query's own rules and
//! messages.

use crate::ast::{Comparator, Condition, Operand};
use crate::path::{Path, PathElem};
use ferrodyn_types::{AttributeValue, DynamoError, ScalarType};

/// The operation one key attribute is restricted by.
#[derive(Clone, Debug, PartialEq)]
pub enum KeyOp {
    Eq(AttributeValue),
    Lt(AttributeValue),
    Le(AttributeValue),
    Gt(AttributeValue),
    Ge(AttributeValue),
    Between(AttributeValue, AttributeValue),
    BeginsWith(AttributeValue),
}

impl KeyOp {
    fn values(&self) -> Vec<&AttributeValue> {
        match self {
            KeyOp::Eq(v)
            | KeyOp::Lt(v)
            | KeyOp::Le(v)
            | KeyOp::Gt(v)
            | KeyOp::Ge(v)
            | KeyOp::BeginsWith(v) => vec![v],
            KeyOp::Between(a, b) => vec![a, b],
        }
    }
}

/// One key attribute and its restriction.
#[derive(Clone, Debug, PartialEq)]
pub struct KeyPart {
    /// The attribute (the root of the path, if the condition used a nested
    /// path; such a part never survives [`KeyCondition::validate`]).
    pub name: String,
    pub op: KeyOp,
    /// Whether the condition named a nested path (`a.b`, `a[0]`), which
    /// DynamoDB reports only once it knows the key schema.
    nested: bool,
}

/// A parsed KeyConditionExpression (or legacy KeyConditions).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct KeyCondition {
    pub parts: Vec<KeyPart>,
}

fn invalid_operator(op: &str) -> DynamoError {
    DynamoError::validation(format!(
        "Invalid operator used in KeyConditionExpression: {op}"
    ))
}

fn nested() -> DynamoError {
    DynamoError::validation("KeyConditionExpressions cannot contain nested operations")
}

/// A key attribute named through a nested path.
pub(crate) fn not_scalar(key: &str) -> DynamoError {
    DynamoError::validation(format!(
        "Key attributes must be scalars; list random access '[]' and map lookup '.' are not allowed: Key: {key}"
    ))
}

fn missed(key: &str) -> DynamoError {
    DynamoError::validation(format!("Query condition missed key schema element: {key}"))
}

fn part(path: &Path, op: KeyOp) -> KeyPart {
    KeyPart {
        name: path.root().to_string(),
        op,
        nested: !matches!(path.elems(), [PathElem::Attr(_)]),
    }
}

fn flip(cmp: Comparator) -> Comparator {
    match cmp {
        Comparator::Lt => Comparator::Gt,
        Comparator::Le => Comparator::Ge,
        Comparator::Gt => Comparator::Lt,
        Comparator::Ge => Comparator::Le,
        other => other,
    }
}

fn constant(op: &Operand) -> Result<AttributeValue, DynamoError> {
    match op {
        Operand::Value(v) => Ok(v.clone()),
        Operand::Size(_) => Err(nested()),
        // The key attribute compared with another attribute (DynamoDB Local
        // and AWS, moto's test_query_unused_attribute_name).
        Operand::Path(_) => Err(DynamoError::validation(
            "Invalid condition in KeyConditionExpression: Multiple attribute names used in one condition",
        )),
    }
}

impl KeyCondition {
    /// Reduces a parsed condition to key parts.
    pub fn from_condition(cond: &Condition) -> Result<KeyCondition, DynamoError> {
        let mut parts = Vec::new();
        collect(cond, &mut parts)?;
        Ok(KeyCondition { parts })
    }

    /// Checks the parts against the key schema (hash key name and type, and
    /// the range key's if the table has one) and returns the hash part and
    /// the range part, if any. The checks run in DynamoDB's order: nested
    /// paths (on a key attribute first), one condition per key, at most two
    /// conditions, the hash key's presence, then the other part's key.
    pub fn validate(
        &self,
        hash: (&str, ScalarType),
        range: Option<(&str, ScalarType)>,
    ) -> Result<(&KeyPart, Option<&KeyPart>), DynamoError> {
        let is_key = |name: &str| name == hash.0 || range.is_some_and(|r| r.0 == name);
        if let Some(p) = self.parts.iter().find(|p| p.nested && is_key(&p.name)) {
            return Err(not_scalar(&p.name));
        }
        if self.parts.iter().any(|p| p.nested) {
            return Err(DynamoError::validation(
                "KeyConditionExpressions cannot have conditions on nested attributes",
            ));
        }
        let duplicate = self
            .parts
            .iter()
            .enumerate()
            .any(|(i, p)| self.parts[..i].iter().any(|q| q.name == p.name));
        if duplicate {
            return Err(DynamoError::validation(
                "KeyConditionExpressions must only contain one condition per key",
            ));
        }
        if self.parts.len() > 2 {
            return Err(DynamoError::validation(
                "Conditions can be of length 1 or 2 only",
            ));
        }
        let hash_part = self
            .parts
            .iter()
            .find(|p| p.name == hash.0)
            .ok_or_else(|| missed(hash.0))?;
        let range_part = match self.parts.iter().find(|p| p.name != hash.0) {
            None => None,
            Some(p) => match range {
                Some(r) if r.0 == p.name => Some(p),
                Some(r) => return Err(missed(r.0)),
                None => return Err(DynamoError::validation("Query key condition not supported")),
            },
        };
        if !matches!(hash_part.op, KeyOp::Eq(_)) {
            return Err(DynamoError::validation("Query key condition not supported"));
        }
        let mismatch = || {
            DynamoError::invalid_parameter("Condition parameter type does not match schema type")
        };
        let typed = std::iter::once((hash_part, hash.1)).chain(range_part.zip(range.map(|r| r.1)));
        for (part, ty) in typed {
            if part.op.values().iter().any(|v| v.scalar_type() != Some(ty)) {
                return Err(mismatch());
            }
            if matches!(part.op, KeyOp::BeginsWith(_)) && ty == ScalarType::N {
                return Err(DynamoError::validation(
                    "Invalid condition in KeyConditionExpression: begins_with operator is not supported for N type",
                ));
            }
        }
        Ok((hash_part, range_part))
    }
}

/// The parts of a key condition on a multi-attribute (GSI) key, in KeySchema
/// order: one equality per partition-key attribute, then the conditions on
/// a leading run of sort-key attributes (equalities, and the last one any
/// operator).
#[derive(Debug)]
pub struct CompositeParts<'a> {
    pub hash: Vec<&'a KeyPart>,
    pub range: Vec<&'a KeyPart>,
}

fn not_supported(detail: String) -> DynamoError {
    DynamoError::validation(format!("Query key condition not supported: {detail}"))
}

impl KeyCondition {
    /// Checks the parts against a multi-attribute key schema (up to four
    /// HASH and four RANGE attributes, each with its type): every HASH
    /// attribute needs an equality; RANGE attributes are used left to
    /// right without gaps, all with equalities but the last one used.
    pub fn validate_composite(
        &self,
        hash: &[(&str, ScalarType)],
        range: &[(&str, ScalarType)],
    ) -> Result<CompositeParts<'_>, DynamoError> {
        self.check_composite_names(hash, range)?;
        let find = |name: &str| self.parts.iter().find(|p| p.name == name);
        let mut hash_parts = Vec::with_capacity(hash.len());
        for (name, _) in hash {
            match find(name) {
                Some(p) if matches!(p.op, KeyOp::Eq(_)) => hash_parts.push(p),
                found => {
                    return Err(not_supported(format!(
                        "every HASH key attribute of the index needs an equality condition; {} {}",
                        name,
                        if found.is_some() {
                            "is not compared with ="
                        } else {
                            "has no condition"
                        }
                    )))
                }
            }
        }
        let range_parts = self.composite_range_parts(range)?;
        let typed = hash_parts
            .iter()
            .zip(hash)
            .chain(range_parts.iter().zip(range));
        for (part, (_, ty)) in typed {
            check_part_type(part, *ty)?;
        }
        Ok(CompositeParts {
            hash: hash_parts,
            range: range_parts,
        })
    }

    /// The names a multi-attribute key condition uses: no nested path, one
    /// condition per attribute, only the index's key attributes.
    fn check_composite_names(
        &self,
        hash: &[(&str, ScalarType)],
        range: &[(&str, ScalarType)],
    ) -> Result<(), DynamoError> {
        let is_key = |name: &str| hash.iter().chain(range).any(|k| k.0 == name);
        if let Some(p) = self.parts.iter().find(|p| p.nested && is_key(&p.name)) {
            return Err(not_scalar(&p.name));
        }
        if self.parts.iter().any(|p| p.nested) {
            return Err(DynamoError::validation(
                "KeyConditionExpressions cannot have conditions on nested attributes",
            ));
        }
        let duplicate = self
            .parts
            .iter()
            .enumerate()
            .any(|(i, p)| self.parts[..i].iter().any(|q| q.name == p.name));
        if duplicate {
            return Err(DynamoError::validation(
                "KeyConditionExpressions must only contain one condition per key",
            ));
        }
        if let Some(p) = self.parts.iter().find(|p| !is_key(&p.name)) {
            return Err(not_supported(format!(
                "{} is not a key attribute of the index; a KeyConditionExpression may only name the index's HASH and RANGE key attributes",
                p.name
            )));
        }
        Ok(())
    }

    /// The conditions on RANGE attributes: used left to right without a
    /// gap, equalities on all but the last one used.
    fn composite_range_parts(
        &self,
        range: &[(&str, ScalarType)],
    ) -> Result<Vec<&KeyPart>, DynamoError> {
        let find = |name: &str| self.parts.iter().find(|p| p.name == name);
        let mut range_parts = Vec::new();
        let mut gap: Option<&str> = None;
        for (name, _) in range {
            match (find(name), gap) {
                (Some(p), None) => range_parts.push(p),
                (Some(p), Some(missing)) => {
                    return Err(not_supported(format!(
                        "RANGE key attributes must be used left to right with equality conditions; {} has a condition but the earlier RANGE key attribute {missing} has no equality condition",
                        p.name
                    )))
                }
                (None, _) => gap = gap.or(Some(name)),
            }
        }
        if let Some((_, leading)) = range_parts.split_last() {
            if let Some(p) = leading.iter().find(|p| !matches!(p.op, KeyOp::Eq(_))) {
                return Err(not_supported(format!(
                    "RANGE key attributes must be used left to right with equality conditions on all but the last one used; {} is not compared with =",
                    p.name
                )));
            }
        }
        Ok(range_parts)
    }
}

/// A condition's values against its key attribute's type; begins_with
/// takes no numbers.
fn check_part_type(part: &KeyPart, ty: ScalarType) -> Result<(), DynamoError> {
    if part.op.values().iter().any(|v| v.scalar_type() != Some(ty)) {
        return Err(DynamoError::invalid_parameter(
            "Condition parameter type does not match schema type",
        ));
    }
    if matches!(part.op, KeyOp::BeginsWith(_)) && ty == ScalarType::N {
        return Err(DynamoError::validation(
            "Invalid condition in KeyConditionExpression: begins_with operator is not supported for N type",
        ));
    }
    Ok(())
}

fn collect(cond: &Condition, out: &mut Vec<KeyPart>) -> Result<(), DynamoError> {
    match cond {
        Condition::And(a, b) => {
            collect(a, out)?;
            collect(b, out)
        }
        Condition::Or(..) => Err(invalid_operator("OR")),
        Condition::Not(_) => Err(invalid_operator("NOT")),
        Condition::In(..) => Err(invalid_operator("IN")),
        Condition::True => Ok(()),
        Condition::AttributeExists(_) => Err(invalid_operator("attribute_exists")),
        Condition::AttributeNotExists(_) => Err(invalid_operator("attribute_not_exists")),
        Condition::AttributeType(..) => Err(invalid_operator("attribute_type")),
        Condition::Contains(..) => Err(invalid_operator("contains")),
        Condition::Compare(Comparator::Ne, ..) => Err(invalid_operator("<>")),
        Condition::Compare(cmp, a, b) => {
            let (path, value, cmp) = match (a, b) {
                (Operand::Path(p), other) => (p, other, *cmp),
                (other, Operand::Path(p)) => (p, other, flip(*cmp)),
                (Operand::Size(_), _) | (_, Operand::Size(_)) => return Err(nested()),
                _ => return Err(DynamoError::validation("Query key condition not supported")),
            };
            let v = constant(value)?;
            let op = match cmp {
                Comparator::Eq => KeyOp::Eq(v),
                Comparator::Lt => KeyOp::Lt(v),
                Comparator::Le => KeyOp::Le(v),
                Comparator::Gt => KeyOp::Gt(v),
                _ => KeyOp::Ge(v),
            };
            out.push(part(path, op));
            Ok(())
        }
        Condition::Between(x, lo, hi) => {
            let Operand::Path(p) = x else {
                return Err(nested());
            };
            out.push(part(p, KeyOp::Between(constant(lo)?, constant(hi)?)));
            Ok(())
        }
        Condition::BeginsWith(x, prefix) => {
            let Operand::Path(p) = x else {
                return Err(DynamoError::validation(
                    "Invalid condition in KeyConditionExpression: begins_with operator must have the key attribute as its first operand",
                ));
            };
            out.push(part(p, KeyOp::BeginsWith(constant(prefix)?)));
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::{parse_key_condition, ExpressionContext};
    use ferrodyn_types::{AttributeValue, Number, ScalarType};
    use std::collections::HashMap;

    const HASH: &[(&str, ScalarType)] = &[("h1", ScalarType::S), ("h2", ScalarType::S)];
    const RANGE: &[(&str, ScalarType)] = &[
        ("r1", ScalarType::N),
        ("r2", ScalarType::S),
        ("r3", ScalarType::S),
    ];

    /// Validates `text` against the 2 HASH + 3 RANGE schema above and
    /// returns the names of the range parts used, in schema order.
    fn check(text: &str) -> Result<Vec<String>, String> {
        let values: HashMap<String, AttributeValue> = [
            (":s", AttributeValue::S("x".into())),
            (":t", AttributeValue::S("y".into())),
            (":n", AttributeValue::N(Number::from(1))),
            (":m", AttributeValue::N(Number::from(2))),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        let mut ctx = ExpressionContext::new(None, Some(&values)).unwrap();
        let kc = parse_key_condition(text, &mut ctx).map_err(|e| e.message)?;
        let parts = kc.validate_composite(HASH, RANGE).map_err(|e| e.message)?;
        assert_eq!(
            parts
                .hash
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>(),
            ["h1", "h2"]
        );
        Ok(parts.range.iter().map(|p| p.name.clone()).collect())
    }

    #[test]
    fn composite_conditions_accepted_in_any_textual_order() {
        assert_eq!(check("h1 = :s AND h2 = :t"), Ok(vec![]));
        assert_eq!(
            check("h2 = :t AND h1 = :s AND r1 > :n"),
            Ok(vec!["r1".into()])
        );
        assert_eq!(
            check("r2 = :s AND h1 = :s AND r1 = :n AND h2 = :t"),
            Ok(vec!["r1".into(), "r2".into()])
        );
        assert_eq!(
            check("h1 = :s AND h2 = :t AND r1 = :n AND r2 = :s AND begins_with(r3, :t)"),
            Ok(vec!["r1".into(), "r2".into(), "r3".into()])
        );
        assert_eq!(
            check("h1 = :s AND h2 = :t AND r1 BETWEEN :n AND :m"),
            Ok(vec!["r1".into()])
        );
    }

    #[test]
    fn composite_condition_errors() {
        let unsupported = "Query key condition not supported: ";
        let errors = [
            (
                "h1 = :s",
                "every HASH key attribute of the index needs an equality condition; h2 has no condition",
            ),
            (
                "h1 = :s AND h2 > :t",
                "every HASH key attribute of the index needs an equality condition; h2 is not compared with =",
            ),
            (
                "h1 = :s AND begins_with(h2, :t)",
                "every HASH key attribute of the index needs an equality condition; h2 is not compared with =",
            ),
            (
                "h1 = :s AND h2 = :t AND r2 = :s",
                "RANGE key attributes must be used left to right with equality conditions; r2 has a condition but the earlier RANGE key attribute r1 has no equality condition",
            ),
            (
                "h1 = :s AND h2 = :t AND r1 = :n AND r3 = :s",
                "RANGE key attributes must be used left to right with equality conditions; r3 has a condition but the earlier RANGE key attribute r2 has no equality condition",
            ),
            (
                "h1 = :s AND h2 = :t AND r1 > :n AND r2 = :s",
                "RANGE key attributes must be used left to right with equality conditions on all but the last one used; r1 is not compared with =",
            ),
            (
                "h1 = :s AND h2 = :t AND r1 = :n AND begins_with(r2, :s) AND r3 < :t",
                "RANGE key attributes must be used left to right with equality conditions on all but the last one used; r2 is not compared with =",
            ),
            (
                "h1 = :s AND h2 = :t AND x = :s",
                "x is not a key attribute of the index; a KeyConditionExpression may only name the index's HASH and RANGE key attributes",
            ),
        ];
        for (text, want) in errors {
            assert_eq!(
                check(text).unwrap_err(),
                format!("{unsupported}{want}"),
                "{text}"
            );
        }
        assert_eq!(
            check("h1 = :n AND h2 = :t").unwrap_err(),
            "One or more parameter values were invalid: Condition parameter type does not match schema type"
        );
        // begins_with on an N key: its operand can only be a string (the
        // parser refuses a number operand), which does not match the type.
        assert_eq!(
            check("h1 = :s AND h2 = :t AND begins_with(r1, :s)").unwrap_err(),
            "One or more parameter values were invalid: Condition parameter type does not match schema type"
        );
        assert_eq!(
            check("h1 = :s AND h2 = :t AND h1 = :t").unwrap_err(),
            "KeyConditionExpressions must only contain one condition per key"
        );
        assert_eq!(
            check("h1 = :s AND h2.x = :t").unwrap_err(),
            "Key attributes must be scalars; list random access '[]' and map lookup '.' are not allowed: Key: h2"
        );
    }
}
