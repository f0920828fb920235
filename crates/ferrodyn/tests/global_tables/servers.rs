//! Three Ferrodyn servers on loopback, each holding one region and naming
//! the others with `--peer`, signing their calls with the shared
//! `--credentials` key: replication across processes, a server killed
//! (kill -9) and restarted in the middle of writes, MRSC surviving the loss
//! of a server, a replica filled from 100,000 items under writes, and
//! UpdateTable's capacity shared with a replica another server holds.

use super::{
    add_index_by_g, add_replica, capacity, contents, create_plain, create_with_index, form_strong,
    replica_count, set_units, wait_converged, wait_replica_active,
};
use crate::util::process::{free_port, ServerProcess};
use crate::util::{self, client_in_region, item, n, s};
use aws_sdk_dynamodb::types::{PutRequest, WriteRequest};
use aws_sdk_dynamodb::Client;
use std::time::{Duration, Instant};

const REGIONS: [&str; 3] = ["us-east-1", "us-east-2", "us-west-2"];

/// One server of the setup: its region, port and data directory.
struct Node {
    region: &'static str,
    port: u16,
    dir: tempfile::TempDir,
    peers: Vec<String>,
    /// More `ferrodyn serve` flags.
    flags: Vec<String>,
    server: Option<ServerProcess>,
}

impl Node {
    fn start(&mut self) {
        let dir = self.dir.path().to_str().expect("a UTF-8 path").to_string();
        let mut args = vec!["--data-dir", &dir, "--region", self.region];
        args.extend(["--credentials", "AKIDEXAMPLE:secret"]);
        for peer in &self.peers {
            args.extend(["--peer", peer.as_str()]);
        }
        args.extend(self.flags.iter().map(String::as_str));
        self.server = Some(ServerProcess::spawn_on(&args, self.port));
    }

    fn client(&self) -> Client {
        client_in_region(&format!("http://127.0.0.1:{}", self.port), self.region)
    }

    fn kill(&mut self) {
        self.server.take().expect("running").kill();
    }
}

/// `count` servers, the first `count` of [`REGIONS`], started.
fn cluster(count: usize) -> Vec<Node> {
    let ports: Vec<u16> = (0..count).map(|_| free_port()).collect();
    cluster_over(&ports, &ports, &[])
}

/// Servers on `ports`, each reaching the others at `routes` (a port of
/// theirs, or of a proxy to it), started with `flags`.
fn cluster_over(ports: &[u16], routes: &[u16], flags: &[&str]) -> Vec<Node> {
    util::needs_own_server();
    let count = ports.len();
    let mut nodes: Vec<Node> = (0..count)
        .map(|i| Node {
            region: REGIONS[i],
            port: ports[i],
            dir: tempfile::tempdir().unwrap(),
            peers: (0..count)
                .filter(|j| *j != i)
                .map(|j| format!("{}=http://127.0.0.1:{}", REGIONS[j], routes[j]))
                .collect(),
            flags: flags.iter().map(|f| f.to_string()).collect(),
            server: None,
        })
        .collect();
    nodes.iter_mut().for_each(Node::start);
    nodes
}

/// Writes (and sometimes deletes) keys of a 200-key space through `client`
/// until `until`, ignoring failures (its server may be down meanwhile).
async fn write_until(client: Client, table: String, tag: &'static str, until: Instant) -> u64 {
    let mut rng = util::Rng::with_seed(tag.len() as u64 * 7919);
    let mut acknowledged = 0;
    while Instant::now() < until {
        let key = format!("k{}", rng.u32(0..200));
        let done = if rng.u8(0..10) == 0 {
            let delete = client.delete_item().table_name(&table).key("p", s(&key));
            delete.send().await.is_ok()
        } else {
            let row = item(&[
                ("p", s(&key)),
                ("by", s(tag)),
                ("n", n(&acknowledged.to_string())),
            ]);
            let put = client.put_item().table_name(&table).set_item(Some(row));
            put.send().await.is_ok()
        };
        match done {
            true => acknowledged += 1,
            false => tokio::time::sleep(Duration::from_millis(50)).await,
        }
    }
    acknowledged
}

#[tokio::test]
async fn three_servers_converge_after_one_is_killed_and_restarted_under_writes() {
    let _heavy = util::heavy_test().await;
    let mut nodes = cluster(3);
    let clients: Vec<Client> = nodes.iter().map(Node::client).collect();
    let table = util::table_s(&clients[0]).await;
    for region in &REGIONS[1..] {
        add_replica(&clients[0], &table, region).await;
        wait_replica_active(&clients[0], &table, region).await;
    }
    let until = Instant::now() + Duration::from_secs(30);
    let writers: Vec<_> = (clients.iter().zip(REGIONS))
        .map(|(c, tag)| tokio::spawn(write_until(c.clone(), table.clone(), tag, until)))
        .collect();
    tokio::time::sleep(Duration::from_secs(10)).await;
    nodes[1].kill();
    tokio::time::sleep(Duration::from_secs(5)).await;
    nodes[1].start();
    let mut written = 0;
    for writer in writers {
        written += writer.await.unwrap();
    }
    assert!(written > 1000, "only {written} writes were acknowledged");
    let clients: Vec<Client> = nodes.iter().map(Node::client).collect();
    let items = wait_converged(&[&clients[0], &clients[1], &clients[2]], &table).await;
    assert!(!items.is_empty());
}

/// GET /ferrodyn/replication of `table` on `node`.
async fn replication_report(node: &Node, table: &str) -> serde_json::Value {
    let endpoint = format!("http://127.0.0.1:{}", node.port);
    let query = [("table", table)];
    let path = "/ferrodyn/replication";
    let response = util::raw::signed_get(&endpoint, path, &query, node.region).await;
    let response = response.expect("answered");
    assert_eq!(
        response.status,
        200,
        "{}",
        String::from_utf8_lossy(&response.body)
    );
    response.json()
}

async fn reclaimed(node: &Node, table: &str) -> u64 {
    let report = replication_report(node, table).await;
    report["TombstonesReclaimed"].as_u64().expect("a count")
}

/// A delete's tombstone in east must outlive its retention while west,
/// cut off, holds an older write of the item: once the link is back, that
/// write arrives and loses to the tombstone, and both regions agree the
/// item is gone. A tombstone reclaimed on age alone would let the write
/// bring the item back in east only. West, which hears from east, reclaims
/// its copy of the tombstone meanwhile; east reclaims its own once west has
/// caught up.
#[tokio::test]
async fn a_tombstone_stays_while_a_region_that_may_hold_older_changes_is_cut_off() {
    let ports = [free_port(), free_port()];
    let to_east = util::proxy::Proxy::start(ports[0]);
    let nodes = cluster_over(
        &ports,
        &[to_east.port(), ports[1]],
        &["--tombstone-retention", "1"],
    );
    let (east, west) = (nodes[0].client(), nodes[1].client());
    let table = util::table_s(&east).await;
    add_replica(&east, &table, REGIONS[1]).await;
    wait_replica_active(&east, &table, REGIONS[1]).await;
    let row = |by: &str| item(&[("p", s("k")), ("by", s(by))]);
    let put =
        |client: &Client, by: &str| client.put_item().table_name(&table).set_item(Some(row(by)));
    put(&east, "east").send().await.unwrap();
    wait_converged(&[&east, &west], &table).await;

    to_east.cut();
    put(&west, "west").send().await.unwrap();
    tokio::time::sleep(Duration::from_millis(20)).await;
    let delete = east.delete_item().table_name(&table).key("p", s("k"));
    delete.send().await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while reclaimed(&nodes[1], &table).await == 0 {
        assert!(
            Instant::now() < deadline,
            "west never reclaimed the tombstone east's delete left"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(
        reclaimed(&nodes[0], &table).await,
        0,
        "east reclaimed while west was cut off"
    );

    to_east.restore();
    let items = wait_converged(&[&east, &west], &table).await;
    assert!(items.is_empty(), "the item came back: {items:?}");
    while reclaimed(&nodes[0], &table).await == 0 {
        assert!(
            Instant::now() < deadline,
            "east never reclaimed its tombstone after west caught up"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(contents(&east, &table).await.is_empty());
    assert!(contents(&west, &table).await.is_empty());
}

/// A peer's refusal reaches the client as the peer's own error, as a region
/// of the same server answers it (it was an InternalServerError saying the
/// region "could not be reached").
#[tokio::test]
async fn a_replica_the_peer_refuses_answers_the_peers_error() {
    let nodes = cluster(2);
    let (east, west) = (nodes[0].client(), nodes[1].client());
    let table = util::table_s(&east).await;
    create_plain(&west, &table).await;
    let refused = super::update_replicas(&east, &table, super::create(REGIONS[1])).await;
    let error = util::service_error::<(), _, _>(refused.map(drop));
    assert_eq!(error.code, "ValidationException", "{error:?}");
    assert!(
        error
            .message
            .contains("one or more replicas already existed as tables"),
        "{error:?}"
    );
    assert_eq!(
        replica_count(&east, &table).await,
        0,
        "east made no replica"
    );
}

/// Settings changed while a region's server is down reach it once it is
/// back, in the order they were made: Time to Live enabled then moved to
/// another attribute, and a global index created. (Sent once, they were
/// lost for that region.)
#[tokio::test]
async fn settings_changed_while_a_region_is_down_reach_it_when_it_returns() {
    let mut nodes = cluster(2);
    let (east, west) = (nodes[0].client(), nodes[1].client());
    let table = util::table_s(&east).await;
    add_replica(&east, &table, REGIONS[1]).await;
    wait_replica_active(&east, &table, REGIONS[1]).await;
    nodes[1].kill();
    for (enabled, attribute) in [(true, "expires"), (false, "expires"), (true, "ttl")] {
        let ttl = aws_sdk_dynamodb::types::TimeToLiveSpecification::builder()
            .enabled(enabled)
            .attribute_name(attribute)
            .build()
            .unwrap();
        let update = east.update_time_to_live().table_name(&table);
        update.time_to_live_specification(ttl).send().await.unwrap();
    }
    add_index_by_g(&east, &table).await;
    let report = replication_report(&nodes[0], &table).await;
    assert_eq!(report["Targets"][0]["SettingsWaiting"], 4, "{report}");

    nodes[1].start();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let ttl = west.describe_time_to_live().table_name(&table).send().await;
        let ttl = ttl.ok().and_then(|t| t.time_to_live_description().cloned());
        let described = west.describe_table().table_name(&table).send().await;
        let indexes = described
            .ok()
            .and_then(|d| d.table().map(|t| t.global_secondary_indexes().len()));
        let attribute = ttl
            .as_ref()
            .and_then(|t| t.attribute_name().map(str::to_string));
        let status = ttl.and_then(|t| t.time_to_live_status().map(|s| s.as_str().to_string()));
        if attribute.as_deref() == Some("ttl")
            && status.as_deref() == Some("ENABLED")
            && indexes == Some(1)
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "west has TTL {attribute:?} {status:?} and {indexes:?} indexes"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let report = replication_report(&nodes[0], &table).await;
    assert_eq!(report["Targets"][0]["SettingsWaiting"], 0, "{report}");
}

#[tokio::test]
async fn write_capacity_reaches_a_replica_on_another_server_which_keeps_its_read_units() {
    let nodes = cluster(2);
    let (east, other) = (nodes[0].client(), nodes[1].client());
    let table = util::unique_name("units");
    create_with_index(&east, &table).await;
    add_replica(&east, &table, REGIONS[1]).await;
    wait_replica_active(&east, &table, REGIONS[1]).await;
    // A switch to PROVISIONED: the peer's replica takes every unit.
    set_units(&east, &table, (5, 7), true).await;
    assert_eq!(capacity(&other, &table).await, [(5, 7), (5, 7)]);
    // Back the other way: the first server's replica keeps its reads.
    set_units(&other, &table, (9, 11), false).await;
    assert_eq!(capacity(&east, &table).await, [(5, 11), (5, 11)]);
}

#[tokio::test]
async fn strongly_consistent_writes_survive_the_loss_of_the_server_that_took_them() {
    let _heavy = util::heavy_test().await;
    let mut nodes = cluster(3);
    let clients: Vec<Client> = nodes.iter().map(Node::client).collect();
    let table = util::table_s(&clients[0]).await;
    form_strong(&clients[0], &table, &REGIONS[1..]).await;
    for i in 0..50 {
        let row = item(&[("p", s(&format!("k{i}"))), ("v", n(&i.to_string()))]);
        clients[0]
            .put_item()
            .table_name(&table)
            .set_item(Some(row))
            .send()
            .await
            .unwrap();
    }
    nodes[0].kill(); // at once: no time for asynchronous replication
    for client in &clients[1..] {
        for i in 0..50 {
            let found = (client
                .get_item()
                .table_name(&table)
                .key("p", s(&format!("k{i}"))))
            .consistent_read(true)
            .send()
            .await
            .expect("a strongly consistent read with two servers of three");
            assert!(found.item().is_some(), "k{i} was acknowledged");
        }
    }
    let row = item(&[("p", s("after")), ("v", n("1"))]);
    clients[1]
        .put_item()
        .table_name(&table)
        .set_item(Some(row))
        .send()
        .await
        .expect("two of three still write");
}

#[tokio::test]
async fn a_replica_added_to_100000_items_under_writes_ends_identical() {
    let _heavy = util::heavy_test().await;
    let nodes = cluster(2);
    let (east, west) = (nodes[0].client(), nodes[1].client());
    let table = util::table_s(&east).await;
    fill(&east, &table, 100_000).await;
    let until = Instant::now() + Duration::from_secs(3600);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (client, table, stop) = (east.clone(), table.clone(), stop.clone());
        tokio::spawn(async move {
            let mut n = 0u64;
            while !stop.load(std::sync::atomic::Ordering::SeqCst) && Instant::now() < until {
                let row = item(&[
                    ("p", s(&format!("item{}", (n * 7919) % 120_000))),
                    ("w", s("live")),
                ]);
                client
                    .put_item()
                    .table_name(&table)
                    .set_item(Some(row))
                    .send()
                    .await
                    .unwrap();
                n += 1;
            }
            n
        })
    };
    add_replica(&east, &table, REGIONS[1]).await;
    wait_replica_active(&east, &table, REGIONS[1]).await;
    stop.store(true, std::sync::atomic::Ordering::SeqCst);
    assert!(writer.await.unwrap() > 0);
    let items = wait_converged(&[&east, &west], &table).await;
    assert!(items.len() >= 100_000);
    assert_eq!(contents(&west, &table).await.len(), items.len());
}

/// `count` items written with BatchWriteItem, eight batches at a time.
async fn fill(client: &Client, table: &str, count: usize) {
    let batches: Vec<Vec<usize>> = (0..count)
        .collect::<Vec<_>>()
        .chunks(25)
        .map(<[usize]>::to_vec)
        .collect();
    for wave in batches.chunks(8) {
        let calls = wave.iter().map(|batch| {
            let requests: Vec<WriteRequest> = (batch.iter())
                .map(|i| {
                    let row = item(&[("p", s(&format!("item{i}"))), ("v", n(&i.to_string()))]);
                    let put = PutRequest::builder().set_item(Some(row)).build().unwrap();
                    WriteRequest::builder().put_request(put).build()
                })
                .collect();
            client
                .batch_write_item()
                .request_items(table, requests)
                .send()
        });
        for answer in futures::future::join_all(calls).await {
            let answer = answer.expect("BatchWriteItem succeeds");
            assert!(answer.unprocessed_items().is_none_or(|u| u.is_empty()));
        }
    }
}
