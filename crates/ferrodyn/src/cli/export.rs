//! `ferrodyn export`: write a table (or one partition, with --key) to a file
//! by paging through Scan (or Query), optionally with parallel Scan segments.

use super::formats::{FileFormat, ItemWriter};
use super::keys::{key_schema, KeySchema};
use super::read::key_condition;
use super::{add_expression_maps, parse_names, parse_values, CliResult, Common, OutputFormat};
use clap::Args;
use ferrodyn_client::paginate;
use ferrodyn_client::{Client, ClientError};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde_json::{json, Value};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

#[derive(Args)]
#[command(after_help = "Examples:\n  \
    ferrodyn export users users.jsonl\n  \
    ferrodyn export users - --format csv > users.csv\n  \
    ferrodyn export orders cust-1.ddb.json --key cust-1\n  \
    ferrodyn export big big.ddb.json --segments 4")]
pub struct ExportArgs {
    /// The table to read.
    table: String,
    /// The output file, or `-` for standard output.
    file: PathBuf,
    /// The output format [default: from the file's extension; jsonl for -].
    #[arg(long, value_enum)]
    format: Option<FileFormat>,
    /// Export only this partition key's items (a Query instead of a Scan).
    #[arg(long, value_name = "PARTITION_KEY_VALUE", conflicts_with = "segments")]
    key: Option<String>,
    /// Read with N parallel Scan segments (faster on big tables; the output
    /// is then not in scan order).
    #[arg(long, value_name = "N", default_value_t = 1)]
    segments: u32,
    /// Read a secondary index instead of the table.
    #[arg(long, value_name = "NAME")]
    index: Option<String>,
    /// Export only items matching this filter expression.
    #[arg(long, value_name = "EXPRESSION")]
    filter: Option<String>,
    /// Attribute-name placeholders for --filter, as JSON.
    #[arg(long, value_name = "JSON")]
    names: Option<String>,
    /// Value placeholders for --filter, as plain JSON.
    #[arg(long, value_name = "JSON")]
    values: Option<String>,
    /// In json/jsonl/csv keep sets and binary typed ({"$SS": [..]}), so an
    /// import of the file restores them exactly.
    #[arg(long)]
    typed: bool,
    /// No progress display.
    #[arg(long)]
    no_progress: bool,
    #[command(flatten)]
    common: Common,
}

pub fn run(args: ExportArgs) -> CliResult {
    let to_stdout = args.file.as_os_str() == "-";
    let format = resolve_format(&args, to_stdout)?;
    let client = args.common.connect()?;
    let schema = key_schema(&client, &args.table, args.index.as_deref())?;
    let out = open_output(&args.file, to_stdout)?;
    let writer = Mutex::new(ItemWriter::new(out, format, args.typed, schema.names()));
    let request = read_request(&args)?;
    let progress = spinner(args.no_progress || to_stdout);
    let started = Instant::now();
    let write_page = |_segment: u32, page: &Value| -> Result<(), ClientError> {
        let items = page
            .get("Items")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let count = items.len() as u64;
        let mut writer = writer.lock().expect("no panic holding the lock");
        for item in items {
            writer.write(item).map_err(ClientError::Transport)?;
        }
        progress.inc(count);
        Ok(())
    };
    read_pages(&args, &client, &schema, request, write_page)?;
    progress.finish_and_clear();
    let writer = writer.into_inner().expect("scan threads have finished");
    let count = writer.count();
    writer.finish()?.report();
    report(&args, count, started.elapsed().as_secs_f64(), to_stdout);
    Ok(())
}

/// `--format`, else told from the file's name (JSONL for standard output).
fn resolve_format(args: &ExportArgs, to_stdout: bool) -> Result<FileFormat, String> {
    match args.format {
        Some(f) => Ok(f),
        None if to_stdout => Ok(FileFormat::Jsonl),
        None => FileFormat::from_path(&args.file).ok_or_else(|| {
            format!(
                "cannot tell the format of {} from its name: add --format",
                args.file.display()
            )
        }),
    }
}

fn open_output(path: &Path, to_stdout: bool) -> Result<Box<dyn Write + Send>, String> {
    if to_stdout {
        return Ok(Box::new(std::io::BufWriter::new(std::io::stdout())));
    }
    let file = std::fs::File::create(path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    Ok(Box::new(std::io::BufWriter::new(file)))
}

/// The Scan (or Query, once a key condition is added) request: table,
/// index, filter and its placeholders.
fn read_request(args: &ExportArgs) -> Result<Value, String> {
    let mut request = json!({ "TableName": args.table });
    if let Some(index) = &args.index {
        request["IndexName"] = json!(index);
    }
    if let Some(filter) = &args.filter {
        request["FilterExpression"] = json!(filter);
    }
    let names = args
        .names
        .as_deref()
        .map(parse_names)
        .transpose()?
        .unwrap_or_default();
    let values = args
        .values
        .as_deref()
        .map(|v| parse_values(v, false))
        .transpose()?
        .unwrap_or_default();
    add_expression_maps(&mut request, names, values);
    Ok(request)
}

fn spinner(hidden: bool) -> ProgressBar {
    let progress = if hidden {
        ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden())
    } else {
        ProgressBar::new_spinner()
    };
    progress.set_style(
        ProgressStyle::with_template("{spinner} {pos} items  {per_sec}").expect("valid template"),
    );
    progress
}

/// Every page of one partition (`--key`: a Query) or of the whole table or
/// index (a parallel Scan over `--segments`), handed to `write_page`.
fn read_pages(
    args: &ExportArgs,
    client: &Client,
    schema: &KeySchema,
    mut request: Value,
    write_page: impl Fn(u32, &Value) -> Result<(), ClientError> + Sync,
) -> CliResult {
    let Some(key) = &args.key else {
        return paginate::parallel_scan(client, request, args.segments, write_page)
            .map(|_summary| ())
            .map_err(|e| match e {
                // Output errors travel as Transport; show them as they are.
                ClientError::Transport(message) => message,
                other => other.to_string(),
            });
    };
    let (expression, names, values) = key_condition(schema, key, None);
    request["KeyConditionExpression"] = json!(expression);
    add_expression_maps(&mut request, names, values);
    for page in paginate::query(client, request) {
        write_page(0, &page.map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// The closing line: for people on standard error, or as JSON.
fn report(args: &ExportArgs, count: u64, elapsed: f64, to_stdout: bool) {
    if args.common.output == OutputFormat::Table {
        eprintln!(
            "exported {count} item(s) from {} in {elapsed:.1}s ({:.0} items/s)",
            args.table,
            count as f64 / elapsed.max(1e-9)
        );
        return;
    }
    let report = json!({ "table": args.table, "items": count, "seconds": elapsed });
    if to_stdout {
        eprintln!("{report}");
    } else {
        println!("{report}");
    }
}
