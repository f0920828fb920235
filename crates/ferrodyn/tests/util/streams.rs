//! DynamoDB Streams read through raw calls (the tests do not link the
//! Streams SDK): one call, and every record of a stream.

use super::raw;

/// One DynamoDB Streams call to `endpoint`, answered with JSON.
pub async fn streams_call(endpoint: &str, op: &str, body: serde_json::Value) -> serde_json::Value {
    let target = format!("DynamoDBStreams_20120810.{op}");
    let headers = [
        ("content-type", raw::CONTENT_TYPE),
        ("x-amz-target", target.as_str()),
        ("x-amz-date", "20261130T000000Z"),
        ("authorization", raw::AUTHORIZATION),
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
    assert_eq!(
        response.status,
        200,
        "{op}: {}",
        String::from_utf8_lossy(&response.body)
    );
    response.json()
}

/// Every record of the stream's shards, read through `endpoint`.
pub async fn stream_records(endpoint: &str, arn: &str) -> Vec<serde_json::Value> {
    let described = streams_call(
        endpoint,
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
        let iterator = streams_call(endpoint, "GetShardIterator", request).await;
        let mut next = iterator["ShardIterator"].clone();
        for _ in 0..20 {
            let Some(it) = next.as_str().map(str::to_string) else {
                break;
            };
            let page = streams_call(
                endpoint,
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
    records
}
