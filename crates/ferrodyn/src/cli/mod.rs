//! The client side of the `ferrodyn` binary: everyday DynamoDB commands
//! (tables, items, query, scan, sql, import, export, convert) as a thin layer over
//! the `ferrodyn-client` library. Each command is one module; this one holds
//! what they share: connection flags, output format, and reading JSON
//! arguments.
//!
//! Every command here works against Ferrodyn (the default endpoint,
//! `http://127.0.0.1:8000`) and against AWS DynamoDB (`--endpoint-url aws`).

pub mod backups;
pub mod convert;
pub mod destinations;
pub mod export;
pub mod formats;
pub mod harness;
pub mod import;
pub mod insights;
pub mod items;
pub mod keys;
pub mod output;
pub mod partitions;
pub mod patterns;
pub mod read;
pub mod replicas;
pub mod s3;
pub mod shards;
pub mod sql;
pub mod tables;
pub mod usage;
pub mod vectors;

mod checkpoint;

use clap::Args;
use ferrodyn_client::convert::{item_to_ddb, to_ddb, Plain};
use ferrodyn_client::{Client, ConnectionOptions};
use serde_json::{Map, Value};

pub use output::OutputFormat;

/// A command's failure, shown to the user as `ferrodyn: <message>`.
pub type CliResult = Result<(), String>;

/// An expression with its ExpressionAttributeNames and ExpressionAttributeValues.
pub type Expression = (String, Map<String, Value>, Map<String, Value>);

/// Where to connect and how to print; flattened into every client command.
#[derive(Args, Debug, Clone)]
pub struct Common {
    /// Endpoint URL [default: http://127.0.0.1:8000, a local `ferrodyn serve`;
    /// `aws` means the region's AWS DynamoDB endpoint]. Also read from
    /// AWS_ENDPOINT_URL_DYNAMODB / AWS_ENDPOINT_URL.
    #[arg(long, value_name = "URL", help_heading = "Connection")]
    pub endpoint_url: Option<String>,
    /// AWS region [default: AWS_REGION, AWS_DEFAULT_REGION, the profile's
    /// region, else us-east-1].
    #[arg(long, help_heading = "Connection")]
    pub region: Option<String>,
    /// Profile of ~/.aws/config and ~/.aws/credentials [default: AWS_PROFILE,
    /// else `default`]. Credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY
    /// are used unless a profile is named here.
    #[arg(long, help_heading = "Connection")]
    pub profile: Option<String>,
    /// How to print results: `table` for people, `json` (plain JSON), `jsonl`
    /// (one plain JSON item per line) or `raw` (DynamoDB JSON, as the API
    /// speaks it).
    #[arg(long, short = 'o', value_enum, default_value_t = OutputFormat::Table, help_heading = "Output")]
    pub output: OutputFormat,
}

impl Common {
    /// Connects with the flags given (resolution rules in `Client::connect`).
    pub fn connect(&self) -> Result<Client, String> {
        Client::connect(&ConnectionOptions {
            endpoint_url: self.endpoint_url.clone(),
            region: self.region.clone(),
            profile: self.profile.clone(),
        })
        .map_err(|e| e.to_string())
    }
}

/// Reads a JSON argument: inline text, `@path` for a file, or `-` for stdin.
pub fn read_argument(text: &str) -> Result<String, String> {
    if text == "-" {
        let mut buffer = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut buffer)
            .map_err(|e| format!("cannot read standard input: {e}"))?;
        Ok(buffer)
    } else if let Some(path) = text.strip_prefix('@') {
        std::fs::read_to_string(path).map_err(|e| format!("cannot read {path}: {e}"))
    } else {
        Ok(text.to_string())
    }
}

/// An item or key given on the command line: plain JSON, or DynamoDB JSON
/// when `raw` (then taken as is).
pub fn parse_item(text: &str, raw: bool, what: &str) -> Result<Map<String, Value>, String> {
    let text = read_argument(text)?;
    if raw {
        return match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(_) => Err(format!(
                "{what} must be a JSON object of DynamoDB attribute values"
            )),
            Err(e) => Err(format!("{what} is not valid JSON: {e}")),
        };
    }
    let plain = Plain::parse(&text).map_err(|e| format!("{what} is not valid JSON: {e}"))?;
    let (item, warnings) = item_to_ddb(&plain).map_err(|e| format!("{what}: {e}"))?;
    print_warnings(&warnings);
    Ok(item)
}

/// `--values` for expressions: `{":v": 1}` in plain JSON, or DynamoDB JSON
/// (`{":v": {"N": "1"}}`) when `raw`.
pub fn parse_values(text: &str, raw: bool) -> Result<Map<String, Value>, String> {
    parse_item(text, raw, "--values")
}

/// `--names`: `{"#n": "name"}`.
pub fn parse_names(text: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_str::<Value>(&read_argument(text)?) {
        Ok(Value::Object(map)) if map.values().all(Value::is_string) => Ok(map),
        Ok(_) => Err("--names must be a JSON object of strings, like {\"#n\": \"name\"}".into()),
        Err(e) => Err(format!("--names is not valid JSON: {e}")),
    }
}

/// One attribute value in plain JSON (or DynamoDB JSON when `raw`).
pub fn parse_value(text: &str, raw: bool) -> Result<Value, String> {
    if raw {
        return serde_json::from_str(text).map_err(|e| format!("`{text}` is not valid JSON: {e}"));
    }
    let plain = Plain::parse(text).map_err(|e| format!("`{text}` is not valid JSON: {e}"))?;
    let (value, warnings) = to_ddb(&plain).map_err(|e| e.to_string())?;
    print_warnings(&warnings);
    Ok(value)
}

/// Conversion warnings go to stderr so they never mix with output.
pub fn print_warnings(warnings: &[ferrodyn_client::convert::Warning]) {
    for warning in warnings {
        eprintln!("warning: {warning}");
    }
}

/// Adds `--names`/`--values` maps to a request, merging with what is there.
pub fn add_expression_maps(
    request: &mut Value,
    names: Map<String, Value>,
    values: Map<String, Value>,
) {
    for (field, map) in [
        ("ExpressionAttributeNames", names),
        ("ExpressionAttributeValues", values),
    ] {
        if map.is_empty() {
            continue;
        }
        let entry = request
            .as_object_mut()
            .expect("requests are objects")
            .entry(field)
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(existing) = entry {
            existing.extend(map);
        }
    }
}
