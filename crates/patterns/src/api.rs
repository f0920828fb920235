//! The one thing this crate needs from a DynamoDB client: send an operation's
//! JSON request and get its JSON response or its error.
//!
//! Keeping it a one-method trait lets every pattern run against Ferrodyn, AWS
//! DynamoDB (through `ferrodyn-client`, which signs requests) or a test double,
//! and keeps this crate free of HTTP and credential code.

use serde_json::Value;

/// A DynamoDB endpoint that takes low-level JSON requests.
pub trait DynamoApi {
    /// Sends `operation` (e.g. `"TransactWriteItems"`) with `request` as its
    /// body and returns the response body.
    fn call(&self, operation: &str, request: &Value) -> Result<Value, ApiError>;
}

impl<T: DynamoApi + ?Sized> DynamoApi for &T {
    fn call(&self, operation: &str, request: &Value) -> Result<Value, ApiError> {
        (**self).call(operation, request)
    }
}

impl DynamoApi for ferrodyn_client::Client {
    fn call(&self, operation: &str, request: &Value) -> Result<Value, ApiError> {
        ferrodyn_client::Client::call(self, operation, request).map_err(|e| match e {
            ferrodyn_client::ClientError::Api {
                code,
                message,
                body,
                ..
            } => ApiError::Api {
                code,
                message,
                body,
            },
            other => ApiError::Transport(other.to_string()),
        })
    }
}

/// Why a call failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ApiError {
    /// The service answered with an error. `code` is the short name
    /// (`TransactionCanceledException`, without the `com.amazonaws...#`
    /// namespace); `body` is the whole error body, which for a cancelled
    /// transaction holds `CancellationReasons`.
    #[error("{code}: {message}")]
    Api {
        code: String,
        message: String,
        body: Value,
    },
    /// The request never got an answer (connection, timeout, bad response).
    #[error("{0}")]
    Transport(String),
}

impl ApiError {
    /// Builds an [`ApiError::Api`] from a DynamoDB error body, stripping the
    /// namespace from `__type` and accepting either spelling of the message.
    pub fn from_body(body: Value) -> ApiError {
        let code = body["__type"]
            .as_str()
            .map(|t| t.rsplit('#').next().unwrap_or(t).to_string())
            .unwrap_or_else(|| "UnknownError".into());
        let message = body["message"]
            .as_str()
            .or_else(|| body["Message"].as_str())
            .unwrap_or("")
            .to_string();
        ApiError::Api {
            code,
            message,
            body,
        }
    }

    /// The short error code, if the service answered.
    pub fn code(&self) -> Option<&str> {
        match self {
            ApiError::Api { code, .. } => Some(code),
            ApiError::Transport(_) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn error_code_loses_its_namespace() {
        let e = ApiError::from_body(json!({
            "__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
            "Message": "Transaction cancelled"
        }));
        assert_eq!(e.code(), Some("TransactionCanceledException"));
        assert_eq!(
            e.to_string(),
            "TransactionCanceledException: Transaction cancelled"
        );
    }
}
