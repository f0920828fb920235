//! The one error type of the client: what DynamoDB answered, what went wrong
//! on the way there, or what was wrong with the configuration.

use std::fmt;

/// Why a call (or connecting) failed.
#[derive(Debug, Clone)]
pub enum ClientError {
    /// The service answered with an error. `code` is the short name
    /// (`ConditionalCheckFailedException`), `body` the full JSON error body, so
    /// callers can read `CancellationReasons`, `Item` and similar fields.
    Api {
        code: String,
        message: String,
        status: u16,
        body: serde_json::Value,
    },
    /// No answer: connection refused, timeout, unreadable response.
    Transport(String),
    /// The connection could not be set up (bad endpoint, no credentials...).
    Config(String),
}

impl ClientError {
    /// The API error code (`ResourceNotFoundException`...), if this is one.
    pub fn code(&self) -> Option<&str> {
        match self {
            ClientError::Api { code, .. } => Some(code),
            _ => None,
        }
    }

    /// Whether retrying the same request later may succeed: throttling,
    /// server errors and transport failures. Validation and condition
    /// failures are not retryable.
    pub fn is_retryable(&self) -> bool {
        match self {
            ClientError::Api { code, status, .. } => {
                *status >= 500
                    || matches!(
                        code.as_str(),
                        "ProvisionedThroughputExceededException"
                            | "ThrottlingException"
                            | "RequestLimitExceeded"
                            | "LimitExceededException"
                            | "InternalServerError"
                            | "ServiceUnavailable"
                    )
            }
            ClientError::Transport(_) => true,
            ClientError::Config(_) => false,
        }
    }
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Api { code, message, .. } if message.is_empty() => write!(f, "{code}"),
            ClientError::Api { code, message, .. } => write!(f, "{code}: {message}"),
            ClientError::Transport(message) => write!(f, "cannot reach the endpoint: {message}"),
            ClientError::Config(message) => write!(f, "configuration error: {message}"),
        }
    }
}

impl std::error::Error for ClientError {}
