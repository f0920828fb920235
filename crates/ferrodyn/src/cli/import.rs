//! `ferrodyn import`: load a file into a table through BatchWriteItem.
//!
//! The reader (this thread) cuts the input into chunks of 25 records and
//! hands them to `--concurrency` writer threads, each sending its chunk with
//! a [`BatchWriter`] (unprocessed items retried with capped exponential
//! backoff and full jitter). Chunks finish out of order; the checkpoint
//! records only the contiguous prefix of finished chunks, so a rerun after
//! an interruption starts exactly after the last record known to be done.

use super::checkpoint::Checkpoint;
use super::formats::{read_records, FileFormat, Record};
use super::{CliResult, Common, OutputFormat};
use clap::Args;
use ferrodyn_client::backoff::RetryPolicy;
use ferrodyn_client::batch::{BatchWriter, NotWritten, WriteReport, MAX_WRITE_BATCH};
use ferrodyn_client::{Client, ClientError};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

#[derive(Args)]
#[command(after_help = "Examples:\n  \
    ferrodyn import users users.jsonl --checkpoint users.ckpt\n  \
    ferrodyn import users export.csv --max-attempts 20 --failed failed.ddb.json\n\n\
    An interrupted import with --checkpoint resumes where it stopped when the\n\
    same command is run again; records already written are not sent again.")]
pub struct ImportArgs {
    /// The table to write into (it must exist).
    table: String,
    /// The input file.
    file: PathBuf,
    /// The file's format [default: from its extension: .json, .jsonl,
    /// .csv, .ddb.json].
    #[arg(long, value_enum)]
    format: Option<FileFormat>,
    /// Save progress here after every batch, and resume from it when the
    /// same import runs again.
    #[arg(long, value_name = "PATH")]
    checkpoint: Option<PathBuf>,
    /// Write the items that could not be written here (DynamoDB JSON lines,
    /// ready to import again).
    #[arg(long, value_name = "PATH")]
    failed: Option<PathBuf>,
    /// Attempts per batch before its unprocessed items are given up on.
    #[arg(long, default_value_t = 10)]
    max_attempts: u32,
    /// Backoff ceiling before the first retry, doubling per retry.
    #[arg(long, value_name = "MS", default_value_t = 50)]
    backoff_base_ms: u64,
    /// The largest backoff ceiling.
    #[arg(long, value_name = "MS", default_value_t = 5000)]
    backoff_cap_ms: u64,
    /// Batches in flight at once. With more than 1, if the input holds the
    /// same key twice, which version ends up stored is not defined.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=64))]
    concurrency: u32,
    /// Stop after N records in this run (import in slices; rerun with the
    /// same --checkpoint to continue).
    #[arg(long, value_name = "N")]
    max_items: Option<u64>,
    /// No progress bar.
    #[arg(long)]
    no_progress: bool,
    #[command(flatten)]
    common: Common,
}

/// A slice of input records for one BatchWriteItem (at most 25 requests).
struct Chunk {
    seq: u64,
    /// Record number just past the chunk's last record.
    end: u64,
    records: u64,
    requests: Vec<Value>,
    /// Records that could not become items: (record number, reason).
    invalid: Vec<(u64, String)>,
}

/// A writer thread's answer for one chunk.
struct Done {
    seq: u64,
    end: u64,
    records: u64,
    result: Result<WriteReport, ClientError>,
    invalid: Vec<(u64, String)>,
}

pub fn run(args: ImportArgs) -> CliResult {
    let format = resolve_format(&args)?;
    let mut checkpoint = load_checkpoint(&args, format)?;
    if checkpoint.complete {
        eprintln!(
            "this import is already complete (checkpoint {}); nothing to do",
            path_text(&args.checkpoint)
        );
        return print_report(&args, &checkpoint, &Outcome::default(), Duration::ZERO);
    }
    checkpoint.runs += 1;
    if checkpoint.records_done > 0 {
        eprintln!(
            "resuming after record {} (checkpoint {})",
            checkpoint.records_done,
            path_text(&args.checkpoint)
        );
    }
    let client = args.common.connect()?;
    let records = read_records(&args.file, format)?;
    let mut collector = Collector {
        progress: progress_bar(records.total, checkpoint.records_done, args.no_progress),
        tracker: Tracker::new(),
        failed_file: open_failed_file(&args.failed)?,
        checkpoint_path: args.checkpoint.clone(),
    };
    let started = Instant::now();
    let mut outcome = Outcome::default();
    let stopped = write_all(
        &args,
        &client,
        records.iter,
        &mut collector,
        &mut checkpoint,
        &mut outcome,
    )?;
    collector.progress.finish_and_clear();
    checkpoint.complete = !stopped;
    if let Some(path) = &args.checkpoint {
        checkpoint.save(path)?;
    }
    print_report(&args, &checkpoint, &outcome, started.elapsed())?;
    final_verdict(&args, &checkpoint, &outcome)
}

/// The file's format: `--format`, else told from its name.
fn resolve_format(args: &ImportArgs) -> Result<FileFormat, String> {
    match args.format {
        Some(f) => Ok(f),
        None => FileFormat::from_path(&args.file).ok_or_else(|| {
            format!(
                "cannot tell the format of {} from its name: add --format",
                args.file.display()
            )
        }),
    }
}

/// The saved checkpoint of this very import, or a fresh one; a checkpoint
/// of another import (table, file or format) is refused rather than reused.
fn load_checkpoint(args: &ImportArgs, format: FileFormat) -> Result<Checkpoint, String> {
    let source = std::fs::canonicalize(&args.file)
        .map_err(|e| format!("cannot open {}: {e}", args.file.display()))?;
    let source_bytes = std::fs::metadata(&source).map_err(|e| e.to_string())?.len();
    let fresh = Checkpoint {
        table: args.table.clone(),
        source: source.display().to_string(),
        source_bytes,
        format: format.name().to_string(),
        records_done: 0,
        written: 0,
        not_written: 0,
        calls: 0,
        retries: 0,
        unprocessed_returned: 0,
        runs: 0,
        complete: false,
    };
    let Some(path) = &args.checkpoint else {
        return Ok(fresh);
    };
    match Checkpoint::load(path)? {
        Some(saved) if saved.same_import(&fresh) => Ok(saved),
        Some(_) => Err(format!(
            "checkpoint {} belongs to another import (table, file or format differ): \
             delete it or choose another --checkpoint",
            path.display()
        )),
        None => Ok(fresh),
    }
}

/// `--failed PATH`, opened for appending (a resumed import adds to it).
fn open_failed_file(path: &Option<PathBuf>) -> Result<Option<std::fs::File>, String> {
    let Some(path) = path else {
        return Ok(None);
    };
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map(Some)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))
}

/// What the results side of the pipeline keeps: progress, the reorder
/// buffer, where failed records and the checkpoint go.
struct Collector {
    progress: ProgressBar,
    tracker: Tracker,
    failed_file: Option<std::fs::File>,
    checkpoint_path: Option<PathBuf>,
}

impl Collector {
    /// Takes one finished chunk; applies every chunk that is now next in
    /// record order, so the checkpoint only ever covers a finished prefix.
    fn take(
        &mut self,
        done: Done,
        checkpoint: &mut Checkpoint,
        outcome: &mut Outcome,
    ) -> CliResult {
        self.progress.inc(done.records);
        self.tracker.finish(done);
        while let Some(done) = self.tracker.next_in_order() {
            apply(done, checkpoint, outcome, self.failed_file.as_mut())?;
            if let Some(path) = &self.checkpoint_path {
                checkpoint.save(path)?;
            }
        }
        Ok(())
    }
}

/// Runs the pipeline: `--concurrency` writer threads take chunks of up to
/// 25 records from the reader (this thread) and report back. Returns whether
/// the import stopped before the end (`--max-items` or an error).
fn write_all(
    args: &ImportArgs,
    client: &Client,
    records: Box<dyn Iterator<Item = Record> + Send>,
    collector: &mut Collector,
    checkpoint: &mut Checkpoint,
    outcome: &mut Outcome,
) -> Result<bool, String> {
    let policy = RetryPolicy {
        base: Duration::from_millis(args.backoff_base_ms),
        cap: Duration::from_millis(args.backoff_cap_ms),
        max_attempts: args.max_attempts.max(1),
    };
    std::thread::scope(|scope| -> Result<bool, String> {
        let (chunk_tx, chunk_rx) = mpsc::sync_channel::<Chunk>(args.concurrency as usize * 2);
        let chunk_rx = std::sync::Arc::new(std::sync::Mutex::new(chunk_rx));
        let (done_tx, done_rx) = mpsc::channel::<Done>();
        for _ in 0..args.concurrency {
            let (chunk_rx, done_tx, table) = (chunk_rx.clone(), done_tx.clone(), &args.table);
            scope.spawn(move || writer_thread(client, table, policy, &chunk_rx, &done_tx));
        }
        // Only the writers hold the receiver and the result sender: if every
        // writer stops, sending a chunk fails instead of blocking forever,
        // and the results loop below ends.
        drop(chunk_rx);
        drop(done_tx);
        let pipe = Pipe {
            chunks: chunk_tx,
            results: done_rx,
        };
        pipe.run(args, records, collector, checkpoint, outcome)
    })
}

/// The reader's ends of the pipeline's two channels.
struct Pipe {
    chunks: mpsc::SyncSender<Chunk>,
    results: mpsc::Receiver<Done>,
}

impl Pipe {
    /// Skips what the checkpoint says is done, cuts the rest into chunks,
    /// and collects results as they come; then drains the results.
    fn run(
        self,
        args: &ImportArgs,
        records: Box<dyn Iterator<Item = Record> + Send>,
        collector: &mut Collector,
        checkpoint: &mut Checkpoint,
        outcome: &mut Outcome,
    ) -> Result<bool, String> {
        let (mut seq, mut taken, mut index) = (0u64, 0u64, 0u64);
        let mut chunk = new_chunk(seq);
        let mut send_failed = false;
        let mut reached_end = true;
        for record in records {
            index += 1;
            if index <= checkpoint.records_done {
                continue;
            }
            if args.max_items.is_some_and(|max| taken >= max) || outcome.error.is_some() {
                reached_end = false;
                break;
            }
            taken += 1;
            add_record(&mut chunk, index, record);
            if chunk.requests.len() == MAX_WRITE_BATCH {
                seq += 1;
                if self
                    .chunks
                    .send(std::mem::replace(&mut chunk, new_chunk(seq)))
                    .is_err()
                {
                    send_failed = true;
                    break;
                }
            }
            while let Ok(done) = self.results.try_recv() {
                collector.take(done, checkpoint, outcome)?;
            }
        }
        if chunk.records > 0 && !send_failed {
            let _ = self.chunks.send(chunk);
        }
        drop(self.chunks);
        for done in self.results {
            collector.take(done, checkpoint, outcome)?;
        }
        Ok(!reached_end || outcome.error.is_some())
    }
}

/// Adds record number `index` to `chunk`: a PutRequest, or an invalid record.
fn add_record(chunk: &mut Chunk, index: u64, record: Record) {
    chunk.records += 1;
    chunk.end = index;
    match record {
        Ok(item) => chunk
            .requests
            .push(json!({ "PutRequest": { "Item": item } })),
        Err(reason) => chunk.invalid.push((index, reason)),
    }
}

/// The command's exit: an error that stopped the import (with how to
/// resume), or records that were not written.
fn final_verdict(args: &ImportArgs, checkpoint: &Checkpoint, outcome: &Outcome) -> CliResult {
    if let Some(error) = &outcome.error {
        return Err(format!(
            "import stopped: {error}. {}",
            match &args.checkpoint {
                Some(_) => format!(
                    "Run the same command again to resume after record {}.",
                    checkpoint.records_done
                ),
                None => "Use --checkpoint to be able to resume.".to_string(),
            }
        ));
    }
    if outcome.not_written > 0 {
        return Err(format!(
            "{} record(s) were not written{}",
            outcome.not_written,
            match &args.failed {
                Some(path) => format!(" (saved to {})", path.display()),
                None => " (add --failed PATH to keep them)".to_string(),
            }
        ));
    }
    Ok(())
}

fn new_chunk(seq: u64) -> Chunk {
    Chunk {
        seq,
        end: 0,
        records: 0,
        requests: Vec::with_capacity(MAX_WRITE_BATCH),
        invalid: Vec::new(),
    }
}

fn writer_thread(
    client: &Client,
    table: &str,
    policy: RetryPolicy,
    chunks: &std::sync::Mutex<mpsc::Receiver<Chunk>>,
    done: &mpsc::Sender<Done>,
) {
    loop {
        let chunk = match chunks.lock().expect("no panic holding the lock").recv() {
            Ok(chunk) => chunk,
            Err(_) => return,
        };
        let mut writer = BatchWriter::new(client, table).with_policy(policy);
        let result = chunk
            .requests
            .into_iter()
            .try_for_each(|r| writer.push(r))
            .and_then(|_| writer.finish());
        let failed = result.is_err();
        let _ = done.send(Done {
            seq: chunk.seq,
            end: chunk.end,
            records: chunk.records,
            result,
            invalid: chunk.invalid,
        });
        if failed {
            // The endpoint is failing; leave the remaining chunks unsent so
            // the checkpoint stays at the last good place.
            return;
        }
    }
}

/// Hands back finished chunks in input order.
struct Tracker {
    next_seq: u64,
    finished: BTreeMap<u64, Done>,
}

impl Tracker {
    fn new() -> Tracker {
        Tracker {
            next_seq: 0,
            finished: BTreeMap::new(),
        }
    }

    fn finish(&mut self, done: Done) {
        self.finished.insert(done.seq, done);
    }

    fn next_in_order(&mut self) -> Option<Done> {
        let done = self.finished.remove(&self.next_seq)?;
        self.next_seq += 1;
        Some(done)
    }
}

/// What this run did (the checkpoint holds the totals across runs).
#[derive(Default)]
struct Outcome {
    report: WriteReport,
    invalid: u64,
    not_written: u64,
    /// The first failure that stopped the import.
    error: Option<String>,
    examples: Vec<String>,
}

/// Folds a finished chunk into the checkpoint and this run's outcome. After
/// a failed chunk nothing more is applied, so the checkpoint never passes a
/// record that was not handled.
fn apply(
    done: Done,
    checkpoint: &mut Checkpoint,
    outcome: &mut Outcome,
    failed_file: Option<&mut std::fs::File>,
) -> CliResult {
    if outcome.error.is_some() {
        return Ok(());
    }
    let report = match done.result {
        Ok(report) => report,
        Err(e) => {
            outcome.error = Some(e.to_string());
            return Ok(());
        }
    };
    let mut lost: Vec<&NotWritten> = report.not_written.iter().collect();
    lost.sort_by_key(|n| n.reason.clone());
    for (record, reason) in &done.invalid {
        if outcome.examples.len() < 5 {
            outcome.examples.push(format!("record {record}: {reason}"));
        }
    }
    for n in &lost {
        if outcome.examples.len() < 5 {
            outcome
                .examples
                .push(format!("{}: {}", short(&n.request), n.reason));
        }
    }
    if let Some(file) = failed_file {
        for n in &lost {
            if let Some(item) = n.request.get("PutRequest").and_then(|p| p.get("Item")) {
                writeln!(file, "{item}")
                    .map_err(|e| format!("cannot write the failed file: {e}"))?;
            }
        }
    }
    let lost_count = report.not_written.len() as u64 + done.invalid.len() as u64;
    outcome.invalid += done.invalid.len() as u64;
    outcome.not_written += lost_count;
    outcome.report.merge(&WriteReport {
        not_written: Vec::new(),
        ..report.clone()
    });
    checkpoint.records_done = done.end;
    checkpoint.written += report.written;
    checkpoint.not_written += lost_count;
    checkpoint.calls += report.calls;
    checkpoint.retries += report.retries;
    checkpoint.unprocessed_returned += report.unprocessed_returned;
    Ok(())
}

fn short(request: &Value) -> String {
    let text = request.to_string();
    if text.chars().count() > 120 {
        format!("{}…", text.chars().take(119).collect::<String>())
    } else {
        text
    }
}

fn progress_bar(total: Option<u64>, done: u64, hidden: bool) -> ProgressBar {
    let bar = match total {
        Some(total) => ProgressBar::new(total),
        None => ProgressBar::new_spinner(),
    };
    if hidden {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} items  {per_sec}  eta {eta}")
            .expect("the template is valid"),
    );
    bar.set_position(done);
    bar.reset_eta();
    bar
}

fn path_text(path: &Option<PathBuf>) -> String {
    path.as_deref()
        .map(Path::display)
        .map(|p| p.to_string())
        .unwrap_or_default()
}

/// The final report: to stdout as JSON with `--output json`/`jsonl`/`raw`,
/// otherwise as text on stderr.
fn print_report(
    args: &ImportArgs,
    checkpoint: &Checkpoint,
    outcome: &Outcome,
    elapsed: Duration,
) -> CliResult {
    let r = &outcome.report;
    let rate = if elapsed.as_secs_f64() > 0.0 {
        r.written as f64 / elapsed.as_secs_f64()
    } else {
        0.0
    };
    let report = json!({
        "table": args.table,
        "file": args.file.display().to_string(),
        "this_run": {
            "written": r.written,
            "not_written": outcome.not_written,
            "invalid_records": outcome.invalid,
            "batch_calls": r.calls,
            "retries": r.retries,
            "unprocessed_returned": r.unprocessed_returned,
            "max_attempts_used": r.max_attempts_used,
            "backoff_seconds": r.backoff_time.as_secs_f64(),
            "seconds": elapsed.as_secs_f64(),
            "items_per_second": rate.round(),
        },
        "total": {
            "records_done": checkpoint.records_done,
            "written": checkpoint.written,
            "not_written": checkpoint.not_written,
            "batch_calls": checkpoint.calls,
            "retries": checkpoint.retries,
            "unprocessed_returned": checkpoint.unprocessed_returned,
            "runs": checkpoint.runs,
        },
        "complete": checkpoint.complete,
        "error": outcome.error,
        "examples": outcome.examples,
    });
    if args.common.output != OutputFormat::Table {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).expect("plain data always serialises")
        );
        return Ok(());
    }
    eprintln!(
        "{} {} item(s) into {} in {:.1}s ({:.0} items/s); {} not written",
        if checkpoint.complete {
            "imported"
        } else {
            "stopped after writing"
        },
        r.written,
        args.table,
        elapsed.as_secs_f64(),
        rate,
        outcome.not_written,
    );
    eprintln!(
        "  {} BatchWriteItem calls, {} retries, {} unprocessed items sent again, at most {} attempt(s) for a batch, {:.1}s backing off",
        r.calls,
        r.retries,
        r.unprocessed_returned,
        r.max_attempts_used,
        r.backoff_time.as_secs_f64()
    );
    if checkpoint.runs > 1 || !checkpoint.complete {
        eprintln!(
            "  all runs: {} records done, {} written, {} not written, {} run(s)",
            checkpoint.records_done, checkpoint.written, checkpoint.not_written, checkpoint.runs
        );
    }
    for example in &outcome.examples {
        eprintln!("  not written: {example}");
    }
    Ok(())
}
