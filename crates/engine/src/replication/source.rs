//! CreateTable's GlobalTableSourceArn (a new replica of the source table's
//! group, made in the request's region as UpdateTable's ReplicaUpdates
//! Create makes one) and the group settings UpdateTable sets on their own:
//! GlobalTableSettingsReplicationMode and DisassociationProtectionEnabled
//! (per replica: while set, that replica is neither removed from the group
//! nor deleted).
//!
//! Ferrodyn holds one account: a source ARN must name this server's account
//! and a region this server or one of its `--peer`s holds.

use crate::region::{request_namespace, with_request_scope, RequestScope};
use crate::schema::TableDescription;
use crate::shared::GlobalTable;
use crate::Engine;
use ferrodyn_types::{DynamoError, Result};
use std::sync::Arc;

impl Engine {
    /// CreateTable with GlobalTableSourceArn: adds the request's region to
    /// the source table's group (forming one if it has none) with
    /// GlobalTableSettingsReplicationMode `mode`; the new replica.
    pub fn create_replica_from_source(
        self: &Arc<Self>,
        name: &str,
        source_arn: &str,
        mode: &str,
    ) -> Result<TableDescription> {
        let region = self.request_region();
        let source_region = self.source_region(name, source_arn, &region)?;
        let scope = RequestScope {
            region: Some(source_region),
            namespace: request_namespace(),
        };
        with_request_scope(scope, || {
            let source = self.table_to_change(name).map_err(|_| {
                DynamoError::validation(format!(
                    "The source table of GlobalTableSourceArn {source_arn} does not exist"
                ))
            })?;
            self.add_replica(&source, &region, Default::default(), None)?;
            let source = self.table(name)?;
            let mut group = self.group_of(&source)?;
            group.settings_mode = Some(mode.to_string());
            group.source_arn = Some(source_arn.to_string());
            self.share_group(&source, &group)
        })?;
        Ok(self.table(name)?.describe())
    }

    /// The region of GlobalTableSourceArn `arn`, which must name table
    /// `name` of this account in another region than `own`.
    fn source_region(&self, name: &str, arn: &str, own: &str) -> Result<String> {
        let parts: Vec<&str> = arn.splitn(6, ':').collect();
        let refuse = |why: String| {
            Err(DynamoError::validation(format!(
                "Invalid GlobalTableSourceArn {arn}: {why}"
            )))
        };
        let ["arn", _, "dynamodb", region, account, resource] = parts[..] else {
            return refuse("expected arn:aws:dynamodb:REGION:ACCOUNT:table/NAME".into());
        };
        if resource.strip_prefix("table/") != Some(name) {
            return refuse(format!(
                "a replica must have its source table's name, {name}"
            ));
        }
        if account != self.account {
            return refuse(format!(
                "Ferrodyn holds one account ({}): a source table of account {account} cannot be reached",
                self.account
            ));
        }
        if region == own || region.is_empty() {
            return refuse(format!(
                "the source table must be in another region than {own}"
            ));
        }
        Ok(region.to_string())
    }

    /// UpdateTable's DisassociationProtectionEnabled for the replica of
    /// table `name` in the request's region.
    pub fn set_disassociation_protection(
        self: &Arc<Self>,
        name: &str,
        enabled: bool,
    ) -> Result<TableDescription> {
        let table = self.table_to_change(name)?;
        let mut group = self.mrec_group(&table, "DisassociationProtectionEnabled")?;
        let own = self.region_of(&table.catalog_name).to_string();
        group.disassociation_protected.retain(|r| *r != own);
        if enabled {
            group.disassociation_protected.push(own);
        }
        self.share_group(&table, &group)?;
        Ok(self.table(name)?.describe())
    }

    /// UpdateTable's GlobalTableSettingsReplicationMode for the global
    /// table of `name`.
    pub fn set_settings_replication_mode(
        self: &Arc<Self>,
        name: &str,
        mode: &str,
    ) -> Result<TableDescription> {
        let table = self.table_to_change(name)?;
        let mut group = self.mrec_group(&table, "GlobalTableSettingsReplicationMode")?;
        group.settings_mode = Some(mode.to_string());
        self.share_group(&table, &group)?;
        Ok(self.table(name)?.describe())
    }

    /// The group of a replica of a 2019.11.21 MREC global table, which the
    /// parameter `what` needs.
    fn mrec_group(&self, table: &crate::table::Table, what: &str) -> Result<GlobalTable> {
        let group = table.global().filter(|g| !g.strong);
        let group = group.filter(|g| g.version == super::group::CURRENT_VERSION);
        group.ok_or_else(|| {
            DynamoError::validation(format!(
                "{what} applies to a replica of a global table version 2019.11.21 with multi-Region eventual consistency: table {} is not one",
                table.name
            ))
        })
    }
}

/// Refuses to remove or delete the replica of `region` while its
/// disassociation protection is on.
pub(crate) fn check_unprotected(group: &GlobalTable, table: &str, region: &str) -> Result<()> {
    if group.disassociation_protected.iter().any(|r| r == region) {
        return Err(DynamoError::validation(format!(
            "The replica of table {table} in region {region} is protected against disassociation: set DisassociationProtectionEnabled to false in that region first"
        )));
    }
    Ok(())
}
