//! DynamoDB's account quotas that a local server can reach: tables per
//! region (2,500 by default) and simultaneous table operations (500:
//! CreateTable, UpdateTable, DeleteTable and UpdateTimeToLive while others
//! are still in progress). Both are LimitExceededException, worded as
//! DynamoDB words them ("Subscriber limit exceeded: ...", quoted from
//! DynamoDB replies in hashicorp/terraform#14571 and
//! hashicorp/terraform-provider-aws#2274, with today's figures). Here a
//! table operation is in progress while its background work runs (a purge
//! after DeleteTable, a GSI backfill or purge after UpdateTable).
//! (GSIs per table, 20, are checked with the request, in the server.)
//!
//! Provisioned capacity has DynamoDB's default quotas too, the figures
//! DescribeLimits reports: 40,000 read and 40,000 write units per table and
//! per global index, 80,000 of each per account and region. Their
//! LimitExceededException texts are AWS's as recorded by probes of real
//! DynamoDB (ack-api-quirks DDB-TABLE-443, 2026-10-09); the index variant's
//! sentence is completed by analogy with the table's.

use crate::Engine;
use ferrodyn_types::{DynamoError, ErrorKind, Result};

/// Tables per region (DynamoDB's default quota).
pub const DEFAULT_MAX_TABLES: usize = 2500;

/// Table operations in progress at once (DynamoDB's default quota).
pub const DEFAULT_MAX_TABLE_OPERATIONS: usize = 500;

/// Most provisioned read (and write) units of one table or global index.
pub const TABLE_MAX_UNITS: u64 = 40_000;
/// Most provisioned read (and write) units of all tables of an account in
/// a region.
pub const ACCOUNT_MAX_UNITS: u64 = 80_000;

/// The end of the capacity quotas' messages.
const LIMITS_REFERENCE: &str =
    "Refer to the Amazon DynamoDB Developer Guide for current limits and how to request higher limits.";

/// Provisioned units a table asks for: its own and each global index's.
pub struct RequestedUnits<'a> {
    pub table: Option<(u64, u64)>,
    pub indexes: Vec<(&'a str, u64, u64)>,
}

impl RequestedUnits<'_> {
    /// Read and write units in all.
    fn total(&self) -> (u64, u64) {
        let (mut read, mut write) = self.table.unwrap_or((0, 0));
        for (_, r, w) in &self.indexes {
            read += r;
            write += w;
        }
        (read, write)
    }
}

impl Engine {
    /// Refuses units above the per-table and per-index maxima (CreateTable,
    /// UpdateTable).
    pub(crate) fn check_table_units(&self, requested: &RequestedUnits) -> Result<()> {
        let region = self.request_region();
        let over = |units: u64| units > TABLE_MAX_UNITS;
        if let Some((read, write)) = requested.table {
            for (kind, units) in [("ReadCapacityUnits", read), ("WriteCapacityUnits", write)] {
                if over(units) {
                    return Err(limit_exceeded(format!("The requested {kind}, {units}, is above the per table maximum for the account in {region}. Per table maximum: {TABLE_MAX_UNITS}. {LIMITS_REFERENCE}")));
                }
            }
        }
        for (index, read, write) in &requested.indexes {
            for (kind, units) in [("ReadCapacityUnits", *read), ("WriteCapacityUnits", *write)] {
                if over(units) {
                    return Err(limit_exceeded(format!("The requested {kind} for index {index}, {units}, is above the per index maximum for the account in {region}. Per index maximum: {TABLE_MAX_UNITS}. {LIMITS_REFERENCE}")));
                }
            }
        }
        Ok(())
    }

    /// Refuses a new table whose units would take the region's provisioned
    /// tables past the account's quota (CreateTable).
    pub(crate) fn check_account_units(&self, requested: &RequestedUnits) -> Result<()> {
        let region = self.request_region();
        let (read, write) = requested.total();
        let (reserved_read, reserved_write) = self.reserved_units(&region);
        for (kind, reserved, asked) in [
            ("ReadCapacityUnits", reserved_read, read),
            ("WriteCapacityUnits", reserved_write, write),
        ] {
            if reserved + asked > ACCOUNT_MAX_UNITS {
                return Err(limit_exceeded(format!("This request would have caused the {kind} limit to be exceeded for the account in {region}. Current {kind} reserved by the account: {reserved}. Limit: {ACCOUNT_MAX_UNITS}. Requested: {asked}. {LIMITS_REFERENCE}")));
            }
        }
        Ok(())
    }

    /// Read and write units provisioned by the tables (and their global
    /// indexes) of `region` now.
    fn reserved_units(&self, region: &str) -> (u64, u64) {
        let tables = self.tables.read();
        let mut units = (0, 0);
        for table in tables
            .values()
            .filter(|t| self.name_in_region(&t.catalog_name, region).is_some())
        {
            let d = table.describe();
            if d.billing_mode() != crate::schema::BillingMode::Provisioned {
                continue;
            }
            units.0 += d.provisioned_throughput.read_capacity_units;
            units.1 += d.provisioned_throughput.write_capacity_units;
            for index in d.global_secondary_indexes.iter().flatten() {
                let t = index.provisioned_throughput.as_ref();
                units.0 += t.map_or(0, |t| t.read_capacity_units);
                units.1 += t.map_or(0, |t| t.write_capacity_units);
            }
        }
        units
    }

    /// Refuses a new table when `existing` tables already reach the quota.
    pub(crate) fn check_table_quota(&self, existing: usize) -> Result<()> {
        if existing >= self.max_tables {
            return Err(DynamoError::new(
                ErrorKind::LimitExceeded,
                format!(
                    "Subscriber limit exceeded: There is a limit of {} tables per subscriber",
                    self.max_tables
                ),
            ));
        }
        Ok(())
    }

    /// Refuses a table operation while the quota of them is in progress.
    pub(crate) fn check_table_operations(&self) -> Result<()> {
        if self.background_jobs() >= self.max_table_operations {
            return Err(DynamoError::new(
                ErrorKind::LimitExceeded,
                format!(
                    "Subscriber limit exceeded: Only {} tables can be created, updated, or deleted simultaneously",
                    self.max_table_operations
                ),
            ));
        }
        Ok(())
    }
}

fn limit_exceeded(message: String) -> DynamoError {
    DynamoError::new(ErrorKind::LimitExceeded, message)
}

#[cfg(test)]
mod tests {
    use crate::schema::BillingMode;
    use crate::{Engine, EngineOptions, NewTable};
    use ferrodyn_storage::open_memory;
    use ferrodyn_types::ErrorKind;
    use serde_json::json;
    use std::sync::{mpsc, Arc};

    fn engine(max_tables: usize, max_table_operations: usize) -> Arc<Engine> {
        let options = EngineOptions {
            max_tables,
            max_table_operations,
            ..EngineOptions::default()
        };
        Engine::open(open_memory(), options).unwrap()
    }

    fn new_table(name: &str) -> NewTable {
        NewTable {
            name: name.into(),
            key_schema: serde_json::from_value(json!([{"AttributeName": "p", "KeyType": "HASH"}]))
                .unwrap(),
            attribute_definitions: serde_json::from_value(json!([
                {"AttributeName": "p", "AttributeType": "S"}
            ]))
            .unwrap(),
            billing_mode: BillingMode::PayPerRequest,
            provisioned: None,
            global_secondary_indexes: Vec::new(),
            local_secondary_indexes: Vec::new(),
            vector_indexes: Vec::new(),
            stream: None,
            deletion_protection: false,
            table_class: None,
            tags: Vec::new(),
            resource_policy: None,
        }
    }

    #[test]
    fn tables_beyond_the_quota_are_refused_until_one_is_deleted() {
        let engine = engine(2, 500);
        engine.create_table(new_table("t1")).unwrap();
        engine.create_table(new_table("t2")).unwrap();
        let error = engine.create_table(new_table("t3")).unwrap_err();
        assert_eq!(error.kind, ErrorKind::LimitExceeded);
        assert_eq!(
            error.message,
            "Subscriber limit exceeded: There is a limit of 2 tables per subscriber"
        );
        engine.delete_table("t1").unwrap();
        engine.create_table(new_table("t3")).unwrap();
    }

    #[test]
    fn table_operations_beyond_the_quota_wait_for_background_work() {
        let engine = engine(2500, 1);
        engine.create_table(new_table("t1")).unwrap();
        // A background job that runs until told to stop: one operation in
        // progress, the quota.
        let (stop, stopped) = mpsc::channel::<()>();
        engine
            .spawn_background("test-job".into(), move |_| {
                let _ = stopped.recv();
                Ok(())
            })
            .unwrap();
        let expected = "Subscriber limit exceeded: Only 1 tables can be created, updated, or deleted simultaneously";
        for error in [
            engine.create_table(new_table("t2")).unwrap_err(),
            engine.delete_table("t1").unwrap_err(),
            engine.update_ttl("t1", true, "exp").unwrap_err(),
        ] {
            assert_eq!(
                (error.kind, error.message.as_str()),
                (ErrorKind::LimitExceeded, expected)
            );
        }
        stop.send(()).unwrap();
        while engine.background_jobs() > 0 {
            std::thread::yield_now();
        }
        engine.create_table(new_table("t2")).unwrap();
    }
}
