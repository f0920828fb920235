//! Global tables (engine/src/replication/): replicas made by UpdateTable's
//! ReplicaUpdates, filled online and kept by last-writer-wins replication,
//! in regions of one server ([`eventual`], [`strong`]) and across three
//! servers on loopback ([`servers`]). The legacy 2017.11.29 operations
//! are tested in `global_tables_legacy`.

mod eventual;
mod servers;
mod strong;

use crate::util::{self, poll_until};
use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::operation::update_table::{UpdateTableError, UpdateTableOutput};
use aws_sdk_dynamodb::types::{
    CreateReplicationGroupMemberAction, DeleteReplicationGroupMemberAction, GlobalSecondaryIndex,
    KeyType, MultiRegionConsistency, Projection, ProjectionType, ReplicaStatus,
    ReplicationGroupUpdate, ScalarAttributeType,
};
use aws_sdk_dynamodb::Client;
use std::collections::BTreeMap;
use std::time::Duration;

/// How long replication may take to settle in a test.
pub const SETTLE: Duration = Duration::from_secs(180);

/// A ReplicaUpdates member creating a replica in `region`.
pub fn create(region: &str) -> ReplicationGroupUpdate {
    let action = CreateReplicationGroupMemberAction::builder()
        .region_name(region)
        .build();
    ReplicationGroupUpdate::builder()
        .create(action.expect("a region"))
        .build()
}

/// A ReplicaUpdates member deleting the replica in `region`.
pub fn delete(region: &str) -> ReplicationGroupUpdate {
    let action = DeleteReplicationGroupMemberAction::builder()
        .region_name(region)
        .build();
    ReplicationGroupUpdate::builder()
        .delete(action.expect("a region"))
        .build()
}

/// UpdateTable with one ReplicaUpdates member: its answer.
pub async fn update_replicas(
    client: &Client,
    table: &str,
    update: ReplicationGroupUpdate,
) -> Result<UpdateTableOutput, SdkError<UpdateTableError, HttpResponse>> {
    client
        .update_table()
        .table_name(table)
        .replica_updates(update)
        .send()
        .await
}

/// UpdateTable ReplicaUpdates [{Create: {RegionName: region}}].
pub async fn add_replica(client: &Client, table: &str, region: &str) {
    (update_replicas(client, table, create(region)).await)
        .expect("UpdateTable ReplicaUpdates Create succeeds");
}

/// Makes `client`'s empty table an MRSC group with replicas in `regions`.
pub async fn form_strong(client: &Client, table: &str, regions: &[&str]) {
    let mut request = client.update_table().table_name(table);
    for region in regions {
        request = request.replica_updates(create(region));
    }
    (request.multi_region_consistency(MultiRegionConsistency::Strong))
        .send()
        .await
        .expect("the MRSC group forms");
}

/// Waits until `client`'s table lists `region` as an ACTIVE replica.
pub async fn wait_replica_active(client: &Client, table: &str, region: &str) {
    poll_until("the replica to be ACTIVE", SETTLE, || async {
        let described = client
            .describe_table()
            .table_name(table)
            .send()
            .await
            .ok()?;
        let replicas = described.table()?.replicas().to_vec();
        let replica = replicas.iter().find(|r| r.region_name() == Some(region))?;
        (replica.replica_status() == Some(&ReplicaStatus::Active)).then_some(())
    })
    .await;
}

/// Every item of a table, sorted, as one comparable text (a digest).
pub async fn contents(client: &Client, table: &str) -> Vec<String> {
    let mut items: Vec<String> = (util::scan_all(client, table, None).await.iter())
        .map(|item| {
            // Attributes in name order (the tests' items hold no nested maps).
            let item: BTreeMap<_, _> = util::sorted_sets(item).into_iter().collect();
            format!("{item:?}")
        })
        .collect();
    items.sort();
    items
}

/// Waits until every client's table holds the same items; returns them.
/// A timeout says how the replicas still differ.
pub async fn wait_converged(clients: &[&Client], table: &str) -> Vec<String> {
    let deadline = std::time::Instant::now() + SETTLE;
    loop {
        let first = contents(clients[0], table).await;
        let mut differ = Vec::new();
        for (n, client) in clients.iter().enumerate().skip(1) {
            let other = contents(client, table).await;
            if other != first {
                let only_first = first
                    .iter()
                    .filter(|i| !other.contains(i))
                    .take(2)
                    .collect::<Vec<_>>();
                let only_other = other
                    .iter()
                    .filter(|i| !first.contains(i))
                    .take(2)
                    .collect::<Vec<_>>();
                differ.push(format!(
                    "replica {n}: {} items against {}; only in the first: {only_first:?}; only in it: {only_other:?}",
                    other.len(),
                    first.len()
                ));
            }
        }
        if differ.is_empty() {
            return first;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the replicas still differ: {differ:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A PAY_PER_REQUEST table keyed by `p` with a global index byG on `g`.
pub async fn create_with_index(client: &Client, table: &str) {
    let index = GlobalSecondaryIndex::builder()
        .index_name("byG")
        .key_schema(util::key("g", KeyType::Hash))
        .projection(
            Projection::builder()
                .projection_type(ProjectionType::All)
                .build(),
        )
        .build()
        .unwrap();
    (client.create_table().table_name(table))
        .billing_mode(aws_sdk_dynamodb::types::BillingMode::PayPerRequest)
        .key_schema(util::key("p", KeyType::Hash))
        .attribute_definitions(util::attr_def("p", ScalarAttributeType::S))
        .attribute_definitions(util::attr_def("g", ScalarAttributeType::S))
        .global_secondary_indexes(index)
        .send()
        .await
        .expect("CreateTable succeeds");
}

/// UpdateTable creating global index byG on `g` (projection ALL).
pub async fn add_index_by_g(client: &Client, table: &str) {
    let index = aws_sdk_dynamodb::types::CreateGlobalSecondaryIndexAction::builder()
        .index_name("byG")
        .key_schema(util::key("g", KeyType::Hash))
        .projection(
            Projection::builder()
                .projection_type(ProjectionType::All)
                .build(),
        )
        .build()
        .unwrap();
    let update = aws_sdk_dynamodb::types::GlobalSecondaryIndexUpdate::builder().create(index);
    (client.update_table().table_name(table))
        .attribute_definitions(util::attr_def("g", ScalarAttributeType::S))
        .global_secondary_index_updates(update.build())
        .send()
        .await
        .expect("UpdateTable creates byG");
}

/// A plain table `table` keyed by string `p` in `client`'s region.
pub async fn create_plain(client: &Client, table: &str) {
    (client.create_table().table_name(table))
        .billing_mode(aws_sdk_dynamodb::types::BillingMode::PayPerRequest)
        .key_schema(util::key("p", KeyType::Hash))
        .attribute_definitions(util::attr_def("p", ScalarAttributeType::S))
        .send()
        .await
        .expect("CreateTable succeeds");
}

/// How many other regions DescribeTable lists as replicas of `table`.
pub async fn replica_count(client: &Client, table: &str) -> usize {
    let described = client.describe_table().table_name(table).send().await;
    described.unwrap().table().unwrap().replicas().len()
}

/// The provisioned (read, write) units of a region's replica and of its
/// global index byG.
pub async fn capacity(client: &Client, table: &str) -> [(i64, i64); 2] {
    let described = client
        .describe_table()
        .table_name(table)
        .send()
        .await
        .unwrap();
    let described = described.table().unwrap();
    let index = described.global_secondary_indexes()[0].provisioned_throughput();
    [described.provisioned_throughput(), index].map(|units| {
        let units = units.unwrap();
        let (read, write) = (units.read_capacity_units(), units.write_capacity_units());
        (read.unwrap_or(0), write.unwrap_or(0))
    })
}

/// UpdateTable of the table's and byG's units.
pub async fn set_units(client: &Client, table: &str, (read, write): (i64, i64), switch: bool) {
    let mut request = (client.update_table().table_name(table))
        .provisioned_throughput(units(read, write))
        .global_secondary_index_updates(index_units(read, write));
    if switch {
        request = request.billing_mode(aws_sdk_dynamodb::types::BillingMode::Provisioned);
    }
    request.send().await.unwrap();
}

/// UpdateTable of byG's units alone.
pub async fn set_index_units(client: &Client, table: &str, (read, write): (i64, i64)) {
    (client.update_table().table_name(table))
        .global_secondary_index_updates(index_units(read, write))
        .send()
        .await
        .unwrap();
}

fn units(read: i64, write: i64) -> aws_sdk_dynamodb::types::ProvisionedThroughput {
    aws_sdk_dynamodb::types::ProvisionedThroughput::builder()
        .read_capacity_units(read)
        .write_capacity_units(write)
        .build()
        .unwrap()
}

fn index_units(read: i64, write: i64) -> aws_sdk_dynamodb::types::GlobalSecondaryIndexUpdate {
    let index = aws_sdk_dynamodb::types::UpdateGlobalSecondaryIndexAction::builder()
        .index_name("byG")
        .provisioned_throughput(units(read, write))
        .build()
        .unwrap();
    aws_sdk_dynamodb::types::GlobalSecondaryIndexUpdate::builder()
        .update(index)
        .build()
}
