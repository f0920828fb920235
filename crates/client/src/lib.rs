//! A small blocking DynamoDB client, for Ferrodyn and for AWS DynamoDB alike.
//!
//! [`Client::call`] sends one DynamoDB API call: the request is JSON in
//! DynamoDB's wire format, POSTed with `X-Amz-Target: DynamoDB_20120810.<Op>`
//! and signed with SigV4 ([`sigv4`]). The answer is the response JSON, or
//! [`ClientError::Api`] with the service's error code and full error body.
//!
//! Around it:
//! - [`config`] resolves endpoint, region and credentials like the AWS CLI
//!   (options, `AWS_*` variables, `~/.aws/config` and `~/.aws/credentials`);
//! - [`convert`] turns plain JSON into DynamoDB JSON and back, losslessly;
//! - [`batch`] writes and reads many items with BatchWriteItem/BatchGetItem,
//!   retrying unprocessed ones with capped exponential backoff and jitter;
//! - [`paginate`] follows `LastEvaluatedKey` through Query and Scan pages,
//!   optionally with parallel Scan segments;
//! - [`partiql`] runs PartiQL statements (ExecuteStatement), following
//!   `NextToken`.
//!
//! ```no_run
//! use ferrodyn_client::{Client, ConnectionOptions};
//! let client = Client::connect(&ConnectionOptions::default())?; // http://127.0.0.1:8000
//! let tables = client.call("ListTables", &serde_json::json!({}))?;
//! # Ok::<(), ferrodyn_client::ClientError>(())
//! ```

pub mod backoff;
pub mod batch;
pub mod config;
pub mod convert;
mod error;
pub mod paginate;
pub mod partiql;
/// SigV4 signing lives in its own crate, shared with the server's checks.
pub use ferrodyn_sigv4 as sigv4;
mod transport;

pub use error::ClientError;

use config::{Environment, ResolvedConfig};

/// How to reach DynamoDB; every field is optional (see [`Client::connect`]).
#[derive(Debug, Clone, Default)]
pub struct ConnectionOptions {
    /// Base URL such as `http://127.0.0.1:8000` or
    /// `https://dynamodb.eu-west-1.amazonaws.com`; `aws` means the region's
    /// public endpoint.
    pub endpoint_url: Option<String>,
    pub region: Option<String>,
    /// A profile of `~/.aws/config` / `~/.aws/credentials`.
    pub profile: Option<String>,
}

/// A connection to one DynamoDB endpoint. Cheap to clone and shareable
/// between threads (the HTTP agent pools connections).
#[derive(Clone)]
pub struct Client {
    config: ResolvedConfig,
    transport: transport::Transport,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("endpoint", &self.config.endpoint)
            .field("region", &self.config.region)
            .finish()
    }
}

impl Client {
    /// Resolves the endpoint (option, `AWS_ENDPOINT_URL_DYNAMODB`,
    /// `AWS_ENDPOINT_URL`, the profile's `endpoint_url`, default
    /// `http://127.0.0.1:8000`, the local Ferrodyn server), the region
    /// (option, `AWS_REGION`, `AWS_DEFAULT_REGION`, the profile, default
    /// `us-east-1`) and credentials (`AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`/
    /// `AWS_SESSION_TOKEN`, then the profile from `--profile` or `AWS_PROFILE`
    /// or `default` in `~/.aws/credentials` and `~/.aws/config`; an explicit
    /// profile wins over the environment). A local endpoint with no
    /// credentials anywhere gets dummy ones, since Ferrodyn (like DynamoDB
    /// Local) does not verify signatures.
    pub fn connect(options: &ConnectionOptions) -> Result<Client, ClientError> {
        Client::connect_with_env(options, &Environment::from_process())
    }

    /// [`Client::connect`] against a given environment instead of the
    /// process's (tests, embedding).
    pub fn connect_with_env(
        options: &ConnectionOptions,
        env: &Environment,
    ) -> Result<Client, ClientError> {
        let config = config::resolve(options, env)?;
        let transport = transport::Transport::new(&config.endpoint)?;
        Ok(Client { config, transport })
    }

    /// One DynamoDB call, for example `call("GetItem", &json!({"TableName": ..}))`.
    /// Returns the response JSON, or [`ClientError::Api`] carrying the
    /// error's code, message, HTTP status and full JSON body.
    pub fn call(
        &self,
        operation: &str,
        request: &serde_json::Value,
    ) -> Result<serde_json::Value, ClientError> {
        self.transport.call(&self.config, operation, request)
    }

    /// One DynamoDB Streams call (ListStreams, DescribeStream,
    /// GetShardIterator, GetRecords) to this endpoint. Ferrodyn serves
    /// streams on its one endpoint; AWS serves them on
    /// `streams.dynamodb.<region>.amazonaws.com` (connect a client there).
    pub fn call_streams(
        &self,
        operation: &str,
        request: &serde_json::Value,
    ) -> Result<serde_json::Value, ClientError> {
        let target = format!("DynamoDBStreams_20120810.{operation}");
        self.transport.call_target(&self.config, &target, request)
    }

    /// GETs a JSON document of Ferrodyn's own under the endpoint (e.g.
    /// `/ferrodyn/usage`); AWS DynamoDB has no such paths.
    pub fn get_json(&self, path: &str) -> Result<serde_json::Value, ClientError> {
        self.transport.get_json(path)
    }

    /// A request to one of Ferrodyn's test-harness endpoints (the clock,
    /// snapshots, reset), signed with this client's access key, which names
    /// the namespace; AWS DynamoDB has no such paths.
    pub fn harness(
        &self,
        method: &str,
        path: &str,
        request: Option<&serde_json::Value>,
    ) -> Result<serde_json::Value, ClientError> {
        self.transport.harness(&self.config, method, path, request)
    }

    /// The base URL requests go to.
    pub fn endpoint(&self) -> &str {
        &self.config.endpoint
    }

    /// The region requests are signed for.
    pub fn region(&self) -> &str {
        &self.config.region
    }

    /// Where the credentials came from: `environment`, `profile NAME` or
    /// `dummy (local endpoint)`.
    pub fn credentials_source(&self) -> &str {
        &self.config.credentials_source
    }
}
