//! StartBulkPutItems, DescribeBulkOperation, ListBulkOperations and
//! CancelBulkOperation: field constraints here (the service model's), the
//! operation in `ferrodyn_engine::bulk_loads`.

use crate::ops::common::ResponseBody;
use crate::validate::Violations;
use ferrodyn_engine::bulk_loads::BulkPutRequest;
use ferrodyn_engine::imports::Compression;
use ferrodyn_engine::Engine;
use ferrodyn_types::{DynamoError, Result};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::sync::Arc;

/// ListBulkOperations' MaxResults bounds and default.
const LIST_MAX: (i64, i64, usize) = (1, 25, 10);

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct StartRequest {
    client_token: Option<String>,
    #[serde(rename = "InputS3Configuration")]
    input: Option<Value>,
    #[serde(rename = "OutputS3Configuration")]
    output: Option<Value>,
    table_name: Option<String>,
    max_write_request_units: Option<i64>,
    performance_tier: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ArnRequest {
    bulk_operation_arn: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListRequest {
    max_results: Option<i64>,
    next_token: Option<String>,
}

fn text<'a>(value: &'a Option<Value>, member: &str) -> Option<&'a str> {
    value.as_ref()?.get(member)?.as_str()
}

pub fn start(engine: &Arc<Engine>, request: StartRequest) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    v.table_name_or_arn("tableName", &request.table_name);
    if v.not_null("inputS3Configuration", &request.input) {
        check_location(&mut v, "inputS3Configuration", &request.input);
        let format = text(&request.input, "InputFormat");
        if v.not_null("inputS3Configuration.inputFormat", &format) {
            v.one_of(
                "inputS3Configuration.inputFormat",
                format,
                &["DYNAMODB_JSON", "ION"],
            );
        }
        let compression = text(&request.input, "InputCompressionType");
        v.one_of(
            "inputS3Configuration.inputCompressionType",
            compression,
            &["GZIP", "ZSTD", "NONE"],
        );
    }
    if v.not_null("outputS3Configuration", &request.output) {
        check_location(&mut v, "outputS3Configuration", &request.output);
        let output = "outputS3Configuration";
        v.one_of(
            &format!("{output}.s3SseAlgorithm"),
            text(&request.output, "S3SseAlgorithm"),
            &["AES256", "KMS"],
        );
        v.length(
            &format!("{output}.s3SseKmsKeyId"),
            text(&request.output, "S3SseKmsKeyId"),
            1,
            2048,
        );
        let types = request.output.as_ref().and_then(|o| o.get("OutputType"));
        if v.not_null(&format!("{output}.outputType"), &types) {
            for kind in types.and_then(Value::as_array).into_iter().flatten() {
                v.one_of(
                    &format!("{output}.outputType.member"),
                    kind.as_str(),
                    &["ERROR", "CONDITION_CHECK_FAILURE"],
                );
            }
        }
    }
    v.range(
        "maxWriteRequestUnits",
        request.max_write_request_units,
        1024,
        None,
    );
    v.one_of(
        "performanceTier",
        request.performance_tier.as_deref(),
        &["STANDARD", "ACCELERATED"],
    );
    if let Some(token) = request
        .client_token
        .as_deref()
        .filter(|t| t.is_empty() || t.contains('$'))
    {
        v.pattern("clientToken", token, "^[^\\$]+$");
    }
    v.finish()?;
    let mut echo = Map::new();
    echo.insert(
        "InputS3Configuration".into(),
        request.input.clone().unwrap_or_default(),
    );
    echo.insert(
        "OutputS3Configuration".into(),
        request.output.clone().unwrap_or_default(),
    );
    echo.insert(
        "PerformanceTier".into(),
        Value::String(
            request
                .performance_tier
                .unwrap_or_else(|| "STANDARD".into()),
        ),
    );
    let bulk = BulkPutRequest {
        table_name: request.table_name.unwrap_or_default(),
        bucket: text(&request.input, "S3Bucket")
            .unwrap_or_default()
            .to_string(),
        prefix: text(&request.input, "S3KeyPrefix")
            .unwrap_or_default()
            .to_string(),
        ion: text(&request.input, "InputFormat") == Some("ION"),
        compression: match text(&request.input, "InputCompressionType") {
            Some("GZIP") => Compression::Gzip,
            Some("ZSTD") => Compression::Zstd,
            _ => Compression::None,
        },
        max_write_units: request.max_write_request_units.map(|u| u as u64),
        client_token: request.client_token,
        echo,
    };
    let mut body = ResponseBody::default();
    body.value("BulkOperationDescription", engine.start_bulk_put(bulk)?);
    body.finish()
}

/// An S3 location's bucket, owner and prefix constraints (the service model's).
fn check_location(v: &mut Violations, field: &str, config: &Option<Value>) {
    if let Some(bucket) = text(config, "S3Bucket") {
        let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
        let inner = bucket
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
        if bucket.len() < 2
            || !inner
            || !edge(bucket.chars().next())
            || !edge(bucket.chars().last())
        {
            v.pattern(
                &format!("{field}.s3Bucket"),
                bucket,
                "^[a-z0-9A-Z]+[\\.\\-\\w]*[a-z0-9A-Z]+$",
            );
        }
        v.length(&format!("{field}.s3Bucket"), Some(bucket), 0, 255);
    } else if field.starts_with("input") {
        v.not_null(&format!("{field}.s3Bucket"), &None::<()>);
    }
    if let Some(owner) = text(config, "S3BucketOwner")
        .filter(|o| o.len() != 12 || !o.chars().all(|c| c.is_ascii_digit()))
    {
        v.pattern(&format!("{field}.s3BucketOwner"), owner, "[0-9]{12}");
    }
    v.length(
        &format!("{field}.s3KeyPrefix"),
        text(config, "S3KeyPrefix"),
        0,
        1024,
    );
}

fn arn_of(request: ArnRequest) -> Result<String> {
    let mut v = Violations::default();
    if v.not_null("bulkOperationArn", &request.bulk_operation_arn) {
        v.length(
            "bulkOperationArn",
            request.bulk_operation_arn.as_deref(),
            37,
            1024,
        );
    }
    v.finish_with(request.bulk_operation_arn)
}

pub fn describe(engine: &Arc<Engine>, request: ArnRequest) -> Result<Vec<u8>> {
    let arn = arn_of(request)?;
    let mut body = ResponseBody::default();
    body.value("BulkOperationDescription", engine.describe_bulk(&arn)?);
    body.finish()
}

pub fn cancel(engine: &Arc<Engine>, request: ArnRequest) -> Result<Vec<u8>> {
    let arn = arn_of(request)?;
    let answer = engine.cancel_bulk(&arn)?;
    let mut body = ResponseBody::default();
    body.value("BulkOperationArn", answer["BulkOperationArn"].clone());
    body.value("BulkOperationStatus", answer["BulkOperationStatus"].clone());
    body.finish()
}

pub fn list(engine: &Arc<Engine>, request: ListRequest) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    v.range(
        "maxResults",
        request.max_results,
        LIST_MAX.0,
        Some(LIST_MAX.1),
    );
    v.finish()?;
    let next = match request.next_token.as_deref() {
        Some(token) => Some(u64::from_str_radix(token, 16).map_err(|_| {
            DynamoError::validation(format!(
                "Invalid Request: Provided nextToken is invalid: {token}"
            ))
        })?),
        None => None,
    };
    let max = request.max_results.map_or(LIST_MAX.2, |m| m as usize);
    let (summaries, token) = engine.list_bulk(max, next)?;
    let mut body = ResponseBody::default();
    body.value("BulkOperationsSummaryList", Value::Array(summaries));
    if let Some(token) = token {
        body.value("NextToken", Value::String(token));
    }
    body.finish()
}
