//! `ferrodyn sql` (also `ferrodyn partiql`): one PartiQL statement through
//! ExecuteStatement, with `?` parameters, NextToken pagination and the usual
//! output formats.

use super::output::ItemStream;
use super::{parse_value, read_argument, CliResult, Common, OutputFormat};
use clap::Args;
use ferrodyn_client::partiql::{self, Statement};
use serde_json::Value;

#[derive(Args)]
#[command(after_help = "Examples:\n  \
    ferrodyn sql 'SELECT * FROM \"orders\" WHERE customer = ? AND created > ?' --param '\"cust-1\"' --param 100\n  \
    ferrodyn sql \"INSERT INTO \\\"users\\\" VALUE {'id': ?, 'name': ?}\" --param '\"u9\"' --param '\"Ada\"'\n  \
    ferrodyn sql 'UPDATE \"users\" SET visits = visits + 1 WHERE id = ? RETURNING ALL NEW *' --param '\"u1\"'\n  \
    ferrodyn partiql 'SELECT * FROM \"users\"' --paginate -o jsonl")]
pub struct SqlArgs {
    /// The statement (`@file` reads it from a file, `-` from stdin). Table
    /// and index names are double-quoted, strings single-quoted.
    statement: String,
    /// A value for the next `?`, in plain JSON ('"text"', 12, {"$SS": [..]})
    /// or DynamoDB JSON with --raw ('{"S": "text"}'). Repeat in order.
    #[arg(long = "param", value_name = "JSON")]
    params: Vec<String>,
    /// Follow NextToken to the last page.
    #[arg(long)]
    paginate: bool,
    /// Evaluate at most N items per page (DynamoDB's Limit).
    #[arg(long, value_name = "N")]
    limit: Option<u64>,
    /// Continue from this token (printed by a previous run that stopped early).
    #[arg(long, value_name = "TOKEN")]
    next_token: Option<String>,
    /// Strongly consistent read.
    #[arg(long)]
    consistent: bool,
    /// --param values are DynamoDB JSON.
    #[arg(long)]
    raw: bool,
    /// In json/jsonl output keep sets and binary typed ({"$SS": [..]}).
    #[arg(long)]
    typed: bool,
    #[command(flatten)]
    common: Common,
}

pub fn run(args: SqlArgs) -> CliResult {
    let client = args.common.connect()?;
    let parameters = args
        .params
        .iter()
        .map(|p| parse_value(p, args.raw))
        .collect::<Result<Vec<Value>, String>>()?;
    let text = read_argument(&args.statement)?;
    let is_write = !text
        .trim_start()
        .get(..6)
        .is_some_and(|word| word.eq_ignore_ascii_case("select"));
    let statement = Statement {
        statement: text,
        parameters,
        consistent_read: args.consistent,
        limit: args.limit,
        next_token: args.next_token.clone(),
    };
    let no_keys: Vec<String> = Vec::new();
    let mut stream = ItemStream::new(args.common.output, &no_keys, args.typed);
    let mut pages = partiql::pages(&client, statement);
    for page in pages.by_ref() {
        let page = page.map_err(|e| e.to_string())?;
        if let Some(Value::Array(items)) = page.get("Items") {
            stream.push(items)?;
        }
        if !args.paginate {
            break;
        }
    }
    let next = pages.next_token().map(str::to_string);
    // A write without RETURNING answers an empty Items list: there is no
    // table to draw, only the news that it ran.
    if stream.is_empty() && is_write && args.common.output == OutputFormat::Table {
        eprintln!("done (the statement returns no items)");
        return Ok(());
    }
    let count = stream.finish()?;
    if args.common.output == OutputFormat::Table {
        eprintln!("{count} item{}", if count == 1 { "" } else { "s" });
    }
    if let Some(token) = next {
        eprintln!("more items remain: add --paginate, or continue with --next-token '{token}'");
    }
    Ok(())
}
