//! `ferrodyn search-vectors`: the query vector inline, from a file and from
//! stdin, with a search condition, TopK and each item's `_score`.

use super::{lines, stderr, Server};
use serde_json::json;

fn vector_table(server: &Server) {
    let request = json!({
        "TableName": "docs", "BillingMode": "PAY_PER_REQUEST",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "lang", "AttributeType": "S"}],
        "VectorIndexes": [{"IndexName": "by_emb", "VectorAttribute": {"AttributeName": "emb"}, "Dimensions": 3,
            "DistanceFunction": "EUCLIDEAN", "Projection": {"ProjectionType": "KEYS_ONLY"},
            "SearchSchema": [{"AttributeName": "lang", "SearchSchemaElementType": "INLINE_FILTER"}]}],
    });
    let client = server.client();
    client.call("CreateTable", &request).expect("table created");
    for (pk, lang, v) in [
        ("a", "en", [0, 0, 0]),
        ("b", "fr", [1, 0, 0]),
        ("c", "en", [3, 0, 0]),
    ] {
        let item = json!({"pk": {"S": pk}, "lang": {"S": lang},
            "emb": {"L": v.iter().map(|x| json!({"N": x.to_string()})).collect::<Vec<_>>()}});
        client
            .call("PutItem", &json!({"TableName": "docs", "Item": item}))
            .expect("put");
    }
}

#[test]
fn search_vectors_takes_the_vector_inline_from_a_file_or_stdin() {
    let server = Server::start(&[]);
    vector_table(&server);
    let out = server.ok(&[
        "search-vectors",
        "docs",
        "by_emb",
        "--vector",
        "[1, 0, 0]",
        "--top-k",
        "2",
        "-o",
        "jsonl",
    ]);
    let found = lines(&out);
    assert_eq!(
        found,
        [
            json!({"pk": "b", "emb": [1, 0, 0], "lang": "fr", "_score": 0.0}),
            json!({"pk": "a", "emb": [0, 0, 0], "lang": "en", "_score": 1.0})
        ]
    );
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("query.txt");
    std::fs::write(&file, "3\n0\n0\n").unwrap();
    let at_file = format!("@{}", file.display());
    let out = server.ok(&[
        "search-vectors",
        "docs",
        "by_emb",
        "--vector",
        &at_file,
        "--where",
        "lang = :l",
        "--values",
        "{\":l\": \"en\"}",
        "--projection",
        "pk",
        "-o",
        "jsonl",
    ]);
    assert_eq!(
        lines(&out),
        [
            json!({"pk": "c", "_score": 0.0}),
            json!({"pk": "a", "_score": 3.0})
        ]
    );
    let piped = server.cli_with_stdin(
        &[
            "search-vectors",
            "docs",
            "by_emb",
            "--vector",
            "-",
            "--top-k",
            "1",
            "-o",
            "raw",
            "--capacity",
        ],
        "[0, 0, 0.5]",
    );
    assert!(piped.status.success(), "{}", stderr(&piped));
    let raw: serde_json::Value = serde_json::from_slice(&piped.stdout).unwrap();
    assert_eq!(raw["SearchResults"][0]["Score"], 0.5);
    assert!(
        raw["ConsumedCapacity"]["VectorSearchRequestBytes"]
            .as_f64()
            .unwrap()
            > 0.0
    );
    let bad = server.cli(&["search-vectors", "docs", "by_emb", "--vector", "[1, 0]"]);
    assert!(!bad.status.success());
    assert!(
        stderr(&bad)
            .contains("Input search vector dimension 2 does not match vector index dimension 3"),
        "{}",
        stderr(&bad)
    );
}
