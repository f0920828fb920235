//! Global tables' legacy (2017.11.29) operations and settings operations
//! through the SDK, on one server holding several regions (a client per
//! region): CreateGlobalTable, UpdateGlobalTable, DescribeGlobalTable,
//! ListGlobalTables, Describe/UpdateGlobalTableSettings,
//! Describe/UpdateTableReplicaAutoScaling, CreateTable's
//! GlobalTableSourceArn and UpdateTable's DisassociationProtectionEnabled
//! and GlobalTableSettingsReplicationMode, with their errors.

use crate::util::{
    assert_error, assert_error_starts, client_in_region, endpoint, item, poll_until, s, unique_name,
};
use crate::util::{service_error, ServerProcess};
use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::operation::update_table_replica_auto_scaling::{
    UpdateTableReplicaAutoScalingError, UpdateTableReplicaAutoScalingOutput,
};
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AutoScalingPolicyUpdate, AutoScalingSettingsUpdate,
    AutoScalingTargetTrackingScalingPolicyConfigurationUpdate, BillingMode, CreateReplicaAction,
    CreateReplicationGroupMemberAction, DeleteReplicaAction, DeleteReplicationGroupMemberAction,
    GlobalTableSettingsReplicationMode, KeySchemaElement, KeyType, ProvisionedThroughput, Replica,
    ReplicaAutoScalingUpdate, ReplicaSettingsUpdate, ReplicaUpdate, ReplicationGroupUpdate,
    ScalarAttributeType, StreamSpecification, StreamViewType,
};
use aws_sdk_dynamodb::types::{
    GlobalTableDescription, GlobalTableGlobalSecondaryIndexSettingsUpdate,
    ReplicaAutoScalingDescription, ReplicaSettingsDescription, TableAutoScalingDescription,
};
use aws_sdk_dynamodb::Client;
use std::time::Duration;

fn region(name: &str) -> Client {
    client_in_region(endpoint(), name)
}

/// Creates table `name` keyed by `key` (S), with a NEW_AND_OLD_IMAGES
/// stream unless `stream` is false; provisioned 5/5 when `units` is set.
async fn table(client: &Client, name: &str, key: &str, stream: bool, units: bool) {
    let mut request = client
        .create_table()
        .table_name(name)
        .key_schema(
            KeySchemaElement::builder()
                .attribute_name(key)
                .key_type(KeyType::Hash)
                .build()
                .unwrap(),
        )
        .attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name(key)
                .attribute_type(ScalarAttributeType::S)
                .build()
                .unwrap(),
        );
    request = if units {
        let units = ProvisionedThroughput::builder()
            .read_capacity_units(5)
            .write_capacity_units(5);
        request.provisioned_throughput(units.build().unwrap())
    } else {
        request.billing_mode(BillingMode::PayPerRequest)
    };
    if stream {
        let spec = StreamSpecification::builder()
            .stream_enabled(true)
            .stream_view_type(StreamViewType::NewAndOldImages);
        request = request.stream_specification(spec.build().unwrap());
    }
    request.send().await.expect("CreateTable succeeds");
}

fn replica(region: &str) -> Replica {
    Replica::builder().region_name(region).build()
}

fn add(region: &str) -> ReplicaUpdate {
    let action = CreateReplicaAction::builder()
        .region_name(region)
        .build()
        .unwrap();
    ReplicaUpdate::builder().create(action).build()
}

fn remove(region: &str) -> ReplicaUpdate {
    let action = DeleteReplicaAction::builder()
        .region_name(region)
        .build()
        .unwrap();
    ReplicaUpdate::builder().delete(action).build()
}

fn regions_of(description: &GlobalTableDescription) -> Vec<String> {
    let mut regions: Vec<String> = (description.replication_group())
        .iter()
        .map(|r| r.region_name().unwrap_or_default().to_string())
        .collect();
    regions.sort();
    regions
}

/// Tables `name` (on demand, streams on) in `regions`, joined by
/// CreateGlobalTable sent through the first region's client.
async fn legacy_global_table(name: &str, regions: &[&str]) -> GlobalTableDescription {
    for r in regions {
        table(&region(r), name, "pk", true, false).await;
    }
    let mut request = region(regions[0])
        .create_global_table()
        .global_table_name(name);
    for r in regions {
        request = request.replication_group(replica(r));
    }
    let created = request.send().await.expect("CreateGlobalTable succeeds");
    created.global_table_description().unwrap().clone()
}

#[tokio::test]
async fn create_global_table_joins_existing_tables_and_describes_the_group() {
    let name = unique_name("gtl");
    let description = legacy_global_table(&name, &["us-east-1", "eu-west-1"]).await;
    assert_eq!(regions_of(&description), ["eu-west-1", "us-east-1"]);
    let arn = format!("arn:aws:dynamodb::000000000000:global-table/{name}");
    assert_eq!(description.global_table_arn(), Some(arn.as_str()));
    assert_eq!(description.global_table_name(), Some(name.as_str()));
    let status = description.global_table_status().map(|s| s.as_str());
    assert_eq!(status, Some("ACTIVE"));
    assert!(description.creation_date_time().is_some());
    let statuses: Vec<_> = (description.replication_group().iter())
        .map(|r| r.replica_status().map(|s| s.as_str()))
        .collect();
    assert_eq!(statuses, [Some("ACTIVE"), Some("ACTIVE")]);

    let west = region("eu-west-1");
    let described = west
        .describe_global_table()
        .global_table_name(&name)
        .send()
        .await;
    let described = described.expect("DescribeGlobalTable succeeds in another region");
    assert_eq!(described.global_table_description(), Some(&description));
    let table = west
        .describe_table()
        .table_name(&name)
        .send()
        .await
        .unwrap();
    let table = table.table().unwrap();
    assert_eq!(table.global_table_version(), Some("2017.11.29"));
    assert_eq!(table.replicas()[0].region_name(), Some("us-east-1"));
}

#[tokio::test]
async fn writes_to_a_legacy_global_table_reach_every_region() {
    let name = unique_name("gtl");
    legacy_global_table(&name, &["us-east-1", "eu-west-1"]).await;
    let (east, west) = (region("us-east-1"), region("eu-west-1"));
    let row = item(&[("pk", s("a"))]);
    east.put_item()
        .table_name(&name)
        .set_item(Some(row))
        .send()
        .await
        .unwrap();
    poll_until(
        "the item replicated to eu-west-1",
        Duration::from_secs(10),
        || async {
            let got = west
                .get_item()
                .table_name(&name)
                .key("pk", s("a"))
                .send()
                .await
                .ok()?;
            got.item().map(|_| ())
        },
    )
    .await;
}

#[tokio::test]
async fn list_global_tables_filters_by_region() {
    let name = unique_name("gtl");
    legacy_global_table(&name, &["us-east-1", "eu-west-1"]).await;
    let listed = |region_name: Option<&str>| {
        let name = name.clone();
        let request = region("ap-south-1")
            .list_global_tables()
            .set_region_name(region_name.map(str::to_string));
        async move {
            let page = request.send().await.unwrap();
            let found = page
                .global_tables()
                .iter()
                .find(|g| g.global_table_name() == Some(&name))
                .cloned();
            found.map(|g| g.replication_group().len())
        }
    };
    assert_eq!(listed(None).await, Some(2));
    assert_eq!(listed(Some("eu-west-1")).await, Some(2));
    assert_eq!(listed(Some("ap-south-1")).await, None);
}

#[tokio::test]
async fn update_global_table_adds_and_removes_regions() {
    let name = unique_name("gtl");
    legacy_global_table(&name, &["us-east-1", "eu-west-1"]).await;
    let (east, south) = (region("us-east-1"), region("ap-south-1"));
    table(&south, &name, "pk", true, false).await;
    let update = || east.update_global_table().global_table_name(&name);
    let added = update()
        .replica_updates(add("ap-south-1"))
        .send()
        .await
        .unwrap();
    let added = added.global_table_description().unwrap();
    assert_eq!(regions_of(added), ["ap-south-1", "eu-west-1", "us-east-1"]);
    let again = update().replica_updates(add("ap-south-1")).send().await;
    let exists = format!("Replica already exists: Global table '{name}' already has a replica in region: 'ap-south-1'.");
    assert_error(again, "ReplicaAlreadyExistsException", &exists);
    let missing = update().replica_updates(remove("sa-east-1")).send().await;
    let not_found =
        format!("Replica not found: Global table '{name}' has no replica in region: 'sa-east-1'.");
    assert_error(missing, "ReplicaNotFoundException", &not_found);
    let absent = update().replica_updates(add("sa-east-1")).send().await;
    let no_table = format!("Table not found: Table: '{name}' not found in region: 'sa-east-1'.");
    assert_error(absent, "TableNotFoundException", &no_table);

    let removed = update()
        .replica_updates(remove("ap-south-1"))
        .send()
        .await
        .unwrap();
    let removed = removed.global_table_description().unwrap();
    assert_eq!(regions_of(removed), ["eu-west-1", "us-east-1"]);
    let left = south.describe_table().table_name(&name).send().await;
    let left = left.expect("the removed region keeps its table, as a regional table");
    assert_eq!(left.table().unwrap().global_table_version(), None);
}

#[tokio::test]
async fn deleting_a_replica_table_leaves_a_global_table_of_the_others() {
    let name = unique_name("gtl");
    legacy_global_table(&name, &["us-east-1", "eu-west-1"]).await;
    region("eu-west-1")
        .delete_table()
        .table_name(&name)
        .send()
        .await
        .unwrap();
    let east = region("us-east-1");
    let described = east
        .describe_global_table()
        .global_table_name(&name)
        .send()
        .await;
    let described = described.expect("a global table of one region remains");
    assert_eq!(
        regions_of(described.global_table_description().unwrap()),
        ["us-east-1"]
    );
}

#[tokio::test]
async fn update_global_table_takes_one_action_per_member() {
    let east = region("us-east-1");
    let both = ReplicaUpdate::builder()
        .create(
            CreateReplicaAction::builder()
                .region_name("eu-west-1")
                .build()
                .unwrap(),
        )
        .delete(
            DeleteReplicaAction::builder()
                .region_name("eu-west-1")
                .build()
                .unwrap(),
        )
        .build();
    let result = east
        .update_global_table()
        .global_table_name(unique_name("gtl"))
        .replica_updates(both)
        .send()
        .await;
    assert_error(result, "ValidationException", "One or more parameter values were invalid: exactly one of Create or Delete must be given in each ReplicaUpdates member");
}

#[tokio::test]
async fn list_global_tables_pages_by_name() {
    let east = region("us-east-1");
    let prefix = unique_name("gtp");
    for n in 0..3 {
        let name = format!("{prefix}-{n}");
        table(&east, &name, "pk", true, false).await;
        east.create_global_table()
            .global_table_name(&name)
            .replication_group(replica("us-east-1"))
            .send()
            .await
            .unwrap();
    }
    let start = format!("{prefix}-0");
    let page = east
        .list_global_tables()
        .exclusive_start_global_table_name(&start)
        .limit(1)
        .send()
        .await
        .unwrap();
    let names: Vec<_> = page
        .global_tables()
        .iter()
        .filter_map(|g| g.global_table_name())
        .collect();
    assert_eq!(names, [format!("{prefix}-1")]);
    assert_eq!(
        page.last_evaluated_global_table_name(),
        Some(format!("{prefix}-1").as_str())
    );
    let zero = east.list_global_tables().limit(0).send().await;
    assert_error(zero, "ValidationException", "1 validation error detected: Value '0' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1");
}

/// CreateGlobalTable of a new table in us-east-1 and eu-west-1, after
/// `east` and `west` made the tables (each: key, stream, provisioned),
/// refused with a ValidationException: the table's name and the message.
async fn refused_pair(east: (&str, bool, bool), west: (&str, bool, bool)) -> (String, String) {
    let name = unique_name("gta");
    table(&region("us-east-1"), &name, east.0, east.1, east.2).await;
    table(&region("eu-west-1"), &name, west.0, west.1, west.2).await;
    let request = region("us-east-1")
        .create_global_table()
        .global_table_name(&name);
    let request = request
        .replication_group(replica("us-east-1"))
        .replication_group(replica("eu-west-1"));
    let error = service_error(request.send().await);
    assert_eq!(error.code, "ValidationException", "{}", error.message);
    (name, error.message)
}

#[tokio::test]
async fn create_global_table_needs_streams_with_both_images() {
    let (name, message) = refused_pair(("pk", true, false), ("pk", false, false)).await;
    let expected = format!("Table: '{name}' in region: 'eu-west-1' must have DynamoDB Streams enabled with StreamViewType NEW_AND_OLD_IMAGES to be part of a global table");
    assert_eq!(message, expected);
}

#[tokio::test]
async fn create_global_table_needs_the_same_key_schema_and_capacity() {
    let (name, message) = refused_pair(("pk", true, false), ("id", true, false)).await;
    let expected = format!("Table: '{name}' in region: 'eu-west-1' does not have the same key schema as the other replicas of the global table");
    assert_eq!(message, expected);
    let (name, message) = refused_pair(("pk", true, true), ("pk", true, false)).await;
    let expected = format!("Table: '{name}' in region: 'eu-west-1' does not have the same billing mode as the other replicas of the global table");
    assert_eq!(message, expected);
}

#[tokio::test]
async fn create_global_table_needs_empty_tables_and_a_new_name() {
    let (east, west) = (region("us-east-1"), region("eu-west-1"));
    let name = unique_name("gta");
    table(&east, &name, "pk", true, false).await;
    table(&west, &name, "pk", true, false).await;
    let row = item(&[("pk", s("x"))]);
    west.put_item()
        .table_name(&name)
        .set_item(Some(row))
        .send()
        .await
        .unwrap();
    let create = || {
        let request = east.create_global_table().global_table_name(&name);
        request
            .replication_group(replica("us-east-1"))
            .replication_group(replica("eu-west-1"))
    };
    let full = format!("Table: '{name}' in region: 'eu-west-1' is not empty: a table must hold no items to be added to a global table");
    assert_error(create().send().await, "ValidationException", &full);
    west.delete_item()
        .table_name(&name)
        .key("pk", s("x"))
        .send()
        .await
        .unwrap();
    create().send().await.expect("empty now");
    let exists = format!("Global table with this name already exists: {name}");
    assert_error(
        create().send().await,
        "GlobalTableAlreadyExistsException",
        &exists,
    );
}

#[tokio::test]
async fn create_global_table_needs_the_table_in_every_region() {
    let (east, name) = (region("us-east-1"), unique_name("gta"));
    table(&east, &name, "pk", true, false).await;
    let request = east.create_global_table().global_table_name(&name);
    let result = request
        .replication_group(replica("us-east-1"))
        .replication_group(replica("eu-west-1"))
        .send()
        .await;
    let message = format!("Table not found: Table: '{name}' not found in region: 'eu-west-1'.");
    assert_error(result, "TableNotFoundException", &message);
    let twice = east
        .create_global_table()
        .global_table_name(&name)
        .replication_group(replica("us-east-1"))
        .replication_group(replica("us-east-1"));
    assert_error(
        twice.send().await,
        "ValidationException",
        "ReplicationGroup must not name a region twice",
    );
    let none = east
        .create_global_table()
        .global_table_name(&name)
        .set_replication_group(Some(vec![]));
    assert_error(
        none.send().await,
        "ValidationException",
        "ReplicationGroup must name at least one region",
    );
}

#[tokio::test]
async fn a_global_table_that_does_not_exist_is_not_found() {
    let east = region("us-east-1");
    let name = unique_name("gtn");
    let message =
        format!("Global table not found: Global table with name: '{name}' does not exist.");
    let described = east
        .describe_global_table()
        .global_table_name(&name)
        .send()
        .await;
    assert_error(described, "GlobalTableNotFoundException", &message);
    let updated = east
        .update_global_table()
        .global_table_name(&name)
        .replica_updates(add("eu-west-1"))
        .send()
        .await;
    assert_error(updated, "GlobalTableNotFoundException", &message);
    let settings = east
        .describe_global_table_settings()
        .global_table_name(&name)
        .send()
        .await;
    assert_error(settings, "GlobalTableNotFoundException", &message);
    let bad = east
        .describe_global_table()
        .global_table_name("a")
        .send()
        .await;
    assert_error_starts(
        bad,
        "ValidationException",
        "1 validation error detected: Value 'a' at 'globalTableName' failed to satisfy constraint",
    );
}

fn write_auto_scaling(min: i64, max: i64) -> AutoScalingSettingsUpdate {
    let target = AutoScalingTargetTrackingScalingPolicyConfigurationUpdate::builder()
        .target_value(70.0)
        .build()
        .unwrap();
    let policy = AutoScalingPolicyUpdate::builder()
        .policy_name("writes")
        .target_tracking_scaling_policy_configuration(target)
        .build();
    AutoScalingSettingsUpdate::builder()
        .minimum_units(min)
        .maximum_units(max)
        .scaling_policy_update(policy)
        .build()
}

/// A 2017.11.29 global table of provisioned (5/5) tables in us-east-1
/// and eu-west-1.
async fn provisioned_global_table(name: &str) {
    let east = region("us-east-1");
    table(&east, name, "pk", true, true).await;
    table(&region("eu-west-1"), name, "pk", true, true).await;
    let request = east.create_global_table().global_table_name(name);
    let request = request
        .replication_group(replica("us-east-1"))
        .replication_group(replica("eu-west-1"));
    request.send().await.expect("CreateGlobalTable succeeds");
}

fn read_units(region: &str, units: i64) -> ReplicaSettingsUpdate {
    let update = ReplicaSettingsUpdate::builder().region_name(region);
    update
        .replica_provisioned_read_capacity_units(units)
        .build()
        .unwrap()
}

/// (read, write) units of each region's ReplicaSettingsDescription.
fn units_by_region(
    settings: &[ReplicaSettingsDescription],
) -> Vec<(String, Option<i64>, Option<i64>)> {
    let mut units: Vec<_> = (settings.iter())
        .map(|r| {
            let read = r.replica_provisioned_read_capacity_units();
            (
                r.region_name().to_string(),
                read,
                r.replica_provisioned_write_capacity_units(),
            )
        })
        .collect();
    units.sort();
    units
}

#[tokio::test]
async fn global_table_settings_are_applied_in_every_region_and_shown() {
    let name = unique_name("gts");
    provisioned_global_table(&name).await;
    let (east, west) = (region("us-east-1"), region("eu-west-1"));
    let before = east
        .describe_global_table_settings()
        .global_table_name(&name)
        .send()
        .await
        .unwrap();
    assert_eq!(before.global_table_name(), Some(name.as_str()));
    let expected = [
        ("eu-west-1".to_string(), Some(5), Some(5)),
        ("us-east-1".to_string(), Some(5), Some(5)),
    ];
    assert_eq!(units_by_region(before.replica_settings()), expected);

    let after = east
        .update_global_table_settings()
        .global_table_name(&name)
        .global_table_provisioned_write_capacity_units(10)
        .global_table_provisioned_write_capacity_auto_scaling_settings_update(write_auto_scaling(
            5, 50,
        ))
        .replica_settings_update(read_units("eu-west-1", 7))
        .send()
        .await
        .expect("UpdateGlobalTableSettings succeeds");
    let expected = [
        ("eu-west-1".to_string(), Some(7), Some(10)),
        ("us-east-1".to_string(), Some(5), Some(10)),
    ];
    assert_eq!(units_by_region(after.replica_settings()), expected);
    for replica in after.replica_settings() {
        let auto = replica
            .replica_provisioned_write_capacity_auto_scaling_settings()
            .unwrap();
        assert_eq!(
            (auto.minimum_units(), auto.maximum_units()),
            (Some(5), Some(50))
        );
        assert_eq!(auto.scaling_policies()[0].policy_name(), Some("writes"));
    }
    let table = west
        .describe_table()
        .table_name(&name)
        .send()
        .await
        .unwrap();
    let units = table.table().unwrap().provisioned_throughput().unwrap();
    assert_eq!(
        (units.read_capacity_units(), units.write_capacity_units()),
        (Some(7), Some(10))
    );
}

#[tokio::test]
async fn global_table_billing_mode_switches_in_every_region() {
    let name = unique_name("gts");
    provisioned_global_table(&name).await;
    let east = region("us-east-1");
    let update = || east.update_global_table_settings().global_table_name(&name);
    let switched = update()
        .global_table_billing_mode(BillingMode::PayPerRequest)
        .send()
        .await
        .unwrap();
    let modes: Vec<_> = (switched.replica_settings().iter())
        .map(|r| {
            r.replica_billing_mode_summary()
                .and_then(|b| b.billing_mode())
                .cloned()
        })
        .collect();
    assert_eq!(
        modes,
        [
            Some(BillingMode::PayPerRequest),
            Some(BillingMode::PayPerRequest)
        ]
    );

    let back = update()
        .global_table_billing_mode(BillingMode::Provisioned)
        .global_table_provisioned_write_capacity_units(4);
    let result = back.clone().send().await;
    let needed = "ReplicaProvisionedReadCapacityUnits must be given to switch the replica in region us-east-1 to PROVISIONED billing mode";
    assert_error(result, "ValidationException", needed);
    let back = back
        .replica_settings_update(read_units("us-east-1", 3))
        .replica_settings_update(read_units("eu-west-1", 2));
    let done = back
        .send()
        .await
        .expect("every unit given, the tables switch back");
    let expected = [
        ("eu-west-1".to_string(), Some(2), Some(4)),
        ("us-east-1".to_string(), Some(3), Some(4)),
    ];
    assert_eq!(units_by_region(done.replica_settings()), expected);
}

#[tokio::test]
async fn update_global_table_settings_refuses_what_cannot_apply() {
    let name = unique_name("gts");
    provisioned_global_table(&name).await;
    let east = region("us-east-1");
    let update = || east.update_global_table_settings().global_table_name(&name);
    let elsewhere = update()
        .replica_settings_update(read_units("sa-east-1", 7))
        .send()
        .await;
    let not_found =
        format!("Replica not found: Global table '{name}' has no replica in region: 'sa-east-1'.");
    assert_error(elsewhere, "ReplicaNotFoundException", &not_found);
    let index = GlobalTableGlobalSecondaryIndexSettingsUpdate::builder()
        .index_name("nope")
        .provisioned_write_capacity_units(3);
    let result = update()
        .global_table_global_secondary_index_settings_update(index.build().unwrap())
        .send()
        .await;
    let no_index =
        format!("Index not found: table {name} has no global secondary index named nope");
    assert_error(result, "IndexNotFoundException", &no_index);
    let on_demand = update()
        .global_table_billing_mode(BillingMode::PayPerRequest)
        .global_table_provisioned_write_capacity_units(3);
    assert_error_starts(
        on_demand.send().await,
        "ValidationException",
        "Provisioned capacity units cannot be set for the replica in region",
    );
    let inverted = update()
        .global_table_provisioned_write_capacity_units(8)
        .global_table_provisioned_write_capacity_auto_scaling_settings_update(write_auto_scaling(
            60, 50,
        ));
    let message = "Auto scaling MinimumUnits (60) cannot be greater than MaximumUnits (50)";
    assert_error(inverted.send().await, "ValidationException", message);
    let after = east
        .describe_global_table_settings()
        .global_table_name(&name)
        .send()
        .await;
    let after = after.unwrap();
    let unchanged = [
        ("eu-west-1".to_string(), Some(5), Some(5)),
        ("us-east-1".to_string(), Some(5), Some(5)),
    ];
    assert_eq!(
        units_by_region(after.replica_settings()),
        unchanged,
        "nothing half applied"
    );
    let zero = update()
        .global_table_provisioned_write_capacity_units(0)
        .send()
        .await;
    let message = "1 validation error detected: Value '0' at 'globalTableProvisionedWriteCapacityUnits' failed to satisfy constraint: Member must have value greater than or equal to 1";
    assert_error(zero, "ValidationException", message);
    let nothing = update().send().await;
    assert_error(
        nothing,
        "ValidationException",
        "UpdateGlobalTableSettings needs at least one setting to change",
    );
}

/// A 2019.11.21 global table of `name` (provisioned 5/5) in us-east-1 with
/// a replica in `other`.
async fn current_global_table(east: &Client, name: &str, other: &str) {
    table(east, name, "pk", true, true).await;
    let create = CreateReplicationGroupMemberAction::builder()
        .region_name(other)
        .build()
        .unwrap();
    east.update_table()
        .table_name(name)
        .replica_updates(ReplicationGroupUpdate::builder().create(create).build())
        .send()
        .await
        .expect("a replica is added");
    // ACTIVE before the test goes on: its figures then hold still.
    crate::global_tables::wait_replica_active(east, name, other).await;
}

/// The ReplicaAutoScalingDescription of `region` in `description`.
fn auto_of(
    description: &TableAutoScalingDescription,
    region: &str,
) -> ReplicaAutoScalingDescription {
    let found = description
        .replicas()
        .iter()
        .find(|r| r.region_name() == Some(region));
    found
        .cloned()
        .unwrap_or_else(|| panic!("no replica in {region}"))
}

#[tokio::test]
async fn replica_auto_scaling_is_stored_and_shown() {
    let (east, name) = (region("us-east-1"), unique_name("gtr"));
    current_global_table(&east, &name, "eu-central-1").await;
    let read = AutoScalingSettingsUpdate::builder()
        .minimum_units(2)
        .maximum_units(20)
        .build();
    let replica = ReplicaAutoScalingUpdate::builder().region_name("eu-central-1");
    let replica = replica
        .replica_provisioned_read_capacity_auto_scaling_update(read)
        .build()
        .unwrap();
    let request = east.update_table_replica_auto_scaling().table_name(&name);
    let request = request.provisioned_write_capacity_auto_scaling_update(write_auto_scaling(5, 40));
    let updated = request
        .replica_updates(replica)
        .send()
        .await
        .expect("UpdateTableReplicaAutoScaling succeeds");
    let description = updated.table_auto_scaling_description().unwrap();
    assert_eq!(description.table_name(), Some(name.as_str()));
    let central = auto_of(description, "eu-central-1");
    let read = central
        .replica_provisioned_read_capacity_auto_scaling_settings()
        .unwrap();
    assert_eq!(
        (read.minimum_units(), read.maximum_units()),
        (Some(2), Some(20))
    );
    let own = auto_of(description, "us-east-1");
    assert_eq!(
        own.replica_provisioned_read_capacity_auto_scaling_settings(),
        None
    );
    let write = own
        .replica_provisioned_write_capacity_auto_scaling_settings()
        .unwrap();
    assert_eq!(write.maximum_units(), Some(40));
    let policy = &write.scaling_policies()[0];
    let target = policy
        .target_tracking_scaling_policy_configuration()
        .unwrap();
    assert_eq!(
        (policy.policy_name(), target.target_value()),
        (Some("writes"), 70.0)
    );

    let other = region("eu-central-1")
        .describe_table_replica_auto_scaling()
        .table_name(&name);
    let other = other.send().await.unwrap();
    let shown = auto_of(
        other.table_auto_scaling_description().unwrap(),
        "eu-central-1",
    );
    assert_eq!(shown, central, "every region shows the same settings");
}

/// UpdateTableReplicaAutoScaling of table `name`'s write auto scaling.
async fn update_write_auto_scaling(
    client: &Client,
    name: &str,
) -> Result<
    UpdateTableReplicaAutoScalingOutput,
    SdkError<UpdateTableReplicaAutoScalingError, HttpResponse>,
> {
    let request = client.update_table_replica_auto_scaling().table_name(name);
    let request = request.provisioned_write_capacity_auto_scaling_update(write_auto_scaling(5, 40));
    request.send().await
}

#[tokio::test]
async fn replica_auto_scaling_needs_a_provisioned_global_table() {
    let east = region("us-east-1");
    let plain = unique_name("gtr");
    table(&east, &plain, "pk", true, true).await;
    let result = update_write_auto_scaling(&east, &plain).await;
    let message = format!("Table {plain} is not a global table: Ferrodyn keeps replica auto scaling settings in a global table's replication group");
    assert_error(result, "ValidationException", &message);
    let shown = east
        .describe_table_replica_auto_scaling()
        .table_name(&plain)
        .send()
        .await
        .unwrap();
    let shown = shown.table_auto_scaling_description().unwrap();
    assert_eq!(
        shown.replicas().len(),
        1,
        "a plain table shows its own region"
    );

    let on_demand = unique_name("gtr");
    legacy_global_table(&on_demand, &["us-east-1"]).await;
    let result = update_write_auto_scaling(&east, &on_demand).await;
    let message = format!("Auto scaling settings need a table in PROVISIONED billing mode: table {on_demand} is PAY_PER_REQUEST");
    assert_error(result, "ValidationException", &message);
    let missing = east
        .describe_table_replica_auto_scaling()
        .table_name(unique_name("gtr"))
        .send()
        .await;
    assert_error_starts(
        missing,
        "ResourceNotFoundException",
        "Requested resource not found",
    );
}

fn source_arn(account: &str, name: &str) -> String {
    format!("arn:aws:dynamodb:us-east-1:{account}:table/{name}")
}

#[tokio::test]
async fn create_table_with_a_source_arn_makes_a_replica() {
    let (east, north, name) = (
        region("us-east-1"),
        region("eu-north-1"),
        unique_name("gtsrc"),
    );
    table(&east, &name, "pk", false, false).await;
    let request = north
        .create_table()
        .table_name(&name)
        .global_table_source_arn(source_arn("000000000000", &name));
    let request =
        request.global_table_settings_replication_mode(GlobalTableSettingsReplicationMode::Enabled);
    let created = request
        .send()
        .await
        .expect("CreateTable with GlobalTableSourceArn succeeds");
    let table = created.table_description().unwrap();
    let mode = table.global_table_settings_replication_mode();
    assert_eq!(mode, Some(&GlobalTableSettingsReplicationMode::Enabled));
    assert_eq!(table.replicas()[0].region_name(), Some("us-east-1"));
    assert_eq!(table.key_schema()[0].attribute_name(), "pk");
    let source = east
        .describe_table()
        .table_name(&name)
        .send()
        .await
        .unwrap();
    let source = source.table().unwrap();
    assert_eq!(source.replicas()[0].region_name(), Some("eu-north-1"));
    let view = source
        .stream_specification()
        .and_then(|s| s.stream_view_type());
    assert_eq!(
        view,
        Some(&StreamViewType::NewAndOldImages),
        "the source got the replication stream"
    );
}

#[tokio::test]
async fn create_table_with_a_source_arn_refuses_what_ferrodyn_cannot_do() {
    let (north, name) = (region("eu-north-1"), unique_name("gtsrc"));
    let arn = source_arn("000000000000", &name);
    let create = || north.create_table().table_name(&name);
    let enabled = GlobalTableSettingsReplicationMode::Enabled;
    let other = create()
        .global_table_source_arn(source_arn("111122223333", &name))
        .global_table_settings_replication_mode(enabled.clone());
    let message = format!("Invalid GlobalTableSourceArn {}: Ferrodyn holds one account (000000000000): a source table of account 111122223333 cannot be reached", source_arn("111122223333", &name));
    assert_error(other.send().await, "ValidationException", &message);
    let no_mode = create().global_table_source_arn(&arn).send().await;
    let message =
        "GlobalTableSettingsReplicationMode must be ENABLED when GlobalTableSourceArn is given";
    assert_error(no_mode, "ValidationException", message);
    let mode_alone = create()
        .global_table_settings_replication_mode(GlobalTableSettingsReplicationMode::Disabled);
    let message = "GlobalTableSettingsReplicationMode can only be given with GlobalTableSourceArn";
    assert_error_starts(mode_alone.send().await, "ValidationException", message);
    let with_billing = create()
        .global_table_source_arn(&arn)
        .global_table_settings_replication_mode(enabled.clone());
    let with_billing = with_billing
        .billing_mode(BillingMode::PayPerRequest)
        .send()
        .await;
    let message = "A replica created with GlobalTableSourceArn takes its key schema";
    assert_error_starts(with_billing, "ValidationException", message);
    let missing = create()
        .global_table_source_arn(&arn)
        .global_table_settings_replication_mode(enabled);
    let message = format!("The source table of GlobalTableSourceArn {arn} does not exist");
    assert_error(missing.send().await, "ValidationException", &message);
}

fn delete_member(region: &str) -> ReplicationGroupUpdate {
    let delete = DeleteReplicationGroupMemberAction::builder()
        .region_name(region)
        .build()
        .unwrap();
    ReplicationGroupUpdate::builder().delete(delete).build()
}

#[tokio::test]
async fn disassociation_protection_keeps_a_replica_in_its_group() {
    let (east, west, name) = (
        region("us-east-1"),
        region("us-west-2"),
        unique_name("gtdp"),
    );
    current_global_table(&east, &name, "us-west-2").await;
    let on = west
        .update_table()
        .table_name(&name)
        .disassociation_protection_enabled(true)
        .send()
        .await
        .unwrap();
    assert_eq!(
        on.table_description()
            .unwrap()
            .disassociation_protection_enabled(),
        Some(true)
    );
    let east_view = east
        .describe_table()
        .table_name(&name)
        .send()
        .await
        .unwrap();
    assert_eq!(
        east_view
            .table()
            .unwrap()
            .disassociation_protection_enabled(),
        Some(false)
    );
    let protected = format!("The replica of table {name} in region us-west-2 is protected against disassociation: set DisassociationProtectionEnabled to false in that region first");
    let removal = east
        .update_table()
        .table_name(&name)
        .replica_updates(delete_member("us-west-2"))
        .send()
        .await;
    assert_error(removal, "ValidationException", &protected);
    assert_error(
        west.delete_table().table_name(&name).send().await,
        "ValidationException",
        &protected,
    );
    west.update_table()
        .table_name(&name)
        .disassociation_protection_enabled(false)
        .send()
        .await
        .unwrap();
    let removal = east
        .update_table()
        .table_name(&name)
        .replica_updates(delete_member("us-west-2"))
        .send()
        .await;
    removal.expect("unprotected, the replica is removed");
}

#[tokio::test]
async fn group_settings_of_update_table_come_alone_and_on_a_replica() {
    let (east, name) = (region("us-east-1"), unique_name("gtdp"));
    current_global_table(&east, &name, "us-west-2").await;
    let mixed = east
        .update_table()
        .table_name(&name)
        .disassociation_protection_enabled(false)
        .deletion_protection_enabled(true);
    let message = "DisassociationProtectionEnabled and GlobalTableSettingsReplicationMode cannot be combined with any other change in the same UpdateTable request";
    assert_error(mixed.send().await, "ValidationException", message);
    let mode = GlobalTableSettingsReplicationMode::EnabledWithOverrides;
    let set = east
        .update_table()
        .table_name(&name)
        .global_table_settings_replication_mode(mode.clone());
    let set = set.send().await.unwrap();
    assert_eq!(
        set.table_description()
            .unwrap()
            .global_table_settings_replication_mode(),
        Some(&mode)
    );
    let other = region("us-west-2")
        .describe_table()
        .table_name(&name)
        .send()
        .await
        .unwrap();
    assert_eq!(
        other
            .table()
            .unwrap()
            .global_table_settings_replication_mode(),
        Some(&mode)
    );

    let plain = unique_name("gtdp");
    table(&east, &plain, "pk", false, false).await;
    let result = east
        .update_table()
        .table_name(&plain)
        .disassociation_protection_enabled(true)
        .send()
        .await;
    let message = format!("DisassociationProtectionEnabled applies to a replica of a global table version 2019.11.21 with multi-Region eventual consistency: table {plain} is not one");
    assert_error(result, "ValidationException", &message);
}

/// Two servers: `eu-west-1` is held by the second, which the first names
/// with `--peer`.
fn two_servers() -> (ServerProcess, ServerProcess) {
    let west = ServerProcess::spawn(&["--in-memory"]);
    let peer = format!("eu-west-1={}", west.endpoint());
    let east = ServerProcess::spawn(&["--in-memory", "--peer", &peer]);
    (east, west)
}

#[tokio::test]
async fn a_legacy_global_table_spans_servers() {
    let (east_server, west_server) = two_servers();
    let east = client_in_region(east_server.endpoint(), "us-east-1");
    let west = client_in_region(west_server.endpoint(), "eu-west-1");
    let name = unique_name("gtx");
    let create = || {
        let request = east.create_global_table().global_table_name(&name);
        request
            .replication_group(replica("us-east-1"))
            .replication_group(replica("eu-west-1"))
    };
    table(&east, &name, "pk", true, true).await;
    let absent = create().send().await;
    let no_table = format!("Table not found: Table: '{name}' not found in region: 'eu-west-1'.");
    assert_error(absent, "TableNotFoundException", &no_table);
    table(&west, &name, "pk", true, true).await;
    let created = create()
        .send()
        .await
        .expect("CreateGlobalTable across servers succeeds");
    assert_eq!(
        regions_of(created.global_table_description().unwrap()),
        ["eu-west-1", "us-east-1"]
    );
    let described = west
        .describe_global_table()
        .global_table_name(&name)
        .send()
        .await;
    let described = described.expect("the peer holds the group too");
    assert_eq!(
        regions_of(described.global_table_description().unwrap()),
        ["eu-west-1", "us-east-1"]
    );

    let row = item(&[("pk", s("across"))]);
    east.put_item()
        .table_name(&name)
        .set_item(Some(row))
        .send()
        .await
        .unwrap();
    poll_until(
        "the item replicated to the peer",
        Duration::from_secs(10),
        || async {
            let got = west
                .get_item()
                .table_name(&name)
                .key("pk", s("across"))
                .send()
                .await
                .ok()?;
            got.item().map(|_| ())
        },
    )
    .await;
    settings_reach_the_peer(&east, &west, &name).await;
}

/// UpdateGlobalTableSettings on the first server changes the peer's table:
/// its own read units, the write units every region shares.
async fn settings_reach_the_peer(east: &Client, west: &Client, name: &str) {
    let settings = east.update_global_table_settings().global_table_name(name);
    let settings = settings
        .replica_settings_update(read_units("eu-west-1", 9))
        .global_table_provisioned_write_capacity_units(8)
        .send()
        .await
        .unwrap();
    let expected = [
        ("eu-west-1".to_string(), Some(9), Some(8)),
        ("us-east-1".to_string(), Some(5), Some(8)),
    ];
    assert_eq!(units_by_region(settings.replica_settings()), expected);
    let peer_table = west.describe_table().table_name(name).send().await.unwrap();
    let units = peer_table
        .table()
        .unwrap()
        .provisioned_throughput()
        .unwrap();
    let units = (units.read_capacity_units(), units.write_capacity_units());
    assert_eq!(units, (Some(9), Some(8)));
}
