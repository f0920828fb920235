//! `ferrodyn insights TABLE [--index I] [--minutes N]`: a table's (or a
//! global index's) Contributor Insights status and the ten most accessed
//! and most throttled keys of each rule over the last minutes, from a
//! running Ferrodyn (GET /ferrodyn/insights; on AWS these are CloudWatch
//! graphs). Turn the rules on with UpdateContributorInsights, or
//! `--enable` here.

use super::{CliResult, Common, OutputFormat};
use clap::Args;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
use serde_json::{json, Value};

#[derive(Args)]
#[command(after_help = "Examples:\n  \
    ferrodyn insights orders --enable\n  \
    ferrodyn insights orders --minutes 5\n  \
    ferrodyn insights orders --index by-email -o json")]
pub struct InsightsArgs {
    /// The table.
    table: String,
    /// A global secondary index of the table instead.
    #[arg(long)]
    index: Option<String>,
    /// Minutes to sum (1 to 60).
    #[arg(long, default_value_t = 60)]
    minutes: u64,
    /// Turn Contributor Insights on first (UpdateContributorInsights ENABLE).
    #[arg(long)]
    enable: bool,
    #[command(flatten)]
    common: Common,
}

pub fn run(args: InsightsArgs) -> CliResult {
    let valid = |name: &str| {
        name.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
    };
    if !valid(&args.table) || !args.index.as_deref().is_none_or(valid) {
        return Err("table and index names use letters, digits, '_', '-' and '.'".into());
    }
    let client = args.common.connect()?;
    if args.enable {
        let mut request = json!({ "TableName": args.table, "ContributorInsightsAction": "ENABLE" });
        if let Some(index) = &args.index {
            request["IndexName"] = json!(index);
        }
        client
            .call("UpdateContributorInsights", &request)
            .map_err(|e| e.to_string())?;
    }
    let mut path = format!(
        "/ferrodyn/insights?table={}&minutes={}",
        args.table, args.minutes
    );
    if let Some(index) = &args.index {
        path.push_str(&format!("&index={index}"));
    }
    let report = client.harness("GET", &path, None).map_err(|e| {
        format!(
            "{e} (the key counts are served by Ferrodyn only, at {}{path})",
            client.endpoint()
        )
    })?;
    if args.common.output != OutputFormat::Table {
        let text = serde_json::to_string_pretty(&report).expect("plain data always serialises");
        println!("{text}");
        return Ok(());
    }
    println!(
        "{} {} (last {} minutes)",
        report["status"].as_str().unwrap_or(""),
        report["mode"].as_str().unwrap_or(""),
        args.minutes
    );
    for rule in report["rules"].as_array().into_iter().flatten() {
        println!("{}", rule_table(rule));
    }
    Ok(())
}

/// One rule's top keys: rank, key, value.
fn rule_table(rule: &Value) -> Table {
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED);
    let kind = rule["rule"].as_str().unwrap_or("");
    let what = match kind {
        "PKC" => "most accessed partition keys (units)",
        "SKC" => "most accessed items (units)",
        "PKT" => "most throttled partition keys (requests)",
        _ => "most throttled items (requests)",
    };
    table.set_header([format!("{kind}: {what}"), "value".to_string()]);
    for entry in rule["top"].as_array().into_iter().flatten() {
        let key: Vec<&str> = entry["key"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        table.add_row([key.join(" / "), entry["value"].to_string()]);
    }
    table
}
