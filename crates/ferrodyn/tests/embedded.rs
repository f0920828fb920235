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
