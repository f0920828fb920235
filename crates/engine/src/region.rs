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
//!
//! Namespaces (`ferrodyn serve --namespaces access-key`, as DynamoDB Local
//! without `-sharedDb`): each access key ID then has tables of its own in
//! every region, so parallel tests isolate themselves by choosing a key. A
//! namespaced table's catalog name is `<namespace>/<region>/<name>`: an
//! access key ID holds no `/` (it ends the SigV4 credential's first field),
//! so the three parts split back unambiguously, and two-part names stay the
//! un-namespaced tables'. Everything else (ARNs, storage keys by table id)
//! is unchanged.

use crate::Engine;
use std::cell::RefCell;

/// What a request addresses: its region (None: the server's) and its
/// namespace (None: the one account every request shares by default).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RequestScope {
    pub region: Option<String>,
    pub namespace: Option<String>,
}

thread_local! {
    static REQUEST_SCOPE: RefCell<RequestScope> = RefCell::new(RequestScope::default());
}

/// Runs `f` with `scope` as the scope of the thread's current request.
pub fn with_request_scope<T>(scope: RequestScope, f: impl FnOnce() -> T) -> T {
    let previous = REQUEST_SCOPE.with(|r| r.replace(scope));
    let result = f();
    REQUEST_SCOPE.with(|r| *r.borrow_mut() = previous);
    result
}

/// Runs `f` with `region` as the region of the thread's current request.
pub fn with_request_region<T>(region: Option<&str>, f: impl FnOnce() -> T) -> T {
    let scope = RequestScope {
        region: region.map(str::to_string),
        namespace: None,
    };
    with_request_scope(scope, f)
}

/// The namespace of the thread's current request.
pub fn request_namespace() -> Option<String> {
    REQUEST_SCOPE.with(|r| r.borrow().namespace.clone())
}

/// The namespace and the rest of catalog name `key` (None: not namespaced).
fn split_namespace(key: &str) -> (Option<&str>, &str) {
    match key.split_once('/') {
        Some((namespace, rest)) if rest.contains('/') => (Some(namespace), rest),
        _ => (None, key),
    }
}

/// Whether catalog name `key` belongs to `namespace`.
pub(crate) fn in_namespace(key: &str, namespace: Option<&str>) -> bool {
    split_namespace(key).0 == namespace
}

impl Engine {
    /// The region of the current request.
    pub fn request_region(&self) -> String {
        REQUEST_SCOPE
            .with(|r| r.borrow().region.clone())
            .unwrap_or_else(|| self.region.clone())
    }

    /// The region of the table whose catalog name is `key`.
    pub(crate) fn region_of<'a>(&'a self, key: &'a str) -> &'a str {
        match split_namespace(key).1.split_once('/') {
            Some((region, _)) => region,
            None => &self.region,
        }
    }

    /// The scope (region, namespace) requests to the table whose catalog
    /// name is `key` run in.
    pub(crate) fn scope_of(&self, key: &str) -> RequestScope {
        RequestScope {
            region: Some(self.region_of(key).to_string()),
            namespace: split_namespace(key).0.map(str::to_string),
        }
    }

    /// The catalog name of table `name` in `region`.
    pub(crate) fn catalog_name_in(&self, region: &str, name: &str) -> String {
        match request_namespace() {
            Some(namespace) => format!("{namespace}/{region}/{name}"),
            None if region == self.region => name.to_string(),
            None => format!("{region}/{name}"),
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
    /// Only tables of the current request's namespace are in it.
    pub(crate) fn name_in_region<'a>(&self, key: &'a str, region: &str) -> Option<&'a str> {
        let (namespace, key) = split_namespace(key);
        if namespace != request_namespace().as_deref() {
            return None;
        }
        if namespace.is_some() {
            let (r, name) = key.split_once('/')?;
            return (r == region).then_some(name);
        }
        match key.split_once('/') {
            Some((r, name)) => (r == region).then_some(name),
            None => (region == self.region).then_some(key),
        }
    }
}
