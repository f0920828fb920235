//! `ferrodyn query` and `ferrodyn scan`: many items, one page at a time.
//!
//! Without `--paginate` or `--limit` only the first page (up to 1 MB) is
//! read, and stderr says how to get the rest: reading a whole table should be
//! a decision, since on AWS it is billed.

use super::keys::{key_schema, typed_value, KeySchema};
use super::output::ItemStream;
use super::{
    add_expression_maps, parse_item, parse_names, parse_values, CliResult, Common, Expression,
    OutputFormat,
};
use clap::Args;
use ferrodyn_client::paginate::{self, Pages};
use ferrodyn_client::Client;
use serde_json::{json, Map, Value};
use std::sync::Mutex;

/// Filter, projection and paging flags shared by query and scan.
#[derive(Args)]
pub struct ReadArgs {
    /// Read a secondary index instead of the table.
    #[arg(long, value_name = "NAME")]
    index: Option<String>,
    /// Keep only items matching this filter expression, e.g. 'age > :min'.
    /// Filtering happens after reading, so it saves output, not capacity.
    #[arg(long, value_name = "EXPRESSION")]
    filter: Option<String>,
    /// Attribute-name placeholders, as JSON: '{"#s": "status"}'.
    #[arg(long, value_name = "JSON")]
    names: Option<String>,
    /// Value placeholders, as JSON: '{":min": 18}'.
    #[arg(long, value_name = "JSON")]
    values: Option<String>,
    /// Only these attributes, as a projection expression.
    #[arg(long, value_name = "EXPRESSION")]
    projection: Option<String>,
    /// Return at most N items (pages are followed until N are found).
    #[arg(long, value_name = "N", conflicts_with = "paginate")]
    limit: Option<u64>,
    /// Follow every page to the end.
    #[arg(long)]
    paginate: bool,
    /// Continue after this key (printed by a previous run that stopped early).
    #[arg(long, value_name = "JSON")]
    start_key: Option<String>,
    /// Strongly consistent reads.
    #[arg(long)]
    consistent: bool,
    /// --values, --start-key and key values are DynamoDB JSON.
    #[arg(long)]
    raw: bool,
    /// In json/jsonl output keep sets and binary typed ({"$SS": [..]}).
    #[arg(long)]
    typed: bool,
}

#[derive(Args)]
#[command(after_help = "Examples:\n  \
    ferrodyn query orders cust-1 --sk-begins-with 2024- --paginate\n  \
    ferrodyn query orders cust-1 --sk-between 100 200 --descending --limit 5\n  \
    ferrodyn query orders cust-1 --filter '#s = :s' --names '{\"#s\":\"status\"}' --values '{\":s\":\"open\"}'")]
pub struct QueryArgs {
    /// The table's name.
    table: String,
    /// The partition key's value (typed from the table's key schema).
    partition: String,
    /// Sort key equals VALUE.
    #[arg(long, value_name = "VALUE", group = "sk")]
    sk_eq: Option<String>,
    /// Sort key < VALUE.
    #[arg(long, value_name = "VALUE", group = "sk")]
    sk_lt: Option<String>,
    /// Sort key <= VALUE.
    #[arg(long, value_name = "VALUE", group = "sk")]
    sk_le: Option<String>,
    /// Sort key > VALUE.
    #[arg(long, value_name = "VALUE", group = "sk")]
    sk_gt: Option<String>,
    /// Sort key >= VALUE.
    #[arg(long, value_name = "VALUE", group = "sk")]
    sk_ge: Option<String>,
    /// Sort key starts with PREFIX (strings and binary).
    #[arg(long, value_name = "PREFIX", group = "sk")]
    sk_begins_with: Option<String>,
    /// Sort key between LOW and HIGH, both included.
    #[arg(long, num_args = 2, value_names = ["LOW", "HIGH"], group = "sk")]
    sk_between: Option<Vec<String>>,
    /// Newest first: descending sort-key order.
    #[arg(long)]
    descending: bool,
    #[command(flatten)]
    read: ReadArgs,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
pub struct ScanArgs {
    /// The table's name.
    table: String,
    /// Read with N parallel segments (with --paginate; order is lost).
    #[arg(long, value_name = "N", default_value_t = 1)]
    segments: u32,
    #[command(flatten)]
    read: ReadArgs,
    #[command(flatten)]
    common: Common,
}

/// The key condition of a query: `#key_pk = :key_pk` and an optional sort
/// key clause, with names and values aliased so reserved words work.
pub fn key_condition(
    schema: &KeySchema,
    partition: &str,
    sort: Option<(&str, Vec<&str>)>,
) -> Expression {
    let mut names = Map::from_iter([("#key_pk".to_string(), json!(schema.partition.name))]);
    let mut values = Map::from_iter([(
        ":key_pk".to_string(),
        typed_value(partition, &schema.partition.kind),
    )]);
    let mut expression = "#key_pk = :key_pk".to_string();
    if let (Some((op, operands)), Some(sk)) = (sort, &schema.sort) {
        names.insert("#key_sk".into(), json!(sk.name));
        for (i, operand) in operands.iter().enumerate() {
            values.insert(format!(":key_sk{i}"), typed_value(operand, &sk.kind));
        }
        expression.push_str(&match op {
            "begins_with" => " AND begins_with(#key_sk, :key_sk0)".to_string(),
            "between" => " AND #key_sk BETWEEN :key_sk0 AND :key_sk1".to_string(),
            op => format!(" AND #key_sk {op} :key_sk0"),
        });
    }
    (expression, names, values)
}

pub fn query(args: QueryArgs) -> CliResult {
    let client = args.common.connect()?;
    let schema = key_schema(&client, &args.table, args.read.index.as_deref())?;
    let sort: Option<(&str, Vec<&str>)> = [
        ("=", &args.sk_eq),
        ("<", &args.sk_lt),
        ("<=", &args.sk_le),
        (">", &args.sk_gt),
        (">=", &args.sk_ge),
        ("begins_with", &args.sk_begins_with),
    ]
    .into_iter()
    .find_map(|(op, v)| v.as_deref().map(|v| (op, vec![v])))
    .or_else(|| {
        args.sk_between
            .as_ref()
            .map(|v| ("between", v.iter().map(String::as_str).collect()))
    });
    if sort.is_some() && schema.sort.is_none() {
        return Err(format!(
            "`{}` has no sort key, so --sk-* conditions do not apply",
            args.table
        ));
    }
    let (expression, names, values) = key_condition(&schema, &args.partition, sort);
    let mut request = json!({
        "TableName": args.table,
        "KeyConditionExpression": expression,
        "ScanIndexForward": !args.descending,
    });
    add_expression_maps(&mut request, names, values);
    apply_read_args(&mut request, &args.read)?;
    let names = schema.names();
    let mut stream = ItemStream::new(args.common.output, &names, args.read.typed);
    let next = collect(&client, "Query", request, &args.read, &mut stream)?;
    finish(stream, next, &args.common)
}

pub fn scan(args: ScanArgs) -> CliResult {
    let client = args.common.connect()?;
    let schema = key_schema(&client, &args.table, args.read.index.as_deref())?;
    let mut request = json!({ "TableName": args.table });
    apply_read_args(&mut request, &args.read)?;
    if args.segments > 1 {
        if !args.read.paginate {
            return Err("--segments reads the whole table: add --paginate".into());
        }
        let names = schema.names();
        let stream = Mutex::new(ItemStream::new(args.common.output, &names, args.read.typed));
        let failed = Mutex::new(None);
        paginate::parallel_scan(&client, request, args.segments, |_, page| {
            if let Some(Value::Array(page_items)) = page.get("Items") {
                let printed = stream
                    .lock()
                    .expect("no panic holding the lock")
                    .push(page_items);
                if let Err(error) = printed {
                    *failed.lock().expect("no panic holding the lock") = Some(error);
                }
            }
            Ok(())
        })
        .map_err(|e| e.to_string())?;
        if let Some(error) = failed.into_inner().expect("scan threads have finished") {
            return Err(error);
        }
        let stream = stream.into_inner().expect("scan threads have finished");
        return finish(stream, None, &args.common);
    }
    let names = schema.names();
    let mut stream = ItemStream::new(args.common.output, &names, args.read.typed);
    let next = collect(&client, "Scan", request, &args.read, &mut stream)?;
    finish(stream, next, &args.common)
}

/// Adds filter, projection, names, values, index, start key and consistency.
pub fn apply_read_args(request: &mut Value, read: &ReadArgs) -> CliResult {
    if let Some(index) = &read.index {
        request["IndexName"] = json!(index);
    }
    if let Some(filter) = &read.filter {
        request["FilterExpression"] = json!(filter);
    }
    if let Some(projection) = &read.projection {
        request["ProjectionExpression"] = json!(projection);
    }
    if read.consistent {
        request["ConsistentRead"] = json!(true);
    }
    if let Some(start) = &read.start_key {
        request["ExclusiveStartKey"] = Value::Object(parse_item(start, read.raw, "--start-key")?);
    }
    let names = read
        .names
        .as_deref()
        .map(parse_names)
        .transpose()?
        .unwrap_or_default();
    let values = read
        .values
        .as_deref()
        .map(|v| parse_values(v, read.raw))
        .transpose()?
        .unwrap_or_default();
    add_expression_maps(request, names, values);
    Ok(())
}

/// Reads pages as the flags say (one page, `--limit N` items, or all) and
/// prints each as it arrives. Returns the key to continue from, if there is
/// more.
fn collect(
    client: &Client,
    operation: &str,
    mut request: Value,
    read: &ReadArgs,
    stream: &mut ItemStream<'_>,
) -> Result<Option<Value>, String> {
    let mut seen: u64 = 0;
    loop {
        if let Some(limit) = read.limit {
            // Ask for no more than is still wanted, so no page is cut and
            // LastEvaluatedKey stays an exact place to resume from.
            let wanted = limit - seen;
            request["Limit"] = json!(wanted.min(10_000));
        }
        let mut pages: Pages = match operation {
            "Query" => paginate::query(client, request.clone()),
            _ => paginate::scan(client, request.clone()),
        };
        let page = match pages.next() {
            Some(page) => page.map_err(|e| e.to_string())?,
            None => return Ok(None),
        };
        if let Some(Value::Array(page_items)) = page.get("Items") {
            stream.push(page_items)?;
            seen += page_items.len() as u64;
        }
        let next = page.get("LastEvaluatedKey").cloned();
        let more_wanted = match read.limit {
            Some(limit) => seen < limit,
            None => read.paginate,
        };
        match next {
            Some(key) if more_wanted => request["ExclusiveStartKey"] = key,
            next => return Ok(next),
        }
    }
}

fn finish(stream: ItemStream<'_>, next: Option<Value>, common: &Common) -> CliResult {
    let count = stream.finish()?;
    if common.output == OutputFormat::Table {
        eprintln!("{count} item{}", if count == 1 { "" } else { "s" });
    }
    if let Some(key) = next {
        // DynamoDB JSON works whatever the key's types; it needs --raw.
        eprintln!(
            "more items remain: add --paginate for all of them, or continue with --raw --start-key '{key}'"
        );
    }
    Ok(())
}
