//! DynamoDB Streams as a consumer reads them: what each record says about
//! who made the change. AWS documents that deletions by Time to Live carry
//! `userIdentity` `{"type": "Service", "principalId": "dynamodb.amazonaws.com"}`
//! and that a user's own deletions carry none (developer guide, "Time to
//! Live and DynamoDB Streams").

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_sdk_dynamodb::types::{
    ScalarAttributeType, StreamSpecification, StreamViewType, TimeToLiveSpecification,
};
use serde_json::{json, Value};

use crate::util::streams::stream_records;
use crate::util::{self, n, s};

/// A table keyed by `p` with a NEW_AND_OLD_IMAGES stream and TTL on `exp`:
/// its name and stream ARN.
async fn table_with_stream_and_ttl(client: &aws_sdk_dynamodb::Client) -> (String, String) {
    let table = util::create_table(client, "ttl-stream", &[("p", ScalarAttributeType::S)]).await;
    let spec = StreamSpecification::builder()
        .stream_enabled(true)
        .stream_view_type(StreamViewType::NewAndOldImages)
        .build()
        .unwrap();
    let updated = client
        .update_table()
        .table_name(&table)
        .stream_specification(spec)
        .send()
        .await
        .unwrap();
    let arn = updated
        .table_description()
        .unwrap()
        .latest_stream_arn()
        .unwrap()
        .to_string();
    let ttl = TimeToLiveSpecification::builder()
        .enabled(true)
        .attribute_name("exp")
        .build()
        .unwrap();
    client
        .update_time_to_live()
        .table_name(&table)
        .time_to_live_specification(ttl)
        .send()
        .await
        .unwrap();
    (table, arn)
}

/// The REMOVE record of item `p`, if the stream has one.
fn removal_of<'a>(records: &'a [Value], p: &str) -> Option<&'a Value> {
    records
        .iter()
        .find(|record| record["eventName"] == "REMOVE" && record["dynamodb"]["Keys"]["p"]["S"] == p)
}

#[tokio::test]
async fn ttl_deletions_name_the_service_and_user_deletions_name_no_one() {
    let (server, client) = util::own_server(&["--ttl-interval", "0.1"]);
    let (table, arn) = table_with_stream_and_ttl(&client).await;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let expired = (now - 3600).to_string();
    let live = (now + 3600).to_string();
    for (p, exp) in [("expires", &expired), ("deleted", &live)] {
        let put = client.put_item().table_name(&table).item("p", s(p));
        put.item("exp", n(exp)).send().await.unwrap();
    }
    client
        .delete_item()
        .table_name(&table)
        .key("p", s("deleted"))
        .send()
        .await
        .unwrap();

    let records = util::poll_until("the TTL deletion's record", Duration::from_secs(20), || {
        let (endpoint, arn) = (server.endpoint().to_string(), arn.clone());
        async move {
            let records = stream_records(&endpoint, &arn).await;
            removal_of(&records, "expires").is_some().then_some(records)
        }
    })
    .await;

    let by_ttl = removal_of(&records, "expires").unwrap();
    assert_eq!(
        by_ttl["userIdentity"],
        json!({ "type": "Service", "principalId": "dynamodb.amazonaws.com" }),
        "{by_ttl}"
    );
    assert_eq!(by_ttl["dynamodb"]["OldImage"]["exp"]["N"], expired.as_str());
    assert!(by_ttl["dynamodb"].get("NewImage").is_none(), "{by_ttl}");

    let by_user = removal_of(&records, "deleted").expect("the user's delete is recorded");
    assert!(by_user.get("userIdentity").is_none(), "{by_user}");
    let inserts = records.iter().filter(|r| r["eventName"] == "INSERT");
    assert!(inserts.clone().all(|r| r.get("userIdentity").is_none()));
    assert_eq!(inserts.count(), 2);
}
