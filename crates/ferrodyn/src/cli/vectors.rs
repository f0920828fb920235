//! `ferrodyn search-vectors`: SearchVectors on a table's vector index, the
//! query vector given inline (`[0.1, -0.3, ...]`), from a file (`@file`,
//! a JSON array or numbers separated by spaces, commas or newlines) or from
//! standard input (`-`); results most similar first, each item with its
//! score as `_score`.

use super::keys::key_schema;
use super::output::ItemStream;
use super::OutputFormat;
use super::{add_expression_maps, parse_names, parse_values, read_argument, CliResult, Common};
use clap::Args;
use serde_json::{json, Map, Value};

#[derive(Args)]
#[command(after_help = "Examples:\n  \
    ferrodyn search-vectors docs by_embedding --vector '[0.12, -0.5, 0.33]' --top-k 5\n  \
    ferrodyn search-vectors docs by_embedding --vector @query.txt \\\n      \
        --where 'tenant = :t AND lang = :l' --values '{\":t\": \"acme\", \":l\": \"en\"}'\n  \
    embed 'some text' | ferrodyn search-vectors docs by_embedding --vector - -o jsonl")]
pub struct SearchVectorsArgs {
    /// The table's name.
    table: String,
    /// The vector index to search.
    index: String,
    /// The query vector: a JSON array of numbers, `@FILE` (a JSON array, or
    /// numbers separated by spaces, commas or newlines) or `-` for stdin.
    #[arg(long, value_name = "VECTOR")]
    vector: String,
    /// How many of the most similar items to return (1 to 100).
    #[arg(long, value_name = "K", default_value_t = 10)]
    top_k: u32,
    /// SearchConditionExpression: `=` on the index's HASH and INLINE_FILTER
    /// attributes joined by AND, e.g. 'category = :c'.
    #[arg(long = "where", value_name = "EXPRESSION")]
    condition: Option<String>,
    /// Attribute-name placeholders, as JSON: '{"#s": "status"}'.
    #[arg(long, value_name = "JSON")]
    names: Option<String>,
    /// Value placeholders, as JSON: '{":c": "books"}'.
    #[arg(long, value_name = "JSON")]
    values: Option<String>,
    /// Only these attributes, as a projection expression.
    #[arg(long, value_name = "EXPRESSION")]
    projection: Option<String>,
    /// --values is DynamoDB JSON.
    #[arg(long)]
    raw: bool,
    /// Print VectorSearchRequestBytes on stderr.
    #[arg(long)]
    capacity: bool,
    #[command(flatten)]
    common: Common,
}

pub fn run(args: SearchVectorsArgs) -> CliResult {
    let client = args.common.connect()?;
    let vector = parse_vector(&read_argument(&args.vector)?)?;
    let mut request = json!({
        "TableName": args.table,
        "IndexName": args.index,
        "TopK": args.top_k,
        "SearchVector": vector.iter().map(|x| json!({ "N": x })).collect::<Vec<_>>(),
    });
    if let Some(condition) = &args.condition {
        request["SearchConditionExpression"] = json!(condition);
    }
    if let Some(projection) = &args.projection {
        request["ProjectionExpression"] = json!(projection);
    }
    if args.capacity {
        request["ReturnConsumedCapacity"] = json!("TOTAL");
    }
    let names = args
        .names
        .as_deref()
        .map(parse_names)
        .transpose()?
        .unwrap_or_default();
    let values = (args.values.as_deref())
        .map(|v| parse_values(v, args.raw))
        .transpose()?
        .unwrap_or_default();
    add_expression_maps(&mut request, names, values);
    let answer = client
        .call("SearchVectors", &request)
        .map_err(|e| e.to_string())?;
    print_results(&client, &args, &answer)
}

fn print_results(
    client: &ferrodyn_client::Client,
    args: &SearchVectorsArgs,
    answer: &Value,
) -> CliResult {
    if args.common.output == OutputFormat::Raw {
        println!("{answer}");
        return Ok(());
    }
    let schema = key_schema(client, &args.table, None)?;
    let mut names = schema.names();
    names.push("_score".into());
    let results = answer["SearchResults"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let items: Vec<Value> = (results.iter())
        .map(|r| {
            let mut item: Map<String, Value> = r["Item"].as_object().cloned().unwrap_or_default();
            item.insert("_score".into(), json!({ "N": r["Score"].to_string() }));
            Value::Object(item)
        })
        .collect();
    let mut stream = ItemStream::new(args.common.output, &names, false);
    stream.push(&items)?;
    let count = stream.finish()?;
    if args.common.output == OutputFormat::Table {
        eprintln!("{count} result{}", if count == 1 { "" } else { "s" });
    }
    if let Some(bytes) = answer["ConsumedCapacity"]["VectorSearchRequestBytes"].as_f64() {
        eprintln!("VectorSearchRequestBytes: {bytes}");
    }
    Ok(())
}

/// Numbers as a JSON array or separated by spaces, commas or newlines, kept
/// as their text (the server reads them as 32-bit floats).
fn parse_vector(text: &str) -> Result<Vec<String>, String> {
    let trimmed = text.trim();
    let numbers: Vec<String> = if trimmed.starts_with('[') {
        let list: Vec<Value> = serde_json::from_str(trimmed)
            .map_err(|e| format!("--vector is not a JSON array: {e}"))?;
        (list.iter())
            .map(|v| {
                v.as_f64()
                    .map(|_| v.to_string())
                    .ok_or_else(|| format!("--vector: {v} is not a number"))
            })
            .collect::<Result<_, _>>()?
    } else {
        (trimmed.split(|c: char| c.is_whitespace() || c == ','))
            .filter(|t| !t.is_empty())
            .map(|t| {
                t.parse::<f64>()
                    .map(|_| t.to_string())
                    .map_err(|_| format!("--vector: {t} is not a number"))
            })
            .collect::<Result<_, _>>()?
    };
    if numbers.is_empty() {
        return Err("--vector holds no numbers".into());
    }
    Ok(numbers)
}

#[cfg(test)]
mod tests {
    use super::parse_vector;

    #[test]
    fn vectors_are_read_as_json_or_separated_numbers() {
        assert_eq!(
            parse_vector("[1, -0.5, 2e3]").unwrap(),
            ["1", "-0.5", "2000.0"]
        );
        assert_eq!(
            parse_vector("1 -0.5\n2e3,4").unwrap(),
            ["1", "-0.5", "2e3", "4"]
        );
        assert!(parse_vector("[1, \"x\"]").is_err());
        assert!(parse_vector("1 x").is_err());
        assert!(parse_vector("  ").is_err());
    }
}
