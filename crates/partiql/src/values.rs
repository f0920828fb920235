//! Turns literal expressions (strings, numbers, booleans, NULL, maps, lists,
//! sets) and bound `?` parameters into DynamoDB attribute values.

use crate::ast::Expr;
use ferrodyn_types::{AttributeValue, Item, Number};

/// Whether an expression is a value (a literal, a parameter, or a collection
/// of values) rather than an attribute path, a call or an operator.
pub fn is_value(expr: &Expr) -> bool {
    match expr {
        Expr::Param(_) | Expr::String(_) | Expr::Number(_) | Expr::Bool(_) | Expr::Null => true,
        Expr::Map(entries) => entries.iter().all(|(_, v)| is_value(v)),
        Expr::List(items) | Expr::Set(items) => items.iter().all(is_value),
        _ => false,
    }
}

/// The attribute value an expression stands for, with `?` parameters taken
/// from `params` (already checked to be as many as the statement has).
/// The error is DynamoDB's message for a value it cannot store.
pub fn to_value(expr: &Expr, params: &[AttributeValue]) -> Result<AttributeValue, String> {
    Ok(match expr {
        Expr::Param(n) => params
            .get(*n)
            .cloned()
            .ok_or("Number of parameters in request and statement don't match.")?,
        Expr::String(s) => AttributeValue::S(s.clone()),
        Expr::Number(text) => AttributeValue::N(number(text)?),
        Expr::Bool(b) => AttributeValue::Bool(*b),
        Expr::Null => AttributeValue::Null,
        Expr::Map(entries) => {
            let mut item = Item::new();
            for (key, value) in entries {
                if item.insert(key.clone(), to_value(value, params)?).is_some() {
                    return Err(format!("Duplicate attribute name in a tuple: {key}"));
                }
            }
            AttributeValue::M(item)
        }
        Expr::List(items) => AttributeValue::L(
            items
                .iter()
                .map(|v| to_value(v, params))
                .collect::<Result<_, _>>()?,
        ),
        Expr::Set(items) => set(items, params)?,
        _ => return Err("Expected a value (a literal or a parameter)".to_string()),
    })
}

fn number(text: &str) -> Result<Number, String> {
    Number::parse(text).map_err(|e| e.message(text))
}

/// `<<...>>`: a string, number or binary set, its members of one type and
/// distinct.
fn set(items: &[Expr], params: &[AttributeValue]) -> Result<AttributeValue, String> {
    let members: Vec<AttributeValue> = items
        .iter()
        .map(|v| to_value(v, params))
        .collect::<Result<_, _>>()?;
    let mismatch = || "Set members must all be strings, all numbers or all binaries".to_string();
    let set = match members.first() {
        None => return Err("An empty set is not a valid value".to_string()),
        Some(AttributeValue::S(_)) => AttributeValue::Ss(
            members
                .into_iter()
                .map(|m| match m {
                    AttributeValue::S(s) => Ok(s),
                    _ => Err(mismatch()),
                })
                .collect::<Result<_, _>>()?,
        ),
        Some(AttributeValue::N(_)) => AttributeValue::Ns(
            members
                .into_iter()
                .map(|m| match m {
                    AttributeValue::N(n) => Ok(n),
                    _ => Err(mismatch()),
                })
                .collect::<Result<_, _>>()?,
        ),
        Some(AttributeValue::B(_)) => AttributeValue::Bs(
            members
                .into_iter()
                .map(|m| match m {
                    AttributeValue::B(b) => Ok(b),
                    _ => Err(mismatch()),
                })
                .collect::<Result<_, _>>()?,
        ),
        Some(_) => return Err(mismatch()),
    };
    if has_duplicates(&set) {
        return Err("Input collection contains duplicates".to_string());
    }
    Ok(set)
}

fn has_duplicates(set: &AttributeValue) -> bool {
    match set {
        AttributeValue::Ss(m) => (1..m.len()).any(|i| m[..i].contains(&m[i])),
        AttributeValue::Ns(m) => (1..m.len()).any(|i| m[..i].contains(&m[i])),
        AttributeValue::Bs(m) => (1..m.len()).any(|i| m[..i].contains(&m[i])),
        _ => false,
    }
}
