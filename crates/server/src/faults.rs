//! Fault injection: failures on purpose, so that users can test the retry
//! code their applications need against DynamoDB (unprocessed batch items,
//! transaction conflicts, throttling, server errors). Off unless configured.
//!
//! A rule names a fault, a rate (probability per request, or per batch
//! request for `unprocessed`), and optionally an operation and a table:
//!
//! ```text
//! --fault BatchWriteItem=unprocessed@0.2          every table
//! --fault PutItem:orders=throttling@0.05          one table
//! --fault '*=internal@0.01'                       every operation
//! --fault TransactWriteItems=hold:200ms@0.1       hold a transaction's items
//! ```
//!
//! `hold:Nms` keeps a TransactWriteItems' items locked for N milliseconds
//! before it commits, so that concurrent requests on those items meet real
//! transaction conflicts (TransactionConflictException, TransactionConflict
//! cancellation reasons) as often as a test needs, instead of only in the
//! microseconds a transaction normally takes.
//!
//! or a JSON file (`--fault-config`): `{"seed": 7, "rules": [{"operation":
//! "BatchWriteItem", "table": "tickets", "fault": "unprocessed", "rate": 0.2}]}`
//! (a hold rule adds `"hold_ms": 200`).
//! Draws come from one seeded generator, so a run with the same seed and the
//! same request sequence fails the same requests.
//!
//! Test suites change the rules while the server runs (`PUT /ferrodyn/faults`
//! with the JSON above, `DELETE` to clear; protocol/harness.rs), except
//! `hold`, which is set at start-up: it makes writes block their thread,
//! which the server must know before it serves any ([`Faults::replace`]).
//! Rules set that way on a server with namespaces belong to the caller's
//! namespace and fire only for its requests, so tests sharing a server
//! (one per namespace) inject failures without touching each other.

use crate::ops::{Kind, Operation};
use ferrodyn_engine::transactions::{cancellation_error, CancellationReason};
use ferrodyn_types::{DynamoError, ErrorKind};
use parking_lot::{Mutex, RwLock};
use serde::Deserialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// What goes wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FaultKind {
    /// BatchWriteItem/BatchGetItem leave requests in UnprocessedItems/Keys.
    Unprocessed,
    /// Transactions are cancelled with a TransactionConflict reason; single
    /// writes fail with TransactionConflictException.
    Conflict,
    /// ThrottlingException.
    Throttling,
    /// ProvisionedThroughputExceededException.
    Provisioned,
    /// InternalServerError (HTTP 500).
    Internal,
    /// A TransactWriteItems holds its items for `hold_ms` before committing.
    Hold,
}

impl FaultKind {
    fn parse(text: &str) -> Option<FaultKind> {
        Some(match text {
            "unprocessed" => FaultKind::Unprocessed,
            "conflict" => FaultKind::Conflict,
            "throttling" => FaultKind::Throttling,
            "provisioned" => FaultKind::Provisioned,
            "internal" => FaultKind::Internal,
            "hold" => FaultKind::Hold,
            _ => return None,
        })
    }
}

#[derive(Clone, Debug, Deserialize)]
pub struct FaultRule {
    /// Operation name, or None / "*" for every operation.
    #[serde(default)]
    pub operation: Option<String>,
    /// Table name, or None for every table.
    #[serde(default)]
    pub table: Option<String>,
    pub fault: FaultKind,
    pub rate: f64,
    /// Milliseconds a `hold` rule keeps a transaction's items.
    #[serde(default)]
    pub hold_ms: u64,
    /// The namespace whose requests it applies to (None: every request).
    #[serde(skip)]
    pub namespace: Option<String>,
}

impl FaultRule {
    /// Parses `OPERATION[:TABLE]=FAULT@RATE` (FAULT `hold:Nms` for a hold).
    pub fn parse(spec: &str) -> Result<FaultRule, String> {
        let usage = || {
            format!("invalid fault rule '{spec}': expected OPERATION[:TABLE]=FAULT@RATE, e.g. BatchWriteItem=unprocessed@0.2 (faults: unprocessed, conflict, throttling, provisioned, internal, hold:Nms)")
        };
        let (target, effect) = spec.split_once('=').ok_or_else(usage)?;
        let (fault, rate) = effect.split_once('@').ok_or_else(usage)?;
        let (fault, hold_ms) = match fault.trim().split_once(':') {
            Some(("hold", ms)) => {
                let ms = ms.trim().strip_suffix("ms").unwrap_or(ms.trim());
                ("hold", ms.parse::<u64>().map_err(|_| usage())?)
            }
            Some(_) => return Err(usage()),
            None => (fault.trim(), 0),
        };
        let fault = FaultKind::parse(fault).ok_or_else(usage)?;
        let rate: f64 = rate.trim().parse().map_err(|_| usage())?;
        let (operation, table) = match target.split_once(':') {
            Some((op, table)) => (op.trim(), Some(table.trim().to_string())),
            None => (target.trim(), None),
        };
        let rule = FaultRule {
            operation: (operation != "*" && !operation.is_empty()).then(|| operation.to_string()),
            table,
            fault,
            rate,
            hold_ms,
            namespace: None,
        };
        rule.check()?;
        Ok(rule)
    }

    fn check(&self) -> Result<(), String> {
        if !(0.0..=1.0).contains(&self.rate) {
            return Err(format!("fault rate {} must be between 0 and 1", self.rate));
        }
        // A rule for a misspelt operation would never fire, silently.
        if let Some(name) = self.operation.as_deref() {
            if !Operation::ALL
                .iter()
                .any(|operation| operation.name() == name)
            {
                return Err(format!(
                    "fault rule names no operation Ferrodyn serves: {name}"
                ));
            }
        }
        if self.fault == FaultKind::Hold {
            if self.operation.as_deref() != Some("TransactWriteItems") {
                return Err("a hold fault applies to TransactWriteItems only: TransactWriteItems=hold:200ms@RATE".into());
            }
            if !(1..=60_000).contains(&self.hold_ms) {
                return Err(format!(
                    "a hold fault needs hold_ms between 1 and 60000, not {}",
                    self.hold_ms
                ));
            }
        }
        Ok(())
    }

    fn matches(&self, operation: &str, tables: &[&str]) -> bool {
        self.operation.as_deref().is_none_or(|o| o == operation)
            && self.table.as_deref().is_none_or(|t| tables.contains(&t))
            && (self.namespace.is_none()
                || self.namespace == ferrodyn_engine::region::request_namespace())
    }
}

/// The JSON configuration file's shape.
#[derive(Deserialize)]
pub struct FaultConfig {
    #[serde(default)]
    pub seed: Option<u64>,
    pub rules: Vec<FaultRule>,
}

impl FaultConfig {
    /// A configuration sent over HTTP: as the file, where a rule may also
    /// be given as its `--fault` text (`"BatchWriteItem=unprocessed@0.2"`).
    pub fn from_json(body: &[u8]) -> Result<FaultConfig, String> {
        let invalid = |e: serde_json::Error| format!("invalid fault configuration: {e}");
        let mut value: serde_json::Value = serde_json::from_slice(body).map_err(invalid)?;
        if !value.is_object() {
            return Err(r#"invalid fault configuration: expected {"rules": [...]}"#.into());
        }
        let mut parsed = Vec::new();
        for rule in value["rules"].as_array().cloned().unwrap_or_default() {
            parsed.push(match rule {
                serde_json::Value::String(text) => FaultRule::parse(&text)?,
                other => serde_json::from_value(other).map_err(invalid)?,
            });
        }
        value["rules"] = serde_json::Value::Array(Vec::new());
        let mut config: FaultConfig = serde_json::from_value(value).map_err(invalid)?;
        config.rules = parsed;
        Ok(config)
    }

    /// Parses and checks a JSON fault configuration.
    pub fn parse(text: &str) -> Result<FaultConfig, String> {
        let config: FaultConfig =
            serde_json::from_str(text).map_err(|e| format!("invalid fault configuration: {e}"))?;
        for rule in &config.rules {
            rule.check()?;
        }
        Ok(config)
    }
}

/// The configured faults and their random source.
pub struct Faults {
    rules: RwLock<Arc<Vec<FaultRule>>>,
    /// Whether there are rules: read on every request without a lock.
    active: AtomicBool,
    rng: Mutex<fastrand::Rng>,
    /// A hold rule was given at start-up (see [`Faults::replace`]).
    hold_allowed: bool,
}

impl Faults {
    pub fn none() -> Faults {
        Faults::new(Vec::new(), 0)
    }

    pub fn new(rules: Vec<FaultRule>, seed: u64) -> Faults {
        Faults {
            hold_allowed: rules.iter().any(|r| r.fault == FaultKind::Hold),
            active: AtomicBool::new(!rules.is_empty()),
            rules: RwLock::new(Arc::new(rules)),
            rng: Mutex::new(fastrand::Rng::with_seed(seed)),
        }
    }

    pub fn is_active(&self) -> bool {
        self.active.load(Ordering::Relaxed)
    }

    /// Whether some rule holds transactions (their writes then block).
    pub fn holds_transactions(&self) -> bool {
        self.rules().iter().any(|r| r.fault == FaultKind::Hold)
    }

    /// The rules in force.
    fn rules(&self) -> Arc<Vec<FaultRule>> {
        Arc::clone(&self.rules.read())
    }

    /// How many rules are in force for `namespace`'s requests.
    pub fn rule_count(&self, namespace: Option<&str>) -> usize {
        let applies =
            |rule: &&FaultRule| rule.namespace.is_none() || rule.namespace.as_deref() == namespace;
        self.rules().iter().filter(applies).count()
    }

    /// Puts `config`'s rules (checked) in force instead of those of
    /// `namespace` (None: the rules for every request), reseeding the draws
    /// when it gives a seed; other namespaces' rules stay. A `hold` rule is
    /// refused unless one was given at start-up: the server decided then
    /// whether writes may block.
    pub fn replace(&self, namespace: Option<&str>, config: FaultConfig) -> Result<(), String> {
        let holds = config.rules.iter().any(|r| r.fault == FaultKind::Hold);
        if holds && !self.hold_allowed {
            return Err("hold rules are set at start-up (--fault), not while serving".into());
        }
        for rule in &config.rules {
            rule.check()?;
        }
        if let Some(seed) = config.seed {
            *self.rng.lock() = fastrand::Rng::with_seed(seed);
        }
        let mut rules = self.rules.write();
        let mut kept: Vec<FaultRule> = (rules.iter())
            .filter(|rule| rule.namespace.as_deref() != namespace)
            .cloned()
            .collect();
        kept.extend(config.rules.into_iter().map(|rule| FaultRule {
            namespace: namespace.map(str::to_string),
            ..rule
        }));
        self.active.store(!kept.is_empty(), Ordering::Relaxed);
        *rules = Arc::new(kept);
        Ok(())
    }

    /// How long a TransactWriteItems over these tables holds its items, if
    /// a hold rule fires.
    pub fn transaction_hold(&self, tables: &[&str]) -> Option<std::time::Duration> {
        let operation = "TransactWriteItems";
        self.rules()
            .iter()
            .filter(|r| r.fault == FaultKind::Hold && r.matches(operation, tables))
            .find(|r| self.draw() < r.rate)
            .map(|r| std::time::Duration::from_millis(r.hold_ms))
    }

    /// A uniform draw in [0, 1) from the seeded generator.
    fn draw(&self) -> f64 {
        self.rng.lock().f64()
    }

    fn fires(&self, kind: FaultKind, operation: &str, tables: &[&str]) -> bool {
        self.rules()
            .iter()
            .filter(|r| r.fault == kind && r.matches(operation, tables))
            .any(|r| self.draw() < r.rate)
    }

    /// A fault that fails the whole request, if one fires.
    pub fn request_fault(&self, operation: Operation, tables: &[&str]) -> Option<DynamoError> {
        if !self.is_active() {
            return None;
        }
        let (kind, operation) = (operation.kind(), operation.name());
        if self.fires(FaultKind::Internal, operation, tables) {
            return Some(DynamoError::internal(
                "Internal server error (injected fault)",
            ));
        }
        if self.fires(FaultKind::Throttling, operation, tables) {
            return Some(DynamoError::new(
                ErrorKind::Throttling,
                "Rate of requests exceeds the allowed throughput.",
            ));
        }
        if self.fires(FaultKind::Provisioned, operation, tables) {
            return Some(ferrodyn_engine::throughput::exceeded());
        }
        // Transactions and batches draw their conflicts per action
        // (`transaction_conflict`).
        if kind == Kind::ItemWrite && self.fires(FaultKind::Conflict, operation, tables) {
            return Some(DynamoError::new(
                ErrorKind::TransactionConflict,
                "Transaction is ongoing for the item",
            ));
        }
        None
    }

    /// Whether one request of a batch should come back unprocessed.
    pub fn leave_unprocessed(&self, operation: &str, table: &str) -> bool {
        self.is_active() && self.fires(FaultKind::Unprocessed, operation, &[table])
    }

    /// For a transaction over these tables (one per action, in order): the
    /// cancellation to report if a conflict fires.
    pub fn transaction_conflict(&self, operation: &str, tables: &[&str]) -> Option<DynamoError> {
        if !self.is_active()
            || tables.is_empty()
            || !self.fires(FaultKind::Conflict, operation, tables)
        {
            return None;
        }
        let victim = ((self.draw() * tables.len() as f64) as usize).min(tables.len() - 1);
        let reasons: Vec<CancellationReason> = (0..tables.len())
            .map(|i| {
                if i == victim {
                    CancellationReason::conflict()
                } else {
                    CancellationReason::none()
                }
            })
            .collect();
        Some(cancellation_error(&reasons))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_parse() {
        let rule = FaultRule::parse("BatchWriteItem:tickets=unprocessed@0.25").unwrap();
        assert_eq!(rule.operation.as_deref(), Some("BatchWriteItem"));
        assert_eq!(rule.table.as_deref(), Some("tickets"));
        assert_eq!(rule.fault, FaultKind::Unprocessed);
        assert_eq!(rule.rate, 0.25);
        assert!(FaultRule::parse("*=internal@0.1")
            .unwrap()
            .operation
            .is_none());
        assert!(FaultRule::parse("PutItem=explode@0.1").is_err());
        let hold = FaultRule::parse("TransactWriteItems:t=hold:250ms@0.5").unwrap();
        assert_eq!((hold.fault, hold.hold_ms), (FaultKind::Hold, 250));
        assert!(FaultRule::parse("PutItem=hold:250ms@0.5").is_err());
        assert!(FaultRule::parse("TransactWriteItems=hold:0ms@0.5").is_err());
        assert!(FaultRule::parse("TransactWriteItems=hold:soon@0.5").is_err());
        assert!(FaultRule::parse("PutItem=throttling@2").is_err());
    }

    #[test]
    fn the_same_seed_fails_the_same_requests() {
        let run = || {
            let faults = Faults::new(
                vec![FaultRule::parse("BatchWriteItem=unprocessed@0.3").unwrap()],
                42,
            );
            (0..200)
                .map(|_| faults.leave_unprocessed("BatchWriteItem", "t"))
                .collect::<Vec<_>>()
        };
        let first = run();
        assert_eq!(first, run());
        let hits = first.iter().filter(|h| **h).count();
        assert!(
            (30..90).contains(&hits),
            "about 30% should fire, got {hits}"
        );
    }

    #[test]
    fn a_rule_for_an_unknown_operation_is_refused() {
        let error = FaultRule::parse("PutItems=internal@1").unwrap_err();
        assert_eq!(
            error,
            "fault rule names no operation Ferrodyn serves: PutItems"
        );
        assert!(FaultRule::parse("GetRecords=internal@1").is_ok());
    }

    #[test]
    fn rules_only_fire_for_their_operation_and_table() {
        let faults = Faults::new(vec![FaultRule::parse("PutItem:a=throttling@1").unwrap()], 1);
        assert!(faults.request_fault(Operation::PutItem, &["a"]).is_some());
        assert!(faults.request_fault(Operation::PutItem, &["b"]).is_none());
        assert!(faults.request_fault(Operation::GetItem, &["a"]).is_none());
    }

    #[test]
    fn transaction_conflicts_name_one_action() {
        let faults = Faults::new(
            vec![FaultRule::parse("TransactWriteItems=conflict@1").unwrap()],
            3,
        );
        let error = faults
            .transaction_conflict("TransactWriteItems", &["t", "t", "t"])
            .unwrap();
        assert_eq!(error.kind, ErrorKind::TransactionCanceled);
        assert_eq!(error.message.matches("TransactionConflict").count(), 1);
    }
}
