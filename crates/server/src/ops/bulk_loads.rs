//! StartBulkPutItems, DescribeBulkOperation, ListBulkOperations and
//! CancelBulkOperation: field constraints here (the service model's), the
//! operation in `ferrodyn_engine::bulk_loads`.

use crate::ops::common::ResponseBody;
use crate::ops::jobs;
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
    check_start(&request)?;
    let described = engine.start_bulk_put(bulk_request(request))?;
    let mut body = ResponseBody::default();
    body.value("BulkOperationDescription", described);
    body.finish()
}

/// StartBulkPutItems' field constraints (the service model's).
fn check_start(request: &StartRequest) -> Result<()> {
    let mut v = Violations::default();
    v.table_name_or_arn("tableName", &request.table_name);
    if v.not_null("inputS3Configuration", &request.input) {
        check_input(&mut v, &request.input);
    }
    if v.not_null("outputS3Configuration", &request.output) {
        check_output(&mut v, &request.output);
    }
    v.range(
        "maxWriteRequestUnits",
        request.max_write_request_units,
        1024,
        None,
    );
    let tier = request.performance_tier.as_deref();
    v.one_of("performanceTier", tier, &["STANDARD", "ACCELERATED"]);
    let token = request.client_token.as_deref();
    if let Some(token) = token.filter(|t| t.is_empty() || t.contains('$')) {
        v.pattern("clientToken", token, "^[^\\$]+$");
    }
    v.finish()
}

fn check_input(v: &mut Violations, input: &Option<Value>) {
    let field = "inputS3Configuration";
    check_location(v, field, input);
    let format = text(input, "InputFormat");
    if v.not_null(&format!("{field}.inputFormat"), &format) {
        v.one_of(
            &format!("{field}.inputFormat"),
            format,
            &["DYNAMODB_JSON", "ION"],
        );
    }
    let compression = text(input, "InputCompressionType");
    let allowed = ["GZIP", "ZSTD", "NONE"];
    v.one_of(
        &format!("{field}.inputCompressionType"),
        compression,
        &allowed,
    );
}

fn check_output(v: &mut Violations, output: &Option<Value>) {
    let field = "outputS3Configuration";
    check_location(v, field, output);
    let sse = text(output, "S3SseAlgorithm");
    v.one_of(&format!("{field}.s3SseAlgorithm"), sse, &["AES256", "KMS"]);
    let kms_key = text(output, "S3SseKmsKeyId");
    v.length(&format!("{field}.s3SseKmsKeyId"), kms_key, 1, 2048);
    let types = output.as_ref().and_then(|o| o.get("OutputType"));
    if v.not_null(&format!("{field}.outputType"), &types) {
        for kind in types.and_then(Value::as_array).into_iter().flatten() {
            let allowed = ["ERROR", "CONDITION_CHECK_FAILURE"];
            v.one_of(
                &format!("{field}.outputType.member"),
                kind.as_str(),
                &allowed,
            );
        }
    }
}

/// The request as the engine takes it, its configurations echoed as given.
fn bulk_request(request: StartRequest) -> BulkPutRequest {
    let tier = request
        .performance_tier
        .unwrap_or_else(|| "STANDARD".into());
    let mut echo = Map::new();
    echo.insert(
        "InputS3Configuration".into(),
        request.input.clone().unwrap_or_default(),
    );
    echo.insert(
        "OutputS3Configuration".into(),
        request.output.clone().unwrap_or_default(),
    );
    echo.insert("PerformanceTier".into(), Value::String(tier));
    let input = &request.input;
    BulkPutRequest {
        table_name: request.table_name.unwrap_or_default(),
        bucket: text(input, "S3Bucket").unwrap_or_default().to_string(),
        prefix: text(input, "S3KeyPrefix").unwrap_or_default().to_string(),
        ion: text(input, "InputFormat") == Some("ION"),
        compression: match text(input, "InputCompressionType") {
            Some("GZIP") => Compression::Gzip,
            Some("ZSTD") => Compression::Zstd,
            _ => Compression::None,
        },
        max_write_units: request.max_write_request_units.map(|u| u as u64),
        client_token: request.client_token,
        echo,
    }
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
    jobs::job_arn("bulkOperationArn", request.bulk_operation_arn)
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
    let max = jobs::page_size("maxResults", request.max_results, LIST_MAX)?;
    let next = match request.next_token.as_deref() {
        Some(token) => Some(u64::from_str_radix(token, 16).map_err(|_| {
            DynamoError::validation(format!(
                "Invalid Request: Provided nextToken is invalid: {token}"
            ))
        })?),
        None => None,
    };
    let (summaries, token) = engine.list_bulk(max, next)?;
    jobs::page("BulkOperationsSummaryList", Value::Array(summaries), token)
}
