//! On-demand backups: CreateBackup, DescribeBackup, ListBackups, DeleteBackup
//! and RestoreTableFromBackup. What a backup records about its source
//! (BackupDetails, SourceTableDetails, SourceTableFeatureDetails); that it is
//! the table at one instant and outlives the table; what a restore brings
//! back (items, indexes, billing) and what it leaves behind (stream, TTL,
//! tags, deletion protection); the restore overrides; ListBackups' filters
//! and pages; and the errors in AWS's words (docs/design/backups.md §4).
//!
//! DynamoDB Local answers every backup operation with
//! UnknownOperationException, so these tests fail against it by design.

use std::collections::HashMap;
use std::time::Duration;

use aws_sdk_dynamodb::config::http::HttpResponse;
use aws_sdk_dynamodb::error::SdkError;
use aws_sdk_dynamodb::operation::query::{QueryError, QueryOutput};
use aws_sdk_dynamodb::primitives::DateTime;
use aws_sdk_dynamodb::types::{
    AttributeValue, BackupDescription, BackupDetails, BackupStatus, BackupSummary, BackupType,
    BackupTypeFilter, BillingMode, GlobalSecondaryIndex, KeyType, LocalSecondaryIndex, Projection,
    ProjectionType, ProvisionedThroughput, ScalarAttributeType as T, StreamSpecification,
    StreamViewType, TableStatus, Tag, TimeToLiveSpecification, TimeToLiveStatus,
};
use aws_sdk_dynamodb::Client;

use crate::util::restores::{describe_table, millis, now, wait_active, WAIT};
use crate::util::{self, assert_error, assert_error_starts, attr_def, get_s, item, key, n, s};

type Item = HashMap<String, AttributeValue>;

fn throughput(read: i64, write: i64) -> ProvisionedThroughput {
    ProvisionedThroughput::builder()
        .read_capacity_units(read)
        .write_capacity_units(write)
        .build()
        .unwrap()
}

fn projection(ty: ProjectionType, include: &[&str]) -> Projection {
    let mut p = Projection::builder().projection_type(ty);
    for a in include {
        p = p.non_key_attributes(*a);
    }
    p.build()
}

/// A GSI keyed by `hash` and the table's sort key `c`.
fn gsi(
    name: &str,
    hash: &str,
    ty: ProjectionType,
    pt: Option<ProvisionedThroughput>,
) -> GlobalSecondaryIndex {
    GlobalSecondaryIndex::builder()
        .index_name(name)
        .key_schema(key(hash, KeyType::Hash))
        .key_schema(key("c", KeyType::Range))
        .projection(projection(ty, &[]))
        .set_provisioned_throughput(pt)
        .build()
        .unwrap()
}

/// GSI `by-g` (on `g`, projects everything).
fn gsi_g(pt: Option<ProvisionedThroughput>) -> GlobalSecondaryIndex {
    gsi("by-g", "g", ProjectionType::All, pt)
}

/// GSI `by-h` (on `h`, keys only).
fn gsi_h(pt: Option<ProvisionedThroughput>) -> GlobalSecondaryIndex {
    gsi("by-h", "h", ProjectionType::KeysOnly, pt)
}

/// LSI `by-l` (sort key `l`, projects `v`).
fn lsi_l() -> LocalSecondaryIndex {
    LocalSecondaryIndex::builder()
        .index_name("by-l")
        .key_schema(key("p", KeyType::Hash))
        .key_schema(key("l", KeyType::Range))
        .projection(projection(ProjectionType::Include, &["v"]))
        .build()
        .unwrap()
}

/// A table keyed by `p`/`c` with GSIs `by-g` and `by-h` and LSI `by-l`:
/// provisioned at `pt` (its GSIs too) or, with `None`, on demand.
async fn indexed_table(client: &Client, pt: Option<ProvisionedThroughput>) -> String {
    let name = util::unique_name("bk-idx");
    let billing = match pt {
        Some(_) => BillingMode::Provisioned,
        None => BillingMode::PayPerRequest,
    };
    let mut request = client
        .create_table()
        .table_name(&name)
        .billing_mode(billing)
        .set_provisioned_throughput(pt.clone())
        .key_schema(key("p", KeyType::Hash))
        .key_schema(key("c", KeyType::Range));
    for attr in ["p", "c", "g", "h", "l"] {
        request = request.attribute_definitions(attr_def(attr, T::S));
    }
    request
        .global_secondary_indexes(gsi_g(pt.clone()))
        .global_secondary_indexes(gsi_h(pt))
        .local_secondary_indexes(lsi_l())
        .send()
        .await
        .expect("CreateTable with indexes succeeds");
    name
}

/// A provisioned table keyed by `p`/`c`, without indexes.
async fn provisioned_table(client: &Client, read: i64, write: i64) -> String {
    let name = util::unique_name("bk-prov");
    client
        .create_table()
        .table_name(&name)
        .key_schema(key("p", KeyType::Hash))
        .key_schema(key("c", KeyType::Range))
        .attribute_definitions(attr_def("p", T::S))
        .attribute_definitions(attr_def("c", T::S))
        .billing_mode(BillingMode::Provisioned)
        .provisioned_throughput(throughput(read, write))
        .send()
        .await
        .expect("CreateTable succeeds");
    name
}

/// Item `i` of the tests' tables: partition `P{i % 4}`, sort key `c{i:03}`,
/// GSI keys `g` = `G{i % 3}` and `h` = `H{i % 2}`, LSI key `l`, and `v` = i.
fn numbered(i: usize) -> Item {
    item(&[
        ("p", s(&format!("P{}", i % 4))),
        ("c", s(&format!("c{i:03}"))),
        ("g", s(&format!("G{}", i % 3))),
        ("h", s(&format!("H{}", i % 2))),
        ("l", s(&format!("l{:03}", 100 - i))),
        ("v", n(&i.to_string())),
    ])
}

async fn put(client: &Client, table: &str, item: Item) {
    client
        .put_item()
        .table_name(table)
        .set_item(Some(item))
        .send()
        .await
        .expect("PutItem succeeds");
}

/// Writes items `from..to` ([`numbered`]) and returns them.
async fn fill(client: &Client, table: &str, from: usize, to: usize) -> Vec<Item> {
    let mut items = Vec::new();
    for i in from..to {
        put(client, table, numbered(i)).await;
        items.push(numbered(i));
    }
    items
}

/// Items sorted by their table key, for comparison.
fn by_key(mut items: Vec<Item>) -> Vec<Item> {
    items.sort_by(|a, b| (get_s(a, "p"), get_s(a, "c")).cmp(&(get_s(b, "p"), get_s(b, "c"))));
    items
}

async fn create_backup(client: &Client, table: &str, name: &str) -> BackupDetails {
    client
        .create_backup()
        .table_name(table)
        .backup_name(name)
        .send()
        .await
        .expect("CreateBackup succeeds")
        .backup_details
        .expect("BackupDetails")
}

async fn describe_backup(client: &Client, arn: &str) -> BackupDescription {
    client
        .describe_backup()
        .backup_arn(arn)
        .send()
        .await
        .expect("DescribeBackup succeeds")
        .backup_description
        .expect("BackupDescription")
}

fn status(description: &BackupDescription) -> Option<&BackupStatus> {
    description.backup_details().map(|d| d.backup_status())
}

/// Polls DescribeBackup until the backup is AVAILABLE.
async fn wait_available(client: &Client, arn: &str) -> BackupDescription {
    util::poll_until("the backup to be AVAILABLE", WAIT, move || async move {
        let described = describe_backup(client, arn).await;
        (status(&described) == Some(&BackupStatus::Available)).then_some(described)
    })
    .await
}

/// Backs `table` up and waits until the backup is AVAILABLE: its ARN.
async fn backup(client: &Client, table: &str) -> String {
    let arn = create_backup(client, table, "backup").await.backup_arn;
    wait_available(client, &arn).await;
    arn
}

/// `count` AVAILABLE backups of `table`, each created at a later
/// millisecond than the one before.
async fn backups(client: &Client, table: &str, count: usize) -> Vec<BackupDetails> {
    let mut made = Vec::new();
    for i in 0..count {
        if i > 0 {
            // BackupCreationDateTime has ms precision: keep them apart.
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        let details = create_backup(client, table, &format!("bk-{i}")).await;
        let described = wait_available(client, details.backup_arn()).await;
        made.push(described.backup_details.expect("BackupDetails"));
    }
    made
}

/// Restores `arn` to a new table and waits until it is ACTIVE: its name.
async fn restore(client: &Client, arn: &str) -> String {
    let target = util::unique_name("bk-restored");
    client
        .restore_table_from_backup()
        .backup_arn(arn)
        .target_table_name(&target)
        .send()
        .await
        .expect("RestoreTableFromBackup succeeds");
    wait_active(client, &target).await;
    target
}

/// Every USER backup ListBackups names for `table`, in one call.
async fn listed(client: &Client, table: &str) -> Vec<BackupSummary> {
    let out = client
        .list_backups()
        .table_name(table)
        .send()
        .await
        .expect("ListBackups succeeds");
    assert_eq!(out.last_evaluated_backup_arn(), None, "one page: {out:?}");
    out.backup_summaries().to_vec()
}

fn arns_of(summaries: &[BackupSummary]) -> Vec<&str> {
    summaries.iter().filter_map(|b| b.backup_arn()).collect()
}

fn arns(details: &[BackupDetails]) -> Vec<&str> {
    details.iter().map(|d| d.backup_arn()).collect()
}

async fn query_index(
    client: &Client,
    table: &str,
    index: &str,
    attr: &str,
    value: &str,
) -> Result<QueryOutput, SdkError<QueryError, HttpResponse>> {
    client
        .query()
        .table_name(table)
        .index_name(index)
        .key_condition_expression("#k = :v")
        .expression_attribute_names("#k", attr)
        .expression_attribute_values(":v", s(value))
        .send()
        .await
}

/// The sort keys `c` of the items Query on `index` finds for `attr` = `value`.
async fn index_hits(
    client: &Client,
    table: &str,
    index: &str,
    attr: &str,
    value: &str,
) -> Vec<String> {
    let out = query_index(client, table, index, attr, value)
        .await
        .expect("Query on the index succeeds");
    out.items()
        .iter()
        .map(|i| get_s(i, "c").to_string())
        .collect()
}

/// Asserts a backup ARN's shape,
/// `arn:aws:dynamodb:us-east-1:000000000000:table/<table>/backup/<14-digit ms>-<8 hex>`,
/// and returns its milliseconds.
#[track_caller]
fn backup_arn_millis(arn: &str, table: &str) -> i64 {
    let prefix = format!("arn:aws:dynamodb:us-east-1:000000000000:table/{table}/backup/");
    let suffix = arn
        .strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("{arn} does not start with {prefix}"));
    let (ms, id) = suffix
        .split_once('-')
        .unwrap_or_else(|| panic!("{arn}: no '-' in {suffix}"));
    assert!(
        ms.len() == 14 && ms.bytes().all(|b| b.is_ascii_digit()),
        "{arn}"
    );
    let hex = |b: u8| b.is_ascii_digit() || (b'a'..=b'f').contains(&b);
    assert!(id.len() == 8 && id.bytes().all(hex), "{arn}");
    ms.parse().unwrap()
}

#[tokio::test]
async fn create_backup_answers_a_user_backup_that_becomes_available() {
    let client = util::client();
    let table = util::table_ss(&client).await;
    fill(&client, &table, 0, 10).await;
    let before = now();
    let details = create_backup(&client, &table, "first-backup").await;
    let after = now();

    let arn_ms = backup_arn_millis(details.backup_arn(), &table) as f64 / 1000.0;
    assert!(
        (before - 1.0..=after + 1.0).contains(&arn_ms),
        "{details:?}"
    );
    assert_eq!(details.backup_name(), "first-backup");
    let creating_or_available = [BackupStatus::Creating, BackupStatus::Available];
    assert!(
        creating_or_available.contains(details.backup_status()),
        "{details:?}"
    );
    assert_eq!(details.backup_type(), &BackupType::User);
    let created = details.backup_creation_date_time().as_secs_f64();
    assert!(
        (before - 1.0..=after + 1.0).contains(&created),
        "{details:?}"
    );
    assert_eq!(details.backup_expiry_date_time(), None);

    let described = wait_available(&client, details.backup_arn()).await;
    let available = described.backup_details().unwrap();
    assert_eq!(available.backup_arn(), details.backup_arn());
    assert_eq!(available.backup_name(), "first-backup");
    assert!(
        available.backup_size_bytes().unwrap_or(0) > 0,
        "{available:?}"
    );
    assert_eq!(
        millis(available.backup_creation_date_time()),
        millis(details.backup_creation_date_time())
    );
    assert_eq!(available.backup_expiry_date_time(), None);
}

#[tokio::test]
async fn a_backup_describes_its_source_table_and_no_features_for_a_plain_one() {
    let client = util::client();
    let table = util::table_ss(&client).await;
    fill(&client, &table, 0, 10).await;
    let source = describe_table(&client, &table).await;
    let arn = backup(&client, &table).await;

    let described = describe_backup(&client, &arn).await;
    let details = described
        .source_table_details()
        .expect("SourceTableDetails");
    assert_eq!(details.table_name(), table);
    assert_eq!(Some(details.table_id()), source.table_id());
    assert_eq!(details.table_arn(), source.table_arn());
    assert_eq!(details.key_schema(), source.key_schema());
    assert_eq!(details.item_count(), Some(10));
    assert_eq!(details.table_size_bytes(), source.table_size_bytes());
    assert_eq!(details.billing_mode(), Some(&BillingMode::PayPerRequest));
    let pt = details
        .provisioned_throughput()
        .expect("ProvisionedThroughput");
    assert_eq!(
        (pt.read_capacity_units(), pt.write_capacity_units()),
        (0, 0)
    );
    assert_eq!(
        millis(details.table_creation_date_time()),
        millis(source.creation_date_time().unwrap())
    );
    // A plain table's SourceTableFeatureDetails is `{}` (DDB-BACKUP-004).
    let features = described
        .source_table_feature_details()
        .expect("SourceTableFeatureDetails");
    let empty = features.global_secondary_indexes().is_empty()
        && features.local_secondary_indexes().is_empty()
        && features.stream_description().is_none()
        && features.time_to_live_description().is_none();
    assert!(empty, "{features:?}");
}

/// Enables a NEW_IMAGE stream and TTL on `exp`.
async fn enable_stream_and_ttl(client: &Client, table: &str) {
    let stream = StreamSpecification::builder()
        .stream_enabled(true)
        .stream_view_type(StreamViewType::NewImage)
        .build()
        .unwrap();
    let ttl = TimeToLiveSpecification::builder()
        .enabled(true)
        .attribute_name("exp")
        .build()
        .unwrap();
    client
        .update_table()
        .table_name(table)
        .stream_specification(stream)
        .send()
        .await
        .expect("UpdateTable enables the stream");
    client
        .update_time_to_live()
        .table_name(table)
        .time_to_live_specification(ttl)
        .send()
        .await
        .expect("UpdateTimeToLive succeeds");
}

#[tokio::test]
async fn a_backup_describes_the_indexes_stream_and_ttl_of_its_source() {
    let client = util::client();
    let table = indexed_table(&client, Some(throughput(5, 7))).await;
    enable_stream_and_ttl(&client, &table).await;
    fill(&client, &table, 0, 5).await;
    let described = describe_backup(&client, &backup(&client, &table).await).await;

    let details = described.source_table_details().unwrap();
    assert_eq!(details.billing_mode(), Some(&BillingMode::Provisioned));
    let pt = details.provisioned_throughput().unwrap();
    assert_eq!(
        (pt.read_capacity_units(), pt.write_capacity_units()),
        (5, 7)
    );
    assert_eq!(details.item_count(), Some(5));

    let features = described.source_table_feature_details().expect("features");
    let mut gsis = features.global_secondary_indexes().to_vec();
    gsis.sort_by(|a, b| a.index_name().cmp(&b.index_name()));
    let [g, h] = gsis.as_slice() else {
        panic!("two GSIs: {features:?}")
    };
    assert_eq!(g.index_name(), Some("by-g"));
    assert_eq!(
        g.key_schema(),
        [key("g", KeyType::Hash), key("c", KeyType::Range)]
    );
    assert_eq!(g.projection(), Some(&projection(ProjectionType::All, &[])));
    let gpt = g.provisioned_throughput().expect("the GSI's throughput");
    assert_eq!(
        (gpt.read_capacity_units(), gpt.write_capacity_units()),
        (5, 7)
    );
    assert_eq!(h.index_name(), Some("by-h"));
    assert_eq!(
        h.key_schema(),
        [key("h", KeyType::Hash), key("c", KeyType::Range)]
    );
    assert_eq!(
        h.projection(),
        Some(&projection(ProjectionType::KeysOnly, &[]))
    );

    let [l] = features.local_secondary_indexes() else {
        panic!("one LSI: {features:?}")
    };
    assert_eq!(l.index_name(), Some("by-l"));
    assert_eq!(
        l.key_schema(),
        [key("p", KeyType::Hash), key("l", KeyType::Range)]
    );
    assert_eq!(
        l.projection(),
        Some(&projection(ProjectionType::Include, &["v"]))
    );

    let stream = features.stream_description().expect("StreamDescription");
    assert!(stream.stream_enabled(), "{stream:?}");
    assert_eq!(stream.stream_view_type(), Some(&StreamViewType::NewImage));
    let ttl = features
        .time_to_live_description()
        .expect("TimeToLiveDescription");
    assert_eq!(ttl.time_to_live_status(), Some(&TimeToLiveStatus::Enabled));
    assert_eq!(ttl.attribute_name(), Some("exp"));
}

#[tokio::test]
async fn a_backup_is_the_table_at_the_instant_it_was_created() {
    let client = util::client();
    let table = util::table_ss(&client).await;
    let originals = fill(&client, &table, 0, 50).await;
    let arn = create_backup(&client, &table, "instant").await.backup_arn;

    for i in 0..10 {
        let mut changed = numbered(i);
        changed.insert("v".to_string(), s("changed after the backup"));
        put(&client, &table, changed).await;
    }
    for i in 10..20 {
        let it = numbered(i);
        let table_key = item(&[("p", it["p"].clone()), ("c", it["c"].clone())]);
        client
            .delete_item()
            .table_name(&table)
            .set_key(Some(table_key))
            .send()
            .await
            .unwrap();
    }
    fill(&client, &table, 50, 60).await;
    wait_available(&client, &arn).await;

    let restored = restore(&client, &arn).await;
    let scanned = util::scan_all(&client, &restored, None).await;
    assert_eq!(by_key(scanned), by_key(originals));
}

#[tokio::test]
async fn a_backup_outlives_the_table_it_was_taken_from() {
    let client = util::client();
    let table = util::table_ss(&client).await;
    let originals = fill(&client, &table, 0, 20).await;
    let arn = backup(&client, &table).await;
    client
        .delete_table()
        .table_name(&table)
        .send()
        .await
        .unwrap();

    let described = describe_backup(&client, &arn).await;
    assert_eq!(status(&described), Some(&BackupStatus::Available));
    assert_eq!(arns_of(&listed(&client, &table).await), [arn.as_str()]);
    let restored = restore(&client, &arn).await;
    let scanned = util::scan_all(&client, &restored, None).await;
    assert_eq!(by_key(scanned), by_key(originals));
}

#[tokio::test]
async fn restore_answers_creating_with_a_restore_summary_then_the_table_is_active_with_the_items() {
    let client = util::client();
    let table = indexed_table(&client, None).await;
    let originals = fill(&client, &table, 0, 30).await;
    let source = describe_table(&client, &table).await;
    let arn = backup(&client, &table).await;
    let target = util::unique_name("bk-restored");
    let before = now();
    let answer = client
        .restore_table_from_backup()
        .backup_arn(&arn)
        .target_table_name(&target)
        .send()
        .await
        .expect("RestoreTableFromBackup succeeds")
        .table_description
        .expect("TableDescription");

    assert_eq!(answer.table_name(), Some(target.as_str()));
    assert_eq!(answer.table_status(), Some(&TableStatus::Creating));
    assert_eq!(answer.key_schema(), source.key_schema());
    let summary = answer.restore_summary().expect("RestoreSummary");
    assert_eq!(summary.source_backup_arn(), Some(arn.as_str()));
    assert_eq!(summary.source_table_arn(), source.table_arn());
    let restored_at = summary.restore_date_time().as_secs_f64();
    assert!(
        (before - 1.0..=now() + 1.0).contains(&restored_at),
        "{summary:?}"
    );
    assert!(summary.restore_in_progress(), "{summary:?}");

    let active = wait_active(&client, &target).await;
    assert_ne!(active.table_id(), source.table_id());
    assert_eq!(active.item_count(), Some(30));
    assert_eq!(active.table_size_bytes(), source.table_size_bytes());
    let scanned = util::scan_all(&client, &target, None).await;
    assert_eq!(by_key(scanned), by_key(originals));
}

#[tokio::test]
async fn a_restored_tables_indexes_answer_queries_with_the_backed_up_items() {
    let client = util::client();
    let table = indexed_table(&client, None).await;
    fill(&client, &table, 0, 30).await;
    let restored = restore(&client, &backup(&client, &table).await).await;

    let in_g1: Vec<String> = (0..30)
        .filter(|i| i % 3 == 1)
        .map(|i| format!("c{i:03}"))
        .collect();
    assert_eq!(
        index_hits(&client, &restored, "by-g", "g", "G1").await,
        in_g1
    );
    let in_h0: Vec<String> = (0..30)
        .filter(|i| i % 2 == 0)
        .map(|i| format!("c{i:03}"))
        .collect();
    assert_eq!(
        index_hits(&client, &restored, "by-h", "h", "H0").await,
        in_h0
    );

    // `l` falls as `c` rises, so the LSI answers partition P0 in reverse.
    let in_p0: Vec<String> = (0..30)
        .rev()
        .filter(|i| i % 4 == 0)
        .map(|i| format!("c{i:03}"))
        .collect();
    let out = query_index(&client, &restored, "by-l", "p", "P0")
        .await
        .unwrap();
    let hits: Vec<&str> = out.items().iter().map(|i| get_s(i, "c")).collect();
    assert_eq!(hits, in_p0);
    for hit in out.items() {
        let mut attrs: Vec<&str> = hit.keys().map(String::as_str).collect();
        attrs.sort();
        assert_eq!(attrs, ["c", "l", "p", "v"], "the LSI projects v: {hit:?}");
    }
}

/// A provisioned (5/7) table with a stream, TTL, a tag and deletion
/// protection, holding items 0..5.
async fn table_with_every_extra(client: &Client) -> String {
    let name = util::unique_name("bk-extras");
    client
        .create_table()
        .table_name(&name)
        .key_schema(key("p", KeyType::Hash))
        .key_schema(key("c", KeyType::Range))
        .attribute_definitions(attr_def("p", T::S))
        .attribute_definitions(attr_def("c", T::S))
        .billing_mode(BillingMode::Provisioned)
        .provisioned_throughput(throughput(5, 7))
        .tags(Tag::builder().key("team").value("storage").build().unwrap())
        .deletion_protection_enabled(true)
        .send()
        .await
        .expect("CreateTable succeeds");
    enable_stream_and_ttl(client, &name).await;
    fill(client, &name, 0, 5).await;
    name
}

#[tokio::test]
async fn a_restore_keeps_billing_and_throughput_but_not_stream_ttl_tags_or_deletion_protection() {
    let client = util::client();
    let table = table_with_every_extra(&client).await;
    let restored = restore(&client, &backup(&client, &table).await).await;

    let described = describe_table(&client, &restored).await;
    let billing = described
        .billing_mode_summary()
        .and_then(|b| b.billing_mode());
    assert_eq!(
        billing.unwrap_or(&BillingMode::Provisioned),
        &BillingMode::Provisioned
    );
    let pt = described.provisioned_throughput().unwrap();
    assert_eq!(
        (pt.read_capacity_units(), pt.write_capacity_units()),
        (Some(5), Some(7))
    );
    util::restores::assert_restore_left_out_settings(&client, &described).await;
}

#[tokio::test]
async fn billing_mode_override_pay_per_request_restores_a_provisioned_table_on_demand() {
    let client = util::client();
    let table = provisioned_table(&client, 5, 7).await;
    let originals = fill(&client, &table, 0, 5).await;
    let arn = backup(&client, &table).await;
    let target = util::unique_name("bk-ondemand");
    client
        .restore_table_from_backup()
        .backup_arn(&arn)
        .target_table_name(&target)
        .billing_mode_override(BillingMode::PayPerRequest)
        .send()
        .await
        .expect("RestoreTableFromBackup succeeds");

    let described = wait_active(&client, &target).await;
    let billing = described
        .billing_mode_summary()
        .and_then(|b| b.billing_mode());
    assert_eq!(billing, Some(&BillingMode::PayPerRequest));
    let pt = described.provisioned_throughput().unwrap();
    assert_eq!(
        (pt.read_capacity_units(), pt.write_capacity_units()),
        (Some(0), Some(0))
    );
    let scanned = util::scan_all(&client, &target, None).await;
    assert_eq!(by_key(scanned), by_key(originals));
}

#[tokio::test]
async fn billing_mode_override_provisioned_needs_throughput_for_every_global_index() {
    let client = util::client();
    let table = indexed_table(&client, None).await;
    fill(&client, &table, 0, 5).await;
    let arn = backup(&client, &table).await;
    let target = util::unique_name("bk-provisioned");
    let request = client
        .restore_table_from_backup()
        .backup_arn(&arn)
        .target_table_name(&target)
        .billing_mode_override(BillingMode::Provisioned)
        .provisioned_throughput_override(throughput(3, 4));

    let refused = util::service_error(request.clone().send().await);
    assert_eq!(refused.code, "ValidationException", "{refused:?}");
    assert!(
        refused.message.contains("GlobalSecondaryIndexOverride"),
        "{refused:?}"
    );
    let missing = util::service_error(client.describe_table().table_name(&target).send().await);
    assert_eq!(missing.code, "ResourceNotFoundException", "{missing:?}");

    request
        .global_secondary_index_override(gsi_g(Some(throughput(2, 2))))
        .global_secondary_index_override(gsi_h(Some(throughput(1, 1))))
        .send()
        .await
        .expect("RestoreTableFromBackup with index throughput succeeds");
    let described = wait_active(&client, &target).await;
    let billing = described
        .billing_mode_summary()
        .and_then(|b| b.billing_mode());
    assert_eq!(billing, Some(&BillingMode::Provisioned));
    let pt = described.provisioned_throughput().unwrap();
    assert_eq!(
        (pt.read_capacity_units(), pt.write_capacity_units()),
        (Some(3), Some(4))
    );
    let mut index_pt: Vec<_> = described
        .global_secondary_indexes()
        .iter()
        .map(|i| {
            let pt = i.provisioned_throughput().unwrap();
            (
                i.index_name().unwrap(),
                pt.read_capacity_units(),
                pt.write_capacity_units(),
            )
        })
        .collect();
    index_pt.sort();
    assert_eq!(
        index_pt,
        [("by-g", Some(2), Some(2)), ("by-h", Some(1), Some(1))]
    );
}

#[tokio::test]
async fn global_index_override_restores_only_the_listed_indexes() {
    let client = util::client();
    let table = indexed_table(&client, None).await;
    fill(&client, &table, 0, 12).await;
    let arn = backup(&client, &table).await;
    let target = util::unique_name("bk-one-gsi");
    client
        .restore_table_from_backup()
        .backup_arn(&arn)
        .target_table_name(&target)
        .global_secondary_index_override(gsi_g(None))
        .send()
        .await
        .expect("RestoreTableFromBackup succeeds");

    let described = wait_active(&client, &target).await;
    let gsis: Vec<_> = described
        .global_secondary_indexes()
        .iter()
        .map(|i| i.index_name())
        .collect();
    assert_eq!(gsis, [Some("by-g")]);
    assert_eq!(
        described.local_secondary_indexes().len(),
        1,
        "{described:?}"
    );
    let in_g0: Vec<String> = (0..12)
        .filter(|i| i % 3 == 0)
        .map(|i| format!("c{i:03}"))
        .collect();
    assert_eq!(index_hits(&client, &target, "by-g", "g", "G0").await, in_g0);
    assert_error_starts(
        query_index(&client, &target, "by-h", "h", "H0").await,
        "ValidationException",
        "The table does not have the specified index",
    );
}

#[tokio::test]
async fn an_empty_local_index_override_restores_no_local_indexes() {
    let client = util::client();
    let table = indexed_table(&client, None).await;
    let originals = fill(&client, &table, 0, 8).await;
    let arn = backup(&client, &table).await;
    let target = util::unique_name("bk-no-lsi");
    client
        .restore_table_from_backup()
        .backup_arn(&arn)
        .target_table_name(&target)
        .set_local_secondary_index_override(Some(Vec::new()))
        .send()
        .await
        .expect("RestoreTableFromBackup succeeds");

    let described = wait_active(&client, &target).await;
    assert!(
        described.local_secondary_indexes().is_empty(),
        "{described:?}"
    );
    assert_eq!(
        described.global_secondary_indexes().len(),
        2,
        "{described:?}"
    );
    assert_error_starts(
        query_index(&client, &target, "by-l", "p", "P0").await,
        "ValidationException",
        "The table does not have the specified index",
    );
    let scanned = util::scan_all(&client, &target, None).await;
    assert_eq!(by_key(scanned), by_key(originals));
}

#[tokio::test]
async fn backing_up_a_missing_table_is_table_not_found() {
    let client = util::client();
    let table = util::unique_name("bk-missing");
    let result = client
        .create_backup()
        .table_name(&table)
        .backup_name("backup")
        .send()
        .await;
    assert_error(
        result,
        "TableNotFoundException",
        &format!("Table not found: {table}"),
    );
}

#[tokio::test]
async fn a_deleted_backups_arn_is_backup_not_found_to_describe_delete_and_restore() {
    let client = util::client();
    let table = util::table_ss(&client).await;
    let arn = backup(&client, &table).await;
    client
        .delete_backup()
        .backup_arn(&arn)
        .send()
        .await
        .unwrap();
    let not_found = format!("Backup not found: {arn}");

    let described = client.describe_backup().backup_arn(&arn).send().await;
    assert_error(described, "BackupNotFoundException", &not_found);
    let deleted = client.delete_backup().backup_arn(&arn).send().await;
    assert_error(deleted, "BackupNotFoundException", &not_found);
    let target = util::unique_name("bk-never");
    let restored = client
        .restore_table_from_backup()
        .backup_arn(&arn)
        .target_table_name(&target)
        .send()
        .await;
    assert_error(restored, "BackupNotFoundException", &not_found);
}

#[tokio::test]
async fn a_backup_arn_that_is_not_a_backup_arn_is_invalid() {
    let client = util::client();
    let table = util::table_s(&client).await;
    let table_arn = describe_table(&client, &table).await.table_arn.unwrap();
    for arn in [
        "not-an-arn-but-long-enough-to-pass-length-37",
        table_arn.as_str(),
    ] {
        let described = client.describe_backup().backup_arn(arn).send().await;
        assert_error(described, "ValidationException", "Invalid Backup ARN");
        let deleted = client.delete_backup().backup_arn(arn).send().await;
        assert_error(deleted, "ValidationException", "Invalid Backup ARN");
    }
}

#[tokio::test]
async fn restoring_onto_an_existing_table_is_table_already_exists() {
    let client = util::client();
    let table = util::table_ss(&client).await;
    let arn = backup(&client, &table).await;
    let result = client
        .restore_table_from_backup()
        .backup_arn(&arn)
        .target_table_name(&table)
        .send()
        .await;
    assert_error(
        result,
        "TableAlreadyExistsException",
        &format!("Table already exists: {table}"),
    );
}

#[tokio::test]
async fn backup_names_too_short_or_with_other_characters_are_refused() {
    let client = util::client();
    let table = util::table_s(&client).await;
    for name in ["ab", "bad name!"] {
        let result = client
            .create_backup()
            .table_name(&table)
            .backup_name(name)
            .send()
            .await;
        let err = util::service_error(result);
        assert_eq!(err.code, "ValidationException", "{name}: {err:?}");
        assert!(err.message.contains("backupName"), "{name}: {err:?}");
        assert!(
            err.message.contains("failed to satisfy constraint"),
            "{name}: {err:?}"
        );
    }
    assert!(listed(&client, &table).await.is_empty());
}

#[tokio::test]
async fn list_backups_refuses_a_limit_over_100_and_a_reversed_time_range() {
    let client = util::client();
    let over = util::service_error(client.list_backups().limit(101).send().await);
    assert_eq!(over.code, "ValidationException", "{over:?}");
    assert!(over.message.contains("limit"), "{over:?}");

    let later = DateTime::from_secs_f64(now());
    let earlier = DateTime::from_secs(later.secs() - 60);
    let reversed = client
        .list_backups()
        .time_range_lower_bound(later)
        .time_range_upper_bound(earlier)
        .send()
        .await;
    assert_error(
        reversed,
        "ValidationException",
        "Time range lower bound must be less than or equal to upper bound",
    );
}

#[tokio::test]
async fn list_backups_of_type_system_lists_no_user_backups() {
    let client = util::client();
    let table = util::table_s(&client).await;
    let arn = backup(&client, &table).await;
    let of_type = |filter: BackupTypeFilter| {
        let request = client.list_backups().table_name(&table).backup_type(filter);
        async move {
            request
                .send()
                .await
                .expect("ListBackups succeeds")
                .backup_summaries
        }
    };
    let system = of_type(BackupTypeFilter::System).await.unwrap_or_default();
    assert!(system.is_empty(), "{system:?}");
    let all = of_type(BackupTypeFilter::All).await.unwrap_or_default();
    assert_eq!(arns_of(&all), [arn.as_str()]);
    let user = of_type(BackupTypeFilter::User).await.unwrap_or_default();
    assert_eq!(arns_of(&user), [arn.as_str()]);
    assert_eq!(
        arns_of(&listed(&client, &table).await),
        [arn.as_str()],
        "USER by default"
    );
}

#[tokio::test]
async fn list_backups_by_table_name_lists_that_tables_backups_in_creation_order() {
    let client = util::client();
    let table = util::table_ss(&client).await;
    let other = util::table_ss(&client).await;
    fill(&client, &table, 0, 3).await;
    let made = backups(&client, &table, 2).await;
    backup(&client, &other).await;
    let source = describe_table(&client, &table).await;

    let summaries = listed(&client, &table).await;
    assert_eq!(arns_of(&summaries), arns(&made));
    for (summary, details) in summaries.iter().zip(&made) {
        assert_eq!(summary.table_name(), Some(table.as_str()));
        assert_eq!(summary.table_id(), source.table_id());
        assert_eq!(summary.table_arn(), source.table_arn());
        assert_eq!(summary.backup_name(), Some(details.backup_name()));
        let created = summary.backup_creation_date_time().map(millis);
        assert_eq!(created, Some(millis(details.backup_creation_date_time())));
        assert_eq!(summary.backup_status(), Some(&BackupStatus::Available));
        assert_eq!(summary.backup_type(), Some(&BackupType::User));
        assert_eq!(summary.backup_size_bytes(), details.backup_size_bytes());
        assert!(summary.backup_size_bytes().unwrap_or(0) > 0, "{summary:?}");
    }
}

#[tokio::test]
async fn list_backups_pages_by_limit_and_resumes_after_exclusive_start_backup_arn() {
    let client = util::client();
    let table = util::table_s(&client).await;
    let made = backups(&client, &table, 3).await;
    let page = |limit: i32, start: Option<String>| {
        let request = client
            .list_backups()
            .table_name(&table)
            .limit(limit)
            .set_exclusive_start_backup_arn(start);
        async move { request.send().await.expect("ListBackups succeeds") }
    };

    let first = page(2, None).await;
    assert_eq!(arns_of(first.backup_summaries()), arns(&made[..2]));
    assert_eq!(
        first.last_evaluated_backup_arn(),
        Some(made[1].backup_arn())
    );
    let rest = page(2, first.last_evaluated_backup_arn.clone()).await;
    assert_eq!(arns_of(rest.backup_summaries()), arns(&made[2..]));
    assert_eq!(rest.last_evaluated_backup_arn(), None);

    let whole = page(3, None).await;
    assert_eq!(arns_of(whole.backup_summaries()), arns(&made));
    assert_eq!(
        whole.last_evaluated_backup_arn(),
        None,
        "Limit equals the count"
    );
}

#[tokio::test]
async fn list_backups_time_bounds_include_the_lower_and_exclude_the_upper() {
    let client = util::client();
    let table = util::table_s(&client).await;
    let made = backups(&client, &table, 3).await;
    let at = |i: usize| DateTime::from_millis(millis(made[i].backup_creation_date_time()));
    let between = |lower: Option<DateTime>, upper: Option<DateTime>| {
        let request = client
            .list_backups()
            .table_name(&table)
            .set_time_range_lower_bound(lower)
            .set_time_range_upper_bound(upper);
        async move {
            request
                .send()
                .await
                .expect("ListBackups succeeds")
                .backup_summaries
        }
    };

    let from_second = between(Some(at(1)), None).await.unwrap_or_default();
    assert_eq!(arns_of(&from_second), arns(&made[1..]));
    let before_second = between(None, Some(at(1))).await.unwrap_or_default();
    assert_eq!(arns_of(&before_second), arns(&made[..1]));
    let first_two = between(Some(at(0)), Some(at(2))).await.unwrap_or_default();
    assert_eq!(arns_of(&first_two), arns(&made[..2]));
}

#[tokio::test]
async fn deleting_a_backup_answers_deleted_and_the_backup_is_gone() {
    let client = util::client();
    let table = util::table_s(&client).await;
    let made = backups(&client, &table, 2).await;
    let arn = made[0].backup_arn();

    let answer = client.delete_backup().backup_arn(arn).send().await.unwrap();
    let details = answer
        .backup_description()
        .and_then(|d| d.backup_details())
        .expect("BackupDetails");
    assert_eq!(details.backup_arn(), arn);
    assert_eq!(details.backup_status(), &BackupStatus::Deleted);

    let described = client.describe_backup().backup_arn(arn).send().await;
    assert_error(
        described,
        "BackupNotFoundException",
        &format!("Backup not found: {arn}"),
    );
    assert_eq!(arns_of(&listed(&client, &table).await), arns(&made[1..]));
}
