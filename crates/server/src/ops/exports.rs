//! ExportTableToPointInTime, DescribeExport and ListExports: field
//! constraints here, the export itself in `ferrodyn_engine::exports`.

use crate::ops::jobs;
use crate::validate::Violations;
use ferrodyn_engine::exports::{ExportFormat, ExportRequest, IncrementalSpec};
use ferrodyn_engine::Engine;
use ferrodyn_types::{DynamoError, Result};
use serde::Deserialize;
use std::sync::Arc;

/// ListExports' MaxResults bounds and DynamoDB's default (DDB-IMPORT-016).
const LIST_MAX: (i64, i64, usize) = (1, 25, 10);

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ExportRequestBody {
    table_arn: Option<String>,
    export_time: Option<f64>,
    client_token: Option<String>,
    s3_bucket: Option<String>,
    s3_bucket_owner: Option<String>,
    s3_prefix: Option<String>,
    #[serde(rename = "S3SseAlgorithm")]
    s3_sse_algorithm: Option<String>,
    #[serde(rename = "S3SseKmsKeyId")]
    s3_sse_kms_key_id: Option<String>,
    export_format: Option<String>,
    export_type: Option<String>,
    incremental_export_specification: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeRequest {
    export_arn: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListRequest {
    table_arn: Option<String>,
    max_results: Option<i64>,
    next_token: Option<String>,
}

pub fn export(engine: &Arc<Engine>, request: ExportRequestBody) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    if v.not_null("tableArn", &request.table_arn) {
        v.length("tableArn", request.table_arn.as_deref(), 1, 1024);
    }
    if v.not_null("s3Bucket", &request.s3_bucket) {
        v.length("s3Bucket", request.s3_bucket.as_deref(), 0, 255);
    }
    v.length("s3Prefix", request.s3_prefix.as_deref(), 0, 1024);
    v.length(
        "s3SseKmsKeyId",
        request.s3_sse_kms_key_id.as_deref(),
        1,
        2048,
    );
    v.length("clientToken", request.client_token.as_deref(), 1, 100);
    v.one_of(
        "s3SseAlgorithm",
        request.s3_sse_algorithm.as_deref(),
        &["AES256", "KMS"],
    );
    v.one_of(
        "exportFormat",
        request.export_format.as_deref(),
        &["DYNAMODB_JSON", "ION"],
    );
    v.one_of(
        "exportType",
        request.export_type.as_deref(),
        &["FULL_EXPORT", "INCREMENTAL_EXPORT"],
    );
    let checked = (|| Some((request.table_arn?, request.s3_bucket?)))();
    let (table_arn, bucket) = v.finish_with(checked)?;
    let incremental = incremental_spec(
        request.export_type.as_deref(),
        request.incremental_export_specification,
    )?;
    if incremental.is_some() && request.export_time.is_some() {
        return Err(DynamoError::validation(
            "Invalid Request: ExportTime cannot be provided for an Incremental Export",
        ));
    }
    let export = ExportRequest {
        table_arn,
        bucket,
        prefix: request.s3_prefix,
        bucket_owner: request.s3_bucket_owner,
        sse_algorithm: request.s3_sse_algorithm,
        kms_key_id: request.s3_sse_kms_key_id,
        format: match request.export_format.as_deref() {
            Some("ION") => ExportFormat::Ion,
            _ => ExportFormat::DynamodbJson,
        },
        time: request.export_time.map(|t| (t * 1000.0).round() / 1000.0),
        client_token: request.client_token,
        export_type: request.export_type,
        incremental,
    };
    jobs::respond("ExportDescription", engine.export_table(export)?)
}

/// ExportType against IncrementalExportSpecification, with DynamoDB's
/// wording (docs/design/exports.md §2).
fn incremental_spec(
    export_type: Option<&str>,
    spec: Option<serde_json::Value>,
) -> Result<Option<IncrementalSpec>> {
    let invalid = |m: &str| Err(DynamoError::validation(format!("Invalid Request: {m}")));
    match (export_type, spec) {
        (None | Some("FULL_EXPORT"), None) => Ok(None),
        (None, Some(_)) => invalid("Export Type expected to be Incremental Export when incremental export specification is provided"),
        (Some("FULL_EXPORT"), Some(_)) => invalid("When Export Type is Full Export , Incremental Export Specification should not be provided"),
        (_, None) => invalid("Incremental Export Specification expected when export type is set as Incremental Export"),
        (_, Some(spec)) => {
            let seconds = |name: &str| spec.get(name).and_then(serde_json::Value::as_f64).map(|t| (t * 1000.0).round() / 1000.0);
            let Some(from) = seconds("ExportFromTime") else {
                return invalid("ExportFromTime must be provided in IncrementalExportSpecification");
            };
            let view_type = spec.get("ExportViewType").and_then(serde_json::Value::as_str).unwrap_or("NEW_AND_OLD_IMAGES");
            let mut v = Violations::default();
            v.one_of("incrementalExportSpecification.exportViewType", Some(view_type), &["NEW_IMAGE", "NEW_AND_OLD_IMAGES"]);
            v.finish()?;
            Ok(Some(IncrementalSpec { from, to: seconds("ExportToTime"), view_type: view_type.to_string() }))
        }
    }
}

pub fn describe(engine: &Arc<Engine>, request: DescribeRequest) -> Result<Vec<u8>> {
    let arn = jobs::job_arn("exportArn", request.export_arn)?;
    jobs::respond("ExportDescription", engine.describe_export(&arn)?)
}

pub fn list(engine: &Arc<Engine>, request: ListRequest) -> Result<Vec<u8>> {
    let max = jobs::page_size("maxResults", request.max_results, LIST_MAX)?;
    let table = request.table_arn.as_deref();
    let (summaries, token) = engine.list_exports(table, max, request.next_token.as_deref())?;
    let summaries = serde_json::to_value(summaries).expect("plain data always serialises");
    jobs::page("ExportSummaries", summaries, token)
}
