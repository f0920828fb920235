//! Behaviours where DynamoDB differs from the obvious reading of its
//! documentation, each checked against AWS's recorded answers (ScyllaDB's
//! AWS-validated suite, moto's AWS-verified tests, the AWS-verified
//! dynamodb-conformance suite) and asserted exactly. One module per
//! behaviour; the helpers below are the ones several of them share.

mod charging;
mod collection_limits;
mod http_limits;
mod item_semantics;
mod item_write_errors;
mod message_families;
mod nesting;
mod null_set_members;
mod read_errors;
mod regions;
mod table_definitions;
mod table_names;
mod table_updates;
mod transaction_errors;

use aws_sdk_dynamodb::types::{
    BillingMode, GlobalSecondaryIndex, KeyType, Projection, ProjectionType, ScalarAttributeType,
};
use aws_sdk_dynamodb::Client;

use crate::util::{self, attr_def, key, raw};

/// DynamoDB's newer validation prefixes these checks.
const ONE_ERROR: &str = "1 validation error detected: ";

/// A table keyed by `p` with a GSI `gsi` on `x` projecting everything.
pub(super) async fn table_with_gsi(client: &Client) -> String {
    let name = util::unique_name("gsi");
    client
        .create_table()
        .table_name(&name)
        .billing_mode(BillingMode::PayPerRequest)
        .key_schema(key("p", KeyType::Hash))
        .attribute_definitions(attr_def("p", ScalarAttributeType::S))
        .attribute_definitions(attr_def("x", ScalarAttributeType::S))
        .global_secondary_indexes(
            GlobalSecondaryIndex::builder()
                .index_name("gsi")
                .key_schema(key("x", KeyType::Hash))
                .projection(
                    Projection::builder()
                        .projection_type(ProjectionType::All)
                        .build(),
                )
                .build()
                .unwrap(),
        )
        .send()
        .await
        .expect("CreateTable succeeds");
    name
}

/// The message of `op` answering `body`.
async fn message_of(op: &str, body: serde_json::Value) -> String {
    let response = raw::call_json(op, body).await;
    response.json()["message"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}
