//! UpdateTable: billing mode, provisioned throughput (with the indexes'
//! when the mode switches), stream specification, deletion protection,
//! table class, and one global index created (backfilled online) or
//! deleted per call, as DynamoDB allows.

use crate::ops::common::ResponseBody;
use crate::ops::replicas;
use crate::ops::table_schema::{
    attribute_definitions, check_definitions, check_index, check_stream, check_throughput, indexes,
    RawAttributeDefinition, RawIndex, RawStreamSpecification, RawThroughput, Throughput,
    MAX_GSI_KEY_ELEMENTS,
};
use crate::validate::Violations;
use ferrodyn_engine::replication::settings::TableSettings;
use ferrodyn_engine::replication::shared_settings::SettingChange;
use ferrodyn_engine::schema::{
    AttributeDefinition, BillingMode, StreamSpecification, TableDescription,
};
use ferrodyn_engine::{Engine, TableUpdate};
use ferrodyn_types::{DynamoError, ErrorKind, Result};
use serde::Deserialize;
use std::sync::Arc;

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Request {
    table_name: Option<String>,
    billing_mode: Option<String>,
    provisioned_throughput: Option<RawThroughput>,
    stream_specification: Option<RawStreamSpecification>,
    deletion_protection_enabled: Option<bool>,
    table_class: Option<String>,
    global_secondary_index_updates: Option<Vec<IndexUpdate>>,
    attribute_definitions: Option<Vec<RawAttributeDefinition>>,
    replica_updates: Option<Vec<replicas::RawReplicaUpdate>>,
    multi_region_consistency: Option<String>,
    global_table_witness_updates: Option<Vec<replicas::RawWitnessUpdate>>,
    global_table_settings_replication_mode: Option<String>,
    disassociation_protection_enabled: Option<bool>,
    vector_index_updates: Option<Vec<crate::ops::vector_schema::VectorIndexUpdate>>,
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
    provisioned_throughput: Option<RawThroughput>,
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct DeleteIndex {
    index_name: Option<String>,
}

/// An UpdateTable request whose fields passed their constraints.
struct Checked {
    name: String,
    billing_mode: Option<BillingMode>,
    provisioned: Option<Throughput>,
    stream: Option<StreamSpecification>,
}

pub fn run(engine: &Arc<Engine>, mut request: Request) -> Result<Vec<u8>> {
    let checked = check(&request)?;
    let name = checked.name.as_str();
    if let Some(answer) = replication_change(engine, name, &mut request) {
        return answer;
    }
    let changes_capacity = checked.billing_mode.is_some() || checked.provisioned.is_some();
    let mut index_throughput = Vec::new();
    if let Some(updates) = (request.vector_index_updates).filter(|u| !u.is_empty()) {
        let definitions = request.attribute_definitions;
        return respond(crate::ops::vector_schema::update(
            engine,
            name,
            updates,
            definitions,
        )?);
    }
    if let Some(updates) = request
        .global_secondary_index_updates
        .filter(|u| !u.is_empty())
    {
        if !changes_capacity {
            return index_update(engine, name, updates, request.attribute_definitions);
        }
        index_throughput = capacity_index_updates(updates)?;
    }
    let current = engine.table(name)?.describe();
    let has_vectors = current.vector_indexes.is_some();
    if has_vectors && checked.billing_mode == Some(BillingMode::Provisioned) {
        return Err(DynamoError::invalid_parameter(
            "Vector indexes are only supported for PAY_PER_REQUEST tables",
        ));
    }
    check_billing(&current, checked.billing_mode, checked.provisioned)?;
    check_index_capacity(&current, checked.billing_mode, &index_throughput)?;
    if let Some(stream) = &checked.stream {
        check_stream_change(&current, stream)?;
    }
    let nothing = checked.billing_mode.is_none()
        && checked.provisioned.is_none()
        && checked.stream.is_none()
        && request.deletion_protection_enabled.is_none()
        && request.table_class.is_none();
    if nothing {
        return Err(nothing_to_change());
    }
    let shared_indexes = index_throughput.clone();
    let update = TableUpdate {
        billing_mode: checked.billing_mode,
        provisioned: checked.provisioned,
        stream: checked.stream,
        deletion_protection: request.deletion_protection_enabled,
        table_class: request.table_class,
        index_throughput,
    };
    let description = engine.update_table(name, update)?;
    // A global table's other replicas take the new capacity too
    // (replication/shared_settings.rs).
    if changes_capacity {
        let shared = TableSettings {
            billing_mode: checked.billing_mode,
            provisioned: checked.provisioned,
            index_throughput: shared_indexes,
            keeps_read_units: true,
            ..TableSettings::default()
        };
        engine.share_setting(name, SettingChange::Capacity(shared));
    }
    respond(description)
}

/// The replication parts of an UpdateTable (the group's flags, or
/// ReplicaUpdates, MultiRegionConsistency and GlobalTableWitnessUpdates),
/// which come alone: their answer, or None for a request without them.
fn replication_change(
    engine: &Arc<Engine>,
    name: &str,
    request: &mut Request,
) -> Option<Result<Vec<u8>>> {
    let flags = replicas::GroupFlags {
        settings_mode: request.global_table_settings_replication_mode.take(),
        disassociation_protection: request.disassociation_protection_enabled.take(),
    };
    if flags.present() {
        if has_other_changes(request) {
            return Some(Err(DynamoError::validation(
                "DisassociationProtectionEnabled and GlobalTableSettingsReplicationMode cannot be combined with any other change in the same UpdateTable request",
            )));
        }
        return Some(replicas::set_flags(engine, name, flags));
    }
    let global = replicas::GlobalRequest {
        table_name: name,
        replica_updates: request.replica_updates.take(),
        multi_region_consistency: request.multi_region_consistency.take(),
        witness_updates: request.global_table_witness_updates.take(),
    };
    if !global.present() {
        return None;
    }
    if changes_the_table(request) {
        return Some(Err(DynamoError::validation(
            "Ferrodyn does not apply ReplicaUpdates together with other table changes: send them as two UpdateTable calls",
        )));
    }
    Some(replicas::run(engine, global))
}

/// Whether an UpdateTable request changes anything besides the group
/// settings [`replicas::GroupFlags`] holds.
fn has_other_changes(request: &Request) -> bool {
    changes_the_table(request)
        || request.replica_updates.is_some()
        || request.multi_region_consistency.is_some()
        || request.global_table_witness_updates.is_some()
}

/// Whether an UpdateTable request changes the table itself (capacity,
/// stream, protection, class, indexes), not its replication.
fn changes_the_table(request: &Request) -> bool {
    request.billing_mode.is_some()
        || request.provisioned_throughput.is_some()
        || request.stream_specification.is_some()
        || request.deletion_protection_enabled.is_some()
        || request.table_class.is_some()
        || request.global_secondary_index_updates.is_some()
        || request.vector_index_updates.is_some()
}

/// GlobalSecondaryIndexUpdates sent with a capacity change: the indexes'
/// new throughput (Update actions), applied in the same change. An index
/// Create or Delete with a capacity change is refused rather than half
/// applied: DynamoDB accepts the pair, Ferrodyn asks for two calls.
fn capacity_index_updates(updates: Vec<IndexUpdate>) -> Result<Vec<(String, u64, u64)>> {
    let mut throughput = Vec::new();
    for (n, update) in updates.into_iter().enumerate() {
        let Some(action) = update
            .update
            .filter(|_| update.create.is_none() && update.delete.is_none())
        else {
            return Err(DynamoError::validation(
                "Ferrodyn does not apply a GlobalSecondaryIndexUpdates Create or Delete together with BillingMode or ProvisionedThroughput: send the index change and the capacity change as two UpdateTable calls",
            ));
        };
        let field = format!("globalSecondaryIndexUpdates.{}.member.update", n + 1);
        let mut v = Violations::default();
        v.not_null(&format!("{field}.indexName"), &action.index_name);
        v.not_null(
            &format!("{field}.provisionedThroughput"),
            &action.provisioned_throughput,
        );
        let units = check_throughput(
            &mut v,
            &format!("{field}.provisionedThroughput"),
            action.provisioned_throughput.as_ref(),
        )
        .flatten();
        let (name, (read, write)) = v.finish_with(action.index_name.zip(units))?;
        throughput.push((name, read, write));
    }
    Ok(throughput)
}

/// Index throughput against the table's indexes and the billing mode the
/// table will have: every global index needs throughput to switch to
/// PROVISIONED, none may have any under PAY_PER_REQUEST.
fn check_index_capacity(
    current: &TableDescription,
    billing_mode: Option<BillingMode>,
    index_throughput: &[(String, u64, u64)],
) -> Result<()> {
    let indexes: Vec<&str> = current
        .global_secondary_indexes
        .iter()
        .flatten()
        .map(|i| i.index_name.as_str())
        .collect();
    if let Some((name, ..)) = index_throughput
        .iter()
        .find(|(name, ..)| !indexes.contains(&name.as_str()))
    {
        return Err(DynamoError::resource_not_found(format!(
            "Requested resource not found: Index {name} for table {}",
            current.table_name
        )));
    }
    let effective = billing_mode.unwrap_or(current.billing_mode());
    if effective == BillingMode::PayPerRequest {
        if let Some((name, ..)) = index_throughput.first() {
            return Err(DynamoError::invalid_parameter(format!(
                "The only Updates for index: {name} when TableThroughputMode is PAY_PER_REQUEST can be to OnDemandThroughput, WarmThroughput"
            )));
        }
    }
    let switching = billing_mode == Some(BillingMode::Provisioned)
        && current.billing_mode() == BillingMode::PayPerRequest;
    let uncovered = indexes
        .iter()
        .find(|i| !index_throughput.iter().any(|(n, ..)| n == *i));
    if let (true, Some(index)) = (switching, uncovered) {
        // CreateTable's words for an index without throughput.
        return Err(DynamoError::invalid_parameter(format!(
            "ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED (for index {index})"
        )));
    }
    Ok(())
}

/// The field constraints, in DynamoDB's order; the request in checked form.
fn check(request: &Request) -> Result<Checked> {
    let mut v = Violations::default();
    v.table_name_or_arn("tableName", &request.table_name);
    v.one_of(
        "billingMode",
        request.billing_mode.as_deref(),
        &["PROVISIONED", "PAY_PER_REQUEST"],
    );
    let provisioned = check_throughput(
        &mut v,
        "provisionedThroughput",
        request.provisioned_throughput.as_ref(),
    );
    let stream = check_stream(&mut v, request.stream_specification.as_ref());
    v.one_of(
        "tableClass",
        request.table_class.as_deref(),
        &["STANDARD", "STANDARD_INFREQUENT_ACCESS"],
    );
    let billing_mode = match request.billing_mode.as_deref() {
        Some("PAY_PER_REQUEST") => Some(BillingMode::PayPerRequest),
        Some(_) => Some(BillingMode::Provisioned),
        None => None,
    };
    let checked = (|| {
        Some(Checked {
            name: request.table_name.clone()?,
            billing_mode,
            provisioned: provisioned?,
            stream: stream?,
        })
    })();
    v.finish_with(checked)
}

/// A change of billing mode or throughput against the table's current
/// ones: no throughput under PAY_PER_REQUEST, throughput required to switch
/// to PROVISIONED, and never the throughput the table already has.
fn check_billing(
    current: &TableDescription,
    billing_mode: Option<BillingMode>,
    provisioned: Option<Throughput>,
) -> Result<()> {
    let effective_mode = billing_mode.unwrap_or(current.billing_mode());
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
    Ok(())
}

/// A StreamSpecification against the table's stream: a view type to
/// enable, no second stream, nothing to disable when there is none.
fn check_stream_change(current: &TableDescription, stream: &StreamSpecification) -> Result<()> {
    let currently = current
        .stream_specification
        .as_ref()
        .is_some_and(|c| c.stream_enabled);
    if stream.stream_enabled && stream.stream_view_type.is_none() {
        return Err(DynamoError::invalid_parameter(
            "StreamViewType is required when StreamEnabled is true",
        ));
    }
    // The wording of these two and of the empty update: AWS's, as recorded
    // live in 2026-10 (ack-api-quirks DDB-TABLE-442).
    if stream.stream_enabled && currently {
        return Err(DynamoError::validation(format!(
            "Table already has an enabled stream: TableName: {}",
            current.table_name
        )));
    }
    if !stream.stream_enabled && current.replicas.is_some() {
        return Err(DynamoError::validation(format!(
            "Table {} is a replica of a global table: its stream cannot be disabled",
            current.table_name
        )));
    }
    if !stream.stream_enabled && !currently {
        return Err(DynamoError::validation(format!(
            "Table has no stream to disable: TableName: {}",
            current.table_name
        )));
    }
    Ok(())
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
            create_index(engine, &table.describe(), table_name, create, definitions)?
        }
        (None, Some(delete), None) => {
            let name = delete.index_name.ok_or_else(|| {
                DynamoError::validation("1 validation error detected: Value null at 'globalSecondaryIndexUpdates.1.member.delete.indexName' failed to satisfy constraint: Member must not be null")
            })?;
            let description = engine.delete_global_index(table_name, &name)?;
            engine.share_setting(table_name, SettingChange::DeleteIndex { name });
            description
        }
        (None, None, Some(update)) => update_index(engine, table_name, update)?,
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
    respond(description)
}

/// A GSI Create: CreateTable's checks of one index, its key attributes
/// (re)defined in this request with the types they already have on the
/// table, and a name no index of the table has.
fn create_index(
    engine: &Arc<Engine>,
    current: &TableDescription,
    table_name: &str,
    create: RawIndex,
    definitions: Option<Vec<RawAttributeDefinition>>,
) -> Result<TableDescription> {
    let mut v = Violations::default();
    let create = check_index(
        &mut v,
        "globalSecondaryIndexUpdates.1.member.create",
        create,
        MAX_GSI_KEY_ELEMENTS,
    );
    let definitions = match &definitions {
        Some(definitions) => check_definitions(&mut v, definitions),
        None => Some(Vec::new()),
    };
    let (create, definitions) = v.finish_with(create.zip(definitions))?;
    let definitions = attribute_definitions(definitions)?;
    for d in &definitions {
        let existing = current
            .attribute_definitions
            .iter()
            .find(|a| a.attribute_name == d.attribute_name);
        if let Some(existing) = existing.filter(|e| e.attribute_type != d.attribute_type) {
            return Err(DynamoError::invalid_parameter(format!(
                "Attributes cannot be redefined. Please check that your attribute has the same type as previously defined. Existing schema: {}:{} New schema: {}:{}",
                existing.attribute_name,
                existing.attribute_type.as_str(),
                d.attribute_name,
                d.attribute_type.as_str()
            )));
        }
    }
    let exists = current
        .global_secondary_indexes
        .iter()
        .chain(current.local_secondary_indexes.iter())
        .flatten()
        .any(|i| i.index_name == create.name);
    if exists {
        return Err(DynamoError::invalid_parameter(format!(
            "Index with name: {} already exists",
            create.name
        )));
    }
    let mut created = indexes(vec![create], &definitions, current.billing_mode(), None)?;
    let index = created.remove(0);
    let used: Vec<AttributeDefinition> = definitions
        .into_iter()
        .filter(|d| {
            index
                .key_schema
                .iter()
                .any(|k| k.attribute_name == d.attribute_name)
        })
        .collect();
    let shared = SettingChange::CreateIndex {
        index: Box::new(index.clone()),
        definitions: used.clone(),
    };
    let description = engine.create_global_index(table_name, index, used)?;
    engine.share_setting(table_name, shared);
    Ok(description)
}

/// A GSI Update: the index's new provisioned throughput.
fn update_index(
    engine: &Arc<Engine>,
    table_name: &str,
    update: UpdateIndex,
) -> Result<TableDescription> {
    let field = "globalSecondaryIndexUpdates.1.member.update";
    let mut v = Violations::default();
    v.not_null(&format!("{field}.indexName"), &update.index_name);
    let throughput = match &update.provisioned_throughput {
        Some(_) => check_throughput(
            &mut v,
            &format!("{field}.provisionedThroughput"),
            update.provisioned_throughput.as_ref(),
        )
        .flatten(),
        None => {
            v.not_null(
                &format!("{field}.provisionedThroughput"),
                &update.provisioned_throughput,
            );
            None
        }
    };
    let (index_name, (read, write)) = v.finish_with(update.index_name.zip(throughput))?;
    let description = engine.update_index_throughput(table_name, &index_name, read, write)?;
    // A global table's other replicas take the index's write units and keep
    // their read units, as with the table's own (the `run` above).
    let shared = TableSettings {
        index_throughput: vec![(index_name, read, write)],
        keeps_read_units: true,
        ..TableSettings::default()
    };
    engine.share_setting(table_name, SettingChange::Capacity(shared));
    Ok(description)
}

fn respond(description: TableDescription) -> Result<Vec<u8>> {
    let mut body = ResponseBody::default();
    body.value(
        "TableDescription",
        serde_json::to_value(description).expect("plain data always serialises"),
    );
    body.finish()
}

/// An UpdateTable that changes nothing.
fn nothing_to_change() -> DynamoError {
    DynamoError::validation(
        "At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, GlobalSecondaryIndexUpdates, SSESpecification, ReplicaUpdates, MultiAccountReplicaReady, ReplicaTransitRoleArn, MultiRegionConsistency, DeletionProtectionEnabled, OnDemandThroughput, WarmThroughput or TableClass is required",
    )
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
