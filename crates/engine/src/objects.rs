//! The object store (an S3 bucket) exports write to and imports read from,
//! as the engine sees it: the binary provides it (`ferrodyn serve
//! --s3-endpoint`, ferrodyn/src/s3.rs over object_store), so the engine
//! holds no network client. Every failure is a message for the job's
//! FailureMessage.

/// One S3-compatible store.
pub trait Objects: Send + Sync {
    /// Writes `bytes` as object `key` of `bucket`; the object's ETag.
    fn put(&self, bucket: &str, key: &str, bytes: Vec<u8>) -> Result<String, String>;
    /// The bytes of object `key` of `bucket`.
    fn get(&self, bucket: &str, key: &str) -> Result<Vec<u8>, String>;
    /// The keys of `bucket` under `prefix`, sorted, with their sizes.
    fn list(&self, bucket: &str, prefix: &str) -> Result<Vec<(String, u64)>, String>;
}
