//! Multi-Region eventual consistency within one server: regions of the
//! shared server hold the replicas.

use super::{
    add_index_by_g, add_replica, capacity, contents, create, create_plain, create_with_index,
    delete, replica_count, set_index_units, set_units, update_replicas, wait_converged,
    wait_replica_active, SETTLE,
};
use crate::util::{self, client_in_region, endpoint, item, n, poll_until, s};
use aws_sdk_dynamodb::types::{StreamSpecification, StreamViewType};
use aws_sdk_dynamodb::Client;

fn east() -> Client {
    client_in_region(endpoint(), "us-east-1")
}

fn west() -> Client {
    client_in_region(endpoint(), "us-west-2")
}

async fn put(client: &Client, table: &str, key: &str, value: i64) {
    let item = item(&[("p", s(key)), ("v", n(&value.to_string()))]);
    (client.put_item().table_name(table).set_item(Some(item)))
        .send()
        .await
        .expect("PutItem succeeds");
}

#[tokio::test]
async fn a_replica_is_filled_online_and_then_follows_both_regions_writes() {
    let (east, west) = (east(), west());
    let table = util::table_s(&east).await;
    for i in 0..300 {
        put(&east, &table, &format!("k{i}"), i).await;
    }
    add_replica(&east, &table, "us-west-2").await;
    // Written while the fill runs: the log carries them.
    for i in 300..400 {
        put(&east, &table, &format!("k{i}"), i).await;
    }
    wait_replica_active(&east, &table, "us-west-2").await;
    put(&west, &table, "from-west", 1).await;
    (west.delete_item().table_name(&table).key("p", s("k7")))
        .send()
        .await
        .expect("DeleteItem succeeds");
    let items = wait_converged(&[&east, &west], &table).await;
    assert_eq!(items.len(), 400, "400 written, one added, one deleted");
    assert!(items.iter().any(|i| i.contains("from-west")));
    assert!(!items.iter().any(|i| i.contains("\"k7\"")));
}

#[tokio::test]
async fn describe_table_shows_the_replicas_the_version_and_the_stream_it_enabled() {
    let (east, west) = (east(), west());
    let table = util::table_s(&east).await;
    add_replica(&east, &table, "us-west-2").await;
    wait_replica_active(&east, &table, "us-west-2").await;
    let here = east
        .describe_table()
        .table_name(&table)
        .send()
        .await
        .unwrap();
    let here = here.table().unwrap();
    assert_eq!(here.global_table_version(), Some("2019.11.21"));
    let regions: Vec<_> = here
        .replicas()
        .iter()
        .filter_map(|r| r.region_name())
        .collect();
    assert_eq!(regions, ["us-west-2"], "Replicas lists the other regions");
    let stream = here.stream_specification().expect("a stream was enabled");
    assert_eq!(
        stream.stream_view_type(),
        Some(&StreamViewType::NewAndOldImages)
    );
    let there = west
        .describe_table()
        .table_name(&table)
        .send()
        .await
        .unwrap();
    let there = there.table().unwrap();
    let regions: Vec<_> = there
        .replicas()
        .iter()
        .filter_map(|r| r.region_name())
        .collect();
    assert_eq!(regions, ["us-east-1"]);
    assert_eq!(there.key_schema(), here.key_schema());
}

#[tokio::test]
async fn the_later_write_wins_in_every_region() {
    let (east, west) = (east(), west());
    let table = util::table_s(&east).await;
    add_replica(&east, &table, "us-west-2").await;
    wait_replica_active(&east, &table, "us-west-2").await;
    // Both regions write one item without waiting for each other: every
    // replica must end with the same one, the later write.
    for round in 0..20 {
        put(&east, &table, "contested", round * 2).await;
        put(&west, &table, "contested", round * 2 + 1).await;
    }
    let items = wait_converged(&[&east, &west], &table).await;
    let contested = items.iter().find(|i| i.contains("contested")).unwrap();
    assert!(
        contested.contains("N(\"39\")"),
        "the last write wins: {contested}"
    );
}

#[tokio::test]
async fn each_replica_keeps_its_global_indexes_and_its_stream_of_replicated_writes() {
    let (east, west) = (east(), west());
    let table = util::unique_name("gsi");
    create_with_index(&east, &table).await;
    add_replica(&east, &table, "us-west-2").await;
    wait_replica_active(&east, &table, "us-west-2").await;
    let row = item(&[("p", s("a")), ("g", s("blue")), ("v", n("1"))]);
    east.put_item()
        .table_name(&table)
        .set_item(Some(row))
        .send()
        .await
        .unwrap();
    let found = poll_until("the replicated item in the GSI", SETTLE, || async {
        let out = (west.query().table_name(&table).index_name("byG"))
            .key_condition_expression("g = :g")
            .expression_attribute_values(":g", s("blue"))
            .send()
            .await
            .ok()?;
        (out.count() == 1).then_some(out)
    })
    .await;
    assert_eq!(util::get_s(&found.items()[0], "p"), "a");
    let described = west
        .describe_table()
        .table_name(&table)
        .send()
        .await
        .unwrap();
    let arn = described
        .table()
        .unwrap()
        .latest_stream_arn()
        .unwrap()
        .to_string();
    // Shared storage reads a stream a little behind its writes: polled.
    poll_until(
        "the replicated insert in the west stream",
        SETTLE,
        || async {
            let records = util::streams::stream_records_in(endpoint(), "us-west-2", &arn).await;
            let inserted =
                |r: &serde_json::Value| r["eventName"] == "INSERT" && r["awsRegion"] == "us-west-2";
            records.iter().any(inserted).then_some(())
        },
    )
    .await;
}

#[tokio::test]
async fn removing_a_replica_deletes_its_table_and_leaves_a_plain_table() {
    let (east, west) = (east(), west());
    let table = util::table_s(&east).await;
    add_replica(&east, &table, "us-west-2").await;
    wait_replica_active(&east, &table, "us-west-2").await;
    let update = delete("us-west-2");
    update_replicas(&east, &table, update).await.unwrap();
    let error = west.describe_table().table_name(&table).send().await;
    assert_eq!(util::service_error(error).code, "ResourceNotFoundException");
    let here = east
        .describe_table()
        .table_name(&table)
        .send()
        .await
        .unwrap();
    assert!(here.table().unwrap().replicas().is_empty());
    assert_eq!(here.table().unwrap().global_table_version(), None);
    put(&east, &table, "after", 1).await; // a plain table again
}

#[tokio::test]
async fn delete_table_of_a_replica_leaves_the_group() {
    let (east, west) = (east(), west());
    let table = util::table_s(&east).await;
    add_replica(&east, &table, "us-west-2").await;
    wait_replica_active(&east, &table, "us-west-2").await;
    west.delete_table().table_name(&table).send().await.unwrap();
    assert_eq!(
        replica_count(&east, &table).await,
        0,
        "east is a plain table"
    );
}

#[tokio::test]
async fn replica_updates_that_cannot_be_made_are_refused() {
    let (east, west) = (east(), west());
    let table = util::table_s(&east).await;
    let own = update_replicas(&east, &table, create("us-east-1")).await;
    assert_eq!(util::service_error(own).code, "ValidationException");
    let two = (east.update_table().table_name(&table))
        .replica_updates(create("us-west-2"))
        .replica_updates(create("eu-west-1"))
        .send()
        .await;
    assert_eq!(util::service_error(two).code, "ValidationException");
    let mixed = (east.update_table().table_name(&table))
        .replica_updates(create("us-west-2"))
        .deletion_protection_enabled(true)
        .send()
        .await;
    assert_eq!(util::service_error(mixed).code, "ValidationException");
    // A table of the name in the target region already.
    create_plain(&west, &table).await;
    let taken = update_replicas(&east, &table, create("us-west-2")).await;
    let error = util::service_error(taken);
    assert_eq!(error.code, "ValidationException");
    assert!(
        error.message.contains("already existed as tables"),
        "{}",
        error.message
    );
    let update = delete("eu-west-1");
    let missing = update_replicas(&east, &table, update).await;
    assert_eq!(util::service_error(missing).code, "ValidationException");
}

#[tokio::test]
async fn a_replica_needs_both_images_in_its_stream_and_keeps_it() {
    let east = east();
    let table = util::table_s(&east).await;
    let keys_only = StreamSpecification::builder()
        .stream_enabled(true)
        .stream_view_type(StreamViewType::KeysOnly)
        .build()
        .unwrap();
    east.update_table()
        .table_name(&table)
        .stream_specification(keys_only)
        .send()
        .await
        .unwrap();
    let update = create("us-west-2");
    let refused = update_replicas(&east, &table, update).await;
    assert_eq!(util::service_error(refused).code, "ValidationException");
    let other = util::table_s(&east).await;
    add_replica(&east, &other, "us-west-2").await;
    let off = StreamSpecification::builder()
        .stream_enabled(false)
        .build()
        .unwrap();
    let disable = east
        .update_table()
        .table_name(&other)
        .stream_specification(off)
        .send()
        .await;
    assert_eq!(util::service_error(disable).code, "ValidationException");
}

#[tokio::test]
async fn expired_items_are_deleted_in_every_region() {
    let (server, _) = util::own_server(&["--clock", "manual", "--ttl-interval", "0"]);
    let east = client_in_region(server.endpoint(), "us-east-1");
    let west = client_in_region(server.endpoint(), "us-west-2");
    let table = util::table_s(&east).await;
    let ttl = aws_sdk_dynamodb::types::TimeToLiveSpecification::builder()
        .enabled(true)
        .attribute_name("expires")
        .build()
        .unwrap();
    east.update_time_to_live()
        .table_name(&table)
        .time_to_live_specification(ttl)
        .send()
        .await
        .unwrap();
    add_replica(&east, &table, "us-west-2").await;
    wait_replica_active(&east, &table, "us-west-2").await;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    let soon = item(&[
        ("p", s("old")),
        ("expires", n(&(now.as_secs() + 60).to_string())),
    ]);
    east.put_item()
        .table_name(&table)
        .set_item(Some(soon))
        .send()
        .await
        .unwrap();
    wait_converged(&[&east, &west], &table).await;
    let authorization = "AWS4-HMAC-SHA256 Credential=k/20261204/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0";
    let body = serde_json::json!({ "advance": "1h" })
        .to_string()
        .into_bytes();
    let headers = [("authorization", authorization)];
    let moved = util::raw::send_to(server.endpoint(), "POST", "/ferrodyn/clock", &headers, body);
    assert_eq!(moved.await.expect("the server answers").status, 200);
    poll_until("the expiry to reach the replica", SETTLE, || async {
        contents(&west, &table).await.is_empty().then_some(())
    })
    .await;
}

#[tokio::test]
async fn time_to_live_capacity_and_global_indexes_are_shared_by_the_replicas() {
    let (east, west) = (east(), west());
    let table = util::table_s(&east).await;
    add_replica(&east, &table, "us-west-2").await;
    wait_replica_active(&east, &table, "us-west-2").await;
    let ttl = aws_sdk_dynamodb::types::TimeToLiveSpecification::builder()
        .enabled(true)
        .attribute_name("expires")
        .build()
        .unwrap();
    (west.update_time_to_live().table_name(&table))
        .time_to_live_specification(ttl)
        .send()
        .await
        .unwrap();
    let seen = east
        .describe_time_to_live()
        .table_name(&table)
        .send()
        .await
        .unwrap();
    let seen = seen.time_to_live_description().unwrap();
    assert_eq!(
        seen.attribute_name(),
        Some("expires"),
        "set in us-west-2, seen in us-east-1"
    );
    add_index_by_g(&east, &table).await;
    let there = west
        .describe_table()
        .table_name(&table)
        .send()
        .await
        .unwrap();
    let names: Vec<_> = (there.table().unwrap().global_secondary_indexes().iter())
        .filter_map(|i| i.index_name())
        .collect();
    assert_eq!(names, ["byG"], "created in us-east-1, present in us-west-2");
}

#[tokio::test]
async fn write_capacity_is_shared_and_read_capacity_stays_each_replicas_own() {
    let (east, west) = (east(), west());
    let table = util::unique_name("units");
    create_with_index(&east, &table).await;
    add_replica(&east, &table, "us-west-2").await;
    wait_replica_active(&east, &table, "us-west-2").await;
    // A switch to PROVISIONED through east: west, which had no units,
    // takes them all, its global index's too.
    set_units(&east, &table, (5, 7), true).await;
    assert_eq!(capacity(&west, &table).await, [(5, 7), (5, 7)]);
    // New units through west: east takes the write units, keeps its reads.
    set_units(&west, &table, (9, 11), false).await;
    assert_eq!(capacity(&west, &table).await, [(9, 11), (9, 11)]);
    assert_eq!(capacity(&east, &table).await, [(5, 11), (5, 11)]);
    // The global index's units alone, through east: west's index takes
    // the write units and keeps its reads.
    set_index_units(&east, &table, (3, 13)).await;
    assert_eq!(capacity(&east, &table).await, [(5, 11), (3, 13)]);
    assert_eq!(capacity(&west, &table).await, [(9, 11), (9, 13)]);
}
