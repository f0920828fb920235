//! `ferrodyn tables list|describe|create|delete`: the control plane.

use super::keys::schema_of;
use super::output::print_document;
use super::{CliResult, Common, OutputFormat};
use clap::{Args, Subcommand};
use ferrodyn_client::Client;
use serde_json::{json, Map, Value};
use std::time::{Duration, Instant};

#[derive(Subcommand)]
pub enum TablesCommand {
    /// List the tables in the region.
    List {
        #[command(flatten)]
        common: Common,
    },
    /// Show a table's keys, indexes, item count, size and status.
    Describe {
        /// The table's name.
        table: String,
        #[command(flatten)]
        common: Common,
    },
    /// Create a table (on-demand billing unless --provisioned is given).
    #[command(after_help = "Examples:\n  \
        ferrodyn tables create users --pk id\n  \
        ferrodyn tables create orders --pk customer --sk created:N \\\n      \
        --gsi by-status=status:S,created:N")]
    Create(CreateArgs),
    /// Delete a table and all of its items (asks for --yes).
    Delete {
        /// The table's name.
        table: String,
        /// Confirm the deletion: the items cannot be recovered.
        #[arg(long)]
        yes: bool,
        #[command(flatten)]
        common: Common,
    },
}

#[derive(Args)]
pub struct CreateArgs {
    /// The new table's name.
    pub(crate) table: String,
    /// Partition key as NAME[:TYPE]; TYPE is S (string, the default), N
    /// (number) or B (binary).
    #[arg(long, value_name = "NAME[:TYPE]")]
    pk: String,
    /// Sort key as NAME[:TYPE].
    #[arg(long, value_name = "NAME[:TYPE]")]
    sk: Option<String>,
    /// A global secondary index as INDEX=PK[:TYPE][,SK[:TYPE]], projecting
    /// all attributes. Repeat for more indexes.
    #[arg(long, value_name = "SPEC")]
    gsi: Vec<String>,
    /// Provisioned capacity as READ,WRITE units (default: on-demand).
    #[arg(long, value_name = "READ,WRITE")]
    provisioned: Option<String>,
    /// Wait until the table is ACTIVE (AWS creates tables asynchronously;
    /// Ferrodyn's are active at once).
    #[arg(long)]
    pub(crate) wait: bool,
    #[command(flatten)]
    pub(crate) common: Common,
}

pub fn run(command: TablesCommand) -> CliResult {
    match command {
        TablesCommand::List { common } => list(&common),
        TablesCommand::Describe { table, common } => describe(&common, &table),
        TablesCommand::Create(args) => create(args),
        TablesCommand::Delete { table, yes, common } => delete(&common, &table, yes),
    }
}

fn list(common: &Common) -> CliResult {
    let client = common.connect()?;
    let mut names: Vec<Value> = Vec::new();
    let mut request = json!({});
    // ListTables returns at most 100 names a page.
    loop {
        let page = client
            .call("ListTables", &request)
            .map_err(|e| e.to_string())?;
        if let Some(Value::Array(page_names)) = page.get("TableNames") {
            names.extend(page_names.iter().cloned());
        }
        match page.get("LastEvaluatedTableName") {
            Some(last) => request = json!({ "ExclusiveStartTableName": last }),
            None => break,
        }
    }
    match common.output {
        OutputFormat::Table | OutputFormat::Jsonl => {
            for name in &names {
                println!("{}", name.as_str().unwrap_or_default());
            }
            Ok(())
        }
        _ => print_document(&json!({ "TableNames": names }), OutputFormat::Json),
    }
}

fn describe(common: &Common, table: &str) -> CliResult {
    let client = common.connect()?;
    let description = super::keys::describe(&client, table)?;
    match common.output {
        OutputFormat::Table => print_document(&summary(&description), OutputFormat::Table),
        format => print_document(&description, format),
    }
}

/// The fields a person looks for first, flattened to one line each.
fn summary(d: &Value) -> Value {
    let text = |field: &str| d.get(field).cloned().unwrap_or(Value::Null);
    let keys = schema_of(d, None)
        .map(|s| {
            let mut text = format!("{} ({}) partition", s.partition.name, s.partition.kind);
            if let Some(sort) = s.sort {
                text.push_str(&format!(", {} ({}) sort", sort.name, sort.kind));
            }
            text
        })
        .unwrap_or_default();
    let indexes: Vec<String> = ["GlobalSecondaryIndexes", "LocalSecondaryIndexes"]
        .iter()
        .filter_map(|f| d.get(f).and_then(Value::as_array))
        .flatten()
        .filter_map(|i| {
            let name = i.get("IndexName")?.as_str()?;
            let keys = schema_of(d, Some(name)).ok()?;
            Some(format!("{name} ({})", keys.names().join(", ")))
        })
        .collect();
    let billing = d
        .get("BillingModeSummary")
        .and_then(|b| b.get("BillingMode"))
        .and_then(Value::as_str)
        .unwrap_or("PROVISIONED")
        .to_string();
    json!({
        "TableName": text("TableName"),
        "TableStatus": text("TableStatus"),
        "Keys": keys,
        "ItemCount": text("ItemCount"),
        "TableSizeBytes": text("TableSizeBytes"),
        "BillingMode": billing,
        "Indexes": if indexes.is_empty() { "none".to_string() } else { indexes.join("; ") },
        "TableArn": text("TableArn"),
    })
}

/// `NAME[:TYPE]` into a name and a scalar type.
fn attribute(spec: &str) -> Result<(String, String), String> {
    let (name, kind) = spec.split_once(':').unwrap_or((spec, "S"));
    let kind = kind.to_ascii_uppercase();
    if name.is_empty() || !matches!(kind.as_str(), "S" | "N" | "B") {
        return Err(format!(
            "`{spec}`: expected NAME or NAME:TYPE with TYPE one of S, N, B"
        ));
    }
    Ok((name.to_string(), kind))
}

fn create(args: CreateArgs) -> CliResult {
    let client = args.common.connect()?;
    let request = create_request(&args)?;
    let response = client
        .call("CreateTable", &request)
        .map_err(|e| e.to_string())?;
    let mut description = response
        .get("TableDescription")
        .cloned()
        .unwrap_or_default();
    if args.wait {
        description = wait_until_active(&client, &args.table)?;
    }
    match args.common.output {
        OutputFormat::Table => {
            let status = description
                .get("TableStatus")
                .and_then(Value::as_str)
                .unwrap_or("?");
            println!("created table {} ({status})", args.table);
            Ok(())
        }
        format => print_document(&description, format),
    }
}

/// Attribute definitions collected from every key given, refusing one
/// attribute given two types.
#[derive(Default)]
struct Definitions(Map<String, Value>);

impl Definitions {
    /// Records `NAME[:TYPE]` and returns the name.
    fn define(&mut self, spec: &str) -> Result<String, String> {
        let (name, kind) = attribute(spec)?;
        match self.0.get(&name) {
            Some(existing) if existing != &json!(kind) => {
                Err(format!("attribute `{name}` is given two different types"))
            }
            _ => {
                self.0.insert(name.clone(), json!(kind));
                Ok(name)
            }
        }
    }

    fn to_json(&self) -> Value {
        self.0
            .iter()
            .map(|(name, kind)| json!({ "AttributeName": name, "AttributeType": kind }))
            .collect()
    }
}

fn key_schema_json(pk: String, sk: Option<String>) -> Vec<Value> {
    let mut schema = vec![json!({ "AttributeName": pk, "KeyType": "HASH" })];
    if let Some(sk) = sk {
        schema.push(json!({ "AttributeName": sk, "KeyType": "RANGE" }));
    }
    schema
}

/// `--provisioned READ,WRITE` as a ProvisionedThroughput (None: on demand).
fn provisioned_throughput(spec: Option<&str>) -> Result<Option<Value>, String> {
    let Some(spec) = spec else {
        return Ok(None);
    };
    let (read, write) = spec
        .split_once(',')
        .and_then(|(r, w)| Some((r.trim().parse::<u64>().ok()?, w.trim().parse::<u64>().ok()?)))
        .ok_or_else(|| format!("--provisioned `{spec}`: expected READ,WRITE such as 5,5"))?;
    Ok(Some(
        json!({ "ReadCapacityUnits": read, "WriteCapacityUnits": write }),
    ))
}

/// One `--gsi INDEX=PK[:TYPE][,SK[:TYPE]]` (projecting everything).
fn gsi(
    spec: &str,
    definitions: &mut Definitions,
    throughput: Option<&Value>,
) -> Result<Value, String> {
    let (name, keys) = spec
        .split_once('=')
        .ok_or_else(|| format!("--gsi `{spec}`: expected INDEX=PK[:TYPE][,SK[:TYPE]]"))?;
    let mut parts = keys.split(',');
    let pk = definitions.define(parts.next().unwrap_or_default())?;
    let sk = parts.next().map(|p| definitions.define(p)).transpose()?;
    let mut index = json!({
        "IndexName": name,
        "KeySchema": key_schema_json(pk, sk),
        "Projection": { "ProjectionType": "ALL" },
    });
    if let Some(t) = throughput {
        index["ProvisionedThroughput"] = t.clone();
    }
    Ok(index)
}

/// The CreateTable request the flags describe.
pub(crate) fn create_request(args: &CreateArgs) -> Result<Value, String> {
    let mut definitions = Definitions::default();
    let pk = definitions.define(&args.pk)?;
    let sk = args
        .sk
        .as_deref()
        .map(|s| definitions.define(s))
        .transpose()?;
    let throughput = provisioned_throughput(args.provisioned.as_deref())?;
    let indexes = args
        .gsi
        .iter()
        .map(|spec| gsi(spec, &mut definitions, throughput.as_ref()))
        .collect::<Result<Vec<_>, _>>()?;
    let mut request = json!({
        "TableName": args.table,
        "KeySchema": key_schema_json(pk, sk),
        "AttributeDefinitions": definitions.to_json(),
    });
    match throughput {
        Some(t) => {
            request["BillingMode"] = json!("PROVISIONED");
            request["ProvisionedThroughput"] = t;
        }
        None => request["BillingMode"] = json!("PAY_PER_REQUEST"),
    }
    if !indexes.is_empty() {
        request["GlobalSecondaryIndexes"] = json!(indexes);
    }
    Ok(request)
}

/// Polls DescribeTable until the table and its indexes are ACTIVE.
pub(crate) fn wait_until_active(client: &Client, table: &str) -> Result<Value, String> {
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        let d = super::keys::describe(client, table)?;
        let indexes_active = d
            .get("GlobalSecondaryIndexes")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .all(|i| i.get("IndexStatus").and_then(Value::as_str) == Some("ACTIVE"));
        if d.get("TableStatus").and_then(Value::as_str) == Some("ACTIVE") && indexes_active {
            return Ok(d);
        }
        if Instant::now() > deadline {
            return Err(format!(
                "table {table} is still not ACTIVE after 10 minutes"
            ));
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

fn delete(common: &Common, table: &str, yes: bool) -> CliResult {
    if !yes {
        return Err(format!(
            "deleting `{table}` destroys all of its items; add --yes to confirm"
        ));
    }
    let client = common.connect()?;
    let response = client
        .call("DeleteTable", &json!({ "TableName": table }))
        .map_err(|e| e.to_string())?;
    match common.output {
        OutputFormat::Table => {
            println!("deleted table {table}");
            Ok(())
        }
        format => print_document(&response, format),
    }
}
