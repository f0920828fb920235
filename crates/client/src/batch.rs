//! Many items at once: [`BatchWriter`] sends puts and deletes as
//! BatchWriteItem calls of up to 25 requests, and [`BatchGetter`] reads keys
//! with BatchGetItem calls of up to 100 keys.
//!
//! DynamoDB may accept a batch yet leave part of it undone (`UnprocessedItems`
//! / `UnprocessedKeys`, under throttling or load). Those are sent again after
//! a capped exponential backoff with full jitter ([`crate::backoff`]), up to
//! the policy's attempt limit; what is still undone then is reported, never
//! dropped silently. Throttling errors and server errors are retried on the
//! same schedule. A batch rejected as invalid (one bad item spoils all 25) is
//! retried one request at a time so only the bad requests are reported.

use crate::backoff::{Backoff, RetryPolicy, Rng};
use crate::{Client, ClientError};
use serde_json::{json, Map, Value};
use std::collections::HashSet;
use std::time::Duration;

/// BatchWriteItem's limit of write requests per call.
pub const MAX_WRITE_BATCH: usize = 25;
/// BatchGetItem's limit of keys per call.
pub const MAX_GET_BATCH: usize = 100;

type Sleeper = Box<dyn FnMut(Duration) + Send>;

/// A write request that was never applied, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct NotWritten {
    /// `{"PutRequest": {"Item": ..}}` or `{"DeleteRequest": {"Key": ..}}`.
    pub request: Value,
    pub reason: String,
}

/// What a [`BatchWriter`] did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WriteReport {
    /// Write requests handed to the writer.
    pub requested: u64,
    /// Write requests DynamoDB applied.
    pub written: u64,
    /// BatchWriteItem calls made, retries included.
    pub calls: u64,
    /// Calls that were retries (of unprocessed items or after a throttling
    /// or server error).
    pub retries: u64,
    /// Requests DynamoDB returned as unprocessed, counted each time.
    pub unprocessed_returned: u64,
    /// The most attempts any one batch needed.
    pub max_attempts_used: u32,
    /// Total time spent waiting between attempts.
    pub backoff_time: Duration,
    /// Requests given up on: unprocessed after the last attempt, or rejected.
    pub not_written: Vec<NotWritten>,
}

impl WriteReport {
    /// Adds another report's counts (parallel writers, resumed imports).
    pub fn merge(&mut self, other: &WriteReport) {
        self.requested += other.requested;
        self.written += other.written;
        self.calls += other.calls;
        self.retries += other.retries;
        self.unprocessed_returned += other.unprocessed_returned;
        self.max_attempts_used = self.max_attempts_used.max(other.max_attempts_used);
        self.backoff_time += other.backoff_time;
        self.not_written.extend(other.not_written.iter().cloned());
    }
}

/// Buffers write requests for one table and sends them 25 at a time.
///
/// `put`/`delete` send a batch whenever 25 requests are buffered; `flush`
/// sends the rest. When `flush` returns `Ok`, every request given so far has
/// been written or recorded in [`WriteReport::not_written`], which is what a
/// checkpoint can rely on. An `Err` (a retryable failure that outlasted every
/// attempt, such as the endpoint being down) leaves the unsent requests
/// buffered.
pub struct BatchWriter<'c> {
    client: &'c Client,
    table: String,
    policy: RetryPolicy,
    rng: Rng,
    sleep: Sleeper,
    pending: Vec<Value>,
    report: WriteReport,
}

impl<'c> BatchWriter<'c> {
    pub fn new(client: &'c Client, table: &str) -> BatchWriter<'c> {
        BatchWriter {
            client,
            table: table.to_string(),
            policy: RetryPolicy::default(),
            rng: Rng::from_entropy(),
            sleep: Box::new(std::thread::sleep),
            pending: Vec::with_capacity(MAX_WRITE_BATCH),
            report: WriteReport::default(),
        }
    }

    pub fn with_policy(mut self, policy: RetryPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Makes the jitter reproducible.
    pub fn with_seed(mut self, seed: u64) -> Self {
        self.rng = Rng::seeded(seed);
        self
    }

    /// Replaces `thread::sleep` between attempts (tests record the waits).
    pub fn with_sleep(mut self, sleep: impl FnMut(Duration) + Send + 'static) -> Self {
        self.sleep = Box::new(sleep);
        self
    }

    /// Queues a put of `item` (DynamoDB JSON, `{"pk": {"S": "a"}, ..}`).
    pub fn put(&mut self, item: Value) -> Result<(), ClientError> {
        self.push(json!({ "PutRequest": { "Item": item } }))
    }

    /// Queues a delete of `key` (DynamoDB JSON).
    pub fn delete(&mut self, key: Value) -> Result<(), ClientError> {
        self.push(json!({ "DeleteRequest": { "Key": key } }))
    }

    /// Queues a ready-made write request (`PutRequest` or `DeleteRequest`).
    pub fn push(&mut self, request: Value) -> Result<(), ClientError> {
        self.pending.push(request);
        self.report.requested += 1;
        if self.pending.len() >= MAX_WRITE_BATCH {
            self.send_full_batches()?;
        }
        Ok(())
    }

    /// Requests buffered but not yet sent.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }

    /// Sends everything buffered.
    pub fn flush(&mut self) -> Result<(), ClientError> {
        self.send_full_batches()?;
        if !self.pending.is_empty() {
            let batch = std::mem::take(&mut self.pending);
            self.send(batch)?;
        }
        Ok(())
    }

    /// The report so far.
    pub fn report(&self) -> &WriteReport {
        &self.report
    }

    /// Flushes and returns the final report.
    pub fn finish(mut self) -> Result<WriteReport, ClientError> {
        self.flush()?;
        Ok(self.report)
    }

    fn send_full_batches(&mut self) -> Result<(), ClientError> {
        while self.pending.len() >= MAX_WRITE_BATCH {
            let batch: Vec<Value> = self.pending.drain(..MAX_WRITE_BATCH).collect();
            if let Err(e) = self.send(batch.clone()) {
                // Put the batch back so nothing is lost from the buffer.
                self.pending.splice(0..0, batch);
                return Err(e);
            }
        }
        Ok(())
    }

    /// Sends one batch until all of it is written or attempts run out.
    fn send(&mut self, batch: Vec<Value>) -> Result<(), ClientError> {
        let mut backoff = Backoff::new(self.policy, self.rng.clone());
        let mut remaining = batch;
        let outcome = loop {
            let attempt = backoff.attempt();
            self.report.calls += 1;
            if attempt > 1 {
                self.report.retries += 1;
            }
            self.report.max_attempts_used = self.report.max_attempts_used.max(attempt);
            let request = json!({ "RequestItems": { &self.table: remaining } });
            match self.client.call("BatchWriteItem", &request) {
                Ok(response) => {
                    let unprocessed =
                        unprocessed_requests(&response, "UnprocessedItems", &self.table);
                    self.report.written += (remaining.len() - unprocessed.len()) as u64;
                    if unprocessed.is_empty() {
                        break Ok(());
                    }
                    self.report.unprocessed_returned += unprocessed.len() as u64;
                    remaining = unprocessed;
                    match backoff.next_delay() {
                        Some(delay) => self.wait(delay),
                        None => {
                            let reason = format!("still unprocessed after {attempt} attempts");
                            self.give_up(remaining, &reason);
                            break Ok(());
                        }
                    }
                }
                Err(e) if e.is_retryable() => match backoff.next_delay() {
                    Some(delay) => self.wait(delay),
                    None => break Err((e, remaining)),
                },
                Err(_) if remaining.len() > 1 => {
                    // One bad request rejects the whole batch: find it by
                    // sending each request alone.
                    for request in remaining {
                        self.send(vec![request])?;
                    }
                    break Ok(());
                }
                Err(e) => {
                    self.give_up(remaining, &e.to_string());
                    break Ok(());
                }
            }
        };
        // Keep the random sequence moving so consecutive batches differ.
        self.rng.next_u64();
        outcome.map_err(|(e, _)| e)
    }

    fn wait(&mut self, delay: Duration) {
        self.report.backoff_time += delay;
        (self.sleep)(delay);
    }

    fn give_up(&mut self, requests: Vec<Value>, reason: &str) {
        self.report
            .not_written
            .extend(requests.into_iter().map(|request| NotWritten {
                request,
                reason: reason.to_string(),
            }));
    }
}

/// The requests for `table` in a response's `UnprocessedItems` (or
/// `UnprocessedKeys`' `Keys`).
fn unprocessed_requests(response: &Value, field: &str, table: &str) -> Vec<Value> {
    let entry = response.get(field).and_then(|u| u.get(table));
    match entry {
        Some(Value::Array(requests)) => requests.clone(),
        Some(Value::Object(map)) => map
            .get("Keys")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// What a [`BatchGetter`] read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GetReport {
    /// The items found, in no particular order (as BatchGetItem returns them).
    pub items: Vec<Value>,
    /// BatchGetItem calls made, retries included.
    pub calls: u64,
    pub retries: u64,
    /// Keys returned as unprocessed, counted each time.
    pub unprocessed_returned: u64,
    pub max_attempts_used: u32,
    pub backoff_time: Duration,
    /// Keys still unprocessed after the last attempt.
    pub not_read: Vec<Value>,
}

/// Reads many keys of one table with BatchGetItem, 100 keys a call, retrying
/// `UnprocessedKeys` with backoff. Duplicate keys are asked for once (a
/// BatchGetItem with duplicates is rejected).
pub struct BatchGetter<'c> {
    client: &'c Client,
    policy: RetryPolicy,
    rng: Rng,
    sleep: Sleeper,
    consistent_read: bool,
    projection: Option<(String, Map<String, Value>)>,
}

impl<'c> BatchGetter<'c> {
    pub fn new(client: &'c Client) -> BatchGetter<'c> {
        BatchGetter {
            client,
            policy: RetryPolicy::default(),
            rng: Rng::from_entropy(),
            sleep: Box::new(std::thread::sleep),
            consistent_read: false,
            projection: None,
        }
    }

    pub fn with_policy(mut self, policy: RetryPolicy) -> Self {
        self.policy = policy;
        self
    }

    pub fn with_seed(mut self, seed: u64) -> Self {
        self.rng = Rng::seeded(seed);
        self
    }

    pub fn with_sleep(mut self, sleep: impl FnMut(Duration) + Send + 'static) -> Self {
        self.sleep = Box::new(sleep);
        self
    }

    pub fn consistent_read(mut self, yes: bool) -> Self {
        self.consistent_read = yes;
        self
    }

    /// A ProjectionExpression and its ExpressionAttributeNames (may be empty).
    pub fn projection(mut self, expression: &str, names: Map<String, Value>) -> Self {
        self.projection = Some((expression.to_string(), names));
        self
    }

    /// Reads `keys` (DynamoDB JSON) from `table`.
    pub fn get(&mut self, table: &str, keys: Vec<Value>) -> Result<GetReport, ClientError> {
        let mut seen = HashSet::new();
        let keys: Vec<Value> = keys
            .into_iter()
            .filter(|k| seen.insert(canonical(k)))
            .collect();
        let mut report = GetReport::default();
        for chunk in keys.chunks(MAX_GET_BATCH) {
            self.get_chunk(table, chunk.to_vec(), &mut report)?;
        }
        Ok(report)
    }

    fn get_chunk(
        &mut self,
        table: &str,
        keys: Vec<Value>,
        report: &mut GetReport,
    ) -> Result<(), ClientError> {
        let mut backoff = Backoff::new(self.policy, self.rng.clone());
        self.rng.next_u64();
        let mut remaining = keys;
        loop {
            let attempt = backoff.attempt();
            report.calls += 1;
            if attempt > 1 {
                report.retries += 1;
            }
            report.max_attempts_used = report.max_attempts_used.max(attempt);
            let mut entry = json!({ "Keys": remaining, "ConsistentRead": self.consistent_read });
            if let Some((expression, names)) = &self.projection {
                entry["ProjectionExpression"] = json!(expression);
                if !names.is_empty() {
                    entry["ExpressionAttributeNames"] = Value::Object(names.clone());
                }
            }
            let request = json!({ "RequestItems": { table: entry } });
            let delay = match self.client.call("BatchGetItem", &request) {
                Ok(response) => {
                    if let Some(items) = response
                        .get("Responses")
                        .and_then(|r| r.get(table))
                        .and_then(Value::as_array)
                    {
                        report.items.extend(items.iter().cloned());
                    }
                    let unprocessed = unprocessed_requests(&response, "UnprocessedKeys", table);
                    if unprocessed.is_empty() {
                        return Ok(());
                    }
                    report.unprocessed_returned += unprocessed.len() as u64;
                    remaining = unprocessed;
                    match backoff.next_delay() {
                        Some(delay) => delay,
                        None => {
                            report.not_read.extend(remaining);
                            return Ok(());
                        }
                    }
                }
                Err(e) if e.is_retryable() => match backoff.next_delay() {
                    Some(delay) => delay,
                    None => return Err(e),
                },
                Err(e) => return Err(e),
            };
            report.backoff_time += delay;
            (self.sleep)(delay);
        }
    }
}

/// A key's identity for de-duplication: its JSON with object keys sorted
/// (serde_json's default map is ordered, so plain serialisation is stable).
fn canonical(value: &Value) -> String {
    value.to_string()
}
