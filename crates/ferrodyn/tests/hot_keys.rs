//! Hot keys under per-partition limits (`--partition-limits on`), on
//! servers of their own with a manual clock, so rates are exact: a key
//! driven at three times a partition's rate is admitted at the partition's
//! 1,000 write (or 3,000 read) units per clock second with DynamoDB's
//! exception, message and ThrottlingReasons, while keys of other
//! partitions are never refused; the heat split frees the keys that shared
//! the hot one's partition; batches and transactions answer as DynamoDB
//! does; without the option the same load is never throttled.

use crate::util::process::ServerProcess;
use crate::util::{self, attr_def, key, raw, s};
use aws_sdk_dynamodb::error::ProvideErrorMetadata;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{
    AttributeValue, BillingMode, GlobalSecondaryIndex, KeyType, Projection, ProjectionType,
    ProvisionedThroughput, Put, PutRequest, ScalarAttributeType, TransactWriteItem, WriteRequest,
};
use aws_sdk_dynamodb::Client;
use serde_json::{json, Value};
use std::collections::HashMap;

const HOT_KEY: &str = "Throughput exceeds the current capacity of your table or index. DynamoDB is automatically scaling your table or index so please try again shortly. If exceptions persist, check if you have a hot key: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html";
const PROVISIONED: &str = "The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.";
/// An item of this many bytes of payload costs 10 write units.
const TEN_UNITS: usize = 9_600;
/// Clock steps of 100 ms: ten to a second.
const STEP: &str = "100ms";

fn limited() -> (ServerProcess, Client) {
    util::own_server(&["--partition-limits", "on", "--clock", "manual"])
}

async fn advance(server: &ServerProcess, by: &str) {
    let headers = [("authorization", raw::AUTHORIZATION)];
    let body = json!({ "advance": by }).to_string().into_bytes();
    let response = raw::send_to(server.endpoint(), "POST", "/ferrodyn/clock", &headers, body)
        .await
        .expect("the server answers");
    assert_eq!(response.status, 200);
}

/// GET /ferrodyn/partitions?table=`table`: status and body.
async fn partitions(server: &ServerProcess, table: &str) -> (u16, Value) {
    let headers = [("authorization", raw::AUTHORIZATION)];
    let path = format!("/ferrodyn/partitions?table={table}");
    let response = raw::send_to(server.endpoint(), "GET", &path, &headers, Vec::new())
        .await
        .expect("the server answers");
    (response.status, response.json())
}

/// The id of the partition in `list` holding string key `k` (partitions
/// are ranges of the key's placement: its partition hash, mixed).
fn partition_of(list: &Value, k: &str) -> u64 {
    let stored =
        ferrodyn_engine::keys::partition_hash(&ferrodyn_types::AttributeValue::S(k.into()));
    let hash = ferrodyn_engine::partitions::placement(stored);
    let bound = |p: &Value, end: &str| u64::from_str_radix(p[end].as_str().unwrap(), 16).unwrap();
    let found = (list.as_array().unwrap().iter())
        .find(|p| bound(p, "lo") <= hash && hash <= bound(p, "hi"))
        .expect("the partitions cover every hash");
    found["id"].as_u64().unwrap()
}

/// Keys `k0`, `k1`, ... beside `hot`: three in other partitions than its
/// own, one sharing it.
fn neighbours(list: &Value, hot: &str) -> (Vec<String>, String) {
    let home = partition_of(list, hot);
    let (mut apart, mut seen, mut beside) = (Vec::new(), Vec::new(), None);
    for k in (0..10_000).map(|i| format!("k{i}")) {
        let at = partition_of(list, &k);
        if at == home {
            beside.get_or_insert(k);
        } else if !seen.contains(&at) {
            seen.push(at);
            apart.push(k);
        }
        if apart.len() == 3 && beside.is_some() {
            break;
        }
    }
    (apart, beside.expect("a key shares the hot partition"))
}

/// An on-demand (or, given rates, provisioned) table keyed by `p` (S).
async fn table(client: &Client, name: &str, rates: Option<(i64, i64)>) -> String {
    let mut request = (client.create_table().table_name(name))
        .key_schema(key("p", KeyType::Hash))
        .attribute_definitions(attr_def("p", ScalarAttributeType::S));
    request = match rates {
        None => request.billing_mode(BillingMode::PayPerRequest),
        Some((read, write)) => request
            .billing_mode(BillingMode::Provisioned)
            .provisioned_throughput(
                (ProvisionedThroughput::builder().read_capacity_units(read))
                    .write_capacity_units(write)
                    .build()
                    .unwrap(),
            ),
    };
    request.send().await.unwrap();
    name.to_string()
}

fn payload(p: &str, bytes: usize) -> HashMap<String, AttributeValue> {
    util::item(&[("p", s(p)), ("d", s(&"x".repeat(bytes)))])
}

/// Puts a 10-unit item under `p`: true if admitted, false if refused with
/// exactly `refusal` (exception name, message).
async fn put(client: &Client, table: &str, p: &str, refusal: (&str, &str)) -> bool {
    let sent = client
        .put_item()
        .table_name(table)
        .set_item(Some(payload(p, TEN_UNITS)));
    match sent.send().await {
        Ok(_) => true,
        Err(e) => {
            assert_eq!(
                (e.code(), e.message()),
                (Some(refusal.0), Some(refusal.1)),
                "{e:?}"
            );
            false
        }
    }
}

/// Drives `hot` at `per_step` 10-unit puts per 100 ms step for `steps`
/// steps, and each key of `apart` once a step (never refused): the units
/// admitted for `hot` per step.
async fn drive_writes(
    (server, client, table): (&ServerProcess, &Client, &str),
    (hot, apart): (&str, &[String]),
    (steps, per_step): (usize, usize),
    refusal: (&str, &str),
) -> Vec<u64> {
    let mut admitted = Vec::with_capacity(steps);
    for _ in 0..steps {
        let mut units = 0;
        for _ in 0..per_step {
            units += 10 * u64::from(put(client, table, hot, refusal).await);
        }
        for other in apart {
            assert!(
                put(client, table, other, refusal).await,
                "{other} is not hot"
            );
        }
        admitted.push(units);
        advance(server, STEP).await;
    }
    admitted
}

/// The units of whole seconds 2 to 6 (the first spends the banked second).
fn five_seconds(per_step: &[u64]) -> u64 {
    per_step[10..60].iter().sum()
}

/// Raw PutItems of the hot key until its partition refuses one (the last
/// clock step refilled a little): the refusal's body.
async fn refused_body(server: &ServerProcess, table: &str, p: &str) -> Value {
    let body =
        json!({"TableName": table, "Item": {"p": {"S": p}, "d": {"S": "x".repeat(TEN_UNITS)}}});
    let target = format!("{}PutItem", raw::TARGET_PREFIX);
    let headers = [
        ("content-type", raw::CONTENT_TYPE),
        ("x-amz-target", target.as_str()),
        ("authorization", raw::AUTHORIZATION),
    ];
    for _ in 0..20 {
        let sent = raw::send_to(
            server.endpoint(),
            "POST",
            "/",
            &headers,
            body.to_string().into(),
        );
        let response = sent.await.expect("the server answers");
        if response.status != 200 {
            assert_eq!(response.status, 400);
            return response.json();
        }
    }
    panic!("the hot partition never refused");
}

async fn arn(client: &Client, table: &str) -> String {
    let described = client
        .describe_table()
        .table_name(table)
        .send()
        .await
        .unwrap();
    described.table().unwrap().table_arn().unwrap().to_string()
}

#[tokio::test]
async fn a_hot_key_gets_a_partitions_thousand_write_units_and_other_partitions_none_less() {
    let (server, client) = limited();
    let table = table(&client, "hot-writes", None).await;
    let (_, report) = partitions(&server, &table).await;
    let (apart, _) = neighbours(&report["partitions"], "hot");
    let throttling = ("ThrottlingException", HOT_KEY);
    let per_step = drive_writes(
        (&server, &client, &table),
        ("hot", &apart),
        (60, 30),
        throttling,
    )
    .await;
    let units = five_seconds(&per_step) as f64;
    assert!(
        (units / 5.0 - 1_000.0).abs() <= 50.0,
        "{units} units in 5 s: {per_step:?}"
    );
    let body = refused_body(&server, &table, "hot").await;
    assert_eq!(
        body["__type"],
        "com.amazonaws.dynamodb.v20120810#ThrottlingException"
    );
    assert_eq!(body["message"], HOT_KEY);
    let reasons = json!([{"reason": "TableWriteKeyRangeThroughputExceeded", "resource": arn(&client, &table).await}]);
    assert_eq!(body["throttlingReasons"], reasons, "{body}");
}

#[tokio::test]
async fn a_hot_key_gets_a_partitions_three_thousand_read_units() {
    let (server, client) = limited();
    let table = table(&client, "hot-reads", None).await;
    let (_, report) = partitions(&server, &table).await;
    let (apart, _) = neighbours(&report["partitions"], "hot");
    // 100 KB: a strongly consistent read costs 25 units.
    let big = client
        .put_item()
        .table_name(&table)
        .set_item(Some(payload("hot", 100 * 1024 - 20)));
    big.send().await.unwrap();
    for k in &apart {
        put(&client, &table, k, ("", "")).await;
    }
    advance(&server, "1s").await;
    let mut per_step = Vec::new();
    for _ in 0..60 {
        let mut units = 0.0;
        for _ in 0..36 {
            let get = client
                .get_item()
                .table_name(&table)
                .key("p", s("hot"))
                .consistent_read(true);
            match get.return_consumed_capacity("TOTAL".into()).send().await {
                Ok(out) => units += out.consumed_capacity().unwrap().capacity_units().unwrap(),
                Err(e) => assert_eq!(
                    (e.code(), e.message()),
                    (Some("ThrottlingException"), Some(HOT_KEY))
                ),
            }
        }
        for k in &apart {
            let get = client
                .get_item()
                .table_name(&table)
                .key("p", s(k))
                .send()
                .await;
            assert!(get.is_ok(), "{k} is not hot: {get:?}");
        }
        per_step.push(units as u64);
        advance(&server, STEP).await;
    }
    let units = five_seconds(&per_step) as f64;
    assert!(
        (units / 5.0 - 3_000.0).abs() <= 150.0,
        "{units} units in 5 s: {per_step:?}"
    );
}

#[tokio::test]
async fn a_provisioned_tables_hot_key_gets_provisioned_throughput_exceeded_with_reasons() {
    let (server, client) = limited();
    // 5 partitions (ceil(1000/3000 + 4000/1000)); the table's own bucket
    // holds 4,000 units a second and 300 s of burst, so only the partition refuses.
    let table = table(&client, "hot-provisioned", Some((1_000, 4_000))).await;
    let (_, report) = partitions(&server, &table).await;
    assert_eq!(report["partitions"].as_array().unwrap().len(), 5);
    let (apart, _) = neighbours(&report["partitions"], "hot");
    let refusal = ("ProvisionedThroughputExceededException", PROVISIONED);
    let per_step = drive_writes(
        (&server, &client, &table),
        ("hot", &apart),
        (20, 30),
        refusal,
    )
    .await;
    let second: u64 = per_step[10..20].iter().sum();
    assert!((second as f64 - 1_000.0).abs() <= 50.0, "{per_step:?}");
    let body = refused_body(&server, &table, "hot").await;
    assert_eq!(
        body["__type"],
        "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException"
    );
    let reasons = json!([{"reason": "TableWriteKeyRangeThroughputExceeded", "resource": arn(&client, &table).await}]);
    assert_eq!(body["ThrottlingReasons"], reasons, "{body}");
}

#[tokio::test]
async fn after_the_heat_split_keys_that_shared_the_hot_partition_stop_throttling() {
    let (server, client) = limited();
    let table = table(&client, "hot-split", None).await;
    let (_, report) = partitions(&server, &table).await;
    let (_, beside) = neighbours(&report["partitions"], "hot");
    let throttling = ("ThrottlingException", HOT_KEY);
    let mut beside_refused = 0;
    let mut split = None;
    for step in 0..150 {
        for _ in 0..15 {
            put(&client, &table, "hot", throttling).await;
        }
        beside_refused += u32::from(!put(&client, &table, &beside, throttling).await);
        advance(&server, STEP).await;
        let (_, now) = partitions(&server, &table).await;
        if now["partitions"].as_array().unwrap().len() > 4 {
            split = Some((step, now));
            break;
        }
    }
    let (step, now) = split.expect("the hot partition splits within 15 s");
    assert!(
        step >= 40,
        "hot for 5 s before splitting, split at step {step}"
    );
    assert!(
        beside_refused > 0,
        "before the split the neighbour shares the hot partition"
    );
    let list = &now["partitions"];
    assert_ne!(partition_of(list, "hot"), partition_of(list, &beside));
    let hot = (list.as_array().unwrap().iter())
        .find(|p| p["id"].as_u64() == Some(partition_of(list, "hot")))
        .unwrap();
    assert_eq!(
        hot["lo"], hot["hi"],
        "the hot key has a partition of its own: {hot}"
    );
    advance(&server, STEP).await;
    let per_step = drive_writes(
        (&server, &client, &table),
        ("hot", &[beside]),
        (30, 15),
        throttling,
    )
    .await;
    let units: u64 = per_step[10..30].iter().sum();
    assert!(
        (units as f64 / 2.0 - 1_000.0).abs() <= 50.0,
        "the hot key keeps 1,000: {per_step:?}"
    );
}

#[tokio::test]
async fn batches_leave_hot_keys_unprocessed_and_transactions_cancel() {
    let (server, client) = limited();
    let table = table(&client, "hot-batches", None).await;
    let (_, report) = partitions(&server, &table).await;
    let (apart, _) = neighbours(&report["partitions"], "hot");
    let throttling = ("ThrottlingException", HOT_KEY);
    // Spend the hot partition's second without moving the clock.
    for _ in 0..120 {
        put(&client, &table, "hot", throttling).await;
    }
    let request = |p: &str| {
        let put = PutRequest::builder()
            .set_item(Some(payload(p, TEN_UNITS)))
            .build()
            .unwrap();
        WriteRequest::builder().put_request(put).build()
    };
    let mixed: Vec<WriteRequest> = ["hot", &apart[0], &apart[1]]
        .iter()
        .map(|p| request(p))
        .collect();
    let out = (client.batch_write_item().request_items(&table, mixed))
        .send()
        .await
        .unwrap();
    let left = &out.unprocessed_items().unwrap()[&table];
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0].put_request().unwrap().item()["p"], s("hot"));
    let only_hot = client
        .batch_write_item()
        .request_items(&table, vec![request("hot")]);
    let e = only_hot.send().await.unwrap_err();
    assert_eq!(
        (e.code(), e.message()),
        (Some("ThrottlingException"), Some(HOT_KEY))
    );
    let action = |p: &str| {
        let put = Put::builder()
            .table_name(&table)
            .set_item(Some(payload(p, 100)))
            .build()
            .unwrap();
        TransactWriteItem::builder().put(put).build()
    };
    let sent = client
        .transact_write_items()
        .transact_items(action(&apart[2]))
        .transact_items(action("hot"));
    let error = sent.send().await.unwrap_err().into_service_error();
    let TransactWriteItemsError::TransactionCanceledException(cancelled) = error else {
        panic!("{error:?}");
    };
    let codes: Vec<&str> = (cancelled.cancellation_reasons().iter())
        .map(|r| r.code().unwrap())
        .collect();
    assert_eq!(codes, ["None", "ThrottlingError"]);
    assert_eq!(cancelled.cancellation_reasons()[1].message(), Some(HOT_KEY));
    let written = client
        .get_item()
        .table_name(&table)
        .key("p", s(&apart[2]))
        .send()
        .await
        .unwrap();
    assert!(
        written.item().is_none(),
        "a cancelled transaction writes nothing"
    );
}

#[tokio::test]
async fn without_partition_limits_the_same_load_is_never_throttled() {
    let (server, client) = util::own_server(&["--clock", "manual"]);
    let table = table(&client, "hot-off", None).await;
    let (status, report) = partitions(&server, &table).await;
    assert_eq!(status, 200);
    assert_eq!(report["partitionLimits"], false);
    assert!(report["partitions"][0].get("heat").is_none());
    let never = ("never", "throttled");
    let per_step = drive_writes((&server, &client, &table), ("hot", &[]), (20, 30), never).await;
    assert!(per_step.iter().all(|units| *units == 300), "{per_step:?}");
}

/// An on-demand table keyed by `p` with global index `gsi` keyed by `gk`.
async fn indexed_table(client: &Client, name: &str) -> String {
    let index = (GlobalSecondaryIndex::builder().index_name("gsi"))
        .key_schema(key("gk", KeyType::Hash))
        .projection(
            Projection::builder()
                .projection_type(ProjectionType::All)
                .build(),
        )
        .build()
        .unwrap();
    (client
        .create_table()
        .table_name(name)
        .billing_mode(BillingMode::PayPerRequest))
    .key_schema(key("p", KeyType::Hash))
    .attribute_definitions(attr_def("p", ScalarAttributeType::S))
    .attribute_definitions(attr_def("gk", ScalarAttributeType::S))
    .global_secondary_indexes(index)
    .send()
    .await
    .unwrap();
    name.to_string()
}

#[tokio::test]
async fn a_hot_global_index_key_throttles_writes_and_a_refused_write_commits_nothing() {
    let (server, client) = limited();
    let table = indexed_table(&client, "hot-index").await;
    let mut refused = Vec::new();
    for step in 0..20 {
        for i in 0..20 {
            let p = format!("item-{step}-{i}");
            let mut item = payload(&p, TEN_UNITS);
            item.insert("gk".into(), s("same"));
            match client
                .put_item()
                .table_name(&table)
                .set_item(Some(item))
                .send()
                .await
            {
                Ok(_) => {}
                Err(e) => {
                    assert_eq!(
                        (e.code(), e.message()),
                        (Some("ThrottlingException"), Some(HOT_KEY))
                    );
                    refused.push(p);
                }
            }
        }
        advance(&server, STEP).await;
    }
    // 200 units a step against the index partition's 100 a step and its
    // banked second: about 1,000 + 19 × 100 units of the 4,000 admitted.
    assert!(
        (95..=125).contains(&refused.len()),
        "{} refused",
        refused.len()
    );
    let first = client
        .get_item()
        .table_name(&table)
        .key("p", s(&refused[0]))
        .send()
        .await
        .unwrap();
    assert!(first.item().is_none(), "a refused write commits nothing");
    let mut sent = Vec::new();
    for i in 0..20 {
        let mut item = payload(&format!("one-more-{i}"), TEN_UNITS);
        item.insert("gk".into(), s("same"));
        sent.push(
            client
                .put_item()
                .table_name(&table)
                .set_item(Some(item))
                .send()
                .await,
        );
    }
    let e = sent
        .into_iter()
        .find_map(Result::err)
        .expect("the index partition refuses");
    let reasons = e.as_service_error().and_then(|s| match s {
        aws_sdk_dynamodb::operation::put_item::PutItemError::ThrottlingException(t) => {
            Some(t.throttling_reasons().to_vec())
        }
        _ => None,
    });
    let reasons = reasons.expect("a ThrottlingException with reasons");
    assert_eq!(reasons.len(), 1);
    assert_eq!(
        reasons[0].reason(),
        Some("IndexWriteKeyRangeThroughputExceeded")
    );
    let index_arn = format!("{}/index/gsi", arn(&client, &table).await);
    assert_eq!(reasons[0].resource(), Some(index_arn.as_str()));
    let query = (client.query().table_name(&table).index_name("gsi"))
        .key_condition_expression("gk = :v")
        .expression_attribute_values(":v", s("same"))
        .limit(1);
    assert!(query.send().await.is_ok(), "reads have their own bucket");
}

#[tokio::test]
async fn the_partitions_endpoint_lists_partitions_heat_and_shards() {
    let (server, client) = limited();
    let name = "hot-report";
    indexed_table(&client, name).await;
    let spec = aws_sdk_dynamodb::types::StreamSpecification::builder()
        .stream_enabled(true)
        .stream_view_type(aws_sdk_dynamodb::types::StreamViewType::NewImage)
        .build()
        .unwrap();
    client
        .update_table()
        .table_name(name)
        .stream_specification(spec)
        .send()
        .await
        .unwrap();
    let mut item = payload("hot", 100);
    item.insert("gk".into(), s("g1"));
    client
        .put_item()
        .table_name(name)
        .set_item(Some(item))
        .send()
        .await
        .unwrap();
    advance(&server, "1s").await;
    let (status, report) = partitions(&server, name).await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["table"], name);
    assert_eq!(report["partitionLimits"], true);
    let list = report["partitions"].as_array().unwrap();
    assert_eq!(list.len(), 4);
    assert_eq!(list[0]["lo"], "0000000000000000");
    assert_eq!(list[3]["hi"], "ffffffffffffffff");
    let hot = partition_of(&report["partitions"], "hot");
    for p in list {
        assert_eq!(p["lo"].as_str().unwrap().len(), 16);
        let own = p["id"].as_u64() == Some(hot);
        assert_eq!(p["items"], u64::from(own), "{p}");
        assert!(p["bytes"].as_u64().is_some() && p["created"].as_u64().is_some());
        let heat = &p["heat"];
        assert_eq!(
            heat["writeUnitsLastSecond"],
            if own { 1.0 } else { 0.0 },
            "{p}"
        );
        assert_eq!(
            heat["writeUnitsLastMinute"],
            if own { 1.0 } else { 0.0 },
            "{p}"
        );
        for field in [
            "readUnitsLastSecond",
            "readUnitsLastMinute",
            "throttlesLastMinute",
            "throttlesTotal",
        ] {
            assert!(heat[field].is_number(), "{field} in {heat}");
        }
    }
    let index = report["indexes"]["gsi"].as_array().unwrap();
    assert_eq!(index.len(), 4);
    assert!(index[0]["heat"].is_object() && index[0].get("items").is_none());
    let shards = report["shards"].as_array().unwrap();
    assert_eq!(shards.len(), 4);
    for shard in shards {
        assert!(shard["shardId"].as_str().unwrap().starts_with("shardId-"));
        assert_eq!(shard["open"], true);
        assert_eq!(shard["startingSequenceNumber"].as_str().unwrap().len(), 21);
        assert!(
            shard.get("endingSequenceNumber").is_none() && shard.get("parentShardId").is_none()
        );
    }
    let (status, body) = partitions(&server, "missing").await;
    assert_eq!(
        (
            status,
            body["__type"]
                .as_str()
                .unwrap()
                .ends_with("ResourceNotFoundException")
        ),
        (400, true)
    );
    let headers = [("authorization", raw::AUTHORIZATION)];
    let response = raw::send_to(
        server.endpoint(),
        "GET",
        "/ferrodyn/partitions",
        &headers,
        Vec::new(),
    );
    let response = response.await.unwrap();
    assert_eq!(
        (response.status, response.error_name()),
        (400, "ValidationException".to_string())
    );
}
