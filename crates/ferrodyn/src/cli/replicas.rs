//! `ferrodyn replicas TABLE`: a global table as one region sees it. The
//! table's region, GlobalTableVersion, MultiRegionConsistency and
//! witnesses come from DescribeTable; per replica region, the status, the
//! replication latency (last, p50, p99), the age of the oldest change not
//! yet applied there, changes sent, fill progress and the last error come
//! from a running Ferrodyn's `GET /ferrodyn/replication?table=TABLE` (what
//! AWS keeps in CloudWatch as ReplicationLatency). `--add` and `--remove`
//! call UpdateTable's ReplicaUpdates and show the table after.

use super::{CliResult, Common, OutputFormat};
use clap::Args;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
use ferrodyn_client::Client;
use serde_json::{json, Map, Value};
use std::time::{Duration, Instant};

/// How long `--wait` waits for replicas to settle.
const WAIT_LIMIT: Duration = Duration::from_secs(120);

#[derive(Args)]
#[command(after_help = "Examples:\n  \
    ferrodyn replicas orders\n  \
    ferrodyn replicas orders --add us-west-2 --wait\n  \
    ferrodyn replicas orders --remove us-west-2\n  \
    ferrodyn replicas orders --add us-west-2 --add eu-west-1 --strong\n  \
    ferrodyn replicas orders --add us-west-2 --witness eu-west-1 --strong\n  \
    ferrodyn replicas orders -o json\n\n\
    A region is one this server holds, or one another Ferrodyn server holds\n\
    (`ferrodyn serve --peer REGION=URL`). Latency figures are Ferrodyn's\n\
    (GET /ferrodyn/replication); against AWS only DescribeTable's part shows.")]
pub struct ReplicasArgs {
    /// The table (in the region of --region).
    table: String,
    /// Create a replica in REGION (UpdateTable ReplicaUpdates Create);
    /// repeat it with --strong to form a multi-Region strong group.
    #[arg(long, value_name = "REGION", conflicts_with = "remove")]
    add: Vec<String>,
    /// Delete the replica in REGION (UpdateTable ReplicaUpdates Delete).
    #[arg(long, value_name = "REGION")]
    remove: Option<String>,
    /// With --add: MultiRegionConsistency STRONG (three regions: two
    /// --add, or one --add and a --witness).
    #[arg(long, requires = "add")]
    strong: bool,
    /// With --strong: a witness region (GlobalTableWitnessUpdates Create).
    #[arg(long, value_name = "REGION", requires = "strong")]
    witness: Option<String>,
    /// After --add or --remove, wait until every replica is ACTIVE and a
    /// removed one is gone.
    #[arg(long)]
    wait: bool,
    #[command(flatten)]
    common: Common,
}

pub fn run(args: ReplicasArgs) -> CliResult {
    let client = args.common.connect()?;
    if let Some(request) = update_request(&args) {
        let answer = client
            .call("UpdateTable", &request)
            .map_err(|e| e.to_string())?;
        if args.common.output == OutputFormat::Table {
            println!("{}", describe_change(&args, &answer["TableDescription"]));
        }
        if args.wait {
            wait_until_settled(&client, &args.table, args.remove.as_deref())?;
        }
    }
    let view = replication_view(&client, &args.table)?;
    if args.common.output != OutputFormat::Table {
        let text = serde_json::to_string_pretty(&view).expect("plain data always serialises");
        println!("{text}");
        return Ok(());
    }
    print_view(&args.table, &view);
    Ok(())
}

/// The UpdateTable request `--add`/`--remove` ask for, if any.
fn update_request(args: &ReplicasArgs) -> Option<Value> {
    let updates: Vec<Value> = match &args.remove {
        Some(region) => vec![json!({ "Delete": { "RegionName": region } })],
        None => (args.add.iter())
            .map(|region| json!({ "Create": { "RegionName": region } }))
            .collect(),
    };
    if updates.is_empty() {
        return None;
    }
    let mut request = json!({ "TableName": args.table, "ReplicaUpdates": updates });
    if args.strong {
        request["MultiRegionConsistency"] = json!("STRONG");
    }
    if let Some(witness) = &args.witness {
        request["GlobalTableWitnessUpdates"] = json!([{ "Create": { "RegionName": witness } }]);
    }
    Some(request)
}

/// One line saying what UpdateTable did, from the description it returned.
fn describe_change(args: &ReplicasArgs, description: &Value) -> String {
    let status_of = |region: &str| {
        (description["Replicas"].as_array().into_iter().flatten())
            .find(|r| r["RegionName"] == region)
            .and_then(|r| r["ReplicaStatus"].as_str())
            .unwrap_or("gone")
            .to_string()
    };
    match &args.remove {
        Some(region) => match status_of(region).as_str() {
            "gone" => format!("removed replica {region}"),
            status => format!("removing replica {region}: {status}"),
        },
        None => (args.add.iter())
            .map(|region| format!("added replica {region}: {}", status_of(region)))
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// Polls DescribeTable until no replica is CREATING, UPDATING or DELETING
/// and `removed` (if any) is no longer listed.
fn wait_until_settled(client: &Client, table: &str, removed: Option<&str>) -> CliResult {
    let started = Instant::now();
    loop {
        let description = describe(client, table)?;
        let replicas = description["Replicas"].as_array().cloned();
        let replicas = replicas.unwrap_or_default();
        let settled = replicas.iter().all(|r| r["ReplicaStatus"] == "ACTIVE")
            && removed.is_none_or(|gone| replicas.iter().all(|r| r["RegionName"] != gone));
        if settled {
            return Ok(());
        }
        if started.elapsed() > WAIT_LIMIT {
            return Err(format!(
                "replicas of {table} still not settled after {}s",
                WAIT_LIMIT.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn describe(client: &Client, table: &str) -> Result<Value, String> {
    let answer = client
        .call("DescribeTable", &json!({ "TableName": table }))
        .map_err(|e| e.to_string())?;
    Ok(answer["Table"].clone())
}

/// DescribeTable's global-table members with Ferrodyn's replication
/// report beside them (`Replication`, null where the endpoint has none:
/// AWS, or an older Ferrodyn).
fn replication_view(client: &Client, table: &str) -> Result<Value, String> {
    let description = describe(client, table)?;
    let path = format!("/ferrodyn/replication?table={}", encode(table));
    let report = match client.harness("GET", &path, None) {
        Ok(report) => report,
        Err(e) => {
            eprintln!("warning: no replication report ({e}; it is Ferrodyn's, at {path})");
            Value::Null
        }
    };
    let mut view = Map::new();
    view.insert("TableName".into(), json!(table));
    view.insert("RegionName".into(), json!(client.region()));
    for member in [
        "GlobalTableVersion",
        "MultiRegionConsistency",
        "Replicas",
        "GlobalTableWitnesses",
    ] {
        view.insert(member.into(), description[member].clone());
    }
    if let Some(region) = report["RegionName"].as_str() {
        view.insert("RegionName".into(), json!(region));
    }
    view.insert("Replication".into(), report["Targets"].clone());
    for member in ["DeliveredThroughMicros", "TombstonesReclaimed"] {
        view.insert(member.into(), report[member].clone());
    }
    Ok(Value::Object(view))
}

/// A table name as a query-string value.
fn encode(name: &str) -> String {
    name.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'_' | b'.' | b'-' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn print_view(table: &str, view: &Value) {
    let region = view["RegionName"].as_str().unwrap_or("?");
    let Some(version) = view["GlobalTableVersion"].as_str() else {
        println!("{table} ({region}) is not a global table: it has no replicas");
        println!("add one with: ferrodyn replicas {table} --add REGION");
        return;
    };
    let mode = view["MultiRegionConsistency"]
        .as_str()
        .unwrap_or("EVENTUAL");
    println!("{table} in {region}: global table version {version}, {mode} consistency");
    println!("{}", replica_table(view));
    for witness in view["GlobalTableWitnesses"]
        .as_array()
        .into_iter()
        .flatten()
    {
        println!(
            "witness {}: {}",
            text(&witness["RegionName"]),
            text(&witness["WitnessStatus"])
        );
    }
    if let Some(reclaimed) = view["TombstonesReclaimed"].as_u64() {
        let waiting: Vec<&String> = (view["DeliveredThroughMicros"].as_object().into_iter())
            .flat_map(|reports| reports.iter())
            .filter(|(_, through)| through.is_null())
            .map(|(region, _)| region)
            .collect();
        match waiting.is_empty() {
            true => println!("tombstones reclaimed since the server started: {reclaimed}"),
            false => println!(
                "tombstones reclaimed since the server started: {reclaimed} \
                 (kept until a delivery report from {waiting:?})"
            ),
        }
    }
}

fn replica_table(view: &Value) -> Table {
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED);
    table.set_header([
        "region",
        "status",
        "latency ms (last/p50/p99)",
        "pending age ms",
        "changes sent",
        "fill",
        "last error",
    ]);
    let targets = view["Replication"].as_array().cloned().unwrap_or_default();
    for replica in view["Replicas"].as_array().into_iter().flatten() {
        let region = &replica["RegionName"];
        let target = (targets.iter())
            .find(|t| t["RegionName"] == *region)
            .unwrap_or(&Value::Null);
        let status = text(&replica["ReplicaStatus"]);
        table.add_row([
            text(region),
            status.clone(),
            latency(&target["ReplicationLatencyMs"]),
            text(&target["PendingAgeMs"]),
            text(&target["ChangesSent"]),
            fill(target, &status),
            last_error(target),
        ]);
    }
    table
}

/// "last/p50/p99", or "-" before the first batch was applied.
fn latency(figures: &Value) -> String {
    if figures["Samples"].as_u64().unwrap_or(0) == 0 {
        return "-".into();
    }
    ["Last", "P50", "P99"].map(|q| text(&figures[q])).join("/")
}

/// The fill of a new replica: items sent so far, or done.
fn fill(target: &Value, status: &str) -> String {
    match target["FillItemsSent"].as_u64() {
        Some(items) => format!("{items} items sent"),
        None if target.is_null() => String::new(),
        None if status == "ACTIVE" => "done".into(),
        None => String::new(),
    }
}

/// The last delivery error (prefixed while sends fail), and the setting
/// changes waiting for the region.
fn last_error(target: &Value) -> String {
    let error = text(&target["LastError"]);
    let error = match target["Failing"] == true {
        true => format!("failing: {error}"),
        false => error,
    };
    match target["SettingsWaiting"].as_u64().unwrap_or(0) {
        0 => error,
        waiting => {
            let plural = if waiting == 1 { "" } else { "s" };
            let note = format!("{waiting} setting change{plural} waiting");
            [error, note]
                .into_iter()
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
                .join("; ")
        }
    }
}

fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_error_cell_names_waiting_setting_changes() {
        let failing = json!({"LastError": "unreachable", "Failing": true, "SettingsWaiting": 2});
        assert_eq!(
            last_error(&failing),
            "failing: unreachable; 2 setting changes waiting"
        );
        let quiet = json!({"LastError": null, "Failing": false, "SettingsWaiting": 1});
        assert_eq!(last_error(&quiet), "1 setting change waiting");
        assert_eq!(
            last_error(&json!({"LastError": "old", "SettingsWaiting": 0})),
            "old"
        );
    }
}
