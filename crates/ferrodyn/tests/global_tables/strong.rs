//! Multi-Region strong consistency within one server: groups of three
//! regions (or two and a witness) of the shared server.

use super::{create, form_strong, SETTLE};
use crate::util::{self, client_in_region, endpoint, item, n, s};
use aws_sdk_dynamodb::types::{
    CreateGlobalTableWitnessGroupMemberAction, GlobalTableWitnessGroupUpdate,
    MultiRegionConsistency,
};
use aws_sdk_dynamodb::Client;
use std::collections::HashMap;

const REGIONS: [&str; 3] = ["us-east-1", "us-east-2", "us-west-2"];

fn clients() -> Vec<Client> {
    REGIONS
        .iter()
        .map(|r| client_in_region(endpoint(), r))
        .collect()
}

fn witness(region: &str) -> GlobalTableWitnessGroupUpdate {
    let action = CreateGlobalTableWitnessGroupMemberAction::builder()
        .region_name(region)
        .build()
        .unwrap();
    GlobalTableWitnessGroupUpdate::builder()
        .create(action)
        .build()
}

/// An empty table in us-east-1 made an MRSC group with us-east-2 and us-west-2.
async fn strong_table(clients: &[Client]) -> String {
    let table = util::table_s(&clients[0]).await;
    form_strong(&clients[0], &table, &REGIONS[1..]).await;
    table
}

async fn strong_get(
    client: &Client,
    table: &str,
    key: &str,
) -> Option<HashMap<String, aws_sdk_dynamodb::types::AttributeValue>> {
    let out = (client
        .get_item()
        .table_name(table)
        .key("p", s(key))
        .consistent_read(true))
    .send()
    .await
    .expect("a strongly consistent GetItem succeeds");
    out.item().cloned()
}

#[tokio::test]
async fn a_strongly_consistent_read_in_any_region_sees_the_acknowledged_write() {
    let clients = clients();
    let table = strong_table(&clients).await;
    let described = clients[1]
        .describe_table()
        .table_name(&table)
        .send()
        .await
        .unwrap();
    let described = described.table().unwrap();
    assert_eq!(
        described.multi_region_consistency(),
        Some(&MultiRegionConsistency::Strong)
    );
    assert_eq!(described.replicas().len(), 2);
    for round in 0..30 {
        let writer = &clients[round % 3];
        let row = item(&[("p", s("x")), ("v", n(&round.to_string()))]);
        writer
            .put_item()
            .table_name(&table)
            .set_item(Some(row))
            .send()
            .await
            .unwrap();
        for reader in &clients {
            let found = strong_get(reader, &table, "x")
                .await
                .expect("the item is there");
            assert_eq!(util::get_n(&found, "v"), round as i64, "no wait needed");
        }
    }
    let counted = (clients[2].query().table_name(&table).consistent_read(true))
        .key_condition_expression("p = :p")
        .expression_attribute_values(":p", s("x"))
        .send()
        .await
        .unwrap();
    assert_eq!(counted.count(), 1);
}

#[tokio::test]
async fn a_witness_counts_for_the_majority_and_serves_no_request() {
    let clients = clients();
    let table = util::table_s(&clients[0]).await;
    (clients[0].update_table().table_name(&table))
        .replica_updates(create(REGIONS[1]))
        .global_table_witness_updates(witness(REGIONS[2]))
        .multi_region_consistency(MultiRegionConsistency::Strong)
        .send()
        .await
        .expect("two replicas and a witness form");
    let described = clients[0]
        .describe_table()
        .table_name(&table)
        .send()
        .await
        .unwrap();
    let witnesses = described.table().unwrap().global_table_witnesses().to_vec();
    assert_eq!(witnesses.len(), 1);
    assert_eq!(witnesses[0].region_name(), Some(REGIONS[2]));
    let hidden = clients[2].describe_table().table_name(&table).send().await;
    assert_eq!(
        util::service_error(hidden).code,
        "ResourceNotFoundException"
    );
    let listed = clients[2].list_tables().send().await.unwrap();
    assert!(!listed.table_names().contains(&table));
    let row = item(&[("p", s("w")), ("v", n("1"))]);
    clients[1]
        .put_item()
        .table_name(&table)
        .set_item(Some(row))
        .send()
        .await
        .unwrap();
    assert!(strong_get(&clients[0], &table, "w").await.is_some());
}

#[tokio::test]
async fn what_strong_consistency_does_not_support_is_refused() {
    let clients = clients();
    // Not empty.
    let full = util::table_s(&clients[0]).await;
    let row = item(&[("p", s("a"))]);
    clients[0]
        .put_item()
        .table_name(&full)
        .set_item(Some(row))
        .send()
        .await
        .unwrap();
    let refused = (clients[0].update_table().table_name(&full))
        .replica_updates(create(REGIONS[1]))
        .replica_updates(create(REGIONS[2]))
        .multi_region_consistency(MultiRegionConsistency::Strong)
        .send()
        .await;
    assert_eq!(util::service_error(refused).code, "ValidationException");
    // Two regions only.
    let table = util::table_s(&clients[0]).await;
    let two = (clients[0].update_table().table_name(&table))
        .replica_updates(create(REGIONS[1]))
        .multi_region_consistency(MultiRegionConsistency::Strong)
        .send()
        .await;
    assert_eq!(util::service_error(two).code, "ValidationException");
    let table = strong_table(&clients).await;
    let get = aws_sdk_dynamodb::types::Get::builder()
        .table_name(&table)
        .key("p", s("a"))
        .build()
        .unwrap();
    let transaction = aws_sdk_dynamodb::types::TransactGetItem::builder()
        .get(get)
        .build();
    let refused = clients[0]
        .transact_get_items()
        .transact_items(transaction)
        .send()
        .await;
    assert_eq!(util::service_error(refused).code, "ValidationException");
    let ttl = aws_sdk_dynamodb::types::TimeToLiveSpecification::builder()
        .enabled(true)
        .attribute_name("expires")
        .build()
        .unwrap();
    let refused = clients[0]
        .update_time_to_live()
        .table_name(&table)
        .time_to_live_specification(ttl)
        .send()
        .await;
    assert_eq!(util::service_error(refused).code, "ValidationException");
    let more = clients[0]
        .update_table()
        .table_name(&table)
        .replica_updates(create("eu-west-1"))
        .send()
        .await;
    assert_eq!(util::service_error(more).code, "ValidationException");
}

#[tokio::test]
async fn concurrent_writes_to_one_item_conflict_and_never_diverge() {
    let clients = clients();
    let table = strong_table(&clients).await;
    let mut tasks = Vec::new();
    for (r, client) in clients.iter().enumerate() {
        for w in 0..3 {
            let (client, table) = (client.clone(), table.clone());
            tasks.push(tokio::spawn(async move {
                let mut outcome = (Vec::new(), 0);
                for i in 0..40 {
                    let value = format!("{r}-{w}-{i}");
                    let row = item(&[("p", s("hot")), ("v", s(&value))]);
                    match client
                        .put_item()
                        .table_name(&table)
                        .set_item(Some(row))
                        .send()
                        .await
                    {
                        Ok(_) => outcome.0.push(value),
                        Err(error) => {
                            assert_eq!(
                                util::service_error::<(), _, _>(Err(error)).code,
                                "ReplicatedWriteConflictException"
                            );
                            outcome.1 += 1;
                        }
                    }
                }
                outcome
            }));
        }
    }
    let (mut acknowledged, mut conflicts) = (Vec::new(), 0);
    for task in tasks {
        let (acked, refused) = task.await.unwrap();
        acknowledged.extend(acked);
        conflicts += refused;
    }
    assert!(
        conflicts > 0,
        "360 concurrent writes of one item met no conflict"
    );
    let mut finals = Vec::new();
    for client in &clients {
        let found = strong_get(client, &table, "hot")
            .await
            .expect("the item exists");
        finals.push(util::get_s(&found, "v").to_string());
    }
    assert!(
        finals.windows(2).all(|w| w[0] == w[1]),
        "replicas diverged: {finals:?}"
    );
    assert!(
        acknowledged.contains(&finals[0]),
        "the survivor was acknowledged"
    );
    let _ = SETTLE;
}
