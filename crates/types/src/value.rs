//! The ten DynamoDB attribute types and the comparisons expressions need.

use crate::Number;
use std::cmp::Ordering;
use std::collections::BTreeMap;

/// An item: attribute names to values. A BTreeMap keeps output deterministic.
pub type Item = BTreeMap<String, AttributeValue>;

/// One DynamoDB attribute value.
///
/// Sets keep their members in insertion order; members are unique (by numeric
/// value for NS), which the JSON decoder and the update operations guarantee.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttributeValue {
    S(String),
    N(Number),
    B(Vec<u8>),
    Bool(bool),
    Null,
    L(Vec<AttributeValue>),
    M(Item),
    Ss(Vec<String>),
    Ns(Vec<Number>),
    Bs(Vec<Vec<u8>>),
}

/// The three types a key attribute may have.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum ScalarType {
    S,
    N,
    B,
}

impl ScalarType {
    pub fn as_str(self) -> &'static str {
        match self {
            ScalarType::S => "S",
            ScalarType::N => "N",
            ScalarType::B => "B",
        }
    }

    pub fn parse(text: &str) -> Option<ScalarType> {
        match text {
            "S" => Some(ScalarType::S),
            "N" => Some(ScalarType::N),
            "B" => Some(ScalarType::B),
            _ => None,
        }
    }
}

impl AttributeValue {
    /// Levels of map and list nesting in this value: 0 for a scalar or a
    /// set, 1 for a map or list of scalars.
    pub fn nesting_depth(&self) -> usize {
        let deepest = |values: &mut dyn Iterator<Item = &AttributeValue>| {
            1 + values.map(AttributeValue::nesting_depth).max().unwrap_or(0)
        };
        match self {
            AttributeValue::M(map) => deepest(&mut map.values()),
            AttributeValue::L(list) => deepest(&mut list.iter()),
            _ => 0,
        }
    }

    /// The type's name as it appears on the wire ("S", "NULL", "SS", ...).
    pub fn type_name(&self) -> &'static str {
        match self {
            AttributeValue::S(_) => "S",
            AttributeValue::N(_) => "N",
            AttributeValue::B(_) => "B",
            AttributeValue::Bool(_) => "BOOL",
            AttributeValue::Null => "NULL",
            AttributeValue::L(_) => "L",
            AttributeValue::M(_) => "M",
            AttributeValue::Ss(_) => "SS",
            AttributeValue::Ns(_) => "NS",
            AttributeValue::Bs(_) => "BS",
        }
    }

    /// The key type of a scalar S, N or B value.
    pub fn scalar_type(&self) -> Option<ScalarType> {
        match self {
            AttributeValue::S(_) => Some(ScalarType::S),
            AttributeValue::N(_) => Some(ScalarType::N),
            AttributeValue::B(_) => Some(ScalarType::B),
            _ => None,
        }
    }

    /// DynamoDB's ordering for `<`, `<=`, `>`, `>=` and BETWEEN: defined only
    /// between two values of the same scalar type (strings and binaries by
    /// unsigned bytes, numbers numerically). `None` means "not comparable",
    /// which makes the comparison false rather than an error.
    pub fn compare(&self, other: &AttributeValue) -> Option<Ordering> {
        match (self, other) {
            (AttributeValue::S(a), AttributeValue::S(b)) => Some(a.as_bytes().cmp(b.as_bytes())),
            (AttributeValue::N(a), AttributeValue::N(b)) => Some(a.cmp(b)),
            (AttributeValue::B(a), AttributeValue::B(b)) => Some(a.cmp(b)),
            _ => None,
        }
    }

    /// Equality as DynamoDB's `=` sees it: sets compare as sets, maps and lists
    /// deeply.
    pub fn dynamo_eq(&self, other: &AttributeValue) -> bool {
        match (self, other) {
            (AttributeValue::Ss(a), AttributeValue::Ss(b)) => same_members(a, b),
            (AttributeValue::Ns(a), AttributeValue::Ns(b)) => same_members(a, b),
            (AttributeValue::Bs(a), AttributeValue::Bs(b)) => same_members(a, b),
            (AttributeValue::L(a), AttributeValue::L(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.dynamo_eq(y))
            }
            (AttributeValue::M(a), AttributeValue::M(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .all(|(k, v)| b.get(k).is_some_and(|w| v.dynamo_eq(w)))
            }
            _ => self == other,
        }
    }

    pub fn as_s(&self) -> Option<&str> {
        match self {
            AttributeValue::S(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_n(&self) -> Option<&Number> {
        match self {
            AttributeValue::N(n) => Some(n),
            _ => None,
        }
    }

    pub fn is_set(&self) -> bool {
        matches!(
            self,
            AttributeValue::Ss(_) | AttributeValue::Ns(_) | AttributeValue::Bs(_)
        )
    }
}

fn same_members<T: PartialEq>(a: &[T], b: &[T]) -> bool {
    a.len() == b.len() && a.iter().all(|x| b.contains(x))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_compare_by_unsigned_bytes() {
        let a = AttributeValue::S("Z".into());
        let b = AttributeValue::S("a".into());
        let c = AttributeValue::S("é".into());
        assert_eq!(a.compare(&b), Some(Ordering::Less));
        assert_eq!(b.compare(&c), Some(Ordering::Less));
        assert_eq!(a.compare(&AttributeValue::N(Number::from(1))), None);
    }

    #[test]
    fn sets_are_equal_regardless_of_order() {
        let a = AttributeValue::Ss(vec!["x".into(), "y".into()]);
        let b = AttributeValue::Ss(vec!["y".into(), "x".into()]);
        assert!(a.dynamo_eq(&b));
        assert!(!a.dynamo_eq(&AttributeValue::Ss(vec!["x".into()])));
    }
}
