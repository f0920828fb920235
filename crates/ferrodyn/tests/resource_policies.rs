//! Resource-based policies through the AWS SDK: PutResourcePolicy,
//! GetResourcePolicy, DeleteResourcePolicy and CreateTable's ResourcePolicy,
//! on tables and streams, with revision ids and AWS's PolicyNotFoundException
//! wording (moto 5.2.5's AWS-verified test_dynamodb_resource_policy). Policies
//! are stored and returned, not enforced.

use crate::util::{self, attr_def, key};
use aws_sdk_dynamodb::types::{
    BillingMode, KeyType, ScalarAttributeType, StreamSpecification, StreamViewType,
};
use aws_sdk_dynamodb::Client;
use std::time::Duration;

fn policy(action: &str) -> String {
    serde_json::json!({
        "Version": "2012-10-17",
        "Statement": [{"Principal": {"AWS": "000000000000"}, "Effect": "Allow",
            "Action": [action], "Resource": "*"}],
    })
    .to_string()
}

async fn table_arn(client: &Client, table: &str) -> String {
    let described = client.describe_table().table_name(table).send().await;
    described.unwrap().table.unwrap().table_arn.unwrap()
}

/// A new table keyed by `p`: its name and ARN.
async fn new_table(client: &Client) -> (String, String) {
    let table = util::table_s(client).await;
    let arn = table_arn(client, &table).await;
    (table, arn)
}

async fn put(client: &Client, arn: &str, action: &str, expected: Option<&str>) -> String {
    let put = client
        .put_resource_policy()
        .resource_arn(arn)
        .policy(policy(action))
        .set_expected_revision_id(expected.map(str::to_string))
        .send()
        .await
        .expect("PutResourcePolicy succeeds");
    put.revision_id.expect("a revision id")
}

/// GetResourcePolicy's answer for `arn`.
async fn get(
    client: &Client,
    arn: &str,
) -> Result<
    aws_sdk_dynamodb::operation::get_resource_policy::GetResourcePolicyOutput,
    aws_sdk_dynamodb::error::SdkError<
        aws_sdk_dynamodb::operation::get_resource_policy::GetResourcePolicyError,
    >,
> {
    client.get_resource_policy().resource_arn(arn).send().await
}

/// AWS's answer where `arn` has no policy (or not the expected one).
fn no_policy(detail: &str) -> String {
    format!("Resource-based policy not found for the provided ResourceArn: {detail}")
}

#[tokio::test]
async fn a_policy_is_returned_with_its_revision_and_the_same_policy_keeps_it() {
    let client = util::client();
    let (_, arn) = new_table(&client).await;
    let first = put(&client, &arn, "dynamodb:*", None).await;
    let got = get(&client, &arn).await.unwrap();
    assert_eq!(got.revision_id.as_deref(), Some(first.as_str()));
    assert_eq!(got.policy.as_deref(), Some(policy("dynamodb:*").as_str()));
    // Putting the same document again changes nothing (AWS: a no-op).
    assert_eq!(put(&client, &arn, "dynamodb:*", None).await, first);
    // Another document gets a later revision; revisions compare as numbers.
    let second = put(&client, &arn, "dynamodb:PutItem", None).await;
    assert!(second.parse::<u128>().unwrap() > first.parse::<u128>().unwrap());
}

#[tokio::test]
async fn expected_revisions_guard_updates_in_aws_words() {
    let client = util::client();
    let (table, arn) = new_table(&client).await;
    // NO_POLICY: only while no policy is attached.
    let first = put(&client, &arn, "dynamodb:*", Some("NO_POLICY")).await;
    util::assert_error(
        client
            .put_resource_policy()
            .resource_arn(&arn)
            .policy(policy("dynamodb:GetItem"))
            .expected_revision_id("NO_POLICY")
            .send()
            .await,
        "PolicyNotFoundException",
        &no_policy(&format!("Requested policy update expecting none to be present for table {table}, but a policy exists with revision id {first}.")),
    );
    let second = put(&client, &arn, "dynamodb:PutItem", Some(&first)).await;
    let stale = no_policy(&format!("Requested update for policy with revision id {first}, but the policy associated to target table {table} has revision id {second}."));
    util::assert_error(
        client
            .put_resource_policy()
            .resource_arn(&arn)
            .policy(policy("dynamodb:GetItem"))
            .expected_revision_id(&first)
            .send()
            .await,
        "PolicyNotFoundException",
        &stale,
    );
    util::assert_error(
        client
            .delete_resource_policy()
            .resource_arn(&arn)
            .expected_revision_id(&first)
            .send()
            .await,
        "PolicyNotFoundException",
        &stale,
    );
    // The refused requests changed nothing.
    let got = get(&client, &arn).await;
    assert_eq!(got.unwrap().revision_id.as_deref(), Some(second.as_str()));
}

#[tokio::test]
async fn deleting_a_policy_detaches_it_and_deleting_none_is_no_error() {
    let client = util::client();
    let (_, arn) = new_table(&client).await;
    let revision = put(&client, &arn, "dynamodb:*", None).await;
    let deleted = client
        .delete_resource_policy()
        .resource_arn(&arn)
        .expected_revision_id(&revision)
        .send()
        .await
        .unwrap();
    assert_eq!(deleted.revision_id.as_deref(), Some(revision.as_str()));
    util::assert_error(
        get(&client, &arn).await,
        "PolicyNotFoundException",
        &no_policy(&arn),
    );
    let again = client
        .delete_resource_policy()
        .resource_arn(&arn)
        .send()
        .await
        .unwrap();
    assert_eq!(again.revision_id, None);
    util::assert_error(
        client
            .delete_resource_policy()
            .resource_arn(&arn)
            .expected_revision_id(&revision)
            .send()
            .await,
        "PolicyNotFoundException",
        &no_policy(&arn),
    );
}

#[tokio::test]
async fn unknown_tables_and_malformed_arns_are_refused() {
    let client = util::client();
    let (table, arn) = new_table(&client).await;
    let missing = format!("Requested resource not found: Table: {table}_ not found");
    util::assert_error(
        client
            .put_resource_policy()
            .resource_arn(format!("{arn}_"))
            .policy(policy("dynamodb:*"))
            .send()
            .await,
        "ResourceNotFoundException",
        &missing,
    );
    util::assert_error(
        get(&client, &format!("{arn}_")).await,
        "ResourceNotFoundException",
        &missing,
    );
    util::assert_error(
        client
            .delete_resource_policy()
            .resource_arn(format!("{arn}_"))
            .send()
            .await,
        "ResourceNotFoundException",
        &missing,
    );
    let index_arn = format!("{arn}/index/byX");
    util::assert_validation(
        get(&client, &index_arn).await,
        &format!("Invalid ResourceArn provided as input {index_arn}"),
    );
}

#[tokio::test]
async fn documents_must_be_json_policies_within_20_kb() {
    let client = util::client();
    let (_, arn) = new_table(&client).await;
    let prefix = "One or more parameter values were invalid: Invalid policy document: ";
    let too_big = format!(
        r#"{{"Version":"2012-10-17","Statement":[],"Id":"{}"}}"#,
        "x".repeat(20 * 1024)
    );
    for document in ["{not json", "[]", too_big.as_str()] {
        util::assert_error_starts(
            client
                .put_resource_policy()
                .resource_arn(&arn)
                .policy(document)
                .send()
                .await,
            "ValidationException",
            prefix,
        );
    }
    // CreateTable checks its ResourcePolicy the same way, and creates nothing.
    let name = util::unique_name("badpolicy");
    util::assert_error_starts(
        client
            .create_table()
            .table_name(&name)
            .billing_mode(BillingMode::PayPerRequest)
            .key_schema(key("p", KeyType::Hash))
            .attribute_definitions(attr_def("p", ScalarAttributeType::S))
            .resource_policy("{not json")
            .send()
            .await,
        "ValidationException",
        prefix,
    );
    assert!(client
        .describe_table()
        .table_name(&name)
        .send()
        .await
        .is_err());
}

/// A table created with a ResourcePolicy and a stream.
async fn table_with_policy_and_stream(client: &Client, name: &str) -> (String, String) {
    let created = client
        .create_table()
        .table_name(name)
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(key("p", KeyType::Hash))
        .attribute_definitions(attr_def("p", ScalarAttributeType::S))
        .stream_specification(
            StreamSpecification::builder()
                .stream_enabled(true)
                .stream_view_type(StreamViewType::KeysOnly)
                .build()
                .unwrap(),
        )
        .resource_policy(policy("dynamodb:GetItem"))
        .send()
        .await
        .expect("CreateTable succeeds");
    let description = created.table_description.unwrap();
    (
        description.table_arn.unwrap(),
        description.latest_stream_arn.unwrap(),
    )
}

#[tokio::test]
async fn create_table_attaches_its_policy_and_streams_have_their_own() {
    let client = util::client();
    let name = util::unique_name("withpolicy");
    let (arn, stream_arn) = table_with_policy_and_stream(&client, &name).await;
    let got = get(&client, &arn).await;
    assert_eq!(
        got.unwrap().policy.as_deref(),
        Some(policy("dynamodb:GetItem").as_str())
    );
    util::assert_error(
        get(&client, &stream_arn).await,
        "PolicyNotFoundException",
        &no_policy(&stream_arn),
    );
    put(&client, &stream_arn, "dynamodb:GetRecords", None).await;
    let stream_policy = get(&client, &stream_arn).await.unwrap();
    assert_eq!(
        stream_policy.policy.as_deref(),
        Some(policy("dynamodb:GetRecords").as_str())
    );
    // The table's policy is untouched by its stream's.
    let got = get(&client, &arn).await;
    assert_eq!(
        got.unwrap().policy.as_deref(),
        Some(policy("dynamodb:GetItem").as_str())
    );
    let unknown_stream = format!("{arn}/stream/2000-01-01T00:00:00.000");
    util::assert_error(
        get(&client, &unknown_stream).await,
        "ResourceNotFoundException",
        &format!("Requested resource not found: Stream: {unknown_stream} not found"),
    );
}

#[tokio::test]
async fn policies_survive_a_restart_and_go_with_their_table() {
    let dir = tempfile::tempdir().unwrap();
    let server = util::ServerProcess::with_data_dir(dir.path());
    let client = util::client_for(server.endpoint());
    let name = util::unique_name("kept");
    let (arn, stream_arn) = table_with_policy_and_stream(&client, &name).await;
    let stream_revision = put(&client, &stream_arn, "dynamodb:GetRecords", None).await;
    let table_revision = get(&client, &arn).await.unwrap().revision_id;
    assert!(server.terminate().success());

    let server = util::ServerProcess::with_data_dir(dir.path());
    let client = util::client_for(server.endpoint());
    let got = get(&client, &arn).await;
    assert_eq!(got.unwrap().revision_id, table_revision);
    let got = get(&client, &stream_arn).await;
    assert_eq!(
        got.unwrap().revision_id.as_deref(),
        Some(stream_revision.as_str())
    );

    // Deleting the table deletes its policies: a table of the same name
    // starts without one.
    client
        .delete_table()
        .table_name(&name)
        .send()
        .await
        .unwrap();
    client
        .create_table()
        .table_name(&name)
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(key("p", KeyType::Hash))
        .attribute_definitions(attr_def("p", ScalarAttributeType::S))
        .send()
        .await
        .expect("CreateTable succeeds");
    util::assert_error(
        get(&client, &arn).await,
        "PolicyNotFoundException",
        &no_policy(&arn),
    );
}

#[tokio::test]
#[ignore = "needs PostgreSQL: run by scripts/pg-tests.sh"]
async fn a_policy_put_through_one_node_is_read_and_guarded_through_another() {
    // Shared storage (PostgreSQL): the policy lives in the catalog record,
    // which every node reads; GetResourcePolicy is eventually consistent on
    // AWS too, and here within a node's 1 s catalog reload.
    let url = util::fresh_postgres_database(&util::postgres_server());
    let nodes: Vec<util::ServerProcess> = (0..2)
        .map(|_| util::ServerProcess::spawn(&["--storage", &url]))
        .collect();
    let (a, b) = (
        util::client_for(nodes[0].endpoint()),
        util::client_for(nodes[1].endpoint()),
    );
    let (table, arn) = new_table(&a).await;
    let revision = put(&a, &arn, "dynamodb:*", None).await;
    let seen = util::poll_until("B sees A's policy", Duration::from_secs(5), || async {
        let got = get(&b, &arn).await;
        got.ok()
            .and_then(|p| p.revision_id)
            .filter(|r| *r == revision)
    })
    .await;
    // B's conditional update against A's revision succeeds; A's next
    // attempt against the same, now stale, revision is refused.
    let newer = put(&b, &arn, "dynamodb:GetItem", Some(&seen)).await;
    util::poll_until("A sees B's policy", Duration::from_secs(5), || async {
        let got = get(&a, &arn).await;
        got.ok().and_then(|p| p.revision_id).filter(|r| *r == newer)
    })
    .await;
    util::assert_error(
        a.put_resource_policy()
            .resource_arn(&arn)
            .policy(policy("dynamodb:PutItem"))
            .expected_revision_id(&revision)
            .send()
            .await,
        "PolicyNotFoundException",
        &no_policy(&format!("Requested update for policy with revision id {revision}, but the policy associated to target table {table} has revision id {newer}.")),
    );
}
