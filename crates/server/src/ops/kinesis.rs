//! EnableKinesisStreamingDestination, DisableKinesisStreamingDestination,
//! DescribeKinesisStreamingDestination and UpdateKinesisStreamingDestination:
//! field checks in the service model's order, then the engine's state
//! machine (engine/src/kinesis.rs), whose errors carry AWS's texts.

use crate::ops::common::ResponseBody;
use crate::validate::Violations;
use ferrodyn_engine::kinesis::DestinationChange;
use ferrodyn_engine::Engine;
use ferrodyn_types::{DynamoError, Result};
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::Arc;

/// ApproximateCreationDateTimePrecision's members, as the model lists them.
const PRECISIONS: &[&str] = &["MILLISECOND", "MICROSECOND"];

/// Enable's and Disable's request.
#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct EnableRequest {
    table_name: Option<String>,
    stream_arn: Option<String>,
    enable_kinesis_streaming_configuration: Option<Configuration>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct UpdateRequest {
    table_name: Option<String>,
    stream_arn: Option<String>,
    update_kinesis_streaming_configuration: Option<Configuration>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeRequest {
    table_name: Option<String>,
}

#[derive(Clone, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Configuration {
    approximate_creation_date_time_precision: Option<String>,
}

impl Configuration {
    fn precision(&self) -> Option<&str> {
        self.approximate_creation_date_time_precision.as_deref()
    }

    fn shown(&self) -> Value {
        match self.precision() {
            Some(precision) => json!({ "ApproximateCreationDateTimePrecision": precision }),
            None => json!({}),
        }
    }
}

/// The checks every one of the three changes makes: TableName, StreamArn
/// (37 to 1024 characters) and the configuration's precision.
fn check(
    table_name: &Option<String>,
    stream_arn: &Option<String>,
    configuration: (&str, &Option<Configuration>),
) -> Result<(String, String)> {
    let mut v = Violations::default();
    v.table_name_or_arn("tableName", table_name);
    if v.not_null("streamArn", stream_arn) {
        v.length("streamArn", stream_arn.as_deref(), 37, 1024);
    }
    let (field, configuration) = configuration;
    if let Some(configuration) = configuration {
        let field = format!("{field}.approximateCreationDateTimePrecision");
        v.one_of(&field, configuration.precision(), PRECISIONS);
    }
    v.finish_with(table_name.clone().zip(stream_arn.clone()))
}

fn answer(
    change: DestinationChange,
    configuration: Option<(&str, &Configuration)>,
) -> Result<Vec<u8>> {
    let mut body = ResponseBody::default();
    body.value("TableName", json!(change.table_name));
    body.value("StreamArn", json!(change.destination.stream_arn));
    body.value("DestinationStatus", json!(change.destination.status.name()));
    if let Some((name, configuration)) = configuration {
        body.value(name, configuration.shown());
    }
    body.finish()
}

const ENABLE_CONFIGURATION: &str = "EnableKinesisStreamingConfiguration";

pub fn enable(engine: &Arc<Engine>, request: EnableRequest) -> Result<Vec<u8>> {
    let configuration = &request.enable_kinesis_streaming_configuration;
    let (table, arn) = check(
        &request.table_name,
        &request.stream_arn,
        ("enableKinesisStreamingConfiguration", configuration),
    )?;
    let precision = configuration.as_ref().and_then(Configuration::precision);
    let change = engine.enable_kinesis_destination(&table, &arn, precision)?;
    answer(
        change,
        configuration.as_ref().map(|c| (ENABLE_CONFIGURATION, c)),
    )
}

pub fn disable(engine: &Arc<Engine>, request: EnableRequest) -> Result<Vec<u8>> {
    let configuration = &request.enable_kinesis_streaming_configuration;
    let (table, arn) = check(
        &request.table_name,
        &request.stream_arn,
        ("enableKinesisStreamingConfiguration", configuration),
    )?;
    let change = engine.disable_kinesis_destination(&table, &arn)?;
    answer(
        change,
        configuration.as_ref().map(|c| (ENABLE_CONFIGURATION, c)),
    )
}

pub fn update(engine: &Arc<Engine>, request: UpdateRequest) -> Result<Vec<u8>> {
    let configuration = &request.update_kinesis_streaming_configuration;
    let (table, arn) = check(
        &request.table_name,
        &request.stream_arn,
        ("updateKinesisStreamingConfiguration", configuration),
    )?;
    let Some(precision) = configuration.as_ref().and_then(Configuration::precision) else {
        return Err(DynamoError::validation(
            "Streaming destination cannot be updated with given parameters: UpdateKinesisStreamingConfiguration cannot be null or contain only null values",
        ));
    };
    let change = engine.update_kinesis_destination(&table, &arn, precision)?;
    let shown = configuration
        .as_ref()
        .map(|c| ("UpdateKinesisStreamingConfiguration", c));
    answer(change, shown)
}

pub fn describe(engine: &Engine, request: DescribeRequest) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    v.table_name_or_arn("tableName", &request.table_name);
    let table = v.finish_with(request.table_name)?;
    let (name, destinations) = engine.describe_kinesis_destinations(&table)?;
    let shown: Vec<Value> = (destinations.iter())
        .map(|d| {
            let mut entry = json!({
                "StreamArn": d.stream_arn,
                "DestinationStatus": d.status.name(),
            });
            if let Some(description) = &d.description {
                entry["DestinationStatusDescription"] = json!(description);
            }
            if let Some(precision) = &d.precision {
                entry["ApproximateCreationDateTimePrecision"] = json!(precision);
            }
            entry
        })
        .collect();
    let mut body = ResponseBody::default();
    body.value("TableName", json!(name));
    body.value("KinesisDataStreamDestinations", json!(shown));
    body.finish()
}
