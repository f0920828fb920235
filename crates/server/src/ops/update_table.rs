//! UpdateTable: billing mode, provisioned throughput, stream specification,
//! deletion protection and table class. Index changes arrive with the index
//! work and are refused clearly until then.

use crate::ops::common::ResponseBody;
use crate::ops::create_table::{
    attribute_definitions, check_key_elements, indexes, RawAttributeDefinition, RawIndex,
    MAX_GSI_KEY_ELEMENTS,
};
use crate::validate::Violations;
use ferrodyn_engine::schema::AttributeDefinition;
use ferrodyn_engine::schema::{BillingMode, StreamSpecification};
use ferrodyn_engine::{Engine, TableUpdate};
use ferrodyn_types::{DynamoError, ErrorKind, Result};
use serde::Deserialize;
use std::sync::Arc;

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Request {
    table_name: Option<String>,
    billing_mode: Option<String>,
    provisioned_throughput: Option<Throughput>,
    stream_specification: Option<Stream>,
    deletion_protection_enabled: Option<bool>,
    table_class: Option<String>,
    global_secondary_index_updates: Option<Vec<IndexUpdate>>,
    attribute_definitions: Option<Vec<RawAttributeDefinition>>,
    replica_updates: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct IndexUpdate {
    create: Option<RawIndex>,
    delete: Option<DeleteIndex>,
    update: Option<UpdateIndex>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct UpdateIndex {
    index_name: Option<String>,
    provisioned_throughput: Option<Throughput>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DeleteIndex {
    index_name: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Throughput {
    read_capacity_units: Option<i64>,
    write_capacity_units: Option<i64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Stream {
    stream_enabled: Option<bool>,
    stream_view_type: Option<String>,
}

pub fn run(engine: &Arc<Engine>, request: Request) -> Result<Vec<u8>> {
    let mut v = Violations::default();
    v.table_name_or_arn("tableName", &request.table_name);
    v.one_of(
        "billingMode",
        request.billing_mode.as_deref(),
        &["PROVISIONED", "PAY_PER_REQUEST"],
    );
    if let Some(t) = &request.provisioned_throughput {
        for (name, value) in [
            ("readCapacityUnits", t.read_capacity_units),
            ("writeCapacityUnits", t.write_capacity_units),
        ] {
            let field = format!("provisionedThroughput.{name}");
            if v.not_null(&field, &value) {
                v.range(&field, value, 1, None);
            }
        }
    }
    if let Some(s) = &request.stream_specification {
        v.not_null("streamSpecification.streamEnabled", &s.stream_enabled);
        v.one_of(
            "streamSpecification.streamViewType",
            s.stream_view_type.as_deref(),
            &["NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES", "KEYS_ONLY"],
        );
    }
    v.one_of(
        "tableClass",
        request.table_class.as_deref(),
        &["STANDARD", "STANDARD_INFREQUENT_ACCESS"],
    );
    let name = v.finish_with(request.table_name.clone())?;
    if let Some(updates) = request
        .global_secondary_index_updates
        .filter(|u| !u.is_empty())
    {
        return index_update(engine, &name, updates, request.attribute_definitions);
    }
    if request.replica_updates.is_some() {
        return Err(DynamoError::validation(
            "ReplicaUpdates (global tables) are not supported by Ferrodyn",
        ));
    }
    let table = engine.table(&name)?;
    let current = table.describe();
    let billing_mode = match request.billing_mode.as_deref() {
        Some("PAY_PER_REQUEST") => Some(BillingMode::PayPerRequest),
        Some(_) => Some(BillingMode::Provisioned),
        None => None,
    };
    let effective_mode = billing_mode.unwrap_or(current.billing_mode());
    let provisioned = request.provisioned_throughput.as_ref().map(|t| {
        (
            t.read_capacity_units.unwrap_or(1) as u64,
            t.write_capacity_units.unwrap_or(1) as u64,
        )
    });
    if effective_mode == BillingMode::PayPerRequest && provisioned.is_some() {
        return Err(DynamoError::invalid_parameter(
            "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST",
        ));
    }
    // Refused even when the table is PROVISIONED already (recorded against
    // AWS: ack-api-quirks DDB-TABLE-164).
    if billing_mode == Some(BillingMode::Provisioned) && provisioned.is_none() {
        return Err(DynamoError::invalid_parameter(
            "ProvisionedThroughput must be specified when BillingMode is PROVISIONED",
        ));
    }
    if let Some((read, write)) = provisioned {
        let now = &current.provisioned_throughput;
        let unchanged = now.read_capacity_units == read && now.write_capacity_units == write;
        if unchanged && current.billing_mode() == BillingMode::Provisioned {
            return Err(same_throughput(read, write));
        }
    }
    let stream = request.stream_specification.map(|s| StreamSpecification {
        stream_enabled: s.stream_enabled.unwrap_or(false),
        stream_view_type: s.stream_view_type,
    });
    if let Some(s) = &stream {
        let currently = current
            .stream_specification
            .as_ref()
            .is_some_and(|c| c.stream_enabled);
        if s.stream_enabled && s.stream_view_type.is_none() {
            return Err(DynamoError::invalid_parameter(
                "StreamViewType is required when StreamEnabled is true",
            ));
        }
        // The wording of these two and of the empty update below: AWS's, as
        // recorded live in 2026-10 (ack-api-quirks DDB-TABLE-442).
        if s.stream_enabled && currently {
            return Err(DynamoError::validation(format!(
                "Table already has an enabled stream: TableName: {}",
                current.table_name
            )));
        }
        if !s.stream_enabled && !currently {
            return Err(DynamoError::validation(format!(
                "Table has no stream to disable: TableName: {}",
                current.table_name
            )));
        }
    }
    let nothing = billing_mode.is_none()
        && provisioned.is_none()
        && stream.is_none()
        && request.deletion_protection_enabled.is_none()
        && request.table_class.is_none();
    if nothing {
        return Err(DynamoError::validation(
            "At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, GlobalSecondaryIndexUpdates, SSESpecification, ReplicaUpdates, MultiAccountReplicaReady, ReplicaTransitRoleArn, MultiRegionConsistency, DeletionProtectionEnabled, OnDemandThroughput, WarmThroughput or TableClass is required",
        ));
    }
    let description = engine.update_table(
        &name,
        TableUpdate {
            billing_mode,
            provisioned,
            stream,
            deletion_protection: request.deletion_protection_enabled,
            table_class: request.table_class,
        },
    )?;
    let mut body = ResponseBody::default();
    body.value(
        "TableDescription",
        serde_json::to_value(description).expect("serialisable"),
    );
    body.finish()
}

/// GlobalSecondaryIndexUpdates: one Create or Delete per call, as in
/// DynamoDB; Update (index throughput) is recorded only where it applies.
fn index_update(
    engine: &Arc<Engine>,
    table_name: &str,
    mut updates: Vec<IndexUpdate>,
    definitions: Option<Vec<RawAttributeDefinition>>,
) -> Result<Vec<u8>> {
    if updates.len() > 1 {
        return Err(DynamoError::new(
            ErrorKind::LimitExceeded,
            "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table",
        ));
    }
    let update = updates.remove(0);
    let table = engine.table(table_name)?;
    let description = match (update.create, update.delete, update.update) {
        (Some(create), None, None) => {
            let mut v = Violations::default();
            if let Some(name) = &create.index_name {
                v.name_rules("globalSecondaryIndexUpdates.1.member.create.indexName", name, 3, 255);
            }
            check_key_elements(
                &mut v,
                "globalSecondaryIndexUpdates.1.member.create.keySchema",
                create.key_schema.as_deref(),
                MAX_GSI_KEY_ELEMENTS,
            );
            if let Some(definitions) = &definitions {
                for (i, d) in definitions.iter().enumerate() {
                    let field = format!("attributeDefinitions.{}.member", i + 1);
                    if v.not_null(&format!("{field}.attributeName"), &d.attribute_name) {
                        v.length(&format!("{field}.attributeName"), d.attribute_name.as_deref(), 1, 255);
                    }
                    v.not_null(&format!("{field}.attributeType"), &d.attribute_type);
                }
            }
            v.finish()?;
            // The new index's key attributes must be (re)defined in this
            // request, with the types they already have on the table.
            let definitions = attribute_definitions(definitions.unwrap_or_default())?;
            let current = table.describe();
            for d in &definitions {
                if let Some(existing) =
                    current.attribute_definitions.iter().find(|a| a.attribute_name == d.attribute_name)
                {
                    if existing.attribute_type != d.attribute_type {
                        return Err(DynamoError::invalid_parameter(format!(
                            "Attributes cannot be redefined. Please check that your attribute has the same type as previously defined. Existing schema: {}:{} New schema: {}:{}",
                            existing.attribute_name,
                            existing.attribute_type.as_str(),
                            d.attribute_name,
                            d.attribute_type.as_str()
                        )));
                    }
                }
            }
            let exists = current
                .global_secondary_indexes
                .iter()
                .chain(current.local_secondary_indexes.iter())
                .flatten()
                .any(|i| Some(&i.index_name) == create.index_name.as_ref());
            if exists {
                return Err(DynamoError::invalid_parameter(format!(
                    "Index with name: {} already exists",
                    create.index_name.as_deref().unwrap_or_default()
                )));
            }
            let mode = current.billing_mode();
            let mut created = indexes(vec![create], &definitions, mode, None)?;
            let index = created.remove(0);
            let used: Vec<AttributeDefinition> = definitions
                .into_iter()
                .filter(|d| index.key_schema.iter().any(|k| k.attribute_name == d.attribute_name))
                .collect();
            engine.create_global_index(table_name, index, used)?
        }
        (None, Some(delete), None) => {
            let name = delete.index_name.ok_or_else(|| {
                DynamoError::validation("1 validation error detected: Value null at 'globalSecondaryIndexUpdates.1.member.delete.indexName' failed to satisfy constraint: Member must not be null")
            })?;
            engine.delete_global_index(table_name, &name)?
        }
        (None, None, Some(update)) => {
            let field = "globalSecondaryIndexUpdates.1.member.update";
            let mut v = Violations::default();
            v.not_null(&format!("{field}.indexName"), &update.index_name);
            if let Some(t) = &update.provisioned_throughput {
                for (name, value) in [("readCapacityUnits", t.read_capacity_units), ("writeCapacityUnits", t.write_capacity_units)] {
                    let member = format!("{field}.provisionedThroughput.{name}");
                    if v.not_null(&member, &value) {
                        v.range(&member, value, 1, None);
                    }
                }
            } else {
                v.not_null(&format!("{field}.provisionedThroughput"), &update.provisioned_throughput);
            }
            let checked = (|| {
                let t = update.provisioned_throughput?;
                Some((update.index_name?, t.read_capacity_units?, t.write_capacity_units?))
            })();
            let (index_name, read, write) = v.finish_with(checked)?;
            engine.update_index_throughput(table_name, &index_name, read as u64, write as u64)?
        }
        (None, None, None) => {
            return Err(DynamoError::invalid_parameter(
                "One of GlobalSecondaryIndexUpdate.Create, GlobalSecondaryIndexUpdate.Update or GlobalSecondaryIndexUpdate.Delete must be specified",
            ))
        }
        _ => {
            return Err(DynamoError::invalid_parameter(
                "Only one of GlobalSecondaryIndexUpdate.Create, GlobalSecondaryIndexUpdate.Update or GlobalSecondaryIndexUpdate.Delete may be specified, not more than one",
            ))
        }
    };
    let mut body = ResponseBody::default();
    body.value(
        "TableDescription",
        serde_json::to_value(description).expect("serialisable"),
    );
    body.finish()
}

/// AWS refuses an UpdateTable that asks for the throughput the table already
/// has (wording recorded by dynalite's tests against AWS; DynamoDB Local says
/// "The requested throughput value equals the current value").
fn same_throughput(read: u64, write: u64) -> DynamoError {
    DynamoError::validation(format!(
        "The provisioned throughput for the table will not change. The requested value equals the current value. \
         Current ReadCapacityUnits provisioned for the table: {read}. Requested ReadCapacityUnits: {read}. \
         Current WriteCapacityUnits provisioned for the table: {write}. Requested WriteCapacityUnits: {write}. \
         Refer to the Amazon DynamoDB Developer Guide for current limits and how to request higher limits."
    ))
}
