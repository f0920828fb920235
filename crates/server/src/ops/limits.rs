//! DescribeLimits: the provisioned-capacity quotas this server enforces in
//! CreateTable and UpdateTable (engine quotas.rs), DynamoDB's defaults: per
//! table and per global index 40,000 read and write units, per account and
//! region 80,000. The request has no members.

use crate::ops::common::ResponseBody;
use ferrodyn_engine::quotas::{ACCOUNT_MAX_UNITS, TABLE_MAX_UNITS};
use ferrodyn_types::Result;
use serde_json::json;

pub fn describe() -> Result<Vec<u8>> {
    let mut body = ResponseBody::default();
    body.value("AccountMaxReadCapacityUnits", json!(ACCOUNT_MAX_UNITS));
    body.value("AccountMaxWriteCapacityUnits", json!(ACCOUNT_MAX_UNITS));
    body.value("TableMaxReadCapacityUnits", json!(TABLE_MAX_UNITS));
    body.value("TableMaxWriteCapacityUnits", json!(TABLE_MAX_UNITS));
    body.finish()
}
