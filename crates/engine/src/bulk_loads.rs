//! StartBulkPutItems, DescribeBulkOperation, ListBulkOperations and
//! CancelBulkOperation (DynamoDB's newest operations): items from S3 objects
//! put into an existing table through the ordinary write path, so indexes,
//! streams and the change log apply. What DynamoDB documents and what it
//! leaves open (and Ferrodyn's choices there): docs/design/bulk-loads.md.
//!
//! - Input: DYNAMODB_JSON lines shaped like a PutItem request,
//!   `{"Item": {...}}` with optional `ConditionExpression`,
//!   `ExpressionAttributeNames` and `ExpressionAttributeValues`, or the same
//!   as Ion structs (ION, read as ImportTable reads Ion); optionally GZIP or
//!   ZSTD. A unit that is unreadable, has no Item, or lacks the
//!   table's key abandons the rest of its object (as an import); a unit
//!   with a bad condition or an unknown member is one failed item.
//! - A condition is checked against the stored item, as PutItem checks it;
//!   an item whose condition fails is processed, not failed.
//! - MaxWriteRequestUnits caps the rate: after each batch the job waits
//!   until its write units (the table's and its indexes') average no more
//!   than the cap per second. The units are filed in the table's usage
//!   (`ferrodyn usage`) under StartBulkPutItems; they do not draw on
//!   provisioned capacity.
//! - CancelBulkOperation answers CANCELLING; the job stops after its current
//!   batch (CANCELLED), and items already written stay.
//! - Reports, when OutputType asks for them: JSON lines under
//!   `<prefix>/AWSDynamoDB/BulkOperation/<id>/errors/` and
//!   `.../condition-check-failures/`, one file per input object with any.
//! - Progress is saved after every object: a stop resumes the job at its
//!   first unfinished object (that object's items are put again, and its
//!   counts start over, so the final counts are exact).

use crate::capacity::write_units;
use crate::imports::Compression;
use crate::items::Mutation;
use crate::keyspace;
use crate::table::Table;
use crate::throughput::Capacity;
use crate::Engine;
use ferrodyn_expr::{parse_condition, Condition, ExpressionContext};
use ferrodyn_storage::{ReadCheck, WriteOp};
use ferrodyn_types::{item_size, AttributeValue, DynamoError, ErrorKind, Item, Result};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Items written per commit.
const BATCH: usize = 100;

/// How often a running job saves its counts for DescribeBulkOperation.
const PROGRESS_EVERY: Duration = Duration::from_millis(500);

/// A validated StartBulkPutItems request.
#[derive(Clone)]
pub struct BulkPutRequest {
    pub table_name: String,
    pub bucket: String,
    pub prefix: String,
    pub compression: Compression,
    /// InputFormat ION (else DYNAMODB_JSON).
    pub ion: bool,
    pub max_write_units: Option<u64>,
    pub client_token: Option<String>,
    /// The request's input and output configurations and performance tier,
    /// echoed in the description as given.
    pub echo: Map<String, Value>,
}

/// A bulk operation as stored under `'u' id`: its description (wire
/// shape, members PascalCase), and what the job needs to run or resume.
#[derive(Clone, Serialize, Deserialize)]
struct BulkRecord {
    id: u64,
    description: Map<String, Value>,
    catalog_name: String,
    region: String,
    namespace: Option<String>,
    bucket: String,
    prefix: String,
    compression: Compression,
    #[serde(default)]
    ion: bool,
    max_write_units: Option<u64>,
    client_token: Option<String>,
    cancel: bool,
    /// Input objects finished, in key order, and the counts after them
    /// (where a resumed job starts from).
    objects_done: usize,
    checkpoint: Counts,
    /// The counts now, for DescribeBulkOperation.
    counts: Counts,
}

/// One unit of input.
enum Unit {
    Put(Item, Option<Condition>),
    /// A unit that is not a valid put (a failed item): why, and the unit.
    Invalid(String, Value),
}

impl Engine {
    /// StartBulkPutItems.
    pub fn start_bulk_put(self: &Arc<Self>, request: BulkPutRequest) -> Result<Value> {
        let table = self.lookup(&request.table_name).ok_or_else(|| {
            DynamoError::resource_not_found(format!(
                "Requested resource not found: Table: {} not found",
                request.table_name
            ))
        })?;
        check_table_takes_bulk(&table)?;
        if let Some(existing) = self.bulk_with_token(&request)? {
            return Ok(Value::Object(existing));
        }
        let record = self.commit_new_bulk(&request, &table)?;
        let description = record.description.clone();
        self.start_bulk(record.id)?;
        Ok(Value::Object(description))
    }

    fn bulk_with_token(&self, request: &BulkPutRequest) -> Result<Option<Map<String, Value>>> {
        let Some(token) = &request.client_token else {
            return Ok(None);
        };
        let namespace = crate::region::request_namespace();
        for record in self.bulk_records()? {
            if record.client_token.as_ref() != Some(token) || record.namespace != namespace {
                continue;
            }
            let same = record.bucket == request.bucket
                && record.prefix == request.prefix
                && record.compression == request.compression
                && record.max_write_units == request.max_write_units
                && record.description["TableDetails"][0]["TableName"] == json!(request.table_name)
                && request
                    .echo
                    .iter()
                    .all(|(k, v)| record.description.get(k) == Some(v));
            if !same {
                return Err(DynamoError::new(
                    ErrorKind::IdempotentParameterMismatch,
                    "The request uses the same client token as a previous, but non-identical request.",
                ));
            }
            return Ok(Some(record.description));
        }
        Ok(None)
    }

    fn commit_new_bulk(&self, request: &BulkPutRequest, table: &Table) -> Result<BulkRecord> {
        let _catalog = self.catalog_lock.lock();
        let stored = (self.storage.get(keyspace::NEXT_BULK_ID)).map_err(crate::storage_error)?;
        let id = stored
            .and_then(|v| v.try_into().ok().map(u64::from_be_bytes))
            .unwrap_or(1);
        let now = (self.now_seconds() * 1000.0).floor() / 1000.0;
        let described = table.describe();
        let mut description = request.echo.clone();
        let arn = format!("{}/bulk-operation/{:016x}", described.table_arn, id);
        for (name, value) in [
            ("BulkOperationArn", json!(arn)),
            ("BulkOperationStatus", json!("IN_PROGRESS")),
            (
                "TableDetails",
                json!([{ "TableName": table.name, "TableId": described.table_id }]),
            ),
            ("StartTime", json!(now)),
            ("ProcessedItemCount", json!(0)),
            ("FailedItemCount", json!(0)),
            ("ProcessedInputBytes", json!(0)),
        ] {
            description.insert(name.into(), value);
        }
        if let Some(token) = &request.client_token {
            description.insert("ClientToken".into(), json!(token));
        }
        if let Some(units) = request.max_write_units {
            description.insert("MaxWriteRequestUnits".into(), json!(units));
        }
        let record = BulkRecord {
            id,
            description,
            catalog_name: table.catalog_name.clone(),
            region: self.request_region(),
            namespace: crate::region::request_namespace(),
            bucket: request.bucket.clone(),
            prefix: request.prefix.clone(),
            compression: request.compression,
            ion: request.ion,
            max_write_units: request.max_write_units,
            client_token: request.client_token.clone(),
            cancel: false,
            objects_done: 0,
            checkpoint: Counts::default(),
            counts: Counts::default(),
        };
        let bump = WriteOp::Put(
            keyspace::NEXT_BULK_ID.to_vec(),
            (id + 1).to_be_bytes().to_vec(),
        );
        self.write_retrying_conflicts(vec![bump, bulk_put_op(&record)?])?;
        Ok(record)
    }

    fn bulk_records(&self) -> Result<Vec<BulkRecord>> {
        (self.scan_all_under(&keyspace::bulk_records())?.into_iter())
            .map(|(_, bytes)| serde_json::from_slice(&bytes).map_err(crate::storage_error))
            .collect()
    }

    fn bulk_record(&self, id: u64) -> Result<Option<BulkRecord>> {
        let stored = self
            .storage
            .get(&keyspace::bulk_key(id))
            .map_err(crate::storage_error)?;
        stored
            .map(|bytes| serde_json::from_slice(&bytes).map_err(crate::storage_error))
            .transpose()
    }

    /// Reads, changes and saves one record, serialized with every other
    /// change of a bulk record (the job's progress, a cancellation): in this
    /// process by the catalog lock, across nodes by checking the record
    /// unchanged at commit and trying again if it was not (a cancellation
    /// on another node is never overwritten by this node's progress).
    fn update_bulk(&self, id: u64, change: impl Fn(&mut BulkRecord)) -> Result<Option<BulkRecord>> {
        let _catalog = self.catalog_lock.lock();
        let key = keyspace::bulk_key(id);
        loop {
            let Some(stored) = self.storage.get(&key).map_err(crate::storage_error)? else {
                return Ok(None);
            };
            let mut record: BulkRecord =
                serde_json::from_slice(&stored).map_err(crate::storage_error)?;
            change(&mut record);
            let check = ReadCheck {
                key: key.clone(),
                expected: Some(stored),
            };
            match self.commit_catalog(vec![check], vec![bulk_put_op(&record)?]) {
                Ok(()) => return Ok(Some(record)),
                Err(crate::error::EngineError::Conflict) => continue,
                Err(error) => return Err(error.into()),
            }
        }
    }

    fn start_bulk(self: &Arc<Self>, id: u64) -> Result<()> {
        let engine = Arc::clone(self);
        self.spawn_transfer(format!("bulk-put-{id}"), move || engine.run_bulk(id))
    }

    /// Bulk operations left running that `take` picks (transfers.rs) go on
    /// from their first unfinished object.
    pub(crate) fn resume_bulk_puts(self: &Arc<Self>, take: &dyn Fn(&str) -> bool) -> Result<()> {
        for record in self.bulk_records()? {
            let status = &record.description["BulkOperationStatus"];
            let running = *status == json!("IN_PROGRESS") || *status == json!("CANCELLING");
            if running && take(&format!("bulk-put-{}", record.id)) {
                self.start_bulk(record.id)?;
            }
        }
        Ok(())
    }

    /// The job: every object from the first unfinished one, then the end.
    fn run_bulk(self: &Arc<Self>, id: u64) -> Result<()> {
        let Some(record) = self.bulk_record(id)? else {
            return Ok(());
        };
        let table = self.tables.read().get(&record.catalog_name).cloned();
        let outcome = match table {
            Some(table) => self.bulk_objects(&table, &record),
            None => Err((
                "ResourceNotFound".to_string(),
                "The table was deleted during the bulk operation".to_string(),
            )),
        };
        let now = (self.now_seconds() * 1000.0).floor() / 1000.0;
        self.update_bulk(id, |record| {
            let status = match (&outcome, record.cancel) {
                (Err(_), _) => "FAILED",
                (Ok(()), true) => "CANCELLED",
                (Ok(()), false) if record.counts.failed > 0 => "COMPLETED_WITH_ERRORS",
                (Ok(()), false) => "COMPLETED",
            };
            let d = &mut record.description;
            d.insert("BulkOperationStatus".into(), json!(status));
            d.insert("EndTime".into(), json!(now));
            if let Err((code, message)) = &outcome {
                d.insert("FailureCode".into(), json!(code));
                d.insert("FailureMessage".into(), json!(message));
            }
        })?;
        Ok(())
    }

    /// Every input object from the first unfinished one; progress saved
    /// after each (and now and then within one, for DescribeBulkOperation).
    fn bulk_objects(
        &self,
        table: &Arc<Table>,
        record: &BulkRecord,
    ) -> std::result::Result<(), (String, String)> {
        let objects = self.object_store()?;
        let failed = |message: String| crate::exports::store_failure(&message);
        let keys = objects
            .list(&record.bucket, &record.prefix)
            .map_err(failed)?;
        let mut job = Job::new(record, keys.iter().map(|(_, size)| size).sum());
        for (index, (key, size)) in keys.iter().enumerate().skip(record.objects_done) {
            let bytes = objects.get(&record.bucket, key).map_err(failed)?;
            job.object = (job.counts.read_bytes, *size);
            let mut report = Report::default();
            let stopped = match crate::imports::decompressed(bytes, record.compression) {
                Ok(text) => self.bulk_object(table, &text, record.ion, &mut job, &mut report),
                Err(why) => {
                    job.counts.failed_unit(&mut report, &why, &Value::Null);
                    false
                }
            };
            report.write(self, record, index, key);
            if !stopped {
                job.counts.read_bytes = job.object.0 + size;
            }
            job.save(self, (!stopped).then_some(index + 1));
            if let Some(error) = job.error.take() {
                return Err(("InternalServerError".to_string(), error));
            }
            if stopped || job.cancelled {
                return Ok(());
            }
        }
        Ok(())
    }

    /// One object's units, in order: unconditional puts batched, a
    /// conditional one on its own. True when the job was cancelled.
    fn bulk_object(
        &self,
        table: &Arc<Table>,
        text: &str,
        ion: bool,
        job: &mut Job,
        report: &mut Report,
    ) -> bool {
        let mut batch: Vec<Item> = Vec::new();
        for (unit, offset) in bulk_units(text, ion, table) {
            if let Some(offset) = offset {
                job.read_to(offset, text.len());
            }
            match unit {
                Ok(Unit::Put(item, None)) => batch.push(item),
                Ok(Unit::Put(item, Some(condition))) => {
                    self.flush_bulk(table, &mut batch, job);
                    self.put_conditionally(table, item, &condition, job, report);
                }
                Ok(Unit::Invalid(why, unit)) => job.counts.failed_unit(report, &why, &unit),
                Err(why) => {
                    job.counts.failed_unit(
                        report,
                        &format!("{why}; the rest of the object was not read"),
                        &Value::Null,
                    );
                    break;
                }
            }
            if batch.len() >= BATCH && self.flush_bulk(table, &mut batch, job) {
                return true;
            }
        }
        self.flush_bulk(table, &mut batch, job)
    }

    /// Puts the batch in one commit, paces, saves progress now and then.
    /// True when the job was cancelled.
    fn flush_bulk(&self, table: &Arc<Table>, batch: &mut Vec<Item>, job: &mut Job) -> bool {
        if !batch.is_empty() {
            let mut changes = BTreeMap::new();
            for item in batch.drain(..) {
                job.counts.put(table, &item);
                let key = table.schema.extract(&item);
                changes.insert(table.schema.encode(table.id, &key), (key, Some(item)));
            }
            if let Err(error) = self.apply_changes(table, changes) {
                job.error = Some(error.message);
            }
        }
        pace(job.started, job.counts.write_units, job.max_write_units);
        if job.saved.elapsed() >= PROGRESS_EVERY {
            job.save(self, None);
        }
        job.cancelled || job.error.is_some()
    }

    fn put_conditionally(
        &self,
        table: &Arc<Table>,
        item: Item,
        condition: &Condition,
        job: &mut Job,
        report: &mut Report,
    ) {
        let key = table.schema.extract(&item);
        let written = self.write_item(
            table,
            &key,
            Mutation::Put(item.clone()),
            Some(condition),
            true,
        );
        match written {
            Ok(_) => job.counts.put(table, &item),
            Err(error) if error.kind == ErrorKind::ConditionalCheckFailed => {
                job.counts.processed += 1;
                job.counts.condition_failed += 1;
                let existing = error
                    .extra
                    .as_ref()
                    .and_then(|extra| extra.get("Item"))
                    .cloned();
                report
                    .condition_failures
                    .push(json!({ "Item": item, "ExistingItem": existing }));
            }
            Err(error) => job
                .counts
                .failed_unit(report, &error.message, &json!({ "Item": item })),
        }
    }

    /// DescribeBulkOperation.
    pub fn describe_bulk(&self, arn: &str) -> Result<Value> {
        self.find_bulk(arn)
            .map(|record| Value::Object(record.described()))
    }

    fn find_bulk(&self, arn: &str) -> Result<BulkRecord> {
        let namespace = crate::region::request_namespace();
        (self.bulk_records()?.into_iter())
            .find(|r| {
                r.description.get("BulkOperationArn") == Some(&json!(arn))
                    && r.namespace == namespace
            })
            .ok_or_else(|| {
                DynamoError::resource_not_found(format!("Bulk operation not found: {arn}"))
            })
    }

    /// ListBulkOperations: newest first; the token is the next id in hex.
    pub fn list_bulk(&self, max: usize, next: Option<u64>) -> Result<(Vec<Value>, Option<String>)> {
        let (region, namespace) = (self.request_region(), crate::region::request_namespace());
        let mut records: Vec<BulkRecord> = (self.bulk_records()?.into_iter())
            .filter(|r| r.region == region && r.namespace == namespace)
            .filter(|r| next.is_none_or(|before| r.id <= before))
            .collect();
        records.sort_by_key(|r| std::cmp::Reverse(r.id));
        let token = records.get(max).map(|r| format!("{:016x}", r.id));
        let summaries = (records.into_iter().take(max))
            .map(|r| {
                let d = &r.description;
                let mut summary = Map::new();
                for member in [
                    "BulkOperationArn",
                    "BulkOperationStatus",
                    "StartTime",
                    "EndTime",
                ] {
                    if let Some(value) = d.get(member) {
                        summary.insert(member.into(), value.clone());
                    }
                }
                Value::Object(summary)
            })
            .collect();
        Ok((summaries, token))
    }

    /// CancelBulkOperation: CANCELLING now, CANCELLED after the current
    /// batch; an operation already ended answers its status unchanged.
    pub fn cancel_bulk(&self, arn: &str) -> Result<Value> {
        let id = self.find_bulk(arn)?.id;
        let record = self.update_bulk(id, |record| {
            if record.description["BulkOperationStatus"] == json!("IN_PROGRESS") {
                record.cancel = true;
                record
                    .description
                    .insert("BulkOperationStatus".into(), json!("CANCELLING"));
            }
        })?;
        let status = record.map(|r| r.description["BulkOperationStatus"].clone());
        Ok(json!({ "BulkOperationArn": arn, "BulkOperationStatus": status }))
    }
}

/// DynamoDB refuses a bulk operation on a table still being created or
/// restored, or while a global secondary index is being built.
fn check_table_takes_bulk(table: &Table) -> Result<()> {
    let busy = if table.is_creating() {
        Some("is being created")
    } else if table
        .indexes()
        .iter()
        .any(|index| index.state() == crate::index::IndexState::Backfilling)
    {
        Some("is creating a secondary index")
    } else {
        None
    };
    match busy {
        Some(why) => Err(DynamoError::new(
            ErrorKind::ResourceInUse,
            format!("Cannot start a bulk operation: table {} {why}", table.name),
        )),
        None => Ok(()),
    }
}

fn bulk_put_op(record: &BulkRecord) -> Result<WriteOp> {
    let bytes = serde_json::to_vec(record).map_err(crate::storage_error)?;
    Ok(WriteOp::Put(keyspace::bulk_key(record.id), bytes))
}

impl BulkRecord {
    /// The description with the saved counts.
    fn described(&self) -> Map<String, Value> {
        let mut d = self.description.clone();
        self.counts
            .describe(&mut d, &self.description["TableDetails"][0]["TableName"]);
        d
    }
}

/// A running job's state between objects.
struct Job {
    id: u64,
    counts: Counts,
    max_write_units: Option<u64>,
    started: Instant,
    saved: Instant,
    cancelled: bool,
    /// A write that failed for a reason of the server's (the job ends FAILED).
    error: Option<String>,
    /// The object being read: input bytes before it, and its size.
    object: (u64, u64),
}

impl Job {
    /// ProcessedInputBytes within an object, in proportion to how far into
    /// its text the units read so far reach.
    fn read_to(&mut self, offset: usize, length: usize) {
        let (before, size) = self.object;
        let share = (offset as f64 / length.max(1) as f64).min(1.0);
        self.counts.read_bytes = before + (size as f64 * share) as u64;
    }

    fn new(record: &BulkRecord, total_bytes: u64) -> Job {
        let mut counts = record.checkpoint.clone();
        counts.total_bytes = Some(total_bytes);
        // The pace counts from now: units of a run before a stop are spent.
        counts.write_units = 0.0;
        Job {
            id: record.id,
            counts,
            max_write_units: record.max_write_units,
            started: Instant::now(),
            saved: Instant::now(),
            cancelled: false,
            error: None,
            object: (0, 0),
        }
    }

    /// Saves the counts (and, after an object, how many are done); learns
    /// whether the operation was cancelled meanwhile.
    fn save(&mut self, engine: &Engine, objects_done: Option<usize>) {
        let counts = &self.counts;
        let saved = engine.update_bulk(self.id, |record| {
            if let Some(done) = objects_done {
                record.objects_done = done;
                record.checkpoint = counts.clone();
            }
            record.counts = counts.clone();
        });
        self.cancelled = matches!(saved, Ok(Some(record)) if record.cancel);
        self.saved = Instant::now();
    }
}

/// What a bulk operation has done so far (saved in its record).
#[derive(Clone, Default, Serialize, Deserialize)]
struct Counts {
    processed: u64,
    failed: u64,
    condition_failed: u64,
    read_bytes: u64,
    total_bytes: Option<u64>,
    put_bytes: u64,
    /// Bytes put into each secondary index, by index name and kind.
    index_bytes: BTreeMap<String, (bool, u64)>,
    write_units: f64,
}

impl Counts {
    /// Counts one written item, and files its write units (the table's and
    /// each index's) in the table's usage under StartBulkPutItems.
    fn put(&mut self, table: &Table, item: &Item) {
        let size = item_size(item);
        self.processed += 1;
        self.put_bytes += size as u64;
        let mut units = write_units(size);
        for index in table.indexes().iter().filter(|index| index.covers(item)) {
            let projected = item_size(&index.project(&table.schema, item));
            units += write_units(projected);
            let global = matches!(index.kind, crate::shared::IndexKind::Global);
            self.index_bytes
                .entry(index.name.clone())
                .or_insert((global, 0))
                .1 += projected as u64;
        }
        self.write_units += units;
        crate::usage::with_operation("StartBulkPutItems", || {
            table.usage.record(Capacity::Write, units)
        });
    }

    fn failed_unit(&mut self, report: &mut Report, why: &str, unit: &Value) {
        self.processed += 1;
        self.failed += 1;
        report.errors.push(json!({ "Error": why, "Record": unit }));
    }

    fn describe(&self, d: &mut Map<String, Value>, table_name: &Value) {
        d.insert("ProcessedItemCount".into(), json!(self.processed));
        d.insert("FailedItemCount".into(), json!(self.failed));
        d.insert("ProcessedInputBytes".into(), json!(self.read_bytes));
        if let Some(total) = self.total_bytes {
            d.insert("TotalInputBytes".into(), json!(total));
        }
        let mut usage = json!({
            "TableName": table_name, "BulkPutBytes": self.put_bytes, "Table": { "BulkPutBytes": self.put_bytes },
        });
        for (name, (global, bytes)) in &self.index_bytes {
            let kind = if *global {
                "GlobalSecondaryIndexes"
            } else {
                "LocalSecondaryIndexes"
            };
            usage[kind][name] = json!({ "BulkPutBytes": bytes });
        }
        d.insert("BulkOperationUsage".into(), json!([usage]));
    }
}

/// The failed and condition-failed units of one input object.
#[derive(Default)]
struct Report {
    errors: Vec<Value>,
    condition_failures: Vec<Value>,
}

impl Report {
    /// Writes the object's report files, for the output types asked for.
    fn write(&self, engine: &Engine, record: &BulkRecord, index: usize, object: &str) {
        let output = &record.description["OutputS3Configuration"];
        let wants = |kind: &str| {
            output["OutputType"]
                .as_array()
                .is_some_and(|types| types.contains(&json!(kind)))
        };
        let Some(objects) = engine.objects.read().clone() else {
            return;
        };
        let bucket = output["S3Bucket"].as_str().unwrap_or(&record.bucket);
        let prefix = output["S3KeyPrefix"]
            .as_str()
            .map_or(String::new(), |p| format!("{}/", p.trim_end_matches('/')));
        let folder = format!("{prefix}AWSDynamoDB/BulkOperation/{:016x}", record.id);
        for (kind, folder_name, lines) in [
            ("ERROR", "errors", &self.errors),
            (
                "CONDITION_CHECK_FAILURE",
                "condition-check-failures",
                &self.condition_failures,
            ),
        ] {
            if lines.is_empty() || !wants(kind) {
                continue;
            }
            let text: String = lines
                .iter()
                .map(|line| format!("{}\n", with_object(line, object)))
                .collect();
            let key = format!("{folder}/{folder_name}/{index:05}.json");
            if let Err(error) = objects.put(bucket, &key, text.into_bytes()) {
                eprintln!(
                    "ferrodyn: bulk operation {}: cannot write {key}: {error}",
                    record.id
                );
            }
        }
    }
}

fn with_object(line: &Value, object: &str) -> Value {
    let mut line = line.clone();
    line["InputObjectKey"] = json!(object);
    line
}

/// One unit of input as read, and where in the text it ended (JSON only).
type ReadUnit = (std::result::Result<Value, String>, Option<usize>);

/// The units of a DYNAMODB_JSON or ION object (an Ion unit is mapped to
/// its DynamoDB JSON form first), each with where it ended in the text when
/// the reader says (JSON's does); an `Err` ends the object.
fn bulk_units<'a>(
    text: &'a str,
    ion: bool,
    table: &'a Table,
) -> impl Iterator<Item = (std::result::Result<Unit, String>, Option<usize>)> + 'a {
    let units: Box<dyn Iterator<Item = ReadUnit>> = match ion {
        true => Box::new(crate::imports_format::ion_units(text).map(|unit| (unit, None))),
        false => {
            let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
            Box::new(std::iter::from_fn(move || {
                let unit = stream.next()?.map_err(|e| format!("not JSON: {e}"));
                Some((unit, Some(stream.byte_offset())))
            }))
        }
    };
    units
        .filter(|(unit, _)| !matches!(unit, Ok(Value::Object(map)) if map.is_empty()))
        .map(move |(unit, offset)| (bulk_unit(unit, table), offset))
}

/// A unit read: a put (with its condition, if any), a failed unit, or an
/// `Err` that ends its object.
fn bulk_unit(
    unit: std::result::Result<Value, String>,
    table: &Table,
) -> std::result::Result<Unit, String> {
    let unit = unit?;
    let item = unit.get("Item").ok_or("a unit with no Item member")?;
    let item: Item = serde_json::from_value(item.clone())
        .map_err(|e| format!("not a DynamoDB JSON item: {e}"))?;
    (table.schema.validate_item(&item)).map_err(|e| e.message.clone())?;
    Ok(match unit_condition(&unit) {
        Ok(condition) => Unit::Put(item, condition),
        Err(why) => Unit::Invalid(why, unit),
    })
}

/// A unit's condition, checked as PutItem checks its ConditionExpression.
fn unit_condition(unit: &Value) -> std::result::Result<Option<Condition>, String> {
    const MEMBERS: [&str; 4] = [
        "Item",
        "ConditionExpression",
        "ExpressionAttributeNames",
        "ExpressionAttributeValues",
    ];
    if let Some(unknown) = unit
        .as_object()
        .into_iter()
        .flat_map(|m| m.keys())
        .find(|k| !MEMBERS.contains(&k.as_str()))
    {
        return Err(format!("Unknown member {unknown}"));
    }
    let names: Option<HashMap<String, String>> = member(unit, "ExpressionAttributeNames")?;
    let values: Option<HashMap<String, AttributeValue>> =
        member(unit, "ExpressionAttributeValues")?;
    let Some(text) = unit.get("ConditionExpression") else {
        if names.is_some() || values.is_some() {
            return Err("ExpressionAttributeNames and ExpressionAttributeValues can only be specified with a ConditionExpression".into());
        }
        return Ok(None);
    };
    let text = text.as_str().ok_or("ConditionExpression is not a string")?;
    let condition = (|| {
        let mut ctx = ExpressionContext::new(names.as_ref(), values.as_ref())?;
        let condition = parse_condition(text, &mut ctx)?;
        ctx.check_all_used()?;
        Ok::<_, DynamoError>(condition)
    })();
    condition.map(Some).map_err(|e| e.message.clone())
}

fn member<T: serde::de::DeserializeOwned>(
    unit: &Value,
    name: &str,
) -> std::result::Result<Option<T>, String> {
    unit.get(name)
        .map(|v| serde_json::from_value(v.clone()).map_err(|e| format!("{name}: {e}")))
        .transpose()
}

/// Waits until `units` written since `started` average at most `cap` per second.
fn pace(started: Instant, units: f64, cap: Option<u64>) {
    let Some(cap) = cap else { return };
    let due = Duration::from_secs_f64(units / cap as f64);
    if let Some(wait) = due.checked_sub(started.elapsed()) {
        std::thread::sleep(wait);
    }
}
