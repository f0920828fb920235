//! Document paths (`a.b[2].c`): their representation with every placeholder
//! already substituted, how DynamoDB prints them in error messages, lookup in
//! an item, and the overlap/conflict rule for paths in one expression.

use ferrodyn_types::{AttributeValue, Item};
use std::fmt;

/// One step of a document path.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PathElem {
    /// A map key (or, first in a path, a top-level attribute name).
    Attr(String),
    /// A list index.
    Index(usize),
}

/// A document path. The first element is always an [`PathElem::Attr`].
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Path(pub Vec<PathElem>);

impl Path {
    /// A path naming one top-level attribute.
    pub fn attr(name: impl Into<String>) -> Path {
        Path(vec![PathElem::Attr(name.into())])
    }

    /// The top-level attribute this path starts from.
    pub fn root(&self) -> &str {
        match self.0.first() {
            Some(PathElem::Attr(name)) => name,
            _ => "",
        }
    }

    /// Whether the path is just a top-level attribute.
    pub fn is_top_level(&self) -> bool {
        self.0.len() == 1
    }

    pub fn elems(&self) -> &[PathElem] {
        &self.0
    }

    /// The value at this path, if every step exists and has the right type.
    pub fn lookup<'a>(&self, item: &'a Item) -> Option<&'a AttributeValue> {
        let mut elems = self.0.iter();
        let mut current = match elems.next()? {
            PathElem::Attr(name) => item.get(name)?,
            PathElem::Index(_) => return None,
        };
        for elem in elems {
            current = step(current, elem)?;
        }
        Some(current)
    }
}

/// One step down from a value.
pub(crate) fn step<'a>(value: &'a AttributeValue, elem: &PathElem) -> Option<&'a AttributeValue> {
    match (value, elem) {
        (AttributeValue::M(map), PathElem::Attr(key)) => map.get(key),
        (AttributeValue::L(list), PathElem::Index(i)) => list.get(*i),
        _ => None,
    }
}

/// DynamoDB's rendering in messages: `[a, b, [0]]`.
impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[")?;
        for (i, elem) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            match elem {
                PathElem::Attr(name) => f.write_str(name)?,
                PathElem::Index(n) => write!(f, "[{n}]")?,
            }
        }
        f.write_str("]")
    }
}

/// How two paths of one expression relate.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Clash {
    /// One is a prefix of the other (or they are equal).
    Overlap,
    /// They agree up to a step where one indexes a list and the other a map.
    Conflict,
}

/// DynamoDB rejects two paths of one update (or projection) expression that
/// overlap (one contains the other) or conflict (treat the same value as both
/// list and map).
pub(crate) fn clash(a: &Path, b: &Path) -> Option<Clash> {
    for (x, y) in a.0.iter().zip(&b.0) {
        match (x, y) {
            (PathElem::Attr(p), PathElem::Attr(q)) if p == q => {}
            (PathElem::Index(p), PathElem::Index(q)) if p == q => {}
            (PathElem::Attr(_), PathElem::Attr(_)) | (PathElem::Index(_), PathElem::Index(_)) => {
                return None
            }
            _ => return Some(Clash::Conflict),
        }
    }
    Some(Clash::Overlap)
}

/// Checks every pair of paths, in order, reporting the first clash, what it
/// is, and DynamoDB's message (without the "Invalid XExpression: " prefix).
pub(crate) fn check_clashes<'a>(
    paths: impl IntoIterator<Item = &'a Path>,
) -> Result<(), (Clash, String)> {
    let paths: Vec<&Path> = paths.into_iter().collect();
    for (j, later) in paths.iter().enumerate() {
        for earlier in &paths[..j] {
            match clash(earlier, later) {
                None => {}
                Some(kind) => {
                    let word = match kind {
                        Clash::Overlap => "overlap",
                        Clash::Conflict => "conflict",
                    };
                    return Err((kind, format!(
                        "Two document paths {word} with each other; must remove or rewrite one of these paths; path one: {earlier}, path two: {later}"
                    )));
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(elems: &[&str]) -> Path {
        Path(
            elems
                .iter()
                .map(|e| match e.parse::<usize>() {
                    Ok(n) => PathElem::Index(n),
                    Err(_) => PathElem::Attr(e.to_string()),
                })
                .collect(),
        )
    }

    #[test]
    fn displays_like_dynamodb() {
        assert_eq!(p(&["a", "0", "b"]).to_string(), "[a, [0], b]");
    }

    #[test]
    fn clash_rules() {
        assert_eq!(clash(&p(&["a"]), &p(&["a", "b"])), Some(Clash::Overlap));
        assert_eq!(
            clash(&p(&["a", "0"]), &p(&["a", "b"])),
            Some(Clash::Conflict)
        );
        assert_eq!(clash(&p(&["a", "b"]), &p(&["a", "c"])), None);
        assert_eq!(clash(&p(&["a", "0"]), &p(&["a", "1"])), None);
        assert_eq!(
            check_clashes([&p(&["m", "b"]), &p(&["x"]), &p(&["m"])]).unwrap_err().1,
            "Two document paths overlap with each other; must remove or rewrite one of these paths; path one: [m, b], path two: [m]"
        );
    }
}
