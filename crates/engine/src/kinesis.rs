//! Kinesis streaming destinations (Enable/Disable/Update/Describe
//! KinesisStreamingDestination): a table's changes delivered to a Kinesis
//! data stream as DynamoDB delivers them, through the network client the
//! binary provides ([`KinesisStreams`], `ferrodyn/src/kinesis.rs`), so the
//! engine holds none.
//!
//! - **State** lives in the table's catalog record (a list of
//!   [`KinesisDestination`]s, at most one live) and moves as on AWS
//!   (docs/design/partitions-and-streams.md §4): ENABLING → ACTIVE once
//!   DescribeStreamSummary finds the stream, ENABLE_FAILED when it does not
//!   (or the server has no `--kinesis-endpoint`); DISABLING → DISABLED;
//!   UPDATING → ACTIVE. A stream that goes down leaves the destination
//!   ACTIVE, as AWS does; [`Engine::destination_report`] tells why nothing
//!   arrives.
//! - **The log.** While a destination delivers, every write of the table
//!   logs its whole change (both images, commit time in ms and µs) as
//!   point-in-time recovery's logging does (streams.rs). Enabling creates a
//!   durable cursor (`'k' | table id | kinesis/<n>`) at the next sequence
//!   number, in the catalog commit that turns the logging on.
//! - **Delivery** is one background thread: it reads the log from the
//!   cursor up to the readable sequence, sends PutRecords batches (≤ 500
//!   records, ≤ 5 MiB, at most one record per item per call because
//!   PutRecords does not order), and moves the cursor to just before the
//!   first record that failed: at least once, never reordered per item. A
//!   redelivered record carries the same eventID (derived from table id and
//!   sequence number). Failures back off exponentially. On shared storage
//!   only the lease holder delivers.
//! - **Retention.** Point-in-time recovery's trim keeps what a delivering
//!   destination's cursor has not passed ([`Engine::kinesis_floor`]); a
//!   table with neither recovery nor a stream drops records once delivered.

use crate::keyspace;
use crate::shared::{DestinationStatus, KinesisDestination};
use crate::table::Table;
use crate::Engine;
use ferrodyn_storage::WriteOp;
use ferrodyn_types::{DynamoError, Item, Result};
use md5::{Digest, Md5};
use parking_lot::{Mutex, RwLock};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::ops::Bound;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One record of a PutRecords call.
pub struct OutgoingRecord {
    pub partition_key: String,
    pub data: Vec<u8>,
}

/// What Kinesis answered for one record.
#[derive(Clone, Debug, PartialEq)]
pub enum PutOutcome {
    Stored,
    /// ProvisionedThroughputExceededException: retried.
    Throttled(String),
    /// Any other per-record error (InternalFailure...): retried.
    Failed(String),
}

/// Why an enable fails, as AWS words it (also for a server without an endpoint).
const ENABLE_FAILED: &str = "User does not have a permission to use kinesis stream";
/// The prefix of every state error, as AWS words it.
const NOT_VALID: &str = "Table is not in a valid state to enable Kinesis Streaming Destination: ";
/// Records per PutRecords call (Kinesis's limit).
const MAX_RECORDS: usize = 500;
/// Bytes per PutRecords call (moto's and older Kinesis's limit).
const MAX_CALL_BYTES: usize = 5 * 1024 * 1024;
/// Bytes per record: larger ones are skipped and counted, as DynamoDB does.
const MAX_RECORD_BYTES: usize = 1024 * 1024;
/// How often the worker looks for work.
const TICK: Duration = Duration::from_millis(100);
/// First and longest pause after a failed delivery.
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(2);
/// Batches one destination may send per tick before others get a turn.
const BATCHES_PER_TICK: usize = 20;

/// The engine's Kinesis side: the client, the worker, and what delivery
/// knows that is not stored (errors and back-off, lost on restart).
#[derive(Default)]
pub(crate) struct KinesisState {
    streams: RwLock<Option<Arc<dyn KinesisStreams>>>,
    worker_started: AtomicBool,
    deliveries: Mutex<HashMap<(u64, String), Delivery>>,
}

/// A destination's delivery state in memory.
#[derive(Default)]
struct Delivery {
    last_error: Option<String>,
    last_error_at: Option<f64>,
    retry_at: Option<Instant>,
    backoff: Option<Duration>,
}

/// A consumer's durable cursor and counters (`'k'` keys).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Cursor {
    /// The first sequence number not yet delivered.
    next_seq: u64,
    delivered: u64,
    throttled: u64,
    failed: u64,
}

/// The answer of Enable, Disable and Update: the table and the entry.
pub struct DestinationChange {
    pub table_name: String,
    pub destination: KinesisDestination,
}

impl Engine {
    /// Sets the Kinesis client (`--kinesis-endpoint`; None: the server has
    /// none, and destinations left ENABLING by a stop fail) and starts
    /// delivering to destinations a stop left live.
    pub fn set_kinesis(self: &Arc<Self>, streams: Option<Arc<dyn KinesisStreams>>) {
        *self.kinesis.streams.write() = streams;
        self.start_kinesis_worker_if_needed();
    }

    /// The table a Kinesis operation names (ResourceNotFound as usual).
    fn kinesis_table(&self, name: &str) -> Result<Arc<Table>> {
        let table = self.table(name)?;
        if table.is_creating() {
            return Err(DynamoError::resource_not_found(format!(
                "Requested resource not found: Table: {name} not found"
            )));
        }
        Ok(table)
    }

    /// DescribeKinesisStreamingDestination: the table's name and entries.
    pub fn describe_kinesis_destinations(
        &self,
        table_name: &str,
    ) -> Result<(String, Vec<KinesisDestination>)> {
        let table = self.kinesis_table(table_name)?;
        Ok((table.name.clone(), table.kinesis_destinations()))
    }

    /// EnableKinesisStreamingDestination: a new ENABLING entry (or a
    /// DISABLED / ENABLE_FAILED one of the same stream again) and its cursor.
    pub fn enable_kinesis_destination(
        self: &Arc<Self>,
        table_name: &str,
        stream_arn: &str,
        precision: Option<&str>,
    ) -> Result<DestinationChange> {
        let _catalog = self.catalog_lock.lock();
        let table = self.kinesis_table(table_name)?;
        let mut list = table.kinesis_destinations();
        if list.iter().any(|d| d.status.live()) {
            return Err(DynamoError::validation(format!(
                "{NOT_VALID}EnableKinesisStreamingDestination must be DISABLED or ENABLE_FAILED to perform ENABLE operation."
            )));
        }
        // A consumer name no entry of the table has had (its delivery
        // state and cursor are its own).
        let number = (list.iter())
            .filter_map(|d| d.consumer.strip_prefix("kinesis/")?.parse::<u64>().ok())
            .max()
            .unwrap_or(0)
            + 1;
        list.retain(|d| d.stream_arn != stream_arn);
        let destination = KinesisDestination {
            stream_arn: stream_arn.to_string(),
            status: DestinationStatus::Enabling,
            description: None,
            precision: precision.map(str::to_string),
            consumer: format!("kinesis/{number}"),
            since: self.now_seconds(),
        };
        list.push(destination.clone());
        {
            // No write of the table is in flight: every later one is logged
            // whole, and has a sequence number at or past the cursor.
            let _writes = table.exclusive();
            let cursor = Cursor {
                next_seq: self.next_sequence(),
                ..Cursor::default()
            };
            let key = keyspace::cursor_key(table.id, &destination.consumer);
            let put = WriteOp::Put(
                key,
                serde_json::to_vec(&cursor).map_err(crate::storage_error)?,
            );
            self.commit_destinations(&table, list, vec![put])?;
        }
        self.start_kinesis_worker_if_needed();
        Ok(DestinationChange {
            table_name: table.name.clone(),
            destination,
        })
    }

    /// DisableKinesisStreamingDestination: the ACTIVE entry becomes DISABLING.
    pub fn disable_kinesis_destination(
        self: &Arc<Self>,
        table_name: &str,
        stream_arn: &str,
    ) -> Result<DestinationChange> {
        let _catalog = self.catalog_lock.lock();
        let table = self.kinesis_table(table_name)?;
        let mut list = table.kinesis_destinations();
        let Some(entry) = (list.iter_mut())
            .find(|d| d.stream_arn == stream_arn && d.status == DestinationStatus::Active)
        else {
            return Err(DynamoError::validation(format!(
                "{NOT_VALID}KinesisStreamingDestination must be ACTIVE to perform DISABLE operation."
            )));
        };
        entry.status = DestinationStatus::Disabling;
        entry.since = self.now_seconds();
        let destination = entry.clone();
        self.commit_destinations(&table, list, Vec::new())?;
        self.start_kinesis_worker_if_needed();
        Ok(DestinationChange {
            table_name: table.name.clone(),
            destination,
        })
    }

    /// UpdateKinesisStreamingDestination: a new precision; UPDATING until
    /// the worker's next round (AWS takes about two minutes).
    pub fn update_kinesis_destination(
        self: &Arc<Self>,
        table_name: &str,
        stream_arn: &str,
        precision: &str,
    ) -> Result<DestinationChange> {
        let _catalog = self.catalog_lock.lock();
        let table = self.kinesis_table(table_name)?;
        let mut list = table.kinesis_destinations();
        let Some(entry) = list.iter_mut().rev().find(|d| d.stream_arn == stream_arn) else {
            return Err(DynamoError::validation(format!(
                "{NOT_VALID}No streaming destination with streamArn: {stream_arn}"
            )));
        };
        if entry.status != DestinationStatus::Active {
            return Err(DynamoError::validation(format!(
                "{NOT_VALID}Kinesis streaming is not in ACTIVE state. Updates are only allowed in ACTIVE state. TableName: {}",
                table.name
            )));
        }
        if entry.precision.as_deref().unwrap_or("MILLISECOND") == precision {
            return Err(DynamoError::validation(format!(
                "Invalid Request: Precision is already set to the desired value of {precision} for tableId: {}, kdsArn: {stream_arn}",
                table.describe().table_id
            )));
        }
        entry.precision = Some(precision.to_string());
        entry.status = DestinationStatus::Updating;
        entry.since = self.now_seconds();
        let destination = entry.clone();
        self.commit_destinations(&table, list, Vec::new())?;
        self.start_kinesis_worker_if_needed();
        Ok(DestinationChange {
            table_name: table.name.clone(),
            destination,
        })
    }

    /// Commits `list` as the table's destinations, with `ops` (cursors), in
    /// one catalog write; the table keeps its old list if that fails. The
    /// caller holds the catalog lock.
    fn commit_destinations(
        &self,
        table: &Table,
        list: Vec<KinesisDestination>,
        mut ops: Vec<WriteOp>,
    ) -> Result<()> {
        let previous = table.kinesis_destinations();
        table.set_kinesis_destinations(list);
        let record = crate::catalog::CatalogRecord::of(table);
        let bytes = serde_json::to_vec(&record).map_err(crate::storage_error)?;
        ops.push(WriteOp::Put(
            keyspace::catalog_key(&table.catalog_name),
            bytes.clone(),
        ));
        let _reload = self.reload_guard();
        if let Err(error) = self.commit_catalog(vec![self.catalog_check(table)], ops) {
            table.set_kinesis_destinations(previous);
            return Err(error.into());
        }
        *table.catalog_bytes.write() = bytes;
        Ok(())
    }

    /// The lowest sequence number a delivering destination of `table` still
    /// needs (u64::MAX: none): the change log is kept from there on.
    pub(crate) fn kinesis_floor(&self, table: &Table) -> Result<u64> {
        let mut floor = u64::MAX;
        for destination in table.kinesis_destinations() {
            if destination.status.live() {
                let cursor = self.read_cursor(table.id, &destination.consumer)?;
                floor = floor.min(cursor.map_or(0, |c| c.next_seq));
            }
        }
        Ok(floor)
    }

    fn read_cursor(&self, table_id: u64, consumer: &str) -> Result<Option<Cursor>> {
        let key = keyspace::cursor_key(table_id, consumer);
        let stored = self.storage.get(&key).map_err(crate::storage_error)?;
        stored
            .map(|bytes| serde_json::from_slice(&bytes).map_err(crate::storage_error))
            .transpose()
    }

    /// Starts the delivery thread if it is not running and there is, or may
    /// soon be, work for it (a destination not yet at rest).
    pub(crate) fn start_kinesis_worker_if_needed(self: &Arc<Self>) {
        let busy = (self.tables.read().values())
            .any(|t| t.kinesis_destinations().iter().any(|d| d.status.live()));
        if !busy || self.kinesis.worker_started.swap(true, Ordering::SeqCst) {
            return;
        }
        let started = self.run_periodically("ferrodyn-kinesis", TICK, "Kinesis delivery", |e| {
            e.tend_destinations()
        });
        if !started {
            self.kinesis.worker_started.store(false, Ordering::SeqCst);
        }
    }

    /// One round of the worker: every live destination's next step. On
    /// shared storage only the lease holder takes any.
    fn tend_destinations(&self) -> Result<()> {
        if !self.runs_background_work() {
            return Ok(());
        }
        let tables: Vec<Arc<Table>> = self.tables.read().values().cloned().collect();
        for table in tables {
            for destination in table.kinesis_destinations() {
                self.tend(&table, &destination)?;
            }
        }
        Ok(())
    }

    fn tend(&self, table: &Arc<Table>, destination: &KinesisDestination) -> Result<()> {
        use DestinationStatus::*;
        match destination.status {
            Enabling => {
                let checked = match self.kinesis.streams.read().clone() {
                    Some(streams) => streams.check_stream(&destination.stream_arn),
                    None => Err("Ferrodyn has no Kinesis endpoint (--kinesis-endpoint URL)".into()),
                };
                let next = match &checked {
                    Ok(()) => (Active, None),
                    Err(_) => (EnableFailed, Some(ENABLE_FAILED.to_string())),
                };
                if let Err(error) = checked {
                    self.note_error(table.id, &destination.consumer, error);
                }
                self.move_destination(table, destination, next)
            }
            Disabling => self.move_destination(table, destination, (Disabled, None)),
            Active | Updating => {
                self.deliver(table, destination)?;
                if destination.status == Updating {
                    self.move_destination(table, destination, (Active, None))?;
                }
                Ok(())
            }
            Disabled | EnableFailed => Ok(()),
        }
    }

    /// Moves `destination` to `status` (with a description) if it is still
    /// as read and its table still exists; an entry that stops delivering
    /// loses its cursor in the same commit.
    fn move_destination(
        &self,
        table: &Table,
        destination: &KinesisDestination,
        (status, description): (DestinationStatus, Option<String>),
    ) -> Result<()> {
        let _catalog = self.catalog_lock.lock();
        let current = self.tables.read().get(&table.catalog_name).cloned();
        if current.is_none_or(|t| t.id != table.id) {
            return Ok(());
        }
        let mut list = table.kinesis_destinations();
        let Some(entry) = list.iter_mut().find(|d| *d == destination) else {
            return Ok(()); // changed meanwhile: the next round sees the new state
        };
        entry.status = status;
        entry.description = description;
        entry.since = self.now_seconds();
        let mut ops = Vec::new();
        if !status.live() {
            let key = keyspace::cursor_key(table.id, &destination.consumer);
            ops.push(WriteOp::Delete(key));
        }
        self.commit_destinations(table, list, ops)
    }

    fn note_error(&self, table_id: u64, consumer: &str, error: String) {
        let mut deliveries = self.kinesis.deliveries.lock();
        let delivery = deliveries
            .entry((table_id, consumer.to_string()))
            .or_default();
        let backoff = delivery
            .backoff
            .map_or(FIRST_BACKOFF, |b| (b * 2).min(MAX_BACKOFF));
        delivery.backoff = Some(backoff);
        delivery.retry_at = Some(Instant::now() + backoff);
        delivery.last_error = Some(error);
        delivery.last_error_at = Some(self.now_seconds());
    }

    fn note_success(&self, table_id: u64, consumer: &str) {
        let mut deliveries = self.kinesis.deliveries.lock();
        if let Some(delivery) = deliveries.get_mut(&(table_id, consumer.to_string())) {
            delivery.backoff = None;
            delivery.retry_at = None;
        }
    }

    /// Whether the destination is backing off after a failure.
    fn backing_off(&self, table_id: u64, consumer: &str) -> bool {
        let deliveries = self.kinesis.deliveries.lock();
        (deliveries.get(&(table_id, consumer.to_string())))
            .and_then(|d| d.retry_at)
            .is_some_and(|at| Instant::now() < at)
    }
}

/// One PutRecords batch: the log records it covers, in order (key,
/// sequence number, whether it is sent: records too large for Kinesis are
/// skipped and counted), and the records sent.
#[derive(Default)]
struct Batch {
    covered: Vec<(Vec<u8>, u64, bool)>,
    records: Vec<OutgoingRecord>,
}

impl Engine {
    /// Sends what the destination's cursor has not passed, a batch at a
    /// time, until the log is delivered, a batch fails, or the round's
    /// budget is spent.
    fn deliver(&self, table: &Table, destination: &KinesisDestination) -> Result<()> {
        let consumer = destination.consumer.as_str();
        if self.backing_off(table.id, consumer) {
            return Ok(());
        }
        let Some(streams) = self.kinesis.streams.read().clone() else {
            let error = "Ferrodyn has no Kinesis endpoint (--kinesis-endpoint URL)";
            self.note_error(table.id, consumer, error.into());
            return Ok(());
        };
        for _ in 0..BATCHES_PER_TICK {
            let Some(mut cursor) = self.read_cursor(table.id, consumer)? else {
                return Ok(());
            };
            let batch = self.next_batch(table, destination, cursor.next_seq)?;
            if batch.covered.is_empty() {
                return Ok(());
            }
            let outcomes = match batch.records.is_empty() {
                true => Ok(Vec::new()),
                false => streams.put_records(&destination.stream_arn, &batch.records),
            };
            let outcomes = match outcomes {
                Ok(outcomes) => outcomes,
                Err(error) => {
                    self.note_error(table.id, consumer, error);
                    return Ok(());
                }
            };
            let done = self.advance(table, consumer, &mut cursor, &batch, &outcomes)?;
            if !done {
                return Ok(());
            }
            self.note_success(table.id, consumer);
        }
        Ok(())
    }

    /// Applies a PutRecords answer: the cursor moves to the first record not
    /// stored (later ones are sent again: at least once), counters follow,
    /// and records every consumer is done with go when nothing else reads
    /// the log. Returns whether the whole batch was stored.
    fn advance(
        &self,
        table: &Table,
        consumer: &str,
        cursor: &mut Cursor,
        batch: &Batch,
        outcomes: &[PutOutcome],
    ) -> Result<bool> {
        let mut answers = outcomes.iter();
        let mut passed = 0;
        let mut failure = None;
        for (_, _, sent) in &batch.covered {
            let answer = match sent {
                false => {
                    cursor.failed += 1; // over Kinesis's record size: skipped
                    passed += 1;
                    continue;
                }
                true => answers.next(),
            };
            match answer {
                Some(PutOutcome::Stored) => {
                    cursor.delivered += 1;
                    passed += 1;
                    continue;
                }
                Some(PutOutcome::Throttled(message)) => {
                    cursor.throttled += 1;
                    failure = Some(message.clone());
                }
                Some(PutOutcome::Failed(message)) => failure = Some(message.clone()),
                None => failure = Some("PutRecords answered too few records".into()),
            }
            break;
        }
        let covered = &batch.covered;
        cursor.next_seq = match covered.get(passed) {
            Some((_, seq, _)) => *seq,
            None => covered
                .last()
                .map_or(cursor.next_seq, |(_, seq, _)| seq + 1),
        };
        let mut ops = vec![WriteOp::Put(
            keyspace::cursor_key(table.id, consumer),
            serde_json::to_vec(&cursor).map_err(crate::storage_error)?,
        )];
        // Nobody else reads this log: delivered records can go.
        if table.recovery().is_none() && table.streams().is_empty() {
            let delivered = covered[..passed].iter();
            ops.extend(delivered.map(|(key, _, _)| WriteOp::Delete(key.clone())));
        }
        self.write_retrying_conflicts(ops)?;
        if let Some(message) = failure {
            self.note_error(table.id, consumer, message);
            return Ok(false);
        }
        Ok(true)
    }

    /// The next PutRecords batch from sequence number `from`: readable
    /// records only, at most one per item (PutRecords does not keep order),
    /// within Kinesis's count and size limits.
    fn next_batch(
        &self,
        table: &Table,
        destination: &KinesisDestination,
        from: u64,
    ) -> Result<Batch> {
        let readable = self.readable_sequence();
        if readable == 0 || from >= readable {
            return Ok(Batch::default());
        }
        // Every record numbered below `readable`.
        let page = self.log_page(table.id, from, readable - 1, MAX_RECORDS)?;
        let micros = destination.precision.as_deref() == Some("MICROSECOND");
        let (mut batch, mut items, mut bytes) = (Batch::default(), HashSet::new(), 0);
        for (key, value) in page {
            let seq = keyspace::stream_seq_of(&key).expect("record keys carry a sequence number");
            let stored: Value = serde_json::from_slice(&value).map_err(crate::storage_error)?;
            let keys: Item = serde_json::from_value(stored["dynamodb"]["Keys"].clone())
                .map_err(crate::storage_error)?;
            let item_key = table.schema.encode(0, &keys);
            if items.contains(&item_key) {
                break; // its next change waits for the next call
            }
            let data = kinesis_record(table, &stored, seq, micros);
            let partition_key = hex_md5(&item_key);
            let size = data.len() + partition_key.len();
            if bytes + size > MAX_CALL_BYTES && !batch.records.is_empty() {
                break;
            }
            let sent = size <= MAX_RECORD_BYTES;
            if sent {
                bytes += size;
                batch.records.push(OutgoingRecord {
                    partition_key,
                    data,
                });
            }
            items.insert(item_key);
            batch.covered.push((key, seq, sent));
        }
        Ok(batch)
    }

    /// Ferrodyn's own view of a table's destinations (`GET
    /// /ferrodyn/destinations?table=T`, `ferrodyn destinations T`): the
    /// status AWS shows, and what AWS shows only in CloudWatch (the last
    /// error, AgeOfOldestUnreplicatedRecord, ThrottledPutRecordCount,
    /// FailedToReplicateRecordCount) and the records delivered.
    pub fn destination_report(&self, table_name: &str) -> Result<Value> {
        let table = self.kinesis_table(table_name)?;
        let mut out = Vec::new();
        for destination in table.kinesis_destinations() {
            let cursor = self.read_cursor(table.id, &destination.consumer)?;
            let age = match &cursor {
                Some(cursor) => self.oldest_undelivered_age(&table, cursor.next_seq)?,
                None => 0,
            };
            let deliveries = self.kinesis.deliveries.lock();
            let delivery = deliveries.get(&(table.id, destination.consumer.clone()));
            let cursor = cursor.unwrap_or_default();
            out.push(json!({
                "StreamArn": destination.stream_arn,
                "DestinationStatus": destination.status.name(),
                "DestinationStatusDescription": destination.description,
                "ApproximateCreationDateTimePrecision":
                    destination.precision.as_deref().unwrap_or("MILLISECOND"),
                "LastError": delivery.and_then(|d| d.last_error.clone()),
                "LastErrorTime": delivery.and_then(|d| d.last_error_at),
                "Failing": delivery.is_some_and(|d| d.backoff.is_some()),
                "AgeOfOldestUnreplicatedRecord": age,
                "ThrottledPutRecordCount": cursor.throttled,
                "FailedToReplicateRecordCount": cursor.failed,
                "DeliveredRecordCount": cursor.delivered,
            }));
        }
        Ok(json!({ "TableName": table.name, "Destinations": out }))
    }

    /// Milliseconds since the oldest readable record at or after `from` was
    /// committed (0: none waiting).
    fn oldest_undelivered_age(&self, table: &Table, from: u64) -> Result<u64> {
        let readable = self.readable_sequence();
        if readable == 0 || from >= readable {
            return Ok(0);
        }
        let start = keyspace::stream_record_key(table.id, from);
        let end = keyspace::stream_record_key(table.id, readable);
        let first = (self.storage)
            .scan(Bound::Included(&start), Bound::Excluded(&end), false, 1)
            .map_err(crate::storage_error)?;
        let Some((_, value)) = first.first() else {
            return Ok(0);
        };
        let stored: Value = serde_json::from_slice(value).map_err(crate::storage_error)?;
        let committed = commit_millis(&stored);
        Ok(self.clock.now_millis().saturating_sub(committed))
    }
}

/// When a logged change committed, in ms (records logged whole carry it;
/// others only their second).
fn commit_millis(stored: &Value) -> u64 {
    (stored[crate::streams::RECOVERY_MEMBER]["commitMillis"].as_u64()).unwrap_or_else(|| {
        let seconds = stored["dynamodb"]["ApproximateCreationDateTime"].as_f64();
        (seconds.unwrap_or(0.0) * 1000.0) as u64
    })
}

/// The record DynamoDB puts into Kinesis for one logged change (design
/// §4): no eventVersion, SequenceNumber or StreamViewType; both images;
/// the creation time in ms, or µs with MICROSECOND precision.
fn kinesis_record(table: &Table, stored: &Value, seq: u64, micros: bool) -> Vec<u8> {
    let facts = &stored[crate::streams::RECOVERY_MEMBER];
    let body = &stored["dynamodb"];
    let millis = commit_millis(stored);
    let created = match micros {
        true => facts["commitMicros"].as_u64().unwrap_or(millis * 1000),
        false => millis,
    };
    let size = ["keysBytes", "newBytes", "oldBytes"]
        .iter()
        .map(|name| facts[name].as_u64())
        .sum::<Option<u64>>()
        .or_else(|| body["SizeBytes"].as_u64());
    let mut dynamodb = json!({ "ApproximateCreationDateTime": created, "Keys": body["Keys"] });
    for image in ["NewImage", "OldImage"] {
        if !body[image].is_null() {
            dynamodb[image] = body[image].clone();
        }
    }
    dynamodb["SizeBytes"] = json!(size);
    if micros {
        dynamodb["ApproximateCreationDateTimePrecision"] = json!("MICROSECOND");
    }
    let record = json!({
        "awsRegion": stored["awsRegion"],
        "eventID": event_id(table.id, seq),
        "eventName": stored["eventName"],
        "userIdentity": stored.get("userIdentity").cloned().unwrap_or(Value::Null),
        "recordFormat": "application/json",
        "tableName": table.name,
        "dynamodb": dynamodb,
        "eventSource": "aws:dynamodb",
    });
    serde_json::to_vec(&record).expect("plain data always serialises")
}

/// A UUID (version 3 layout) derived from table id and sequence number:
/// a record sent again carries the same eventID, so consumers can drop
/// duplicates.
fn event_id(table_id: u64, seq: u64) -> String {
    let mut hash = Md5::new();
    hash.update(table_id.to_be_bytes());
    hash.update(seq.to_be_bytes());
    let mut b: [u8; 16] = hash.finalize().into();
    b[6] = (b[6] & 0x0f) | 0x30;
    b[8] = (b[8] & 0x3f) | 0x80;
    let hex: String = b.iter().map(|byte| format!("{byte:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// Upper-case hex MD5: the PartitionKey of an item's records, so that an
/// item always goes to the same Kinesis shard.
fn hex_md5(bytes: &[u8]) -> String {
    Md5::digest(bytes)
        .iter()
        .map(|byte| format!("{byte:02X}"))
        .collect()
}

/// The Kinesis Data Streams endpoint (`ferrodyn serve --kinesis-endpoint`).
pub trait KinesisStreams: Send + Sync {
    /// DescribeStreamSummary: Ok when the stream exists and is usable.
    fn check_stream(&self, stream_arn: &str) -> std::result::Result<(), String>;
    /// PutRecords: one outcome per record, in order; Err when the whole
    /// call failed (connection, ResourceNotFound, throttled call...).
    fn put_records(
        &self,
        stream_arn: &str,
        records: &[OutgoingRecord],
    ) -> std::result::Result<Vec<PutOutcome>, String>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_ids_are_uuids_fixed_by_table_and_sequence() {
        let id = event_id(7, 42);
        assert_eq!(id, event_id(7, 42));
        assert_ne!(id, event_id(7, 43));
        assert_ne!(id, event_id(8, 42));
        let parts: Vec<usize> = id.split('-').map(str::len).collect();
        assert_eq!(parts, [8, 4, 4, 4, 12]);
        assert_eq!(&id[14..15], "3");
    }

    #[test]
    fn partition_keys_are_upper_case_md5() {
        // RFC 1321's test vector for "abc".
        assert_eq!(hex_md5(b"abc"), "900150983CD24FB0D6963F7D28E17F72");
    }
}
