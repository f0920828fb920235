//! `ferrodyn s3 export|import|list|describe`: DynamoDB's exports to and
//! imports from S3 (ExportTableToPointInTime, ImportTable and their
//! Describe/List), not to be confused with `ferrodyn export` / `import`,
//! which copy a table to and from a local file through the item API.

use super::output::{new_table, print_document};
use super::tables::{create_request, wait_until_active, CreateArgs};
use super::{CliResult, Common, OutputFormat};
use clap::{Args, Subcommand, ValueEnum};
use ferrodyn_client::Client;
use ferrodyn_types::dates::{iso8601_utc, parse_iso8601_utc};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

#[derive(Subcommand)]
pub enum S3Command {
    /// Export a table (point-in-time recovery on) to an S3 bucket.
    Export(ExportArgs),
    /// Create a table from the objects under an S3 prefix.
    #[command(after_help = "Example:\n  \
        ferrodyn s3 import users --pk id --bucket exports \\\n      \
        --prefix AWSDynamoDB/01796374227026-00000001/data/ --compression gzip --wait")]
    Import(ImportArgs),
    /// List exports and imports (of one table, or all).
    List {
        /// Only this table's (its name).
        table: Option<String>,
        #[command(flatten)]
        common: Common,
    },
    /// Show an export or an import by its ARN.
    Describe {
        arn: String,
        #[command(flatten)]
        common: Common,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum ExportFormatArg {
    DynamodbJson,
    Ion,
}

#[derive(Clone, Copy, ValueEnum)]
enum InputFormatArg {
    DynamodbJson,
    Csv,
}

#[derive(Clone, Copy, ValueEnum)]
enum CompressionArg {
    None,
    Gzip,
    Zstd,
}

#[derive(Args)]
pub struct ExportArgs {
    table: String,
    #[arg(long)]
    bucket: String,
    #[arg(long)]
    prefix: Option<String>,
    #[arg(long, value_enum, default_value_t = ExportFormatArg::DynamodbJson)]
    format: ExportFormatArg,
    /// The instant to export: YYYY-MM-DDTHH:MM:SS[.fff]Z (UTC) [default: now].
    #[arg(long, value_name = "TIME")]
    at: Option<String>,
    /// Wait until the export is COMPLETED (or FAILED).
    #[arg(long)]
    wait: bool,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
pub struct ImportArgs {
    #[command(flatten)]
    table: CreateArgs,
    #[arg(long)]
    bucket: String,
    /// Every object under this prefix is read.
    #[arg(long, default_value = "")]
    prefix: String,
    #[arg(long, value_enum, default_value_t = InputFormatArg::DynamodbJson)]
    format: InputFormatArg,
    #[arg(long, value_enum, default_value_t = CompressionArg::None)]
    compression: CompressionArg,
}

pub fn run(command: S3Command) -> CliResult {
    match command {
        S3Command::Export(args) => export(args),
        S3Command::Import(args) => import(args),
        S3Command::List { table, common } => list(&common, table.as_deref()),
        S3Command::Describe { arn, common } => {
            let client = common.connect()?;
            let (operation, member) = operation_of(&arn);
            let answer = call(
                &client,
                &format!("Describe{operation}"),
                json!({ format!("{operation}Arn"): arn }),
            )?;
            print_document(&answer[member], common.output)
        }
    }
}

/// An ARN's kind: (Export | Import, the description's member).
fn operation_of(arn: &str) -> (&'static str, &'static str) {
    if arn.contains("/import/") {
        ("Import", "ImportTableDescription")
    } else {
        ("Export", "ExportDescription")
    }
}

fn call(client: &Client, operation: &str, request: Value) -> Result<Value, String> {
    client.call(operation, &request).map_err(|e| e.to_string())
}

fn export(args: ExportArgs) -> CliResult {
    let client = args.common.connect()?;
    let table_arn = super::keys::describe(&client, &args.table)?["TableArn"].clone();
    let mut request = json!({ "TableArn": table_arn, "S3Bucket": args.bucket, "ExportFormat": match args.format {
        ExportFormatArg::DynamodbJson => "DYNAMODB_JSON",
        ExportFormatArg::Ion => "ION",
    }});
    if let Some(prefix) = args.prefix {
        request["S3Prefix"] = json!(prefix);
    }
    if let Some(at) = args.at.as_deref() {
        let at = parse_iso8601_utc(at)
            .ok_or_else(|| format!("--at {at}: expected YYYY-MM-DDTHH:MM:SS[.fff]Z"))?;
        request["ExportTime"] = json!(at);
    }
    let mut answer =
        call(&client, "ExportTableToPointInTime", request)?["ExportDescription"].clone();
    if args.wait {
        answer = wait_for(&client, "Export", &answer)?;
    }
    finish(&args.common, &answer, "export")
}

fn import(args: ImportArgs) -> CliResult {
    let client = args.table.common.connect()?;
    let parameters = create_request(&args.table)?;
    let request = json!({
        "S3BucketSource": { "S3Bucket": args.bucket, "S3KeyPrefix": args.prefix },
        "InputFormat": match args.format { InputFormatArg::DynamodbJson => "DYNAMODB_JSON", InputFormatArg::Csv => "CSV" },
        "InputCompressionType": match args.compression {
            CompressionArg::None => "NONE", CompressionArg::Gzip => "GZIP", CompressionArg::Zstd => "ZSTD",
        },
        "TableCreationParameters": parameters,
    });
    let mut answer = call(&client, "ImportTable", request)?["ImportTableDescription"].clone();
    if args.table.wait {
        answer = wait_for(&client, "Import", &answer)?;
        if answer["ImportStatus"] == "COMPLETED" {
            wait_until_active(&client, &args.table.table)?;
        }
    }
    finish(&args.table.common, &answer, "import")
}

/// Polls Describe<kind> until the job is no longer IN_PROGRESS.
fn wait_for(client: &Client, kind: &str, started: &Value) -> Result<Value, String> {
    let arn = started[format!("{kind}Arn")].clone();
    let member = operation_of(arn.as_str().unwrap_or_default()).1;
    let deadline = Instant::now() + Duration::from_secs(3600);
    loop {
        let now = call(
            client,
            &format!("Describe{kind}"),
            json!({ format!("{kind}Arn"): arn }),
        )?[member]
            .clone();
        let status = now[format!("{kind}Status")]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if status != "IN_PROGRESS" || Instant::now() > deadline {
            return Ok(now);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A line for people (the job's ARN, status, counts, failure), the
/// description for the JSON formats; a FAILED job fails the command.
fn finish(common: &Common, description: &Value, what: &str) -> CliResult {
    let status = ["ExportStatus", "ImportStatus"]
        .iter()
        .find_map(|f| description[*f].as_str())
        .unwrap_or("?");
    let arn = ["ExportArn", "ImportArn"]
        .iter()
        .find_map(|f| description[*f].as_str())
        .unwrap_or("?");
    if common.output != OutputFormat::Table {
        print_document(description, common.output)?;
    } else {
        let counts = match what {
            "export" => format!("{} item(s)", description["ItemCount"].as_u64().unwrap_or(0)),
            _ => format!(
                "{} imported, {} skipped",
                description["ImportedItemCount"].as_u64().unwrap_or(0),
                description["ErrorCount"].as_u64().unwrap_or(0)
            ),
        };
        println!("{what} {arn}: {status} ({counts})");
    }
    match status {
        "FAILED" => Err(format!(
            "{what} failed: {}",
            description["FailureMessage"]
                .as_str()
                .unwrap_or("no reason given")
        )),
        _ => Ok(()),
    }
}

fn list(common: &Common, table: Option<&str>) -> CliResult {
    let client = common.connect()?;
    let table_arn = table
        .map(|t| super::keys::describe(&client, t).map(|d| d["TableArn"].clone()))
        .transpose()?;
    let mut rows: Vec<Value> = Vec::new();
    for (operation, member, size) in [
        ("ListExports", "ExportSummaries", "MaxResults"),
        ("ListImports", "ImportSummaryList", "PageSize"),
    ] {
        let mut request = json!({ size: 25 });
        if let Some(arn) = &table_arn {
            request["TableArn"] = arn.clone();
        }
        loop {
            let page = call(&client, operation, request.clone())?;
            rows.extend(page[member].as_array().cloned().unwrap_or_default());
            match page.get("NextToken") {
                Some(token) => request["NextToken"] = token.clone(),
                None => break,
            }
        }
    }
    if common.output != OutputFormat::Table {
        return print_document(&json!({ "Jobs": rows }), common.output);
    }
    let mut shown = new_table();
    shown.set_header(vec!["kind", "status", "started", "arn"]);
    for row in &rows {
        let (kind, status) = match row.get("ExportArn") {
            Some(_) => ("export", row["ExportStatus"].clone()),
            None => ("import", row["ImportStatus"].clone()),
        };
        let arn = row
            .get("ExportArn")
            .or(row.get("ImportArn"))
            .and_then(Value::as_str)
            .unwrap_or_default();
        let started = row["StartTime"]
            .as_f64()
            .map(iso8601_utc)
            .unwrap_or_default();
        shown.add_row(vec![
            kind.to_string(),
            status.as_str().unwrap_or("?").to_string(),
            started,
            arn.to_string(),
        ]);
    }
    println!("{shown}");
    Ok(())
}
