//! DescribeTable: the table's description with live item count and size.

use crate::ops::common::ResponseBody;
use crate::validate::Violations;
use ferrodyn_engine::Engine;
use ferrodyn_types::Result;
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Request {
    table_name: Option<String>,
}

pub fn run(engine: &Engine, request: Request) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    v.table_name_or_arn("tableName", &request.table_name);
    let name = v.finish_with(request.table_name.as_deref())?;
    let description = engine.describe_table(name)?;
    let mut body = ResponseBody::default();
    body.value(
        "Table",
        serde_json::to_value(description).expect("plain data always serialises"),
    );
    body.finish()
}
