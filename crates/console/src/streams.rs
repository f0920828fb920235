//! Stream records of a table for the page, newest first, and the stream's
//! shard tree: DescribeTable for the latest stream, DescribeStream page by
//! page for its shards (a stream has a shard per partition and closed
//! shards with their lineage), then GetShardIterator (TRIM_HORIZON) and
//! GetRecords through each shard.

use crate::api::{required, ApiFailure, ApiResult};
use ferrodyn_client::Client;
use serde_json::{json, Value};

/// Most records a request returns (the newest ones).
const DEFAULT_LIMIT: usize = 200;
/// GetRecords calls per shard before giving up on reaching its end.
const MAX_CALLS_PER_SHARD: usize = 100;
/// Most DescribeStream pages read (100 shards each).
const MAX_SHARD_PAGES: usize = 50;

/// `{table, limit?}` → `{streamArn, viewType, status, records: [..],
/// shards: [{id, parent, start, end, records}]}`, records newest first,
/// shards parents first.
pub fn records(client: &Client, streams: &Client, request: &Value) -> ApiResult {
    let table = required(request, "table")?;
    let limit = request["limit"]
        .as_u64()
        .map_or(DEFAULT_LIMIT, |n| n as usize);
    let description = client.call("DescribeTable", &json!({ "TableName": table }))?;
    let Some(arn) = description["Table"]["LatestStreamArn"].as_str() else {
        return Ok(json!({ "streamArn": null, "records": [], "shards": [] }));
    };
    let (stream, shards) = all_shards(streams, arn)?;
    let mut records = Vec::new();
    let mut tree = Vec::with_capacity(shards.len());
    for shard in &shards {
        let shard_id = shard["ShardId"]
            .as_str()
            .ok_or_else(|| ApiFailure::invalid("a shard without ShardId"))?;
        let read = shard_records(streams, arn, shard_id)?;
        let range = &shard["SequenceNumberRange"];
        tree.push(json!({
            "id": shard_id,
            "parent": shard["ParentShardId"],
            "start": range["StartingSequenceNumber"],
            "end": range["EndingSequenceNumber"],
            "records": read.len(),
        }));
        records.extend(read);
    }
    records.sort_by(|a, b| {
        let seq = |r: &Value| {
            r["dynamodb"]["SequenceNumber"]
                .as_str()
                .unwrap_or("")
                .to_string()
        };
        let (x, y) = (seq(a), seq(b));
        (y.len(), y).cmp(&(x.len(), x))
    });
    records.truncate(limit);
    Ok(json!({
        "streamArn": arn,
        "viewType": stream["StreamViewType"],
        "status": stream["StreamStatus"],
        "records": records,
        "shards": tree,
    }))
}

/// The stream's description and every shard, following
/// LastEvaluatedShardId.
fn all_shards(streams: &Client, arn: &str) -> Result<(Value, Vec<Value>), ApiFailure> {
    let mut shards = Vec::new();
    let mut request = json!({ "StreamArn": arn });
    for _ in 0..MAX_SHARD_PAGES {
        let answer = streams.call_streams("DescribeStream", &request)?;
        let description = answer["StreamDescription"].clone();
        shards.extend(
            description["Shards"]
                .as_array()
                .cloned()
                .unwrap_or_default(),
        );
        match description["LastEvaluatedShardId"].as_str() {
            Some(last) => request["ExclusiveStartShardId"] = json!(last),
            None => return Ok((description, shards)),
        }
    }
    Err(ApiFailure::invalid(
        "the stream lists more than 5,000 shards",
    ))
}

/// Every record of one shard from TRIM_HORIZON: a closed shard to its end,
/// an open one to its first empty page.
fn shard_records(streams: &Client, arn: &str, shard_id: &str) -> Result<Vec<Value>, ApiFailure> {
    let iterator = streams.call_streams(
        "GetShardIterator",
        &json!({ "StreamArn": arn, "ShardId": shard_id, "ShardIteratorType": "TRIM_HORIZON" }),
    )?;
    let mut next = iterator["ShardIterator"].as_str().map(str::to_string);
    let mut records = Vec::new();
    for _ in 0..MAX_CALLS_PER_SHARD {
        let Some(it) = next.take() else { break };
        let page =
            streams.call_streams("GetRecords", &json!({ "ShardIterator": it, "Limit": 1000 }))?;
        let batch = page["Records"].as_array().cloned().unwrap_or_default();
        let empty = batch.is_empty();
        records.extend(batch);
        // An open shard always hands out a next iterator: an empty page
        // means this reader is at its end for now.
        next = page["NextShardIterator"]
            .as_str()
            .filter(|_| !empty)
            .map(str::to_string);
    }
    Ok(records)
}
