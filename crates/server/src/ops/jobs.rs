//! What the operations on S3 jobs (exports, imports, bulk puts) share: the
//! job ARN a Describe or Cancel names, a listing's page size, and the
//! shapes of their answers.

use crate::ops::common::ResponseBody;
use crate::validate::Violations;
use ferrodyn_types::Result;
use serde_json::Value;

/// A job's ARN member (`exportArn`, `importArn`, `bulkOperationArn`):
/// present, 37 to 1024 characters, as the service model bounds all three.
pub fn job_arn(field: &str, value: Option<String>) -> Result<String> {
    let mut v = Violations::default();
    if v.not_null(field, &value) {
        v.length(field, value.as_deref(), 37, 1024);
    }
    v.finish_with(value)
}

/// A listing's page size: checked against `(min, max)`, else `default`.
pub fn page_size(
    field: &str,
    value: Option<i64>,
    (min, max, default): (i64, i64, usize),
) -> Result<usize> {
    let mut v = Violations::default();
    v.range(field, value, min, Some(max));
    v.finish()?;
    Ok(value.map_or(default, |size| size as usize))
}

/// A listing's answer: the page under `member`, NextToken when more follow.
pub fn page(member: &str, items: Value, next_token: Option<String>) -> Result<Vec<u8>> {
    let mut body = ResponseBody::default();
    body.value(member, items);
    if let Some(token) = next_token {
        body.value("NextToken", Value::String(token));
    }
    body.finish()
}

/// An answer of one member, `name`.
pub fn respond(name: &str, value: impl serde::Serialize) -> Result<Vec<u8>> {
    let value = serde_json::to_value(value).expect("plain data always serialises");
    page(name, value, None)
}
