//! Bulk operations as background jobs the page polls: delete, set or remove
//! an attribute on a selection of keys or on every item of a Query/Scan.
//!
//! Deletes go through `ferrodyn_client::batch::BatchWriter` (BatchWriteItem,
//! unprocessed items retried with capped exponential backoff and full
//! jitter), four writer threads fed 25 keys at a time by the reader; sets and removes are one guarded UpdateItem per item
//! (`attribute_exists` on the key, so a bulk edit never creates items),
//! retried on throttling with the same backoff. Progress (done, retried,
//! failed) is read by `GET bulk/<id>`; imports run as the same kind of job; `POST bulk/<id>/cancel` stops the job
//! after the batch in flight.

use crate::api::{required, ApiFailure, ApiResult};
use crate::read;
use ferrodyn_client::backoff::{Backoff, RetryPolicy, Rng};
use ferrodyn_client::batch::{BatchWriter, WriteReport, MAX_WRITE_BATCH};
use ferrodyn_client::{paginate, Client, ClientError};
use ferrodyn_patterns::expr::{Builder, Kind};
use ferrodyn_patterns::table::KeySchema;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Instant;

/// Finished jobs whose reports are kept for the page to read.
const KEPT_JOBS: usize = 100;

/// At most this many failures are listed in a report (all are counted).
const MAX_LISTED_FAILURES: usize = 200;

#[derive(Default)]
pub struct Jobs {
    next: AtomicU64,
    jobs: Mutex<HashMap<u64, Arc<Job>>>,
}

#[derive(Default)]
struct Job {
    /// What the job does, as the page said when starting it (shown in the
    /// header's job list after its dialog is closed).
    label: String,
    progress: Mutex<Progress>,
    cancel: AtomicBool,
}

/// Longest label kept for a job.
const MAX_LABEL: usize = 200;

/// The page's `label` for a job, or `fallback`.
pub(crate) fn label(request: &Value, fallback: String) -> String {
    match request["label"].as_str().map(str::trim) {
        Some(text) if !text.is_empty() => text.chars().take(MAX_LABEL).collect(),
        _ => fallback,
    }
}

#[derive(Default, Clone)]
struct Progress {
    state: &'static str,
    total: Option<u64>,
    done: u64,
    retried: u64,
    unprocessed: u64,
    failed: u64,
    failures: Vec<Value>,
    error: Option<String>,
    millis: u128,
}

/// What a job does to each item.
#[derive(Clone)]
enum Action {
    Delete,
    Set(String, Value),
    Remove(String),
}

impl Jobs {
    /// Starts a job: `{table, action, attribute?, value?, keys? | read?}`.
    pub fn start(&self, client: Client, request: &Value) -> ApiResult {
        let table = required(request, "table")?.to_string();
        let action = match required(request, "action")? {
            "delete" => Action::Delete,
            "set" => Action::Set(
                required(request, "attribute")?.into(),
                request
                    .get("value")
                    .filter(|v| v.is_object())
                    .cloned()
                    .ok_or_else(|| ApiFailure::invalid("`value` is a typed value"))?,
            ),
            "remove" => Action::Remove(required(request, "attribute")?.into()),
            other => return Err(ApiFailure::invalid(format!("no bulk action {other}"))),
        };
        let source = Source::from_request(request)?;
        let schema = KeySchema::describe(&client, &table)?;
        let total = match &source {
            Source::Keys(keys) => Some(keys.len() as u64),
            Source::Read(..) => None,
        };
        let label = label(
            request,
            format!("bulk {} on {table}", required(request, "action")?),
        );
        Ok(self.spawn(label, total, move |job| match action {
            Action::Delete => delete_all(&client, &table, &schema, source, job),
            other => update_all(&client, &table, &schema, &other, source, job),
        }))
    }

    /// Writes `items` (an import) as a job with the same progress report.
    pub fn start_import(
        &self,
        client: Client,
        table: String,
        label: String,
        items: Vec<Value>,
    ) -> Value {
        self.spawn(label, Some(items.len() as u64), move |job| {
            import_all(&client, &table, items, job)
        })
    }

    /// Runs `work` on its own thread as a new job; answers its id.
    fn spawn(
        &self,
        label: String,
        total: Option<u64>,
        work: impl FnOnce(&Job) -> Result<(), String> + Send + 'static,
    ) -> Value {
        let job = Arc::new(Job {
            label,
            ..Job::default()
        });
        {
            let mut p = job.progress.lock().expect("lock");
            p.state = "running";
            p.total = total;
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let mut jobs = self.jobs.lock().expect("lock");
        // Keep the reports of the last KEPT_JOBS jobs; running ones always stay.
        if jobs.len() >= KEPT_JOBS {
            jobs.retain(|old, j| {
                *old + KEPT_JOBS as u64 > id || j.progress.lock().expect("lock").state == "running"
            });
        }
        jobs.insert(id, job.clone());
        drop(jobs);
        std::thread::spawn(move || run(&job, work));
        json!({ "job": id.to_string() })
    }

    fn get(&self, id: &str) -> Result<Arc<Job>, ApiFailure> {
        id.parse::<u64>()
            .ok()
            .and_then(|id| self.jobs.lock().expect("lock").get(&id).cloned())
            .ok_or_else(|| ApiFailure::invalid(format!("no bulk job {id}")))
    }

    pub fn progress(&self, id: &str) -> ApiResult {
        Ok(self.get(id)?.report())
    }

    /// Every kept job, newest first, without failure lists: what the
    /// header's job list shows, so a job stays visible (and cancellable)
    /// after the dialog that started it is closed or the page reloaded.
    pub fn list(&self) -> ApiResult {
        let jobs = self.jobs.lock().expect("lock");
        let mut ids: Vec<&u64> = jobs.keys().collect();
        ids.sort_unstable_by(|a, b| b.cmp(a));
        let list: Vec<Value> = ids
            .into_iter()
            .map(|id| {
                let mut report = jobs[id].report();
                report["id"] = json!(id.to_string());
                report.as_object_mut().map(|r| r.remove("failures"));
                report
            })
            .collect();
        Ok(json!({ "jobs": list }))
    }

    pub fn cancel(&self, id: &str) -> ApiResult {
        self.get(id)?.cancel.store(true, Ordering::Relaxed);
        Ok(json!({ "cancelling": true }))
    }
}

/// How long a preview counts before it answers "at least".
const PREVIEW_BUDGET: std::time::Duration = std::time::Duration::from_secs(10);

/// `{table, read}` → how many items a bulk change on the whole result would
/// touch, counted with `Select: COUNT` pages (nothing is changed): `{count,
/// scanned, readUnits, complete}`, plus the table's average item size so the
/// page can estimate the writes. A read that outlasts PREVIEW_BUDGET answers
/// what it counted with `complete: false`.
pub fn preview(client: &Client, request: &Value) -> ApiResult {
    let table = required(request, "table")?;
    let Source::Read(operation, mut read) = Source::from_request(request)? else {
        return Err(ApiFailure::invalid("a preview counts a `read` form"));
    };
    read["Select"] = json!("COUNT");
    read["ReturnConsumedCapacity"] = json!("TOTAL");
    let started = Instant::now();
    let (mut count, mut scanned, mut units) = (0u64, 0u64, 0f64);
    let complete = loop {
        let page = client.call(&operation, &read)?;
        count += page["Count"].as_u64().unwrap_or(0);
        scanned += page["ScannedCount"].as_u64().unwrap_or(0);
        units += page["ConsumedCapacity"]["CapacityUnits"]
            .as_f64()
            .unwrap_or(0.0);
        match page.get("LastEvaluatedKey") {
            Some(key) if started.elapsed() < PREVIEW_BUDGET => {
                read["ExclusiveStartKey"] = key.clone()
            }
            Some(_) => break false,
            None => break true,
        }
    };
    let described = client.call("DescribeTable", &json!({ "TableName": table }))?;
    let items = described["Table"]["ItemCount"].as_u64().unwrap_or(0);
    let bytes = described["Table"]["TableSizeBytes"].as_u64().unwrap_or(0);
    Ok(json!({
        "count": count, "scanned": scanned, "readUnits": units, "complete": complete,
        "averageItemBytes": bytes.checked_div(items).unwrap_or(0),
    }))
}

impl Job {
    fn report(&self) -> Value {
        let p = self.progress.lock().expect("lock").clone();
        json!({
            "label": self.label, "state": p.state, "total": p.total, "done": p.done,
            "retried": p.retried, "unprocessed": p.unprocessed, "failed": p.failed,
            "failures": p.failures, "error": p.error, "millis": p.millis as u64,
        })
    }
}

/// Where the items come from.
enum Source {
    Keys(Vec<Value>),
    Read(String, Value),
}

impl Source {
    fn from_request(request: &Value) -> Result<Source, ApiFailure> {
        if let Some(keys) = request["keys"].as_array() {
            return Ok(Source::Keys(keys.clone()));
        }
        let form = request
            .get("read")
            .ok_or_else(|| ApiFailure::invalid("give `keys` or a `read` form"))?;
        let (operation, mut request) = read::request(form)?;
        if let Some(map) = request.as_object_mut() {
            for field in [
                "Segment",
                "TotalSegments",
                "Limit",
                "ReturnConsumedCapacity",
            ] {
                map.remove(field);
            }
        }
        Ok(Source::Read(operation, request))
    }

    fn items<'c>(
        self,
        client: &'c Client,
    ) -> Box<dyn Iterator<Item = Result<Value, ClientError>> + 'c> {
        match self {
            Source::Keys(keys) => Box::new(keys.into_iter().map(Ok)),
            Source::Read(operation, request) if operation == "Query" => {
                Box::new(paginate::query(client, request).items())
            }
            Source::Read(_, request) => Box::new(paginate::scan(client, request).items()),
        }
    }
}

fn run(job: &Job, work: impl FnOnce(&Job) -> Result<(), String>) {
    let started = Instant::now();
    let outcome = work(job);
    let mut p = job.progress.lock().expect("lock");
    p.millis = started.elapsed().as_millis();
    p.state = match outcome {
        Err(message) => {
            p.error = Some(message);
            "failed"
        }
        Ok(()) if job.cancel.load(Ordering::Relaxed) => "cancelled",
        Ok(()) => "done",
    };
}

/// Puts every item with one BatchWriter, publishing counts as it goes.
fn import_all(client: &Client, table: &str, items: Vec<Value>, job: &Job) -> Result<(), String> {
    let mut writer = BatchWriter::new(client, table);
    let publish = |writer: &BatchWriter, job: &Job| {
        let report = writer.report();
        let mut p = job.progress.lock().expect("lock");
        p.done = report.written;
        p.retried = report.retries;
        p.unprocessed = report.unprocessed_returned;
    };
    for item in items {
        if job.cancel.load(Ordering::Relaxed) {
            break;
        }
        writer.put(item).map_err(|e| e.to_string())?;
        publish(&writer, job);
    }
    writer.flush().map_err(|e| e.to_string())?;
    publish(&writer, job);
    let mut p = job.progress.lock().expect("lock");
    for not_written in &writer.report().not_written {
        let item = not_written.request["PutRequest"]["Item"].clone();
        record_failure(&mut p, item, not_written.reason.clone());
    }
    Ok(())
}

fn key_of(schema: &KeySchema, item: &Value) -> Result<Value, String> {
    let map = item.as_object().ok_or("an item is not an object")?;
    schema.key_of(map).map(Value::Object)
}

fn record_failure(p: &mut Progress, key: Value, reason: String) {
    p.failed += 1;
    if p.failures.len() < MAX_LISTED_FAILURES {
        p.failures.push(json!({ "key": key, "reason": reason }));
    }
}

/// Writer threads of a bulk delete (as `ferrodyn import`'s default).
const WRITERS: usize = 4;

/// Reads keys on this thread and hands chunks of 25 to [`WRITERS`] threads,
/// each with its own BatchWriter (backoff and jitter per batch).
fn delete_all(
    client: &Client,
    table: &str,
    schema: &KeySchema,
    source: Source,
    job: &Job,
) -> Result<(), String> {
    let (tx, rx) = mpsc::sync_channel::<Vec<Value>>(WRITERS * 2);
    let rx = Mutex::new(rx);
    std::thread::scope(|scope| {
        let writers: Vec<_> = (0..WRITERS)
            .map(|_| scope.spawn(|| delete_writer(client, table, &rx, job)))
            .collect();
        let read = read_keys(client, schema, source, job, &tx);
        drop(tx);
        let mut outcome = read;
        for writer in writers {
            let written = writer
                .join()
                .unwrap_or_else(|_| Err("a writer thread panicked".into()));
            if let Err(e) = written {
                outcome = outcome.and(Err(e));
            }
        }
        outcome
    })
}

fn read_keys(
    client: &Client,
    schema: &KeySchema,
    source: Source,
    job: &Job,
    tx: &mpsc::SyncSender<Vec<Value>>,
) -> Result<(), String> {
    let mut chunk = Vec::with_capacity(MAX_WRITE_BATCH);
    for item in source.items(client) {
        if job.cancel.load(Ordering::Relaxed) {
            return Ok(());
        }
        let item = item.map_err(|e| e.to_string())?;
        match key_of(schema, &item) {
            Ok(key) => chunk.push(key),
            Err(reason) => record_failure(&mut job.progress.lock().expect("lock"), item, reason),
        }
        if chunk.len() == MAX_WRITE_BATCH && tx.send(std::mem::take(&mut chunk)).is_err() {
            return Ok(()); // every writer stopped; they say why
        }
    }
    if !chunk.is_empty() {
        let _ = tx.send(chunk);
    }
    Ok(())
}

/// One writer: deletes each chunk it receives, publishing its counts.
fn delete_writer(
    client: &Client,
    table: &str,
    rx: &Mutex<mpsc::Receiver<Vec<Value>>>,
    job: &Job,
) -> Result<(), String> {
    let mut writer = BatchWriter::new(client, table);
    let mut published = WriteReport::default();
    loop {
        let Ok(chunk) = rx.lock().expect("lock").recv() else {
            break;
        };
        if job.cancel.load(Ordering::Relaxed) {
            continue; // drain without writing
        }
        for key in chunk {
            writer.delete(key).map_err(|e| e.to_string())?;
        }
        writer.flush().map_err(|e| e.to_string())?;
        let report = writer.report();
        let mut p = job.progress.lock().expect("lock");
        p.done += report.written - published.written;
        p.retried += report.retries - published.retries;
        p.unprocessed += report.unprocessed_returned - published.unprocessed_returned;
        for not_written in &report.not_written[published.not_written.len()..] {
            let key = not_written.request["DeleteRequest"]["Key"].clone();
            record_failure(&mut p, key, not_written.reason.clone());
        }
        published = report.clone();
    }
    Ok(())
}

/// The UpdateItem fields of a set/remove, guarded so it never creates items.
fn update_fields(schema: &KeySchema, action: &Action) -> Map<String, Value> {
    let mut b = Builder::new();
    let p = b.placeholders();
    let guard = format!("attribute_exists({})", p.name(&schema.partition));
    let update = match action {
        Action::Set(name, value) => {
            let alias = p.name(name);
            let v = p.value(name, value.clone());
            format!("SET {alias} = {v}")
        }
        Action::Remove(name) => format!("REMOVE {}", p.name(name)),
        Action::Delete => unreachable!("deletes are batched"),
    };
    b.add_raw(Kind::Condition, guard)
        .add_raw(Kind::Update, update);
    b.build().map(|e| e.request_fields()).unwrap_or_default()
}

fn update_all(
    client: &Client,
    table: &str,
    schema: &KeySchema,
    action: &Action,
    source: Source,
    job: &Job,
) -> Result<(), String> {
    let fields = update_fields(schema, action);
    let mut rng = Rng::from_entropy();
    for item in source.items(client) {
        if job.cancel.load(Ordering::Relaxed) {
            break;
        }
        let item = item.map_err(|e| e.to_string())?;
        let key = match key_of(schema, &item) {
            Ok(key) => key,
            Err(reason) => {
                record_failure(&mut job.progress.lock().expect("lock"), item, reason);
                continue;
            }
        };
        let mut request = fields.clone();
        request.insert("TableName".into(), json!(table));
        request.insert("Key".into(), key.clone());
        let mut backoff = Backoff::new(RetryPolicy::default(), Rng::seeded(rng.next_u64()));
        loop {
            match client.call("UpdateItem", &Value::Object(request.clone())) {
                Ok(_) => {
                    job.progress.lock().expect("lock").done += 1;
                    break;
                }
                Err(e) if e.is_retryable() => match backoff.next_delay() {
                    Some(delay) => {
                        job.progress.lock().expect("lock").retried += 1;
                        std::thread::sleep(delay);
                    }
                    None => {
                        record_failure(&mut job.progress.lock().expect("lock"), key, e.to_string());
                        break;
                    }
                },
                Err(e) => {
                    record_failure(&mut job.progress.lock().expect("lock"), key, e.to_string());
                    break;
                }
            }
        }
    }
    Ok(())
}
