//! Contributor Insights: UpdateContributorInsights,
//! DescribeContributorInsights and ListContributorInsights, for tables and
//! their global indexes (engine insights.rs keeps the settings and counts).
//! Shapes and statuses as the service model and probes of DynamoDB give
//! them (docs/design/partitions-and-streams.md §3): a never-configured
//! resource describes as DISABLED alone, List leaves DISABLED ones out and
//! puts a table before its indexes.

use crate::ops::common::ResponseBody;
use crate::validate::Violations;
use ferrodyn_engine::insights::{rule_names, InsightsAction, InsightsState};
use ferrodyn_engine::table::Table;
use ferrodyn_engine::Engine;
use ferrodyn_types::{DynamoError, Result};
use serde::Deserialize;
use serde_json::{json, Value};

const MODES: [&str; 2] = ["ACCESSED_AND_THROTTLED_KEYS", "THROTTLED_KEYS"];

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct UpdateRequest {
    table_name: Option<String>,
    index_name: Option<String>,
    contributor_insights_action: Option<String>,
    contributor_insights_mode: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeRequest {
    table_name: Option<String>,
    index_name: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListRequest {
    table_name: Option<String>,
    next_token: Option<String>,
    max_results: Option<i64>,
}

/// TableName (a name or an ARN, 1..1024) and IndexName (3..255) checks.
fn check_names(v: &mut Violations, table: &Option<String>, index: &Option<String>) {
    if v.not_null("tableName", table) {
        v.length("tableName", table.as_deref(), 1, 1024);
    }
    if let Some(index) = index {
        v.name_rules("indexName", index, 3, 255);
    }
}

pub fn update(engine: &Engine, request: UpdateRequest) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    check_names(&mut v, &request.table_name, &request.index_name);
    let action = request.contributor_insights_action.as_deref();
    if v.not_null(
        "contributorInsightsAction",
        &request.contributor_insights_action,
    ) {
        v.one_of("contributorInsightsAction", action, &["ENABLE", "DISABLE"]);
    }
    v.one_of(
        "contributorInsightsMode",
        request.contributor_insights_mode.as_deref(),
        &MODES,
    );
    let table_name = v.finish_with(request.table_name.as_deref())?;
    let action = match action {
        Some("ENABLE") => InsightsAction::Enable,
        _ => InsightsAction::Disable,
    };
    let index = request.index_name.as_deref();
    let mode = request.contributor_insights_mode.as_deref();
    let (table, state) = engine.update_contributor_insights(table_name, index, action, mode)?;
    let mut body = ResponseBody::default();
    body.value("TableName", json!(table.name));
    if let Some(index) = index {
        body.value("IndexName", json!(index));
    }
    body.value("ContributorInsightsStatus", json!(state.status));
    body.value("ContributorInsightsMode", json!(state.mode));
    body.finish()
}

pub fn describe(engine: &Engine, request: DescribeRequest) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    check_names(&mut v, &request.table_name, &request.index_name);
    let table_name = v.finish_with(request.table_name.as_deref())?;
    let index = request.index_name.as_deref();
    let (table, state) = engine.describe_contributor_insights(table_name, index)?;
    let mut body = ResponseBody::default();
    body.value("TableName", json!(table.name));
    if let Some(index) = index {
        body.value("IndexName", json!(index));
    }
    let Some(state) = state else {
        body.value("ContributorInsightsStatus", json!("DISABLED"));
        return body.finish();
    };
    if state.counting() {
        body.value(
            "ContributorInsightsRuleList",
            json!(rules(&table, index, &state)),
        );
    }
    body.value("ContributorInsightsStatus", json!(state.status));
    body.value("LastUpdateDateTime", json!(state.updated));
    if let Some((name, description)) = &state.failure {
        body.value(
            "FailureException",
            json!({ "ExceptionName": name, "ExceptionDescription": description }),
        );
    }
    body.value("ContributorInsightsMode", json!(state.mode));
    body.finish()
}

/// The resource's rule names: `table` or `table-index` in them.
fn rules(table: &Table, index: Option<&str>, state: &InsightsState) -> Vec<String> {
    let resource = match index {
        Some(index) => format!("{}-{index}", table.name),
        None => table.name.clone(),
    };
    let has_sort_key = !table.key_names(index).1.is_empty();
    rule_names(state, &resource, has_sort_key)
}

pub fn list(engine: &Engine, request: ListRequest) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    if let Some(name) = &request.table_name {
        v.length("tableName", Some(name), 1, 1024);
    }
    v.range("maxResults", request.max_results, 0, Some(100));
    v.finish()?;
    let all = engine.list_contributor_insights(request.table_name.as_deref())?;
    let start = match &request.next_token {
        Some(token) => token
            .parse::<usize>()
            .ok()
            .filter(|at| *at <= all.len())
            .ok_or_else(|| DynamoError::validation(format!("Invalid NextToken: {token}")))?,
        None => 0,
    };
    let page = match request.max_results {
        Some(n) if n > 0 => n as usize,
        _ => 100,
    };
    let shown: Vec<Value> = (all.iter().skip(start).take(page))
        .map(|(table, resource, state)| {
            let mut summary = json!({
                "TableName": table.name,
                "ContributorInsightsStatus": state.status,
                "ContributorInsightsMode": state.mode,
            });
            if !resource.is_empty() {
                summary["IndexName"] = json!(resource);
            }
            summary
        })
        .collect();
    let mut body = ResponseBody::default();
    body.value("ContributorInsightsSummaries", Value::Array(shown));
    if start + page < all.len() {
        body.value("NextToken", json!((start + page).to_string()));
    }
    body.finish()
}
