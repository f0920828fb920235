//! Embedding: a Rust user's own test starts Ferrodyn in its process with
//! `ferrodyn_server::EmbeddedServer`, points the AWS SDK for Rust at it, and
//! the server is gone when the handle is dropped. This file is also the
//! example the README links to.

use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, KeySchemaElement, KeyType,
    ScalarAttributeType,
};
use aws_sdk_dynamodb::Client;
use ferrodyn_server::{EmbeddedOptions, EmbeddedServer};

/// An SDK client for `endpoint`; any credentials work (signatures are not
/// verified by an embedded server).
fn sdk_client(endpoint: &str) -> Client {
    let config = aws_sdk_dynamodb::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .endpoint_url(endpoint)
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("test", "test", None, None, "embedded"))
        .build();
    Client::from_conf(config)
}

async fn create_users_table(client: &Client) {
    client
        .create_table()
        .table_name("users")
        .key_schema(
            KeySchemaElement::builder()
                .attribute_name("pk")
                .key_type(KeyType::Hash)
                .build()
                .unwrap(),
        )
        .attribute_definitions(
            AttributeDefinition::builder()
                .attribute_name("pk")
                .attribute_type(ScalarAttributeType::S)
                .build()
                .unwrap(),
        )
        .billing_mode(BillingMode::PayPerRequest)
        .send()
        .await
        .unwrap();
}

#[tokio::test]
async fn an_embedded_server_answers_the_sdk_and_stops_on_drop() {
    let server = EmbeddedServer::start().unwrap();
    let client = sdk_client(server.endpoint());
    create_users_table(&client).await;
    client
        .put_item()
        .table_name("users")
        .item("pk", AttributeValue::S("u1".into()))
        .item("email", AttributeValue::S("a@example.com".into()))
        .send()
        .await
        .unwrap();
    let got = client
        .get_item()
        .table_name("users")
        .key("pk", AttributeValue::S("u1".into()))
        .send()
        .await
        .unwrap();
    assert_eq!(
        got.item().unwrap()["email"],
        AttributeValue::S("a@example.com".into())
    );

    let address = server.address();
    drop(server);
    assert!(
        std::net::TcpStream::connect(address).is_err(),
        "the port is closed once the handle is dropped"
    );
}

#[tokio::test]
async fn two_embedded_servers_are_independent() {
    let a = EmbeddedServer::start().unwrap();
    let b = EmbeddedServer::start().unwrap();
    assert_ne!(a.endpoint(), b.endpoint());
    create_users_table(&sdk_client(a.endpoint())).await;
    let tables_b = sdk_client(b.endpoint()).list_tables().send().await.unwrap();
    assert!(tables_b.table_names().is_empty());
}

#[tokio::test]
async fn embedded_fault_rules_apply_and_bad_ones_are_refused() {
    let options = EmbeddedOptions {
        faults: vec!["PutItem=internal@1".into()],
        ..EmbeddedOptions::default()
    };
    let server = EmbeddedServer::start_with(options).unwrap();
    let client = sdk_client(server.endpoint());
    create_users_table(&client).await;
    let err = client
        .put_item()
        .table_name("users")
        .item("pk", AttributeValue::S("u1".into()))
        .send()
        .await
        .unwrap_err();
    assert_eq!(
        err.raw_response().map(|r| r.status().as_u16()),
        Some(500),
        "{err:?}"
    );

    let bad = EmbeddedOptions {
        faults: vec!["PutItem=nonsense".into()],
        ..EmbeddedOptions::default()
    };
    let refused = EmbeddedServer::start_with(bad)
        .err()
        .expect("a bad rule is refused");
    assert_eq!(refused.kind(), std::io::ErrorKind::InvalidInput);
}

/// The controls a Rust test has: a namespace per test (an access key), a
/// snapshot restored, the manual clock expiring an item, faults set and
/// cleared, and a reset.
#[tokio::test]
async fn embedded_test_controls_namespaces_snapshots_clock_and_faults() {
    let mut options = EmbeddedOptions {
        namespaces: true,
        ..EmbeddedOptions::default()
    };
    options.engine.clock = ferrodyn_engine::clock::ClockMode::Manual;
    let server = EmbeddedServer::start_with(options).unwrap();
    let client_as = |key: &str| {
        let config = aws_sdk_dynamodb::Config::builder()
            .behavior_version(BehaviorVersion::latest())
            .endpoint_url(server.endpoint())
            .region(Region::new("us-east-1"))
            .credentials_provider(Credentials::new(key, "test", None, None, "embedded"))
            .build();
        Client::from_conf(config)
    };
    let (one, two) = (client_as("test-one"), client_as("test-two"));
    create_users_table(&one).await;
    let listed = two.list_tables().send().await.unwrap();
    assert!(listed.table_names().is_empty(), "another key, other tables");

    let now = server.now();
    let exp = now.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() + 60;
    let item = [
        ("pk", AttributeValue::S("u1".into())),
        ("exp", AttributeValue::N(exp.to_string())),
    ];
    let put = one.put_item().table_name("users");
    put.set_item(Some(
        item.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
    ))
    .send()
    .await
    .unwrap();
    let summary = server.snapshot(Some("test-one"), "seeded").unwrap();
    assert_eq!(summary.tables, 1);
    let ttl = aws_sdk_dynamodb::types::TimeToLiveSpecification::builder()
        .enabled(true)
        .attribute_name("exp")
        .build()
        .unwrap();
    one.update_time_to_live()
        .table_name("users")
        .time_to_live_specification(ttl)
        .send()
        .await
        .unwrap();
    assert_eq!(
        server.advance(std::time::Duration::from_secs(61)).unwrap(),
        1
    );
    let scanned = one.scan().table_name("users").send().await.unwrap();
    assert_eq!(scanned.count(), 0, "expired by the advance");

    server.restore(Some("test-one"), "seeded").unwrap();
    let scanned = one.scan().table_name("users").send().await.unwrap();
    assert_eq!(scanned.count(), 1, "restored");
    let described = one
        .describe_time_to_live()
        .table_name("users")
        .send()
        .await
        .unwrap();
    let status = described
        .time_to_live_description()
        .unwrap()
        .time_to_live_status();
    assert_eq!(
        status,
        Some(&aws_sdk_dynamodb::types::TimeToLiveStatus::Disabled),
        "as saved"
    );

    server
        .set_faults(Some("test-one"), &["Scan=internal@1.0"], Some(1))
        .unwrap();
    let other = two.list_tables().send().await;
    assert!(other.is_ok(), "another namespace is untouched");
    assert!(one.scan().table_name("users").send().await.is_err());
    server.set_faults(Some("test-one"), &[], None).unwrap();
    assert_eq!(server.reset(Some("test-one")).unwrap(), 1);
    assert!(one
        .list_tables()
        .send()
        .await
        .unwrap()
        .table_names()
        .is_empty());
}
