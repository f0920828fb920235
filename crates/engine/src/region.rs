//! Regions: as on AWS, tables live in one region, and a table created through
//! us-east-2 is invisible through us-east-1. A request's region is the one
//! its SigV4 credential scope names (set for the request's duration with
//! [`with_request_region`]); without one it is the server's `--region`.
//!
//! The catalog keys tables by *catalog name*: the bare table name for the
//! server's own region (so data directories written before regions existed
//! keep working: their tables belong to `--region`), `<region>/<name>` for
//! any other (`/` cannot occur in a table name).
//!
//! Table ARNs are accepted wherever a TableName is; they must name this
//! account and the request's region.

use crate::Engine;
use std::cell::RefCell;

thread_local! {
    static REQUEST_REGION: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs `f` with `region` as the region of the thread's current request.
pub fn with_request_region<T>(region: Option<&str>, f: impl FnOnce() -> T) -> T {
    let previous = REQUEST_REGION.with(|r| r.replace(region.map(str::to_string)));
    let result = f();
    REQUEST_REGION.with(|r| *r.borrow_mut() = previous);
    result
}

impl Engine {
    /// The region of the current request.
    pub fn request_region(&self) -> String {
        REQUEST_REGION
            .with(|r| r.borrow().clone())
            .unwrap_or_else(|| self.region.clone())
    }

    /// The catalog name of table `name` in `region`.
    pub(crate) fn catalog_name_in(&self, region: &str, name: &str) -> String {
        if region == self.region {
            name.to_string()
        } else {
            format!("{region}/{name}")
        }
    }

    /// The catalog name a TableName parameter (a name or a table ARN)
    /// designates in the current request's region; None for an ARN that does
    /// not name a table of this account and region.
    pub(crate) fn catalog_name(&self, name_or_arn: &str) -> Option<String> {
        let region = self.request_region();
        let name = match name_or_arn.strip_prefix("arn:") {
            None => name_or_arn,
            Some(_) => self.table_in_arn(name_or_arn, &region)?,
        };
        Some(self.catalog_name_in(&region, name))
    }

    /// The table name inside `arn:<partition>:dynamodb:<region>:<account>:table/<name>`.
    fn table_in_arn<'a>(&self, arn: &'a str, region: &str) -> Option<&'a str> {
        let parts: Vec<&str> = arn.splitn(6, ':').collect();
        let [_, _, service, arn_region, account, resource] = parts[..] else {
            return None;
        };
        let name = resource.strip_prefix("table/")?;
        let matches = service == "dynamodb" && arn_region == region && account == self.account;
        (matches && !name.is_empty() && !name.contains('/')).then_some(name)
    }

    /// The ARN of table `name` created in `region`.
    pub(crate) fn table_arn(&self, region: &str, name: &str) -> String {
        format!("arn:aws:dynamodb:{region}:{}:table/{name}", self.account)
    }

    /// Whether catalog name `key` is a table of `region`, and its bare name.
    pub(crate) fn name_in_region<'a>(&self, key: &'a str, region: &str) -> Option<&'a str> {
        match key.split_once('/') {
            Some((r, name)) => (r == region).then_some(name),
            None => (region == self.region).then_some(key),
        }
    }
}
