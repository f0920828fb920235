//! `ferrodyn import`, `export` and `convert`: bulk loads under injected
//! faults, interrupted and resumed imports, every file format round trip,
//! and the converter.

use super::{cli_command, lines, run_with_stdin, stderr, Server};
use serde_json::{json, Value};
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn write_jsonl(path: &Path, count: usize) {
    let mut text = String::with_capacity(count * 60);
    for i in 0..count {
        text.push_str(&format!(
            "{{\"pk\": \"item{i:06}\", \"n\": {i}, \"name\": \"name {i}\"}}\n"
        ));
    }
    std::fs::write(path, text).unwrap();
}

fn report(stdout: &[u8]) -> Value {
    serde_json::from_slice(stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(stdout)))
}

#[test]
fn an_import_under_20_percent_unprocessed_batches_writes_every_item() {
    let server = Server::start(&[
        "--fault",
        "BatchWriteItem=unprocessed@0.2",
        "--fault-seed",
        "3",
    ]);
    server.create_table("bulk", false);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("items.jsonl");
    write_jsonl(&file, 5000);
    let started = Instant::now();
    let output = server.cli(&[
        "import",
        "bulk",
        file.to_str().unwrap(),
        "--backoff-base-ms",
        "2",
        "--backoff-cap-ms",
        "50",
        "--max-attempts",
        "30",
        "--no-progress",
        "-o",
        "json",
    ]);
    super::assert_success(&output, &["import"]);
    let report = report(&output.stdout);
    eprintln!(
        "import of 5000 items with faults: {:?} ({report})",
        started.elapsed()
    );
    assert_eq!(report["this_run"]["written"], json!(5000));
    assert_eq!(report["this_run"]["not_written"], json!(0));
    assert!(
        report["this_run"]["unprocessed_returned"].as_u64().unwrap() > 0,
        "{report}"
    );
    assert!(report["this_run"]["retries"].as_u64().unwrap() > 0);
    assert!(report["this_run"]["max_attempts_used"].as_u64().unwrap() > 1);
    assert_eq!(report["complete"], json!(true));
    assert_eq!(server.all_items("bulk").len(), 5000);
}

#[test]
fn items_never_written_are_reported_and_saved_for_a_retry() {
    let server = Server::start(&[
        "--fault",
        "BatchWriteItem=unprocessed@0.5",
        "--fault-seed",
        "9",
    ]);
    server.create_table("bulk", false);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("items.jsonl");
    write_jsonl(&file, 300);
    let failed = dir.path().join("failed.ddb.json");
    let output = server.cli(&[
        "import",
        "bulk",
        file.to_str().unwrap(),
        "--max-attempts",
        "1",
        "--failed",
        failed.to_str().unwrap(),
        "--no-progress",
    ]);
    assert!(!output.status.success(), "lost items make the command fail");
    let text = stderr(&output);
    assert!(
        text.contains("not written") && text.contains("still unprocessed after 1 attempts"),
        "{text}"
    );
    let lost = lines(&std::fs::read_to_string(&failed).unwrap());
    let stored = server.all_items("bulk").len();
    assert!(!lost.is_empty());
    assert_eq!(stored + lost.len(), 300);
    assert!(
        text.contains(&format!("{} record(s) were not written", lost.len())),
        "{text}"
    );
}

#[test]
fn an_interrupted_import_resumes_without_repeating_work() {
    let server = Server::start(&[]);
    server.create_table("bulk", false);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("items.jsonl");
    write_jsonl(&file, 3000);
    let checkpoint = dir.path().join("import.checkpoint");
    let args = |extra: &[&'static str]| {
        let mut args = vec![
            "import".to_string(),
            "bulk".into(),
            file.display().to_string(),
            "--checkpoint".into(),
            checkpoint.display().to_string(),
            "--no-progress".into(),
            "-o".into(),
            "json".into(),
        ];
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    };
    let run = |extra: &[&'static str]| {
        let args = args(extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let output = server.cli(&args);
        super::assert_success(&output, &args);
        report(&output.stdout)
    };
    // The first run stops after 1000 records, as if interrupted.
    let first = run(&["--max-items", "1000"]);
    assert_eq!(first["this_run"]["written"], json!(1000));
    assert_eq!(first["complete"], json!(false));
    assert_eq!(server.all_items("bulk").len(), 1000);
    // Rerunning the same command picks up at record 1001.
    let second = run(&[]);
    assert_eq!(
        second["this_run"]["written"],
        json!(2000),
        "only the rest is sent"
    );
    assert_eq!(second["this_run"]["batch_calls"], json!(80));
    assert_eq!(second["total"]["written"], json!(3000));
    assert_eq!(second["total"]["runs"], json!(2));
    assert_eq!(second["complete"], json!(true));
    assert_eq!(server.all_items("bulk").len(), 3000);
    // And once complete, a rerun does nothing.
    let third = run(&[]);
    assert_eq!(third["this_run"]["written"], json!(0));
    assert_eq!(third["this_run"]["batch_calls"], json!(0));

    // A checkpoint is never applied to a different import.
    let other = dir.path().join("other.jsonl");
    write_jsonl(&other, 10);
    let mismatch = server.cli(&[
        "import",
        "bulk",
        other.to_str().unwrap(),
        "--checkpoint",
        checkpoint.to_str().unwrap(),
    ]);
    assert!(
        stderr(&mismatch).contains("belongs to another import"),
        "{}",
        stderr(&mismatch)
    );
}

#[test]
fn a_killed_import_resumes_after_its_last_checkpoint() {
    let server = Server::start(&[]);
    server.create_table("bulk", false);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("items.jsonl");
    write_jsonl(&file, 20_000);
    let checkpoint = dir.path().join("kill.checkpoint");
    let mut command = cli_command();
    command.args([
        "import",
        "bulk",
        file.to_str().unwrap(),
        "--checkpoint",
        checkpoint.to_str().unwrap(),
        "--no-progress",
        "--concurrency",
        "2",
        "--endpoint-url",
        &server.endpoint,
    ]);
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill it (SIGKILL: no chance to clean up) once some batches are done.
    let deadline = Instant::now() + Duration::from_secs(60);
    let done_at_kill = loop {
        let done = std::fs::read_to_string(&checkpoint)
            .ok()
            .and_then(|t| serde_json::from_str::<Value>(&t).ok())
            .and_then(|c| c["records_done"].as_u64())
            .unwrap_or(0);
        if done >= 2000 || Instant::now() > deadline {
            break done;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    child.kill().unwrap();
    child.wait().unwrap();
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(&checkpoint).unwrap()).unwrap();
    let resume_from = saved["records_done"].as_u64().unwrap();
    assert!(resume_from >= done_at_kill);
    if resume_from == 20_000 {
        eprintln!("the import finished before it could be killed; nothing to resume");
        return;
    }
    let output = server.cli(&[
        "import",
        "bulk",
        file.to_str().unwrap(),
        "--checkpoint",
        checkpoint.to_str().unwrap(),
        "--no-progress",
        "-o",
        "json",
    ]);
    super::assert_success(&output, &["import (resumed)"]);
    let report = report(&output.stdout);
    assert_eq!(
        report["this_run"]["written"].as_u64().unwrap(),
        20_000 - resume_from,
        "{report}"
    );
    assert_eq!(report["total"]["records_done"], json!(20_000));
    assert_eq!(server.all_items("bulk").len(), 20_000);
}

/// Items using every type, with values plain JSON alone would lose.
fn rich_items(server: &Server) {
    server.ok(&["tables", "create", "rich", "--pk", "pk"]);
    for i in 0..30 {
        let item = json!({
            "pk": {"S": format!("r{i:02}")},
            "n": {"N": format!("1234567890123456789012345678.{i}")},
            "ss": {"SS": ["a", "b"]},
            "ns": {"NS": ["1", "2.5"]},
            "bs": {"BS": ["AAE="]},
            "bin": {"B": "aGVsbG8="},
            "flag": {"BOOL": i % 2 == 0},
            "nothing": {"NULL": true},
            "list": {"L": [{"S": "x"}, {"N": "1"}]},
            "map": {"M": {"city": {"S": "Paris, \"France\""}}},
            "zip": {"S": "01234"}
        });
        server.ok(&["put", "rich", &item.to_string(), "--raw"]);
    }
}

fn sorted(mut items: Vec<Value>) -> Vec<Value> {
    items.sort_by_key(|i| i["pk"]["S"].as_str().unwrap().to_string());
    items
}

#[test]
fn every_format_round_trips_through_export_and_import() {
    let server = Server::start(&[]);
    rich_items(&server);
    let original = sorted(server.all_items("rich"));
    assert_eq!(original.len(), 30);
    let dir = tempfile::tempdir().unwrap();
    for (name, typed) in [
        ("out.json", true),
        ("out.jsonl", true),
        ("out.csv", true),
        ("out.ddb.json", false),
    ] {
        let path = dir.path().join(name);
        let path = path.to_str().unwrap();
        let mut export = vec!["export", "rich", path, "--no-progress"];
        if typed {
            export.push("--typed");
        }
        server.ok(&export);
        let table = format!("copy-{}", name.replace('.', "-"));
        server.ok(&["tables", "create", &table, "--pk", "pk"]);
        server.ok(&["import", &table, path, "--no-progress"]);
        assert_eq!(
            sorted(server.all_items(&table)),
            original,
            "{name} did not round-trip"
        );
    }
    // Segmented export holds the same items.
    let path = dir.path().join("seg.ddb.json");
    server.ok(&[
        "export",
        "rich",
        path.to_str().unwrap(),
        "--segments",
        "3",
        "--no-progress",
    ]);
    let exported = sorted(lines(&std::fs::read_to_string(&path).unwrap()));
    assert_eq!(exported, original);
    // Untyped plain exports warn about what they lose.
    let untyped = server.cli(&[
        "export",
        "rich",
        dir.path().join("u.jsonl").to_str().unwrap(),
        "--no-progress",
    ]);
    let warnings = stderr(&untyped);
    assert!(
        warnings
            .contains("warning: string set written as a list (typed output keeps it) (30 values)"),
        "{warnings}"
    );
}

#[test]
fn export_of_one_partition_and_to_stdout() {
    let server = Server::start(&[]);
    server.ok(&["tables", "create", "events", "--pk", "pk", "--sk", "sk:N"]);
    for (pk, sk) in [("a", 1), ("a", 2), ("b", 1)] {
        server.ok(&[
            "put",
            "events",
            &format!("{{\"pk\": \"{pk}\", \"sk\": {sk}}}"),
        ]);
    }
    let out = server.ok(&["export", "events", "-", "--key", "a"]);
    assert_eq!(
        lines(&out),
        [json!({"pk": "a", "sk": 1}), json!({"pk": "a", "sk": 2})]
    );
    let csv = server.ok(&["export", "events", "-", "--format", "csv", "--key", "b"]);
    assert_eq!(csv, "pk:S,sk:N\nb,1\n");
}

#[test]
fn csv_and_json_array_imports_with_bad_records() {
    let server = Server::start(&[]);
    server.ok(&["tables", "create", "people", "--pk", "id"]);
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("people.csv");
    std::fs::write(
        &csv,
        "id,age,zip:S,active:BOOL\np1,30,01234,true\np2,,75001,false\n",
    )
    .unwrap();
    server.ok(&["import", "people", csv.to_str().unwrap(), "--no-progress"]);
    let p1 =
        serde_json::from_str::<Value>(&server.ok(&["get", "people", "p1", "-o", "raw"])).unwrap();
    assert_eq!(
        p1,
        json!({"id": {"S": "p1"}, "age": {"N": "30"}, "zip": {"S": "01234"}, "active": {"BOOL": true}})
    );
    let p2 =
        serde_json::from_str::<Value>(&server.ok(&["get", "people", "p2", "-o", "raw"])).unwrap();
    assert!(p2.get("age").is_none(), "empty cells are absent attributes");

    let array = dir.path().join("people.json");
    std::fs::write(
        &array,
        r#"[{"id": "p3"}, {"no_id": 1}, {"id": "p4", "n": 1e3}]"#,
    )
    .unwrap();
    let output = server.cli(&[
        "import",
        "people",
        array.to_str().unwrap(),
        "--no-progress",
        "--concurrency",
        "1",
    ]);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("1 record(s) were not written"),
        "{}",
        stderr(&output)
    );
    assert!(
        stderr(&output).contains("ValidationException"),
        "{}",
        stderr(&output)
    );
    assert_eq!(server.all_items("people").len(), 4);

    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"id\": \"p5\"}\nnot json\n").unwrap();
    let output = server.cli(&["import", "people", bad.to_str().unwrap(), "--no-progress"]);
    assert!(stderr(&output).contains("record 2:"), "{}", stderr(&output));
    let unknown = server.cli(&[
        "import",
        "people",
        dir.path().join("x.txt").to_str().unwrap(),
    ]);
    assert!(!unknown.status.success());
}

fn convert(args: &[&str], stdin: &str) -> (String, String) {
    let mut command = cli_command();
    command.arg("convert").args(args);
    let output = run_with_stdin(command, stdin);
    assert!(output.status.success(), "{}", stderr(&output));
    let errors = stderr(&output);
    (String::from_utf8(output.stdout).unwrap(), errors)
}

#[test]
fn convert_goes_both_ways_losslessly() {
    let (ddb, _) = convert(
        &["to-ddb", "--compact"],
        r#"{"n": 3.140000000000000000000000000001, "s": {"$SS": ["x"]}, "l": [true, null]}"#,
    );
    assert_eq!(
        serde_json::from_str::<Value>(&ddb).unwrap(),
        json!({"n": {"N": "3.140000000000000000000000000001"}, "s": {"SS": ["x"]}, "l": {"L": [{"BOOL": true}, {"NULL": true}]}})
    );
    let (plain, warnings) = convert(&["from-ddb", "--compact"], &ddb);
    // DynamoDB JSON objects have no order; attributes come out sorted.
    assert_eq!(
        plain,
        "{\"l\":[true,null],\"n\":3.140000000000000000000000000001,\"s\":[\"x\"]}\n"
    );
    assert!(
        warnings.contains("string set written as a list"),
        "{warnings}"
    );
    let (typed, warnings) = convert(&["from-ddb", "--typed", "--compact"], &ddb);
    assert!(warnings.is_empty());
    let (back, _) = convert(&["to-ddb", "--compact"], &typed);
    assert_eq!(back, ddb);
    // JSON lines, inline input, single values, GetItem output.
    let (out, _) = convert(&["to-ddb"], "{\"a\": 1}\n{\"a\": 2}\n");
    assert_eq!(out, "{\"a\":{\"N\":\"1\"}}\n{\"a\":{\"N\":\"2\"}}\n");
    let (out, _) = convert(&["to-ddb", "[1, \"x\"]", "--value", "--compact"], "");
    assert_eq!(out, "{\"L\":[{\"N\":\"1\"},{\"S\":\"x\"}]}\n");
    let (out, _) = convert(
        &["from-ddb", "--compact"],
        r#"{"Item": {"pk": {"S": "a"}}}"#,
    );
    assert_eq!(out, "{\"pk\":\"a\"}\n");
    let mut command = cli_command();
    command.args(["convert", "to-ddb", "{\"a\": }"]);
    let failed = run_with_stdin(command, "");
    assert!(!failed.status.success());
}

#[test]
fn an_import_to_an_unreachable_endpoint_stops_and_says_how_to_resume() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("items.jsonl");
    write_jsonl(&file, 100);
    let checkpoint = dir.path().join("c.checkpoint");
    let mut command = cli_command();
    command.args([
        "import",
        "bulk",
        file.to_str().unwrap(),
        "--checkpoint",
        checkpoint.to_str().unwrap(),
        "--max-attempts",
        "2",
        "--backoff-base-ms",
        "1",
        "--no-progress",
        "--endpoint-url",
        "http://127.0.0.1:9",
    ]);
    let output = run_with_stdin(command, "");
    assert!(!output.status.success());
    let text = stderr(&output);
    assert!(
        text.contains("import stopped: cannot reach the endpoint"),
        "{text}"
    );
    assert!(
        text.contains("Run the same command again to resume after record 0"),
        "{text}"
    );
    let saved: Value =
        serde_json::from_str(&std::fs::read_to_string(&checkpoint).unwrap()).unwrap();
    assert_eq!(saved["records_done"], json!(0));
    assert_eq!(saved["complete"], json!(false));
}
