//! Expressions from flag-like clauses (`--eq status=active --exists pk`),
//! for people who would rather not write the syntax at all.
//!
//! Each clause becomes a piece of the readable syntax ([`super::syntax`]), so
//! both routes share one rewriter and one validation. A value is kept as a
//! literal if it reads as one (`21`, `"21"`, `true`, `[1]`), otherwise it is
//! taken as a string (`active`).

use super::syntax::literal_from_flag;

/// One condition clause; clauses are joined with AND.
#[derive(Debug, Clone, PartialEq)]
pub enum ConditionClause {
    /// `path = value` (and the other comparisons, by operator).
    Compare {
        path: String,
        op: &'static str,
        value: String,
    },
    Exists(String),
    NotExists(String),
    BeginsWith {
        path: String,
        prefix: String,
    },
    Contains {
        path: String,
        value: String,
    },
}

/// One update clause; clauses are grouped into SET/REMOVE/ADD/DELETE.
#[derive(Debug, Clone, PartialEq)]
pub enum UpdateClause {
    Set {
        path: String,
        value: String,
    },
    /// Set only when the attribute is absent.
    SetIfAbsent {
        path: String,
        value: String,
    },
    /// Add a number to a numeric attribute, starting from 0 when absent.
    Increment {
        path: String,
        by: String,
    },
    /// Append to a list, starting from an empty list when absent.
    Append {
        path: String,
        value: String,
    },
    Remove(String),
    /// DynamoDB's ADD: number addition or set union.
    Add {
        path: String,
        value: String,
    },
    /// DynamoDB's DELETE: remove members from a set.
    Delete {
        path: String,
        value: String,
    },
}

/// Splits `PATH=VALUE` at the first `=`.
pub fn split_assignment(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((path, value)) if !path.trim().is_empty() => {
            Ok((path.trim().to_string(), value.to_string()))
        }
        _ => Err(format!("expected PATH=VALUE, got `{text}`")),
    }
}

/// The readable-syntax condition for `clauses` (AND-ed).
pub fn condition_text(clauses: &[ConditionClause]) -> String {
    clauses
        .iter()
        .map(|c| match c {
            ConditionClause::Compare { path, op, value } => {
                format!("{path} {op} {}", literal_from_flag(value))
            }
            ConditionClause::Exists(path) => format!("attribute_exists({path})"),
            ConditionClause::NotExists(path) => format!("attribute_not_exists({path})"),
            ConditionClause::BeginsWith { path, prefix } => {
                format!("begins_with({path}, {})", string_literal(prefix))
            }
            ConditionClause::Contains { path, value } => {
                format!("contains({path}, {})", literal_from_flag(value))
            }
        })
        .collect::<Vec<_>>()
        .join(" AND ")
}

/// The readable-syntax update for `clauses`.
pub fn update_text(clauses: &[UpdateClause]) -> String {
    let mut set = Vec::new();
    let mut remove = Vec::new();
    let mut add = Vec::new();
    let mut delete = Vec::new();
    for clause in clauses {
        match clause {
            UpdateClause::Set { path, value } => {
                set.push(format!("{path} = {}", literal_from_flag(value)))
            }
            UpdateClause::SetIfAbsent { path, value } => set.push(format!(
                "{path} = if_not_exists({path}, {})",
                literal_from_flag(value)
            )),
            UpdateClause::Increment { path, by } => set.push(format!(
                "{path} = if_not_exists({path}, 0) + {}",
                literal_from_flag(by)
            )),
            UpdateClause::Append { path, value } => {
                let literal = literal_from_flag(value);
                // A single value is appended as a one-element list.
                let list = if literal.starts_with('[') {
                    literal
                } else {
                    format!("[{literal}]")
                };
                set.push(format!(
                    "{path} = list_append(if_not_exists({path}, []), {list})"
                ))
            }
            UpdateClause::Remove(path) => remove.push(path.clone()),
            UpdateClause::Add { path, value } => {
                add.push(format!("{path} {}", literal_from_flag(value)))
            }
            UpdateClause::Delete { path, value } => {
                delete.push(format!("{path} {}", literal_from_flag(value)))
            }
        }
    }
    let mut parts = Vec::new();
    for (keyword, list) in [
        ("SET", set),
        ("REMOVE", remove),
        ("ADD", add),
        ("DELETE", delete),
    ] {
        if !list.is_empty() {
            parts.push(format!("{keyword} {}", list.join(", ")));
        }
    }
    parts.join(" ")
}

/// A key condition: the partition key's equality and an optional sort-key
/// clause already in readable syntax.
pub fn key_text(partition: (&str, &str), sort: Option<&str>) -> String {
    let mut text = format!("{} = {}", partition.0, literal_from_flag(partition.1));
    if let Some(sort) = sort {
        text.push_str(" AND ");
        text.push_str(sort);
    }
    text
}

/// A sort-key clause: `op` is one of `=`, `<`, `<=`, `>`, `>=`,
/// `begins_with` or `between` (whose value is `LOW..HIGH`).
pub fn sort_clause(name: &str, op: &str, value: &str) -> Result<String, String> {
    Ok(match op {
        "begins_with" => format!("begins_with({name}, {})", string_literal(value)),
        "between" => {
            let (low, high) = value
                .split_once("..")
                .ok_or_else(|| format!("between takes LOW..HIGH, got `{value}`"))?;
            format!(
                "{name} BETWEEN {} AND {}",
                literal_from_flag(low),
                literal_from_flag(high)
            )
        }
        "=" | "<" | "<=" | ">" | ">=" => format!("{name} {op} {}", literal_from_flag(value)),
        other => return Err(format!("unknown sort-key operator `{other}`")),
    })
}

/// A prefix is always a string (`begins_with` works on S and B only), even
/// one that looks like a number.
fn string_literal(text: &str) -> String {
    let literal = literal_from_flag(text);
    if literal.starts_with('"') || literal.starts_with('\'') {
        literal
    } else {
        serde_json::Value::String(text.to_string()).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::Builder;

    #[test]
    fn condition_flags_become_one_anded_condition() {
        let text = condition_text(&[
            ConditionClause::Exists("pk".into()),
            ConditionClause::Compare {
                path: "status".into(),
                op: "=",
                value: "active".into(),
            },
            ConditionClause::BeginsWith {
                path: "sk".into(),
                prefix: "2024".into(),
            },
        ]);
        assert_eq!(
            text,
            r#"attribute_exists(pk) AND status = "active" AND begins_with(sk, "2024")"#
        );
        let mut b = Builder::new();
        b.condition(&text).unwrap();
        let built = b.build().unwrap();
        assert_eq!(built.values[":sk"], serde_json::json!({"S":"2024"}));
    }

    #[test]
    fn update_flags_are_grouped_by_clause() {
        let text = update_text(&[
            UpdateClause::Set {
                path: "name".into(),
                value: "Ada".into(),
            },
            UpdateClause::Remove("draft".into()),
            UpdateClause::Increment {
                path: "visits".into(),
                by: "1".into(),
            },
            UpdateClause::Append {
                path: "log".into(),
                value: "signed in".into(),
            },
        ]);
        assert_eq!(
            text,
            r#"SET name = "Ada", visits = if_not_exists(visits, 0) + 1, log = list_append(if_not_exists(log, []), ["signed in"]) REMOVE draft"#
        );
        let mut b = Builder::new();
        b.update(&text).unwrap();
        b.build().unwrap();
    }

    #[test]
    fn key_flags() {
        let sort = sort_clause("sk", "between", "A..M").unwrap();
        assert_eq!(
            key_text(("pk", "u1"), Some(&sort)),
            r#"pk = "u1" AND sk BETWEEN "A" AND "M""#
        );
        assert!(sort_clause("sk", "~", "x").is_err());
        assert_eq!(
            split_assignment("a=b=c").unwrap(),
            ("a".into(), "b=c".into())
        );
        assert!(split_assignment("=x").is_err());
    }
}
