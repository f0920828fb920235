//! The in-process cost of PartiQL statements next to the operations they
//! become: GetItem vs `SELECT` by full key, PutItem vs `INSERT`, each run
//! through `ops::dispatch` (request JSON in, response JSON out, no HTTP) on
//! an in-memory engine, interleaved in rounds so that machine noise hits
//! both alike. Run with
//! `cargo run --release -p ferrodyn-server --example partiql_cost`.

use ferrodyn_engine::{Engine, EngineOptions};
use ferrodyn_server::faults::Faults;
use ferrodyn_server::ops::{dispatch, Operation};
use ferrodyn_storage::MemoryStorage;
use serde_json::json;
use std::sync::Arc;
use std::time::Instant;

const KEYS: usize = 10_000;
const CALLS: usize = 50_000;
const ROUNDS: usize = 5;

/// A measured case: its name, the operation, and the body of call `i`.
type Case<'a> = (&'a str, Operation, &'a dyn Fn(usize) -> Vec<u8>);

fn call(engine: &Arc<Engine>, op: Operation, body: &serde_json::Value) {
    let bytes = serde_json::to_vec(body).unwrap();
    dispatch(engine, &Faults::none(), op, &bytes).expect("the call succeeds");
}

/// Median nanoseconds per call of `make(i)` over the rounds.
fn measure(
    engine: &Arc<Engine>,
    op: Operation,
    make: &dyn Fn(usize) -> Vec<u8>,
    offset: &mut usize,
) -> f64 {
    let bodies: Vec<Vec<u8>> = (0..CALLS).map(|i| make(*offset + i)).collect();
    *offset += CALLS;
    let start = Instant::now();
    for body in &bodies {
        dispatch(engine, &Faults::none(), op, body).expect("the call succeeds");
    }
    start.elapsed().as_nanos() as f64 / CALLS as f64
}

fn user_item(k: usize) -> serde_json::Value {
    json!({"PK": {"S": format!("user#{k}")}, "SK": {"S": "profile"}, "name": {"S": "Ada Lovelace"},
           "email": {"S": format!("ada{k}@example.com")}, "n": {"N": k.to_string()},
           "tags": {"SS": ["a", "b", "c"]}, "bio": {"S": "Analyst and metaphysician"}})
}

fn main() {
    let engine =
        Arc::new(Engine::open(Arc::new(MemoryStorage::new()), EngineOptions::default()).unwrap());
    call(
        &engine,
        Operation::CreateTable,
        &json!({
        "TableName": "bench", "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": "PK", "AttributeType": "S"},
                                 {"AttributeName": "SK", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"},
                      {"AttributeName": "SK", "KeyType": "RANGE"}]}),
    );
    for k in 0..KEYS {
        call(
            &engine,
            Operation::PutItem,
            &json!({"TableName": "bench", "Item": user_item(k)}),
        );
    }
    let get = |i: usize| {
        serde_json::to_vec(&json!({"TableName": "bench",
            "Key": {"PK": {"S": format!("user#{}", i % KEYS)}, "SK": {"S": "profile"}}}))
        .unwrap()
    };
    let select = |i: usize| {
        serde_json::to_vec(
            &json!({"Statement": "SELECT * FROM \"bench\" WHERE PK = ? AND SK = ?",
            "Parameters": [{"S": format!("user#{}", i % KEYS)}, {"S": "profile"}]}),
        )
        .unwrap()
    };
    let put = |i: usize| {
        let mut item = user_item(i);
        item["PK"] = json!({"S": format!("put#{i}")});
        serde_json::to_vec(&json!({"TableName": "bench", "Item": item})).unwrap()
    };
    let insert = |i: usize| {
        serde_json::to_vec(&json!({
            "Statement": "INSERT INTO \"bench\" VALUE {'PK': ?, 'SK': 'profile', 'name': 'Ada Lovelace', \
                          'email': ?, 'n': ?, 'tags': <<'a', 'b', 'c'>>, 'bio': 'Analyst and metaphysician'}",
            "Parameters": [{"S": format!("ins#{i}")}, {"S": format!("ada{i}@example.com")},
                           {"N": i.to_string()}]}))
        .unwrap()
    };
    let cases: [Case; 4] = [
        ("GetItem", Operation::GetItem, &get),
        ("SELECT by key", Operation::ExecuteStatement, &select),
        ("PutItem", Operation::PutItem, &put),
        ("INSERT", Operation::ExecuteStatement, &insert),
    ];
    // `PARTIQL_COST_ONLY=INSERT` runs one case (for a profiler).
    let only = std::env::var("PARTIQL_COST_ONLY").ok();
    let mut samples = vec![vec![0.0]; cases.len()];
    let mut offset = 0;
    for _ in 0..ROUNDS {
        for (i, (name, op, make)) in cases.iter().enumerate() {
            if only.as_deref().is_some_and(|o| o != *name) {
                continue;
            }
            samples[i].push(measure(&engine, *op, make, &mut offset));
        }
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(|a, b| a.partial_cmp(b).unwrap());
        v[v.len() / 2]
    };
    let medians: Vec<f64> = samples.iter_mut().map(median).collect();
    println!("| operation | µs per call (median of {ROUNDS} × {CALLS}) | PartiQL ÷ operation |");
    println!("|---|---:|---:|");
    for (i, (name, _, _)) in cases.iter().enumerate() {
        let ratio = if i % 2 == 1 {
            format!("{:.2}", medians[i] / medians[i - 1])
        } else {
            String::new()
        };
        println!("| {name} | {:.2} | {ratio} |", medians[i] / 1000.0);
    }
}
