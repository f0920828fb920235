//! UpdateTimeToLive and DescribeTimeToLive.

use crate::ops::common::ResponseBody;
use crate::validate::Violations;
use ferrodyn_engine::replication::shared_settings::SettingChange;
use ferrodyn_engine::Engine;
use ferrodyn_types::Result;
use serde::Deserialize;
use serde_json::json;
use std::sync::Arc;

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct UpdateRequest {
    table_name: Option<String>,
    time_to_live_specification: Option<Specification>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Specification {
    attribute_name: Option<String>,
    enabled: Option<bool>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DescribeRequest {
    table_name: Option<String>,
}

pub fn update(engine: &Arc<Engine>, request: UpdateRequest) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    v.table_name_or_arn("tableName", &request.table_name);
    if let Some(spec) = &request.time_to_live_specification {
        let field = "timeToLiveSpecification.attributeName";
        if v.not_null(field, &spec.attribute_name) {
            v.length(field, spec.attribute_name.as_deref(), 1, 255);
        }
        v.not_null("timeToLiveSpecification.enabled", &spec.enabled);
    } else {
        v.not_null(
            "timeToLiveSpecification",
            &request.time_to_live_specification,
        );
    }
    let checked = (|| {
        let spec = request.time_to_live_specification?;
        Some((request.table_name?, spec.attribute_name?, spec.enabled?))
    })();
    let (table, attribute, enabled) = v.finish_with(checked)?;
    engine.update_ttl(&table, enabled, &attribute)?;
    // A global table's other replicas take it too (replication/shared_settings.rs).
    let shared = SettingChange::TimeToLive {
        enabled,
        attribute: attribute.clone(),
    };
    engine.share_setting(&table, shared);
    let mut body = ResponseBody::default();
    body.value(
        "TimeToLiveSpecification",
        json!({ "AttributeName": attribute, "Enabled": enabled }),
    );
    body.finish()
}

pub fn describe(engine: &Engine, request: DescribeRequest) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    v.table_name_or_arn("tableName", &request.table_name);
    let table = v.finish_with(request.table_name.as_deref())?;
    let description = match engine.describe_ttl(table)? {
        Some(attribute) => json!({ "TimeToLiveStatus": "ENABLED", "AttributeName": attribute }),
        None => json!({ "TimeToLiveStatus": "DISABLED" }),
    };
    let mut body = ResponseBody::default();
    body.value("TimeToLiveDescription", description);
    body.finish()
}
