//! `ferrodyn replicas`: a table made global by `--add` in another region of
//! the same server, its replica shown ACTIVE with replication latency,
//! pending age and changes sent, removed by `--remove`; a strong group with
//! a witness; a peer that cannot be reached reported in words.

use super::{stderr, Server};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

fn put(server: &Server, id: &str) {
    let item = json!({ "pk": { "S": id } });
    server
        .client()
        .call("PutItem", &json!({ "TableName": "world", "Item": item }))
        .expect("put");
}

fn view(server: &Server) -> Value {
    let output = server.ok(&["replicas", "world", "-o", "json"]);
    serde_json::from_str(&output).unwrap_or_else(|e| panic!("{e}: {output}"))
}

/// The replication report of `region` once it has latency samples.
fn measured_target(server: &Server, region: &str) -> Value {
    let started = Instant::now();
    loop {
        let view = view(server);
        let target = (view["Replication"].as_array().into_iter().flatten())
            .find(|t| t["RegionName"] == region)
            .cloned();
        if let Some(target) = target {
            if target["ReplicationLatencyMs"]["Samples"].as_u64() > Some(0) {
                return target;
            }
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no latency for {region}: {view}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn a_replica_is_added_shown_with_its_latency_and_removed() {
    let server = Server::start(&[]);
    server.create_table("world", false);
    put(&server, "before");
    let plain = server.ok(&["replicas", "world"]);
    assert!(plain.contains("is not a global table"), "{plain}");

    let added = server.ok(&["replicas", "world", "--add", "us-west-2", "--wait"]);
    assert!(added.contains("added replica us-west-2"), "{added}");
    assert!(
        added.contains("version 2019.11.21, EVENTUAL consistency"),
        "{added}"
    );
    put(&server, "after");
    let target = measured_target(&server, "us-west-2");
    assert_eq!(target["ReplicaStatus"], "ACTIVE", "{target}");
    assert!(target["ChangesSent"].as_u64() >= Some(1), "{target}");
    let latency = &target["ReplicationLatencyMs"];
    assert!(
        latency["P99"].as_u64() >= latency["P50"].as_u64(),
        "{target}"
    );

    let shown = server.ok(&["replicas", "world"]);
    let row = (shown.lines())
        .find(|line| line.contains("us-west-2"))
        .unwrap_or_else(|| panic!("no us-west-2 row: {shown}"));
    assert!(row.contains("ACTIVE") && row.contains("done"), "{shown}");
    let figures = format!("{}/{}/{}", latency["Last"], latency["P50"], latency["P99"]);
    assert!(row.contains(&figures), "{figures} missing from {shown}");
    // Nothing deleted, nothing reclaimed (a day's retention by default).
    assert!(
        shown.contains("tombstones reclaimed since the server started: 0"),
        "{shown}"
    );
    assert_eq!(view(&server)["TombstonesReclaimed"], 0);

    let removed = server.ok(&["replicas", "world", "--remove", "us-west-2", "--wait"]);
    assert!(removed.contains("replica us-west-2"), "{removed}");
    assert!(removed.contains("is not a global table"), "{removed}");
    let gone = server.cli(&["scan", "world", "--region", "us-west-2"]);
    assert!(
        stderr(&gone).contains("ResourceNotFoundException"),
        "{gone:?}"
    );
}

#[test]
fn a_strong_group_with_a_witness_is_formed_and_shown() {
    let server = Server::start(&[]);
    server.create_table("world", false);
    let formed = server.ok(&[
        "replicas",
        "world",
        "--add",
        "us-west-2",
        "--witness",
        "eu-west-1",
        "--strong",
        "--wait",
    ]);
    assert!(formed.contains("STRONG consistency"), "{formed}");
    assert!(formed.contains("witness eu-west-1: ACTIVE"), "{formed}");
    let view = view(&server);
    assert_eq!(view["MultiRegionConsistency"], "STRONG");
    assert_eq!(view["GlobalTableWitnesses"][0]["RegionName"], "eu-west-1");
    assert_eq!(view["Replicas"][0]["RegionName"], "us-west-2");
}

#[test]
fn a_replica_on_an_unreachable_peer_is_refused_in_words() {
    let server = Server::start(&["--peer", "us-west-2=http://127.0.0.1:9"]);
    server.create_table("world", false);
    let refused = server.cli(&["replicas", "world", "--add", "us-west-2"]);
    assert!(!refused.status.success(), "{refused:?}");
    let message = stderr(&refused);
    assert!(
        message.contains("us-west-2") && message.contains("could not be reached"),
        "{message}"
    );
    let plain = server.ok(&["replicas", "world"]);
    assert!(plain.contains("is not a global table"), "{plain}");
}

#[test]
fn add_and_remove_cannot_be_combined() {
    let server = Server::start(&[]);
    let refused = server.cli(&["replicas", "world", "--add", "a", "--remove", "b"]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("cannot be used with"),
        "{refused:?}"
    );
}
