//! Evaluation of conditions against an item.
//!
//! DynamoDB's rule is that a comparison involving a missing attribute, or
//! values of types the operator does not relate, is simply false (`<>` is
//! its negation, so it is true); only constant operands of the wrong type are
//! errors, and those were rejected when the expression was validated.

use crate::ast::{Comparator, Condition, Operand};
use ferrodyn_types::{AttributeValue, DynamoError, Item, Number};
use std::borrow::Cow;
use std::cmp::Ordering;

/// The value of an operand, if it has one.
fn operand_value<'a>(op: &'a Operand, item: Option<&'a Item>) -> Option<Cow<'a, AttributeValue>> {
    match op {
        Operand::Value(v) => Some(Cow::Borrowed(v)),
        Operand::Path(p) => item.and_then(|it| p.lookup(it)).map(Cow::Borrowed),
        Operand::Size(inner) => {
            let v = operand_value(inner, item)?;
            size_of(&v).map(|n| Cow::Owned(AttributeValue::N(Number::from(n as i64))))
        }
    }
}

/// `size()`: string length in UTF-16 code units (as DynamoDB counts), bytes
/// of a binary, members of a set, list or map. Other types have no size.
pub fn size_of(v: &AttributeValue) -> Option<usize> {
    Some(match v {
        AttributeValue::S(s) => s.encode_utf16().count(),
        AttributeValue::B(b) => b.len(),
        AttributeValue::Ss(x) => x.len(),
        AttributeValue::Ns(x) => x.len(),
        AttributeValue::Bs(x) => x.len(),
        AttributeValue::L(x) => x.len(),
        AttributeValue::M(x) => x.len(),
        _ => return None,
    })
}

fn compare(cmp: Comparator, a: Option<&AttributeValue>, b: Option<&AttributeValue>) -> bool {
    match cmp {
        Comparator::Eq => matches!((a, b), (Some(a), Some(b)) if a.dynamo_eq(b)),
        Comparator::Ne => !compare(Comparator::Eq, a, b),
        _ => {
            let (Some(a), Some(b)) = (a, b) else {
                return false;
            };
            match a.compare(b) {
                None => false,
                Some(ord) => match cmp {
                    Comparator::Lt => ord == Ordering::Less,
                    Comparator::Le => ord != Ordering::Greater,
                    Comparator::Gt => ord == Ordering::Greater,
                    _ => ord != Ordering::Less,
                },
            }
        }
    }
}

fn begins_with(a: &AttributeValue, b: &AttributeValue) -> bool {
    match (a, b) {
        (AttributeValue::S(a), AttributeValue::S(b)) => a.starts_with(b.as_str()),
        (AttributeValue::B(a), AttributeValue::B(b)) => a.starts_with(b),
        _ => false,
    }
}

fn contains(a: &AttributeValue, b: &AttributeValue) -> bool {
    match (a, b) {
        (AttributeValue::S(a), AttributeValue::S(b)) => a.contains(b.as_str()),
        (AttributeValue::B(a), AttributeValue::B(b)) => {
            b.is_empty() || a.windows(b.len()).any(|w| w == b.as_slice())
        }
        (AttributeValue::Ss(set), AttributeValue::S(x)) => set.contains(x),
        (AttributeValue::Ns(set), AttributeValue::N(x)) => set.contains(x),
        (AttributeValue::Bs(set), AttributeValue::B(x)) => set.contains(x),
        (AttributeValue::L(list), x) => list.iter().any(|e| e.dynamo_eq(x)),
        _ => false,
    }
}

impl Condition {
    /// Evaluates the condition; `None` is an absent item, against which every
    /// path is missing.
    pub fn evaluate(&self, item: Option<&Item>) -> Result<bool, DynamoError> {
        // Only AND/OR/NOT recurse; keeping leaves out of this frame keeps
        // 300-deep expressions well within a thread's stack.
        Ok(match self {
            Condition::And(a, b) => a.evaluate(item)? && b.evaluate(item)?,
            Condition::Or(a, b) => a.evaluate(item)? || b.evaluate(item)?,
            Condition::Not(a) => !a.evaluate(item)?,
            leaf => leaf.evaluate_leaf(item)?,
        })
    }

    #[inline(never)]
    fn evaluate_leaf(&self, item: Option<&Item>) -> Result<bool, DynamoError> {
        let value = |op| operand_value(op, item);
        Ok(match self {
            Condition::True => true,
            Condition::Compare(cmp, a, b) => {
                compare(*cmp, value(a).as_deref(), value(b).as_deref())
            }
            Condition::Between(x, lo, hi) => {
                let (Some(x), Some(lo), Some(hi)) = (value(x), value(lo), value(hi)) else {
                    return Ok(false);
                };
                matches!(
                    (x.compare(&lo), x.compare(&hi)),
                    (
                        Some(Ordering::Greater | Ordering::Equal),
                        Some(Ordering::Less | Ordering::Equal)
                    )
                )
            }
            Condition::In(x, list) => {
                let Some(x) = value(x) else {
                    return Ok(false);
                };
                list.iter()
                    .any(|o| value(o).is_some_and(|v| x.dynamo_eq(&v)))
            }
            Condition::AttributeExists(p) => item.and_then(|it| p.lookup(it)).is_some(),
            Condition::AttributeNotExists(p) => item.and_then(|it| p.lookup(it)).is_none(),
            Condition::AttributeType(x, t) => {
                let actual = value(x).map(|v| v.type_name());
                matches!((actual, value(t).as_deref()), (Some(a), Some(AttributeValue::S(t))) if a == t)
            }
            Condition::BeginsWith(a, b) => match (value(a), value(b)) {
                (Some(a), Some(b)) => begins_with(&a, &b),
                _ => false,
            },
            Condition::Contains(a, b) => match (value(a), value(b)) {
                (Some(a), Some(b)) => contains(&a, &b),
                _ => false,
            },
            Condition::And(..) | Condition::Or(..) | Condition::Not(..) => self.evaluate(item)?,
        })
    }
}
