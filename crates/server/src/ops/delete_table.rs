//! DeleteTable: removes the table at once and purges its items in the
//! background (the answer says DELETING, as DynamoDB's does).

use crate::ops::common::ResponseBody;
use crate::validate::Violations;
use ferrodyn_engine::Engine;
use ferrodyn_types::Result;
use serde::Deserialize;
use std::sync::Arc;

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Request {
    table_name: Option<String>,
}

pub fn run(engine: &Arc<Engine>, request: Request) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    v.table_name_or_arn("tableName", &request.table_name);
    let name = v.finish_with(request.table_name.as_deref())?;
    let description = engine.delete_table(name)?;
    let mut body = ResponseBody::default();
    // DeleteTable describes the table being deleted more briefly than
    // DescribeTable: no key schema, attribute definitions, indexes, streams
    // or creation time.
    let mut shown = serde_json::to_value(description).expect("plain data always serialises");
    if let Some(fields) = shown.as_object_mut() {
        for omitted in [
            "KeySchema",
            "AttributeDefinitions",
            "GlobalSecondaryIndexes",
            "LocalSecondaryIndexes",
            "CreationDateTime",
            "StreamSpecification",
            "LatestStreamArn",
            "LatestStreamLabel",
        ] {
            fields.remove(omitted);
        }
    }
    body.value("TableDescription", shown);
    body.finish()
}
