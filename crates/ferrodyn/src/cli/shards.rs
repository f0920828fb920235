//! `ferrodyn shards TABLE`: the shard tree of a table's latest stream, as
//! DescribeStream lists it page by page (a shard per partition, closed
//! shards with the children that took over), children indented under their
//! parent. Works against AWS too (through its Streams endpoint).

use super::{CliResult, Common, OutputFormat};
use clap::Args;
use comfy_table::{presets::UTF8_FULL_CONDENSED, Table};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashSet};

/// Most DescribeStream pages read (100 shards each).
const MAX_PAGES: usize = 100;

#[derive(Args)]
#[command(after_help = "Examples:\n  \
    ferrodyn shards orders\n  \
    ferrodyn shards orders -o json\n\n\
    A consumer must read a parent shard to its end before its children to keep\n\
    each item's changes in order (the Kinesis Client Library does).")]
pub struct ShardsArgs {
    /// The table whose latest stream to show.
    table: String,
    #[command(flatten)]
    common: Common,
}

pub fn run(args: ShardsArgs) -> CliResult {
    let client = args.common.connect()?;
    let described = client
        .call("DescribeTable", &json!({ "TableName": args.table }))
        .map_err(|e| e.to_string())?;
    let arn = described["Table"]["LatestStreamArn"]
        .as_str()
        .ok_or_else(|| format!("table {} has no stream", args.table))?;
    let (status, shards) = all_shards(&client, arn)?;
    if args.common.output != OutputFormat::Table {
        let shown = json!({ "StreamArn": arn, "StreamStatus": status, "Shards": shards });
        println!(
            "{}",
            serde_json::to_string_pretty(&shown).expect("plain data always serialises")
        );
        return Ok(());
    }
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED);
    table.set_header(["shard", "state", "first sequence number", "last"]);
    for (depth, shard) in tree_order(&shards) {
        let range = &shard["SequenceNumberRange"];
        let end = range["EndingSequenceNumber"].as_str();
        table.add_row([
            format!(
                "{}{}",
                "  ".repeat(depth),
                shard["ShardId"].as_str().unwrap_or("")
            ),
            if end.is_some() { "closed" } else { "open" }.to_string(),
            range["StartingSequenceNumber"]
                .as_str()
                .unwrap_or("")
                .to_string(),
            end.unwrap_or("").to_string(),
        ]);
    }
    println!("{table}");
    let open = shards
        .iter()
        .filter(|s| s["SequenceNumberRange"]["EndingSequenceNumber"].is_null());
    println!(
        "{arn} ({status}): {} shards, {} open",
        shards.len(),
        open.count()
    );
    Ok(())
}

/// The stream's status and every shard, following LastEvaluatedShardId.
fn all_shards(client: &ferrodyn_client::Client, arn: &str) -> Result<(String, Vec<Value>), String> {
    let mut shards = Vec::new();
    let mut request = json!({ "StreamArn": arn });
    for _ in 0..MAX_PAGES {
        let answer = client
            .call_streams("DescribeStream", &request)
            .map_err(|e| e.to_string())?;
        let description = &answer["StreamDescription"];
        shards.extend(
            description["Shards"]
                .as_array()
                .cloned()
                .unwrap_or_default(),
        );
        match description["LastEvaluatedShardId"].as_str() {
            Some(last) => request["ExclusiveStartShardId"] = json!(last),
            None => {
                let status = description["StreamStatus"]
                    .as_str()
                    .unwrap_or("")
                    .to_string();
                return Ok((status, shards));
            }
        }
    }
    Err(format!("{arn} lists more than {} shards", MAX_PAGES * 100))
}

/// Shards depth-first, each parent before its children, with its depth;
/// a shard whose parent is no longer listed is a root.
fn tree_order(shards: &[Value]) -> Vec<(usize, &Value)> {
    let listed: HashSet<&str> = shards
        .iter()
        .filter_map(|s| s["ShardId"].as_str())
        .collect();
    let mut children: BTreeMap<Option<&str>, Vec<&Value>> = BTreeMap::new();
    for shard in shards {
        let parent = shard["ParentShardId"]
            .as_str()
            .filter(|p| listed.contains(p));
        children.entry(parent).or_default().push(shard);
    }
    let mut out = Vec::with_capacity(shards.len());
    let mut stack: Vec<(usize, &Value)> = children
        .get(&None)
        .into_iter()
        .flatten()
        .rev()
        .map(|s| (0, *s))
        .collect();
    while let Some((depth, shard)) = stack.pop() {
        out.push((depth, shard));
        let below = children
            .get(&shard["ShardId"].as_str())
            .into_iter()
            .flatten()
            .rev();
        stack.extend(below.map(|s| (depth + 1, *s)));
    }
    out
}
