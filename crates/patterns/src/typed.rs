//! Typed DynamoDB values from plain literals, and short renderings of values
//! for people.
//!
//! The expression builder and the CLI take values the way people write them
//! (`"active"`, `21`, `true`, `[1, "a"]`) and must send them typed
//! (`{"S":"active"}`, `{"N":"21"}`...). Numbers are handled as text so a
//! 38-digit number is never rounded through a float.

use base64::Engine as _;
use serde_json::{json, Map, Value};

/// Converts a plain JSON value to DynamoDB JSON: strings → S, numbers → N
/// (exact text), booleans → BOOL, null → NULL, arrays → L, objects → M.
pub fn from_plain(value: &Value) -> Value {
    match value {
        Value::String(s) => json!({ "S": s }),
        Value::Number(n) => json!({ "N": n.to_string() }),
        Value::Bool(b) => json!({ "BOOL": b }),
        Value::Null => json!({ "NULL": true }),
        Value::Array(items) => json!({ "L": items.iter().map(from_plain).collect::<Vec<_>>() }),
        Value::Object(map) => {
            let m: Map<String, Value> = map
                .iter()
                .map(|(k, v)| (k.clone(), from_plain(v)))
                .collect();
            json!({ "M": m })
        }
    }
}

/// Converts a plain JSON object to a DynamoDB item (each attribute typed).
pub fn item_from_plain(value: &Value) -> Option<Map<String, Value>> {
    let map = value.as_object()?;
    Some(
        map.iter()
            .map(|(k, v)| (k.clone(), from_plain(v)))
            .collect(),
    )
}

/// Whether `value` already looks like one DynamoDB attribute value (an object
/// with exactly one type key).
pub fn is_typed(value: &Value) -> bool {
    const TYPES: [&str; 10] = ["S", "N", "B", "BOOL", "NULL", "L", "M", "SS", "NS", "BS"];
    match value.as_object() {
        Some(map) if map.len() == 1 => TYPES.contains(&map.keys().next().map_or("", |k| k)),
        _ => false,
    }
}

/// Whether every attribute of `item` is a typed value, i.e. the object is
/// DynamoDB JSON rather than plain JSON.
pub fn is_typed_item(item: &Value) -> bool {
    item.as_object()
        .is_some_and(|m| !m.is_empty() && m.values().all(is_typed))
}

/// Reads an item given either as DynamoDB JSON or as plain JSON (each
/// attribute typed by [`from_plain`]). An object all of whose attributes look
/// typed is taken as DynamoDB JSON, which is what the AWS CLI accepts.
pub fn item_from_either(value: &Value) -> Result<Map<String, Value>, String> {
    let Some(map) = value.as_object() else {
        return Err("an item must be a JSON object".into());
    };
    if is_typed_item(value) {
        Ok(map.clone())
    } else {
        Ok(item_from_plain(value).unwrap_or_default())
    }
}

/// A short, one-line rendering of a typed value for diffs and reports:
/// strings quoted, numbers bare, sets in `<< >>`.
pub fn render(value: &Value) -> String {
    let Some((ty, inner)) = value.as_object().and_then(|m| m.iter().next()) else {
        return value.to_string();
    };
    match ty.as_str() {
        "S" => inner.to_string(),
        "N" => inner.as_str().unwrap_or("?").to_string(),
        "B" => format!("b64:{}", inner.as_str().unwrap_or("")),
        "BOOL" => inner.to_string(),
        "NULL" => "null".into(),
        "L" => {
            let parts: Vec<String> = inner
                .as_array()
                .map(|a| a.iter().map(render).collect())
                .unwrap_or_default();
            format!("[{}]", parts.join(", "))
        }
        "M" => {
            let parts: Vec<String> = inner
                .as_object()
                .map(|m| {
                    m.iter()
                        .map(|(k, v)| format!("{k}: {}", render(v)))
                        .collect()
                })
                .unwrap_or_default();
            format!("{{{}}}", parts.join(", "))
        }
        "SS" | "NS" | "BS" => {
            let parts: Vec<String> = inner
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|m| match (ty.as_str(), m.as_str()) {
                            ("SS", _) => m.to_string(),
                            (_, Some(s)) => s.to_string(),
                            _ => m.to_string(),
                        })
                        .collect()
                })
                .unwrap_or_default();
            format!("<<{}>>", parts.join(", "))
        }
        _ => value.to_string(),
    }
}

/// The text a key attribute contributes to a marker name or a display key:
/// the string, the number's digits, or the binary's base64.
pub fn key_text(value: &Value) -> Option<String> {
    let (ty, inner) = value.as_object()?.iter().next()?;
    match ty.as_str() {
        "S" | "N" | "B" => inner.as_str().map(str::to_string),
        _ => None,
    }
}

/// Whether two typed values are equal as DynamoDB's `=` sees them (sets as
/// sets, numbers by value), falling back to JSON equality for values that do
/// not decode.
pub fn same(a: &Value, b: &Value) -> bool {
    use ferrodyn_types::AttributeValue;
    match (
        serde_json::from_value::<AttributeValue>(a.clone()),
        serde_json::from_value::<AttributeValue>(b.clone()),
    ) {
        (Ok(x), Ok(y)) => x.dynamo_eq(&y),
        _ => a == b,
    }
}

/// Encodes bytes as base64 the way DynamoDB JSON carries binary.
pub fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_values_get_their_dynamodb_types() {
        let v: Value =
            serde_json::from_str(r#"{"a":"x","b":true,"z":null,"l":[1,"y"],"m":{"k":1.5}}"#)
                .unwrap();
        let item = item_from_plain(&v).unwrap();
        assert_eq!(item["a"], json!({"S":"x"}));
        assert_eq!(item["b"], json!({"BOOL":true}));
        assert_eq!(item["z"], json!({"NULL":true}));
        assert_eq!(item["l"], json!({"L":[{"N":"1"},{"S":"y"}]}));
        assert_eq!(item["m"], json!({"M":{"k":{"N":"1.5"}}}));
    }

    #[test]
    fn typed_items_are_recognised_and_kept() {
        let typed = json!({"pk":{"S":"u1"},"n":{"N":"1"}});
        assert_eq!(
            item_from_either(&typed).unwrap(),
            *typed.as_object().unwrap()
        );
        let plain = json!({"pk":"u1","S":"x"});
        assert_eq!(item_from_either(&plain).unwrap()["pk"], json!({"S":"u1"}));
    }

    #[test]
    fn equality_is_dynamodbs() {
        assert!(same(&json!({"N":"1.0"}), &json!({"N":"1"})));
        assert!(same(&json!({"SS":["a","b"]}), &json!({"SS":["b","a"]})));
        assert!(!same(&json!({"S":"1"}), &json!({"N":"1"})));
    }

    #[test]
    fn values_render_briefly() {
        assert_eq!(render(&json!({"S":"a"})), "\"a\"");
        assert_eq!(render(&json!({"N":"1.50"})), "1.50");
        assert_eq!(render(&json!({"SS":["a","b"]})), "<<\"a\", \"b\">>");
        assert_eq!(render(&json!({"M":{"k":{"BOOL":false}}})), "{k: false}");
    }
}
