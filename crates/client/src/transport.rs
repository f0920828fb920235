//! The HTTP exchange of one DynamoDB call: JSON 1.0 body, `X-Amz-Target`,
//! SigV4 headers, and the service's error body decoded into
//! [`ClientError::Api`]. Uses `ureq`, a small blocking HTTP client; HTTPS
//! needs the crate's `tls` feature.

use crate::config::{host_of, ResolvedConfig};
use crate::sigv4;
use crate::ClientError;
use std::time::{Duration, SystemTime};

/// DynamoDB's API version prefix of `X-Amz-Target`.
const TARGET_PREFIX: &str = "DynamoDB_20120810";

/// DynamoDB responses are at most 16 MB (a full BatchGetItem); allow more so
/// a large answer is never cut.
const MAX_RESPONSE_BYTES: u64 = 64 * 1024 * 1024;

/// A request that has had no answer in this long is reported as failed,
/// rather than hanging a command forever.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);

#[derive(Clone)]
pub struct Transport {
    agent: ureq::Agent,
    url: String,
    host: String,
}

impl Transport {
    pub fn new(endpoint: &str) -> Result<Transport, ClientError> {
        if endpoint.starts_with("https://") && !cfg!(feature = "tls") {
            return Err(ClientError::Config(format!(
                "{endpoint} needs HTTPS, but this build has no TLS (the `tls` feature of ferrodyn-client)"
            )));
        }
        let agent: ureq::Agent = ureq::Agent::config_builder()
            // Error statuses carry DynamoDB's error body: read them, don't fail.
            .http_status_as_error(false)
            .timeout_global(Some(REQUEST_TIMEOUT))
            .build()
            .into();
        Ok(Transport {
            agent,
            url: format!("{endpoint}/"),
            host: host_of(endpoint).to_string(),
        })
    }

    pub fn call(
        &self,
        config: &ResolvedConfig,
        operation: &str,
        request: &serde_json::Value,
    ) -> Result<serde_json::Value, ClientError> {
        self.call_target(config, &format!("{TARGET_PREFIX}.{operation}"), request)
    }

    /// A call named by its whole `X-Amz-Target` (DynamoDB Streams'
    /// operations are `DynamoDBStreams_20120810.<Op>`).
    pub fn call_target(
        &self,
        config: &ResolvedConfig,
        target: &str,
        request: &serde_json::Value,
    ) -> Result<serde_json::Value, ClientError> {
        let body = serde_json::to_vec(request).expect("plain data always serialises");
        let content_type = "application/x-amz-json-1.0";
        let signed = sigv4::sign(
            &sigv4::Request {
                method: "POST",
                path: "/",
                query: &[],
                headers: &[
                    ("content-type", content_type),
                    ("host", &self.host),
                    ("x-amz-target", target),
                ],
                body: &body,
            },
            &config.credentials,
            &config.region,
            "dynamodb",
            SystemTime::now(),
        );
        let mut builder = self
            .agent
            .post(&self.url)
            .header("content-type", content_type)
            .header("x-amz-target", target);
        for (name, value) in &signed {
            builder = builder.header(name, value);
        }
        let mut response = builder
            .send(&body[..])
            .map_err(|e| ClientError::Transport(e.to_string()))?;
        let status = response.status().as_u16();
        let error_type = response
            .headers()
            .get("x-amzn-errortype")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let text = read_text(&mut response)?;
        let json: Option<serde_json::Value> = if text.trim().is_empty() {
            Some(serde_json::json!({}))
        } else {
            serde_json::from_str(&text).ok()
        };
        if status == 200 {
            return json.ok_or_else(|| {
                ClientError::Transport(format!("the response is not JSON: {}", preview(&text)))
            });
        }
        Err(api_error(status, error_type, json, &text))
    }
}

impl Transport {
    /// A signed request to one of Ferrodyn's test-harness endpoints
    /// (`/ferrodyn/clock`, `/ferrodyn/snapshots/...`, `/ferrodyn/data`):
    /// signed as a DynamoDB call, since the access key names the namespace.
    pub fn harness(
        &self,
        config: &ResolvedConfig,
        method: &str,
        path: &str,
        request: Option<&serde_json::Value>,
    ) -> Result<serde_json::Value, ClientError> {
        let body = request.map_or_else(Vec::new, |r| {
            serde_json::to_vec(r).expect("plain data always serialises")
        });
        let content_type = "application/json";
        let headers = [("content-type", content_type), ("host", self.host.as_str())];
        // A query (`?table=T`) is signed as parameters, not as part of the
        // path; its values are plain names, sent as they are.
        let (bare_path, query_text) = path.split_once('?').unwrap_or((path, ""));
        let query: Vec<(&str, &str)> = (query_text.split('&'))
            .filter(|pair| !pair.is_empty())
            .map(|pair| pair.split_once('=').unwrap_or((pair, "")))
            .collect();
        let signed = sigv4::sign(
            &sigv4::Request {
                method,
                path: bare_path,
                query: &query,
                headers: &headers,
                body: &body,
            },
            &config.credentials,
            &config.region,
            "dynamodb",
            SystemTime::now(),
        );
        let url = format!("{}{}", self.url.trim_end_matches('/'), path);
        let mut builder = ureq::http::Request::builder()
            .method(method)
            .uri(&url)
            .header("content-type", content_type);
        for (name, value) in &signed {
            builder = builder.header(name, value);
        }
        let request = builder
            .body(body)
            .map_err(|e| ClientError::Transport(format!("{url}: {e}")))?;
        let mut response = self
            .agent
            .run(request)
            .map_err(|e| ClientError::Transport(format!("{url}: {e}")))?;
        let status = response.status().as_u16();
        let text = read_text(&mut response)?;
        let json: Option<serde_json::Value> = serde_json::from_str(&text).ok();
        match (status, json) {
            (200, Some(json)) => Ok(json),
            (_, json) => Err(api_error(status, None, json, &text)),
        }
    }

    /// A plain GET of a JSON document under the endpoint (Ferrodyn's own
    /// reports, such as `/ferrodyn/usage`; not part of the DynamoDB API).
    pub fn get_json(&self, path: &str) -> Result<serde_json::Value, ClientError> {
        let url = format!("{}{}", self.url.trim_end_matches('/'), path);
        let mut response = self
            .agent
            .get(&url)
            .call()
            .map_err(|e| ClientError::Transport(format!("{url}: {e}")))?;
        let status = response.status().as_u16();
        let text = read_text(&mut response)?;
        if status != 200 {
            return Err(ClientError::Transport(format!(
                "{url} answered HTTP {status}: {}",
                preview(&text)
            )));
        }
        serde_json::from_str(&text).map_err(|_| {
            ClientError::Transport(format!("the response is not JSON: {}", preview(&text)))
        })
    }
}

/// Builds [`ClientError::Api`] from an error response. The code is the part
/// of `__type` after `#` (`com.amazonaws.dynamodb.v20120810#ResourceNotFoundException`).
fn api_error(
    status: u16,
    error_type: Option<String>,
    json: Option<serde_json::Value>,
    text: &str,
) -> ClientError {
    let body = json.unwrap_or_else(|| serde_json::json!({ "raw": text }));
    let raw_type = body
        .get("__type")
        .and_then(|t| t.as_str())
        .map(str::to_string)
        .or(error_type)
        .unwrap_or_else(|| format!("Http{status}"));
    let code = raw_type
        .rsplit('#')
        .next()
        .unwrap_or(&raw_type)
        .split(':')
        .next()
        .unwrap_or_default()
        .to_string();
    let message = body
        .get("message")
        .or_else(|| body.get("Message"))
        .and_then(|m| m.as_str())
        .map(str::to_string)
        .unwrap_or_else(|| {
            if body.get("raw").is_some() {
                preview(text)
            } else {
                String::new()
            }
        });
    ClientError::Api {
        code,
        message,
        status,
        body,
    }
}

/// A response's body as text, at most [`MAX_RESPONSE_BYTES`].
fn read_text(response: &mut ureq::http::Response<ureq::Body>) -> Result<String, ClientError> {
    response
        .body_mut()
        .with_config()
        .limit(MAX_RESPONSE_BYTES)
        .read_to_string()
        .map_err(|e| ClientError::Transport(format!("reading the response: {e}")))
}

fn preview(text: &str) -> String {
    text.chars().take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_code_is_the_short_name_of_the_type() {
        let body = serde_json::json!({
            "__type": "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException",
            "message": "The conditional request failed",
            "Item": {"pk": {"S": "a"}}
        });
        match api_error(400, None, Some(body.clone()), "") {
            ClientError::Api {
                code,
                message,
                status,
                body: b,
            } => {
                assert_eq!(code, "ConditionalCheckFailedException");
                assert_eq!(message, "The conditional request failed");
                assert_eq!(status, 400);
                assert_eq!(b, body);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn non_json_errors_keep_the_text() {
        let err = api_error(502, None, None, "Bad Gateway");
        assert_eq!(err.code(), Some("Http502"));
        assert!(err.to_string().contains("Bad Gateway"));
        assert!(err.is_retryable());
    }
}
