//! The pattern commands of the `ferrodyn` binary — `stage`, `unique`, `expr`
//! and `cost` — as a thin layer over the `ferrodyn-patterns` library: parse
//! flags, call the library, print its reports.

use super::{parse_item, parse_value, read_argument, CliResult};
use clap::{Args, Subcommand};
use ferrodyn_client::{Client, ConnectionOptions};
use ferrodyn_patterns::cost::{self, Prices, Workload};
use ferrodyn_patterns::expr::flags::{self, ConditionClause, UpdateClause};
use ferrodyn_patterns::expr::Builder;
use ferrodyn_patterns::stage::{self, LockScope, StageFile};
use ferrodyn_patterns::unique::locks::LocksOptions;
use ferrodyn_patterns::unique::{self, Constraint, MarkerLayout, UniqueSpec};
use serde_json::{json, Map, Value};
use std::path::PathBuf;

/// Where to connect (the same flags and defaults as the other client
/// commands).
#[derive(Args, Debug, Clone)]
pub struct Connection {
    /// Endpoint URL [default: http://127.0.0.1:8000, a local `ferrodyn serve`;
    /// `aws` means the region's AWS DynamoDB endpoint].
    #[arg(long, value_name = "URL", global = true, help_heading = "Connection")]
    endpoint_url: Option<String>,
    /// AWS region [default: AWS_REGION, the profile's region, else us-east-1].
    #[arg(long, global = true, help_heading = "Connection")]
    region: Option<String>,
    /// Profile of ~/.aws/config and ~/.aws/credentials.
    #[arg(long, global = true, help_heading = "Connection")]
    profile: Option<String>,
}

impl Connection {
    fn connect(&self) -> Result<Client, String> {
        Client::connect(&ConnectionOptions {
            endpoint_url: self.endpoint_url.clone(),
            region: self.region.clone(),
            profile: self.profile.clone(),
        })
        .map_err(|e| e.to_string())
    }
}

/// `NAME=VALUE` with VALUE as plain JSON, or a bare word taken as a string
/// (`--set status=active` and `--set visits=3` both do what they look like).
fn assignment(text: &str) -> Result<(String, Value), String> {
    let (name, value) = flags::split_assignment(text)?;
    let typed = parse_value(&value, false).unwrap_or_else(|_| json!({ "S": value }));
    Ok((name, typed))
}

fn assignments(list: &[String]) -> Result<Map<String, Value>, String> {
    list.iter().map(|a| assignment(a)).collect()
}

// ---------------------------------------------------------------- stage

/// Stage several writes, review them, then commit them all or nothing.
#[derive(Args, Debug)]
#[command(
    after_help = "A stage is a local file of changes. Each change remembers the item as it \
was when staged; `commit` sends all changes as one TransactWriteItems whose conditions check \
that no item changed meanwhile (and that created items still do not exist), so either every \
change is written or none is.\n\n\
An edit that changes or removes a value protected by a uniqueness marker owned by the item \
(or deletes the item) stages moving or deleting the marker too, so both commit together; a \
new value another item holds is refused.\n\n\
Example:\n  \
ferrodyn stage add put users '{\"id\": \"u2\", \"name\": \"Bob\"}'\n  \
ferrodyn stage add update users '{\"id\": \"u1\"}' --set status=active --remove draft\n  \
ferrodyn stage add delete users '{\"id\": \"u3\"}'\n  \
ferrodyn stage diff\n  \
ferrodyn stage commit"
)]
pub struct StageArgs {
    /// The stage file [default: $FERRODYN_STAGE, else ./ferrodyn-stage.json].
    #[arg(long, global = true, value_name = "PATH")]
    file: Option<PathBuf>,
    /// `add`: also look for grouped uniqueness markers of this entity
    /// (`UNIQ#ENTITY#attr`); per-value markers (`UNIQ#ATTR#value`) are
    /// always found.
    #[arg(long, global = true, value_name = "ENTITY")]
    unique_entity: Vec<String>,
    /// `add`: do not stage the uniqueness markers that follow an edit.
    #[arg(long, global = true)]
    no_markers: bool,
    #[command(flatten)]
    connection: Connection,
    #[command(subcommand)]
    command: StageCommand,
}

#[derive(Subcommand, Debug)]
enum StageCommand {
    /// Stage a put, update or delete (reads the item now, to lock on it).
    #[command(subcommand)]
    Add(StageAdd),
    /// Show each staged change attribute by attribute against the live item,
    /// and warn about items changed since they were staged.
    Diff,
    /// Set what updates' optimistic locks cover: `item` (the default: any
    /// change by someone else cancels the commit) or `attributes` (only a
    /// change to an attribute the update writes does).
    Lock {
        #[arg(value_parser = ["item", "attributes"])]
        scope: String,
    },
    /// Send the stage as one TransactWriteItems; on success the stage is
    /// cleared. If it is cancelled, each failing change is named with why.
    Commit {
        /// A stage over 100 changes (or 4 MB) cannot be one transaction:
        /// send it as several, each atomic on its own but not together.
        #[arg(long)]
        allow_split: bool,
        /// Keep the stage file after a successful commit.
        #[arg(long)]
        keep: bool,
    },
    /// Throw the stage away.
    Clear,
}

#[derive(Subcommand, Debug)]
enum StageAdd {
    /// Write a whole item: create it, or replace it.
    Put {
        table: String,
        /// The item as plain JSON (or DynamoDB JSON with --raw); `@file` or `-` for stdin.
        item: String,
        /// ITEM is DynamoDB JSON.
        #[arg(long)]
        raw: bool,
    },
    /// Set or remove top-level attributes of an item.
    Update {
        table: String,
        /// The item's key as plain JSON, e.g. '{"id": "u1"}'.
        key: String,
        /// NAME=VALUE to set; VALUE is plain JSON, or a bare word for a string.
        #[arg(long, value_name = "NAME=VALUE")]
        set: Vec<String>,
        /// An attribute to remove.
        #[arg(long, value_name = "NAME")]
        remove: Vec<String>,
        /// KEY is DynamoDB JSON.
        #[arg(long)]
        raw: bool,
    },
    /// Delete an item.
    Delete {
        table: String,
        /// The item's key as plain JSON.
        key: String,
        /// KEY is DynamoDB JSON.
        #[arg(long)]
        raw: bool,
    },
}

pub fn stage(args: StageArgs) -> CliResult {
    let path = args
        .file
        .or_else(|| std::env::var_os("FERRODYN_STAGE").map(PathBuf::from))
        .unwrap_or_else(|| PathBuf::from("ferrodyn-stage.json"));
    let mut file = StageFile::load(&path)?;
    match args.command {
        StageCommand::Add(add) => {
            let api = args.connection.connect()?;
            let number = match add {
                StageAdd::Put { table, item, raw } => {
                    let item = parse_item(&item, raw, "ITEM")?;
                    stage::stage_put(&api, &mut file, &table, item)
                }
                StageAdd::Update {
                    table,
                    key,
                    set,
                    remove,
                    raw,
                } => {
                    let key = parse_item(&key, raw, "KEY")?;
                    stage::stage_update(&api, &mut file, &table, key, assignments(&set)?, &remove)
                }
                StageAdd::Delete { table, key, raw } => {
                    let key = parse_item(&key, raw, "KEY")?;
                    stage::stage_delete(&api, &mut file, &table, key)
                }
            }
            .map_err(|e| e.to_string())?;
            let staged = file.changes[number - 1].clone();
            if !args.no_markers {
                let followed =
                    unique::follow::follow_changes(&api, &mut file, &[number], &args.unique_entity)
                        .map_err(|e| e.to_string())?;
                for moved in &followed.moved {
                    println!("uniqueness marker staged with it: {moved}");
                }
                for warning in &followed.warnings {
                    eprintln!("warning: {warning}");
                }
            }
            file.save(&path)?;
            let number = file
                .changes
                .iter()
                .position(|c| c.table == staged.table && c.key == staged.key)
                .map_or(number, |i| i + 1);
            println!(
                "staged as change {number} of {} in {}",
                file.changes.len(),
                path.display()
            );
        }
        StageCommand::Lock { scope } => {
            file.lock = if scope == "attributes" {
                LockScope::Attributes
            } else {
                LockScope::Item
            };
            file.save(&path)?;
            println!(
                "updates lock {} ({})",
                match file.lock {
                    LockScope::Attributes => "only the attributes they write",
                    LockScope::Item => "the whole item",
                },
                path.display()
            );
        }
        StageCommand::Diff => {
            if file.changes.is_empty() {
                println!("nothing is staged ({})", path.display());
                return Ok(());
            }
            let api = args.connection.connect()?;
            for diff in stage::diff(&api, &file).map_err(|e| e.to_string())? {
                print!("{diff}");
            }
        }
        StageCommand::Commit { allow_split, keep } => {
            let api = args.connection.connect()?;
            let report = stage::commit(&api, &file, allow_split).map_err(|e| e.to_string())?;
            if report.transactions > 1 {
                eprintln!(
                    "warning: the stage was split into {} transactions; each was atomic, the whole was not",
                    report.transactions
                );
            }
            println!(
                "committed {} changes in {} transaction(s) (token {})",
                report.changes,
                report.transactions,
                report.tokens.join(", ")
            );
            if !keep {
                clear(&path)?;
            }
        }
        StageCommand::Clear => {
            clear(&path)?;
            println!("stage cleared");
        }
    }
    Ok(())
}

fn clear(path: &PathBuf) -> CliResult {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(format!("cannot remove {}: {e}", path.display()))
        }
        _ => Ok(()),
    }
}

// ---------------------------------------------------------------- unique

/// Keep non-key attributes unique (e-mail, username) with marker items.
#[derive(Args, Debug)]
#[command(
    after_help = "DynamoDB only keeps keys unique. For each unique value this writes a \
marker item in the same table, keyed by the value, in the same transaction as the item itself, \
so a taken value makes the whole write fail. Key attributes must be strings.\n\n\
Marker layouts (--layout):\n  \
per-value (default)  PK UNIQ#<ATTR>#<value>, SK LOCK (if the table has a sort key): one \
partition per value, so sign-ups spread over partitions. `locks` lists the markers by Query \
of a sparse GSI whose partition key is uniq_attr (projection ALL) if the table has one, \
otherwise by a Scan of the whole table.\n  \
grouped              PK UNIQ#<entity>#<attr>, SK UNIQ#<entity>#<attr>#<value>: one partition \
per attribute (capped at one partition's write rate); `locks` is one Query per attribute. \
The layout of earlier versions; needs a sort key.\n\n\
Example (a single-table design with keys PK and SK):\n  \
ferrodyn unique create --table app --entity account --unique email,username \\\n    \
'{\"PK\": \"ACCT#a1\", \"SK\": \"PROFILE\", \"email\": \"ada@lovelace.io\", \"username\": \"ada\"}'\n  \
ferrodyn unique change --table app --entity account --unique email,username \\\n    \
'{\"PK\": \"ACCT#a1\", \"SK\": \"PROFILE\"}' --set email=ada@analytical.engine\n  \
ferrodyn unique locks --table app --entity account --unique email,username"
)]
pub struct UniqueArgs {
    #[command(flatten)]
    spec: SpecArgs,
    #[command(flatten)]
    connection: Connection,
    #[command(subcommand)]
    command: UniqueCommand,
}

/// The constraint: which attributes of which entity are unique.
#[derive(Args, Debug)]
struct SpecArgs {
    /// The table holding the items and their markers.
    #[arg(long, global = true, help_heading = "Constraint")]
    table: Option<String>,
    /// The entity's name in marker keys, e.g. `account`.
    #[arg(long, global = true, help_heading = "Constraint")]
    entity: Option<String>,
    /// The unique attributes, comma-separated or repeated.
    #[arg(
        long,
        global = true,
        value_delimiter = ',',
        help_heading = "Constraint"
    )]
    unique: Vec<String>,
    /// How markers are keyed: per-value (the default) or grouped (see below).
    #[arg(
        long,
        global = true,
        default_value = "per-value",
        value_parser = ["per-value", "grouped"],
        help_heading = "Constraint"
    )]
    layout: String,
    /// A JSON file {"table": ..., "entity": ..., "attributes": [...], "layout": ...}
    /// instead of the flags.
    #[arg(long, global = true, value_name = "FILE", help_heading = "Constraint")]
    spec: Option<PathBuf>,
}

impl SpecArgs {
    fn spec(&self) -> Result<UniqueSpec, String> {
        if let Some(path) = &self.spec {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            return serde_json::from_str(&text)
                .map_err(|e| format!("{} is not a constraint file: {e}", path.display()));
        }
        match (&self.table, &self.entity) {
            (Some(table), Some(entity)) if !self.unique.is_empty() => Ok(UniqueSpec {
                table: table.clone(),
                entity: entity.clone(),
                attributes: self.unique.clone(),
                layout: match self.layout.as_str() {
                    "grouped" => MarkerLayout::Grouped,
                    _ => MarkerLayout::PerValue,
                },
            }),
            _ => {
                Err("say which constraint: --table, --entity and --unique (or --spec FILE)".into())
            }
        }
    }
}

#[derive(Subcommand, Debug)]
enum UniqueCommand {
    /// Create an item and its markers in one transaction (fails if the item
    /// or any unique value exists).
    Create {
        /// The item as plain JSON (DynamoDB JSON with --raw).
        item: String,
        #[arg(long)]
        raw: bool,
    },
    /// Change attributes of an item; unique values changed move their marker
    /// in the same transaction.
    Change {
        /// The item's key as plain JSON.
        key: String,
        /// NAME=VALUE to set (VALUE: plain JSON, or a bare word for a string).
        #[arg(long, value_name = "NAME=VALUE")]
        set: Vec<String>,
        /// An attribute to remove.
        #[arg(long, value_name = "NAME")]
        remove: Vec<String>,
        #[arg(long)]
        raw: bool,
    },
    /// Delete an item and its markers in one transaction.
    Delete {
        /// The item's key as plain JSON.
        key: String,
        #[arg(long)]
        raw: bool,
    },
    /// List the markers and report orphans, stale markers and owners missing
    /// a marker. Grouped markers are read by Query; per-value markers by Query
    /// of a sparse `uniq_attr` index, or else by a Scan (the output says which).
    Locks {
        #[command(flatten)]
        look: LookArgs,
    },
    /// Run `locks`, then fix what it found, each fix re-checked in its own
    /// transaction: hand an orphaned or stale marker to the owner now
    /// holding its value, delete one only when --scan-owners proves no item
    /// holds it, add missing ones; markers it cannot read are left alone.
    Repair {
        #[command(flatten)]
        look: LookArgs,
        /// Only show what would be fixed.
        #[arg(long)]
        dry_run: bool,
    },
}

#[derive(Args, Debug)]
struct LookArgs {
    /// Only markers whose value starts with this.
    #[arg(long, value_name = "VALUE")]
    prefix: Option<String>,
    /// Also find owners without any marker, by a Scan of items whose
    /// partition key starts with PREFIX (e.g. `ACCT#`). This Scan reads the
    /// whole table.
    #[arg(long, value_name = "PREFIX")]
    scan_owners: Option<String>,
}

impl LookArgs {
    fn options(&self) -> LocksOptions {
        LocksOptions {
            value_prefix: self.prefix.clone(),
            scan_owners: self.scan_owners.clone(),
        }
    }
}

pub fn unique(args: UniqueArgs) -> CliResult {
    let api = args.connection.connect()?;
    let constraint = Constraint::load(&api, args.spec.spec()?).map_err(|e| e.to_string())?;
    let c = &constraint;
    let shown = |item: &Map<String, Value>| {
        c.schema
            .key_of(item)
            .map(|k| c.display(&k))
            .unwrap_or_default()
    };
    match args.command {
        UniqueCommand::Create { item, raw } => {
            let item = parse_item(&item, raw, "ITEM")?;
            let name = shown(&item);
            unique::create(&api, c, item).map_err(|e| e.to_string())?;
            println!("created {name} and its markers");
        }
        UniqueCommand::Change {
            key,
            set,
            remove,
            raw,
        } => {
            let key = parse_item(&key, raw, "KEY")?;
            let name = shown(&key);
            unique::change(&api, c, key, assignments(&set)?, &remove).map_err(|e| e.to_string())?;
            println!("changed {name}");
        }
        UniqueCommand::Delete { key, raw } => {
            let key = parse_item(&key, raw, "KEY")?;
            let name = shown(&key);
            unique::delete(&api, c, key).map_err(|e| e.to_string())?;
            println!("deleted {name} and its markers");
        }
        UniqueCommand::Locks { look } => {
            let report = unique::locks(&api, c, &look.options()).map_err(|e| e.to_string())?;
            println!("{report}");
            if !report.is_healthy() {
                return Err("problems found; `ferrodyn unique repair` fixes them".into());
            }
        }
        UniqueCommand::Repair { look, dry_run } => {
            let report = unique::locks(&api, c, &look.options()).map_err(|e| e.to_string())?;
            println!("{report}");
            if dry_run || report.is_healthy() {
                return Ok(());
            }
            let repaired = unique::repair(&api, c, &report).map_err(|e| e.to_string())?;
            println!("{repaired}");
        }
    }
    Ok(())
}

// ---------------------------------------------------------------- expr

/// Build DynamoDB expressions without writing #name / :value placeholders.
#[derive(Args, Debug)]
#[command(
    after_help = "Write the expression with real names and literal values; reserved words \
are aliased and values typed for you. Strings in double or single quotes, numbers as written \
(kept exact), true/false/null, JSON [lists] and {maps}, ss(\"a\",\"b\") / ns(1,2) / bs(...) for \
sets, b64(\"...\") for binary, `odd-name` in backticks.\n\n\
Examples:\n  \
ferrodyn expr condition 'attribute_exists(id) and status = \"active\"'\n  \
ferrodyn expr condition --eq status=active --not-exists deleted_at --cli\n  \
ferrodyn expr update 'SET visits = visits + 1 REMOVE draft' --condition 'version = 3'\n  \
ferrodyn expr update --set name=Ada --increment visits=1\n  \
ferrodyn expr key --partition id=u1 --sort-begins-with sk=ORDER#"
)]
pub struct ExprArgs {
    #[command(subcommand)]
    command: ExprCommand,
    /// Print AWS CLI options (--condition-expression ... ) instead of JSON.
    #[arg(long, global = true)]
    cli: bool,
    /// Alias every attribute name, not only reserved words and odd names.
    #[arg(long, global = true)]
    alias_all: bool,
}

#[derive(Subcommand, Debug)]
enum ExprCommand {
    /// A ConditionExpression (also good as a FilterExpression).
    Condition(ConditionFlags),
    /// An UpdateExpression, optionally with a ConditionExpression sharing its
    /// placeholders.
    Update(UpdateFlags),
    /// A KeyConditionExpression for Query.
    Key(KeyFlags),
}

#[derive(Args, Debug)]
struct ConditionFlags {
    /// The condition in the readable syntax; flags below are AND-ed to it.
    expression: Option<String>,
    #[arg(long, value_name = "PATH=VALUE")]
    eq: Vec<String>,
    #[arg(long, value_name = "PATH=VALUE")]
    ne: Vec<String>,
    #[arg(long, value_name = "PATH=VALUE")]
    lt: Vec<String>,
    #[arg(long, value_name = "PATH=VALUE")]
    le: Vec<String>,
    #[arg(long, value_name = "PATH=VALUE")]
    gt: Vec<String>,
    #[arg(long, value_name = "PATH=VALUE")]
    ge: Vec<String>,
    /// The attribute exists.
    #[arg(long, value_name = "PATH")]
    exists: Vec<String>,
    /// The attribute does not exist (for a create: the key attribute).
    #[arg(long, value_name = "PATH")]
    not_exists: Vec<String>,
    #[arg(long, value_name = "PATH=PREFIX")]
    begins_with: Vec<String>,
    #[arg(long, value_name = "PATH=VALUE")]
    contains: Vec<String>,
}

#[derive(Args, Debug)]
struct UpdateFlags {
    /// The update in the readable syntax (SET/REMOVE/ADD/DELETE clauses).
    expression: Option<String>,
    #[arg(long, value_name = "PATH=VALUE")]
    set: Vec<String>,
    /// Set only if the attribute is absent.
    #[arg(long, value_name = "PATH=VALUE")]
    set_if_absent: Vec<String>,
    /// Add N to a number, counting from 0 if absent.
    #[arg(long, value_name = "PATH=N")]
    increment: Vec<String>,
    /// Append a value (or a JSON list of values) to a list.
    #[arg(long, value_name = "PATH=VALUE")]
    append: Vec<String>,
    #[arg(long, value_name = "PATH")]
    remove: Vec<String>,
    /// DynamoDB's ADD: add to a number or to a set.
    #[arg(long, value_name = "PATH=VALUE")]
    add: Vec<String>,
    /// DynamoDB's DELETE: remove members from a set.
    #[arg(long, value_name = "PATH=VALUE")]
    delete: Vec<String>,
    /// A condition in the readable syntax, for the same request.
    #[arg(long, value_name = "CONDITION")]
    condition: Option<String>,
}

#[derive(Args, Debug)]
struct KeyFlags {
    /// The key condition in the readable syntax.
    expression: Option<String>,
    /// The partition key's value.
    #[arg(long, value_name = "NAME=VALUE")]
    partition: Option<String>,
    #[arg(long, value_name = "NAME=VALUE")]
    sort_eq: Option<String>,
    #[arg(long, value_name = "NAME=VALUE")]
    sort_lt: Option<String>,
    #[arg(long, value_name = "NAME=VALUE")]
    sort_le: Option<String>,
    #[arg(long, value_name = "NAME=VALUE")]
    sort_gt: Option<String>,
    #[arg(long, value_name = "NAME=VALUE")]
    sort_ge: Option<String>,
    #[arg(long, value_name = "NAME=PREFIX")]
    sort_begins_with: Option<String>,
    #[arg(long, value_name = "NAME=LOW..HIGH")]
    sort_between: Option<String>,
}

fn compare(
    list: &[String],
    op: &'static str,
    out: &mut Vec<ConditionClause>,
) -> Result<(), String> {
    for item in list {
        let (path, value) = flags::split_assignment(item)?;
        out.push(ConditionClause::Compare { path, op, value });
    }
    Ok(())
}

fn pairs(list: &[String]) -> Result<Vec<(String, String)>, String> {
    list.iter().map(|s| flags::split_assignment(s)).collect()
}

/// `text` and `extra` joined by `glue` (either may be missing).
fn joined(
    text: Option<String>,
    extra: String,
    glue: fn(String, String) -> String,
) -> Result<String, String> {
    match (text, extra.is_empty()) {
        (Some(t), true) => Ok(t),
        (Some(t), false) => Ok(glue(t, extra)),
        (None, false) => Ok(extra),
        (None, true) => Err("give an expression or at least one flag (see --help)".into()),
    }
}

impl ConditionFlags {
    /// The condition in the readable syntax: the expression AND the flags.
    fn text(self) -> Result<String, String> {
        let mut clauses = Vec::new();
        for (list, op) in [
            (&self.eq, "="),
            (&self.ne, "<>"),
            (&self.lt, "<"),
            (&self.le, "<="),
            (&self.gt, ">"),
            (&self.ge, ">="),
        ] {
            compare(list, op, &mut clauses)?;
        }
        clauses.extend(self.exists.into_iter().map(ConditionClause::Exists));
        clauses.extend(self.not_exists.into_iter().map(ConditionClause::NotExists));
        for (path, prefix) in pairs(&self.begins_with)? {
            clauses.push(ConditionClause::BeginsWith { path, prefix });
        }
        for (path, value) in pairs(&self.contains)? {
            clauses.push(ConditionClause::Contains { path, value });
        }
        joined(
            self.expression.map(|e| read_argument(&e)).transpose()?,
            flags::condition_text(&clauses),
            |t, extra| format!("({t}) AND {extra}"),
        )
    }
}

impl UpdateFlags {
    /// The update in the readable syntax: the expression, then the flags'
    /// clauses.
    fn text(&self) -> Result<String, String> {
        let mut clauses = Vec::new();
        for (path, value) in pairs(&self.set)? {
            clauses.push(UpdateClause::Set { path, value });
        }
        for (path, value) in pairs(&self.set_if_absent)? {
            clauses.push(UpdateClause::SetIfAbsent { path, value });
        }
        for (path, by) in pairs(&self.increment)? {
            clauses.push(UpdateClause::Increment { path, by });
        }
        for (path, value) in pairs(&self.append)? {
            clauses.push(UpdateClause::Append { path, value });
        }
        clauses.extend(self.remove.iter().cloned().map(UpdateClause::Remove));
        for (path, value) in pairs(&self.add)? {
            clauses.push(UpdateClause::Add { path, value });
        }
        for (path, value) in pairs(&self.delete)? {
            clauses.push(UpdateClause::Delete { path, value });
        }
        let expression = self.expression.as_deref().map(read_argument).transpose()?;
        joined(expression, flags::update_text(&clauses), |t, extra| {
            format!("{t} {extra}")
        })
        .map_err(|_| "give an update or at least one flag (see --help)".to_string())
    }
}

impl KeyFlags {
    /// The key condition in the readable syntax: as written, or from
    /// `--partition` and at most one `--sort-*` flag.
    fn text(self) -> Result<String, String> {
        match (self.expression, self.partition) {
            (Some(e), None) => read_argument(&e),
            (None, Some(p)) => {
                let (name, value) = flags::split_assignment(&p)?;
                let sorts = [
                    ("=", self.sort_eq),
                    ("<", self.sort_lt),
                    ("<=", self.sort_le),
                    (">", self.sort_gt),
                    (">=", self.sort_ge),
                    ("begins_with", self.sort_begins_with),
                    ("between", self.sort_between),
                ];
                let given: Vec<(&str, String)> = sorts
                    .into_iter()
                    .filter_map(|(op, v)| v.map(|v| (op, v)))
                    .collect();
                let sort = match given.as_slice() {
                    [] => None,
                    [(op, v)] => {
                        let (sort_name, sort_value) = flags::split_assignment(v)?;
                        Some(flags::sort_clause(&sort_name, op, &sort_value)?)
                    }
                    _ => return Err("a key condition has at most one sort-key clause".into()),
                };
                Ok(flags::key_text((&name, &value), sort.as_deref()))
            }
            (Some(_), Some(_)) => Err("give the key condition or --partition, not both".into()),
            (None, None) => Err("give a key condition or --partition NAME=VALUE".into()),
        }
    }
}

pub fn expr(args: ExprArgs) -> CliResult {
    let mut builder = if args.alias_all {
        Builder::aliasing_all()
    } else {
        Builder::new()
    };
    let failed = |e: ferrodyn_patterns::expr::ExprError| e.to_string();
    match args.command {
        ExprCommand::Condition(flags) => {
            builder.condition(&flags.text()?).map_err(failed)?;
        }
        ExprCommand::Update(flags) => {
            builder.update(&flags.text()?).map_err(failed)?;
            if let Some(condition) = &flags.condition {
                builder.condition(condition).map_err(failed)?;
            }
        }
        ExprCommand::Key(flags) => {
            builder.key_condition(&flags.text()?).map_err(failed)?;
        }
    }
    let built = builder.build().map_err(failed)?;
    if args.cli {
        println!("{}", built.cli_args());
    } else {
        let fields = Value::Object(built.request_fields());
        println!(
            "{}",
            serde_json::to_string_pretty(&fields).expect("plain data always serialises")
        );
    }
    Ok(())
}

// ---------------------------------------------------------------- cost

/// Estimate capacity units and the monthly price of a workload.
#[derive(Args, Debug)]
#[command(
    after_help = "A write costs 1 write unit per started 1 KB of item, a strongly \
consistent read 1 read unit per started 4 KB; eventually consistent reads cost half, \
transactional reads and writes double. Prices come from the built-in us-east-1 list price \
table unless --prices names a TOML file of the same shape (print it with --show-prices).\n\n\
Example: 2 KB items, 50 writes/s, 400 eventually consistent reads/s, 10 GB:\n  \
ferrodyn cost --item-size 2KB --writes 50 --eventual-reads 400 --storage-gb 10"
)]
pub struct CostArgs {
    /// Item size: bytes, or with a unit (2KB, 1.5KB; 1 KB = 1024 bytes).
    #[arg(long, default_value = "1KB", value_name = "SIZE")]
    item_size: String,
    /// Standard writes (PutItem, UpdateItem, DeleteItem, batch) per second.
    #[arg(long, default_value_t = 0.0, value_name = "PER_SECOND")]
    writes: f64,
    /// Writes inside TransactWriteItems per second (each costs double).
    #[arg(long, default_value_t = 0.0, value_name = "PER_SECOND")]
    transactional_writes: f64,
    /// Strongly consistent reads per second.
    #[arg(long, default_value_t = 0.0, value_name = "PER_SECOND")]
    reads: f64,
    /// Eventually consistent reads per second (each costs half).
    #[arg(long, default_value_t = 0.0, value_name = "PER_SECOND")]
    eventual_reads: f64,
    /// Reads inside TransactGetItems per second (each costs double).
    #[arg(long, default_value_t = 0.0, value_name = "PER_SECOND")]
    transactional_reads: f64,
    /// Data stored, in GB.
    #[arg(long, default_value_t = 0.0, value_name = "GB")]
    storage_gb: f64,
    /// Target utilisation of provisioned capacity (auto scaling's default is 0.7).
    #[arg(long, default_value_t = 1.0, value_name = "FRACTION")]
    utilization: f64,
    /// A price table (TOML) to use instead of the built-in us-east-1 one.
    #[arg(long, value_name = "FILE")]
    prices: Option<PathBuf>,
    /// Print the built-in price table (a starting point for --prices) and exit.
    #[arg(long)]
    show_prices: bool,
}

pub fn cost(args: CostArgs) -> CliResult {
    if args.show_prices {
        print!("{}", cost::prices::US_EAST_1);
        return Ok(());
    }
    let prices = match &args.prices {
        Some(path) => Prices::load(path)?,
        None => Prices::builtin(),
    };
    if !(args.utilization > 0.0 && args.utilization <= 1.0) {
        return Err("--utilization is a fraction between 0 and 1".into());
    }
    let size = cost::parse_size(&args.item_size)?;
    let workload = Workload {
        item_size: size,
        writes: args.writes,
        transactional_writes: args.transactional_writes,
        strong_reads: args.reads,
        eventual_reads: args.eventual_reads,
        transactional_reads: args.transactional_reads,
    };
    println!(
        "item of {size} bytes: {} write unit(s) per write, {} read unit(s) per strongly consistent read",
        cost::write_units(size),
        cost::read_units(size)
    );
    let estimate = cost::estimate(&[workload], args.storage_gb, args.utilization, &prices);
    println!("{estimate}");
    println!(
        "prices: {} {}, {}",
        prices.region, prices.currency, prices.as_of
    );
    Ok(())
}
