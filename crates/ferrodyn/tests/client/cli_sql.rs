//! `ferrodyn sql` / `ferrodyn partiql` against a spawned server: parameters
//! in plain and DynamoDB JSON, pagination with NextToken, output formats and
//! DynamoDB's errors, plus the library's statement pages.

use super::{lines, stderr, Server};
use ferrodyn_client::partiql::{self, Statement};
use serde_json::{json, Value};

#[test]
fn sql_runs_statements_with_parameters_and_pages() {
    let server = Server::start(&[]);
    server.create_table("events", true);
    for sk in 1..=5 {
        let sk = sk.to_string();
        server.ok(&[
            "sql",
            "INSERT INTO \"events\" VALUE {'pk': ?, 'sk': ?, 'tags': ?}",
            "--param",
            "\"e\"",
            "--param",
            &sk,
            "--param",
            "{\"$SS\": [\"a\", \"b\"]}",
        ]);
    }
    // A write returns no items: no empty table on stdout, a word on stderr.
    let write = server.cli(&[
        "sql",
        "UPDATE \"events\" SET seen = true WHERE pk = 'e' AND sk = 1",
    ]);
    assert!(write.status.success());
    assert_eq!(String::from_utf8_lossy(&write.stdout), "");
    assert!(
        stderr(&write).contains("returns no items"),
        "{}",
        stderr(&write)
    );

    // DynamoDB JSON parameters with --raw; the alias `partiql`.
    let out = server.ok(&[
        "partiql",
        "SELECT sk, tags FROM \"events\" WHERE pk = ? AND sk >= ? ORDER BY sk DESC",
        "--param",
        "{\"S\": \"e\"}",
        "--param",
        "{\"N\": \"4\"}",
        "--raw",
        "-o",
        "jsonl",
    ]);
    assert_eq!(
        lines(&out),
        vec![
            json!({"sk": 5, "tags": ["a", "b"]}),
            json!({"sk": 4, "tags": ["a", "b"]})
        ]
    );

    // One page by default, and how to continue; every page with --paginate.
    let first = server.cli(&[
        "sql",
        "SELECT * FROM \"events\"",
        "--limit",
        "2",
        "-o",
        "jsonl",
    ]);
    assert!(first.status.success());
    assert_eq!(lines(&String::from_utf8_lossy(&first.stdout)).len(), 2);
    let hint = stderr(&first);
    let token = hint
        .split("--next-token '")
        .nth(1)
        .and_then(|rest| rest.split('\'').next())
        .unwrap_or_else(|| panic!("no token in {hint}"));
    let rest = server.ok(&[
        "sql",
        "SELECT * FROM \"events\"",
        "--limit",
        "2",
        "--next-token",
        token,
        "--paginate",
        "-o",
        "jsonl",
    ]);
    assert_eq!(lines(&rest).len(), 3);
    let all = server.ok(&[
        "sql",
        "SELECT * FROM \"events\"",
        "--limit",
        "2",
        "--paginate",
        "-o",
        "json",
    ]);
    let all: Value = serde_json::from_str(&all).unwrap();
    assert_eq!(all.as_array().unwrap().len(), 5);

    let updated = server.ok(&[
        "sql",
        "UPDATE \"events\" SET n = 1 WHERE pk = 'e' AND sk = 1 RETURNING MODIFIED NEW *",
        "-o",
        "jsonl",
    ]);
    assert_eq!(lines(&updated), vec![json!({"n": 1})]);
    let table = server.ok(&[
        "sql",
        "SELECT pk, sk FROM \"events\" WHERE pk = 'e' AND sk = 1",
    ]);
    assert!(table.contains("pk") && table.contains("sk"), "{table}");

    let failed = server.cli(&["sql", "INSERT INTO \"events\" VALUE {'pk': 'e', 'sk': 1}"]);
    assert!(!failed.status.success());
    assert!(
        stderr(&failed).contains("DuplicateItemException: Duplicate primary key exists in table"),
        "{}",
        stderr(&failed)
    );
    let failed = server.cli(&["sql", "SELECT * FROM \"events\" WHERE pk = ?"]);
    assert!(stderr(&failed).contains("Number of parameters in request and statement don't match."));
}

#[test]
fn library_statement_pages_follow_next_token() {
    let server = Server::start(&[]);
    server.create_table("things", false);
    let client = server.client();
    for i in 0..7 {
        partiql::execute_statement(
            &client,
            &Statement {
                statement: "INSERT INTO \"things\" VALUE {'pk': ?}".into(),
                parameters: vec![json!({"S": format!("k{i}")})],
                ..Default::default()
            },
        )
        .unwrap();
    }
    let statement = Statement {
        statement: "SELECT * FROM \"things\"".into(),
        limit: Some(3),
        ..Default::default()
    };
    let pages: Vec<Value> = partiql::pages(&client, statement)
        .collect::<Result<_, _>>()
        .unwrap();
    let counts: Vec<usize> = pages
        .iter()
        .map(|p| p["Items"].as_array().unwrap().len())
        .collect();
    assert_eq!(counts.iter().sum::<usize>(), 7);
    assert!(counts.len() >= 3, "{counts:?}");
}
