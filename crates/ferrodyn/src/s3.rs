//! The object store exports are written to and imports read from (`ferrodyn serve --s3-endpoint
//! URL`): any S3-compatible store, through the `object_store` crate. The
//! engine sees it only as `Objects`; this module owns the client, its
//! credentials and its time limits.
//!
//! Credentials come from the usual AWS environment variables
//! (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN); without
//! them a placeholder key is used, which local stores (moto, MinIO with
//! anonymous access) accept and AWS refuses with its own error. A store
//! that does not answer fails the export within seconds (a short retry
//! budget and request timeout), never hangs it.

use ferrodyn_engine::objects::Objects;
use object_store::aws::{AmazonS3, AmazonS3Builder};
use object_store::path::Path;
use object_store::{ClientOptions, ObjectStore, PutPayload, RetryConfig};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

/// How long one request to the store may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// Total time the client may spend retrying one request.
const RETRY_BUDGET: Duration = Duration::from_secs(5);

/// An S3-compatible endpoint; one client per bucket, made on first use.
pub struct S3Sink {
    endpoint: String,
    region: String,
    runtime: tokio::runtime::Runtime,
    buckets: Mutex<HashMap<String, Arc<AmazonS3>>>,
}

impl S3Sink {
    pub fn new(endpoint: &str, region: &str) -> Result<S3Sink, String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the S3 client's runtime: {e}"))?;
        Ok(S3Sink {
            endpoint: endpoint.trim_end_matches('/').to_string(),
            region: region.to_string(),
            runtime,
            buckets: Mutex::new(HashMap::new()),
        })
    }

    fn client(&self, bucket: &str) -> Result<Arc<AmazonS3>, String> {
        let mut buckets = self.buckets.lock();
        if let Some(client) = buckets.get(bucket) {
            return Ok(Arc::clone(client));
        }
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let retry = RetryConfig {
            max_retries: 2,
            retry_timeout: RETRY_BUDGET,
            ..RetryConfig::default()
        };
        let options = ClientOptions::new()
            .with_allow_http(true)
            .with_timeout(REQUEST_TIMEOUT)
            .with_connect_timeout(Duration::from_secs(2));
        let mut builder = AmazonS3Builder::new()
            .with_endpoint(&self.endpoint)
            .with_region(&self.region)
            .with_bucket_name(bucket)
            .with_virtual_hosted_style_request(false)
            .with_client_options(options)
            .with_retry(retry)
            .with_access_key_id(env("AWS_ACCESS_KEY_ID").unwrap_or_else(|| "ferrodyn".into()))
            .with_secret_access_key(
                env("AWS_SECRET_ACCESS_KEY").unwrap_or_else(|| "ferrodyn".into()),
            );
        if let Some(token) = env("AWS_SESSION_TOKEN") {
            builder = builder.with_token(token);
        }
        let client = Arc::new(builder.build().map_err(|e| e.to_string())?);
        buckets.insert(bucket.to_string(), Arc::clone(&client));
        Ok(client)
    }
}

impl Objects for S3Sink {
    fn put(&self, bucket: &str, key: &str, bytes: Vec<u8>) -> Result<String, String> {
        let client = self.client(bucket)?;
        let path = Path::from(key);
        let put = self
            .runtime
            .block_on(client.put(&path, PutPayload::from(bytes)));
        let written = put.map_err(|e| format!("cannot write s3://{bucket}/{key}: {e}"))?;
        Ok(written
            .e_tag
            .unwrap_or_default()
            .trim_matches('"')
            .to_string())
    }

    fn get(&self, bucket: &str, key: &str) -> Result<Vec<u8>, String> {
        let client = self.client(bucket)?;
        let path = Path::from(key);
        let read = self.runtime.block_on(async {
            let object = client.get(&path).await?;
            object.bytes().await
        });
        let bytes = read.map_err(|e| format!("cannot read s3://{bucket}/{key}: {e}"))?;
        Ok(bytes.to_vec())
    }

    /// Keys starting with `prefix` as a plain string (as S3's ListObjects
    /// reads it: `data` matches `data2/x` and `database.json`), so the
    /// listing starts at the prefix's last folder and is filtered here.
    fn list(&self, bucket: &str, prefix: &str) -> Result<Vec<(String, u64)>, String> {
        use futures::TryStreamExt;
        let client = self.client(bucket)?;
        let folder = prefix.rsplit_once('/').map_or("", |(folder, _)| folder);
        let folder_path = (!folder.is_empty()).then(|| Path::from(folder));
        let listed = self
            .runtime
            .block_on(client.list(folder_path.as_ref()).try_collect::<Vec<_>>());
        let objects = listed.map_err(|e| format!("cannot list s3://{bucket}/{prefix}: {e}"))?;
        let mut keys: Vec<(String, u64)> = (objects.into_iter())
            .map(|o| (o.location.to_string(), o.size))
            .filter(|(key, _)| key.starts_with(prefix))
            .collect();
        keys.sort();
        Ok(keys)
    }
}
