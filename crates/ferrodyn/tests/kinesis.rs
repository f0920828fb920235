//! Kinesis streaming destinations through the SDK: the four operations'
//! shapes, their state machine and AWS's error texts, on servers that have
//! no reachable Kinesis (so every enable ends ENABLE_FAILED, as on AWS for a
//! stream the table may not use). Delivery to a real Kinesis server (moto),
//! ACTIVE, DISABLING, UPDATING, outages and crashes are tests/kinesis/*.py
//! (scripts/kinesis-tests.sh).

use crate::util::{self, assert_error, assert_validation, client, poll_until, raw, table_s};
use aws_sdk_dynamodb::types::{
    ApproximateCreationDateTimePrecision as Precision, DestinationStatus,
    EnableKinesisStreamingConfiguration, KinesisDataStreamDestination,
    UpdateKinesisStreamingConfiguration,
};
use aws_sdk_dynamodb::Client;
use std::time::Duration;

const NOT_VALID: &str = "Table is not in a valid state to enable Kinesis Streaming Destination: ";

fn stream_arn(name: &str) -> String {
    format!("arn:aws:kinesis:us-east-1:000000000000:stream/{name}")
}

async fn destinations(client: &Client, table: &str) -> Vec<KinesisDataStreamDestination> {
    let described = client
        .describe_kinesis_streaming_destination()
        .table_name(table)
        .send()
        .await
        .expect("DescribeKinesisStreamingDestination succeeds");
    assert_eq!(described.table_name(), Some(table));
    described.kinesis_data_stream_destinations().to_vec()
}

/// Waits until the table's destination of `arn` has `status`.
async fn wait_for(
    client: &Client,
    table: &str,
    arn: &str,
    status: DestinationStatus,
) -> KinesisDataStreamDestination {
    poll_until(
        &format!("{arn} {status:?}"),
        Duration::from_secs(15),
        || async {
            let all = destinations(client, table).await;
            all.into_iter()
                .find(|d| d.stream_arn() == Some(arn) && d.destination_status() == Some(&status))
        },
    )
    .await
}

#[tokio::test]
async fn a_table_without_destinations_describes_an_empty_list() {
    let client = client();
    let table = table_s(&client).await;
    assert!(destinations(&client, &table).await.is_empty());
}

#[tokio::test]
async fn enable_answers_enabling_then_fails_without_a_kinesis_endpoint() {
    let client = client();
    let table = table_s(&client).await;
    let arn = stream_arn("no-endpoint");
    let enabled = client
        .enable_kinesis_streaming_destination()
        .table_name(&table)
        .stream_arn(&arn)
        .enable_kinesis_streaming_configuration(
            EnableKinesisStreamingConfiguration::builder()
                .approximate_creation_date_time_precision(Precision::Microsecond)
                .build(),
        )
        .send()
        .await
        .expect("EnableKinesisStreamingDestination succeeds");
    assert_eq!(enabled.table_name(), Some(table.as_str()));
    assert_eq!(enabled.stream_arn(), Some(arn.as_str()));
    assert_eq!(
        enabled.destination_status(),
        Some(&DestinationStatus::Enabling)
    );
    let echoed = enabled
        .enable_kinesis_streaming_configuration()
        .expect("echoed");
    assert_eq!(
        echoed.approximate_creation_date_time_precision(),
        Some(&Precision::Microsecond)
    );
    let failed = wait_for(&client, &table, &arn, DestinationStatus::EnableFailed).await;
    assert_eq!(
        failed.destination_status_description(),
        Some("User does not have a permission to use kinesis stream")
    );
    assert_eq!(
        failed.approximate_creation_date_time_precision(),
        Some(&Precision::Microsecond)
    );
}

#[tokio::test]
async fn a_failed_destination_is_enabled_again_in_place_and_others_accumulate() {
    let client = client();
    let table = table_s(&client).await;
    let (first, second) = (stream_arn("first"), stream_arn("second"));
    for arn in [&first, &second, &first] {
        let enable = client.enable_kinesis_streaming_destination();
        let enabled = enable.table_name(&table).stream_arn(arn).send().await;
        let enabled = enabled.expect("enable after ENABLE_FAILED succeeds");
        assert!(enabled.enable_kinesis_streaming_configuration().is_none());
        wait_for(&client, &table, arn, DestinationStatus::EnableFailed).await;
    }
    let listed = destinations(&client, &table).await;
    let arns: Vec<&str> = listed.iter().filter_map(|d| d.stream_arn()).collect();
    assert_eq!(arns.len(), 2, "{listed:?}");
    assert!(arns.contains(&first.as_str()) && arns.contains(&second.as_str()));
    // Never set: no precision shown.
    assert!(listed
        .iter()
        .all(|d| d.approximate_creation_date_time_precision().is_none()));
}

#[tokio::test]
async fn disable_update_of_a_destination_that_is_not_active_are_refused() {
    let client = client();
    let table = table_s(&client).await;
    let arn = stream_arn("never-active");
    let disabled = client
        .disable_kinesis_streaming_destination()
        .table_name(&table)
        .stream_arn(&arn)
        .send()
        .await;
    let message = "KinesisStreamingDestination must be ACTIVE to perform DISABLE operation.";
    assert_validation(disabled, &format!("{NOT_VALID}{message}"));
    let update = |arn: String| {
        client
            .update_kinesis_streaming_destination()
            .table_name(&table)
            .stream_arn(arn)
            .update_kinesis_streaming_configuration(
                UpdateKinesisStreamingConfiguration::builder()
                    .approximate_creation_date_time_precision(Precision::Microsecond)
                    .build(),
            )
            .send()
    };
    let unknown = update(arn.clone()).await;
    let message = format!("{NOT_VALID}No streaming destination with streamArn: {arn}");
    assert_validation(unknown, &message);
    client
        .enable_kinesis_streaming_destination()
        .table_name(&table)
        .stream_arn(&arn)
        .send()
        .await
        .expect("enable succeeds");
    wait_for(&client, &table, &arn, DestinationStatus::EnableFailed).await;
    let failed = update(arn.clone()).await;
    let message = format!(
        "{NOT_VALID}Kinesis streaming is not in ACTIVE state. Updates are only allowed in ACTIVE state. TableName: {table}"
    );
    assert_validation(failed, &message);
}

#[tokio::test]
async fn update_without_a_precision_is_refused_before_anything_else() {
    let client = client();
    let table = table_s(&client).await;
    let update = client
        .update_kinesis_streaming_destination()
        .table_name(&table)
        .stream_arn(stream_arn("absent"))
        .send()
        .await;
    assert_validation(
        update,
        "Streaming destination cannot be updated with given parameters: UpdateKinesisStreamingConfiguration cannot be null or contain only null values",
    );
}

/// Raw JSON: the SDK itself refuses an empty TableName before sending.
#[tokio::test]
async fn field_constraints_come_first_in_the_model_s_wording() {
    let request = serde_json::json!({
        "TableName": "",
        "StreamArn": "arn:short",
        "EnableKinesisStreamingConfiguration": {"ApproximateCreationDateTimePrecision": "SECOND"},
    });
    let response = raw::call_json("EnableKinesisStreamingDestination", request).await;
    assert_eq!(response.error_name(), "ValidationException");
    let message = response.json()["message"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(
        message.starts_with("3 validation errors detected: "),
        "{message}"
    );
    for part in [
        "Value 'arn:short' at 'streamArn' failed to satisfy constraint: Member must have length greater than or equal to 37",
        "Value 'SECOND' at 'enableKinesisStreamingConfiguration.approximateCreationDateTimePrecision' failed to satisfy constraint: Member must satisfy enum value set: [MILLISECOND, MICROSECOND]",
    ] {
        assert!(message.contains(part), "{part} not in {message}");
    }
}

#[tokio::test]
async fn every_operation_on_a_missing_table_is_resource_not_found() {
    let client = client();
    let table = util::unique_name("missing");
    let message = format!("Requested resource not found: Table: {table} not found");
    let described = client
        .describe_kinesis_streaming_destination()
        .table_name(&table)
        .send()
        .await;
    assert_error(described, "ResourceNotFoundException", &message);
    let enabled = client
        .enable_kinesis_streaming_destination()
        .table_name(&table)
        .stream_arn(stream_arn("x"))
        .send()
        .await;
    assert_error(enabled, "ResourceNotFoundException", &message);
}

/// A Kinesis endpoint that accepts connections and never answers: an
/// enable stays ENABLING for the client's time limit, long enough to see
/// the one-live-destination rule.
#[tokio::test]
async fn a_second_enable_while_one_is_live_is_refused() {
    let silent = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let endpoint = format!("http://{}", silent.local_addr().expect("address"));
    let (_server, client) = util::own_server(&["--kinesis-endpoint", &endpoint]);
    let table = table_s(&client).await;
    let enable = |arn: String| {
        client
            .enable_kinesis_streaming_destination()
            .table_name(&table)
            .stream_arn(arn)
            .send()
    };
    enable(stream_arn("slow")).await.expect("enable succeeds");
    let again = enable(stream_arn("other")).await;
    let message = "EnableKinesisStreamingDestination must be DISABLED or ENABLE_FAILED to perform ENABLE operation.";
    assert_validation(again, &format!("{NOT_VALID}{message}"));
    let listed = destinations(&client, &table).await;
    assert_eq!(listed.len(), 1);
    assert_eq!(
        listed[0].destination_status(),
        Some(&DestinationStatus::Enabling)
    );
    // The unanswered check fails the enable once the client gives up.
    let arn = stream_arn("slow");
    wait_for(&client, &table, &arn, DestinationStatus::EnableFailed).await;
    drop(silent);
}

#[tokio::test]
async fn the_destinations_report_shows_status_and_the_reason_for_failure() {
    let client = client();
    let table = table_s(&client).await;
    let arn = stream_arn("report");
    let enable = client.enable_kinesis_streaming_destination();
    let enabled = enable.table_name(&table).stream_arn(&arn).send().await;
    enabled.expect("enable succeeds");
    wait_for(&client, &table, &arn, DestinationStatus::EnableFailed).await;
    let path = format!("/ferrodyn/destinations?table={table}");
    let response = raw::send("GET", &path, &[], Vec::new())
        .await
        .expect("answered");
    assert_eq!(
        response.status,
        200,
        "{}",
        String::from_utf8_lossy(&response.body)
    );
    let report = response.json();
    assert_eq!(report["TableName"], table.as_str());
    let entry = &report["Destinations"][0];
    assert_eq!(entry["StreamArn"], arn.as_str());
    assert_eq!(entry["DestinationStatus"], "ENABLE_FAILED");
    let error = entry["LastError"].as_str().expect("the reason is reported");
    assert!(error.contains("--kinesis-endpoint"), "{error}");
    assert_eq!(entry["DeliveredRecordCount"], 0);
    let missing = raw::send(
        "GET",
        "/ferrodyn/destinations?table=nope-x",
        &[],
        Vec::new(),
    );
    assert_eq!(missing.await.expect("answered").status, 400);
}
