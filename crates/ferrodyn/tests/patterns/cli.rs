//! The `ferrodyn stage|unique|expr|cost` subcommands end to end: the binary
//! against a spawned server, output as a user sees it.

use super::{cli_command, client, create_table, endpoint, unique_name};
use std::process::Output;

/// Runs a client command against the shared server.
fn ferrodyn(args: &[&str], dir: &std::path::Path) -> Output {
    let mut all: Vec<&str> = args.to_vec();
    let url = endpoint();
    all.extend(["--endpoint-url", &url]);
    offline(&all, dir)
}

/// Runs a command that needs no server (`expr`, `cost`), with the
/// user's AWS settings out of the way.
fn offline(args: &[&str], dir: &std::path::Path) -> Output {
    cli_command()
        .args(args)
        .current_dir(dir)
        .env_remove("FERRODYN_STAGE")
        .output()
        .expect("ferrodyn runs")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn expr_prints_sdk_json_and_aws_cli_options() {
    let dir = tempfile::tempdir().unwrap();
    let out = offline(
        &[
            "expr",
            "condition",
            "--eq",
            "status=active",
            "--not-exists",
            "PK",
        ],
        dir.path(),
    );
    assert!(out.status.success(), "{}", text(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        json["ConditionExpression"],
        "#status = :status AND attribute_not_exists(PK)"
    );
    assert_eq!(json["ExpressionAttributeValues"][":status"]["S"], "active");

    let out = offline(
        &["expr", "update", "SET visits = visits + 1", "--cli"],
        dir.path(),
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "--update-expression 'SET visits = visits + :visits' \\\n  --expression-attribute-values '{\":visits\":{\"N\":\"1\"}}'\n"
    );

    let out = offline(&["expr", "key", "pk = 'a' or sk = 'b'"], dir.path());
    assert!(!out.status.success());
    assert!(
        text(&out).contains("KeyConditionExpression"),
        "{}",
        text(&out)
    );
}

#[test]
fn expr_keeps_numbers_inside_list_and_map_literals_exact() {
    let dir = tempfile::tempdir().unwrap();
    let out = offline(
        &[
            "expr",
            "update",
            r#"SET l = [12345678901234567890.5], m = {"n": 0.12345678901234567890123456789012345678}"#,
        ],
        dir.path(),
    );
    assert!(out.status.success(), "{}", text(&out));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let values = &json["ExpressionAttributeValues"];
    assert_eq!(values[":l"]["L"][0]["N"], "12345678901234567890.5");
    assert_eq!(
        values[":m"]["M"]["n"]["N"],
        "0.12345678901234567890123456789012345678"
    );
}

#[test]
fn cost_prints_units_and_both_billing_modes() {
    let dir = tempfile::tempdir().unwrap();
    let out = offline(
        &[
            "cost",
            "--item-size",
            "1000",
            "--writes",
            "100",
            "--eventual-reads",
            "200",
        ],
        dir.path(),
    );
    let t = text(&out);
    assert!(out.status.success(), "{t}");
    assert!(
        t.contains("capacity: 100.00 write units/s, 100.00 read units/s"),
        "{t}"
    );
    assert!(t.contains("on-demand       164.25      32.85"), "{t}");
    assert!(t.contains("provisioned      47.45       9.49"), "{t}");
}

#[test]
fn a_cancelled_stage_commit_reports_the_change_and_keeps_the_stage() {
    let api = client();
    let table = unique_name("cli");
    create_table(&api, &table, "id", None);
    let dir = tempfile::tempdir().unwrap();
    let put = |item: &str| ferrodyn(&["put", &table, item], dir.path());
    assert!(put(r#"{"id":"u1","status":"new"}"#).status.success());

    let out = ferrodyn(
        &[
            "stage",
            "add",
            "update",
            &table,
            r#"{"id":"u1"}"#,
            "--set",
            "status=active",
        ],
        dir.path(),
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(put(r#"{"id":"u1","status":"closed"}"#).status.success());

    let out = ferrodyn(&["stage", "commit"], dir.path());
    assert!(!out.status.success());
    assert!(
        text(&out).contains(&format!(
            "change 1 (update {table}/u1): ConditionalCheckFailed — item changed since staged (~ status: \"new\" → \"closed\")"
        )),
        "{}",
        text(&out)
    );
    assert!(
        dir.path().join("ferrodyn-stage.json").exists(),
        "a failed commit keeps the stage"
    );
    let out = ferrodyn(&["stage", "clear"], dir.path());
    assert!(out.status.success());
    assert!(!dir.path().join("ferrodyn-stage.json").exists());
}

#[test]
fn unique_writes_the_seeds_markers_by_default_and_locks_says_how_it_read_them() {
    let api = client();
    let table = unique_name("cliuniq");
    create_table(&api, &table, "PK", Some("SK"));
    let dir = tempfile::tempdir().unwrap();
    let spec = [
        "--table", &table, "--entity", "account", "--unique", "email",
    ];
    let unique = |extra: &[&str]| {
        let mut args = vec!["unique"];
        args.extend(spec);
        args.extend(extra);
        ferrodyn(&args, dir.path())
    };
    let out = unique(&[
        "create",
        r#"{"PK": "ACCT#1", "SK": "PROFILE", "email": "ada@lovelace.io"}"#,
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let out = unique(&["locks"]);
    assert!(out.status.success(), "{}", text(&out));
    let shown = text(&out);
    assert!(shown.contains("UNIQ#EMAIL#ada@lovelace.io"), "{shown}");
    assert!(shown.contains("markers read by Scan of table"), "{shown}");
    // The earlier layout stays available.
    let out = unique(&[
        "--layout",
        "grouped",
        "create",
        r#"{"PK": "ACCT#2", "SK": "PROFILE", "email": "bob@example.com"}"#,
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let out = unique(&["--layout", "grouped", "locks"]);
    let shown = text(&out);
    assert!(
        shown.contains("UNIQ#account#email#bob@example.com"),
        "{shown}"
    );
    assert!(
        shown.contains("Query of partition UNIQ#account#email"),
        "{shown}"
    );
}

#[test]
fn stage_add_brings_a_unique_values_marker_along_unless_told_not_to() {
    let api = client();
    let table = unique_name("clifollow");
    create_table(&api, &table, "PK", Some("SK"));
    let dir = tempfile::tempdir().unwrap();
    let out = ferrodyn(
        &[
            "unique",
            "--table",
            &table,
            "--entity",
            "account",
            "--unique",
            "email",
            "create",
            r#"{"PK": "ACCT#1", "SK": "PROFILE", "email": "ada@x.io"}"#,
        ],
        dir.path(),
    );
    assert!(out.status.success(), "{}", text(&out));
    let key = r#"{"PK": "ACCT#1", "SK": "PROFILE"}"#;
    let out = ferrodyn(
        &[
            "stage",
            "add",
            "update",
            &table,
            key,
            "--set",
            "email=ada@new.io",
        ],
        dir.path(),
    );
    assert!(out.status.success(), "{}", text(&out));
    let shown = text(&out);
    assert!(
        shown.contains("uniqueness marker staged with it: ")
            && shown.contains("UNIQ#EMAIL#ada@x.io/LOCK → ")
            && shown.contains("staged as change 1 of 3"),
        "{shown}"
    );
    let out = ferrodyn(&["stage", "commit"], dir.path());
    assert!(out.status.success(), "{}", text(&out));
    let out = ferrodyn(
        &[
            "unique", "--table", &table, "--entity", "account", "--unique", "email", "locks",
        ],
        dir.path(),
    );
    assert!(
        text(&out).contains("UNIQ#EMAIL#ada@new.io"),
        "{}",
        text(&out)
    );
    // --no-markers stages the owner alone.
    let out = ferrodyn(
        &[
            "stage",
            "add",
            "update",
            &table,
            key,
            "--set",
            "email=z@x.io",
            "--no-markers",
        ],
        dir.path(),
    );
    assert!(
        text(&out).contains("staged as change 1 of 1"),
        "{}",
        text(&out)
    );
}
