//! Signature verification (`ferrodyn serve --credentials ID:SECRET`): the
//! official SDK's signatures are accepted, a wrong secret is
//! InvalidSignatureException and an unknown key UnrecognizedClientException,
//! with DynamoDB's messages. Without `--credentials` any key is accepted.

use crate::util::{self, own_server, raw};
use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_dynamodb::Client;

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
    let (server, _) = own_server(&[
        "--credentials",
        "AKIDEXAMPLE:secret",
        "--credentials",
        "AKIDOTHER:other",
    ]);
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
    let (server, _) = own_server(&[]);
    let anyone = client_with(server.endpoint(), "WHOEVER", "whatever");
    anyone
        .list_tables()
        .send()
        .await
        .expect("signatures are not checked by default");
}

// ---------------------------------------------------------------------------
// The scope, signed-header and request-time rules (issue 14). Each refusal is
// checked for DynamoDB's error type and message, and for having written
// nothing: every refused request is a PutItem of a fresh key, read back
// afterwards with a correctly signed GetItem. Where each wording comes from
// is noted in crates/sigv4/src/verify.rs (AWS's "Troubleshoot signed
// requests" page and DynamoDB replies quoted in SDK issue threads).

use aws_sdk_dynamodb::types::AttributeValue;
use ferrodyn_sigv4::{sign, Request};
use std::time::{Duration, SystemTime};

const ID: &str = "AKIDEXAMPLE";
const SECRET: &str = "secret";

/// A server verifying signatures for `ID:SECRET` in us-east-1, a table `t`
/// keyed by string `p`, and a correctly signed client.
async fn verifying_server() -> (util::ServerProcess, Client, String) {
    let (server, _) = own_server(&[
        "--credentials",
        "AKIDEXAMPLE:secret",
        "--region",
        "us-east-1",
    ]);
    let good = client_with(server.endpoint(), ID, SECRET);
    let table = util::table_s(&good).await;
    (server, good, table)
}

/// How a test bends an otherwise correct raw request.
struct Bend<'a> {
    region: &'a str,
    service: &'a str,
    time: SystemTime,
    /// Headers left out of the signature (sent all the same).
    unsigned: &'a [&'a str],
    /// Send the signing time as `Date` instead of `X-Amz-Date`.
    date_header: bool,
    /// (from, to) replacement applied to the Authorization header.
    edit: Option<(&'a str, &'a str)>,
}

impl Default for Bend<'_> {
    fn default() -> Self {
        Bend {
            region: "us-east-1",
            service: "dynamodb",
            time: SystemTime::now(),
            unsigned: &[],
            date_header: false,
            edit: None,
        }
    }
}

/// Sends a PutItem of key `key` into `table`, signed with `ID:SECRET` and
/// bent as `bend` says.
async fn raw_put(endpoint: &str, table: &str, key: &str, bend: Bend<'_>) -> raw::Response {
    let host = endpoint.trim_start_matches("http://");
    let body = format!(r#"{{"TableName":"{table}","Item":{{"p":{{"S":"{key}"}}}}}}"#);
    let (amz_date, _) = ferrodyn_sigv4::format_time(bend.time);
    let target = format!("{}PutItem", raw::TARGET_PREFIX);
    let mut headers: Vec<(String, String)> = vec![
        ("host".into(), host.into()),
        ("content-type".into(), raw::CONTENT_TYPE.into()),
        ("x-amz-target".into(), target),
    ];
    if bend.date_header {
        headers.push(("date".into(), amz_date));
    }
    let to_sign: Vec<(&str, &str)> = headers
        .iter()
        .filter(|(name, _)| !bend.unsigned.contains(&name.as_str()))
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    let credentials = ferrodyn_sigv4::Credentials {
        access_key_id: ID.into(),
        secret_access_key: SECRET.into(),
        session_token: None,
    };
    let request = Request {
        method: "POST",
        path: "/",
        query: &[],
        headers: &to_sign,
        body: body.as_bytes(),
    };
    for (name, mut value) in sign(&request, &credentials, bend.region, bend.service, bend.time) {
        if name == "x-amz-date" && bend.date_header {
            continue;
        }
        if let (Some((from, to)), "authorization") = (bend.edit, name.as_str()) {
            value = value.replace(from, to);
        }
        headers.push((name, value));
    }
    let pairs: Vec<(&str, &str)> = headers
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    raw::send_to(endpoint, "POST", "/", &pairs, body.into_bytes())
        .await
        .expect("the server answers")
}

/// Asserts the refusal's type and message, and that nothing was written.
async fn assert_refused(
    good: &Client,
    table: &str,
    key: &str,
    response: raw::Response,
    error: &str,
    message: &str,
) {
    assert_eq!(
        response.status,
        400,
        "{}",
        String::from_utf8_lossy(&response.body)
    );
    assert_eq!(response.error_name(), error);
    assert_eq!(response.json()["message"], message);
    assert_not_written(good, table, key).await;
}

async fn assert_not_written(good: &Client, table: &str, key: &str) {
    let item = good
        .get_item()
        .table_name(table)
        .key("p", AttributeValue::S(key.into()))
        .consistent_read(true)
        .send()
        .await
        .expect("GetItem succeeds");
    assert!(item.item().is_none(), "a refused request wrote {key}");
}

#[tokio::test]
async fn a_correctly_signed_raw_request_is_accepted() {
    let (server, good, table) = verifying_server().await;
    let response = raw_put(server.endpoint(), &table, "ok", Bend::default()).await;
    assert_eq!(
        response.status,
        200,
        "{}",
        String::from_utf8_lossy(&response.body)
    );
    let item = good
        .get_item()
        .table_name(&table)
        .key("p", AttributeValue::S("ok".into()))
        .send()
        .await
        .unwrap();
    assert!(item.item().is_some());
}

#[tokio::test]
async fn a_scope_naming_another_region_is_refused() {
    let (server, good, table) = verifying_server().await;
    // Through the SDK: a client configured for another region.
    let config = aws_sdk_dynamodb::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .endpoint_url(server.endpoint())
        .region(Region::new("eu-west-1"))
        .credentials_provider(Credentials::new(ID, SECRET, None, None, "tests"))
        .retry_config(aws_sdk_dynamodb::config::retry::RetryConfig::standard().with_max_attempts(1))
        .build();
    let elsewhere = Client::from_conf(config);
    let result = elsewhere
        .put_item()
        .table_name(&table)
        .item("p", AttributeValue::S("sdk-eu".into()))
        .send()
        .await;
    util::assert_error(
        result,
        "InvalidSignatureException",
        "Credential should be scoped to a valid region, not 'eu-west-1'. ",
    );
    let bend = Bend {
        region: "us-west-2",
        ..Bend::default()
    };
    let response = raw_put(server.endpoint(), &table, "raw-west", bend).await;
    assert_refused(
        &good,
        &table,
        "raw-west",
        response,
        "InvalidSignatureException",
        "Credential should be scoped to a valid region, not 'us-west-2'. ",
    )
    .await;
    assert_not_written(&good, &table, "sdk-eu").await;
}

#[tokio::test]
async fn a_scope_naming_another_service_or_terminator_is_refused() {
    let (server, good, table) = verifying_server().await;
    let bend = Bend {
        service: "s3",
        ..Bend::default()
    };
    let response = raw_put(server.endpoint(), &table, "s3", bend).await;
    assert_refused(
        &good,
        &table,
        "s3",
        response,
        "InvalidSignatureException",
        "Credential should be scoped to correct service: 'dynamodb'. ",
    )
    .await;
    let bend = Bend {
        edit: Some(("/aws4_request", "/aws5_request")),
        ..Bend::default()
    };
    let response = raw_put(server.endpoint(), &table, "term", bend).await;
    assert_refused(
        &good,
        &table,
        "term",
        response,
        "InvalidSignatureException",
        "Credential should be scoped with a valid terminator: 'aws4_request', not 'aws5_request'. ",
    )
    .await;
}

#[tokio::test]
async fn a_scope_date_other_than_the_request_day_is_refused() {
    let (server, good, table) = verifying_server().await;
    let now = SystemTime::now();
    let (amz_date, today) = ferrodyn_sigv4::format_time(now);
    let (_, three_days_ago) = ferrodyn_sigv4::format_time(now - Duration::from_secs(3 * 86_400));
    let from = format!("/{today}/");
    let to = format!("/{three_days_ago}/");
    let bend = Bend {
        time: now,
        edit: Some((&from, &to)),
        ..Bend::default()
    };
    let response = raw_put(server.endpoint(), &table, "old-scope", bend).await;
    let message = format!(
        "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '{three_days_ago}' != '{today}', from '{amz_date}'. "
    );
    assert_refused(
        &good,
        &table,
        "old-scope",
        response,
        "InvalidSignatureException",
        &message,
    )
    .await;
}

#[tokio::test]
async fn host_and_target_must_be_signed() {
    let (server, good, table) = verifying_server().await;
    let bend = Bend {
        unsigned: &["host"],
        ..Bend::default()
    };
    let response = raw_put(server.endpoint(), &table, "no-host", bend).await;
    assert_refused(
        &good,
        &table,
        "no-host",
        response,
        "InvalidSignatureException",
        "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.",
    )
    .await;
    // Unsigned, X-Amz-Target could turn a captured GetItem into a DeleteItem.
    let bend = Bend {
        unsigned: &["x-amz-target"],
        ..Bend::default()
    };
    let response = raw_put(server.endpoint(), &table, "no-target", bend).await;
    assert_refused(
        &good,
        &table,
        "no-target",
        response,
        "InvalidSignatureException",
        "'X-Amz-Target' must be a 'SignedHeader' in the AWS Authorization.",
    )
    .await;
    // Only x-amz-date signed (the attack campaign's case).
    let bend = Bend {
        unsigned: &["host", "content-type", "x-amz-target"],
        ..Bend::default()
    };
    let response = raw_put(server.endpoint(), &table, "date-only", bend).await;
    assert_refused(
        &good,
        &table,
        "date-only",
        response,
        "InvalidSignatureException",
        "'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.",
    )
    .await;
}

#[tokio::test]
async fn an_old_timestamp_is_refused_in_date_as_in_x_amz_date() {
    let (server, good, table) = verifying_server().await;
    let two_days_ago = SystemTime::now() - Duration::from_secs(2 * 86_400);
    let (stamp, _) = ferrodyn_sigv4::format_time(two_days_ago);
    for (key, date_header) in [("old-x-amz-date", false), ("old-date", true)] {
        let bend = Bend {
            time: two_days_ago,
            date_header,
            ..Bend::default()
        };
        let response = raw_put(server.endpoint(), &table, key, bend).await;
        let body = response.json();
        let message = body["message"].as_str().unwrap_or_default().to_string();
        assert!(
            message.starts_with(&format!("Signature expired: {stamp} is now earlier than ")),
            "{message}"
        );
        assert_refused(
            &good,
            &table,
            key,
            response,
            "InvalidSignatureException",
            &message,
        )
        .await;
    }
}
