//! File formats of import and export, and how each maps to items.
//!
//! - `json`: one JSON array of plain items (numbers exact);
//! - `jsonl`: one plain item per line;
//! - `ddb-json`: one DynamoDB JSON item per line; lines of DynamoDB's S3
//!   export (`{"Item": {..}}`) are read too;
//! - `csv`: a header row of attribute names, one item per row. A header may
//!   fix a column's type as `name:S`, `name:N`, `name:BOOL` or `name:JSON`
//!   (a JSON value, sets as `{"$SS": [..]}`); an untyped column holds
//!   numbers where the cell is a JSON number and strings otherwise. Empty
//!   cells are absent attributes. Export writes typed headers, so a CSV
//!   round trip keeps every type.

use super::output::WarningTally;
use clap::ValueEnum;
use ferrodyn_client::convert::{from_ddb, item_to_ddb, to_ddb, Plain};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FileFormat {
    /// A JSON array of plain items.
    Json,
    /// One plain JSON item per line.
    Jsonl,
    /// Comma-separated values with a header row.
    Csv,
    /// One DynamoDB JSON item per line.
    DdbJson,
}

impl FileFormat {
    /// The format a file name suggests: .json, .jsonl/.ndjson, .csv,
    /// .ddb.json/.ddb.jsonl/.ddbjson.
    pub fn from_path(path: &Path) -> Option<FileFormat> {
        let name = path.file_name()?.to_str()?.to_ascii_lowercase();
        if name.ends_with(".ddb.json") || name.ends_with(".ddb.jsonl") || name.ends_with(".ddbjson")
        {
            Some(FileFormat::DdbJson)
        } else if name.ends_with(".jsonl") || name.ends_with(".ndjson") {
            Some(FileFormat::Jsonl)
        } else if name.ends_with(".json") {
            Some(FileFormat::Json)
        } else if name.ends_with(".csv") {
            Some(FileFormat::Csv)
        } else {
            None
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            FileFormat::Json => "json",
            FileFormat::Jsonl => "jsonl",
            FileFormat::Csv => "csv",
            FileFormat::DdbJson => "ddb-json",
        }
    }
}

/// One input record as an item, or why it cannot be one (the record still
/// counts, so record numbers stay stable across a resumed import).
pub type Record = Result<Map<String, Value>, String>;

/// The records of an input file, and how many there are when that is cheap
/// to know (for the progress bar).
pub struct Records {
    pub iter: Box<dyn Iterator<Item = Record> + Send>,
    pub total: Option<u64>,
}

/// Opens `path` as records of `format`. A record that cannot become an item
/// (bad JSON, too many digits are left to DynamoDB to refuse) is an `Err`.
pub fn read_records(path: &Path, format: FileFormat) -> Result<Records, String> {
    let open = || File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()));
    match format {
        FileFormat::Json => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let plain = Plain::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
            let Plain::Array(items) = plain else {
                return Err(format!(
                    "{}: a json import file must be one JSON array of items",
                    path.display()
                ));
            };
            let total = items.len() as u64;
            let iter = items.into_iter().map(|item| {
                item_to_ddb(&item)
                    .map(|(item, _)| item)
                    .map_err(|e| e.to_string())
            });
            Ok(Records {
                iter: Box::new(iter),
                total: Some(total),
            })
        }
        FileFormat::Jsonl | FileFormat::DdbJson => {
            let total = BufReader::new(open()?)
                .lines()
                .map_while(Result::ok)
                .filter(|l| !l.trim().is_empty())
                .count() as u64;
            let lines = BufReader::new(open()?)
                .lines()
                .filter(|l| !matches!(l, Ok(l) if l.trim().is_empty()));
            let iter = lines.map(move |line| {
                let line = line.map_err(|e| format!("read error: {e}"))?;
                match format {
                    FileFormat::Jsonl => Plain::parse(&line)
                        .and_then(|p| item_to_ddb(&p))
                        .map(|(item, _)| item)
                        .map_err(|e| e.to_string()),
                    _ => ddb_line(&line),
                }
            });
            Ok(Records {
                iter: Box::new(iter),
                total: Some(total),
            })
        }
        FileFormat::Csv => {
            let total = {
                let mut reader = csv::Reader::from_reader(open()?);
                reader.records().count() as u64
            };
            let mut reader = csv::Reader::from_reader(open()?);
            let headers: Vec<(String, Option<String>)> = reader
                .headers()
                .map_err(|e| format!("{}: {e}", path.display()))?
                .iter()
                .map(|h| match h.rsplit_once(':') {
                    Some((name, kind)) if is_csv_type(kind) => {
                        (name.to_string(), Some(kind.to_ascii_uppercase()))
                    }
                    _ => (h.to_string(), None),
                })
                .collect();
            let iter = reader.into_records().map(move |row| {
                let row = row.map_err(|e| format!("bad CSV row: {e}"))?;
                csv_item(&headers, &row)
            });
            Ok(Records {
                iter: Box::new(iter),
                total: Some(total),
            })
        }
    }
}

/// A line of DynamoDB JSON: an item, or `{"Item": item}` as in S3 exports.
fn ddb_line(line: &str) -> Record {
    let value: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    let Value::Object(mut map) = value else {
        return Err("a ddb-json line must be a JSON object".into());
    };
    if map.len() == 1 {
        if let Some(Value::Object(inner)) = map.get("Item") {
            // `{"Item": {"M": ..}}` is an item with one attribute named Item;
            // `{"Item": {"pk": {"S": ..}}}` is an S3-export wrapper.
            if !is_attribute_value(&Value::Object(inner.clone())) {
                let Some(Value::Object(inner)) = map.remove("Item") else {
                    unreachable!()
                };
                return check_ddb_item(inner);
            }
        }
    }
    check_ddb_item(map)
}

fn check_ddb_item(item: Map<String, Value>) -> Record {
    for (name, value) in &item {
        if !is_attribute_value(value) {
            return Err(format!(
                "attribute `{name}` is not DynamoDB JSON (expected e.g. {{\"S\": \"x\"}})"
            ));
        }
    }
    Ok(item)
}

fn is_attribute_value(value: &Value) -> bool {
    const TYPES: [&str; 10] = ["S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS"];
    matches!(value, Value::Object(m) if m.len() == 1 && m.keys().all(|k| TYPES.contains(&k.as_str())))
}

fn is_csv_type(kind: &str) -> bool {
    matches!(
        kind.to_ascii_uppercase().as_str(),
        "S" | "N" | "BOOL" | "JSON"
    )
}

fn csv_item(headers: &[(String, Option<String>)], row: &csv::StringRecord) -> Record {
    let mut item = Map::new();
    for ((name, kind), cell) in headers.iter().zip(row.iter()) {
        if cell.is_empty() {
            continue;
        }
        let value = match kind.as_deref() {
            Some("S") => json!({ "S": cell }),
            Some("N") => json!({ "N": cell.trim() }),
            Some("BOOL") => match cell.trim().to_ascii_lowercase().as_str() {
                "true" => json!({ "BOOL": true }),
                "false" => json!({ "BOOL": false }),
                _ => return Err(format!("column `{name}`: `{cell}` is not true or false")),
            },
            Some(_) => {
                let plain = Plain::parse(cell).map_err(|e| format!("column `{name}`: {e}"))?;
                to_ddb(&plain)
                    .map_err(|e| format!("column `{name}`: {e}"))?
                    .0
            }
            None => match Plain::parse(cell.trim()) {
                Ok(Plain::Number(n)) => json!({ "N": n }),
                _ => json!({ "S": cell }),
            },
        };
        item.insert(name.clone(), value);
    }
    Ok(item)
}

/// Writes items (DynamoDB JSON) to a file or stdout in a format.
pub struct ItemWriter {
    format: FileFormat,
    out: Box<dyn Write + Send>,
    typed: bool,
    written: u64,
    /// CSV needs every column before the header: rows wait here.
    csv_rows: Vec<Map<String, Value>>,
    key_names: Vec<String>,
    pub tally: WarningTally,
}

impl ItemWriter {
    /// `typed` keeps sets and binary in plain formats as `{"$SS": ..}` tags.
    pub fn new(
        out: Box<dyn Write + Send>,
        format: FileFormat,
        typed: bool,
        key_names: Vec<String>,
    ) -> ItemWriter {
        ItemWriter {
            format,
            out,
            typed,
            written: 0,
            csv_rows: Vec::new(),
            key_names,
            tally: WarningTally::default(),
        }
    }

    pub fn write(&mut self, item: Value) -> Result<(), String> {
        let io = |e: std::io::Error| format!("cannot write: {e}");
        match self.format {
            FileFormat::Json => {
                let plain = super::output::plain_item(&item, self.typed, &mut self.tally)?;
                let separator = if self.written == 0 { "[\n" } else { ",\n" };
                write!(self.out, "{separator}{}", plain.to_json()).map_err(io)?;
            }
            FileFormat::Jsonl => {
                let plain = super::output::plain_item(&item, self.typed, &mut self.tally)?;
                writeln!(self.out, "{}", plain.to_json()).map_err(io)?;
            }
            FileFormat::DdbJson => writeln!(self.out, "{item}").map_err(io)?,
            FileFormat::Csv => match item {
                Value::Object(map) => self.csv_rows.push(map),
                _ => return Err("an item is not a JSON object".into()),
            },
        }
        self.written += 1;
        Ok(())
    }

    /// Items written so far.
    pub fn count(&self) -> u64 {
        self.written
    }

    /// Closes the array or writes the CSV, and flushes.
    pub fn finish(mut self) -> Result<WarningTally, String> {
        let io = |e: std::io::Error| format!("cannot write: {e}");
        match self.format {
            FileFormat::Json if self.written == 0 => writeln!(self.out, "[]").map_err(io)?,
            FileFormat::Json => writeln!(self.out, "\n]").map_err(io)?,
            FileFormat::Csv => self.write_csv()?,
            _ => {}
        }
        self.out.flush().map_err(io)?;
        Ok(self.tally)
    }

    fn write_csv(&mut self) -> Result<(), String> {
        // A column's type is fixed in its header when all its values share
        // one of the CSV scalar types; anything else is a JSON column.
        let mut kinds: BTreeMap<&str, &str> = BTreeMap::new();
        for row in &self.csv_rows {
            for (name, value) in row {
                let kind = match value
                    .as_object()
                    .and_then(|m| m.keys().next())
                    .map(String::as_str)
                {
                    Some("S") => "S",
                    Some("N") => "N",
                    Some("BOOL") => "BOOL",
                    _ => "JSON",
                };
                kinds
                    .entry(name)
                    .and_modify(|k| {
                        if *k != kind {
                            *k = "JSON"
                        }
                    })
                    .or_insert(kind);
            }
        }
        let mut columns: Vec<&str> = self
            .key_names
            .iter()
            .map(String::as_str)
            .filter(|k| kinds.contains_key(k))
            .collect();
        columns.extend(
            kinds
                .keys()
                .filter(|k| !self.key_names.iter().any(|n| n == *k)),
        );
        let mut writer = csv::Writer::from_writer(&mut self.out);
        let header: Vec<String> = columns
            .iter()
            .map(|c| format!("{c}:{}", kinds[c]))
            .collect();
        writer.write_record(&header).map_err(|e| e.to_string())?;
        for row in &self.csv_rows {
            let cells: Vec<String> = columns
                .iter()
                .map(|c| match (row.get(*c), kinds[c]) {
                    (None, _) => Ok(String::new()),
                    (Some(v), "JSON") => from_ddb(v, true)
                        .map(|(p, _)| p.to_json())
                        .map_err(|e| e.to_string()),
                    (Some(v), _) => Ok(ferrodyn_client::convert::display(v)),
                })
                .collect::<Result<_, String>>()?;
            writer.write_record(&cells).map_err(|e| e.to_string())?;
        }
        writer.flush().map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_guessed_from_file_names() {
        let guess = |name: &str| FileFormat::from_path(Path::new(name));
        assert_eq!(guess("a.json"), Some(FileFormat::Json));
        assert_eq!(guess("a.ddb.json"), Some(FileFormat::DdbJson));
        assert_eq!(guess("a.NDJSON"), Some(FileFormat::Jsonl));
        assert_eq!(guess("a.csv"), Some(FileFormat::Csv));
        assert_eq!(guess("a.txt"), None);
    }

    #[test]
    fn ddb_lines_accept_s3_export_wrappers_but_not_items_named_item() {
        let wrapped = ddb_line(r#"{"Item": {"pk": {"S": "a"}}}"#).unwrap();
        assert_eq!(Value::Object(wrapped), json!({"pk": {"S": "a"}}));
        let named = ddb_line(r#"{"Item": {"M": {"x": {"N": "1"}}}}"#).unwrap();
        assert!(named.contains_key("Item"));
        assert!(ddb_line(r#"{"pk": "a"}"#).is_err());
    }

    #[test]
    fn csv_cells_are_typed_by_header_or_inferred() {
        let headers = vec![
            ("pk".to_string(), None),
            ("zip".to_string(), Some("S".to_string())),
            ("n".to_string(), None),
            ("tags".to_string(), Some("JSON".to_string())),
            ("ok".to_string(), Some("BOOL".to_string())),
            ("empty".to_string(), None),
        ];
        let row =
            csv::StringRecord::from(vec!["a", "01234", "12.5", r#"{"$SS":["x"]}"#, "true", ""]);
        let item = csv_item(&headers, &row).unwrap();
        assert_eq!(
            Value::Object(item),
            json!({"pk": {"S": "a"}, "zip": {"S": "01234"}, "n": {"N": "12.5"},
                   "tags": {"SS": ["x"]}, "ok": {"BOOL": true}})
        );
    }
}
