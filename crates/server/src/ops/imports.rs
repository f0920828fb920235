//! ImportTable, DescribeImport and ListImports: field constraints here (the
//! new table's parameters through CreateTable's own checks), the import in
//! `ferrodyn_engine::imports`.

use crate::ops::create_table;
use crate::ops::jobs;
use crate::validate::Violations;
use ferrodyn_engine::imports::{Compression, ImportRequest};
use ferrodyn_engine::imports_format::InputFormat;
use ferrodyn_engine::Engine;
use ferrodyn_types::{DynamoError, Result};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::sync::Arc;

/// ListImports' PageSize bounds and DynamoDB's default (DDB-IMPORT-016).
const PAGE_SIZE: (i64, i64, usize) = (1, 25, 10);

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ImportTableRequest {
    client_token: Option<String>,
    #[serde(rename = "S3BucketSource")]
    s3_bucket_source: Option<Value>,
    input_format: Option<String>,
    input_format_options: Option<Value>,
    input_compression_type: Option<String>,
    table_creation_parameters: Option<Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeRequest {
    import_arn: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListRequest {
    table_arn: Option<String>,
    page_size: Option<i64>,
    next_token: Option<String>,
}

pub fn import(engine: &Arc<Engine>, request: ImportTableRequest) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    v.not_null("s3BucketSource", &request.s3_bucket_source);
    v.not_null(
        "tableCreationParameters",
        &request.table_creation_parameters,
    );
    if v.not_null("inputFormat", &request.input_format) {
        v.one_of(
            "inputFormat",
            request.input_format.as_deref(),
            &["DYNAMODB_JSON", "ION", "CSV"],
        );
    }
    v.one_of(
        "inputCompressionType",
        request.input_compression_type.as_deref(),
        &["GZIP", "ZSTD", "NONE"],
    );
    v.length("clientToken", request.client_token.as_deref(), 1, 100);
    let source = request.s3_bucket_source.clone().unwrap_or_default();
    let bucket = source
        .get("S3Bucket")
        .and_then(Value::as_str)
        .map(str::to_string);
    if request.s3_bucket_source.is_some() {
        v.not_null("s3BucketSource.s3Bucket", &bucket);
    }
    v.finish()?;
    let (format, compression) = (
        request.input_format.clone().unwrap_or_default(),
        request.input_compression_type.clone(),
    );
    let parameters = request
        .table_creation_parameters
        .clone()
        .unwrap_or_default();
    let table = create_table::validate(
        serde_json::from_value(parameters.clone())
            .map_err(|e| DynamoError::validation(format!("TableCreationParameters: {e}")))?,
    )?;
    let format = match format.as_str() {
        "CSV" => csv_format(request.input_format_options.as_ref())?,
        "ION" => InputFormat::Ion,
        _ => InputFormat::DynamodbJson,
    };
    let mut echo = Map::new();
    echo.insert("S3BucketSource".into(), source.clone());
    echo.insert(
        "InputFormat".into(),
        Value::String(
            request
                .input_format
                .clone()
                .unwrap_or_else(|| "DYNAMODB_JSON".into()),
        ),
    );
    if let Some(options) = &request.input_format_options {
        echo.insert("InputFormatOptions".into(), options.clone());
    }
    echo.insert(
        "InputCompressionType".into(),
        Value::String(compression.unwrap_or_else(|| "NONE".into())),
    );
    echo.insert("TableCreationParameters".into(), parameters);
    let import = ImportRequest {
        bucket: bucket.unwrap_or_default(),
        prefix: source
            .get("S3KeyPrefix")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        format,
        compression: match request.input_compression_type.as_deref() {
            Some("GZIP") => Compression::Gzip,
            Some("ZSTD") => Compression::Zstd,
            _ => Compression::None,
        },
        table,
        client_token: request.client_token,
        echo,
    };
    jobs::respond("ImportTableDescription", engine.import_table(import)?)
}

/// CSV's options: a one-character Delimiter (default `,`) and HeaderList.
fn csv_format(options: Option<&Value>) -> Result<InputFormat> {
    let csv = options.and_then(|o| o.get("Csv"));
    let delimiter = csv
        .and_then(|c| c.get("Delimiter"))
        .and_then(Value::as_str)
        .unwrap_or(",");
    let [delimiter] = delimiter.as_bytes() else {
        return Err(DynamoError::validation(
            "InputFormatOptions.Csv.Delimiter must be one character",
        ));
    };
    let header = (csv
        .and_then(|c| c.get("HeaderList"))
        .and_then(Value::as_array))
    .map(|names| {
        names
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    });
    Ok(InputFormat::Csv {
        delimiter: *delimiter,
        header,
    })
}

pub fn describe(engine: &Arc<Engine>, request: DescribeRequest) -> Result<Vec<u8>> {
    let arn = jobs::job_arn("importArn", request.import_arn)?;
    jobs::respond("ImportTableDescription", engine.describe_import(&arn)?)
}

pub fn list(engine: &Arc<Engine>, request: ListRequest) -> Result<Vec<u8>> {
    let max = jobs::page_size("pageSize", request.page_size, PAGE_SIZE)?;
    let table = request.table_arn.as_deref();
    let (summaries, token) = engine.list_imports(table, max, request.next_token.as_deref())?;
    let summaries = serde_json::to_value(summaries).expect("plain data always serialises");
    jobs::page("ImportSummaryList", summaries, token)
}
