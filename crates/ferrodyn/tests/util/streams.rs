//! DynamoDB Streams read through raw calls (the tests do not link the
//! Streams SDK): one call, and every record of a stream.

use super::raw;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap, HashSet};

/// One DynamoDB Streams call to `endpoint`: (status, answer).
pub async fn try_streams_call(endpoint: &str, op: &str, body: Value) -> (u16, Value) {
    try_streams_call_in(endpoint, "us-east-1", op, body).await
}

/// [`try_streams_call`] signed for `region` (streams are per region).
pub async fn try_streams_call_in(
    endpoint: &str,
    region: &str,
    op: &str,
    body: Value,
) -> (u16, Value) {
    let target = format!("DynamoDBStreams_20120810.{op}");
    let authorization = raw::AUTHORIZATION.replace("/us-east-1/", &format!("/{region}/"));
    let headers = [
        ("content-type", raw::CONTENT_TYPE),
        ("x-amz-target", target.as_str()),
        ("x-amz-date", "20261130T000000Z"),
        ("authorization", authorization.as_str()),
    ];
    let response = raw::send_to(
        endpoint,
        "POST",
        "/",
        &headers,
        body.to_string().into_bytes(),
    )
    .await
    .expect("the server answers");
    (response.status, response.json())
}

/// One DynamoDB Streams call to `endpoint` that must succeed: its answer.
pub async fn streams_call(endpoint: &str, op: &str, body: Value) -> Value {
    streams_call_in(endpoint, "us-east-1", op, body).await
}

async fn streams_call_in(endpoint: &str, region: &str, op: &str, body: Value) -> Value {
    let (status, answer) = try_streams_call_in(endpoint, region, op, body).await;
    assert_eq!(status, 200, "{op}: {answer}");
    answer
}

/// Every record of the stream's shards, read through `endpoint`, in
/// sequence-number order.
pub async fn stream_records(endpoint: &str, arn: &str) -> Vec<serde_json::Value> {
    stream_records_in(endpoint, "us-east-1", arn).await
}

/// [`stream_records`] of a stream of a table in `region`.
pub async fn stream_records_in(endpoint: &str, region: &str, arn: &str) -> Vec<Value> {
    let described = streams_call_in(
        endpoint,
        region,
        "DescribeStream",
        serde_json::json!({ "StreamArn": arn }),
    )
    .await;
    let mut records = Vec::new();
    for shard in described["StreamDescription"]["Shards"].as_array().unwrap() {
        let request = serde_json::json!({
            "StreamArn": arn,
            "ShardId": shard["ShardId"],
            "ShardIteratorType": "TRIM_HORIZON",
        });
        let iterator = streams_call_in(endpoint, region, "GetShardIterator", request).await;
        let mut next = iterator["ShardIterator"].clone();
        for _ in 0..20 {
            let Some(it) = next.as_str().map(str::to_string) else {
                break;
            };
            let page = streams_call_in(
                endpoint,
                region,
                "GetRecords",
                serde_json::json!({ "ShardIterator": it, "Limit": 1000 }),
            )
            .await;
            let got = page["Records"].as_array().unwrap().clone();
            if got.is_empty() {
                break;
            }
            records.extend(got);
            next = page["NextShardIterator"].clone();
        }
    }
    // In commit order across the shards (a stream has one per partition).
    records.sort_by(|a, b| {
        let seq =
            |r: &serde_json::Value| r["dynamodb"]["SequenceNumber"].as_str().map(str::to_string);
        seq(a).cmp(&seq(b))
    });
    records
}

/// Every shard of the stream, listed `page` at a time; checks what must
/// hold of any listing while the stream is enabled.
pub async fn list_shards(endpoint: &str, arn: &str, page: usize) -> Vec<Value> {
    let mut shards: Vec<Value> = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let mut request = json!({ "StreamArn": arn, "Limit": page });
        if let Some(id) = &after {
            request["ExclusiveStartShardId"] = json!(id);
        }
        let answer = streams_call(endpoint, "DescribeStream", request).await;
        let description = &answer["StreamDescription"];
        let got = description["Shards"].as_array().unwrap().clone();
        assert!(got.len() <= page, "Limit {page} gave {}", got.len());
        shards.extend(got);
        match description["LastEvaluatedShardId"].as_str() {
            Some(last) => after = Some(last.to_string()),
            None => break,
        }
    }
    check_listing(&shards);
    shards
}

/// Ids in DynamoDB's shape, once each; parents listed before children;
/// every closed shard already has its children (the KCL fails on a closed
/// shard without them).
fn check_listing(shards: &[Value]) {
    let mut seen = HashSet::new();
    for shard in shards {
        let id = shard["ShardId"].as_str().unwrap();
        assert!(is_shard_id(id), "shard id {id}");
        assert!(seen.insert(id.to_string()), "{id} listed twice");
        if let Some(parent) = shard["ParentShardId"].as_str() {
            // A parent still listed comes first.
            let listed = shards.iter().any(|s| s["ShardId"] == parent);
            assert!(
                !listed || seen.contains(parent),
                "{id} listed before its parent {parent}"
            );
        }
    }
    for shard in shards {
        if shard["SequenceNumberRange"]["EndingSequenceNumber"].is_string() {
            let id = &shard["ShardId"];
            let children = shards.iter().filter(|s| &s["ParentShardId"] == id).count();
            assert!(
                children >= 1,
                "closed shard {id} listed without its children"
            );
        }
    }
}

fn is_shard_id(id: &str) -> bool {
    let Some(rest) = id.strip_prefix("shardId-") else {
        return false;
    };
    let (digits, hex) = rest.split_at(20.min(rest.len()));
    digits.len() == 20
        && digits.bytes().all(|b| b.is_ascii_digit())
        && hex.len() == 9
        && hex.starts_with('-')
        && hex[1..]
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

/// A consumer as the KCL runs one (items keyed `pk` with a number `v`, in
/// NEW_IMAGE or NEW_AND_OLD_IMAGES records): shards it finished, checkpoints of the
/// ones it is reading, and what it read per item.
#[derive(Default)]
pub struct ShardConsumer {
    /// The items' partition-key attribute (`pk` unless told).
    key: Option<String>,
    pub finished: HashSet<String>,
    checkpoints: HashMap<String, String>,
    /// Where reading an unfinished shard goes on.
    iterators: HashMap<String, String>,
    /// Per item, the values of `v` in the order read.
    pub read: BTreeMap<String, Vec<i64>>,
    /// Closed shards and how many children each had.
    pub children: HashMap<String, usize>,
    /// Records read per shard, and each listed shard's parent.
    counts: HashMap<String, usize>,
    parents: HashMap<String, Option<String>>,
}

impl ShardConsumer {
    /// A consumer of items keyed by `key`.
    pub fn with_key(key: &str) -> ShardConsumer {
        ShardConsumer {
            key: Some(key.to_string()),
            ..ShardConsumer::default()
        }
    }

    /// One pass: every shard whose parent is finished (or gone) is read up
    /// to its end (closed) or to its first empty page (open).
    pub async fn pass(&mut self, endpoint: &str, arn: &str) {
        let shards = list_shards(endpoint, arn, 3).await;
        let ids: HashSet<&str> = shards
            .iter()
            .map(|s| s["ShardId"].as_str().unwrap())
            .collect();
        for shard in &shards {
            let parent = shard["ParentShardId"].as_str().map(str::to_string);
            self.parents
                .insert(shard["ShardId"].as_str().unwrap().to_string(), parent);
        }
        for shard in &shards {
            let id = shard["ShardId"].as_str().unwrap().to_string();
            if self.finished.contains(&id) {
                continue;
            }
            let parent = shard["ParentShardId"].as_str();
            if parent.is_some_and(|p| ids.contains(p) && !self.finished.contains(p)) {
                continue; // parents first
            }
            if self.read_shard(endpoint, arn, &id).await {
                self.finished.insert(id.clone());
                self.record_children(endpoint, arn, &id).await;
            }
        }
    }

    /// Reads shard `id` on from where this consumer is (its next iterator,
    /// else its checkpoint, else TRIM_HORIZON); true once it is closed and
    /// read to its end.
    async fn read_shard(&mut self, endpoint: &str, arn: &str, id: &str) -> bool {
        let mut iterator = match self.iterators.remove(id) {
            Some(held) => Some(held),
            None => {
                let mut request =
                    json!({ "StreamArn": arn, "ShardId": id, "ShardIteratorType": "TRIM_HORIZON" });
                if let Some(seq) = self.checkpoints.get(id) {
                    request["ShardIteratorType"] = json!("AFTER_SEQUENCE_NUMBER");
                    request["SequenceNumber"] = json!(seq);
                }
                let answer = streams_call(endpoint, "GetShardIterator", request).await;
                answer["ShardIterator"].as_str().map(str::to_string)
            }
        };
        while let Some(current) = iterator {
            let page =
                streams_call(endpoint, "GetRecords", json!({ "ShardIterator": current })).await;
            let records = page["Records"].as_array().unwrap();
            for record in records {
                let image = &record["dynamodb"]["NewImage"];
                let item = image[self.key.as_deref().unwrap_or("pk")]["S"]
                    .as_str()
                    .unwrap()
                    .to_string();
                let v: i64 = image["v"]["N"].as_str().unwrap().parse().unwrap();
                self.read.entry(item).or_default().push(v);
                *self.counts.entry(id.to_string()).or_default() += 1;
                let seq = record["dynamodb"]["SequenceNumber"].as_str().unwrap();
                self.checkpoints.insert(id.to_string(), seq.to_string());
            }
            iterator = page["NextShardIterator"].as_str().map(str::to_string);
            if let Some(next) = iterator.as_ref().filter(|_| records.is_empty()) {
                // Nothing more for now (an open shard): go on from here later.
                self.iterators.insert(id.to_string(), next.clone());
                return false;
            }
        }
        true
    }

    /// Records read in the lineage of each first shard (one per partition
    /// the table started with).
    pub fn records_under_roots(&self) -> Vec<usize> {
        let root = |id: &String| {
            let mut id = id.clone();
            while let Some(Some(parent)) = self.parents.get(&id) {
                id = parent.clone();
            }
            id
        };
        let mut totals: BTreeMap<String, usize> = BTreeMap::new();
        for id in self.parents.keys().filter(|id| self.parents[*id].is_none()) {
            totals.insert(id.clone(), 0);
        }
        for (id, count) in &self.counts {
            *totals.entry(root(id)).or_default() += count;
        }
        totals.into_values().collect()
    }

    /// A finished shard's children, found as the KCL finds them.
    async fn record_children(&mut self, endpoint: &str, arn: &str, id: &str) {
        let filter = json!({ "Type": "CHILD_SHARDS", "ShardId": id });
        let answer = streams_call(
            endpoint,
            "DescribeStream",
            json!({ "StreamArn": arn, "ShardFilter": filter }),
        )
        .await;
        let children = answer["StreamDescription"]["Shards"].as_array().unwrap();
        for child in children {
            assert_eq!(child["ParentShardId"], id);
        }
        self.children.insert(id.to_string(), children.len());
    }
}
