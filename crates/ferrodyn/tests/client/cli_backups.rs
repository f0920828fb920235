//! `ferrodyn backups` and `ferrodyn recovery`: a backup created, listed,
//! restored and deleted; recovery turned on, its window shown, a table
//! restored to the latest instant and to a given one, recovery turned off;
//! refusals worded for people.

use super::{assert_success, Server};
use serde_json::{json, Value};

fn put(server: &Server, id: &str) {
    let item = json!({ "pk": { "S": id } });
    server
        .client()
        .call("PutItem", &json!({ "TableName": "cli", "Item": item }))
        .expect("put");
}

fn ids(server: &Server, table: &str) -> Vec<String> {
    let mut ids: Vec<String> = (server.all_items(table).iter())
        .map(|item| item["pk"]["S"].as_str().unwrap_or_default().to_string())
        .collect();
    ids.sort();
    ids
}

fn json_of(server: &Server, args: &[&str]) -> Value {
    let output = server.ok(args);
    serde_json::from_str(&output).unwrap_or_else(|e| panic!("{e}: {output}"))
}

#[test]
fn a_backup_is_created_listed_restored_and_deleted_from_the_command_line() {
    let server = Server::start(&[]);
    server.create_table("cli", false);
    put(&server, "a");
    let created = server.ok(&["backups", "create", "cli", "nightly", "--wait"]);
    assert!(created.contains("AVAILABLE"), "{created}");
    put(&server, "b");
    let listed = json_of(&server, &["backups", "list", "cli", "-o", "json"]);
    let summaries = listed["BackupSummaries"].as_array().unwrap();
    assert_eq!(summaries.len(), 1, "{listed}");
    assert_eq!(summaries[0]["BackupName"], "nightly");
    let arn = summaries[0]["BackupArn"].as_str().unwrap().to_string();
    let table_view = server.ok(&["backups", "list"]);
    assert!(
        table_view.contains("nightly") && table_view.contains(&arn),
        "{table_view}"
    );
    let restored = server.ok(&["backups", "restore", &arn, "cli-copy", "--wait"]);
    assert!(restored.contains("ACTIVE"), "{restored}");
    assert_eq!(ids(&server, "cli-copy"), ["a"]);
    let refused = server.cli(&["backups", "delete", &arn]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("--yes"));
    server.ok(&["backups", "delete", &arn, "--yes"]);
    let gone = server.cli(&["backups", "describe", &arn]);
    assert!(String::from_utf8_lossy(&gone.stderr).contains("BackupNotFoundException"));
}

#[test]
fn recovery_is_switched_on_shown_restored_from_and_switched_off_from_the_command_line() {
    let server = Server::start(&[]);
    server.create_table("cli", false);
    put(&server, "before");
    let off = server.ok(&["recovery", "status", "cli"]);
    assert!(off.contains("DISABLED"), "{off}");
    let on = server.ok(&["recovery", "on", "cli", "--days", "7"]);
    assert!(on.contains("ENABLED (7 days): restorable from"), "{on}");
    put(&server, "first");
    std::thread::sleep(std::time::Duration::from_millis(5));
    let status = json_of(&server, &["recovery", "status", "cli", "-o", "json"]);
    let description = &status["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"];
    let cut = description["LatestRestorableDateTime"].as_f64().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(5));
    put(&server, "second");
    let at = ferrodyn_types::dates::iso8601_utc_millis(cut);
    let args = [
        "recovery", "restore", "cli", "cli-then", "--at", &at, "--wait",
    ];
    assert_success(&server.cli(&args), &args);
    assert_eq!(ids(&server, "cli-then"), ["before", "first"]);
    server.ok(&[
        "recovery", "restore", "cli", "cli-now", "--latest", "--wait",
    ]);
    assert_eq!(ids(&server, "cli-now"), ["before", "first", "second"]);
    let bad = server.cli(&["recovery", "restore", "cli", "cli-bad", "--at", "yesterday"]);
    assert!(String::from_utf8_lossy(&bad.stderr).contains("expected YYYY-MM-DDTHH:MM:SS"));
    let off = server.ok(&["recovery", "off", "cli"]);
    assert!(off.contains("DISABLED"), "{off}");
}
