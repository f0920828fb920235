//! `ferrodyn s3 export|import|put|cancel|list|describe`: DynamoDB's exports
//! to and imports from S3 and its bulk puts into existing tables
//! (ExportTableToPointInTime, ImportTable, StartBulkPutItems and their
//! Describe/List/Cancel), not to be confused with `ferrodyn export` /
//! `import`, which copy a table to and from a local file through the item API.

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
    /// Put the items under an S3 prefix into an existing table (StartBulkPutItems).
    #[command(after_help = "Example:\n  \
        ferrodyn s3 put users --bucket loads --prefix users/ --compression gzip \\\n      \
        --max-units 2048 --wait")]
    Put(PutArgs),
    /// Cancel a bulk put by its ARN (items already written stay).
    Cancel {
        arn: String,
        #[command(flatten)]
        common: Common,
    },
    /// List exports, imports and bulk puts (of one table, or all).
    List {
        /// Only this table's (its name).
        table: Option<String>,
        #[command(flatten)]
        common: Common,
    },
    /// Show an export, an import or a bulk put by its ARN.
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
    Ion,
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

#[derive(Args)]
pub struct PutArgs {
    table: String,
    #[arg(long)]
    bucket: String,
    /// Every object under this prefix is read.
    #[arg(long, default_value = "")]
    prefix: String,
    /// DynamoDB JSON lines or Ion structs, each an item with an optional condition.
    #[arg(long, value_enum, default_value_t = ExportFormatArg::DynamodbJson)]
    format: ExportFormatArg,
    #[arg(long, value_enum, default_value_t = CompressionArg::None)]
    compression: CompressionArg,
    /// The most write units a second the load may use (at least 1024).
    #[arg(long, value_name = "UNITS")]
    max_units: Option<u64>,
    /// Where the reports of failed items and failed conditions go
    /// [default: the input bucket, no prefix].
    #[arg(long, value_name = "PREFIX")]
    report_prefix: Option<String>,
    /// Wait until the bulk put ends.
    #[arg(long)]
    wait: bool,
    #[command(flatten)]
    common: Common,
}

pub fn run(command: S3Command) -> CliResult {
    match command {
        S3Command::Export(args) => export(args),
        S3Command::Import(args) => import(args),
        S3Command::Put(args) => put(args),
        S3Command::Cancel { arn, common } => {
            let client = common.connect()?;
            let answer = call(
                &client,
                "CancelBulkOperation",
                json!({ "BulkOperationArn": arn }),
            )?;
            print_document(&answer, common.output)
        }
        S3Command::List { table, common } => list(&common, table.as_deref()),
        S3Command::Describe { arn, common } => {
            let client = common.connect()?;
            let kind = Kind::of(&arn);
            let answer = call(&client, kind.describe, json!({ kind.arn: arn }))?;
            print_document(&answer[kind.description], common.output)
        }
    }
}

/// One kind of S3 job, by the members its operations use.
struct Kind {
    describe: &'static str,
    arn: &'static str,
    description: &'static str,
    status: &'static str,
}

const EXPORT: Kind = Kind {
    describe: "DescribeExport",
    arn: "ExportArn",
    description: "ExportDescription",
    status: "ExportStatus",
};
const IMPORT: Kind = Kind {
    describe: "DescribeImport",
    arn: "ImportArn",
    description: "ImportTableDescription",
    status: "ImportStatus",
};
const BULK: Kind = Kind {
    describe: "DescribeBulkOperation",
    arn: "BulkOperationArn",
    description: "BulkOperationDescription",
    status: "BulkOperationStatus",
};

impl Kind {
    /// An ARN's kind, by the word its table ARN is followed by.
    fn of(arn: &str) -> &'static Kind {
        if arn.contains("/import/") {
            &IMPORT
        } else if arn.contains("/bulk-operation/") {
            &BULK
        } else {
            &EXPORT
        }
    }

    /// The kind of a description or summary, by the ARN member it holds.
    fn of_row(row: &Value) -> &'static Kind {
        [&EXPORT, &IMPORT, &BULK]
            .into_iter()
            .find(|kind| row.get(kind.arn).is_some())
            .unwrap_or(&EXPORT)
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
        answer = wait_for(&client, &answer)?;
    }
    finish(&args.common, &answer, "export")
}

fn import(args: ImportArgs) -> CliResult {
    let client = args.table.common.connect()?;
    let parameters = create_request(&args.table)?;
    let request = json!({
        "S3BucketSource": { "S3Bucket": args.bucket, "S3KeyPrefix": args.prefix },
        "InputFormat": match args.format {
            InputFormatArg::DynamodbJson => "DYNAMODB_JSON",
            InputFormatArg::Ion => "ION",
            InputFormatArg::Csv => "CSV",
        },
        "InputCompressionType": compression_name(args.compression),
        "TableCreationParameters": parameters,
    });
    let mut answer = call(&client, "ImportTable", request)?["ImportTableDescription"].clone();
    if args.table.wait {
        answer = wait_for(&client, &answer)?;
        if answer["ImportStatus"] == "COMPLETED" {
            wait_until_active(&client, &args.table.table)?;
        }
    }
    finish(&args.table.common, &answer, "import")
}

fn put(args: PutArgs) -> CliResult {
    let client = args.common.connect()?;
    let mut output =
        json!({ "OutputType": ["ERROR", "CONDITION_CHECK_FAILURE"], "S3Bucket": args.bucket });
    if let Some(prefix) = args.report_prefix {
        output["S3KeyPrefix"] = json!(prefix);
    }
    let mut request = json!({
        "TableName": args.table,
        "InputS3Configuration": {
            "S3Bucket": args.bucket, "S3KeyPrefix": args.prefix,
            "InputFormat": match args.format { ExportFormatArg::DynamodbJson => "DYNAMODB_JSON", ExportFormatArg::Ion => "ION" },
            "InputCompressionType": compression_name(args.compression),
        },
        "OutputS3Configuration": output,
    });
    if let Some(units) = args.max_units {
        request["MaxWriteRequestUnits"] = json!(units);
    }
    let mut answer =
        call(&client, "StartBulkPutItems", request)?["BulkOperationDescription"].clone();
    if args.wait {
        answer = wait_for(&client, &answer)?;
    }
    finish(&args.common, &answer, "bulk put")
}

fn compression_name(compression: CompressionArg) -> &'static str {
    match compression {
        CompressionArg::None => "NONE",
        CompressionArg::Gzip => "GZIP",
        CompressionArg::Zstd => "ZSTD",
    }
}

/// Polls the job's Describe operation until it is no longer running.
fn wait_for(client: &Client, started: &Value) -> Result<Value, String> {
    let kind = Kind::of_row(started);
    let arn = started[kind.arn].clone();
    let deadline = Instant::now() + Duration::from_secs(3600);
    loop {
        let now = call(client, kind.describe, json!({ kind.arn: arn }))?[kind.description].clone();
        let status = now[kind.status].as_str().unwrap_or_default();
        if !matches!(status, "IN_PROGRESS" | "CANCELLING") || Instant::now() > deadline {
            return Ok(now);
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// A line for people (the job's ARN, status, counts, failure), the
/// description for the JSON formats; a FAILED job fails the command.
fn finish(common: &Common, description: &Value, what: &str) -> CliResult {
    let kind = Kind::of_row(description);
    let status = description[kind.status].as_str().unwrap_or("?");
    let arn = description[kind.arn].as_str().unwrap_or("?");
    if common.output != OutputFormat::Table {
        print_document(description, common.output)?;
    } else {
        let count = |member: &str| description[member].as_u64().unwrap_or(0);
        let counts = match what {
            "export" => format!("{} item(s)", count("ItemCount")),
            "import" => format!(
                "{} imported, {} skipped",
                count("ImportedItemCount"),
                count("ErrorCount")
            ),
            _ => format!(
                "{} processed, {} failed",
                count("ProcessedItemCount"),
                count("FailedItemCount")
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
        (
            "ListBulkOperations",
            "BulkOperationsSummaryList",
            "MaxResults",
        ),
    ] {
        let bulk = operation == "ListBulkOperations";
        let mut request = json!({ size: 25 });
        if let (Some(arn), false) = (&table_arn, bulk) {
            request["TableArn"] = arn.clone();
        }
        loop {
            let page = call(&client, operation, request.clone())?;
            // ListBulkOperations has no table filter: its ARNs start with the table's.
            let of_table = |row: &Value| match (&table_arn, bulk) {
                (Some(arn), true) => (row["BulkOperationArn"].as_str()).is_some_and(|bulk_arn| {
                    bulk_arn.starts_with(&format!("{}/", arn.as_str().unwrap_or_default()))
                }),
                _ => true,
            };
            rows.extend(
                page[member]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|row| of_table(row))
                    .cloned(),
            );
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
        let kind = Kind::of_row(row);
        let status = row[kind.status].clone();
        let arn = row[kind.arn].as_str().unwrap_or_default();
        let kind = match kind.arn {
            "ExportArn" => "export",
            "ImportArn" => "import",
            _ => "bulk put",
        };
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
