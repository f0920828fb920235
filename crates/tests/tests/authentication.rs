//! Signature verification (`ferrodyn serve --credentials ID:SECRET`): the
//! official SDK's signatures are accepted, a wrong secret is
//! InvalidSignatureException and an unknown key UnrecognizedClientException,
//! with DynamoDB's messages. Without `--credentials` any key is accepted.

mod common;

use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_dynamodb::Client;
use common::own_server;

fn client_with(endpoint: &str, id: &str, secret: &str) -> Client {
    let config = aws_sdk_dynamodb::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .endpoint_url(endpoint)
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new(id, secret, None, None, "tests"))
        .retry_config(aws_sdk_dynamodb::config::retry::RetryConfig::standard().with_max_attempts(1))
        .build();
    Client::from_conf(config)
}

fn error_of<E: std::fmt::Debug>(result: Result<impl std::fmt::Debug, E>) -> String {
    format!("{:?}", result.expect_err("the call should fail"))
}

#[tokio::test]
async fn signatures_are_verified_when_credentials_are_configured() {
    let Some((server, _)) = own_server(&[
        "--credentials",
        "AKIDEXAMPLE:secret",
        "--credentials",
        "AKIDOTHER:other",
    ]) else {
        return;
    };
    let good = client_with(server.endpoint(), "AKIDEXAMPLE", "secret");
    good.list_tables()
        .send()
        .await
        .expect("a correctly signed request is accepted");
    let second = client_with(server.endpoint(), "AKIDOTHER", "other");
    second
        .list_tables()
        .send()
        .await
        .expect("every configured key is accepted");

    let wrong_secret = client_with(server.endpoint(), "AKIDEXAMPLE", "not-the-secret");
    let error = error_of(wrong_secret.list_tables().send().await);
    assert!(error.contains("InvalidSignatureException"), "{error}");
    assert!(
        error.contains(
            "The request signature we calculated does not match the signature you provided"
        ),
        "{error}"
    );

    let unknown = client_with(server.endpoint(), "AKIDUNKNOWN", "secret");
    let error = error_of(unknown.list_tables().send().await);
    assert!(error.contains("UnrecognizedClientException"), "{error}");
    assert!(
        error.contains("The security token included in the request is invalid."),
        "{error}"
    );
}

#[tokio::test]
async fn any_credentials_work_without_configured_keys() {
    let Some((server, _)) = own_server(&[]) else {
        return;
    };
    let anyone = client_with(server.endpoint(), "WHOEVER", "whatever");
    anyone
        .list_tables()
        .send()
        .await
        .expect("signatures are not checked by default");
}
