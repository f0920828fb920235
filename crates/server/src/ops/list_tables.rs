//! ListTables: table names in order, paginated by ExclusiveStartTableName.

use crate::ops::common::ResponseBody;
use crate::validate::Violations;
use ferrodyn_engine::Engine;
use ferrodyn_types::Result;
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Request {
    exclusive_start_table_name: Option<String>,
    limit: Option<i64>,
}

const MAX_LIMIT: i64 = 100;

pub fn run(engine: &Engine, request: Request) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    if let Some(start) = &request.exclusive_start_table_name {
        v.name_rules("exclusiveStartTableName", start, 3, 255);
    }
    v.range("limit", request.limit, 1, Some(MAX_LIMIT));
    v.finish()?;
    let limit = request.limit.unwrap_or(MAX_LIMIT) as usize;
    let (names, last) = engine.list_tables(request.exclusive_start_table_name.as_deref(), limit);
    let mut body = ResponseBody::default();
    body.value("TableNames", json!(names));
    if let Some(last) = last {
        body.value("LastEvaluatedTableName", json!(last));
    }
    body.finish()
}
