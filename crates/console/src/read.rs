//! The query/scan form: one Query or Scan page from the form's fields (table
//! or index, partition key, sort-key operator, readable filter, projection,
//! direction, consistency, segment), built with the patterns' expression
//! builder so reserved words are aliased and values typed, plus the same
//! request as JSON and as `aws` and `ferrodyn` commands to copy.

use crate::api::{required, text, ApiFailure, ApiResult};
use ferrodyn_client::Client;
use ferrodyn_patterns::expr::{shell_quote, Builder, ExprError, Kind};
use serde_json::{json, Map, Value};
use std::time::{Duration, Instant};

/// Sort-key operators and how each is written.
fn sort_clause(name: &str, op: &str, a: &str, b: Option<&str>) -> Result<String, ApiFailure> {
    Ok(match (op, b) {
        ("=" | "<" | "<=" | ">" | ">=", _) => format!("{name} {op} {a}"),
        ("begins_with", _) => format!("begins_with({name}, {a})"),
        ("between", Some(b)) => format!("{name} BETWEEN {a} AND {b}"),
        ("between", None) => return Err(ApiFailure::invalid("between needs two values")),
        _ => {
            return Err(ApiFailure::invalid(format!(
                "unknown sort-key operator {op}"
            )))
        }
    })
}

/// Builds the Query/Scan request of the form.
pub fn request(form: &Value) -> Result<(String, Value), ApiFailure> {
    let table = required(form, "table")?;
    let query = form["operation"] == "Query";
    let mut b = Builder::new();
    if query {
        let key = key_condition(&mut b, form)?;
        b.add_raw(Kind::KeyCondition, key);
    }
    if let Some(filter) = text(form, "filter") {
        b.add(Kind::Condition, filter)
            .map_err(|e| ApiFailure::invalid(format!("filter: {e}")))?;
    }
    let projection = text(form, "projection").map(|list| projection(&mut b, list));
    let built = b
        .build()
        .map_err(|e| filter_error(e, text(form, "filter")))?;
    let mut request = Map::new();
    request.insert("TableName".into(), json!(table));
    if let Some(index) = text(form, "index") {
        request.insert("IndexName".into(), json!(index));
    }
    for (name, value) in built.request_fields() {
        let name = if name == "ConditionExpression" {
            "FilterExpression".into()
        } else {
            name
        };
        request.insert(name, value);
    }
    if let Some(projection) = projection.filter(|p| !p.is_empty()) {
        request.insert("ProjectionExpression".into(), json!(projection));
    }
    page_options(form, query, &mut request);
    let operation = if query { "Query" } else { "Scan" };
    Ok((operation.to_string(), Value::Object(request)))
}

/// A build error as the person wrote it: the filter's mistakes are named
/// FilterExpression (the builder checks it as a condition) and shown against
/// the filter they typed, not the placeholders it was rewritten into.
fn filter_error(error: ExprError, filter: Option<&str>) -> ApiFailure {
    match (error, filter) {
        (ExprError::Invalid { message, .. }, Some(filter))
            if message.starts_with("Invalid ConditionExpression") =>
        {
            let message = message.replacen("Invalid ConditionExpression", "Invalid filter", 1);
            ApiFailure::invalid(format!("{message}\n  filter: {filter}"))
        }
        (other, _) => ApiFailure::invalid(other.to_string()),
    }
}

/// The form's key condition: the partition key's equality, and the sort
/// key's condition when one is chosen.
fn key_condition(b: &mut Builder, form: &Value) -> Result<String, ApiFailure> {
    let pk = &form["pk"];
    let name = required(pk, "name")?;
    let p = b.placeholders();
    let alias = p.name(name);
    let value = p.value(name, pk["value"].clone());
    let mut key = format!("{alias} = {value}");
    if let Some(sk) = form.get("sk").filter(|s| text(s, "op").is_some()) {
        let name = required(sk, "name")?;
        let p = b.placeholders();
        let alias = p.name(name);
        let a = p.value(name, sk["value"].clone());
        let second = sk.get("value2").filter(|v| v.is_object());
        let b2 = second.map(|v| p.value(&format!("{name}2"), v.clone()));
        key.push_str(" AND ");
        key.push_str(&sort_clause(
            &alias,
            required(sk, "op")?,
            &a,
            b2.as_deref(),
        )?);
    }
    Ok(key)
}

/// A comma-separated list of attribute paths as a ProjectionExpression,
/// every name through a placeholder.
fn projection(b: &mut Builder, list: &str) -> String {
    let p = b.placeholders();
    list.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|path| {
            path.split('.')
                .map(|n| p.name(n))
                .collect::<Vec<_>>()
                .join(".")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Direction, consistency, Limit and the parallel-scan segment.
fn page_options(form: &Value, query: bool, request: &mut Map<String, Value>) {
    if query && form["forward"] == json!(false) {
        request.insert("ScanIndexForward".into(), json!(false));
    }
    if form["consistent"] == json!(true) {
        request.insert("ConsistentRead".into(), json!(true));
    }
    if let Some(limit) = form["limit"].as_u64() {
        request.insert("Limit".into(), json!(limit));
    }
    let segments = form["segments"].as_u64().unwrap_or(1);
    if !query && segments > 1 {
        request.insert(
            "Segment".into(),
            json!(form["segment"].as_u64().unwrap_or(0)),
        );
        request.insert("TotalSegments".into(), json!(segments));
    }
    request.insert("ReturnConsumedCapacity".into(), json!("TOTAL"));
}

/// Runs one page of the form (from `startKey` if given).
pub fn page(client: &Client, form: &Value) -> ApiResult {
    let (operation, mut request) = request(form)?;
    let commands = json!({
        "aws": aws_command(&operation, &request),
        "ferrodyn": ferrodyn_command(&operation, form, &request),
    });
    let shown = request.clone();
    if let Some(start) = form.get("startKey").filter(|k| k.is_object()) {
        request["ExclusiveStartKey"] = start.clone();
    }
    let budget = form["fillMillis"]
        .as_u64()
        .map_or(FILL_BUDGET, |ms| Duration::from_millis(ms).min(FILL_BUDGET));
    let page = fill_page(client, &operation, request, budget)?;
    Ok(json!({
        "operation": operation,
        "request": shown,
        "commands": commands,
        "Items": page.items,
        "Count": page.items.len(),
        "ScannedCount": page.scanned,
        "ConsumedCapacity": page.capacity,
        "LastEvaluatedKey": page.last_key,
        "Calls": page.calls,
    }))
}

/// How long a filtered page keeps reading to fill itself (see `fill_page`);
/// the form's `fillMillis` may shorten it.
const FILL_BUDGET: Duration = Duration::from_millis(1500);

/// One page of the grid, possibly read in several requests.
struct Page {
    items: Vec<Value>,
    scanned: u64,
    capacity: Value,
    last_key: Value,
    calls: u32,
}

/// Reads one page. DynamoDB's `Limit` caps the items *evaluated*, so a
/// filter that rarely matches answers mostly empty pages; the grid reads on
/// from each `LastEvaluatedKey` until the page holds `Limit` matches, the
/// read ends, or `budget` has passed (then the summary says how much was
/// scanned, and Next goes on from there). The page may hold up to twice
/// `Limit` items: each request's matches are kept whole, so the next page
/// starts exactly at the last request's `LastEvaluatedKey`.
fn fill_page(
    client: &Client,
    operation: &str,
    mut request: Value,
    budget: Duration,
) -> Result<Page, ApiFailure> {
    let wanted = request["Limit"].as_u64().unwrap_or(u64::MAX) as usize;
    let filtered = request.get("FilterExpression").is_some();
    let started = Instant::now();
    let mut page = Page {
        items: Vec::new(),
        scanned: 0,
        capacity: Value::Null,
        last_key: Value::Null,
        calls: 0,
    };
    loop {
        let response = client.call(operation, &request)?;
        page.calls += 1;
        if let Some(items) = response["Items"].as_array() {
            page.items.extend(items.iter().cloned());
        }
        page.scanned += response["ScannedCount"].as_u64().unwrap_or(0);
        page.capacity = add_capacity(page.capacity, &response["ConsumedCapacity"]);
        page.last_key = response
            .get("LastEvaluatedKey")
            .cloned()
            .unwrap_or(Value::Null);
        let more = filtered && page.items.len() < wanted && !page.last_key.is_null();
        if !more || started.elapsed() >= budget {
            return Ok(page);
        }
        request["ExclusiveStartKey"] = page.last_key.clone();
    }
}

/// The capacity of two requests of one read added up (`CapacityUnits` and
/// the table's and indexes' shares).
fn add_capacity(total: Value, more: &Value) -> Value {
    let Value::Object(mut total) = total else {
        return more.clone();
    };
    let sum = |a: Option<&Value>, b: Option<&Value>| {
        json!(a.and_then(Value::as_f64).unwrap_or(0.0) + b.and_then(Value::as_f64).unwrap_or(0.0))
    };
    for field in ["CapacityUnits", "ReadCapacityUnits"] {
        if more.get(field).is_some() {
            let added = sum(total.get(field), more.get(field));
            total.insert(field.into(), added);
        }
    }
    Value::Object(total)
}

/// The request as an `aws dynamodb` command.
pub(crate) fn aws_command(operation: &str, request: &Value) -> String {
    let mut parts = vec![format!("aws dynamodb {}", kebab(operation))];
    for (field, value) in request.as_object().into_iter().flatten() {
        if field == "ReturnConsumedCapacity" {
            continue;
        }
        let option = kebab(field);
        match value {
            Value::Bool(true) => parts.push(format!("--{option}")),
            Value::Bool(false) => parts.push(format!("--no-{option}")),
            Value::String(s) => parts.push(format!("--{option} {}", shell_quote(s))),
            Value::Number(n) => parts.push(format!("--{option} {n}")),
            other => parts.push(format!("--{option} {}", shell_quote(&other.to_string()))),
        }
    }
    parts.join(" \\\n  ")
}

/// `TableName` → `table-name`.
fn kebab(field: &str) -> String {
    let mut out = String::new();
    for (i, c) in field.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('-');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// The same read as a `ferrodyn query`/`ferrodyn scan` command.
fn ferrodyn_command(operation: &str, form: &Value, request: &Value) -> String {
    let table = shell_quote(form["table"].as_str().unwrap_or(""));
    let mut parts = vec![format!("ferrodyn {} {table}", operation.to_lowercase())];
    let scalar = |v: &Value| -> String {
        v.as_object()
            .and_then(|m| m.values().next())
            .map(|v| v.as_str().map_or(v.to_string(), str::to_string))
            .unwrap_or_default()
    };
    if operation == "Query" {
        parts[0].push_str(&format!(" {}", shell_quote(&scalar(&form["pk"]["value"]))));
        if let Some(op) = form["sk"]["op"].as_str().filter(|s| !s.is_empty()) {
            let flag = match op {
                "=" => "--sk-eq",
                "<" => "--sk-lt",
                "<=" => "--sk-le",
                ">" => "--sk-gt",
                ">=" => "--sk-ge",
                "begins_with" => "--sk-begins-with",
                _ => "--sk-between",
            };
            let mut clause = format!("{flag} {}", shell_quote(&scalar(&form["sk"]["value"])));
            if op == "between" {
                clause.push_str(&format!(" {}", shell_quote(&scalar(&form["sk"]["value2"]))));
            }
            parts.push(clause);
        }
        if request["ScanIndexForward"] == json!(false) {
            parts.push("--descending".into());
        }
    }
    if let Some(index) = request["IndexName"].as_str() {
        parts.push(format!("--index {}", shell_quote(index)));
    }
    for (field, flag) in [
        ("FilterExpression", "--filter"),
        ("ProjectionExpression", "--projection"),
    ] {
        if let Some(text) = request[field].as_str() {
            parts.push(format!("{flag} {}", shell_quote(text)));
        }
    }
    if request["FilterExpression"].is_string() || request["ProjectionExpression"].is_string() {
        if let Some(names) = request.get("ExpressionAttributeNames") {
            parts.push(format!("--names {}", shell_quote(&names.to_string())));
        }
        if let Some(values) = request.get("ExpressionAttributeValues") {
            parts.push(format!(
                "--values {} --raw",
                shell_quote(&values.to_string())
            ));
        }
    }
    if request["ConsistentRead"] == json!(true) {
        parts.push("--consistent".into());
    }
    if let Some(segments) = request["TotalSegments"].as_u64() {
        parts.push(format!("--segments {segments} --paginate"));
    } else if let Some(limit) = request["Limit"].as_u64() {
        parts.push(format!("--limit {limit}"));
    }
    parts.join(" \\\n  ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_query_form_becomes_an_aliased_typed_request() {
        let (op, request) = request(&json!({
            "operation": "Query", "table": "app", "index": "gsi1",
            "pk": {"name": "status", "value": {"S": "open"}},
            "sk": {"name": "sk", "op": "begins_with", "value": {"S": "2024-"}},
            "filter": "visits > 3", "forward": false, "limit": 25
        }))
        .unwrap();
        assert_eq!(op, "Query");
        assert_eq!(
            request["KeyConditionExpression"],
            "#status = :status AND begins_with(sk, :sk)"
        );
        assert_eq!(request["ExpressionAttributeNames"]["#status"], "status");
        assert_eq!(
            request["ExpressionAttributeValues"][":sk"],
            json!({"S": "2024-"})
        );
        assert_eq!(request["FilterExpression"], "visits > :visits");
        assert_eq!(request["ScanIndexForward"], false);
        assert!(aws_command(&op, &request).contains("--no-scan-index-forward"));
    }
}
