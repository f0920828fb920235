//! `ferrodyn destinations TABLE`: a table's Kinesis streaming destinations
//! as a running Ferrodyn sees them (`GET /ferrodyn/destinations/TABLE`):
//! the status DescribeKinesisStreamingDestination shows, and what AWS keeps
//! in CloudWatch instead (the last delivery error, the age of the oldest
//! record not delivered, throttled and skipped records) and the records
//! delivered.

use super::{CliResult, Common, OutputFormat};
use clap::Args;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
use serde_json::Value;

#[derive(Args)]
#[command(after_help = "Examples:\n  \
    ferrodyn destinations orders\n  \
    ferrodyn destinations orders -o json\n\n\
    AWS keeps a destination whose stream is down ACTIVE; this report says why\n\
    nothing arrives (Ferrodyn only: on AWS see CloudWatch's\n\
    AgeOfOldestUnreplicatedRecord).")]
pub struct DestinationsArgs {
    /// The table.
    table: String,
    #[command(flatten)]
    common: Common,
}

pub fn run(args: DestinationsArgs) -> CliResult {
    let client = args.common.connect()?;
    let path = format!("/ferrodyn/destinations/{}", args.table);
    let report = client.harness("GET", &path, None).map_err(|e| {
        format!(
            "{e} (the destinations report is Ferrodyn's, at {}{path})",
            client.endpoint()
        )
    })?;
    if args.common.output != OutputFormat::Table {
        let text = serde_json::to_string_pretty(&report).expect("plain data always serialises");
        println!("{text}");
        return Ok(());
    }
    let rows = report["Destinations"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if rows.is_empty() {
        println!("{} has no Kinesis streaming destination", args.table);
        return Ok(());
    }
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED);
    table.set_header([
        "stream",
        "status",
        "delivered",
        "oldest waiting (ms)",
        "throttled",
        "skipped",
        "last error",
    ]);
    let text = |value: &Value| match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    for row in &rows {
        table.add_row([
            text(&row["StreamArn"]),
            text(&row["DestinationStatus"]),
            text(&row["DeliveredRecordCount"]),
            text(&row["AgeOfOldestUnreplicatedRecord"]),
            text(&row["ThrottledPutRecordCount"]),
            text(&row["FailedToReplicateRecordCount"]),
            text(&row["LastError"]),
        ]);
    }
    println!("{table}");
    Ok(())
}
