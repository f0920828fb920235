//! Stream records of a table for the page, newest first: DescribeTable for
//! the latest stream, DescribeStream for its shards, then GetShardIterator
//! (TRIM_HORIZON) and GetRecords through each shard.

use crate::api::{required, ApiFailure, ApiResult};
use ferrodyn_client::Client;
use serde_json::{json, Value};

/// Most records a request returns (the newest ones).
const DEFAULT_LIMIT: usize = 200;
/// GetRecords calls per shard before giving up on reaching its end.
const MAX_CALLS_PER_SHARD: usize = 100;

/// `{table, limit?}` → `{streamArn, viewType, records: [..]}` newest first.
pub fn records(client: &Client, streams: &Client, request: &Value) -> ApiResult {
    let table = required(request, "table")?;
    let limit = request["limit"]
        .as_u64()
        .map_or(DEFAULT_LIMIT, |n| n as usize);
    let description = client.call("DescribeTable", &json!({ "TableName": table }))?;
    let Some(arn) = description["Table"]["LatestStreamArn"].as_str() else {
        return Ok(json!({ "streamArn": null, "records": [] }));
    };
    let stream = streams.call_streams("DescribeStream", &json!({ "StreamArn": arn }))?;
    let mut records = Vec::new();
    for shard in stream["StreamDescription"]["Shards"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let shard_id = shard["ShardId"]
            .as_str()
            .ok_or_else(|| ApiFailure::invalid("a shard without ShardId"))?;
        let iterator = streams.call_streams(
            "GetShardIterator",
            &json!({ "StreamArn": arn, "ShardId": shard_id, "ShardIteratorType": "TRIM_HORIZON" }),
        )?;
        let mut next = iterator["ShardIterator"].as_str().map(str::to_string);
        for _ in 0..MAX_CALLS_PER_SHARD {
            let Some(it) = next.take() else { break };
            let page = streams
                .call_streams("GetRecords", &json!({ "ShardIterator": it, "Limit": 1000 }))?;
            let batch = page["Records"].as_array().cloned().unwrap_or_default();
            let empty = batch.is_empty();
            records.extend(batch);
            // An open shard always hands out a next iterator; an empty page means we are at its end.
            next = page["NextShardIterator"]
                .as_str()
                .filter(|_| !empty)
                .map(str::to_string);
        }
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
        "viewType": stream["StreamDescription"]["StreamViewType"],
        "records": records,
    }))
}
