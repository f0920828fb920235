//! Resource-based policies (PutResourcePolicy, GetResourcePolicy,
//! DeleteResourcePolicy and CreateTable's ResourcePolicy): one JSON document
//! per table or stream ARN, with a revision id, kept in the table's catalog
//! record like its tags (so shared storage sees them as every node does, and
//! deleting the table deletes its policies).
//!
//! Policies are stored and returned, not enforced: a local server has no IAM
//! principals, roles or accounts to evaluate their statements against (the
//! README's compatibility table says so).

pub use crate::schema::ResourcePolicy;
use crate::table::Table;
use crate::Engine;
use ferrodyn_types::{DynamoError, ErrorKind, Result};
use std::sync::Arc;

/// DynamoDB's limit on a policy document, whitespace counted.
pub const MAX_POLICY_BYTES: usize = 20 * 1024;

/// The ExpectedRevisionId that asks for no policy to be attached yet.
pub const NO_POLICY: &str = "NO_POLICY";

/// What a policy ARN names: a table, or one of its streams (by ARN).
struct Target {
    table: Arc<Table>,
    /// The resource's ARN, the key its policy is kept under.
    arn: String,
    /// How AWS's messages name the resource: `table NAME` or `stream ARN`.
    label: String,
}

/// Checks a policy document: JSON with a Statement, within 20 KB.
/// The prefix is AWS's ("One or more parameter values were invalid:
/// Invalid policy document: ..."); the details are ours.
pub fn check_policy_document(document: &str) -> Result<()> {
    let invalid =
        |detail: &str| DynamoError::invalid_parameter(format!("Invalid policy document: {detail}"));
    if document.len() > MAX_POLICY_BYTES {
        return Err(invalid(&format!(
            "the document is {} bytes, over the limit of {MAX_POLICY_BYTES} (whitespace counts)",
            document.len()
        )));
    }
    match serde_json::from_str::<serde_json::Value>(document) {
        Ok(serde_json::Value::Object(map)) if map.contains_key("Statement") => Ok(()),
        Ok(serde_json::Value::Object(_)) => Err(invalid("the document has no Statement")),
        Ok(_) => Err(invalid("the document is not a JSON object")),
        Err(e) => Err(invalid(&format!("the document is not valid JSON ({e})"))),
    }
}

/// The revision id after `previous`: now in milliseconds, and always past
/// `previous` (two revisions in one millisecond still increase).
fn next_revision(previous: Option<&ResourcePolicy>) -> String {
    let now = (crate::shared::now_seconds() * 1000.0) as u128;
    let after = previous
        .and_then(|p| p.revision_id.parse::<u128>().ok())
        .map_or(0, |r| r + 1);
    now.max(after).to_string()
}

fn policy_not_found(detail: &str) -> DynamoError {
    DynamoError::new(
        ErrorKind::PolicyNotFound,
        format!("Resource-based policy not found for the provided ResourceArn: {detail}"),
    )
}

/// The check of an ExpectedRevisionId against the policy attached now
/// (AWS's wording, moto 5.2.5's AWS-verified test_dynamodb_resource_policy).
fn check_expected(
    target: &Target,
    current: Option<&ResourcePolicy>,
    expected: Option<&str>,
) -> Result<()> {
    match (expected, current) {
        (None, _) | (Some(NO_POLICY), None) => Ok(()),
        (Some(NO_POLICY), Some(current)) => Err(policy_not_found(&format!(
            "Requested policy update expecting none to be present for {}, but a policy exists with revision id {}.",
            target.label, current.revision_id
        ))),
        (Some(_), None) => Err(policy_not_found(&target.arn)),
        (Some(expected), Some(current)) if expected != current.revision_id => {
            Err(policy_not_found(&format!(
                "Requested update for policy with revision id {expected}, but the policy associated to target {} has revision id {}.",
                target.label, current.revision_id
            )))
        }
        (Some(_), Some(_)) => Ok(()),
    }
}

impl Engine {
    /// The table or stream a policy ARN names.
    fn policy_target(&self, arn: &str) -> Result<Target> {
        let invalid =
            || DynamoError::validation(format!("Invalid ResourceArn provided as input {arn}"));
        let parts: Vec<&str> = arn.splitn(6, ':').collect();
        if parts.len() != 6 || parts[0] != "arn" || parts[2] != "dynamodb" {
            return Err(invalid());
        }
        let resource = parts[5].strip_prefix("table/").ok_or_else(invalid)?;
        let (name, stream) = match resource.split_once('/') {
            None => (resource, None),
            Some((name, rest)) => match rest.strip_prefix("stream/") {
                Some(label) if !label.is_empty() && !label.contains('/') => (name, Some(label)),
                _ => return Err(invalid()),
            },
        };
        let table_arn = format!("{}:table/{name}", parts[..5].join(":"));
        let table = self
            .lookup(&table_arn)
            .filter(|t| t.describe().table_arn == table_arn)
            .ok_or_else(|| {
                DynamoError::resource_not_found(format!(
                    "Requested resource not found: Table: {name} not found"
                ))
            })?;
        match stream {
            None => Ok(Target {
                label: format!("table {name}"),
                arn: table_arn,
                table,
            }),
            Some(_) if table.streams().iter().any(|s| s.arn == arn) => Ok(Target {
                label: format!("stream {arn}"),
                arn: arn.to_string(),
                table,
            }),
            Some(_) => Err(DynamoError::resource_not_found(format!(
                "Requested resource not found: Stream: {arn} not found"
            ))),
        }
    }

    /// Changes the resource's policy with `change` (given the target and
    /// its policy now; it answers the new policy, or `None` to detach) and
    /// saves the table's record if that changed anything. On shared storage
    /// the policy is read from the database first and the save checks the
    /// record unchanged since, so a revision is never checked against a
    /// stale copy; a conflict runs it again.
    fn update_policy<T>(
        &self,
        arn: &str,
        mut change: impl FnMut(&Target, Option<&ResourcePolicy>) -> Result<(Option<ResourcePolicy>, T)>,
    ) -> Result<T> {
        let _guard = self.catalog_lock.lock();
        let changed = self.retry(crate::error::RetryPolicy::Write, |_| {
            let mut target = self.policy_target(arn)?;
            target.table = self.refresh_table(&target.table)?;
            let mut policies = target.table.policies();
            let current = policies.get(&target.arn);
            let (next, answer) = change(&target, current)?;
            if next.as_ref() == current {
                return Ok(answer);
            }
            match next {
                Some(policy) => policies.insert(target.arn.clone(), policy),
                None => policies.remove(&target.arn),
            };
            target.table.set_policies(policies);
            self.save_catalog_record(&target.table)?;
            Ok(answer)
        });
        Ok(changed?)
    }

    /// Attaches `document` to the resource; the revision id it has now.
    /// The same document again is no change and keeps its revision.
    pub fn put_resource_policy(
        &self,
        arn: &str,
        document: &str,
        expected_revision: Option<&str>,
    ) -> Result<String> {
        check_policy_document(document)?;
        self.update_policy(arn, |target, current| {
            check_expected(target, current, expected_revision)?;
            let next = match current {
                Some(same) if same.document == document => same.clone(),
                _ => ResourcePolicy {
                    document: document.to_string(),
                    revision_id: next_revision(current),
                },
            };
            let revision = next.revision_id.clone();
            Ok((Some(next), revision))
        })
    }

    /// The policy attached to the resource.
    pub fn get_resource_policy(&self, arn: &str) -> Result<ResourcePolicy> {
        let target = self.policy_target(arn)?;
        let found = target.table.policies().remove(&target.arn);
        found.ok_or_else(|| policy_not_found(&target.arn))
    }

    /// Detaches the resource's policy; the revision id it had. Without an
    /// ExpectedRevisionId, deleting where there is no policy is no error.
    pub fn delete_resource_policy(
        &self,
        arn: &str,
        expected_revision: Option<&str>,
    ) -> Result<Option<String>> {
        self.update_policy(arn, |target, current| {
            check_expected(target, current, expected_revision)?;
            Ok((None, current.map(|p| p.revision_id.clone())))
        })
    }
}

/// A new table's policy (CreateTable's ResourcePolicy), under its ARN.
pub(crate) fn initial_policy(document: &str) -> ResourcePolicy {
    ResourcePolicy {
        document: document.to_string(),
        revision_id: next_revision(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_must_be_json_objects_with_statements_within_20_kb() {
        assert!(check_policy_document(r#"{"Version":"2012-10-17","Statement":[]}"#).is_ok());
        for bad in ["{", "[]", r#"{"Version":"2012-10-17"}"#] {
            let err = check_policy_document(bad).unwrap_err();
            assert!(
                err.message.starts_with(
                    "One or more parameter values were invalid: Invalid policy document: "
                ),
                "{}",
                err.message
            );
        }
        let padded = format!(
            r#"{{"Statement":[],"Sid":"{}"}}"#,
            " ".repeat(MAX_POLICY_BYTES)
        );
        assert!(check_policy_document(&padded).is_err());
    }

    #[test]
    fn revisions_increase_even_within_one_millisecond() {
        let first = initial_policy("{}");
        let far_future = ResourcePolicy {
            document: String::new(),
            revision_id: "99999999999999".into(),
        };
        let next: u128 = next_revision(Some(&far_future)).parse().unwrap();
        assert_eq!(next, 100000000000000);
        let again: u128 = next_revision(Some(&first)).parse().unwrap();
        assert!(again > first.revision_id.parse::<u128>().unwrap());
    }
}
