//! Ferrodyn's test-harness endpoints beside the DynamoDB API, under
//! `/ferrodyn/` (not DynamoDB's: no SDK calls them; the pytest, vitest and
//! Rust fixtures and `ferrodyn` commands do):
//!
//! | request | does |
//! |---|---|
//! | `GET /ferrodyn/clock` | the engine's clock (`{"mode", "now", "epochMillis"}`) |
//! | `POST /ferrodyn/clock` `{"advance": "25h"}` or `{"set": "2030-01-01T00:00:00Z"}` | moves a manual clock, then runs a Time to Live sweep at the new time |
//! | `GET /ferrodyn/snapshots` | the namespace's snapshot names |
//! | `POST /ferrodyn/snapshots/NAME` | saves the namespace's tables as NAME |
//! | `POST /ferrodyn/snapshots/NAME/restore` | puts them back exactly |
//! | `DELETE /ferrodyn/snapshots/NAME` | forgets NAME |
//! | `DELETE /ferrodyn/data` | deletes every table of the namespace |
//! | `GET /ferrodyn/faults` | how many fault rules apply to the namespace |
//! | `PUT /ferrodyn/faults` `{"seed": 7, "rules": ["BatchWriteItem=unprocessed@0.5"]}` | replaces the namespace's fault rules (without namespaces: the rules for every request) |
//! | `DELETE /ferrodyn/faults` | clears them |
//! | `GET /ferrodyn/partitions?table=T` | table T's partitions, its global indexes' and its stream's shards (below) |
//! | `GET /ferrodyn/insights?table=T[&index=I][&minutes=N]` | Contributor Insights of T (or its index I): status, mode and the top 10 keys of each rule (PKC, SKC, PKT, SKT: `[{"key": [values], "value"}]`) over the last N minutes (default 60) |
//! | `GET /ferrodyn/destinations?table=T` (or `/ferrodyn/destinations/T`) | T's Kinesis destinations as Ferrodyn sees them: status, last error, AgeOfOldestUnreplicatedRecord, counts |
//! | `GET /ferrodyn/vectors?table=T` | T's vector indexes' search structures: vectors, how many wait for a graph, partitions, memory, bytes per vector, search expansions, `settled` once every large partition's graph holds all its vectors |
//!
//! The namespace is the access key of the request's Authorization header,
//! as for DynamoDB calls, when the server runs with `--namespaces
//! access-key`. With `--credentials` the request must be signed like a
//! DynamoDB call (service `dynamodb`); without, no header is needed.
//! Errors come as DynamoDB's do: `{"__type", "message"}`, status 400 or 404.
//!
//! `/ferrodyn/partitions` answers (engine/src/partition_report.rs; `lo` and
//! `hi` bound an item's placement, its partition hash mixed
//! (`partitions::placement`), in 16 hex digits; times are epoch
//! milliseconds, sequence numbers as DynamoDB Streams writes them):
//!
//! ```text
//! {"table": "T", "partitionLimits": true,
//!  "partitions": [{"id": 5, "lo": "4000000000000000", "hi": "7fffffffffffffff",
//!                  "parent": 1, "created": 1767225600000, "items": 120, "bytes": 48000,
//!                  "heat": {"readUnitsLastSecond": 0.5, "writeUnitsLastSecond": 1000,
//!                           "readUnitsLastMinute": 3, "writeUnitsLastMinute": 41000,
//!                           "throttlesLastMinute": 812, "throttlesTotal": 812}}],
//!  "indexes": {"GSI": [{"id": 4, "lo": ..., "hi": ..., "created": ..., "heat": {...}}]},
//!  "shards": [{"shardId": "shardId-...", "parentShardId": "shardId-...", "partition": 5,
//!              "lo": ..., "hi": ..., "startingSequenceNumber": "000000000000000000001",
//!              "endingSequenceNumber": "...", "open": false, "created": 1767225600000}]}
//! ```
//!
//! `parent`, `parentShardId` and `endingSequenceNumber` are left out when
//! there is none; `items`/`bytes` (a scan of the partition) only on table
//! partitions; `heat` only with `--partition-limits on` (zeros for a
//! partition no request reached); `shards` is empty without a stream.

use crate::faults::FaultConfig;
use crate::protocol::auth;
use crate::protocol::http::AppState;
use crate::protocol::response;
use axum::body::Body;
use axum::http::{HeaderMap, Method, Response, Uri};
use ferrodyn_engine::region::{with_request_scope, RequestScope};
use ferrodyn_engine::snapshots::SnapshotSummary;
use ferrodyn_types::DynamoError;
use serde_json::{json, Value};
use std::time::UNIX_EPOCH;

/// The path prefix of every harness endpoint.
pub const PREFIX: &str = "/ferrodyn/";

/// Answers a harness request; None when `uri` is not one of its paths.
pub fn answer(
    state: &AppState,
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    body: &[u8],
) -> Option<Response<Body>> {
    let path = uri.path().strip_prefix(PREFIX)?;
    let route = Route::of(method, path, uri.query())?;
    let policy = auth::AuthPolicy {
        check_request_time: state.check_request_time,
        credentials: state.credentials.as_deref(),
        region: state.engine.region(),
    };
    let result = match state.credentials {
        Some(_) => auth::authenticate(method, uri, headers, body, &policy),
        None => Ok(()),
    }
    .and_then(|()| {
        let scope = RequestScope {
            region: auth::credential_region(headers).map(str::to_string),
            namespace: state.namespace_of(headers),
        };
        with_request_scope(scope, || route.run(state, body))
    });
    Some(match result {
        Ok(value) => response::json_response(200, value.to_string().into_bytes()),
        Err(error) => response::json_response(error.kind.status(), error.to_body()),
    })
}

/// The value of `name` in a query string (`table=a%20b` → `a b`).
fn query_value(query: Option<&str>, name: &str) -> Option<String> {
    let (_, value) = query?
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(key, _)| *key == name)?;
    Some(percent_decoded(value))
}

/// `%XX` escapes and `+` decoded (table names are `[a-zA-Z0-9_.-]`, ARNs
/// add `:` and `/`, which clients may escape).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
                continue;
            }
            (b'+', _) => out.push(b' '),
            (byte, _) => out.push(byte),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A harness endpoint, parsed from method and path.
enum Route<'a> {
    Clock,
    MoveClock,
    Snapshots,
    SaveSnapshot(&'a str),
    RestoreSnapshot(&'a str),
    DeleteSnapshot(&'a str),
    ResetData,
    Faults,
    SetFaults,
    ClearFaults,
    /// The `table` query parameter, if given.
    Partitions(Option<String>),
    /// `table`, `index` and `minutes`, as given.
    Insights(Option<String>, Option<String>, Option<String>),
    Destinations(Option<String>),
    Vectors(Option<String>),
}

impl<'a> Route<'a> {
    fn of(method: &Method, path: &'a str, query: Option<&str>) -> Option<Route<'a>> {
        let parts: Vec<&str> = path.split('/').collect();
        Some(match (method.as_str(), parts.as_slice()) {
            ("GET", ["clock"]) => Route::Clock,
            ("POST", ["clock"]) => Route::MoveClock,
            ("GET", ["snapshots"]) => Route::Snapshots,
            ("POST", ["snapshots", name]) => Route::SaveSnapshot(name),
            ("POST", ["snapshots", name, "restore"]) => Route::RestoreSnapshot(name),
            ("DELETE", ["snapshots", name]) => Route::DeleteSnapshot(name),
            ("DELETE", ["data"]) => Route::ResetData,
            ("GET", ["faults"]) => Route::Faults,
            ("PUT", ["faults"]) => Route::SetFaults,
            ("DELETE", ["faults"]) => Route::ClearFaults,
            ("GET", ["partitions"]) => Route::Partitions(query_value(query, "table")),
            ("GET", ["insights"]) => Route::Insights(
                query_value(query, "table"),
                query_value(query, "index"),
                query_value(query, "minutes"),
            ),
            ("GET", ["destinations"]) => Route::Destinations(query_value(query, "table")),
            ("GET", ["vectors"]) => Route::Vectors(query_value(query, "table")),
            // The path form signs like any harness call (ferrodyn destinations).
            ("GET", ["destinations", table]) => Route::Destinations(Some(percent_decoded(table))),
            _ => return None,
        })
    }

    fn run(&self, state: &AppState, body: &[u8]) -> Result<Value, DynamoError> {
        let engine = &state.engine;
        let namespace = ferrodyn_engine::region::request_namespace();
        let namespace = namespace.as_deref();
        match *self {
            Route::Clock => Ok(clock_report(engine)),
            Route::MoveClock => move_clock(engine, body),
            Route::Snapshots => Ok(json!({ "snapshots": engine.snapshot_names() })),
            Route::SaveSnapshot(name) => {
                check_snapshot_name(name)?;
                Ok(summary(name, engine.save_snapshot(name)?))
            }
            Route::RestoreSnapshot(name) => Ok(summary(name, engine.restore_snapshot(name)?)),
            Route::DeleteSnapshot(name) => match engine.delete_snapshot(name) {
                true => Ok(json!({ "snapshot": name, "deleted": true })),
                false => Err(DynamoError::resource_not_found(format!(
                    "No snapshot named {name} in this namespace"
                ))),
            },
            Route::ResetData => Ok(json!({ "tablesDeleted": engine.reset_namespace()? })),
            Route::Faults => Ok(json!({ "rules": state.faults.rule_count(namespace) })),
            Route::SetFaults => {
                let config = FaultConfig::from_json(body).map_err(DynamoError::validation)?;
                let set = state.faults.replace(namespace, config);
                set.map_err(DynamoError::validation)?;
                Ok(json!({ "rules": state.faults.rule_count(namespace) }))
            }
            Route::Destinations(ref table) => {
                let table = table.as_deref().ok_or_else(|| {
                    DynamoError::validation("GET /ferrodyn/destinations needs ?table=NAME")
                })?;
                engine.destination_report(table)
            }
            Route::Vectors(ref table) => {
                let table = table.as_deref().ok_or_else(|| {
                    DynamoError::validation("GET /ferrodyn/vectors needs ?table=NAME")
                })?;
                Ok(serde_json::to_value(engine.vector_report(table)?)
                    .expect("plain data always serialises"))
            }
            Route::ClearFaults => {
                let none = FaultConfig {
                    seed: None,
                    rules: Vec::new(),
                };
                let cleared = state.faults.replace(namespace, none);
                cleared.map_err(DynamoError::validation)?;
                Ok(json!({ "rules": state.faults.rule_count(namespace) }))
            }
            Route::Partitions(ref table) => {
                let table = table.as_deref().ok_or_else(|| {
                    DynamoError::validation("Give the table: /ferrodyn/partitions?table=NAME")
                })?;
                let report = engine.partition_report(table)?;
                Ok(serde_json::to_value(report).expect("plain data always serialises"))
            }
            Route::Insights(ref table, ref index, ref minutes) => insights_report(
                engine,
                table.as_deref(),
                index.as_deref(),
                minutes.as_deref(),
            ),
        }
    }
}

/// `GET /ferrodyn/insights`: a resource's Contributor Insights status and
/// the top 10 keys of each of its rules over the last `minutes` (1 to 60,
/// default 60), as CloudWatch would chart them.
fn insights_report(
    engine: &ferrodyn_engine::Engine,
    table: Option<&str>,
    index: Option<&str>,
    minutes: Option<&str>,
) -> Result<Value, DynamoError> {
    let table = table
        .ok_or_else(|| DynamoError::validation("Give the table: /ferrodyn/insights?table=NAME"))?;
    let minutes = match minutes {
        None => 60,
        Some(text) => text
            .parse::<u64>()
            .ok()
            .filter(|m| (1..=60).contains(m))
            .ok_or_else(|| {
                DynamoError::validation(format!("minutes must be 1 to 60, not {text}"))
            })?,
    };
    let (found, state) = engine.describe_contributor_insights(table, index)?;
    let rules: Vec<Value> = (engine.contributors(&found, index, minutes, 10).into_iter())
        .map(|(kind, top)| {
            let top: Vec<Value> = top
                .into_iter()
                .map(|(key, value)| json!({ "key": key, "value": value }))
                .collect();
            json!({ "rule": kind, "top": top })
        })
        .collect();
    Ok(json!({
        "table": found.name,
        "index": index,
        "status": state.as_ref().map_or("DISABLED", |s| s.status.as_str()),
        "mode": state.as_ref().map(|s| s.mode.clone()),
        "minutes": minutes,
        "rules": rules,
    }))
}

fn summary(name: &str, summary: SnapshotSummary) -> Value {
    json!({ "snapshot": name, "tables": summary.tables, "keys": summary.keys })
}

fn check_snapshot_name(name: &str) -> Result<(), DynamoError> {
    let valid = !name.is_empty()
        && name.len() <= 255
        && (name.bytes()).all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    if valid {
        return Ok(());
    }
    Err(DynamoError::validation(format!(
        "Invalid snapshot name {name:?}: use 1 to 255 letters, digits, '-', '_' or '.'"
    )))
}

/// `{"mode", "now", "epochMillis"}` of the engine's clock.
fn clock_report(engine: &ferrodyn_engine::Engine) -> Value {
    let millis = engine.clock.now_millis();
    let time = UNIX_EPOCH + std::time::Duration::from_millis(millis);
    let mode = match engine.clock.mode() {
        ferrodyn_engine::clock::ClockMode::Wall => "wall",
        ferrodyn_engine::clock::ClockMode::Manual => "manual",
    };
    json!({
        "mode": mode,
        "now": humantime::format_rfc3339_millis(time).to_string(),
        "epochMillis": millis,
    })
}

/// Advances or sets the manual clock, then sweeps expired items at once,
/// so a test sees its TTL deletions when the call returns.
fn move_clock(engine: &ferrodyn_engine::Engine, body: &[u8]) -> Result<Value, DynamoError> {
    let request: Value = serde_json::from_slice(body)
        .map_err(|e| DynamoError::validation(format!("The body is not JSON: {e}")))?;
    let expired = match (request.get("advance"), request.get("set")) {
        (Some(advance), None) => engine.advance_clock(parse_duration(advance)?)?,
        (None, Some(Value::String(time))) => engine.set_clock(parse_time(time)?)?,
        _ => {
            return Err(DynamoError::validation(
                r#"Give one of {"advance": "25h"} or {"set": "2030-01-01T00:00:00Z"}"#,
            ))
        }
    };
    let mut report = clock_report(engine);
    report["expiredItems"] = json!(expired);
    Ok(report)
}

/// "25h", "1h 30m", "500ms", or a number of seconds.
fn parse_duration(value: &Value) -> Result<std::time::Duration, DynamoError> {
    let invalid = || {
        DynamoError::validation(format!(
            "Invalid advance {value}: give a duration such as \"25h\", \"1h 30m\", \"500ms\" or \
             a number of seconds"
        ))
    };
    match value {
        Value::String(text) => humantime::parse_duration(text).map_err(|_| invalid()),
        Value::Number(n) => (n.as_f64())
            .and_then(|s| std::time::Duration::try_from_secs_f64(s).ok())
            .ok_or_else(invalid),
        _ => Err(invalid()),
    }
}

/// An RFC 3339 time, in milliseconds since the epoch.
fn parse_time(text: &str) -> Result<u64, DynamoError> {
    let time = humantime::parse_rfc3339_weak(text).map_err(|_| {
        DynamoError::validation(format!(
            "Invalid set {text:?}: give an RFC 3339 time such as \"2030-01-01T00:00:00Z\""
        ))
    })?;
    let since = time
        .duration_since(UNIX_EPOCH)
        .map_err(|_| DynamoError::validation(format!("Invalid set {text:?}: before 1970")))?;
    Ok(since.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ferrodyn_types::ErrorKind;

    #[test]
    fn durations_and_times_parse_as_documented() {
        let hours = parse_duration(&json!("25h")).unwrap();
        assert_eq!(hours.as_secs(), 90_000);
        assert_eq!(parse_duration(&json!("1h 30m")).unwrap().as_secs(), 5_400);
        assert_eq!(parse_duration(&json!(1.5)).unwrap().as_millis(), 1_500);
        assert!(parse_duration(&json!("soon")).is_err());
        assert!(parse_duration(&json!(-1)).is_err());
        assert_eq!(
            parse_time("2030-01-01T00:00:00Z").unwrap(),
            1_893_456_000_000
        );
        assert!(parse_time("tomorrow").is_err());
    }

    #[test]
    fn snapshot_names_are_plain() {
        assert!(check_snapshot_name("fixtures-1.v2").is_ok());
        for bad in ["", "a b", "x/y", &"n".repeat(256)] {
            let error = check_snapshot_name(bad).unwrap_err();
            assert_eq!(error.kind, ErrorKind::Validation);
        }
    }
}
