//! PartiQL statements through ExecuteStatement. A SELECT that stops early
//! answers a `NextToken`; [`StatementPages`] follows those tokens lazily, the
//! way [`crate::paginate`] follows LastEvaluatedKey for Query and Scan.

use crate::{Client, ClientError};
use serde_json::{json, Value};

/// One ExecuteStatement request.
#[derive(Debug, Clone, Default)]
pub struct Statement {
    pub statement: String,
    /// Values for the statement's `?`s, in order, as DynamoDB JSON.
    pub parameters: Vec<Value>,
    pub consistent_read: bool,
    /// At most this many items evaluated per page (DynamoDB's `Limit`).
    pub limit: Option<u64>,
    pub next_token: Option<String>,
}

impl Statement {
    /// The ExecuteStatement request body.
    pub fn to_request(&self) -> Value {
        let mut request = json!({ "Statement": self.statement });
        if !self.parameters.is_empty() {
            request["Parameters"] = Value::Array(self.parameters.clone());
        }
        if self.consistent_read {
            request["ConsistentRead"] = json!(true);
        }
        if let Some(limit) = self.limit {
            request["Limit"] = json!(limit);
        }
        if let Some(token) = &self.next_token {
            request["NextToken"] = json!(token);
        }
        request
    }
}

/// Runs one statement and returns the response JSON (`Items`, maybe
/// `NextToken`, `ConsumedCapacity`).
pub fn execute_statement(client: &Client, statement: &Statement) -> Result<Value, ClientError> {
    client.call("ExecuteStatement", &statement.to_request())
}

/// The response pages of one statement, following NextToken.
pub struct StatementPages<'c> {
    client: &'c Client,
    statement: Statement,
    finished: bool,
}

/// Pages of `statement`, starting at its `next_token` if it has one.
pub fn pages(client: &Client, statement: Statement) -> StatementPages<'_> {
    StatementPages {
        client,
        statement,
        finished: false,
    }
}

impl StatementPages<'_> {
    /// The token the next page would start from (`None` after the last).
    pub fn next_token(&self) -> Option<&str> {
        self.statement.next_token.as_deref()
    }
}

impl Iterator for StatementPages<'_> {
    type Item = Result<Value, ClientError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.finished {
            return None;
        }
        match execute_statement(self.client, &self.statement) {
            Ok(page) => {
                self.statement.next_token = page
                    .get("NextToken")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                self.finished = self.statement.next_token.is_none();
                Some(Ok(page))
            }
            Err(e) => {
                self.finished = true;
                Some(Err(e))
            }
        }
    }
}
