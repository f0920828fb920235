//! PartiQL: ExecuteStatement, BatchExecuteStatement and ExecuteTransaction.
//! A statement is parsed by ferrodyn-partiql, its `?` parameters counted and
//! bound, then translated (translate.rs, with render.rs writing the
//! expressions) into the request of the single-item, Query, Scan or
//! transaction operation that does the same thing, and that operation runs
//! it. The statement therefore gets exactly that operation's validation,
//! capacity, throughput admission, conditions, indexes and stream records;
//! this module only reshapes the answers and the errors into PartiQL's.

pub mod batch;
pub mod execute;
mod render;
pub mod transaction;
mod translate;

use super::choice::{OnConditionFailure, WireEnum};
use super::output::Output;
use super::{delete_item, get_item, put_item, query, scan, update_item};
use ferrodyn_engine::Engine;
use ferrodyn_partiql::ast::{Path, Step};
use ferrodyn_partiql::Parsed;
use ferrodyn_types::{AttributeValue, DynamoError, ErrorKind, Result};
use parking_lot::RwLock;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, LazyLock};
use translate::{Kind, Translated};

/// DynamoDB's limit on a statement's length.
const MAX_STATEMENT_LENGTH: usize = 8192;

/// The fields every statement of a BatchExecuteStatement or an
/// ExecuteTransaction carries, for their shared checks.
pub(crate) trait StatementFields {
    fn statement(&self) -> Option<&str>;
    fn parameters(&self) -> Option<&[AttributeValue]>;
    fn return_values_on_condition_check_failure(&self) -> Option<&str>;
}

/// A statement of a list that passed [`check_statements`]: its text (present)
/// and the member it came from.
pub(crate) struct CheckedStatement<'a, T> {
    pub text: &'a str,
    pub member: &'a T,
}

/// Checks a list of statements (`field` is `statements` or
/// `transactStatements`): present, 1 to `max` of them, and each member's
/// statement text, parameters and ReturnValuesOnConditionCheckFailure.
/// Returns the list in checked form for [`Violations::finish_with`]
/// (`None` when a violation was recorded for the list or a statement).
///
/// [`Violations::finish_with`]: crate::validate::Violations::finish_with
pub(crate) fn check_statements<'a, T: StatementFields + serde::Serialize>(
    v: &mut crate::validate::Violations,
    field: &str,
    statements: &'a Option<Vec<T>>,
    max: usize,
) -> Option<Vec<CheckedStatement<'a, T>>> {
    if v.not_null(field, statements) {
        v.count(field, statements.as_deref(), 1, max);
    }
    for (i, s) in statements.iter().flatten().enumerate().take(max) {
        let member = format!("{field}.{}.member", i + 1);
        if v.not_null(&format!("{member}.statement"), &s.statement()) {
            v.length(
                &format!("{member}.statement"),
                s.statement(),
                1,
                MAX_STATEMENT_LENGTH,
            );
        }
        v.count(
            &format!("{member}.parameters"),
            s.parameters(),
            1,
            usize::MAX,
        );
        v.one_of(
            &format!("{member}.returnValuesOnConditionCheckFailure"),
            s.return_values_on_condition_check_failure(),
            OnConditionFailure::NAMES,
        );
    }
    statements.as_ref().and_then(|list| {
        list.iter()
            .map(|member| {
                Some(CheckedStatement {
                    text: member.statement()?,
                    member,
                })
            })
            .collect()
    })
}

/// Statements parsed so far, by text. Applications run a few statements
/// over and over with different `?` parameters, so each is parsed once.
/// Parsing is pure (text in, tree out), so the cache cannot go stale; it is
/// emptied whenever it reaches [`CACHE_LIMIT`] statements.
static PARSED: LazyLock<RwLock<HashMap<String, Arc<Parsed>>>> = LazyLock::new(Default::default);
const CACHE_LIMIT: usize = 512;

/// Parses a statement (or finds it parsed) and checks that the request
/// brings exactly as many parameters as it has `?`s.
fn prepare(text: &str, parameters: Option<&[AttributeValue]>) -> Result<Arc<Parsed>> {
    let cached = PARSED.read().get(text).cloned();
    let parsed = match cached {
        Some(parsed) => parsed,
        None => {
            let parsed = Arc::new(parse(text)?);
            let mut cache = PARSED.write();
            if cache.len() >= CACHE_LIMIT {
                cache.clear();
            }
            cache.insert(text.to_string(), parsed.clone());
            parsed
        }
    };
    if parameters.map_or(0, <[_]>::len) != parsed.parameters {
        return Err(DynamoError::validation(
            "Number of parameters in request and statement don't match.",
        ));
    }
    Ok(parsed)
}

/// Parses a statement, with DynamoDB's wording for a malformed one.
fn parse(text: &str) -> Result<Parsed> {
    ferrodyn_partiql::parse(text).map_err(|e| {
        if e.unsupported {
            DynamoError::validation(e.to_string())
        } else {
            DynamoError::validation(format!(
                "Statement wasn't well formed, can't be processed: {e}"
            ))
        }
    })
}

/// Decodes a generated request into an operation's request type.
fn request_of<T: DeserializeOwned>(request: Map<String, Value>) -> Result<T> {
    serde_json::from_value(Value::Object(request))
        .map_err(|e| DynamoError::internal(format!("translated request: {e}")))
}

/// Runs a translated single statement's operation (taking its request) and
/// returns its answer as the operation built it (not encoded); an INSERT's
/// failed key condition is a duplicate item.
fn run_single(engine: &Engine, translated: &mut Translated) -> Result<Output> {
    let request = std::mem::take(&mut translated.request);
    let result = match translated.kind {
        Kind::GetItem => {
            let (_, key) = translated.typed.take().expect("a GetItem has its key");
            get_item::execute(
                engine,
                request_of::<get_item::Request>(request)?.with_key(key),
            )
        }
        Kind::Query => query::execute(engine, request_of(request)?),
        Kind::Scan => scan::execute(engine, request_of(request)?),
        Kind::Insert => {
            let (_, item) = translated.typed.take().expect("an INSERT has its item");
            let partition_key = translated
                .partition_key
                .as_deref()
                .expect("an INSERT's key");
            let request = request_of::<put_item::Request>(request)?;
            put_item::execute(engine, request.insert(item, partition_key))
        }
        Kind::UpdateItem => update_item::execute(engine, request_of(request)?),
        Kind::DeleteItem => delete_item::execute(engine, request_of(request)?),
        Kind::ConditionCheck => {
            return Err(DynamoError::validation(
                "EXISTS can only be used in ExecuteTransaction",
            ))
        }
    };
    result.map_err(|error| match translated.kind {
        Kind::Insert if error.kind == ErrorKind::ConditionalCheckFailed => duplicate_item(),
        _ => error,
    })
}

fn duplicate_item() -> DynamoError {
    DynamoError::new(
        ErrorKind::DuplicateItem,
        "Duplicate primary key exists in table",
    )
}

/// An item of a statement's answer as PartiQL shapes it: a SELECT of nested
/// paths answers each path under its last name, and `RETURNING MODIFIED`
/// keeps only the changed attributes. `None` when nothing is left.
fn shape_item(item: Value, translated: &Translated) -> Option<Value> {
    let Value::Object(mut item) = item else {
        return Some(item);
    };
    if let Some(paths) = &translated.projection {
        let mut out = Map::new();
        for path in paths {
            if let Some(value) = value_at(&item, path) {
                out.insert(answer_name(path), value.clone());
            }
        }
        return Some(Value::Object(out));
    }
    if let Some(roots) = &translated.modified {
        item.retain(|name, _| roots.contains(name));
        if item.is_empty() {
            return None;
        }
    }
    Some(Value::Object(item))
}

/// The value at a document path of an item in DynamoDB JSON.
fn value_at<'i>(item: &'i Map<String, Value>, path: &Path) -> Option<&'i Value> {
    let mut value = item.get(&path.root)?;
    for step in &path.steps {
        value = match step {
            Step::Field(name) => value.get("M")?.get(name)?,
            Step::Index(i) => value.get("L")?.get(*i as usize)?,
        };
    }
    Some(value)
}

/// `a.b[1]` is answered as `b[1]`: the last name with the indexes after it.
fn answer_name(path: &Path) -> String {
    let last_field = path.steps.iter().rposition(|s| matches!(s, Step::Field(_)));
    let (mut name, rest) = match last_field {
        Some(i) => match &path.steps[i] {
            Step::Field(name) => (name.clone(), &path.steps[i + 1..]),
            Step::Index(_) => unreachable!("found a field"),
        },
        None => (path.root.clone(), &path.steps[..]),
    };
    for step in rest {
        if let Step::Index(i) = step {
            name.push_str(&format!("[{i}]"));
        }
    }
    name
}
