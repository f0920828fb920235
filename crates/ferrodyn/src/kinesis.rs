//! The Kinesis Data Streams endpoint Kinesis streaming destinations deliver
//! to (`ferrodyn serve --kinesis-endpoint URL`): AWS's
//! https://kinesis.<region>.amazonaws.com or any compatible server (moto's,
//! LocalStack's). The engine sees it only as `KinesisStreams`; this module
//! owns the HTTP calls (JSON 1.1, `X-Amz-Target: Kinesis_20131202.<Op>`,
//! SigV4 with service `kinesis` in the stream ARN's region, through our own
//! crates/sigv4) and their time limits, over ureq, the blocking client the
//! binary already carries for its client commands.
//!
//! Credentials come from the usual AWS environment variables, as for S3
//! (s3.rs): without them a placeholder key is used, which local servers
//! accept and AWS refuses with its own error.

use base64::Engine as _;
use ferrodyn_client::sigv4;
use ferrodyn_engine::kinesis::{KinesisStreams, OutgoingRecord, PutOutcome};
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// How long one call may take (a stream that does not answer is an error
/// the delivery retries, never a hang).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// The client `--kinesis-endpoint` asks for, as the engine takes it.
pub fn client(endpoint: &Option<String>, region: &str) -> Option<Arc<dyn KinesisStreams>> {
    let endpoint = endpoint.as_deref()?;
    Some(Arc::new(KinesisClient::new(endpoint, region)))
}

/// One Kinesis endpoint.
pub struct KinesisClient {
    agent: ureq::Agent,
    url: String,
    host: String,
    region: String,
    credentials: sigv4::Credentials,
}

impl KinesisClient {
    pub fn new(endpoint: &str, region: &str) -> KinesisClient {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            // Error statuses carry Kinesis's error body: read them.
            .http_status_as_error(false)
            .timeout_global(Some(REQUEST_TIMEOUT))
            .build()
            .into();
        let endpoint = endpoint.trim_end_matches('/');
        let host = (endpoint
            .split_once("://")
            .map_or(endpoint, |(_, rest)| rest))
        .split('/')
        .next()
        .unwrap_or_default()
        .to_string();
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        KinesisClient {
            agent,
            url: format!("{endpoint}/"),
            host,
            region: region.to_string(),
            credentials: sigv4::Credentials {
                access_key_id: env("AWS_ACCESS_KEY_ID").unwrap_or_else(|| "ferrodyn".into()),
                secret_access_key: env("AWS_SECRET_ACCESS_KEY")
                    .unwrap_or_else(|| "ferrodyn".into()),
                session_token: env("AWS_SESSION_TOKEN"),
            },
        }
    }

    /// One call: the answer's JSON, or the error as "Code: message".
    fn call(&self, operation: &str, region: &str, request: &Value) -> Result<Value, String> {
        let body = serde_json::to_vec(request).expect("plain data always serialises");
        let target = format!("Kinesis_20131202.{operation}");
        let content_type = "application/x-amz-json-1.1";
        let headers = [
            ("content-type", content_type),
            ("host", self.host.as_str()),
            ("x-amz-target", target.as_str()),
        ];
        let signed = sigv4::sign(
            &sigv4::Request {
                method: "POST",
                path: "/",
                query: &[],
                headers: &headers,
                body: &body,
            },
            &self.credentials,
            region,
            "kinesis",
            SystemTime::now(),
        );
        let mut builder = (self.agent.post(&self.url))
            .header("content-type", content_type)
            .header("x-amz-target", &target);
        for (name, value) in &signed {
            builder = builder.header(name, value);
        }
        let mut response = (builder.send(&body[..]))
            .map_err(|e| format!("cannot reach Kinesis at {}: {e}", self.url))?;
        let status = response.status().as_u16();
        let text = (response.body_mut().read_to_string())
            .map_err(|e| format!("reading Kinesis's answer: {e}"))?;
        let json: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
        if status == 200 {
            return Ok(json);
        }
        let code = json["__type"].as_str().unwrap_or("HTTP error");
        let code = code.rsplit('#').next().unwrap_or(code);
        let message = (json["message"].as_str())
            .or(json["Message"].as_str())
            .unwrap_or(&text);
        Err(format!("{code} (HTTP {status}): {message}"))
    }

    /// The region a stream ARN names (`arn:aws:kinesis:REGION:...`), which
    /// the request is signed for; the server's region otherwise.
    fn region_of<'a>(&'a self, stream_arn: &'a str) -> &'a str {
        match stream_arn.split(':').nth(3) {
            Some(region) if !region.is_empty() => region,
            _ => &self.region,
        }
    }
}

impl KinesisStreams for KinesisClient {
    fn check_stream(&self, stream_arn: &str) -> Result<(), String> {
        let request = json!({ "StreamARN": stream_arn });
        let answer = self.call(
            "DescribeStreamSummary",
            self.region_of(stream_arn),
            &request,
        )?;
        let status = answer["StreamDescriptionSummary"]["StreamStatus"].as_str();
        match status {
            Some("ACTIVE" | "UPDATING") => Ok(()),
            other => Err(format!("the stream is {}", other.unwrap_or("unknown"))),
        }
    }

    fn put_records(
        &self,
        stream_arn: &str,
        records: &[OutgoingRecord],
    ) -> Result<Vec<PutOutcome>, String> {
        let base64 = base64::engine::general_purpose::STANDARD;
        let entries: Vec<Value> = (records.iter())
            .map(|r| json!({ "Data": base64.encode(&r.data), "PartitionKey": r.partition_key }))
            .collect();
        let request = json!({ "StreamARN": stream_arn, "Records": entries });
        let answer = self.call("PutRecords", self.region_of(stream_arn), &request)?;
        let answered = answer["Records"].as_array().cloned().unwrap_or_default();
        Ok(answered.iter().map(outcome).collect())
    }
}

/// One entry of PutRecords' answer.
fn outcome(entry: &Value) -> PutOutcome {
    let Some(code) = entry["ErrorCode"].as_str() else {
        return PutOutcome::Stored;
    };
    let message = format!("{code}: {}", entry["ErrorMessage"].as_str().unwrap_or(""));
    match code {
        "ProvisionedThroughputExceededException" => PutOutcome::Throttled(message),
        _ => PutOutcome::Failed(message),
    }
}
