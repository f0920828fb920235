//! `ferrodyn usage`: the capacity a running Ferrodyn has seen consumed since
//! it started, per table and operation, priced with the on-demand price table
//! of `ferrodyn cost` — what the same workload would cost on DynamoDB.

use super::{CliResult, Common, OutputFormat};
use clap::Args;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
use ferrodyn_patterns::cost::Prices;
use serde_json::Value;
use std::path::PathBuf;

#[derive(Args)]
#[command(after_help = "Examples:\n  \
    ferrodyn usage\n  \
    ferrodyn usage --prices eu-west-1.toml -o json\n\n\
    Reads GET /ferrodyn/usage of a Ferrodyn server (AWS DynamoDB has no such report:\n\
    there, see CloudWatch's ConsumedReadCapacityUnits / ConsumedWriteCapacityUnits).")]
pub struct UsageArgs {
    /// A price table (TOML, as `ferrodyn cost --show-prices` prints) instead
    /// of the built-in us-east-1 on-demand prices.
    #[arg(long, value_name = "FILE")]
    prices: Option<PathBuf>,
    #[command(flatten)]
    common: Common,
}

pub fn run(args: UsageArgs) -> CliResult {
    let prices = match &args.prices {
        Some(path) => Prices::load(path)?,
        None => Prices::builtin(),
    };
    let client = args.common.connect()?;
    let report = client.get_json("/ferrodyn/usage").map_err(|e| {
        format!(
            "{e} (the usage report is served by Ferrodyn only, at {}/ferrodyn/usage)",
            client.endpoint()
        )
    })?;
    let rows = report
        .get("Consumed")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let cost = |read: f64, write: f64| {
        read / 1e6 * prices.on_demand.read_per_million
            + write / 1e6 * prices.on_demand.write_per_million
    };
    if args.common.output != OutputFormat::Table {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).expect("plain data always serialises")
        );
        return Ok(());
    }
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED);
    table.set_header([
        "table",
        "operation",
        "read units",
        "write units",
        &format!("on-demand {}", prices.currency),
    ]);
    let (mut total_read, mut total_write) = (0.0, 0.0);
    for row in &rows {
        let read = row["ReadCapacityUnits"].as_f64().unwrap_or(0.0);
        let write = row["WriteCapacityUnits"].as_f64().unwrap_or(0.0);
        total_read += read;
        total_write += write;
        table.add_row([
            row["TableName"].as_str().unwrap_or("").to_string(),
            row["Operation"].as_str().unwrap_or("").to_string(),
            format!("{read:.1}"),
            format!("{write:.1}"),
            format!("{:.6}", cost(read, write)),
        ]);
    }
    table.add_row([
        "total".to_string(),
        String::new(),
        format!("{total_read:.1}"),
        format!("{total_write:.1}"),
        format!("{:.6}", cost(total_read, total_write)),
    ]);
    println!("{table}");
    if let Some(requests) = report.get("Requests").and_then(Value::as_object) {
        let served: Vec<String> = requests.iter().map(|(op, n)| format!("{op} {n}")).collect();
        eprintln!("requests since start: {}", served.join(", "));
    }
    eprintln!(
        "prices: {} on-demand ({}), per million request units: read {}, write {}",
        prices.region,
        prices.as_of,
        prices.on_demand.read_per_million,
        prices.on_demand.write_per_million
    );
    Ok(())
}
