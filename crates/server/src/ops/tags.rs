//! TagResource, UntagResource and ListTagsOfResource. The first two answer
//! with an empty body, as DynamoDB does.

use crate::ops::common::ResponseBody;
use crate::validate::Violations;
use ferrodyn_engine::Engine;
use ferrodyn_types::{DynamoError, Result};
use serde::Deserialize;
use serde_json::json;

#[derive(Deserialize, serde::Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct Tag {
    pub key: Option<String>,
    pub value: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct TagRequest {
    resource_arn: Option<String>,
    tags: Option<Vec<Tag>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct UntagRequest {
    resource_arn: Option<String>,
    tag_keys: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ListRequest {
    resource_arn: Option<String>,
    #[allow(dead_code)]
    next_token: Option<String>,
}

const MAX_KEY_CHARS: usize = 128;
const MAX_VALUE_CHARS: usize = 256;

/// Checks tags as DynamoDB does (lengths and AWS's tag character set) and
/// returns them as pairs. Shared with CreateTable's Tags.
pub fn validate_tags(v: &mut Violations, field: &str, tags: &[Tag]) -> Vec<(String, String)> {
    let mut out = Vec::with_capacity(tags.len());
    for (i, tag) in tags.iter().enumerate() {
        let member = format!("{field}.{}.member", i + 1);
        if v.not_null(&format!("{member}.key"), &tag.key) {
            v.length(
                &format!("{member}.key"),
                tag.key.as_deref(),
                1,
                MAX_KEY_CHARS,
            );
        }
        if v.not_null(&format!("{member}.value"), &tag.value) {
            v.length(
                &format!("{member}.value"),
                tag.value.as_deref(),
                0,
                MAX_VALUE_CHARS,
            );
        }
        if let (Some(key), Some(value)) = (&tag.key, &tag.value) {
            for (part, text) in [("key", key), ("value", value)] {
                if !text.chars().all(allowed_tag_char) {
                    v.pattern(
                        &format!("{member}.{part}"),
                        text,
                        "^([\\p{L}\\p{Z}\\p{N}_.:/=+\\-@]*)$",
                    );
                }
            }
            out.push((key.clone(), value.clone()));
        }
    }
    out
}

/// AWS's tag alphabet: letters, spaces, digits and `_ . : / = + - @`.
fn allowed_tag_char(c: char) -> bool {
    c.is_alphanumeric() || c.is_whitespace() || "_.:/=+-@".contains(c)
}

fn check_arn(v: &mut Violations, arn: &Option<String>) {
    if v.not_null("resourceArn", arn) {
        v.length("resourceArn", arn.as_deref(), 1, 1283);
    }
}

pub fn tag(engine: &Engine, request: TagRequest) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    check_arn(&mut v, &request.resource_arn);
    let mut tags = Vec::new();
    if v.not_null("tags", &request.tags) {
        let list = request.tags.as_deref().unwrap_or_default();
        tags = validate_tags(&mut v, "tags", list);
    }
    let arn = v.finish_with(request.resource_arn.as_deref())?;
    // AWS's words for an empty list (recorded live in 2026-10,
    // ack-api-quirks DDB-TABLE-442), for tags and for tag keys alike.
    if tags.is_empty() {
        return Err(DynamoError::validation(
            "Atleast one Tag needs to be provided as Input.",
        ));
    }
    engine.tag_resource(arn, tags)?;
    Ok(Vec::new())
}

pub fn untag(engine: &Engine, request: UntagRequest) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    check_arn(&mut v, &request.resource_arn);
    v.not_null("tagKeys", &request.tag_keys);
    let (arn, keys) = v.finish_with(request.resource_arn.as_deref().zip(request.tag_keys))?;
    if keys.is_empty() {
        return Err(DynamoError::validation(
            "Atleast one Tag Key needs to be provided as Input.",
        ));
    }
    if keys
        .iter()
        .any(|k| k.is_empty() || k.chars().count() > MAX_KEY_CHARS)
    {
        return Err(DynamoError::validation(
            "1 validation error detected: Value at 'tagKeys' failed to satisfy constraint: Member must satisfy constraint: [Member must have length less than or equal to 128, Member must have length greater than or equal to 1]",
        ));
    }
    engine.untag_resource(arn, &keys)?;
    Ok(Vec::new())
}

pub fn list(engine: &Engine, request: ListRequest) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    check_arn(&mut v, &request.resource_arn);
    let arn = v.finish_with(request.resource_arn.as_deref())?;
    let tags = engine.list_tags(arn)?;
    let shown: Vec<serde_json::Value> = tags
        .into_iter()
        .map(|(k, v)| json!({ "Key": k, "Value": v }))
        .collect();
    let mut body = ResponseBody::default();
    body.value("Tags", serde_json::Value::Array(shown));
    body.finish()
}
