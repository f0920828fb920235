//! Small helpers over typed DynamoDB values: short renderings for people
//! (diffs, reports), DynamoDB equality, key text and base64.
//!
//! Plain JSON to DynamoDB JSON has one home, `ferrodyn_client::convert`,
//! which keeps numbers as their exact text.

use base64::Engine as _;
use serde_json::Value;

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
    use serde_json::json;

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
