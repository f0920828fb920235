//! `ferrodyn clock`, `ferrodyn snapshot` and `ferrodyn reset`: the test
//! harness of a running Ferrodyn (`/ferrodyn/` endpoints, see the server's
//! protocol/harness.rs) from the command line. The access key the commands
//! sign with names the namespace, as for DynamoDB calls.

use super::{CliResult, Common};
use clap::{Args, ValueEnum};
use serde_json::{json, Value};

#[derive(Args)]
#[command(after_help = "Examples:\n  \
    ferrodyn clock\n  \
    ferrodyn clock --advance 25h\n  \
    ferrodyn clock --set 2030-01-01T00:00:00Z\n\n\
    Moving the clock needs a server started with --clock manual.")]
pub struct ClockArgs {
    /// Move the clock forward ("25h", "1h 30m", "90s"); Time to Live
    /// deletes what expired at once.
    #[arg(long, value_name = "DURATION", conflicts_with = "set")]
    advance: Option<String>,
    /// Set the clock (RFC 3339, never backwards).
    #[arg(long, value_name = "TIME")]
    set: Option<String>,
    #[command(flatten)]
    common: Common,
}

#[derive(Args)]
#[command(after_help = "Examples:\n  \
    ferrodyn snapshot save seeded\n  \
    ferrodyn snapshot restore seeded\n  \
    ferrodyn snapshot list\n\n\
    Snapshots hold every table of the namespace (items, indexes, streams,\n\
    settings) in the server's memory; they end with the server.")]
pub struct SnapshotArgs {
    action: SnapshotAction,
    /// The snapshot (save, restore, delete).
    #[arg(required_if_eq_any([("action", "save"), ("action", "restore"), ("action", "delete")]))]
    name: Option<String>,
    #[command(flatten)]
    common: Common,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum SnapshotAction {
    /// Save every table of the namespace as NAME.
    Save,
    /// Put the namespace's tables back as NAME saved them.
    Restore,
    /// The namespace's snapshots.
    List,
    /// Forget NAME.
    Delete,
}

#[derive(Args)]
pub struct ResetArgs {
    /// Yes, delete every table of the namespace.
    #[arg(long)]
    yes: bool,
    #[command(flatten)]
    common: Common,
}

pub fn clock(args: ClockArgs) -> CliResult {
    let (method, body) = match (&args.advance, &args.set) {
        (Some(duration), _) => ("POST", Some(json!({ "advance": duration }))),
        (None, Some(time)) => ("POST", Some(json!({ "set": time }))),
        (None, None) => ("GET", None),
    };
    let answer = call(&args.common, method, "/ferrodyn/clock", body)?;
    let (now, mode) = (answer["now"].as_str(), answer["mode"].as_str());
    println!("{} ({} clock)", now.unwrap_or("?"), mode.unwrap_or("?"));
    if let Some(expired) = answer.get("expiredItems") {
        println!("Time to Live deleted {expired} item(s)");
    }
    Ok(())
}

pub fn snapshot(args: SnapshotArgs) -> CliResult {
    let name = args.name.as_deref().unwrap_or_default();
    let (method, path) = match args.action {
        SnapshotAction::Save => ("POST", format!("/ferrodyn/snapshots/{name}")),
        SnapshotAction::Restore => ("POST", format!("/ferrodyn/snapshots/{name}/restore")),
        SnapshotAction::List => ("GET", "/ferrodyn/snapshots".to_string()),
        SnapshotAction::Delete => ("DELETE", format!("/ferrodyn/snapshots/{name}")),
    };
    let answer = call(&args.common, method, &path, None)?;
    let done = match args.action {
        SnapshotAction::List => {
            for name in answer["snapshots"].as_array().into_iter().flatten() {
                println!("{}", name.as_str().unwrap_or_default());
            }
            return Ok(());
        }
        SnapshotAction::Delete => {
            println!("deleted snapshot {name}");
            return Ok(());
        }
        SnapshotAction::Save => "saved",
        SnapshotAction::Restore => "restored",
    };
    let (tables, keys) = (&answer["tables"], &answer["keys"]);
    println!("{done} {name}: {tables} table(s), {keys} stored key(s)");
    Ok(())
}

pub fn reset(args: ResetArgs) -> CliResult {
    if !args.yes {
        return Err("reset deletes every table of the namespace: add --yes".into());
    }
    let answer = call(&args.common, "DELETE", "/ferrodyn/data", None)?;
    println!("deleted {} table(s)", answer["tablesDeleted"]);
    Ok(())
}

fn call(common: &Common, method: &str, path: &str, body: Option<Value>) -> Result<Value, String> {
    let client = common.connect()?;
    client.harness(method, path, body.as_ref()).map_err(|e| {
        format!(
            "{e} (the test harness is Ferrodyn's, at {}{path})",
            client.endpoint()
        )
    })
}
