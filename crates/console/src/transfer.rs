//! Import and export for the page: an uploaded file's text (JSON array,
//! JSON lines, CSV, or DynamoDB JSON lines) written by a background job with
//! the client's batch writer (unprocessed items retried with backoff and
//! jitter, progress polled, what could not be written reported); a table or a query/scan result read page by page
//! into CSV, JSON lines or DynamoDB JSON for download.
//!
//! Plain JSON is converted with the client's lossless converter (numbers
//! keep their digits; `{"$SS": [..]}` tags keep sets and binary).

use crate::api::{required, ApiFailure, ApiResult};
use crate::bulk::{self, Jobs};
use crate::read;
use ferrodyn_client::convert::{self, Plain};
use ferrodyn_client::{paginate, Client};
use ferrodyn_patterns::table::KeySchema;
use serde_json::{json, Map, Value};

/// Largest export the console builds in memory (rows).
const MAX_EXPORT_ROWS: usize = 200_000;

type Item = Map<String, Value>;

/// The uploaded text read as items, with the lines (or array elements) that
/// could not be read, each described by where it is and why.
#[derive(Default)]
struct Parsed {
    items: Vec<Item>,
    unreadable: Vec<String>,
}

impl Parsed {
    fn push(&mut self, read: Result<Item, String>) {
        match read {
            Ok(item) => self.items.push(item),
            Err(problem) => self.unreadable.push(problem),
        }
    }
}

/// Turns the uploaded text into items (DynamoDB JSON). A malformed document
/// refuses the whole upload; a malformed line of JSON lines is reported
/// with its number and byte offset and the other lines are kept.
fn parse(format: &str, text: &str) -> Result<Parsed, ApiFailure> {
    let lines = || {
        text.lines()
            .enumerate()
            .map(|(i, line)| (i + 1, line))
            .filter(|(_, l)| !l.trim().is_empty())
    };
    let mut parsed = Parsed::default();
    match format {
        "json" => match Plain::parse(text).map_err(|e| ApiFailure::invalid(e.to_string()))? {
            Plain::Array(items) => {
                for (i, plain) in items.iter().enumerate() {
                    parsed.push(plain_item(plain).map_err(|e| format!("item {}: {e}", i + 1)));
                }
            }
            other => parsed.push(plain_item(&other).map_err(|e| format!("item 1: {e}"))),
        },
        "jsonl" => {
            for (n, line) in lines() {
                let item = Plain::parse(line)
                    .map_err(|e| format!("{}: {}", within_line(n, &e.path), e.message))
                    .and_then(|plain| plain_item(&plain).map_err(|e| format!("line {n}: {e}")));
                parsed.push(item);
            }
        }
        "ddb-json" => {
            for (n, line) in lines() {
                parsed.push(ddb_json_item(line).map_err(|e| format!("line {n}: {e}")));
            }
        }
        "csv" => parsed.items = csv_items(text),
        other => {
            return Err(ApiFailure::invalid(format!(
                "format is json, jsonl, csv or ddb-json, not {other}"
            )))
        }
    }
    Ok(parsed)
}

fn plain_item(plain: &Plain) -> Result<Item, String> {
    convert::item_to_ddb(plain)
        .map(|(item, _)| item)
        .map_err(|e| e.to_string())
}

/// One line of DynamoDB JSON: an item, or `{"Item": item}` as exports write.
fn ddb_json_item(line: &str) -> Result<Item, String> {
    let value: Value = serde_json::from_str(line).map_err(|e| e.to_string())?;
    let item = value.get("Item").cloned().unwrap_or(value);
    match item {
        Value::Object(item) => Ok(item),
        _ => Err("not an item (a JSON object of attribute values)".into()),
    }
}

/// The parser reads one line as a whole document, so its "line 1, byte B"
/// is restated as the file's line and B as the column on that line.
fn within_line(line: usize, parser_path: &str) -> String {
    match parser_path.rsplit_once("byte ") {
        Some((_, byte)) => format!("line {line}, byte {byte}"),
        None => format!("line {line}"),
    }
}

/// CSV rows (RFC 4180 quoting) as items: the header names the attributes; a
/// cell that reads as a JSON number is a number, `true`/`false` a boolean,
/// an empty cell no attribute, anything else a string.
fn csv_items(text: &str) -> Vec<Item> {
    let rows = csv_rows(text);
    let Some((header, rows)) = rows.split_first() else {
        return Vec::new();
    };
    rows.iter()
        .filter(|row| row.iter().any(|c| !c.is_empty()))
        .map(|row| {
            let mut item = Map::new();
            for (name, cell) in header.iter().zip(row) {
                if cell.is_empty() {
                    continue;
                }
                let value = match cell.as_str() {
                    "true" | "false" => json!({ "BOOL": cell == "true" }),
                    _ if matches!(Plain::parse(cell), Ok(Plain::Number(_))) => json!({ "N": cell }),
                    _ => json!({ "S": cell }),
                };
                item.insert(name.clone(), value);
            }
            item
        })
        .collect()
}

fn csv_rows(text: &str) -> Vec<Vec<String>> {
    let (mut rows, mut row, mut cell) = (Vec::new(), Vec::new(), String::new());
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                cell.push('"');
                chars.next();
            }
            ('"', _) => quoted = !quoted,
            (',', false) => row.push(std::mem::take(&mut cell)),
            ('\n', false) => {
                row.push(std::mem::take(&mut cell));
                rows.push(std::mem::take(&mut row));
            }
            ('\r', false) => {}
            (c, _) => cell.push(c),
        }
    }
    if !cell.is_empty() || !row.is_empty() {
        row.push(cell);
        rows.push(row);
    }
    rows
}

/// Lines shown when an upload has unreadable lines (the count says the rest).
const SHOWN_PROBLEMS: usize = 20;

/// `{table, format, text, skipUnreadable?}` → a job (see `bulk`) writing the
/// parsed items. An upload with unreadable lines writes nothing unless
/// `skipUnreadable` is true: it answers `{unreadable, problems, readable}`
/// so the page can show what is wrong and offer to import the rest.
pub fn import(client: &Client, jobs: &Jobs, request: &Value) -> ApiResult {
    let table = required(request, "table")?;
    let parsed = parse(required(request, "format")?, required(request, "text")?)?;
    let skip = request.get("skipUnreadable").and_then(Value::as_bool) == Some(true);
    if !parsed.unreadable.is_empty() && !skip {
        return Ok(json!({
            "unreadable": parsed.unreadable.len(),
            "problems": &parsed.unreadable[..parsed.unreadable.len().min(SHOWN_PROBLEMS)],
            "readable": parsed.items.len(),
        }));
    }
    let items = parsed.items.into_iter().map(Value::Object).collect();
    let label = bulk::label(request, format!("import into {table}"));
    Ok(jobs.start_import(client.clone(), table.to_string(), label, items))
}

/// `{table, format, read?}` → `{text, rows}` of the whole table, or of the
/// query/scan form's result.
pub fn export(client: &Client, request: &Value) -> ApiResult {
    let table = required(request, "table")?;
    let format = required(request, "format")?;
    let items: Box<dyn Iterator<Item = _>> = match request.get("read").filter(|r| r.is_object()) {
        Some(form) => {
            let (operation, mut r) = read::request(form)?;
            for field in [
                "Limit",
                "Segment",
                "TotalSegments",
                "ReturnConsumedCapacity",
            ] {
                r.as_object_mut().map(|m| m.remove(field));
            }
            if operation == "Query" {
                Box::new(paginate::query(client, r).items())
            } else {
                Box::new(paginate::scan(client, r).items())
            }
        }
        None => Box::new(paginate::scan(client, json!({ "TableName": table })).items()),
    };
    let mut rows = Vec::new();
    for item in items.take(MAX_EXPORT_ROWS) {
        rows.push(item?);
    }
    let text = match format {
        "jsonl" | "json" => {
            let lines: Result<Vec<String>, ApiFailure> = rows
                .iter()
                .map(|item| {
                    convert::item_from_ddb(item, true)
                        .map(|(p, _)| p.to_json())
                        .map_err(|e| ApiFailure::invalid(e.to_string()))
                })
                .collect();
            let lines = lines?;
            if format == "json" {
                format!("[\n{}\n]\n", lines.join(",\n"))
            } else {
                lines.join("\n") + "\n"
            }
        }
        "ddb-json" => rows
            .iter()
            .map(|item| json!({ "Item": item }).to_string() + "\n")
            .collect(),
        "csv" => csv_text(&KeySchema::describe(client, table)?, &rows),
        other => {
            return Err(ApiFailure::invalid(format!(
                "format is csv, json, jsonl or ddb-json, not {other}"
            )))
        }
    };
    Ok(json!({ "text": text, "rows": rows.len() }))
}

fn csv_cell(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// Columns: the key attributes, then every other attribute seen, sorted.
fn csv_text(schema: &KeySchema, rows: &[Value]) -> String {
    let mut columns: Vec<String> = schema.attributes().iter().map(|s| s.to_string()).collect();
    let mut others: Vec<String> = rows
        .iter()
        .filter_map(Value::as_object)
        .flat_map(|m| m.keys().cloned())
        .filter(|k| !schema.is_key(k))
        .collect();
    others.sort();
    others.dedup();
    columns.extend(others);
    let mut out = columns
        .iter()
        .map(|c| csv_cell(c))
        .collect::<Vec<_>>()
        .join(",")
        + "\n";
    for row in rows {
        let cells: Vec<String> = columns
            .iter()
            .map(|c| {
                row.get(c)
                    .map(|v| csv_cell(&convert::display(v)))
                    .unwrap_or_default()
            })
            .collect();
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_cells_are_typed_and_quotes_undone() {
        let items = csv_items(
            "id,n,ok,note\nu1,12345678901234567890123456789012345678,true,\"a, \"\"b\"\"\"\n",
        );
        assert_eq!(items.len(), 1);
        assert_eq!(
            items[0]["n"],
            json!({"N": "12345678901234567890123456789012345678"})
        );
        assert_eq!(items[0]["ok"], json!({"BOOL": true}));
        assert_eq!(items[0]["note"], json!({"S": "a, \"b\""}));
    }

    #[test]
    fn unreadable_json_lines_are_named_by_file_line_and_byte() {
        let text = "{\"pk\": \"u1\"}\n{\"pk\": \"u2\",}\n\n{\"pk\": {\"$SS\": 5}}\n[1]\n{\"pk\": \"u6\"}\n";
        let parsed = parse("jsonl", text).unwrap();
        assert_eq!(parsed.items.len(), 2);
        assert_eq!(parsed.unreadable.len(), 3, "{:?}", parsed.unreadable);
        assert!(
            parsed.unreadable[0].starts_with("line 2, byte 12: "),
            "{:?}",
            parsed.unreadable
        );
        assert!(
            parsed.unreadable[1].starts_with("line 4: "),
            "{:?}",
            parsed.unreadable
        );
        assert!(
            parsed.unreadable[2].starts_with("line 5: "),
            "{:?}",
            parsed.unreadable
        );
    }

    #[test]
    fn a_malformed_json_array_refuses_the_whole_upload() {
        assert!(parse("json", "[{\"pk\": \"u1\"},").is_err());
        let parsed = parse("ddb-json", "{\"Item\": {\"pk\": {\"S\": \"u1\"}}}\n7\n").unwrap();
        assert_eq!((parsed.items.len(), parsed.unreadable.len()), (1, 1));
        assert!(parsed.unreadable[0].starts_with("line 2: not an item"));
    }
}
