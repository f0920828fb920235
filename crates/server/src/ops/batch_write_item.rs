//! BatchWriteItem: up to 25 unconditional puts and deletes across tables.
//! Each request stands alone (there is no atomicity across them); requests
//! that cannot be processed now come back in UnprocessedItems for the caller
//! to retry.

use crate::faults::Faults;
use crate::ops::choice::{chosen, Choice, CollectionMetrics};
use crate::ops::common;
use crate::validate::Violations;
use ferrodyn_engine::capacity::{CapacityDetail, Consumed};
use ferrodyn_engine::items::check_item_size;
use ferrodyn_engine::table::Table;
use ferrodyn_engine::{Engine, Mutation, PlannedWrite};
use ferrodyn_types::{DynamoError, Item, Result};
use serde::Deserialize;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Request {
    request_items: Option<BTreeMap<String, Vec<WriteRequest>>>,
    return_consumed_capacity: Option<Choice<CapacityDetail>>,
    return_item_collection_metrics: Option<Choice<CollectionMetrics>>,
}

#[derive(Deserialize, serde::Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct WriteRequest {
    put_request: Option<PutRequest>,
    delete_request: Option<DeleteRequest>,
}

impl WriteRequest {
    /// The request as it goes back in UnprocessedItems.
    fn to_json(&self) -> Value {
        match (&self.put_request, &self.delete_request) {
            (Some(put), _) => json!({ "PutRequest": { "Item": put.item } }),
            (_, Some(delete)) => json!({ "DeleteRequest": { "Key": delete.key } }),
            _ => json!({}),
        }
    }
}

#[derive(Deserialize, serde::Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct PutRequest {
    item: Option<Item>,
}

#[derive(Deserialize, serde::Serialize)]
#[serde(rename_all = "PascalCase")]
pub struct DeleteRequest {
    key: Option<Item>,
}

/// One write of a checked request, on its table, with its key.
type Write<'a> = (Arc<Table>, Item, Mutation<'static>, &'a WriteRequest);

const MAX_WRITES: usize = 25;

pub fn run(engine: &Engine, faults: &Faults, request: Request) -> Result<Vec<u8>> {
    let request_items = check(&request)?;
    let total: usize = request_items.values().map(Vec::len).sum();
    let mut writes = Vec::with_capacity(total);
    for (table_name, requests) in request_items {
        table_writes(engine, table_name, requests, &mut writes)?;
    }
    // Requests the table has no capacity for now (or that a fault rule
    // picks) are returned for the caller to retry, as DynamoDB does.
    // Each original keeps its table by reference count, not by a copy of
    // its name (a String per write: 0.8 % of a 25-put request by callgrind).
    let (originals, writes): (Vec<_>, Vec<_>) = writes
        .into_iter()
        .map(|(table, key, mutation, original)| {
            ((Arc::clone(&table), original), (table, key, mutation))
        })
        .unzip();
    let output = engine.api().batch_write_item(writes, |table| {
        faults.leave_unprocessed("BatchWriteItem", &table.name)
    })?;
    let mut unprocessed: serde_json::Map<String, Value> = serde_json::Map::new();
    for position in output.unprocessed {
        let (table, original) = &originals[position];
        unprocessed
            .entry(table.name.clone())
            .or_insert_with(|| json!([]))
            .as_array_mut()
            .expect("array")
            .push(original.to_json());
    }
    respond(&request, unprocessed, &output.planned)
}

/// The field constraints, then the 25-write total across tables.
fn check(request: &Request) -> Result<&BTreeMap<String, Vec<WriteRequest>>> {
    let mut v = Violations::default();
    v.not_null("requestItems", &request.request_items);
    common::check_return_options(
        &mut v,
        &request.return_consumed_capacity,
        &request.return_item_collection_metrics,
    );
    if let Some(items) = &request.request_items {
        if items.is_empty() {
            // AWS checks this apart from the constraints, in its own words
            // (the AWS-verified dynamodb-conformance suite, tier3/error-messages).
            return Err(DynamoError::validation(
                "The requestItems parameter is required for BatchWriteItem",
            ));
        }
        for table in items.keys() {
            v.existing_table_rules("requestItems.key", table);
        }
        v.map_value_counts("requestItems", items.iter(), 1, MAX_WRITES);
    }
    let request_items = v.finish_with(request.request_items.as_ref())?;
    let total: usize = request_items.values().map(Vec::len).sum();
    if total > MAX_WRITES {
        return Err(DynamoError::validation(
            "Too many items requested for the BatchWriteItem call",
        ));
    }
    Ok(request_items)
}

/// One table's writes: the table must exist, each request is exactly one
/// Put (a valid item) or Delete (a valid key), and no item is written twice.
fn table_writes<'a>(
    engine: &Engine,
    table_name: &str,
    requests: &'a [WriteRequest],
    writes: &mut Vec<Write<'a>>,
) -> Result<()> {
    let table = engine.table_for_items(table_name)?;
    let mut seen: Vec<Vec<u8>> = Vec::with_capacity(requests.len());
    for write in requests {
        let (key, mutation) = match (&write.put_request, &write.delete_request) {
            (Some(put), None) => {
                let item = put.item.clone().ok_or_else(|| {
                    DynamoError::validation("1 validation error detected: Value null at 'requestItems.member.putRequest.item' failed to satisfy constraint: Member must not be null")
                })?;
                table.schema.validate_item(&item)?;
                check_item_size(&item)?;
                (table.schema.extract(&item), Mutation::Put(item))
            }
            (None, Some(delete)) => {
                let key = delete.key.clone().ok_or_else(|| {
                    DynamoError::validation("1 validation error detected: Value null at 'requestItems.member.deleteRequest.key' failed to satisfy constraint: Member must not be null")
                })?;
                table.schema.validate_key(&key)?;
                (key, Mutation::Delete)
            }
            _ => {
                return Err(DynamoError::validation(
                    "Supplied WriteRequest must contain exactly one of PutRequest or DeleteRequest",
                ))
            }
        };
        let encoded = table.schema.encode(table.id, &key);
        if seen.contains(&encoded) {
            return Err(DynamoError::validation(
                "Provided list of item keys contains duplicates",
            ));
        }
        seen.push(encoded);
        writes.push((table.clone(), key, mutation, write));
    }
    Ok(())
}

/// The response: UnprocessedItems, ConsumedCapacity per table as asked,
/// and ItemCollectionMetrics when asked for and a table has an LSI.
fn respond(
    request: &Request,
    unprocessed: serde_json::Map<String, Value>,
    planned: &[PlannedWrite],
) -> Result<Vec<u8>> {
    let consumed = Consumed::per_table(planned.iter().map(|write| {
        Consumed::write(&write.table.name, write.write_units)
            .with_indexes(write.index_units())
            .with_vectors(write.vector_units())
    }));
    let mut body = serde_json::Map::new();
    body.insert("UnprocessedItems".into(), Value::Object(unprocessed));
    let detail = chosen(&request.return_consumed_capacity);
    if let Some(list) = common::capacity_list(&consumed, detail) {
        body.insert("ConsumedCapacity".into(), list);
    }
    if common::wants_collection_metrics(&request.return_item_collection_metrics) {
        if let Some(metrics) = common::collection_metrics(planned) {
            body.insert("ItemCollectionMetrics".into(), metrics);
        }
    }
    Ok(serde_json::to_vec(&body).expect("plain data always serialises"))
}
