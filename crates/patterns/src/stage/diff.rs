//! Per-attribute differences: between the live item and what a staged change
//! would make of it (what `stage diff` shows), and between the item as staged
//! and as it is now (drift, which will make the commit's lock fail).

use crate::typed;
use serde_json::{Map, Value};
use std::fmt;

/// One attribute that differs.
#[derive(Debug, Clone, PartialEq)]
pub struct AttributeChange {
    pub name: String,
    /// The value before (`None`: absent).
    pub old: Option<Value>,
    /// The value after (`None`: absent).
    pub new: Option<Value>,
}

impl fmt::Display for AttributeChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.old, &self.new) {
            (None, Some(new)) => write!(f, "+ {}: {}", self.name, typed::render(new)),
            (Some(old), None) => write!(f, "- {}: {}", self.name, typed::render(old)),
            (Some(old), Some(new)) => write!(
                f,
                "~ {}: {} → {}",
                self.name,
                typed::render(old),
                typed::render(new)
            ),
            (None, None) => write!(f, "  {}", self.name),
        }
    }
}

/// Attributes that differ between two versions of an item (either may be
/// absent), sorted by name.
pub fn attribute_changes(
    old: Option<&Map<String, Value>>,
    new: Option<&Map<String, Value>>,
) -> Vec<AttributeChange> {
    let empty = Map::new();
    let old = old.unwrap_or(&empty);
    let new = new.unwrap_or(&empty);
    let mut names: Vec<&String> = old.keys().chain(new.keys()).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .filter_map(|name| {
            let (a, b) = (old.get(name), new.get(name));
            let same = match (a, b) {
                (Some(a), Some(b)) => typed::same(a, b),
                (None, None) => true,
                _ => false,
            };
            (!same).then(|| AttributeChange {
                name: name.clone(),
                old: a.cloned(),
                new: b.cloned(),
            })
        })
        .collect()
}

/// Whether two versions of an item are equal (both absent counts as equal).
pub fn same_item(a: Option<&Map<String, Value>>, b: Option<&Map<String, Value>>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(_), Some(_)) => attribute_changes(a, b).is_empty(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn changes_are_added_removed_or_modified() {
        let old = json!({"pk":{"S":"u1"},"a":{"N":"1"},"gone":{"S":"x"},"same":{"SS":["p","q"]}});
        let new =
            json!({"pk":{"S":"u1"},"a":{"N":"2"},"added":{"BOOL":true},"same":{"SS":["q","p"]}});
        let changes = attribute_changes(old.as_object(), new.as_object());
        let lines: Vec<String> = changes.iter().map(ToString::to_string).collect();
        assert_eq!(lines, vec!["~ a: 1 → 2", "+ added: true", "- gone: \"x\""]);
    }

    #[test]
    fn a_created_item_shows_every_attribute_added() {
        let new = json!({"pk":{"S":"u1"},"a":{"N":"1"}});
        let changes = attribute_changes(None, new.as_object());
        assert_eq!(changes.len(), 2);
        assert!(changes.iter().all(|c| c.old.is_none()));
        assert!(same_item(None, None));
        assert!(!same_item(None, new.as_object()));
    }
}
