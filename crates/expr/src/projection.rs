//! ProjectionExpression / AttributesToGet: copying the requested parts of an
//! item.
//!
//! Requested paths are merged into a tree first, so that `a.b, a.c` yields
//! one map `a` with both keys, and list elements are emitted in index order
//! and compacted (`l[3], l[1]` gives a two-element list), as DynamoDB does.

use crate::ast::Projection;
use crate::path::{Path, PathElem};
use ferrodyn_types::{AttributeValue, Item};
use std::collections::BTreeMap;

#[derive(Default)]
struct Node {
    /// The whole value at this point was requested.
    whole: bool,
    keys: BTreeMap<String, Node>,
    indexes: BTreeMap<usize, Node>,
}

impl Node {
    fn insert(&mut self, elems: &[PathElem]) {
        let Some((first, rest)) = elems.split_first() else {
            self.whole = true;
            return;
        };
        let child = match first {
            PathElem::Attr(k) => self.keys.entry(k.clone()).or_default(),
            PathElem::Index(i) => self.indexes.entry(*i).or_default(),
        };
        child.insert(rest);
    }

    fn project(&self, value: &AttributeValue) -> Option<AttributeValue> {
        if self.whole {
            return Some(value.clone());
        }
        match value {
            AttributeValue::M(map) if !self.keys.is_empty() => {
                let out: Item = self
                    .keys
                    .iter()
                    .filter_map(|(k, node)| Some((k.clone(), node.project(map.get(k)?)?)))
                    .collect();
                (!out.is_empty()).then_some(AttributeValue::M(out))
            }
            AttributeValue::L(list) if !self.indexes.is_empty() => {
                let out: Vec<AttributeValue> = self
                    .indexes
                    .iter()
                    .filter_map(|(i, node)| node.project(list.get(*i)?))
                    .collect();
                (!out.is_empty()).then_some(AttributeValue::L(out))
            }
            _ => None,
        }
    }
}

/// Copies the parts of `item` named by `paths`.
pub fn project_paths(item: &Item, paths: &[Path]) -> Item {
    let mut root = Node::default();
    for p in paths {
        root.insert(p.elems());
    }
    let mut out = Item::new();
    for (name, node) in &root.keys {
        if let Some(v) = item.get(name).and_then(|v| node.project(v)) {
            out.insert(name.clone(), v);
        }
    }
    out
}

impl Projection {
    pub fn apply(&self, item: &Item) -> Item {
        project_paths(item, &self.paths)
    }
}
