//! SDK snippets of one request, for the expression builder: the same call in
//! the AWS SDK for Rust, boto3 (Python) and the AWS SDK for JavaScript v3.

use serde_json::Value;

/// `{"rust": .., "python": .., "javascript": ..}` for `operation(request)`.
pub fn all(operation: &str, request: &Value) -> Value {
    serde_json::json!({
        "rust": rust(operation, request),
        "python": python(operation, request),
        "javascript": javascript(operation, request),
    })
}

fn snake(name: &str) -> String {
    let mut out = String::new();
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

fn rust_string(text: &str) -> String {
    format!("{text:?}")
}

/// An AttributeValue as Rust SDK code.
fn rust_value(value: &Value) -> String {
    let (tag, inner) = match value.as_object().and_then(|m| m.iter().next()) {
        Some(pair) => pair,
        None => return "AttributeValue::Null(true)".into(),
    };
    match (tag.as_str(), inner) {
        ("S", Value::String(s)) => format!("AttributeValue::S({}.into())", rust_string(s)),
        ("N", Value::String(n)) => format!("AttributeValue::N({}.into())", rust_string(n)),
        ("BOOL", Value::Bool(b)) => format!("AttributeValue::Bool({b})"),
        ("NULL", _) => "AttributeValue::Null(true)".into(),
        ("SS" | "NS", Value::Array(list)) => {
            let items: Vec<String> = list
                .iter()
                .map(|v| format!("{}.into()", rust_string(v.as_str().unwrap_or(""))))
                .collect();
            format!(
                "AttributeValue::{}(vec![{}])",
                if tag == "SS" { "Ss" } else { "Ns" },
                items.join(", ")
            )
        }
        _ => format!(
            "/* {tag}: build with aws_sdk_dynamodb::types::AttributeValue */ todo!({})",
            rust_string(&value.to_string())
        ),
    }
}

fn rust(operation: &str, request: &Value) -> String {
    let mut out = format!("let output = client\n    .{}()", snake(operation));
    for (field, value) in request.as_object().into_iter().flatten() {
        let setter = snake(field);
        match value {
            Value::String(s) => out.push_str(&format!("\n    .{setter}({})", rust_string(s))),
            Value::Bool(b) => out.push_str(&format!("\n    .{setter}({b})")),
            Value::Number(n) => out.push_str(&format!("\n    .{setter}({n})")),
            Value::Object(map) => {
                for (k, v) in map {
                    let arg = match v {
                        Value::String(s) if field == "ExpressionAttributeNames" => rust_string(s),
                        other => rust_value(other),
                    };
                    out.push_str(&format!("\n    .{setter}({}, {arg})", rust_string(k)));
                }
            }
            other => out.push_str(&format!("\n    /* {field}: {other} */")),
        }
    }
    out.push_str("\n    .send()\n    .await?;");
    format!("use aws_sdk_dynamodb::types::AttributeValue;\n\n{out}")
}

/// A JSON value as a Python literal.
fn python_literal(value: &Value, indent: usize) -> String {
    let pad = "    ".repeat(indent + 1);
    let close = "    ".repeat(indent);
    match value {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => Value::String(s.clone()).to_string(),
        Value::Array(list) => {
            let items: Vec<String> = list.iter().map(|v| python_literal(v, indent + 1)).collect();
            format!("[{}]", items.join(", "))
        }
        Value::Object(map) => {
            let items: Vec<String> = map
                .iter()
                .map(|(k, v)| {
                    format!(
                        "{pad}{}: {},",
                        Value::String(k.clone()),
                        python_literal(v, indent + 1)
                    )
                })
                .collect();
            format!("{{\n{}\n{close}}}", items.join("\n"))
        }
    }
}

fn python(operation: &str, request: &Value) -> String {
    let mut args = String::new();
    for (field, value) in request.as_object().into_iter().flatten() {
        args.push_str(&format!("    {field}={},\n", python_literal(value, 1)));
    }
    format!(
        "import boto3\n\nclient = boto3.client(\"dynamodb\")\nresponse = client.{}(\n{args})",
        snake(operation)
    )
}

fn javascript(operation: &str, request: &Value) -> String {
    let body = serde_json::to_string_pretty(request).expect("plain data always serialises");
    format!(
        "import {{ DynamoDBClient, {operation}Command }} from \"@aws-sdk/client-dynamodb\";\n\n\
         const client = new DynamoDBClient({{}});\n\
         const output = await client.send(new {operation}Command({body}));"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn snippets_name_the_operation_and_keep_values_typed() {
        let request = json!({
            "TableName": "users",
            "ConditionExpression": "#status = :status",
            "ExpressionAttributeNames": {"#status": "status"},
            "ExpressionAttributeValues": {":status": {"S": "active"}}
        });
        let s = all("UpdateItem", &request);
        let rust = s["rust"].as_str().unwrap();
        assert!(rust.contains(".update_item()"), "{rust}");
        assert!(
            rust.contains(
                ".expression_attribute_values(\":status\", AttributeValue::S(\"active\".into()))"
            ),
            "{rust}"
        );
        assert!(s["python"]
            .as_str()
            .unwrap()
            .contains("client.update_item("));
        assert!(s["javascript"]
            .as_str()
            .unwrap()
            .contains("new UpdateItemCommand("));
    }
}
