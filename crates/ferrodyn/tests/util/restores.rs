//! What the backup and point-in-time recovery tests share: reading a table's
//! description, waiting for a restored table, and the settings a restore
//! leaves out (DynamoDB's list: stream, TTL, tags, deletion protection).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_sdk_dynamodb::primitives::DateTime;
use aws_sdk_dynamodb::types::{TableDescription, TableStatus, TimeToLiveStatus};
use aws_sdk_dynamodb::Client;

/// How long a restore or a backup may take in these tests.
pub const WAIT: Duration = Duration::from_secs(20);

/// Seconds since the epoch, as DynamoDB's timestamps are.
pub fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// A timestamp in milliseconds (the precision restores honour).
pub fn millis(t: &DateTime) -> i64 {
    (t.as_secs_f64() * 1000.0).round() as i64
}

pub async fn describe_table(client: &Client, table: &str) -> TableDescription {
    client
        .describe_table()
        .table_name(table)
        .send()
        .await
        .expect("DescribeTable succeeds")
        .table
        .expect("Table")
}

/// Polls DescribeTable until the table is ACTIVE.
pub async fn wait_active(client: &Client, table: &str) -> TableDescription {
    super::poll_until(
        "the restored table to be ACTIVE",
        WAIT,
        move || async move {
            let described = describe_table(client, table).await;
            (described.table_status() == Some(&TableStatus::Active)).then_some(described)
        },
    )
    .await
}

/// A restored table has none of the settings a restore leaves out: no
/// stream, TTL disabled, no tags, deletion protection off.
pub async fn assert_restore_left_out_settings(client: &Client, restored: &TableDescription) {
    let stream = restored.stream_specification();
    assert!(stream.is_none_or(|s| !s.stream_enabled()), "{restored:?}");
    assert_eq!(restored.latest_stream_arn(), None);
    assert_eq!(restored.deletion_protection_enabled(), Some(false));
    let table = restored.table_name().expect("TableName");
    let ttl = client
        .describe_time_to_live()
        .table_name(table)
        .send()
        .await
        .unwrap();
    let ttl = ttl
        .time_to_live_description()
        .expect("TimeToLiveDescription");
    assert_eq!(ttl.time_to_live_status(), Some(&TimeToLiveStatus::Disabled));
    let arn = restored.table_arn().unwrap();
    let tags = client
        .list_tags_of_resource()
        .resource_arn(arn)
        .send()
        .await
        .unwrap();
    assert!(tags.tags().is_empty(), "{tags:?}");
}
