//! ExpressionAttributeNames and ExpressionAttributeValues as they are handed
//! out while an expression is written.
//!
//! Names are aliased only when they must be (a reserved word such as
//! `status`, or a name that is not a plain identifier), unless every name is
//! to be aliased; an alias reads like its name (`#status`) so the expression
//! stays legible. Value placeholders are named after the attribute they are
//! compared with (`:status`), and an identical value reuses its placeholder.

use serde_json::Value;
use std::collections::BTreeMap;

/// The placeholders of one request, shared by all its expressions.
#[derive(Debug, Clone, Default)]
pub struct Placeholders {
    /// `#alias` → attribute name.
    pub names: BTreeMap<String, String>,
    /// `:placeholder` → typed value.
    pub values: BTreeMap<String, Value>,
    alias_all: bool,
}

/// Whether `name` may appear in an expression as it is.
pub fn is_plain_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `[A-Za-z0-9_]` characters of `text`, for readable placeholder names.
fn sanitize(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

impl Placeholders {
    /// Placeholders that alias only the names that need it.
    pub fn new() -> Placeholders {
        Placeholders::default()
    }

    /// Placeholders that alias every attribute name.
    pub fn aliasing_all() -> Placeholders {
        Placeholders {
            alias_all: true,
            ..Placeholders::default()
        }
    }

    /// How attribute `name` is written in the expression: itself, or an
    /// alias registered in [`Placeholders::names`]. Reserved words are always
    /// aliased, since DynamoDB rejects them bare.
    pub fn name(&mut self, name: &str) -> String {
        if !self.alias_all && is_plain_identifier(name) && !ferrodyn_expr::is_reserved(name) {
            return name.to_string();
        }
        if let Some((alias, _)) = self.names.iter().find(|(_, n)| n.as_str() == name) {
            return alias.clone();
        }
        let base = match sanitize(name) {
            s if s.is_empty() => "n".to_string(),
            s => s,
        };
        let alias = unique_key('#', &base, |k| self.names.contains_key(k));
        self.names.insert(alias.clone(), name.to_string());
        alias
    }

    /// A placeholder for `value` (typed DynamoDB JSON), named after `hint`
    /// (usually the attribute it is compared with).
    pub fn value(&mut self, hint: &str, value: Value) -> String {
        if let Some((key, _)) = self.values.iter().find(|(_, v)| **v == value) {
            return key.clone();
        }
        let base = match sanitize(hint) {
            s if s.is_empty() => "v".to_string(),
            s => s,
        };
        let key = unique_key(':', &base, |k| self.values.contains_key(k));
        self.values.insert(key.clone(), value);
        key
    }
}

/// `prefix base`, or `prefix base N` with the smallest N ≥ 2 not taken.
fn unique_key(prefix: char, base: &str, taken: impl Fn(&str) -> bool) -> String {
    let first = format!("{prefix}{base}");
    if !taken(&first) {
        return first;
    }
    (2..)
        .map(|n| format!("{prefix}{base}{n}"))
        .find(|k| !taken(k))
        .expect("some suffix is free")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reserved_and_odd_names_are_aliased_plain_ones_are_not() {
        let mut p = Placeholders::new();
        assert_eq!(p.name("email"), "email");
        assert_eq!(p.name("status"), "#status");
        assert_eq!(p.name("status"), "#status");
        assert_eq!(p.name("first-name"), "#firstname");
        assert_eq!(p.name("firstname!"), "#firstname2");
        assert_eq!(p.names["#firstname2"], "firstname!");
    }

    #[test]
    fn alias_all_aliases_every_name() {
        let mut p = Placeholders::aliasing_all();
        assert_eq!(p.name("email"), "#email");
    }

    #[test]
    fn identical_values_share_a_placeholder() {
        let mut p = Placeholders::new();
        assert_eq!(p.value("age", json!({"N":"1"})), ":age");
        assert_eq!(p.value("other", json!({"N":"1"})), ":age");
        assert_eq!(p.value("age", json!({"N":"2"})), ":age2");
    }
}
