//! The tests' harness: a `ferrodyn serve` shared by the whole test binary,
//! SDK clients pointed at it, servers of a test's own ([`process`]), raw HTTP
//! for protocol tests ([`raw`]), transaction building blocks ([`txn`]), and
//! small item/error helpers.
//!
//! With `FERRODYN_TEST_ENDPOINT=http://host:port` nothing is spawned and every
//! test runs against that server instead (DynamoDB Local, to check the tests
//! themselves); tests that need their own server process then skip.

pub mod process;
pub mod proxy;
pub mod raw;
pub mod restores;
pub mod streams;
pub mod txn;

use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use aws_sdk_dynamodb::config::retry::RetryConfig;
use aws_sdk_dynamodb::config::timeout::TimeoutConfig;
use aws_sdk_dynamodb::config::{BehaviorVersion, Credentials, Region};
use aws_sdk_dynamodb::error::{ProvideErrorMetadata, SdkError};
use aws_sdk_dynamodb::primitives::Blob;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, KeySchemaElement, KeyType,
    ScalarAttributeType,
};
use aws_sdk_dynamodb::Client;

/// How long one SDK operation may take before the test fails instead of hanging.
const OPERATION_TIMEOUT: Duration = Duration::from_secs(60);

pub use process::{
    cli_command, fresh_postgres_database, server_binary, workspace_root, ServerProcess,
};

/// The server every test in this binary shares.
enum Shared {
    External(String),
    Spawned(ServerProcess),
}

fn shared() -> &'static Shared {
    static SHARED: OnceLock<Shared> = OnceLock::new();
    SHARED.get_or_init(|| match std::env::var("FERRODYN_TEST_ENDPOINT") {
        Ok(url) if !url.is_empty() => Shared::External(url.trim_end_matches('/').to_string()),
        _ => Shared::Spawned(ServerProcess::in_memory()),
    })
}

/// True when the suite runs against `FERRODYN_TEST_ENDPOINT` rather than a
/// spawned Ferrodyn.
pub fn is_external() -> bool {
    matches!(std::env::var("FERRODYN_TEST_ENDPOINT"), Ok(url) if !url.is_empty())
}

/// The shared server's base URL.
pub fn endpoint() -> &'static str {
    match shared() {
        Shared::External(url) => url,
        Shared::Spawned(server) => server.endpoint(),
    }
}

/// An SDK client for the shared server.
pub fn client() -> Client {
    client_for(endpoint())
}

/// An SDK client for `endpoint`: region us-east-1, static credentials, a
/// single attempt (errors surface at once) and a timeout instead of a hang.
pub fn client_for(endpoint: &str) -> Client {
    client_in_region(endpoint, "us-east-1")
}

/// Like [`client_for`], signing for `region` (tables are per region).
pub fn client_in_region(endpoint: &str, region: &str) -> Client {
    client_with_key(endpoint, region, "AKIDEXAMPLE")
}

/// Like [`client_in_region`], signing with access key ID `key` (the
/// namespace of a server run with `--namespaces access-key`).
pub fn client_with_key(endpoint: &str, region: &str, key: &str) -> Client {
    let config = aws_sdk_dynamodb::Config::builder()
        .behavior_version(BehaviorVersion::latest())
        .endpoint_url(endpoint)
        .region(Region::new(region.to_string()))
        .credentials_provider(Credentials::new(key, "secret", None, None, "tests"))
        .retry_config(RetryConfig::standard().with_max_attempts(1))
        .timeout_config(
            TimeoutConfig::builder()
                .operation_timeout(OPERATION_TIMEOUT)
                .build(),
        )
        .build();
    Client::from_conf(config)
}

/// A table name no other test (in this or an earlier run) uses.
pub fn unique_name(prefix: &str) -> String {
    static SERIAL: AtomicU32 = AtomicU32::new(0);
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_millis()
        % 100_000_000;
    format!(
        "{prefix}-{}-{millis}-{}",
        std::process::id(),
        SERIAL.fetch_add(1, Ordering::Relaxed)
    )
}

/// Creates an on-demand table with the given key attributes: the first is the
/// partition key, the optional second the sort key.
pub async fn create_table(
    client: &Client,
    prefix: &str,
    keys: &[(&str, ScalarAttributeType)],
) -> String {
    let name = unique_name(prefix);
    let mut req = client
        .create_table()
        .table_name(&name)
        .billing_mode(BillingMode::PayPerRequest);
    for (i, (attr, ty)) in keys.iter().enumerate() {
        let key_type = if i == 0 {
            KeyType::Hash
        } else {
            KeyType::Range
        };
        req = req
            .key_schema(key(attr, key_type))
            .attribute_definitions(attr_def(attr, ty.clone()));
    }
    req.send().await.expect("CreateTable succeeds");
    name
}

/// A table keyed by the string partition key `p`.
pub async fn table_s(client: &Client) -> String {
    create_table(client, "s", &[("p", ScalarAttributeType::S)]).await
}

/// A table keyed by string `p` and string sort key `c`.
pub async fn table_ss(client: &Client) -> String {
    create_table(
        client,
        "ss",
        &[("p", ScalarAttributeType::S), ("c", ScalarAttributeType::S)],
    )
    .await
}

/// A key schema element.
pub fn key(name: &str, key_type: KeyType) -> KeySchemaElement {
    KeySchemaElement::builder()
        .attribute_name(name)
        .key_type(key_type)
        .build()
        .expect("key schema element is complete")
}

/// An attribute definition.
pub fn attr_def(name: &str, ty: ScalarAttributeType) -> AttributeDefinition {
    AttributeDefinition::builder()
        .attribute_name(name)
        .attribute_type(ty)
        .build()
        .expect("attribute definition is complete")
}

/// A string value.
pub fn s(v: &str) -> AttributeValue {
    AttributeValue::S(v.to_string())
}

/// A number value, given as DynamoDB's decimal string.
pub fn n(v: &str) -> AttributeValue {
    AttributeValue::N(v.to_string())
}

/// A binary value.
pub fn b(v: &[u8]) -> AttributeValue {
    AttributeValue::B(Blob::new(v.to_vec()))
}

/// A list value.
pub fn l(v: Vec<AttributeValue>) -> AttributeValue {
    AttributeValue::L(v)
}

/// A map value.
pub fn m(pairs: &[(&str, AttributeValue)]) -> AttributeValue {
    AttributeValue::M(item(pairs))
}

/// A string set.
pub fn ss(v: &[&str]) -> AttributeValue {
    AttributeValue::Ss(v.iter().map(|s| s.to_string()).collect())
}

/// A number set.
pub fn ns(v: &[&str]) -> AttributeValue {
    AttributeValue::Ns(v.iter().map(|s| s.to_string()).collect())
}

/// An item (or key, or map) from name/value pairs.
pub fn item(pairs: &[(&str, AttributeValue)]) -> HashMap<String, AttributeValue> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

/// Sorts the members of every set in `item` (recursively), so items can be
/// compared: DynamoDB sets are unordered.
pub fn sorted_sets(item: &HashMap<String, AttributeValue>) -> HashMap<String, AttributeValue> {
    item.iter()
        .map(|(k, v)| (k.clone(), sort_value(v)))
        .collect()
}

fn sort_value(v: &AttributeValue) -> AttributeValue {
    match v {
        AttributeValue::Ss(x) => AttributeValue::Ss(sorted(x.clone())),
        AttributeValue::Ns(x) => AttributeValue::Ns(sorted(x.clone())),
        AttributeValue::Bs(x) => {
            let mut x = x.clone();
            x.sort_by(|a, b| a.as_ref().cmp(b.as_ref()));
            AttributeValue::Bs(x)
        }
        AttributeValue::L(x) => AttributeValue::L(x.iter().map(sort_value).collect()),
        AttributeValue::M(x) => AttributeValue::M(sorted_sets(x)),
        other => other.clone(),
    }
}

fn sorted<T: Ord>(mut v: Vec<T>) -> Vec<T> {
    v.sort();
    v
}

/// The code and message of a service error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceError {
    pub code: String,
    pub message: String,
}

/// Unwraps the service error of a failed SDK call; panics if the call
/// succeeded or failed without reaching the service.
pub fn service_error<T: Debug, E: ProvideErrorMetadata + Debug, R: Debug>(
    result: Result<T, SdkError<E, R>>,
) -> ServiceError {
    match result {
        Ok(output) => panic!("expected an error, got success: {output:?}"),
        Err(err) => match err.code() {
            Some(code) => ServiceError {
                code: code.to_string(),
                message: err.message().unwrap_or_default().to_string(),
            },
            None => panic!("expected a service error, got {err:?}"),
        },
    }
}

/// Asserts that an SDK call failed with exactly this error code and message.
#[track_caller]
pub fn assert_error<T: Debug, E: ProvideErrorMetadata + Debug, R: Debug>(
    result: Result<T, SdkError<E, R>>,
    code: &str,
    message: &str,
) {
    let err = service_error(result);
    assert_eq!(
        (err.code.as_str(), err.message.as_str()),
        (code, message),
        "unexpected error"
    );
}

/// Asserts that an SDK call failed with this error code and a message that
/// starts with `prefix` (for messages that quote request-specific details).
#[track_caller]
pub fn assert_error_starts<T: Debug, E: ProvideErrorMetadata + Debug, R: Debug>(
    result: Result<T, SdkError<E, R>>,
    code: &str,
    prefix: &str,
) {
    let err = service_error(result);
    assert_eq!(err.code, code, "unexpected error code: {err:?}");
    assert!(
        err.message.starts_with(prefix),
        "message {:?} does not start with {prefix:?}",
        err.message
    );
}

/// Asserts a ValidationException with exactly this message.
#[track_caller]
pub fn assert_validation<T: Debug, E: ProvideErrorMetadata + Debug, R: Debug>(
    result: Result<T, SdkError<E, R>>,
    message: &str,
) {
    assert_error(result, "ValidationException", message);
}

/// Asserts that an SDK call failed with this error code and one of several
/// messages: for errors whose AWS wording is recorded differently by the
/// AWS-derived references (dynalite's recordings and later ones).
#[track_caller]
pub fn assert_error_one_of<T: Debug, E: ProvideErrorMetadata + Debug, R: Debug>(
    result: Result<T, SdkError<E, R>>,
    code: &str,
    messages: &[&str],
) {
    let err = service_error(result);
    assert_eq!(err.code, code, "unexpected error code: {err:?}");
    assert!(
        messages.contains(&err.message.as_str()),
        "message {:?} is none of {messages:?}",
        err.message
    );
}

/// For a test that starts its own `ferrodyn serve` (flags, a data
/// directory, a process to kill): such a test cannot run against
/// `FERRODYN_TEST_ENDPOINT`, and fails saying so rather than passing
/// without testing anything. Run the suite against an external endpoint
/// with `--skip` for the tests it names.
pub fn needs_own_server() {
    assert!(
        !is_external(),
        "this test starts its own ferrodyn server and cannot run against FERRODYN_TEST_ENDPOINT; \
         run it without that variable, or skip it (cargo test -- --skip NAME)"
    );
}

/// A server of this test's own, started with extra `ferrodyn serve` flags
/// (fault injection, `--burst-seconds`), and an SDK client for it (see
/// [`needs_own_server`]).
pub fn own_server(extra: &[&str]) -> (ServerProcess, Client) {
    needs_own_server();
    let mut args = vec!["--in-memory"];
    args.extend_from_slice(extra);
    let server = ServerProcess::spawn(&args);
    let client = client_for(server.endpoint());
    (server, client)
}

/// Polls `check` every 50 ms until it returns `Some`, failing the test after
/// `timeout`: the only waiting the tests do.
pub async fn poll_until<T, F, Fut>(what: &str, timeout: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let deadline = std::time::Instant::now() + timeout;
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "timed out after {timeout:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The string value of attribute `name` in `item`.
#[track_caller]
pub fn get_s<'a>(item: &'a HashMap<String, AttributeValue>, name: &str) -> &'a str {
    match item.get(name) {
        Some(AttributeValue::S(v)) => v,
        other => panic!("attribute {name} is not a string: {other:?} in {item:?}"),
    }
}

/// The numeric value of attribute `name` in `item`, as an i64.
#[track_caller]
pub fn get_n(item: &HashMap<String, AttributeValue>, name: &str) -> i64 {
    match item.get(name) {
        Some(AttributeValue::N(v)) => v
            .parse()
            .unwrap_or_else(|_| panic!("attribute {name} = {v} is not an integer")),
        other => panic!("attribute {name} is not a number: {other:?} in {item:?}"),
    }
}

/// Every item of a table (or of one of its indexes), by a strongly
/// consistent paginated Scan for tables and an eventually consistent one for
/// indexes.
pub async fn scan_all(
    client: &Client,
    table: &str,
    index: Option<&str>,
) -> Vec<HashMap<String, AttributeValue>> {
    let mut items = Vec::new();
    let mut start = None;
    loop {
        let out = client
            .scan()
            .table_name(table)
            .set_index_name(index.map(str::to_string))
            .consistent_read(index.is_none())
            .set_exclusive_start_key(start)
            .send()
            .await
            .expect("Scan succeeds");
        items.extend(out.items().iter().cloned());
        start = out.last_evaluated_key().cloned();
        if start.is_none() {
            return items;
        }
    }
}

/// The seeded random generator for jitter and random workloads
/// (reproducible per seed).
pub use fastrand::Rng;

/// The PostgreSQL server the PostgreSQL tests run against
/// (`FERRODYN_TEST_STORAGE=postgres://USER@HOST:PORT`, a server where USER
/// may create databases). Those tests are `#[ignore]`d and run by
/// `scripts/pg-tests.sh`, which starts one; run without it, they fail here
/// instead of passing without testing anything.
pub fn postgres_server() -> String {
    match std::env::var("FERRODYN_TEST_STORAGE") {
        Ok(server) if !server.is_empty() => server,
        _ => panic!(
            "FERRODYN_TEST_STORAGE is not set: this test needs PostgreSQL (run scripts/pg-tests.sh)"
        ),
    }
}

/// Held for the whole test by the tests that load the machine for long
/// (bulk fills, isolation checkers) or bound the server's start-up time, so
/// no two of them run at once: the one test binary runs its tests side by
/// side, and a restart measured beside another test's bulk load on a 2-core
/// machine took three times its bound.
pub async fn heavy_test() -> tokio::sync::MutexGuard<'static, ()> {
    static HEAVY: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());
    HEAVY.lock().await
}
