//! `ferrodyn backups ...` (on-demand backups: list, create, describe, delete,
//! restore) and `ferrodyn recovery ...` (point-in-time recovery: status, on,
//! off, restore). Thin layers over the API calls, against Ferrodyn or AWS.

use super::output::{new_table, print_document};
use super::tables::wait_until_active;
use super::{CliResult, Common, OutputFormat};
use clap::{Args, Subcommand};
use ferrodyn_client::Client;
use ferrodyn_types::dates::{iso8601_utc, iso8601_utc_millis, parse_iso8601_utc};
use serde_json::{json, Value};
use std::time::{Duration, Instant};

#[derive(Subcommand)]
pub enum BackupsCommand {
    /// List backups, oldest first (all tables, or one).
    List {
        /// Only this table's backups.
        table: Option<String>,
        /// USER (the default), SYSTEM (kept when a table with point-in-time
        /// recovery was deleted) or ALL.
        #[arg(long, default_value = "USER")]
        r#type: String,
        #[command(flatten)]
        common: Common,
    },
    /// Back up a table now (the copy finishes in the background).
    Create {
        table: String,
        /// The backup's name (3 to 255 of a-z, A-Z, 0-9, `_`, `-`, `.`).
        name: String,
        /// Wait until the backup is AVAILABLE.
        #[arg(long)]
        wait: bool,
        #[command(flatten)]
        common: Common,
    },
    /// Show a backup and the table it was taken from.
    Describe {
        arn: String,
        #[command(flatten)]
        common: Common,
    },
    /// Delete a backup (asks for --yes).
    Delete {
        arn: String,
        /// Confirm: a deleted backup cannot be restored.
        #[arg(long)]
        yes: bool,
        #[command(flatten)]
        common: Common,
    },
    /// Restore a backup as a new table.
    Restore {
        arn: String,
        /// The new table's name (it must not exist).
        target: String,
        /// Wait until the restored table is ACTIVE.
        #[arg(long)]
        wait: bool,
        #[command(flatten)]
        common: Common,
    },
}

#[derive(Subcommand)]
pub enum RecoveryCommand {
    /// Show whether point-in-time recovery is on and the restorable window.
    Status {
        table: String,
        #[command(flatten)]
        common: Common,
    },
    /// Turn point-in-time recovery on (or change its recovery period).
    On {
        table: String,
        /// Days of history to keep, 1 to 35 [default: 35, or the current period].
        #[arg(long)]
        days: Option<u32>,
        #[command(flatten)]
        common: Common,
    },
    /// Turn point-in-time recovery off (its history goes).
    Off {
        table: String,
        #[command(flatten)]
        common: Common,
    },
    /// Restore a table as it was at an instant, as a new table.
    Restore(RecoveryRestoreArgs),
}

#[derive(Args)]
#[command(after_help = "Examples:\n  \
    ferrodyn recovery restore orders orders-before --at 2026-12-04T08:00:00Z --wait\n  \
    ferrodyn recovery restore orders orders-now --latest")]
pub struct RecoveryRestoreArgs {
    /// The table to restore (recovery must be on).
    source: String,
    /// The new table's name.
    target: String,
    /// The instant: YYYY-MM-DDTHH:MM:SS[.fff]Z (UTC) or seconds since the epoch.
    #[arg(
        long,
        value_name = "TIME",
        conflicts_with = "latest",
        required_unless_present = "latest"
    )]
    at: Option<String>,
    /// The latest restorable instant.
    #[arg(long)]
    latest: bool,
    /// Wait until the restored table is ACTIVE.
    #[arg(long)]
    wait: bool,
    #[command(flatten)]
    common: Common,
}

pub fn backups(command: BackupsCommand) -> CliResult {
    match command {
        BackupsCommand::List {
            table,
            r#type,
            common,
        } => list(&common, table, &r#type),
        BackupsCommand::Create {
            table,
            name,
            wait,
            common,
        } => create(&common, &table, &name, wait),
        BackupsCommand::Describe { arn, common } => {
            let client = common.connect()?;
            let answer = call(&client, "DescribeBackup", json!({ "BackupArn": arn }))?;
            print_document(&answer["BackupDescription"], common.output)
        }
        BackupsCommand::Delete { arn, yes, common } => {
            if !yes {
                return Err(format!(
                    "deleting backup {arn} cannot be undone; add --yes to confirm"
                ));
            }
            let client = common.connect()?;
            let answer = call(&client, "DeleteBackup", json!({ "BackupArn": arn }))?;
            done(&common, &answer, &format!("deleted backup {arn}"))
        }
        BackupsCommand::Restore {
            arn,
            target,
            wait,
            common,
        } => {
            let request = json!({ "BackupArn": arn, "TargetTableName": target });
            restore(&common, "RestoreTableFromBackup", request, &target, wait)
        }
    }
}

pub fn recovery(command: RecoveryCommand) -> CliResult {
    match command {
        RecoveryCommand::Status { table, common } => {
            let client = common.connect()?;
            let answer = call(
                &client,
                "DescribeContinuousBackups",
                json!({ "TableName": table }),
            )?;
            print_recovery(&common, &answer)
        }
        RecoveryCommand::On {
            table,
            days,
            common,
        } => {
            let mut spec = json!({ "PointInTimeRecoveryEnabled": true });
            if let Some(days) = days {
                spec["RecoveryPeriodInDays"] = json!(days);
            }
            switch(&common, &table, spec)
        }
        RecoveryCommand::Off { table, common } => switch(
            &common,
            &table,
            json!({ "PointInTimeRecoveryEnabled": false }),
        ),
        RecoveryCommand::Restore(args) => {
            let mut request =
                json!({ "SourceTableName": args.source, "TargetTableName": args.target });
            match args.at.as_deref().map(instant).transpose()? {
                Some(at) => request["RestoreDateTime"] = json!(at),
                None => request["UseLatestRestorableTime"] = json!(true),
            }
            restore(
                &args.common,
                "RestoreTableToPointInTime",
                request,
                &args.target,
                args.wait,
            )
        }
    }
}

fn call(client: &Client, operation: &str, request: Value) -> Result<Value, String> {
    client.call(operation, &request).map_err(|e| e.to_string())
}

/// A one-line confirmation for people, the answer for the JSON formats.
fn done(common: &Common, answer: &Value, line: &str) -> CliResult {
    match common.output {
        OutputFormat::Table => {
            println!("{line}");
            Ok(())
        }
        format => print_document(answer, format),
    }
}

fn list(common: &Common, table: Option<String>, backup_type: &str) -> CliResult {
    let client = common.connect()?;
    let mut request = json!({ "BackupType": backup_type });
    if let Some(table) = table {
        request["TableName"] = json!(table);
    }
    let mut summaries = Vec::new();
    loop {
        let page = call(&client, "ListBackups", request.clone())?;
        summaries.extend(
            page["BackupSummaries"]
                .as_array()
                .cloned()
                .unwrap_or_default(),
        );
        match page.get("LastEvaluatedBackupArn") {
            Some(last) => request["ExclusiveStartBackupArn"] = last.clone(),
            None => break,
        }
    }
    if common.output != OutputFormat::Table {
        return print_document(&json!({ "BackupSummaries": summaries }), common.output);
    }
    let mut shown = new_table();
    shown.set_header(vec![
        "table", "name", "status", "type", "created", "bytes", "arn",
    ]);
    for summary in &summaries {
        let text = |field: &str| summary[field].as_str().unwrap_or_default().to_string();
        let created = summary["BackupCreationDateTime"]
            .as_f64()
            .map(iso8601_utc)
            .unwrap_or_default();
        shown.add_row(vec![
            text("TableName"),
            text("BackupName"),
            text("BackupStatus"),
            text("BackupType"),
            created,
            summary["BackupSizeBytes"].to_string(),
            text("BackupArn"),
        ]);
    }
    println!("{shown}");
    Ok(())
}

fn create(common: &Common, table: &str, name: &str, wait: bool) -> CliResult {
    let client = common.connect()?;
    let answer = call(
        &client,
        "CreateBackup",
        json!({ "TableName": table, "BackupName": name }),
    )?;
    let arn = answer["BackupDetails"]["BackupArn"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let mut status = answer["BackupDetails"]["BackupStatus"]
        .as_str()
        .unwrap_or("?")
        .to_string();
    let deadline = Instant::now() + Duration::from_secs(3600);
    while wait && status != "AVAILABLE" {
        if Instant::now() > deadline {
            return Err(format!("backup {arn} is still {status} after an hour"));
        }
        std::thread::sleep(Duration::from_millis(200));
        let described = call(&client, "DescribeBackup", json!({ "BackupArn": arn }))?;
        status = described["BackupDescription"]["BackupDetails"]["BackupStatus"]
            .as_str()
            .unwrap_or("?")
            .to_string();
    }
    done(
        common,
        &answer,
        &format!("backup {arn} of {table}: {status}"),
    )
}

fn restore(
    common: &Common,
    operation: &str,
    request: Value,
    target: &str,
    wait: bool,
) -> CliResult {
    let client = common.connect()?;
    let mut answer = call(&client, operation, request)?;
    if wait {
        answer = json!({ "TableDescription": wait_until_active(&client, target)? });
    }
    let status = answer["TableDescription"]["TableStatus"]
        .as_str()
        .unwrap_or("?")
        .to_string();
    done(
        common,
        &answer,
        &format!("restoring table {target} ({status})"),
    )
}

fn switch(common: &Common, table: &str, spec: Value) -> CliResult {
    let client = common.connect()?;
    let request = json!({ "TableName": table, "PointInTimeRecoverySpecification": spec });
    let answer = call(&client, "UpdateContinuousBackups", request)?;
    print_recovery(common, &answer)
}

fn print_recovery(common: &Common, answer: &Value) -> CliResult {
    let description = &answer["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"];
    if common.output != OutputFormat::Table {
        return print_document(answer, common.output);
    }
    let time = |field: &str| {
        (description[field].as_f64())
            .map(iso8601_utc_millis)
            .unwrap_or_else(|| "-".into())
    };
    let status = description["PointInTimeRecoveryStatus"]
        .as_str()
        .unwrap_or("?");
    match status {
        "ENABLED" => println!(
            "point-in-time recovery ENABLED ({} days): restorable from {} to {}",
            description["RecoveryPeriodInDays"],
            time("EarliestRestorableDateTime"),
            time("LatestRestorableDateTime")
        ),
        other => println!("point-in-time recovery {other}"),
    }
    Ok(())
}

/// `--at`: an ISO 8601 UTC instant or seconds since the epoch.
fn instant(text: &str) -> Result<f64, String> {
    (text.parse::<f64>().ok())
        .or_else(|| parse_iso8601_utc(text))
        .ok_or_else(|| {
            format!("--at {text}: expected YYYY-MM-DDTHH:MM:SS[.fff]Z or seconds since the epoch")
        })
}
