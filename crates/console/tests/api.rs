//! The console API over HTTP: a Ferrodyn server in this process (in-memory
//! engine) with the console merged into its router, as `ferrodyn serve`
//! does, driven with plain HTTP requests like the page sends.

use ferrodyn_client::config::Environment;
use ferrodyn_client::{Client, ConnectionOptions};
use ferrodyn_console::{router, ConsoleOptions};
use ferrodyn_engine::{Engine, EngineOptions};
use ferrodyn_server::faults::Faults;
use ferrodyn_server::AppState;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::Duration;

const BIG: &str = "12345678901234567890123456789012345678";

struct Console {
    base: String,
    agent: ureq::Agent,
}

/// Starts a server with the console on a free port; it lives as long as the
/// test process.
fn start(token: Option<&str>) -> Console {
    let (tx, rx) = std::sync::mpsc::channel();
    let token = token.map(str::to_string);
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let address = listener.local_addr().unwrap();
            let engine = Engine::open(ferrodyn_storage::open_memory(), EngineOptions::default());
            let state = AppState {
                engine: engine.unwrap(),
                check_request_time: false,
                faults: Arc::new(Faults::new(Vec::new(), 0)),
                credentials: None,
                namespaces: false,
            };
            let endpoint = format!("http://{address}");
            let client = Client::connect_with_env(
                &ConnectionOptions {
                    endpoint_url: Some(endpoint.clone()),
                    ..Default::default()
                },
                &Environment::default(),
            )
            .unwrap();
            let console = router(ConsoleOptions {
                client,
                streams_client: None,
                token,
                hosts: Vec::new(),
                any_host: false,
            });
            tx.send(endpoint).unwrap();
            ferrodyn_server::serve_with(
                state,
                listener,
                ferrodyn_server::ConnectionLimits::default(),
                console,
                std::future::pending(),
            )
            .await
            .unwrap();
        });
    });
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(Duration::from_secs(30)))
        .build()
        .new_agent();
    Console {
        base: rx.recv().unwrap(),
        agent,
    }
}

impl Console {
    /// POSTs to `/console/api/<path>` with extra headers; (status, JSON).
    fn post_with(&self, path: &str, body: &Value, headers: &[(&str, &str)]) -> (u16, Value) {
        let mut request = self
            .agent
            .post(format!("{}/console/api/{path}", self.base))
            .header("content-type", "application/json");
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        let mut response = request.send(body.to_string().as_bytes()).unwrap();
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    fn post(&self, path: &str, body: Value) -> Value {
        let (status, value) = self.post_with(path, &body, &[]);
        assert_eq!(status, 200, "{path}: {value}");
        value
    }

    fn get(&self, path: &str) -> (u16, Value) {
        let mut response = self
            .agent
            .get(format!("{}/console/api/{path}", self.base))
            .call()
            .unwrap();
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    fn create_table(&self, name: &str) {
        self.post(
            "call/CreateTable",
            json!({
                "TableName": name, "BillingMode": "PAY_PER_REQUEST",
                "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            }),
        );
    }

    fn item(&self, table: &str, pk: &str) -> Value {
        self.post(
            "call/GetItem",
            json!({"TableName": table, "Key": {"pk": {"S": pk}}}),
        )["Item"]
            .clone()
    }
}

#[test]
fn dynamodb_calls_pass_through_and_errors_keep_their_code() {
    let c = start(None);
    c.create_table("users");
    assert_eq!(
        c.post("call/ListTables", json!({}))["TableNames"],
        json!(["users"])
    );
    let (status, error) = c.post_with("call/DescribeTable", &json!({"TableName": "nope"}), &[]);
    assert_eq!(status, 400);
    assert_eq!(error["code"], "ResourceNotFoundException");
    assert!(
        error["message"].as_str().unwrap().contains("nope"),
        "{error}"
    );
    let (status, error) = c.post_with("call/List-Tables", &json!({}), &[]);
    assert_eq!(
        (status, error["code"].as_str()),
        (400, Some("ValidationException"))
    );
    let (status, info) = c.get("info");
    assert_eq!(status, 200);
    assert_eq!(info["endpoint"], json!(c.base));
}

#[test]
fn a_cross_origin_post_is_refused_and_no_cors_headers_are_sent() {
    let c = start(None);
    let (status, error) = c.post_with(
        "call/ListTables",
        &json!({}),
        &[("origin", "http://evil.example")],
    );
    assert_eq!(status, 403, "{error}");
    let (status, _) = c.post_with(
        "call/ListTables",
        &json!({}),
        &[("sec-fetch-site", "cross-site")],
    );
    assert_eq!(status, 403);
    let host = c.base.trim_start_matches("http://").to_string();
    let response = c
        .agent
        .post(format!("{}/console/api/call/ListTables", c.base))
        .header("origin", &c.base)
        .header("host", &host)
        .send("{}".as_bytes())
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    assert!(response
        .headers()
        .keys()
        .all(|name| !name.as_str().starts_with("access-control")));
}

#[test]
fn a_foreign_host_header_is_refused_against_dns_rebinding() {
    let c = start(None);
    for path in ["/console", "/console/api/info", "/console/assets/style.css"] {
        let response = c
            .agent
            .get(format!("{}{path}", c.base))
            .header("host", "evil.example:8000")
            .call()
            .unwrap();
        assert_eq!(response.status().as_u16(), 403, "{path}");
    }
}

#[test]
fn with_a_token_every_api_request_must_carry_it() {
    let c = start(Some("s3cret"));
    let (status, error) = c.post_with("call/ListTables", &json!({}), &[]);
    assert_eq!(
        (status, error["code"].as_str()),
        (401, Some("MissingConsoleToken"))
    );
    let (status, _) = c.post_with(
        "call/ListTables",
        &json!({}),
        &[("x-console-token", "guess")],
    );
    assert_eq!(status, 401);
    let (status, _) = c.post_with(
        "call/ListTables",
        &json!({}),
        &[("cookie", "a=b; ferrodyn_console=s3cret")],
    );
    assert_eq!(status, 200);
    // Opening the page with ?token= sets the cookie and drops the token from the URL.
    let response = c
        .agent
        .get(format!("{}/console?token=s3cret", c.base))
        .call()
        .unwrap();
    assert_eq!(response.status().as_u16(), 303);
    let cookie = response.headers()["set-cookie"].to_str().unwrap();
    assert!(
        cookie.starts_with("ferrodyn_console=s3cret;") && cookie.contains("HttpOnly"),
        "{cookie}"
    );
    let page = c.agent.get(format!("{}/console", c.base)).call().unwrap();
    assert_eq!(page.status().as_u16(), 401);
}

#[test]
fn plain_json_and_dynamodb_json_convert_losslessly() {
    let c = start(None);
    let text = format!(
        r#"{{"pk": "u1", "n": {BIG}, "tags": {{"$SS": ["a", "b"]}}, "bin": {{"$B": "AAEC"}}}}"#
    );
    let item = c.post("convert", json!({"to": "ddb", "text": text}))["item"].clone();
    assert_eq!(item["n"], json!({"N": BIG}));
    assert_eq!(item["tags"], json!({"SS": ["a", "b"]}));
    assert_eq!(item["bin"], json!({"B": "AAEC"}));
    let back = c.post("convert", json!({"to": "plain", "item": item}))["text"].clone();
    let back = back.as_str().unwrap();
    assert!(
        back.contains(BIG) && back.contains("\"$SS\"") && back.contains("\"$B\""),
        "{back}"
    );
    let again = c.post("convert", json!({"to": "ddb", "text": back}))["item"].clone();
    assert_eq!(again, item);
}

fn stage_update(c: &Console, stage: Value, pk: &str, name: &str, value: &str) -> Value {
    c.post(
        "stage/add",
        json!({"stage": stage, "op": "update", "table": "users", "key": {"pk": {"S": pk}},
               "set": {name: {"S": value}}}),
    )["stage"]
        .clone()
}

#[test]
fn staged_edits_diff_and_commit_as_one_transaction() {
    let c = start(None);
    c.create_table("users");
    c.post(
        "call/PutItem",
        json!({"TableName": "users", "Item": {"pk": {"S": "u1"}, "name": {"S": "Ada"}}}),
    );
    let stage = stage_update(&c, Value::Null, "u1", "name", "Grace");
    let stage = c.post(
        "stage/add",
        json!({"stage": stage, "op": "put", "table": "users", "item": {"pk": {"S": "u2"}, "name": {"S": "Alan"}}}),
    )["stage"]
        .clone();
    assert_eq!(stage["changes"].as_array().unwrap().len(), 2);
    let diffs = c.post("stage/diff", json!({"stage": stage}))["diffs"].clone();
    assert_eq!(
        diffs[0]["changes"],
        json!([{"name": "name", "old": {"S": "Ada"}, "new": {"S": "Grace"}}])
    );
    assert_eq!(
        c.item("users", "u1")["name"],
        json!({"S": "Ada"}),
        "nothing written by staging"
    );
    let report = c.post("stage/commit", json!({"stage": stage}));
    assert_eq!(
        (report["changes"].as_u64(), report["transactions"].as_u64()),
        (Some(2), Some(1))
    );
    assert_eq!(c.item("users", "u1")["name"], json!({"S": "Grace"}));
    assert_eq!(c.item("users", "u2")["name"], json!({"S": "Alan"}));
}

#[test]
fn a_commit_cancelled_by_a_concurrent_change_reports_that_change() {
    let c = start(None);
    c.create_table("users");
    for pk in ["u1", "u2"] {
        c.post(
            "call/PutItem",
            json!({"TableName": "users", "Item": {"pk": {"S": pk}, "s": {"S": "new"}}}),
        );
    }
    let stage = stage_update(&c, Value::Null, "u1", "s", "a");
    let stage = stage_update(&c, stage, "u2", "s", "a");
    c.post(
        "call/PutItem",
        json!({"TableName": "users", "Item": {"pk": {"S": "u2"}, "s": {"S": "closed"}}}),
    );
    let (status, error) = c.post_with("stage/commit", &json!({"stage": stage}), &[]);
    assert_eq!(status, 409, "{error}");
    assert_eq!(error["code"], "TransactionCanceledException");
    let failures = error["body"]["failures"].as_array().unwrap();
    assert_eq!(failures.len(), 1);
    assert_eq!(failures[0]["change"], 1);
    assert_eq!(failures[0]["code"], "ConditionalCheckFailed");
    assert_eq!(
        c.item("users", "u1")["s"],
        json!({"S": "new"}),
        "nothing applied"
    );
}

#[test]
fn the_read_form_builds_the_request_and_pages() {
    let c = start(None);
    c.create_table("users");
    for i in 0..5 {
        c.post("call/PutItem", json!({"TableName": "users", "Item": {"pk": {"S": format!("u{i}")}, "status": {"S": "x"}}}));
    }
    let page = c.post(
        "read",
        json!({"operation": "Scan", "table": "users", "limit": 2, "filter": "status = \"x\""}),
    );
    assert_eq!(page["Count"], 2);
    assert!(page["LastEvaluatedKey"].is_object());
    assert_eq!(page["request"]["FilterExpression"], "#status = :status");
    // A mistake in the filter is named as the filter and shown as typed
    // (issue 26: it said "Invalid ConditionExpression" and echoed placeholders).
    let bad = json!({"operation": "Scan", "table": "users", "filter": "status = = \"x\""});
    let (status, error) = c.post_with("read", &bad, &[]);
    assert_eq!(status, 400);
    let message = error["message"].as_str().unwrap();
    assert!(
        message.starts_with("Invalid filter: Syntax error"),
        "{message}"
    );
    assert!(message.ends_with("filter: status = = \"x\""), "{message}");
    assert!(
        !message.contains("ConditionExpression") && !message.contains("#status"),
        "{message}"
    );
    assert!(page["commands"]["aws"]
        .as_str()
        .unwrap()
        .starts_with("aws dynamodb scan"));
    assert!(page["commands"]["ferrodyn"]
        .as_str()
        .unwrap()
        .starts_with("ferrodyn scan"));
    let next = c.post(
        "read",
        json!({"operation": "Scan", "table": "users", "limit": 10, "startKey": page["LastEvaluatedKey"]}),
    );
    assert_eq!(next["Count"], 3);
    let query = c.post(
        "read",
        json!({"operation": "Query", "table": "users", "pk": {"name": "pk", "value": {"S": "u3"}}}),
    );
    assert_eq!(query["Items"][0]["pk"], json!({"S": "u3"}));
}

fn wait_for_job(c: &Console, job: &str) -> Value {
    for _ in 0..300 {
        let (status, progress) = c.get(&format!("bulk/{job}"));
        assert_eq!(status, 200);
        if progress["state"] != "running" {
            return progress;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("bulk job {job} did not finish");
}

#[test]
fn bulk_jobs_delete_and_set_with_progress() {
    let c = start(None);
    c.create_table("users");
    for i in 0..60 {
        c.post(
            "call/PutItem",
            json!({"TableName": "users", "Item": {"pk": {"S": format!("u{i}")}}}),
        );
    }
    let keys: Vec<Value> = (0..10)
        .map(|i| json!({"pk": {"S": format!("u{i}")}}))
        .collect();
    let job = c.post("bulk", json!({"table": "users", "action": "set", "attribute": "status", "value": {"S": "gold"}, "keys": keys}));
    let done = wait_for_job(&c, job["job"].as_str().unwrap());
    assert_eq!(
        (
            done["state"].as_str(),
            done["done"].as_u64(),
            done["total"].as_u64()
        ),
        (Some("done"), Some(10), Some(10))
    );
    assert_eq!(c.item("users", "u3")["status"], json!({"S": "gold"}));
    let job = c.post("bulk", json!({"table": "users", "action": "delete", "read": {"operation": "Scan", "table": "users"}}));
    let done = wait_for_job(&c, job["job"].as_str().unwrap());
    assert_eq!(
        (
            done["state"].as_str(),
            done["done"].as_u64(),
            done["failed"].as_u64()
        ),
        (Some("done"), Some(60), Some(0))
    );
    let count = c.post(
        "call/Scan",
        json!({"TableName": "users", "Select": "COUNT"}),
    );
    assert_eq!(count["Count"], 0);
}

#[test]
fn the_expression_builder_aliases_reserved_words_and_writes_snippets() {
    let c = start(None);
    let out = c.post("expr", json!({"condition": "status = \"active\"", "update": "SET visits = visits + 1", "table": "users", "key": "{\"pk\": \"ACCT#1\", \"n\": 7}"}));
    assert_eq!(
        out["fields"]["Key"],
        json!({"pk": {"S": "ACCT#1"}, "n": {"N": "7"}})
    );
    assert_eq!(out["fields"]["ConditionExpression"], "#status = :status");
    assert_eq!(
        out["fields"]["ExpressionAttributeValues"][":status"],
        json!({"S": "active"})
    );
    assert!(out["cli"]
        .as_str()
        .unwrap()
        .contains("--condition-expression"));
    assert!(out["snippets"]["python"]
        .as_str()
        .unwrap()
        .contains("update_item("));
    assert!(out["snippets"]["python"].as_str().unwrap().contains("Key="));
    // UpdateItem and DeleteItem address one item: no snippet without a Key.
    let (status, error) = c.post_with(
        "expr",
        &json!({"operation": "DeleteItem", "table": "t"}),
        &[],
    );
    assert_eq!(status, 400);
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .contains("DeleteItem needs a Key"),
        "{error}"
    );
    let (status, error) = c.post_with("expr", &json!({"condition": "status = = 1"}), &[]);
    assert_eq!(
        (status, error["code"].as_str()),
        (400, Some("ValidationException"))
    );
}

#[test]
fn cost_estimates_and_measured_usage_are_priced() {
    let c = start(None);
    let estimate = c.post(
        "cost",
        json!({"itemSize": "2KB", "writes": 10, "eventualReads": 100, "storageGb": 1}),
    );
    assert_eq!(estimate["writeUnitsPerWrite"], 2);
    assert!(estimate["onDemand"]["total"].as_f64().unwrap() > 0.0);
    c.create_table("users");
    c.post(
        "call/PutItem",
        json!({"TableName": "users", "Item": {"pk": {"S": "u1"}}}),
    );
    let (status, usage) = c.get("usage");
    assert_eq!(status, 200);
    let rows = usage["Consumed"].as_array().unwrap();
    assert!(
        rows.iter()
            .any(|r| r["Operation"] == "PutItem" && r["Price"].as_f64().unwrap() > 0.0),
        "{usage}"
    );
}

#[test]
fn import_and_export_round_trip_exact_numbers() {
    let c = start(None);
    c.create_table("users");
    let text = format!(
        "{{\"pk\": \"u1\", \"n\": {BIG}}}\n{{\"pk\": \"u2\", \"tags\": {{\"$SS\": [\"x\"]}}}}\n"
    );
    let job = c.post(
        "import",
        json!({"table": "users", "format": "jsonl", "text": text}),
    );
    let report = wait_for_job(&c, job["job"].as_str().unwrap());
    assert_eq!(
        (report["done"].as_u64(), report["failed"].as_u64()),
        (Some(2), Some(0))
    );
    assert_eq!(c.item("users", "u1")["n"], json!({"N": BIG}));
    let csv = c.post("export", json!({"table": "users", "format": "csv"}));
    let csv = csv["text"].as_str().unwrap();
    assert!(csv.starts_with("pk,n,tags\n") && csv.contains(BIG), "{csv}");
    let (status, error) = c.post_with(
        "import",
        &json!({"table": "users", "format": "xml", "text": "<a/>"}),
        &[],
    );
    assert_eq!(
        (status, error["code"].as_str()),
        (400, Some("ValidationException"))
    );
}

#[test]
fn the_page_and_assets_are_served_with_a_strict_content_security_policy() {
    let c = start(None);
    let page = c.agent.get(format!("{}/console", c.base)).call().unwrap();
    assert_eq!(page.status().as_u16(), 200);
    let csp = page.headers()["content-security-policy"].to_str().unwrap();
    assert!(csp.contains("default-src 'self'") && csp.contains("frame-ancestors 'none'"));
    let js = c
        .agent
        .get(format!("{}/console/assets/js/app.js", c.base))
        .call()
        .unwrap();
    assert_eq!(
        js.headers()["content-type"],
        "text/javascript; charset=utf-8"
    );
    let missing = c
        .agent
        .get(format!("{}/console/assets/nope.js", c.base))
        .call()
        .unwrap();
    assert_eq!(missing.status().as_u16(), 404);
    assert!(ferrodyn_console::assets::total_bytes() < 500 * 1024);
    let (status, error) = c.get("no/such/thing");
    assert_eq!(
        (status, error["code"].as_str()),
        (404, Some("UnknownConsoleRequest"))
    );
}

#[test]
fn the_replication_report_follows_a_replica_from_creation_to_active() {
    let c = start(None);
    c.create_table("orders");
    let plain = c.post("replication", json!({"table": "orders"}));
    assert_eq!(plain["Targets"], json!([]), "{plain}");
    assert_eq!(plain["GlobalTableVersion"], Value::Null, "{plain}");
    c.post(
        "call/UpdateTable",
        json!({"TableName": "orders", "ReplicaUpdates": [{"Create": {"RegionName": "us-west-2"}}]}),
    );
    let started = std::time::Instant::now();
    loop {
        let report = c.post("replication", json!({"table": "orders"}));
        assert_eq!(report["GlobalTableVersion"], "2019.11.21", "{report}");
        if report["Targets"][0]["ReplicaStatus"] == "ACTIVE" {
            assert_eq!(report["Targets"][0]["RegionName"], "us-west-2");
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(30), "{report}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let (status, refused) = c.post_with("replication", &json!({"table": "a&b"}), &[]);
    assert_eq!(status, 400, "{refused}");
    assert!(refused["message"].as_str().unwrap().contains("not a table"));
}
