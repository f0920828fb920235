//! ExpressionAttributeNames and ExpressionAttributeValues of one request:
//! validation of the maps themselves, substitution of placeholders, and the
//! "unused placeholder" check DynamoDB runs once every expression of the
//! request has been parsed.

use crate::legacy::MAX_ATTRIBUTE_NAME_BYTES;
use ferrodyn_types::{AttributeValue, DynamoError, Family};
use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};

/// The placeholders of one request and which of them were used.
#[derive(Clone, Debug, Default)]
pub struct ExpressionContext {
    names: HashMap<String, String>,
    values: HashMap<String, AttributeValue>,
    used_names: HashSet<String>,
    used_values: HashSet<String>,
}

/// Whether `key` is `prefix` followed by one or more `[A-Za-z0-9_]`.
fn valid_key(key: &str, prefix: char) -> bool {
    let mut chars = key.chars();
    chars.next() == Some(prefix)
        && key.len() > 1
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// DynamoDB lists keys in messages case-insensitively sorted.
fn sorted_keys<'a>(keys: impl Iterator<Item = &'a String>) -> Vec<&'a String> {
    let mut keys: Vec<&String> = keys.collect();
    keys.sort_by(|a, b| case_insensitive(a, b));
    keys
}

fn case_insensitive(a: &str, b: &str) -> Ordering {
    a.chars()
        .flat_map(char::to_lowercase)
        .cmp(b.chars().flat_map(char::to_lowercase))
        .then_with(|| a.cmp(b))
}

impl ExpressionContext {
    /// Validates the two maps as DynamoDB does before looking at any
    /// expression (keys are checked in sorted order so the reported one is
    /// deterministic).
    pub fn new(
        names: Option<&HashMap<String, String>>,
        values: Option<&HashMap<String, AttributeValue>>,
    ) -> Result<Self, DynamoError> {
        if let Some(names) = names {
            if names.is_empty() {
                return Err(
                    DynamoError::validation("ExpressionAttributeNames must not be empty")
                        .in_family(Family::WriteValidation),
                );
            }
            for key in sorted_keys(names.keys()) {
                if !valid_key(key, '#') {
                    return Err(DynamoError::validation(format!(
                        "ExpressionAttributeNames contains invalid key: Syntax error; key: \"{key}\""
                    )));
                }
                if names[key].is_empty() {
                    return Err(DynamoError::validation(format!(
                        "ExpressionAttributeNames contains invalid value: Empty attribute name for key {key}"
                    )));
                }
                if names[key].len() > MAX_ATTRIBUTE_NAME_BYTES {
                    return Err(DynamoError::validation(format!(
                        "ExpressionAttributeNames contains invalid value: Attribute name is too large, must be less than 65536 bytes for key {key}"
                    )));
                }
            }
        }
        if let Some(values) = values {
            if values.is_empty() {
                return Err(
                    DynamoError::validation("ExpressionAttributeValues must not be empty")
                        .in_family(Family::WriteValidation),
                );
            }
            for key in sorted_keys(values.keys()) {
                if !valid_key(key, ':') {
                    return Err(DynamoError::validation(format!(
                        "ExpressionAttributeValues contains invalid key: Syntax error; key: \"{key}\""
                    )));
                }
            }
        }
        Ok(ExpressionContext {
            names: names.cloned().unwrap_or_default(),
            values: values.cloned().unwrap_or_default(),
            used_names: HashSet::new(),
            used_values: HashSet::new(),
        })
    }

    /// A context with no placeholders at all.
    pub fn empty() -> Self {
        Self::default()
    }

    /// Substitutes `#name`, marking it used.
    pub(crate) fn name(&mut self, key: &str) -> Option<String> {
        let value = self.names.get(key)?.clone();
        self.used_names.insert(key.to_string());
        Some(value)
    }

    /// Substitutes `:value`, marking it used.
    pub(crate) fn value(&mut self, key: &str) -> Option<AttributeValue> {
        let value = self.values.get(key)?.clone();
        self.used_values.insert(key.to_string());
        Some(value)
    }

    /// After every expression of the request is parsed: DynamoDB rejects
    /// placeholders no expression used (names are checked first).
    pub fn check_all_used(&self) -> Result<(), DynamoError> {
        let unused: Vec<&String> =
            sorted_keys(self.names.keys().filter(|k| !self.used_names.contains(*k)));
        if !unused.is_empty() {
            return Err(DynamoError::validation(format!(
                "Value provided in ExpressionAttributeNames unused in expressions: keys: {{{}}}",
                join(&unused)
            ))
            .in_family(Family::WriteValidation));
        }
        let unused: Vec<&String> = sorted_keys(
            self.values
                .keys()
                .filter(|k| !self.used_values.contains(*k)),
        );
        if !unused.is_empty() {
            return Err(DynamoError::validation(format!(
                "Value provided in ExpressionAttributeValues unused in expressions: keys: {{{}}}",
                join(&unused)
            ))
            .in_family(Family::WriteValidation));
        }
        Ok(())
    }
}

fn join(keys: &[&String]) -> String {
    keys.iter()
        .map(|k| k.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrodyn_types::Number;

    fn names(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn values(keys: &[&str]) -> HashMap<String, AttributeValue> {
        keys.iter()
            .map(|k| (k.to_string(), AttributeValue::N(Number::from(1))))
            .collect()
    }

    fn err(names: Option<HashMap<String, String>>, vals: Option<&[&str]>) -> String {
        let v = vals.map(values);
        ExpressionContext::new(names.as_ref(), v.as_ref())
            .unwrap_err()
            .message
    }

    #[test]
    fn map_validation_messages() {
        assert_eq!(
            err(Some(names(&[])), None),
            "ExpressionAttributeNames must not be empty"
        );
        assert_eq!(
            err(None, Some(&[])),
            "ExpressionAttributeValues must not be empty"
        );
        assert_eq!(
            err(Some(names(&[("n", "a")])), None),
            "ExpressionAttributeNames contains invalid key: Syntax error; key: \"n\""
        );
        assert_eq!(
            err(Some(names(&[("#", "a")])), None),
            "ExpressionAttributeNames contains invalid key: Syntax error; key: \"#\""
        );
        assert_eq!(
            err(Some(names(&[("#n-x", "a")])), None),
            "ExpressionAttributeNames contains invalid key: Syntax error; key: \"#n-x\""
        );
        assert_eq!(
            err(Some(names(&[("#n", "")])), None),
            "ExpressionAttributeNames contains invalid value: Empty attribute name for key #n"
        );
        assert_eq!(
            err(Some(names(&[("#n", &"x".repeat(65536))])), None),
            "ExpressionAttributeNames contains invalid value: Attribute name is too large, must be less than 65536 bytes for key #n"
        );
        assert!(ExpressionContext::new(Some(&names(&[("#n", &"x".repeat(65535))])), None).is_ok());
        assert_eq!(
            err(None, Some(&["v"])),
            "ExpressionAttributeValues contains invalid key: Syntax error; key: \"v\""
        );
        assert_eq!(
            err(None, Some(&[":"])),
            "ExpressionAttributeValues contains invalid key: Syntax error; key: \":\""
        );
    }

    #[test]
    fn unused_keys_are_listed_case_insensitively() {
        let v = values(&[":w", ":a", ":B", ":_", ":used"]);
        let n = names(&[("#b", "x"), ("#a", "y")]);
        let mut ctx = ExpressionContext::new(None, Some(&v)).unwrap();
        ctx.value(":used");
        assert_eq!(
            ctx.check_all_used().unwrap_err().message,
            "Value provided in ExpressionAttributeValues unused in expressions: keys: {:_, :a, :B, :w}"
        );
        let ctx = ExpressionContext::new(Some(&n), Some(&v)).unwrap();
        assert_eq!(
            ctx.check_all_used().unwrap_err().message,
            "Value provided in ExpressionAttributeNames unused in expressions: keys: {#a, #b}"
        );
    }
}
