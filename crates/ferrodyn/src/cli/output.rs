//! Printing results: a table for people, or JSON for scripts. Items arrive
//! as DynamoDB JSON; `table`, `json` and `jsonl` show them as plain JSON
//! (sets and binary lose their type unless `--typed`, with one warning
//! summary on stderr), `raw` prints DynamoDB JSON untouched.

use clap::ValueEnum;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
use ferrodyn_client::convert::{display, item_from_ddb, Plain};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Write;

/// A cell longer than this is cut, so one big attribute cannot wreck a table.
const MAX_CELL_CHARS: usize = 60;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// A table for people (items: one row each, key attributes first).
    Table,
    /// Plain JSON, pretty-printed (a list of items is one JSON array).
    Json,
    /// Plain JSON, one item per line.
    Jsonl,
    /// DynamoDB JSON exactly as the API returns it (`{"pk": {"S": "a"}}`).
    Raw,
}

/// Counts conversion warnings by message so a scan of a million items with
/// sets prints one line, not a million.
#[derive(Default)]
pub struct WarningTally(BTreeMap<String, u64>);

impl WarningTally {
    pub fn add(&mut self, warnings: Vec<ferrodyn_client::convert::Warning>) {
        for warning in warnings {
            *self.0.entry(warning.message).or_default() += 1;
        }
    }

    /// Prints the summary to stderr.
    pub fn report(&self) {
        for (message, count) in &self.0 {
            let times = if *count > 1 {
                format!(" ({count} values)")
            } else {
                String::new()
            };
            eprintln!("warning: {message}{times}");
        }
    }
}

/// An item (DynamoDB JSON) as plain JSON, warnings tallied.
pub fn plain_item(item: &Value, typed: bool, tally: &mut WarningTally) -> Result<Plain, String> {
    let (plain, warnings) =
        item_from_ddb(item, typed).map_err(|e| format!("unreadable item: {e}"))?;
    tally.add(warnings);
    Ok(plain)
}

/// Prints items page by page as they arrive, so that reading millions of
/// items runs in constant memory. Only the table format needs every row
/// before printing (for its column widths), and keeps them.
pub struct ItemStream<'a> {
    format: OutputFormat,
    key_names: &'a [String],
    typed: bool,
    tally: WarningTally,
    table_rows: Vec<Value>,
    count: usize,
}

impl<'a> ItemStream<'a> {
    pub fn new(format: OutputFormat, key_names: &'a [String], typed: bool) -> ItemStream<'a> {
        ItemStream {
            format,
            key_names,
            typed,
            tally: WarningTally::default(),
            table_rows: Vec::new(),
            count: 0,
        }
    }

    /// Prints (or, for a table, keeps) one page of items.
    pub fn push(&mut self, items: &[Value]) -> Result<(), String> {
        let mut out = std::io::stdout().lock();
        let written: std::io::Result<()> = match self.format {
            OutputFormat::Table => {
                self.table_rows.extend(items.iter().cloned());
                Ok(())
            }
            OutputFormat::Json => items.iter().enumerate().try_for_each(|(n, item)| {
                let plain =
                    plain_item(item, self.typed, &mut self.tally).map_err(std::io::Error::other)?;
                let separator = if self.count + n == 0 { "[\n" } else { ",\n" };
                write!(out, "{separator}{}", plain.to_json_pretty())
            }),
            OutputFormat::Jsonl => items.iter().try_for_each(|item| {
                let plain =
                    plain_item(item, self.typed, &mut self.tally).map_err(std::io::Error::other)?;
                writeln!(out, "{}", plain.to_json())
            }),
            OutputFormat::Raw => items.iter().try_for_each(|item| writeln!(out, "{item}")),
        };
        self.count += items.len();
        written.map_err(|e| format!("cannot write output: {e}"))
    }

    /// Whether no item has been pushed yet.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Ends the output; returns how many items were printed.
    pub fn finish(self) -> Result<usize, String> {
        let mut out = std::io::stdout().lock();
        let written = match self.format {
            OutputFormat::Table => {
                writeln!(out, "{}", items_table(&self.table_rows, self.key_names))
            }
            OutputFormat::Json if self.count == 0 => writeln!(out, "[]"),
            OutputFormat::Json => writeln!(out, "\n]"),
            OutputFormat::Jsonl | OutputFormat::Raw => Ok(()),
        };
        self.tally.report();
        written.map_err(|e| format!("cannot write output: {e}"))?;
        Ok(self.count)
    }
}

/// Prints a list of items in the chosen format.
pub fn print_items(
    items: &[Value],
    format: OutputFormat,
    key_names: &[String],
    typed: bool,
) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    let mut tally = WarningTally::default();
    let result = match format {
        OutputFormat::Table => {
            let text = items_table(items, key_names);
            writeln!(out, "{text}")
        }
        OutputFormat::Json => {
            let plain: Vec<Plain> = items
                .iter()
                .map(|i| plain_item(i, typed, &mut tally))
                .collect::<Result<_, _>>()?;
            writeln!(out, "{}", Plain::Array(plain).to_json_pretty())
        }
        OutputFormat::Jsonl => items.iter().try_for_each(|item| {
            let plain = plain_item(item, typed, &mut tally).map_err(std::io::Error::other)?;
            writeln!(out, "{}", plain.to_json())
        }),
        OutputFormat::Raw => items.iter().try_for_each(|item| writeln!(out, "{item}")),
    };
    tally.report();
    result.map_err(|e| format!("cannot write output: {e}"))
}

/// Prints one item, or says there is none (`table`) / prints `null`.
pub fn print_item(
    item: Option<&Value>,
    format: OutputFormat,
    key_names: &[String],
    typed: bool,
) -> Result<(), String> {
    match (item, format) {
        (None, OutputFormat::Table) => {
            eprintln!("(no item with that key)");
            Ok(())
        }
        (None, _) => {
            println!("null");
            Ok(())
        }
        (Some(item), OutputFormat::Json) => {
            let mut tally = WarningTally::default();
            let plain = plain_item(item, typed, &mut tally)?;
            println!("{}", plain.to_json_pretty());
            tally.report();
            Ok(())
        }
        (Some(item), OutputFormat::Raw) => {
            println!(
                "{}",
                serde_json::to_string_pretty(item).expect("plain data always serialises")
            );
            Ok(())
        }
        (Some(item), _) => print_items(std::slice::from_ref(item), format, key_names, typed),
    }
}

/// Prints a response that is not items (a table description, a list of
/// names): `table` shows its top-level fields, the JSON formats the JSON.
pub fn print_document(value: &Value, format: OutputFormat) -> Result<(), String> {
    match format {
        OutputFormat::Table => {
            let mut table = new_table();
            table.set_header(vec!["field", "value"]);
            if let Value::Object(map) = value {
                for (name, field) in map {
                    let text = match field {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    };
                    table.add_row(vec![name.clone(), text]);
                }
            }
            println!("{table}");
        }
        OutputFormat::Json | OutputFormat::Raw => {
            println!(
                "{}",
                serde_json::to_string_pretty(value).expect("plain data always serialises")
            )
        }
        OutputFormat::Jsonl => println!("{value}"),
    }
    Ok(())
}

/// Items as a table: key attributes first, then the others alphabetically.
pub fn items_table(items: &[Value], key_names: &[String]) -> Table {
    let mut columns: Vec<String> = key_names.to_vec();
    let mut others: Vec<String> = items
        .iter()
        .filter_map(Value::as_object)
        .flat_map(|m| m.keys())
        .filter(|k| !key_names.contains(k))
        .cloned()
        .collect();
    others.sort();
    others.dedup();
    columns.extend(others);
    let mut table = new_table();
    table.set_header(columns.clone());
    for item in items {
        table.add_row(columns.iter().map(|c| match item.get(c) {
            Some(value) => truncate(display(value)),
            None => String::new(),
        }));
    }
    table
}

pub fn new_table() -> Table {
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED);
    table
}

fn truncate(text: String) -> String {
    if text.chars().count() <= MAX_CELL_CHARS {
        text
    } else {
        let cut: String = text.chars().take(MAX_CELL_CHARS - 1).collect();
        format!("{cut}…")
    }
}
