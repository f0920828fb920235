//! `ferrodyn partitions TABLE`: a running Ferrodyn's partitions of a table
//! (GET /ferrodyn/partitions): hash ranges, where each came from, items and
//! bytes, and with `--partition-limits on` their heat and throttles; the
//! global indexes' partition counts. AWS does not expose its partitions.

use super::{CliResult, Common, OutputFormat};
use clap::Args;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
use serde_json::Value;

#[derive(Args)]
#[command(after_help = "Examples:\n  \
    ferrodyn partitions orders\n  \
    ferrodyn partitions orders -o json\n\n\
    Reads GET /ferrodyn/partitions?table=TABLE of a Ferrodyn server.")]
pub struct PartitionsArgs {
    /// The table whose partitions to show.
    table: String,
    #[command(flatten)]
    common: Common,
}

pub fn run(args: PartitionsArgs) -> CliResult {
    if !args
        .table
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
    {
        return Err(format!("not a table name: {}", args.table));
    }
    let client = args.common.connect()?;
    let path = format!("/ferrodyn/partitions?table={}", args.table);
    let report = client.harness("GET", &path, None).map_err(|e| {
        format!(
            "{e} (partitions are shown by Ferrodyn only, at {}{path})",
            client.endpoint()
        )
    })?;
    if args.common.output != OutputFormat::Table {
        let text = serde_json::to_string_pretty(&report).expect("plain data always serialises");
        println!("{text}");
        return Ok(());
    }
    let limits = report["partitionLimits"].as_bool().unwrap_or(false);
    println!("{}", partition_table(&report["partitions"], limits));
    for (name, partitions) in report["indexes"].as_object().into_iter().flatten() {
        let count = partitions.as_array().map_or(0, Vec::len);
        println!("global index {name}: {count} partition(s)");
    }
    let shards = report["shards"].as_array().map_or(0, Vec::len);
    println!(
        "stream shards: {shards} (ferrodyn shards {} draws them)",
        args.table
    );
    Ok(())
}

fn partition_table(partitions: &Value, limits: bool) -> Table {
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED);
    let mut header = vec!["id", "hash range", "from", "items", "bytes"];
    if limits {
        header.extend(["writes/s", "reads/s", "throttles/min"]);
    }
    table.set_header(header);
    let text = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_string);
    for p in partitions.as_array().into_iter().flatten() {
        let from = p["parent"]
            .as_u64()
            .map_or("created".into(), |id| format!("split of {id}"));
        let mut row = vec![
            p["id"].to_string(),
            format!("{}-{}", text(&p["lo"]), text(&p["hi"])),
            from,
            p["items"].to_string(),
            p["bytes"].to_string(),
        ];
        if limits {
            let heat = &p["heat"];
            row.extend([
                heat["writeUnitsLastSecond"].to_string(),
                heat["readUnitsLastSecond"].to_string(),
                heat["throttlesLastMinute"].to_string(),
            ]);
        }
        table.add_row(row);
    }
    table
}
