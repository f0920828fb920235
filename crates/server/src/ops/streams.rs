//! The DynamoDB Streams API (target prefix `DynamoDBStreams_20120810.`):
//! ListStreams, DescribeStream, GetShardIterator and GetRecords.
//!
//! Each stream has one shard. A shard iterator is an opaque token naming
//! the table, the stream (by its first sequence number), the next position
//! and its creation time; it expires after 15 minutes, as in DynamoDB.

use crate::ops::common::ResponseBody;
use crate::validate::Violations;
use base64::Engine as _;
use ferrodyn_engine::streams::{format_sequence, StreamInfo};
use ferrodyn_engine::table::Table;
use ferrodyn_engine::Engine;
use ferrodyn_types::{DynamoError, ErrorKind, Result};
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Arc;

const ITERATOR_LIFETIME_MS: u64 = 15 * 60 * 1000;
const MAX_RECORDS: i64 = 1000;
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
    v.range("limit", request.limit, 1, Some(100));
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
    let shard_id = stream.shard_id();
    let mut range = json!({ "StartingSequenceNumber": format_sequence(stream.start_seq) });
    if let Some(end) = stream.end_seq {
        range["EndingSequenceNumber"] = json!(format_sequence(end.max(stream.start_seq)));
    }
    let shards = match &request.exclusive_start_shard_id {
        // Each stream has a single shard, which never splits: it has no
        // children.
        _ if request.shard_filter.is_some() => Vec::new(),
        Some(after) if after.as_str() >= shard_id.as_str() => Vec::new(),
        _ => vec![json!({ "ShardId": shard_id, "SequenceNumberRange": range })],
    };
    let description = table.describe();
    let mut body = ResponseBody::default();
    body.value(
        "StreamDescription",
        json!({
            "StreamArn": stream.arn,
            "StreamLabel": stream.label,
            "StreamStatus": if stream.enabled() { "ENABLED" } else { "DISABLED" },
            "StreamViewType": stream.view_type,
            "CreationRequestDateTime": stream.created,
            "TableName": table.name,
            "KeySchema": description.key_schema,
            "Shards": shards,
        }),
    );
    body.finish()
}

/// What a shard iterator carries.
struct Iterator {
    table_id: u64,
    stream_start: u64,
    position: u64,
    created_ms: u64,
}

impl Iterator {
    fn encode(&self) -> String {
        let text = format!(
            "v1|{}|{}|{}|{}",
            self.table_id, self.stream_start, self.position, self.created_ms
        );
        TOKEN.encode(text)
    }

    fn decode(token: &str) -> Option<Iterator> {
        let text = String::from_utf8(TOKEN.decode(token).ok()?).ok()?;
        let mut parts = text.split('|');
        if parts.next()? != "v1" {
            return None;
        }
        let mut number = || parts.next()?.parse::<u64>().ok();
        Some(Iterator {
            table_id: number()?,
            stream_start: number()?,
            position: number()?,
            created_ms: number()?,
        })
    }
}

pub fn get_shard_iterator(engine: &Engine, request: GetShardIteratorRequest) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    v.not_null("streamArn", &request.stream_arn);
    v.not_null("shardId", &request.shard_id);
    if v.not_null("shardIteratorType", &request.shard_iterator_type) {
        v.one_of(
            "shardIteratorType",
            request.shard_iterator_type.as_deref(),
            &[
                "TRIM_HORIZON",
                "LATEST",
                "AT_SEQUENCE_NUMBER",
                "AFTER_SEQUENCE_NUMBER",
            ],
        );
    }
    let checked = request
        .shard_iterator_type
        .as_deref()
        .zip(request.stream_arn.as_deref());
    let (kind, arn) = v.finish_with(checked)?;
    let (table, stream) = stream(engine, arn)?;
    if request.shard_id.as_deref() != Some(stream.shard_id().as_str()) {
        return Err(DynamoError::resource_not_found(format!(
            "Requested resource not found: Shard does not exist: {}",
            request.shard_id.as_deref().unwrap_or_default()
        )));
    }
    let start = IteratorStart::parse(kind, request.sequence_number.as_deref())?;
    let last = stream.end_seq.unwrap_or(u64::MAX);
    let (position, sequence) = match start {
        IteratorStart::TrimHorizon => (stream.start_seq, None),
        IteratorStart::Latest => (engine.next_sequence().max(stream.start_seq), None),
        IteratorStart::At(seq) => (seq, Some(seq)),
        IteratorStart::After(seq) => (seq.saturating_add(1), Some(seq)),
    };
    if let Some(seq) = sequence {
        if seq < stream.start_seq || seq > last {
            return Err(DynamoError::validation(format!(
                "Invalid SequenceNumber: {} is not in the shard's range",
                format_sequence(seq)
            )));
        }
    }
    let iterator = Iterator {
        table_id: table.id,
        stream_start: stream.start_seq,
        position,
        created_ms: engine.clock.now_millis(),
    };
    let mut body = ResponseBody::default();
    body.value("ShardIterator", json!(iterator.encode()));
    body.finish()
}

/// Where a shard iterator starts, from ShardIteratorType and SequenceNumber.
enum IteratorStart {
    TrimHorizon,
    Latest,
    At(u64),
    After(u64),
}

impl IteratorStart {
    /// `kind` is one of the four types (checked with the request); a
    /// sequence number must come with AT/AFTER and only with them.
    fn parse(kind: &str, sequence: Option<&str>) -> Result<IteratorStart> {
        let number = |text: &str| {
            text.parse::<u64>()
                .map_err(|_| DynamoError::validation(format!("Invalid SequenceNumber: {text}")))
        };
        match (kind, sequence) {
            ("TRIM_HORIZON", None) => Ok(IteratorStart::TrimHorizon),
            ("LATEST", None) => Ok(IteratorStart::Latest),
            ("AT_SEQUENCE_NUMBER", Some(text)) => Ok(IteratorStart::At(number(text)?)),
            ("AFTER_SEQUENCE_NUMBER", Some(text)) => Ok(IteratorStart::After(number(text)?)),
            (_, None) => Err(DynamoError::validation(format!(
                "Must specify a sequence number for iterator type {kind}"
            ))),
            (_, Some(_)) => Err(DynamoError::validation(format!(
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
    let (table, stream) = engine
        .find_stream_of(iterator.table_id, iterator.stream_start)
        .ok_or_else(|| {
            DynamoError::resource_not_found("Requested resource not found: Stream not found")
        })?;
    let limit = request.limit.unwrap_or(MAX_RECORDS) as usize;
    let last = stream.end_seq.unwrap_or(u64::MAX);
    let page = engine.read_stream_page(&table, iterator.position, last, limit)?;
    let next_position = (page.records.last()).map_or(iterator.position, |r| r.seq + 1);
    // A disabled stream's shard is closed: once it is read to the end there
    // is no next iterator.
    let closed = stream.end_seq.is_some() && page.reached_end;
    let mut body = ResponseBody::default();
    body.value(
        "Records",
        Value::Array(page.records.into_iter().map(|r| r.record).collect()),
    );
    if !closed {
        let next = Iterator {
            position: next_position,
            created_ms: engine.clock.now_millis(),
            ..iterator
        };
        body.value("NextShardIterator", json!(next.encode()));
    }
    body.finish()
}
