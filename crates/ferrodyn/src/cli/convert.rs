//! `ferrodyn convert to-ddb|from-ddb`: the plain JSON ↔ DynamoDB JSON
//! converter on files or stdin. Input may be one JSON document (an item, a
//! value, or an array of items) or JSON lines.

use clap::{Args, Subcommand};
use ferrodyn_client::convert::{from_ddb, item_from_ddb, item_to_ddb, to_ddb, Plain};
use serde_json::Value;

use super::output::WarningTally;
use super::{read_argument, CliResult};

#[derive(Subcommand)]
pub enum ConvertCommand {
    /// Plain JSON to DynamoDB JSON: {"age": 30} becomes {"age": {"N": "30"}}.
    /// Numbers keep every digit; {"$SS": [..]}, {"$NS": [..]}, {"$BS": [..]}
    /// and {"$B": ".."} become sets and binary.
    ToDdb(ConvertArgs),
    /// DynamoDB JSON to plain JSON. Sets and binary have no plain JSON type:
    /// they become lists and base64 strings with a warning, or `$`-tagged
    /// objects with --typed so the conversion can be reversed exactly.
    FromDdb(ConvertArgs),
}

#[derive(Args)]
pub struct ConvertArgs {
    /// Input: a file, `-` for stdin (the default), or inline JSON.
    #[arg(default_value = "-")]
    input: String,
    /// Treat the input as one JSON value per line.
    #[arg(long)]
    lines: bool,
    /// Convert a single attribute value rather than an item (objects are
    /// then maps, not items).
    #[arg(long)]
    value: bool,
    /// from-ddb: keep sets and binary as {"$SS": ..}-tagged objects.
    #[arg(long)]
    typed: bool,
    /// One compact document per line instead of indented JSON.
    #[arg(long)]
    compact: bool,
}

pub fn run(command: ConvertCommand) -> CliResult {
    let (args, to) = match command {
        ConvertCommand::ToDdb(args) => (args, true),
        ConvertCommand::FromDdb(args) => (args, false),
    };
    let text = if args.input == "-" || args.input.starts_with('@') {
        read_argument(&args.input)?
    } else if args.input.trim_start().starts_with(['{', '[']) {
        args.input.clone()
    } else {
        std::fs::read_to_string(&args.input)
            .map_err(|e| format!("cannot read {}: {e}", args.input))?
    };
    let mut tally = WarningTally::default();
    let mut documents: Vec<String> = Vec::new();
    let lines = args.lines || looks_like_lines(&text);
    let inputs: Vec<&str> = if lines {
        text.lines().filter(|l| !l.trim().is_empty()).collect()
    } else {
        vec![text.as_str()]
    };
    for (n, input) in inputs.iter().enumerate() {
        let place = |e: String| {
            if lines {
                format!("line {}: {e}", n + 1)
            } else {
                e
            }
        };
        let output = if to {
            let plain = Plain::parse(input).map_err(|e| place(e.to_string()))?;
            convert_to(&plain, args.value, &mut tally).map_err(place)?
        } else {
            let value: Value =
                serde_json::from_str(input).map_err(|e| place(format!("not JSON: {e}")))?;
            convert_from(&value, args.value, args.typed, &mut tally).map_err(place)?
        };
        documents.push(output);
    }
    for document in documents {
        if args.compact || lines {
            println!("{document}");
        } else {
            println!("{}", pretty(&document));
        }
    }
    tally.report();
    Ok(())
}

/// Several non-blank lines that each start a JSON object: JSON lines.
fn looks_like_lines(text: &str) -> bool {
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines.len() > 1
        && lines
            .iter()
            .all(|l| l.trim_start().starts_with('{') && l.trim_end().ends_with('}'))
        && Plain::parse(lines[0]).is_ok()
}

fn convert_to(plain: &Plain, value: bool, tally: &mut WarningTally) -> Result<String, String> {
    match plain {
        // An array at the top is a list of items (as in a json import file).
        Plain::Array(items) if !value => {
            let mut out = Vec::new();
            for item in items {
                let (item, warnings) = item_to_ddb(item).map_err(|e| e.to_string())?;
                tally.add(warnings);
                out.push(Value::Object(item));
            }
            Ok(Value::Array(out).to_string())
        }
        Plain::Object(_) if !value => {
            let (item, warnings) = item_to_ddb(plain).map_err(|e| e.to_string())?;
            tally.add(warnings);
            Ok(Value::Object(item).to_string())
        }
        _ => {
            let (v, warnings) = to_ddb(plain).map_err(|e| e.to_string())?;
            tally.add(warnings);
            Ok(v.to_string())
        }
    }
}

fn convert_from(
    value: &Value,
    as_value: bool,
    typed: bool,
    tally: &mut WarningTally,
) -> Result<String, String> {
    let (plain, warnings) = match value {
        Value::Array(items) if !as_value => {
            let mut out = Vec::new();
            let mut all = Vec::new();
            for item in items {
                let (p, w) = item_from_ddb(item, typed).map_err(|e| e.to_string())?;
                out.push(p);
                all.extend(w);
            }
            (Plain::Array(out), all)
        }
        _ if as_value => from_ddb(value, typed).map_err(|e| e.to_string())?,
        // `{"Item": {...}}` (GetItem output, S3 exports) is unwrapped.
        Value::Object(map)
            if map.len() == 1
                && map.get("Item").is_some_and(Value::is_object)
                && item_from_ddb(value, typed).is_err() =>
        {
            item_from_ddb(&map["Item"], typed).map_err(|e| e.to_string())?
        }
        _ => item_from_ddb(value, typed).map_err(|e| e.to_string())?,
    };
    tally.add(warnings);
    Ok(plain.to_json())
}

/// Re-indents compact JSON without touching number text.
fn pretty(compact: &str) -> String {
    Plain::parse(compact)
        .map(|p| p.to_json_pretty())
        .unwrap_or_else(|_| compact.to_string())
}
