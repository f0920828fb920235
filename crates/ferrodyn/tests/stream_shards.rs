//! Stream shards that follow partitions, read the way the Kinesis Client
//! Library reads them: shards listed page by page, a parent finished before
//! its children, children found with ShardFilter CHILD_SHARDS, positions
//! kept as AFTER_SEQUENCE_NUMBER checkpoints. Shards roll over (a shortened
//! `--stream-shard-lifetime` and the manual clock) and split (a small
//! `--partition-split-size`) while writers update items; every acknowledged
//! change must be read exactly once, in order per item. Also: DescribeStream
//! paging and filters, iterator expiry, trimming after 24 hours,
//! AT_TIMESTAMP and the 1 MB page.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use aws_sdk_dynamodb::types::{
    AttributeDefinition, BillingMode, KeySchemaElement, KeyType, ScalarAttributeType,
    StreamSpecification, StreamViewType,
};
use aws_sdk_dynamodb::Client;
use serde_json::{json, Value};

use crate::util::process::ServerProcess;
use crate::util::raw;
use crate::util::streams::{
    list_shards, streams_call, try_streams_call, ShardConsumer as Consumer,
};
use crate::util::{self, n, s};

/// Moves the server's manual clock (which also runs the shard upkeep).
async fn advance(server: &ServerProcess, by: &str) {
    let mover = ClockMover {
        endpoint: server.endpoint().to_string(),
    };
    mover.advance(by).await;
}

/// An on-demand table keyed by `pk` (S) with a NEW_IMAGE stream: its ARN.
async fn streamed_table(client: &Client, name: &str) -> String {
    let created = client
        .create_table()
        .table_name(name)
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(
            KeySchemaElement::builder()
                .attribute_name("pk")
                .key_type(KeyType::Hash)
                .build()
                .unwrap(),
        )
        .attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name("pk")
                .attribute_type(ScalarAttributeType::S)
                .build()
                .unwrap(),
        )
        .stream_specification(
            StreamSpecification::builder()
                .stream_enabled(true)
                .stream_view_type(StreamViewType::NewImage)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    created
        .table_description()
        .unwrap()
        .latest_stream_arn()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn sixteen_writers_through_rollovers_and_splits_are_read_once_in_order() {
    let _heavy = util::heavy_test().await;
    let (server, client) = util::own_server(&[
        "--clock",
        "manual",
        "--stream-shard-lifetime",
        "2",
        "--partition-split-size",
        "65536",
        "--on-demand-partitions",
        "2",
    ]);
    let arn = streamed_table(&client, "lineage").await;
    const ITEMS: usize = 640;
    const ROUNDS: i64 = 6;
    let writing = Arc::new(AtomicBool::new(true));
    let mut writers = Vec::new();
    for writer in 0..16 {
        let client = client.clone();
        writers.push(tokio::spawn(async move {
            for round in 0..ROUNDS {
                for item in (writer..ITEMS).step_by(16) {
                    client
                        .put_item()
                        .table_name("lineage")
                        .item("pk", s(&format!("item-{item:04}")))
                        .item("v", n(&round.to_string()))
                        .item("pad", s(&"x".repeat(300)))
                        .send()
                        .await
                        .unwrap();
                }
            }
        }));
    }
    let clock = {
        let (writing, endpoint) = (Arc::clone(&writing), server.endpoint().to_string());
        tokio::spawn(async move {
            let server_clock = ClockMover { endpoint };
            while writing.load(Ordering::SeqCst) {
                server_clock.advance("3s").await;
                tokio::time::sleep(Duration::from_millis(400)).await;
            }
        })
    };
    let mut consumer = Consumer::default();
    while !writers.iter().all(|w| w.is_finished()) {
        consumer.pass(server.endpoint(), &arn).await;
    }
    for writer in writers {
        writer.await.unwrap();
    }
    writing.store(false, Ordering::SeqCst);
    clock.await.unwrap();
    // Every shard open now closes (one more rollover), then all is read.
    advance(&server, "3s").await;
    for _ in 0..20 {
        consumer.pass(server.endpoint(), &arn).await;
    }
    assert_eq!(consumer.read.len(), ITEMS, "every item's changes were read");
    for (item, values) in &consumer.read {
        let expected: Vec<i64> = (0..ROUNDS).collect();
        assert_eq!(values, &expected, "{item}: every change once, in order");
    }
    // Items spread over the partitions: each first shard's lineage holds
    // about half of the changes.
    let roots = consumer.records_under_roots();
    assert_eq!(roots.len(), 2, "{roots:?}");
    assert!(
        roots.iter().all(|&n| n > ITEMS * ROUNDS as usize / 4),
        "{roots:?}"
    );
    let splits = consumer.children.values().filter(|&&c| c == 2).count();
    let rollovers = consumer.children.values().filter(|&&c| c == 1).count();
    assert!(splits >= 2, "partitions split: {:?}", consumer.children);
    assert!(
        rollovers >= 2,
        "shards rolled over: {:?}",
        consumer.children
    );
}

/// Moves the manual clock from a task of its own.
struct ClockMover {
    endpoint: String,
}

impl ClockMover {
    async fn advance(&self, by: &str) {
        let headers = [("authorization", raw::AUTHORIZATION)];
        let body = json!({ "advance": by }).to_string().into_bytes();
        let response = raw::send_to(&self.endpoint, "POST", "/ferrodyn/clock", &headers, body)
            .await
            .expect("the server answers");
        assert_eq!(response.status, 200);
    }
}

#[tokio::test]
async fn describe_stream_pages_filters_children_and_checks_its_input() {
    let (server, client) =
        util::own_server(&["--clock", "manual", "--stream-shard-lifetime", "60"]);
    let arn = streamed_table(&client, "pages").await;
    let endpoint = server.endpoint();
    let first = list_shards(endpoint, &arn, 100).await;
    assert_eq!(
        first.len(),
        4,
        "a new on-demand table has four partitions, one shard each"
    );
    for shard in &first {
        assert!(shard.get("ParentShardId").is_none());
        assert!(shard["SequenceNumberRange"]
            .get("EndingSequenceNumber")
            .is_none());
    }
    // Two lifetimes: each shard has a child and a grandchild.
    advance(&server, "61s").await;
    advance(&server, "61s").await;
    let all = list_shards(endpoint, &arn, 100).await;
    assert_eq!(all.len(), 12);
    assert_eq!(
        list_shards(endpoint, &arn, 5).await,
        all,
        "pages of 5 list the same shards"
    );
    let open: Vec<&Value> = all
        .iter()
        .filter(|s| {
            s["SequenceNumberRange"]
                .get("EndingSequenceNumber")
                .is_none()
        })
        .collect();
    assert_eq!(open.len(), 4, "one open shard per partition");
    let parent = first[0]["ShardId"].as_str().unwrap();
    let filter = json!({ "Type": "CHILD_SHARDS", "ShardId": parent });
    let children = streams_call(
        endpoint,
        "DescribeStream",
        json!({ "StreamArn": arn, "ShardFilter": filter }),
    )
    .await;
    let children = children["StreamDescription"]["Shards"]
        .as_array()
        .unwrap()
        .clone();
    assert_eq!(children.len(), 1);
    assert_eq!(children[0]["ParentShardId"], parent);
    let ending = &first[0]["SequenceNumberRange"]["StartingSequenceNumber"];
    let closed = all.iter().find(|s| s["ShardId"] == parent).unwrap();
    assert!(
        closed["SequenceNumberRange"]["EndingSequenceNumber"]
            .as_str()
            .unwrap()
            >= ending.as_str().unwrap()
    );
    let last_page = streams_call(
        endpoint,
        "DescribeStream",
        json!({ "StreamArn": arn, "ExclusiveStartShardId": all[10]["ShardId"] }),
    )
    .await;
    let last_page = &last_page["StreamDescription"];
    assert_eq!(last_page["Shards"].as_array().unwrap().len(), 1);
    assert!(
        last_page.get("LastEvaluatedShardId").is_none(),
        "no more pages: {last_page}"
    );

    let bad = [
        (json!({ "StreamArn": arn, "Limit": 101 }), "Value '101' at 'limit' failed to satisfy constraint: Member must have value less than or equal to 100"),
        (json!({ "StreamArn": arn, "ShardFilter": { "Type": "PARENT", "ShardId": parent } }), "shardFilter.type"),
        (json!({ "StreamArn": arn, "ShardFilter": { "Type": "CHILD_SHARDS" } }), "shardFilter.shardId"),
    ];
    for (request, expected) in bad {
        let (status, answer) = try_streams_call(endpoint, "DescribeStream", request).await;
        assert_eq!(status, 400);
        assert!(
            answer["__type"]
                .as_str()
                .unwrap()
                .ends_with("ValidationException"),
            "{answer}"
        );
        assert!(
            answer["message"].as_str().unwrap().contains(expected),
            "{answer}"
        );
    }
}

/// The shard holding the records of item `key`, and the first page of
/// its records from TRIM_HORIZON.
async fn shard_of(endpoint: &str, arn: &str, key: &str) -> (String, Vec<Value>) {
    for shard in list_shards(endpoint, arn, 100).await {
        let id = shard["ShardId"].as_str().unwrap().to_string();
        let iterator = streams_call(
            endpoint,
            "GetShardIterator",
            json!({ "StreamArn": arn, "ShardId": id, "ShardIteratorType": "TRIM_HORIZON" }),
        )
        .await;
        let page = streams_call(
            endpoint,
            "GetRecords",
            json!({ "ShardIterator": iterator["ShardIterator"] }),
        )
        .await;
        let records: Vec<Value> = page["Records"].as_array().unwrap().clone();
        if records
            .iter()
            .any(|r| r["dynamodb"]["NewImage"]["pk"]["S"] == key)
        {
            return (id, records);
        }
    }
    panic!("no shard holds {key}");
}

#[tokio::test]
async fn iterators_expire_records_are_trimmed_after_a_day_and_at_timestamp_finds_them() {
    let (server, client) = util::own_server(&["--clock", "manual", "--on-demand-partitions", "1"]);
    let arn = streamed_table(&client, "trimmed").await;
    let endpoint = server.endpoint();
    let put = |key: &str| {
        client
            .put_item()
            .table_name("trimmed")
            .item("pk", s(key))
            .item("v", n("1"))
            .send()
    };
    put("old").await.unwrap();
    advance(&server, "2h").await;
    put("newer").await.unwrap();
    let (shard, records) = shard_of(endpoint, &arn, "old").await;
    let old_seq = records[0]["dynamodb"]["SequenceNumber"]
        .as_str()
        .unwrap()
        .to_string();
    let newer_time = records[1]["dynamodb"]["ApproximateCreationDateTime"]
        .as_f64()
        .unwrap();
    // AT_TIMESTAMP: the first record at or after the instant.
    let at = json!({ "StreamArn": arn, "ShardId": shard, "ShardIteratorType": "AT_TIMESTAMP", "Timestamp": newer_time - 60.0 });
    let iterator = streams_call(endpoint, "GetShardIterator", at).await;
    let page = streams_call(
        endpoint,
        "GetRecords",
        json!({ "ShardIterator": iterator["ShardIterator"] }),
    )
    .await;
    assert_eq!(
        page["Records"][0]["dynamodb"]["NewImage"]["pk"]["S"],
        "newer"
    );
    let future = json!({ "StreamArn": arn, "ShardId": shard, "ShardIteratorType": "AT_TIMESTAMP", "Timestamp": newer_time + 86_400.0 });
    let (status, answer) = try_streams_call(endpoint, "GetShardIterator", future).await;
    assert_eq!(
        (
            status,
            answer["__type"]
                .as_str()
                .unwrap()
                .ends_with("ValidationException")
        ),
        (400, true),
        "{answer}"
    );

    // An iterator older than 15 minutes has expired.
    let at_old = json!({ "StreamArn": arn, "ShardId": shard, "ShardIteratorType": "AT_SEQUENCE_NUMBER", "SequenceNumber": old_seq });
    let held = streams_call(endpoint, "GetShardIterator", at_old.clone()).await;
    advance(&server, "16m").await;
    let (status, answer) = try_streams_call(
        endpoint,
        "GetRecords",
        json!({ "ShardIterator": held["ShardIterator"] }),
    )
    .await;
    assert_eq!(status, 400);
    assert!(
        answer["__type"]
            .as_str()
            .unwrap()
            .ends_with("ExpiredIteratorException"),
        "{answer}"
    );

    // 22 h after the first record: still there. 24 h: trimmed, for a held
    // iterator and for a new one at its number; TRIM_HORIZON starts after it.
    advance(&server, "21h44m").await;
    let held = streams_call(endpoint, "GetShardIterator", at_old.clone()).await;
    advance(&server, "2m").await;
    let (status, answer) = try_streams_call(
        endpoint,
        "GetRecords",
        json!({ "ShardIterator": held["ShardIterator"] }),
    )
    .await;
    assert_eq!(status, 400, "{answer}");
    assert!(
        answer["__type"]
            .as_str()
            .unwrap()
            .ends_with("TrimmedDataAccessException"),
        "{answer}"
    );
    assert_eq!(
        answer["message"],
        "The data you are trying to access has been trimmed"
    );
    let (status, answer) = try_streams_call(endpoint, "GetShardIterator", at_old).await;
    assert_eq!(status, 400);
    assert!(
        answer["__type"]
            .as_str()
            .unwrap()
            .ends_with("TrimmedDataAccessException"),
        "{answer}"
    );
    let (_, records) = shard_of(endpoint, &arn, "newer").await;
    let keys: Vec<&Value> = records
        .iter()
        .map(|r| &r["dynamodb"]["NewImage"]["pk"]["S"])
        .collect();
    assert_eq!(
        keys,
        [&json!("newer")],
        "TRIM_HORIZON starts after the trimmed record"
    );
}

#[tokio::test]
async fn a_page_of_records_holds_at_most_one_megabyte() {
    let (server, client) = util::own_server(&["--on-demand-partitions", "1"]);
    let arn = streamed_table(&client, "big").await;
    for i in 0..6 {
        client
            .put_item()
            .table_name("big")
            .item("pk", s(&format!("k{i}")))
            .item("v", n("1"))
            .item("blob", s(&"b".repeat(300_000)))
            .send()
            .await
            .unwrap();
    }
    let shards = list_shards(server.endpoint(), &arn, 100).await;
    let request = json!({ "StreamArn": arn, "ShardId": shards[0]["ShardId"], "ShardIteratorType": "TRIM_HORIZON" });
    let mut iterator =
        streams_call(server.endpoint(), "GetShardIterator", request).await["ShardIterator"].clone();
    let mut pages = Vec::new();
    while pages.iter().sum::<usize>() < 6 {
        let page = streams_call(
            server.endpoint(),
            "GetRecords",
            json!({ "ShardIterator": iterator }),
        )
        .await;
        pages.push(page["Records"].as_array().unwrap().len());
        iterator = page["NextShardIterator"].clone();
    }
    assert_eq!(pages, [3, 3], "300 KB records, at most 1 MB a page");
}

#[tokio::test]
async fn raising_provisioned_throughput_doubles_partitions_and_splits_their_shards() {
    let (server, client) = util::own_server(&[]);
    let pk = AttributeDefinition::builder()
        .attribute_name("pk")
        .attribute_type(ScalarAttributeType::S)
        .build()
        .unwrap();
    let units = |read, write| {
        aws_sdk_dynamodb::types::ProvisionedThroughput::builder()
            .read_capacity_units(read)
            .write_capacity_units(write)
            .build()
            .unwrap()
    };
    let created = client
        .create_table()
        .table_name("grown")
        .key_schema(
            KeySchemaElement::builder()
                .attribute_name("pk")
                .key_type(KeyType::Hash)
                .build()
                .unwrap(),
        )
        .attribute_definitions(pk)
        .provisioned_throughput(units(1_000, 500))
        .stream_specification(
            StreamSpecification::builder()
                .stream_enabled(true)
                .stream_view_type(StreamViewType::KeysOnly)
                .build()
                .unwrap(),
        )
        .send()
        .await
        .unwrap();
    let arn = created
        .table_description()
        .unwrap()
        .latest_stream_arn()
        .unwrap()
        .to_string();
    // ceil(1000/3000 + 500/1000) = 1 partition, so one shard.
    let shards = list_shards(server.endpoint(), &arn, 100).await;
    assert_eq!(shards.len(), 1);
    // ceil(5000/3000 + 2000/1000) = 4: doubled twice.
    client
        .update_table()
        .table_name("grown")
        .provisioned_throughput(units(5_000, 2_000))
        .send()
        .await
        .unwrap();
    let shards = list_shards(server.endpoint(), &arn, 100).await;
    assert_eq!(shards.len(), 5, "{shards:#?}");
    let parent = &shards[0]["ShardId"];
    let children: Vec<&Value> = shards
        .iter()
        .filter(|s| &s["ParentShardId"] == parent)
        .collect();
    assert_eq!(
        children.len(),
        4,
        "the one shard closed with a child per new partition"
    );
    // Lowering it again merges nothing (DynamoDB never merges partitions).
    client
        .update_table()
        .table_name("grown")
        .provisioned_throughput(units(1_000, 500))
        .send()
        .await
        .unwrap();
    assert_eq!(list_shards(server.endpoint(), &arn, 100).await.len(), 5);
}

#[tokio::test]
async fn the_cli_draws_the_shard_tree() {
    let (server, client) =
        util::own_server(&["--clock", "manual", "--stream-shard-lifetime", "60"]);
    streamed_table(&client, "drawn").await;
    advance(&server, "61s").await;
    let run = |format: &str| {
        let output = util::cli_command()
            .args([
                "shards",
                "drawn",
                "-o",
                format,
                "--endpoint-url",
                server.endpoint(),
            ])
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    };
    let table = run("table");
    assert!(table.contains("8 shards, 4 open"), "{table}");
    // Children are indented under their parents.
    let rows: Vec<&str> = table.lines().filter(|l| l.contains("shardId-")).collect();
    assert_eq!(rows.len(), 8);
    for pair in rows.chunks(2) {
        assert!(
            pair[0].contains("closed") && pair[1].contains("open"),
            "{table}"
        );
        assert!(pair[1].contains("│   shardId-"), "{table}");
    }
    let json: Value = serde_json::from_str(&run("json")).unwrap();
    assert_eq!(json["StreamStatus"], "ENABLED");
    assert_eq!(json["Shards"].as_array().unwrap().len(), 8);
}

#[tokio::test]
async fn the_cli_lists_partitions_from_a_server_that_checks_signatures() {
    let (server, _) = util::own_server(&["--credentials", "AKIDPART:secretpart"]);
    let cli = |args: &[&str]| {
        let output = util::cli_command()
            .args(args)
            .args(["--endpoint-url", server.endpoint()])
            .env("AWS_ACCESS_KEY_ID", "AKIDPART")
            .env("AWS_SECRET_ACCESS_KEY", "secretpart")
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    };
    cli(&["tables", "create", "parts", "--pk", "pk"]);
    let shown = cli(&["partitions", "parts"]);
    assert_eq!(shown.matches("created").count(), 4, "{shown}");
    assert!(
        shown.contains("0000000000000000-3fffffffffffffff"),
        "{shown}"
    );
    let json: Value = serde_json::from_str(&cli(&["partitions", "parts", "-o", "json"])).unwrap();
    assert_eq!(json["partitions"].as_array().unwrap().len(), 4);
    assert_eq!(json["partitionLimits"], false);
}

#[tokio::test]
async fn a_global_index_partition_past_the_split_size_splits_too() {
    let (server, client) = util::own_server(&[
        "--partition-split-size",
        "20000",
        "--on-demand-partitions",
        "1",
    ]);
    let def = |name: &str| {
        AttributeDefinition::builder()
            .attribute_name(name)
            .attribute_type(ScalarAttributeType::S)
            .build()
            .unwrap()
    };
    let gsi = aws_sdk_dynamodb::types::GlobalSecondaryIndex::builder()
        .index_name("by-g")
        .key_schema(
            KeySchemaElement::builder()
                .attribute_name("g")
                .key_type(KeyType::Hash)
                .build()
                .unwrap(),
        )
        .projection(
            aws_sdk_dynamodb::types::Projection::builder()
                .projection_type(aws_sdk_dynamodb::types::ProjectionType::All)
                .build(),
        )
        .build()
        .unwrap();
    client
        .create_table()
        .table_name("indexed")
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(
            KeySchemaElement::builder()
                .attribute_name("pk")
                .key_type(KeyType::Hash)
                .build()
                .unwrap(),
        )
        .attribute_definitions(def("pk"))
        .attribute_definitions(def("g"))
        .global_secondary_indexes(gsi)
        .send()
        .await
        .unwrap();
    for i in 0..200 {
        client
            .put_item()
            .table_name("indexed")
            .item("pk", s(&format!("p{i}")))
            .item("g", s(&format!("g{i}")))
            .item("pad", s(&"x".repeat(300)))
            .send()
            .await
            .unwrap();
    }
    let headers = [("authorization", raw::AUTHORIZATION)];
    let report = util::poll_until(
        "the index partitions split",
        Duration::from_secs(10),
        || async {
            let response = raw::send_to(
                server.endpoint(),
                "GET",
                "/ferrodyn/partitions?table=indexed",
                &headers,
                Vec::new(),
            )
            .await
            .unwrap();
            let report = response.json();
            (report["indexes"]["by-g"].as_array().unwrap().len() >= 3).then_some(report)
        },
    )
    .await;
    let index = report["indexes"]["by-g"].as_array().unwrap();
    assert!(
        index.iter().all(|p| p["parent"].is_u64() || p["id"] == 1),
        "{index:?}"
    );
    assert!(
        report["partitions"].as_array().unwrap().len() >= 3,
        "the table's split too: {report}"
    );
}
