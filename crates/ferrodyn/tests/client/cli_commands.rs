//! The `ferrodyn` client commands for tables, single items, query and scan,
//! run as a user runs them against a spawned server.

use super::{cli_command, lines, run_with_stdin, stderr, Server};
use serde_json::{json, Value};

fn json_out(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

#[test]
fn help_introduces_every_command() {
    let output = run_with_stdin(
        {
            let mut c = cli_command();
            c.arg("--help");
            c
        },
        "",
    );
    let help = String::from_utf8(output.stdout).unwrap();
    for command in [
        "serve", "tables", "get", "put", "update", "delete", "query", "scan", "import", "export",
        "convert",
    ] {
        assert!(
            help.contains(&format!("  {command} ")),
            "`{command}` missing from:\n{help}"
        );
    }
    for (args, expected) in [
        (vec!["query", "--help"], "--sk-begins-with"),
        (vec!["import", "--help"], "--checkpoint"),
        (vec!["tables", "create", "--help"], "--gsi"),
        (vec!["scan", "--help"], "--endpoint-url"),
        (vec!["convert", "to-ddb", "--help"], "$SS"),
    ] {
        let output = run_with_stdin(
            {
                let mut c = cli_command();
                c.args(&args);
                c
            },
            "",
        );
        let help = String::from_utf8(output.stdout).unwrap();
        assert!(
            output.status.success() && help.contains(expected),
            "{args:?}:\n{help}"
        );
    }
}

#[test]
fn tables_are_created_listed_described_and_deleted() {
    let server = Server::start(&[]);
    let out = server.ok(&[
        "tables",
        "create",
        "orders",
        "--pk",
        "customer",
        "--sk",
        "created:N",
        "--gsi",
        "by-status=status:S,created:N",
    ]);
    assert!(out.contains("created table orders"), "{out}");
    server.ok(&[
        "tables",
        "create",
        "users",
        "--pk",
        "id",
        "--provisioned",
        "5,5",
        "--wait",
    ]);
    assert_eq!(server.ok(&["tables", "list"]), "orders\nusers\n");
    assert_eq!(
        json_out(&server.ok(&["tables", "list", "-o", "json"]))["TableNames"],
        json!(["orders", "users"])
    );

    let table = server.ok(&["tables", "describe", "orders"]);
    assert!(
        table.contains("customer (S) partition, created (N) sort"),
        "{table}"
    );
    assert!(table.contains("by-status (status, created)"), "{table}");
    let described = json_out(&server.ok(&["tables", "describe", "users", "-o", "json"]));
    assert_eq!(
        described["BillingModeSummary"]["BillingMode"],
        json!("PROVISIONED")
    );
    assert_eq!(
        described["ProvisionedThroughput"]["ReadCapacityUnits"],
        json!(5)
    );

    let refused = server.cli(&["tables", "delete", "users"]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("add --yes"),
        "{}",
        stderr(&refused)
    );
    server.ok(&["tables", "delete", "users", "--yes"]);
    assert_eq!(server.ok(&["tables", "list"]), "orders\n");

    let bad = server.cli(&["tables", "create", "x1x", "--pk", "id:Q"]);
    assert!(
        stderr(&bad).contains("TYPE one of S, N, B"),
        "{}",
        stderr(&bad)
    );
    let missing = server.cli(&["tables", "describe", "nope"]);
    assert!(
        stderr(&missing).contains("ResourceNotFoundException"),
        "{}",
        stderr(&missing)
    );
}

#[test]
fn items_are_put_read_updated_and_deleted_in_plain_json() {
    let server = Server::start(&[]);
    server.ok(&["tables", "create", "users", "--pk", "id"]);
    let item = r#"{"id": "u1", "name": "Ada", "balance": 12345678901234567890.123456789, "tags": {"$SS": ["a", "b"]}, "address": {"city": "London"}}"#;
    assert_eq!(
        server.ok(&["put", "users", item]),
        "put 1 item into users\n"
    );

    let got = json_out(&server.ok(&["get", "users", "u1", "-o", "json", "--typed"]));
    assert_eq!(got["name"], json!("Ada"));
    assert_eq!(got["tags"], json!({"$SS": ["a", "b"]}));
    // The number is exact in the output text, not rounded through a float.
    let text = server.ok(&["get", "users", "{\"id\": \"u1\"}", "-o", "jsonl"]);
    assert!(text.contains("12345678901234567890.123456789"), "{text}");
    let raw = json_out(&server.ok(&["get", "users", "u1", "-o", "raw"]));
    assert_eq!(
        raw["balance"],
        json!({"N": "12345678901234567890.123456789"})
    );
    let table = server.ok(&["get", "users", "u1"]);
    assert!(
        table.contains("London") && table.contains("{a, b}"),
        "{table}"
    );

    // Reserved words (name, status) need no aliasing by the user.
    let updated = json_out(&server.ok(&[
        "update",
        "users",
        "u1",
        "--set",
        "name=\"Grace\"",
        "--set",
        "address.city=\"Paris\"",
        "--set",
        "status=\"active\"",
        "--add",
        "visits=2",
        "--remove",
        "tags",
        "-o",
        "json",
    ]));
    assert_eq!(updated["name"], json!("Grace"));
    assert_eq!(updated["address"]["city"], json!("Paris"));
    assert_eq!(updated["visits"], json!(2));
    assert!(updated.get("tags").is_none());
    let expression = json_out(&server.ok(&[
        "update",
        "users",
        "u1",
        "--expression",
        "SET #v = #v + :one",
        "--names",
        "{\"#v\": \"visits\"}",
        "--values",
        "{\":one\": 1}",
        "--condition",
        "attribute_exists(id)",
        "-o",
        "json",
    ]));
    assert_eq!(expression["visits"], json!(3));

    let conflict = server.cli(&["put", "users", r#"{"id": "u1"}"#, "--if-not-exists"]);
    assert!(!conflict.status.success());
    assert!(
        stderr(&conflict).contains("ConditionalCheckFailedException"),
        "{}",
        stderr(&conflict)
    );
    let failed_update = server.cli(&[
        "update",
        "users",
        "u1",
        "--set",
        "x=1",
        "--condition",
        "visits > :v",
        "--values",
        "{\":v\": 10}",
    ]);
    assert!(stderr(&failed_update).contains("ConditionalCheckFailedException"));

    server.ok(&[
        "put",
        "users",
        r#"{"id": {"S": "u2"}, "n": {"N": "1"}}"#,
        "--raw",
    ]);
    assert_eq!(
        json_out(&server.ok(&["get", "users", "u2", "-o", "json"])),
        json!({"id": "u2", "n": 1})
    );

    let deleted = json_out(&server.ok(&["delete", "users", "u2", "-o", "json"]));
    assert_eq!(deleted["n"], json!(1));
    assert_eq!(
        server.ok(&["delete", "users", "u2"]),
        "no item had that key (nothing deleted)\n"
    );
    assert_eq!(server.ok(&["get", "users", "u2", "-o", "json"]), "null\n");

    // Keys from stdin and files.
    let from_stdin =
        server.cli_with_stdin(&["get", "users", "-", "-o", "jsonl"], r#"{"id": "u1"}"#);
    assert!(String::from_utf8_lossy(&from_stdin.stdout).contains("Grace"));
}

#[test]
fn keys_given_as_values_are_typed_from_the_key_schema() {
    let server = Server::start(&[]);
    server.ok(&[
        "tables", "create", "events", "--pk", "device", "--sk", "at:N",
    ]);
    server.ok(&["put", "events", r#"{"device": "d1", "at": 7, "v": "x"}"#]);
    assert_eq!(
        json_out(&server.ok(&["get", "events", "d1", "7", "-o", "json"]))["v"],
        json!("x")
    );
    let missing_sort = server.cli(&["get", "events", "d1"]);
    assert!(
        stderr(&missing_sort).contains("sort key `at`"),
        "{}",
        stderr(&missing_sort)
    );
}

/// A table with partition `p` and string sort keys `k00`..`k19`.
fn events(server: &Server) {
    server.ok(&[
        "tables",
        "create",
        "events",
        "--pk",
        "pk",
        "--sk",
        "sk:S",
        "--gsi",
        "by-kind=kind:S,sk:S",
    ]);
    let mut file = String::new();
    for i in 0..20 {
        let kind = if i % 2 == 0 { "even" } else { "odd" };
        file.push_str(&format!(
            "{{\"pk\": \"p\", \"sk\": \"k{i:02}\", \"n\": {i}, \"kind\": \"{kind}\"}}\n"
        ));
    }
    file.push_str("{\"pk\": \"other\", \"sk\": \"k00\", \"n\": 100, \"kind\": \"even\"}\n");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.jsonl");
    std::fs::write(&path, file).unwrap();
    server.ok(&["import", "events", path.to_str().unwrap(), "--no-progress"]);
}

fn sort_keys(out: &str) -> Vec<String> {
    lines(out)
        .iter()
        .map(|i| i["sk"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn query_narrows_by_every_sort_key_condition() {
    let server = Server::start(&[]);
    events(&server);
    let q = |extra: &[&str]| {
        let mut args = vec!["query", "events", "p", "-o", "jsonl", "--paginate"];
        args.extend_from_slice(extra);
        sort_keys(&server.ok(&args))
    };
    assert_eq!(q(&[]).len(), 20);
    assert_eq!(q(&["--sk-eq", "k03"]), ["k03"]);
    assert_eq!(q(&["--sk-lt", "k02"]), ["k00", "k01"]);
    assert_eq!(q(&["--sk-le", "k01"]), ["k00", "k01"]);
    assert_eq!(q(&["--sk-gt", "k17"]), ["k18", "k19"]);
    assert_eq!(q(&["--sk-ge", "k18"]), ["k18", "k19"]);
    assert_eq!(q(&["--sk-begins-with", "k1"]).len(), 10);
    assert_eq!(q(&["--sk-between", "k05", "k07"]), ["k05", "k06", "k07"]);
    assert_eq!(
        q(&["--sk-between", "k05", "k07", "--descending"]),
        ["k07", "k06", "k05"]
    );
    assert_eq!(
        q(&[
            "--filter",
            "#n >= :min",
            "--names",
            "{\"#n\": \"n\"}",
            "--values",
            "{\":min\": 18}"
        ]),
        ["k18", "k19"]
    );
    let projected = lines(&server.ok(&[
        "query",
        "events",
        "p",
        "--sk-eq",
        "k01",
        "--projection",
        "sk, kind",
        "-o",
        "jsonl",
    ]));
    assert_eq!(projected, [json!({"sk": "k01", "kind": "odd"})]);
    let two_sort_flags = server.cli(&["query", "events", "p", "--sk-eq", "a", "--sk-lt", "b"]);
    assert!(!two_sort_flags.status.success());
}

#[test]
fn query_limit_and_pages() {
    let server = Server::start(&[]);
    events(&server);
    let limited = server.cli(&["query", "events", "p", "--limit", "3", "-o", "jsonl"]);
    assert_eq!(
        sort_keys(&String::from_utf8_lossy(&limited.stdout)),
        ["k00", "k01", "k02"]
    );
    let hint = stderr(&limited);
    assert!(hint.contains("--start-key"), "{hint}");
    // --limit counts returned items, following pages past a filter.
    let filtered = server.ok(&[
        "query",
        "events",
        "p",
        "--limit",
        "3",
        "--filter",
        "kind = :k",
        "--values",
        "{\":k\": \"odd\"}",
        "-o",
        "jsonl",
    ]);
    assert_eq!(sort_keys(&filtered), ["k01", "k03", "k05"]);
    // The printed start key continues where the limit stopped.
    let start = hint
        .split("--start-key '")
        .nth(1)
        .unwrap()
        .split('\'')
        .next()
        .unwrap()
        .to_string();
    let rest = server.ok(&[
        "query",
        "events",
        "p",
        "--limit",
        "2",
        "--raw",
        "--start-key",
        &start,
        "-o",
        "jsonl",
    ]);
    assert_eq!(sort_keys(&rest), ["k03", "k04"]);
    // An index.
    let by_kind = server.ok(&[
        "query",
        "events",
        "odd",
        "--index",
        "by-kind",
        "--sk-begins-with",
        "k0",
        "-o",
        "jsonl",
        "--paginate",
    ]);
    assert_eq!(sort_keys(&by_kind), ["k01", "k03", "k05", "k07", "k09"]);
    let table = server.cli(&["query", "events", "other"]);
    assert!(String::from_utf8_lossy(&table.stdout).contains("k00"));
    assert!(stderr(&table).contains("1 item"), "{}", stderr(&table));
}

#[test]
fn scan_with_filters_limits_pages_and_segments() {
    let server = Server::start(&[]);
    events(&server);
    assert_eq!(
        lines(&server.ok(&["scan", "events", "--paginate", "-o", "jsonl"])).len(),
        21
    );
    assert_eq!(
        lines(&server.ok(&["scan", "events", "--limit", "5", "-o", "jsonl"])).len(),
        5
    );
    let big = lines(&server.ok(&[
        "scan",
        "events",
        "--paginate",
        "--filter",
        "n >= :n",
        "--values",
        "{\":n\": 15}",
        "-o",
        "jsonl",
    ]));
    assert_eq!(big.len(), 6);
    let segmented = lines(&server.ok(&[
        "scan",
        "events",
        "--paginate",
        "--segments",
        "4",
        "-o",
        "jsonl",
    ]));
    assert_eq!(segmented.len(), 21);
    let json = json_out(&server.ok(&["scan", "events", "--paginate", "-o", "json"]));
    assert_eq!(json.as_array().unwrap().len(), 21);
    let raw = lines(&server.ok(&["scan", "events", "--limit", "1", "-o", "raw"]));
    assert!(
        raw[0]["pk"].get("S").is_some(),
        "raw output is DynamoDB JSON"
    );
    let needs_paginate = server.cli(&["scan", "events", "--segments", "2"]);
    assert!(stderr(&needs_paginate).contains("add --paginate"));
}

#[test]
fn a_first_page_only_read_says_how_to_get_the_rest() {
    let server = Server::start(&[]);
    server.create_table("wide", false);
    // About 1.3 MB: more than one 1 MB page.
    let client = server.client();
    let mut writer = ferrodyn_client::batch::BatchWriter::new(&client, "wide");
    for i in 0..1300 {
        writer
            .put(json!({"pk": {"S": format!("p{i}")}, "blob": {"S": "x".repeat(1000)}}))
            .unwrap();
    }
    writer.finish().unwrap();
    let first = server.cli(&["scan", "wide", "-o", "jsonl"]);
    let count = lines(&String::from_utf8_lossy(&first.stdout)).len();
    assert!(count > 0 && count < 1300, "one page only: {count}");
    assert!(
        stderr(&first).contains("add --paginate"),
        "{}",
        stderr(&first)
    );
    assert_eq!(
        lines(&server.ok(&["scan", "wide", "--paginate", "-o", "jsonl"])).len(),
        1300
    );
}

#[test]
fn connection_flags_are_checked() {
    let mut command = cli_command();
    command.args(["tables", "list", "--endpoint-url", "localhost:1"]);
    let bad = run_with_stdin(command, "");
    assert!(
        stderr(&bad).contains("must start with http://"),
        "{}",
        stderr(&bad)
    );
    let mut command = cli_command();
    command.args(["tables", "list", "--endpoint-url", "http://127.0.0.1:9"]);
    let unreachable = run_with_stdin(command, "");
    assert!(
        stderr(&unreachable).contains("cannot reach the endpoint"),
        "{}",
        stderr(&unreachable)
    );
    let mut command = cli_command();
    command.args([
        "tables",
        "list",
        "--endpoint-url",
        "aws",
        "--region",
        "eu-west-1",
    ]);
    let no_credentials = run_with_stdin(command, "");
    assert!(
        stderr(&no_credentials).contains("no credentials"),
        "{}",
        stderr(&no_credentials)
    );
}

#[test]
fn the_test_harness_commands_move_the_clock_and_save_restore_and_reset_tables() {
    let server = Server::start(&["--clock", "manual"]);
    let shown = server.ok(&["clock"]);
    assert!(shown.ends_with("(manual clock)\n"), "{shown}");
    let moved = server.ok(&["clock", "--set", "2040-01-01T00:00:00Z"]);
    assert_eq!(
        moved,
        "2040-01-01T00:00:00.000Z (manual clock)\nTime to Live deleted 0 item(s)\n"
    );
    let moved = server.ok(&["clock", "--advance", "25h"]);
    assert!(moved.starts_with("2040-01-02T01:00:00.000Z"), "{moved}");
    let back = server.cli(&["clock", "--set", "2039-01-01T00:00:00Z"]);
    assert!(!back.status.success());
    assert!(
        stderr(&back).contains("cannot go back"),
        "{}",
        stderr(&back)
    );

    server.create_table("orders", false);
    server.ok(&["put", "orders", r#"{"pk": "o1"}"#]);
    let saved = server.ok(&["snapshot", "save", "one-order"]);
    assert!(saved.starts_with("saved one-order: 1 table(s)"), "{saved}");
    server.ok(&["put", "orders", r#"{"pk": "o2"}"#]);
    server.ok(&["snapshot", "restore", "one-order"]);
    let scanned = lines(&server.ok(&["scan", "orders", "-o", "jsonl"]));
    assert_eq!(scanned, vec![json!({"pk": "o1"})]);
    assert_eq!(server.ok(&["snapshot", "list"]), "one-order\n");

    let unconfirmed = server.cli(&["reset"]);
    assert!(stderr(&unconfirmed).contains("--yes"));
    assert_eq!(server.ok(&["reset", "--yes"]), "deleted 1 table(s)\n");
    assert_eq!(server.ok(&["tables", "list"]), "");
}
