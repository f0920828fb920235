//! `ferrodyn get|put|update|delete`: one item at a time. Keys and items are
//! plain JSON (`{"pk": "u1", "age": 30}`) unless `--raw` says DynamoDB JSON;
//! a key may also be given as its values (`get users u1`).

use super::keys::{key_from_args, key_schema};
use super::output::print_item;
use super::{
    add_expression_maps, parse_item, parse_names, parse_value, parse_values, CliResult, Common,
    Expression, OutputFormat,
};
use clap::Args;
use serde_json::{json, Map, Value};

/// Flags shared by commands that take a key.
#[derive(Args)]
pub struct KeyArgs {
    /// The table's name.
    table: String,
    /// The key: the partition key's value (then the sort key's value, if the
    /// table has one), or a JSON object such as '{"pk": "u1", "sk": 2}'.
    /// `@file` reads it from a file, `-` from stdin.
    key: String,
    /// The sort key's value, when the key is given as values.
    sort: Option<String>,
}

/// Condition and expression-map flags shared by the write commands.
#[derive(Args)]
pub struct ConditionArgs {
    /// Only write if this condition holds, e.g. 'attribute_exists(pk)' or
    /// '#v = :old'. Fails with ConditionalCheckFailedException otherwise.
    #[arg(long, value_name = "EXPRESSION")]
    condition: Option<String>,
    /// Attribute-name placeholders for expressions, as JSON: '{"#v": "version"}'.
    #[arg(long, value_name = "JSON")]
    names: Option<String>,
    /// Value placeholders for expressions, as JSON: '{":old": 3}'.
    #[arg(long, value_name = "JSON")]
    values: Option<String>,
}

impl ConditionArgs {
    fn apply(&self, request: &mut Value, raw: bool) -> CliResult {
        if let Some(condition) = &self.condition {
            request["ConditionExpression"] = json!(condition);
        }
        let names = self
            .names
            .as_deref()
            .map(parse_names)
            .transpose()?
            .unwrap_or_default();
        let values = self
            .values
            .as_deref()
            .map(|v| parse_values(v, raw))
            .transpose()?
            .unwrap_or_default();
        add_expression_maps(request, names, values);
        Ok(())
    }
}

#[derive(Args)]
pub struct GetArgs {
    #[command(flatten)]
    key: KeyArgs,
    /// Read the latest committed value (strongly consistent read).
    #[arg(long)]
    consistent: bool,
    /// Only these attributes, as a projection expression ('pk, address.city').
    #[arg(long, value_name = "EXPRESSION")]
    projection: Option<String>,
    /// Keys and values are DynamoDB JSON ('{"pk": {"S": "u1"}}').
    #[arg(long)]
    raw: bool,
    /// In json/jsonl output keep sets and binary typed ({"$SS": [..]}).
    #[arg(long)]
    typed: bool,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
pub struct PutArgs {
    /// The table's name.
    table: String,
    /// The item as JSON: '{"pk": "u1", "name": "Ada"}'. `@file` reads a
    /// file, `-` stdin. Replaces any item with the same key.
    item: String,
    /// Only create: fail if an item with this key exists.
    #[arg(long)]
    if_not_exists: bool,
    #[command(flatten)]
    condition: ConditionArgs,
    /// The item (and --values) are DynamoDB JSON.
    #[arg(long)]
    raw: bool,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
#[command(after_help = "Examples:\n  \
    ferrodyn update users u1 --set name='\"Ada\"' --set visits=1 --remove nickname\n  \
    ferrodyn update users u1 --add visits=1 --condition 'attribute_exists(pk)'\n  \
    ferrodyn update users u1 --expression 'SET #n = :n' --names '{\"#n\":\"name\"}' --values '{\":n\":\"Ada\"}'")]
pub struct UpdateArgs {
    #[command(flatten)]
    key: KeyArgs,
    /// Set an attribute: PATH=JSON (value in JSON: strings need quotes,
    /// e.g. name='"Ada"'). PATH may be nested: address.city, tags[0].
    #[arg(long, value_name = "PATH=JSON")]
    set: Vec<String>,
    /// Remove an attribute.
    #[arg(long, value_name = "PATH")]
    remove: Vec<String>,
    /// Add to a number, or add elements to a set: PATH=JSON.
    #[arg(long, value_name = "PATH=JSON")]
    add: Vec<String>,
    /// A whole update expression instead of --set/--remove/--add.
    #[arg(long, value_name = "EXPRESSION", conflicts_with_all = ["set", "remove", "add"])]
    expression: Option<String>,
    #[command(flatten)]
    condition: ConditionArgs,
    /// The key and values are DynamoDB JSON.
    #[arg(long)]
    raw: bool,
    /// In json/jsonl output keep sets and binary typed.
    #[arg(long)]
    typed: bool,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
pub struct DeleteArgs {
    #[command(flatten)]
    key: KeyArgs,
    #[command(flatten)]
    condition: ConditionArgs,
    /// The key (and --values) are DynamoDB JSON.
    #[arg(long)]
    raw: bool,
    #[command(flatten)]
    common: Common,
}

pub fn get(args: GetArgs) -> CliResult {
    let client = args.common.connect()?;
    let k = &args.key;
    let key = key_from_args(&client, &k.table, &k.key, k.sort.as_deref(), args.raw)?;
    let mut request =
        json!({ "TableName": k.table, "Key": key, "ConsistentRead": args.consistent });
    if let Some(projection) = &args.projection {
        request["ProjectionExpression"] = json!(projection);
    }
    let response = client
        .call("GetItem", &request)
        .map_err(|e| e.to_string())?;
    let keys = key_names(&client, &k.table, args.common.output);
    print_item(response.get("Item"), args.common.output, &keys, args.typed)
}

pub fn put(args: PutArgs) -> CliResult {
    let client = args.common.connect()?;
    let item = parse_item(&args.item, args.raw, "the item")?;
    let mut request = json!({ "TableName": args.table, "Item": item });
    args.condition.apply(&mut request, args.raw)?;
    if args.if_not_exists {
        let schema = key_schema(&client, &args.table, None)?;
        let guard = "attribute_not_exists(#ferrodyn_pk)";
        request["ConditionExpression"] = json!(match &args.condition.condition {
            Some(c) => format!("({c}) AND {guard}"),
            None => guard.to_string(),
        });
        add_expression_maps(
            &mut request,
            Map::from_iter([("#ferrodyn_pk".to_string(), json!(schema.partition.name))]),
            Map::new(),
        );
    }
    client
        .call("PutItem", &request)
        .map_err(|e| e.to_string())?;
    if args.common.output == OutputFormat::Table {
        println!("put 1 item into {}", args.table);
    }
    Ok(())
}

pub fn update(args: UpdateArgs) -> CliResult {
    let client = args.common.connect()?;
    let k = &args.key;
    let key = key_from_args(&client, &k.table, &k.key, k.sort.as_deref(), args.raw)?;
    let mut request = json!({ "TableName": k.table, "Key": key, "ReturnValues": "ALL_NEW" });
    let (expression, names, values) = match &args.expression {
        Some(expression) => (expression.clone(), Map::new(), Map::new()),
        None => build_update(&args.set, &args.remove, &args.add, args.raw)?,
    };
    if expression.is_empty() {
        return Err("nothing to update: give --set, --remove, --add or --expression".into());
    }
    request["UpdateExpression"] = json!(expression);
    add_expression_maps(&mut request, names, values);
    args.condition.apply(&mut request, args.raw)?;
    let response = client
        .call("UpdateItem", &request)
        .map_err(|e| e.to_string())?;
    let keys = key_names(&client, &k.table, args.common.output);
    print_item(
        response.get("Attributes"),
        args.common.output,
        &keys,
        args.typed,
    )
}

pub fn delete(args: DeleteArgs) -> CliResult {
    let client = args.common.connect()?;
    let k = &args.key;
    let key = key_from_args(&client, &k.table, &k.key, k.sort.as_deref(), args.raw)?;
    let mut request = json!({ "TableName": k.table, "Key": key, "ReturnValues": "ALL_OLD" });
    args.condition.apply(&mut request, args.raw)?;
    let response = client
        .call("DeleteItem", &request)
        .map_err(|e| e.to_string())?;
    let old = response.get("Attributes");
    match args.common.output {
        OutputFormat::Table => {
            println!(
                "{}",
                if old.is_some() {
                    "deleted 1 item"
                } else {
                    "no item had that key (nothing deleted)"
                }
            );
            Ok(())
        }
        format => print_item(old, format, &[], false),
    }
}

/// Key attribute names for table columns; only looked up for `table` output.
fn key_names(client: &ferrodyn_client::Client, table: &str, format: OutputFormat) -> Vec<String> {
    if format != OutputFormat::Table {
        return Vec::new();
    }
    key_schema(client, table, None)
        .map(|s| s.names())
        .unwrap_or_default()
}

/// An update expression from --set/--remove/--add. Every path segment is
/// aliased (`#u0`), so reserved words like `name` or `status` just work.
fn build_update(
    set: &[String],
    remove: &[String],
    add: &[String],
    raw: bool,
) -> Result<Expression, String> {
    let mut names = Map::new();
    let mut values = Map::new();
    let mut clauses = Vec::new();
    let alias_path = |path: &str, names: &mut Map<String, Value>| -> Result<String, String> {
        path.split('.')
            .map(|segment| {
                let (name, indexes) = segment.split_at(segment.find('[').unwrap_or(segment.len()));
                if name.is_empty() {
                    return Err(format!("`{path}` is not an attribute path"));
                }
                let alias = format!("#u{}", names.len());
                names.insert(alias.clone(), json!(name));
                Ok(format!("{alias}{indexes}"))
            })
            .collect::<Result<Vec<_>, _>>()
            .map(|segments| segments.join("."))
    };
    let mut assignments = |specs: &[String],
                           keyword: &str,
                           separator: &str,
                           names: &mut Map<String, Value>|
     -> Result<(), String> {
        if specs.is_empty() {
            return Ok(());
        }
        let mut parts = Vec::new();
        for spec in specs {
            let (path, value) = spec
                .split_once('=')
                .ok_or_else(|| format!("`{spec}`: expected PATH=JSON"))?;
            let path = alias_path(path, names)?;
            let placeholder = format!(":u{}", values.len());
            values.insert(placeholder.clone(), parse_value(value, raw)?);
            parts.push(format!("{path}{separator}{placeholder}"));
        }
        clauses.push(format!("{keyword} {}", parts.join(", ")));
        Ok(())
    };
    assignments(set, "SET", " = ", &mut names)?;
    assignments(add, "ADD", " ", &mut names)?;
    if !remove.is_empty() {
        let paths = remove
            .iter()
            .map(|p| alias_path(p, &mut names))
            .collect::<Result<Vec<_>, _>>()?;
        clauses.push(format!("REMOVE {}", paths.join(", ")));
    }
    Ok((clauses.join(" "), names, values))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_flags_become_an_aliased_expression() {
        let (expression, names, values) = build_update(
            &["name=\"Ada\"".into(), "address.city=\"Paris\"".into()],
            &["tags[1]".into()],
            &["visits=1".into()],
            false,
        )
        .unwrap();
        assert_eq!(
            expression,
            "SET #u0 = :u0, #u1.#u2 = :u1 ADD #u3 :u2 REMOVE #u4[1]"
        );
        assert_eq!(names["#u2"], json!("city"));
        assert_eq!(names["#u4"], json!("tags"));
        assert_eq!(values[":u0"], json!({"S": "Ada"}));
        assert_eq!(values[":u2"], json!({"N": "1"}));
    }
}
