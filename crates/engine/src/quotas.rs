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

use crate::Engine;
use ferrodyn_types::{DynamoError, ErrorKind, Result};

/// Tables per region (DynamoDB's default quota).
pub const DEFAULT_MAX_TABLES: usize = 2500;

/// Table operations in progress at once (DynamoDB's default quota).
pub const DEFAULT_MAX_TABLE_OPERATIONS: usize = 500;

impl Engine {
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
