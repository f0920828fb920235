//! PutResourcePolicy, GetResourcePolicy and DeleteResourcePolicy: the
//! request checks and response shapes; the policies themselves live with
//! their table (ferrodyn_engine::policies). Policies are stored and
//! returned, not enforced, so ConfirmRemoveSelfResourceAccess (the
//! acknowledgement that a policy locks its author out) changes nothing here:
//! no policy can lock anyone out.

use crate::ops::common::ResponseBody;
use crate::validate::Violations;
use ferrodyn_engine::Engine;
use ferrodyn_types::Result;
use serde::Deserialize;
use serde_json::Value;

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct PutRequest {
    resource_arn: Option<String>,
    policy: Option<String>,
    expected_revision_id: Option<String>,
    #[allow(dead_code)] // accepted; see the module comment
    confirm_remove_self_resource_access: Option<bool>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct GetRequest {
    resource_arn: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DeleteRequest {
    resource_arn: Option<String>,
    expected_revision_id: Option<String>,
}

/// The service model's constraints on the ARN and the expected revision.
fn check_common(v: &mut Violations, arn: &Option<String>, expected: &Option<String>) {
    if v.not_null("resourceArn", arn) {
        v.length("resourceArn", arn.as_deref(), 1, 1283);
    }
    v.length("expectedRevisionId", expected.as_deref(), 1, 255);
}

fn revision_body(revision: Option<String>) -> Result<Vec<u8>> {
    let mut body = ResponseBody::default();
    if let Some(revision) = revision {
        body.value("RevisionId", Value::String(revision));
    }
    body.finish()
}

pub fn put(engine: &Engine, request: PutRequest) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    check_common(&mut v, &request.resource_arn, &request.expected_revision_id);
    v.not_null("policy", &request.policy);
    let (arn, policy) = v.finish_with(
        request
            .resource_arn
            .as_deref()
            .zip(request.policy.as_deref()),
    )?;
    let revision =
        engine.put_resource_policy(arn, policy, request.expected_revision_id.as_deref())?;
    revision_body(Some(revision))
}

pub fn get(engine: &Engine, request: GetRequest) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    check_common(&mut v, &request.resource_arn, &None);
    let arn = v.finish_with(request.resource_arn.as_deref())?;
    let policy = engine.get_resource_policy(arn)?;
    let mut body = ResponseBody::default();
    body.value("Policy", Value::String(policy.document));
    body.value("RevisionId", Value::String(policy.revision_id));
    body.finish()
}

pub fn delete(engine: &Engine, request: DeleteRequest) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    check_common(&mut v, &request.resource_arn, &request.expected_revision_id);
    let arn = v.finish_with(request.resource_arn.as_deref())?;
    let revision = engine.delete_resource_policy(arn, request.expected_revision_id.as_deref())?;
    revision_body(revision)
}
