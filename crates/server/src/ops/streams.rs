//! The DynamoDB Streams API (target prefix `DynamoDBStreams_20120810.`):
//! ListStreams, DescribeStream, GetShardIterator and GetRecords.
//!
//! A stream has one open shard per table partition, and closed shards with
//! their lineage (engine shards.rs). A shard iterator is an opaque token
//! naming the table, the stream (by its first sequence number), the shard,
//! the next position and its creation time; it expires after 15 minutes, as in DynamoDB.

use crate::ops::common::ResponseBody;
use crate::validate::Violations;
use base64::Engine as _;
use ferrodyn_engine::shard_reads::trimmed;
use ferrodyn_engine::streams::{format_sequence, Shard, StreamInfo};
use ferrodyn_engine::table::Table;
use ferrodyn_engine::Engine;
use ferrodyn_types::{DynamoError, ErrorKind, Result};
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Arc;

const ITERATOR_LIFETIME_MS: u64 = 15 * 60 * 1000;
const MAX_RECORDS: i64 = 1000;
/// Most shards one DescribeStream lists (DynamoDB: "The upper limit is 100").
const MAX_SHARDS_LISTED: i64 = 100;
const TOKEN: base64::engine::GeneralPurpose = base64::engine::general_purpose::URL_SAFE_NO_PAD;

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListStreamsRequest {
    table_name: Option<String>,
    limit: Option<i64>,
    exclusive_start_stream_arn: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeStreamRequest {
    stream_arn: Option<String>,
    limit: Option<i64>,
    exclusive_start_shard_id: Option<String>,
    shard_filter: Option<ShardFilter>,
}

/// DescribeStream's ShardFilter: only CHILD_SHARDS of a given shard.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ShardFilter {
    shard_id: Option<String>,
    #[serde(rename = "Type")]
    kind: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct GetShardIteratorRequest {
    stream_arn: Option<String>,
    shard_id: Option<String>,
    shard_iterator_type: Option<String>,
    sequence_number: Option<String>,
    /// AT_TIMESTAMP's instant (epoch seconds, to the millisecond).
    timestamp: Option<f64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct GetRecordsRequest {
    shard_iterator: Option<String>,
    limit: Option<i64>,
}

fn is_stream_arn(arn: &str) -> bool {
    arn.starts_with("arn:") && arn.contains(":table/") && arn.contains("/stream/")
}

/// The stream an ARN names: a malformed ARN is a ValidationException, an
/// unknown one ResourceNotFoundException.
fn stream(engine: &Engine, arn: &str) -> Result<(Arc<Table>, StreamInfo)> {
    if !is_stream_arn(arn) {
        return Err(DynamoError::validation(format!("Invalid StreamArn: {arn}")));
    }
    engine.find_stream(arn).ok_or_else(|| {
        DynamoError::resource_not_found(format!(
            "Requested resource not found: Stream: {arn} not found"
        ))
    })
}

pub fn list_streams(engine: &Engine, request: ListStreamsRequest) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    v.range("limit", request.limit, 1, Some(100));
    if let Some(name) = &request.table_name {
        v.name_rules("tableName", name, 3, 255);
    }
    v.finish()?;
    if let Some(name) = &request.table_name {
        engine.table(name)?;
    }
    let all = engine.list_streams(request.table_name.as_deref());
    let start = match &request.exclusive_start_stream_arn {
        Some(arn) => {
            if !is_stream_arn(arn) {
                return Err(DynamoError::validation(format!(
                    "Invalid ExclusiveStartStreamArn: {arn}"
                )));
            }
            all.iter()
                .position(|(_, s)| s.arn.as_str() > arn.as_str())
                .unwrap_or(all.len())
        }
        None => 0,
    };
    let limit = request.limit.unwrap_or(100) as usize;
    let page: Vec<&(Arc<Table>, StreamInfo)> = all[start..].iter().take(limit).collect();
    let more = start + page.len() < all.len();
    let mut body = ResponseBody::default();
    let shown: Vec<Value> = page
        .iter()
        .map(|(t, s)| json!({ "StreamArn": s.arn, "TableName": t.name, "StreamLabel": s.label }))
        .collect();
    if more {
        if let Some((_, last)) = page.last() {
            body.value("LastEvaluatedStreamArn", json!(last.arn));
        }
    }
    body.value("Streams", Value::Array(shown));
    body.finish()
}

pub fn describe_stream(engine: &Engine, request: DescribeStreamRequest) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    v.not_null("streamArn", &request.stream_arn);
    v.range("limit", request.limit, 1, Some(MAX_SHARDS_LISTED));
    v.length(
        "exclusiveStartShardId",
        request.exclusive_start_shard_id.as_deref(),
        28,
        65,
    );
    if let Some(filter) = &request.shard_filter {
        if v.not_null("shardFilter.shardId", &filter.shard_id) {
            v.length("shardFilter.shardId", filter.shard_id.as_deref(), 28, 65);
        }
        if v.not_null("shardFilter.type", &filter.kind) {
            v.one_of(
                "shardFilter.type",
                filter.kind.as_deref(),
                &["CHILD_SHARDS"],
            );
        }
    }
    let arn = v.finish_with(request.stream_arn.as_deref())?;
    let (table, stream) = stream(engine, arn)?;
    let (shards, last_evaluated) = listed_shards(&stream, &request);
    let description = table.describe();
    let mut shown = json!({
        "StreamArn": stream.arn,
        "StreamLabel": stream.label,
        "StreamStatus": if stream.enabled() { "ENABLED" } else { "DISABLED" },
        "StreamViewType": stream.view_type,
        "CreationRequestDateTime": stream.created,
        "TableName": table.name,
        "KeySchema": description.key_schema,
        "Shards": shards.iter().map(shard_json).collect::<Vec<_>>(),
    });
    if let Some(last) = last_evaluated {
        shown["LastEvaluatedShardId"] = json!(last);
    }
    let mut body = ResponseBody::default();
    body.value("StreamDescription", shown);
    body.finish()
}

/// The page of shards a DescribeStream asks for, oldest first (ids start
/// with their creation time, so parents come before children), and the
/// last one's id when more follow.
fn listed_shards(
    stream: &StreamInfo,
    request: &DescribeStreamRequest,
) -> (Vec<Shard>, Option<String>) {
    let mut shards = stream.shards();
    shards.sort_by(|a, b| a.id.cmp(&b.id));
    if let Some(filter) = &request.shard_filter {
        let parent = filter.shard_id.as_deref();
        shards.retain(|s| s.parent.as_deref() == parent);
    }
    if let Some(after) = &request.exclusive_start_shard_id {
        shards.retain(|s| s.id.as_str() > after.as_str());
    }
    let limit = request.limit.unwrap_or(MAX_SHARDS_LISTED) as usize;
    let more = shards.len() > limit;
    shards.truncate(limit);
    let last = more.then(|| shards.last().map(|s| s.id.clone())).flatten();
    (shards, last)
}

/// A shard as DescribeStream shows it.
fn shard_json(shard: &Shard) -> Value {
    let mut range = json!({ "StartingSequenceNumber": format_sequence(shard.start_seq) });
    if let Some(end) = shard.end_seq {
        range["EndingSequenceNumber"] = json!(format_sequence(end.max(shard.start_seq)));
    }
    let mut shown = json!({ "ShardId": shard.id, "SequenceNumberRange": range });
    if let Some(parent) = &shard.parent {
        shown["ParentShardId"] = json!(parent);
    }
    shown
}

/// What a shard iterator carries.
struct Iterator {
    table_id: u64,
    stream_start: u64,
    /// The shard's id (a shard closed at once by a split right after a
    /// rollover starts where its child does: only ids tell them apart).
    shard: String,
    position: u64,
    created_ms: u64,
}

impl Iterator {
    fn encode(&self) -> String {
        let text = format!(
            "v2|{}|{}|{}|{}|{}",
            self.table_id, self.stream_start, self.shard, self.position, self.created_ms
        );
        TOKEN.encode(text)
    }

    fn decode(token: &str) -> Option<Iterator> {
        let text = String::from_utf8(TOKEN.decode(token).ok()?).ok()?;
        let mut parts = text.split('|');
        if parts.next()? != "v2" {
            return None;
        }
        let table_id = parts.next()?.parse::<u64>().ok()?;
        let stream_start = parts.next()?.parse::<u64>().ok()?;
        let shard = parts.next()?.to_string();
        let mut number = || parts.next()?.parse::<u64>().ok();
        Some(Iterator {
            table_id,
            stream_start,
            shard,
            position: number()?,
            created_ms: number()?,
        })
    }

    fn shard<'s>(&self, stream: &'s [Shard]) -> Option<&'s Shard> {
        stream.iter().find(|s| s.id == self.shard)
    }
}

pub fn get_shard_iterator(engine: &Engine, request: GetShardIteratorRequest) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    v.not_null("streamArn", &request.stream_arn);
    if v.not_null("shardId", &request.shard_id) {
        v.length("shardId", request.shard_id.as_deref(), 28, 65);
    }
    if v.not_null("shardIteratorType", &request.shard_iterator_type) {
        v.one_of(
            "shardIteratorType",
            request.shard_iterator_type.as_deref(),
            &[
                "TRIM_HORIZON",
                "LATEST",
                "AT_SEQUENCE_NUMBER",
                "AFTER_SEQUENCE_NUMBER",
                "AT_TIMESTAMP",
            ],
        );
    }
    let checked = request
        .shard_iterator_type
        .as_deref()
        .zip(request.stream_arn.as_deref());
    let (kind, arn) = v.finish_with(checked)?;
    let (table, stream) = stream(engine, arn)?;
    let shard_id = request.shard_id.as_deref().unwrap_or_default();
    let shards = stream.shards();
    let shard = shards.iter().find(|s| s.id == shard_id).ok_or_else(|| {
        DynamoError::resource_not_found(format!(
            "Requested resource not found: Shard does not exist: {shard_id}"
        ))
    })?;
    let start = IteratorStart::parse(kind, &request)?;
    let position = start_position(engine, &table, shard, start)?;
    let iterator = Iterator {
        table_id: table.id,
        stream_start: stream.start_seq,
        shard: shard.id.clone(),
        position,
        created_ms: engine.clock.now_millis(),
    };
    let mut body = ResponseBody::default();
    body.value("ShardIterator", json!(iterator.encode()));
    body.finish()
}

/// The first sequence number an iterator of `shard` reads from.
fn start_position(
    engine: &Engine,
    table: &Table,
    shard: &Shard,
    start: IteratorStart,
) -> Result<u64> {
    let end = shard.end_seq.unwrap_or(u64::MAX);
    let (position, sequence) = match start {
        IteratorStart::TrimHorizon => (engine.trim_horizon(table, shard)?, None),
        // A closed shard gets no more records: LATEST is past its end.
        IteratorStart::Latest => (
            engine
                .next_sequence()
                .max(shard.start_seq)
                .min(end.saturating_add(1)),
            None,
        ),
        IteratorStart::At(seq) => (seq, Some(seq)),
        IteratorStart::After(seq) => (seq.saturating_add(1), Some(seq)),
        IteratorStart::AtTimestamp(at) => {
            if at > engine.now_seconds() {
                return Err(DynamoError::validation(format!(
                    "The timestamp {at} is in the future"
                )));
            }
            (engine.position_at(table, shard, at)?, None)
        }
    };
    if let Some(seq) = sequence {
        if seq < shard.start_seq || seq > end {
            return Err(DynamoError::validation(format!(
                "Invalid SequenceNumber: {} is not in the shard's range",
                format_sequence(seq)
            )));
        }
        if seq < engine.trim_horizon(table, shard)? {
            return Err(trimmed());
        }
    }
    Ok(position)
}

/// Where a shard iterator starts, from ShardIteratorType, SequenceNumber
/// and Timestamp.
enum IteratorStart {
    TrimHorizon,
    Latest,
    At(u64),
    After(u64),
    AtTimestamp(f64),
}

impl IteratorStart {
    /// `kind` is one of the five types (checked with the request); a
    /// sequence number must come with AT/AFTER and only with them, a
    /// timestamp with AT_TIMESTAMP.
    fn parse(kind: &str, request: &GetShardIteratorRequest) -> Result<IteratorStart> {
        let number = |text: &str| {
            text.parse::<u64>()
                .map_err(|_| DynamoError::validation(format!("Invalid SequenceNumber: {text}")))
        };
        let sequence = request.sequence_number.as_deref();
        match (kind, sequence, request.timestamp) {
            ("AT_TIMESTAMP", None, Some(at)) => Ok(IteratorStart::AtTimestamp(at)),
            ("AT_TIMESTAMP", None, None) => Err(DynamoError::validation(
                "Must specify a timestamp for iterator type AT_TIMESTAMP",
            )),
            (_, _, Some(_)) => Err(DynamoError::validation(format!(
                "Timestamp must not be specified for iterator type {kind}"
            ))),
            ("TRIM_HORIZON", None, _) => Ok(IteratorStart::TrimHorizon),
            ("LATEST", None, _) => Ok(IteratorStart::Latest),
            ("AT_SEQUENCE_NUMBER", Some(text), _) => Ok(IteratorStart::At(number(text)?)),
            ("AFTER_SEQUENCE_NUMBER", Some(text), _) => Ok(IteratorStart::After(number(text)?)),
            (_, None, _) => Err(DynamoError::validation(format!(
                "Must specify a sequence number for iterator type {kind}"
            ))),
            (_, Some(_), _) => Err(DynamoError::validation(format!(
                "Sequence number must not be specified for iterator type {kind}"
            ))),
        }
    }
}

pub fn get_records(engine: &Engine, request: GetRecordsRequest) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    v.not_null("shardIterator", &request.shard_iterator);
    v.range("limit", request.limit, 1, Some(MAX_RECORDS));
    let token = v.finish_with(request.shard_iterator.as_deref())?;
    let invalid = || DynamoError::validation(format!("Invalid ShardIterator: {token}"));
    let iterator = Iterator::decode(token).ok_or_else(invalid)?;
    if engine
        .clock
        .now_millis()
        .saturating_sub(iterator.created_ms)
        > ITERATOR_LIFETIME_MS
    {
        return Err(DynamoError::new(
            ErrorKind::ExpiredIterator,
            "Iterator expired. The iterator was created over 15 minutes ago.",
        ));
    }
    let not_found =
        || DynamoError::resource_not_found("Requested resource not found: Stream not found");
    let (table, stream) = engine
        .find_stream_of(iterator.table_id, iterator.stream_start)
        .ok_or_else(not_found)?;
    let shards = stream.shards();
    let shard = iterator.shard(&shards).ok_or_else(|| {
        DynamoError::resource_not_found("Requested resource not found: Shard does not exist")
    })?;
    let limit = request.limit.unwrap_or(MAX_RECORDS) as usize;
    let page = engine.read_shard(&table, &stream, shard, iterator.position, limit)?;
    let mut body = ResponseBody::default();
    body.value(
        "Records",
        Value::Array(page.records.into_iter().map(|r| r.record).collect()),
    );
    // A closed shard read to its end has no next iterator.
    if let Some(position) = page.next {
        let next = Iterator {
            position,
            created_ms: engine.clock.now_millis(),
            ..iterator
        };
        body.value("NextShardIterator", json!(next.encode()));
    }
    body.finish()
}
