//! The one error type every backend returns.

/// A failure inside a storage backend.
///
/// Backend errors are boxed so the public API does not name the engine
/// (fjall today, maybe redb tomorrow). A failed write must be treated as
/// fatal by the caller: fjall poisons itself after a journal I/O error.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    /// An operating-system I/O error (opening the directory, disk full, ...).
    #[error("storage I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// A write named a key that no backend may store: empty, or longer
    /// than [`crate::MAX_KEY_LEN`] bytes. The whole batch was rejected.
    #[error("invalid storage key of {len} bytes (must be 1..={max})", max = crate::MAX_KEY_LEN)]
    InvalidKey {
        /// Length of the offending key.
        len: usize,
    },
    /// The data directory holds a format this build cannot read (see
    /// `format.rs`); the message says which and what to do.
    #[error("{0}")]
    Format(String),
    /// A checked write found a key changed since it was read, or a shared
    /// database aborted the transaction for a concurrent one (SQLSTATE
    /// 40001/40P01). Nothing was written; the caller re-plans and retries.
    #[error("write conflict: a key read by this write changed before it committed")]
    Conflict {
        /// The key found changed, when the backend knows which.
        key: Option<crate::Key>,
    },
    /// A shared database cannot be reached, or did not answer in time; the
    /// write (if any) was not applied.
    #[error("storage unavailable: {0}")]
    Unavailable(String),
    /// A shared backend's connection settings are unusable (a malformed
    /// connection string, a database that refuses us); the message says what.
    #[error("{0}")]
    Config(String),
    /// Another process has the embedded data directory open (fjall allows
    /// one at a time); `pid` is that process when it recorded itself.
    #[error(
        "the data directory {dir} is in use by another Ferrodyn process{}: only one process \
         may open a data directory at a time. Stop that process, or choose another directory \
         with --data-dir DIR (or run with --in-memory)",
        match pid { Some(pid) => format!(" (PID {pid})"), None => String::new() }
    )]
    InUse {
        /// The directory asked for.
        dir: String,
        /// The process holding it, read from its `ferrodyn.pid`.
        pid: Option<u32>,
    },
    /// A [`crate::StorageView`] was asked for keys outside the ranges it
    /// was opened for: a caller's bug, never a data problem.
    #[error("a storage view was read outside the key ranges it was opened for")]
    OutsideView,
    /// Any other error reported by the backend engine.
    #[error("storage backend error: {0}")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync + 'static>),
}

impl From<::fjall::Error> for StorageError {
    fn from(err: ::fjall::Error) -> Self {
        match err {
            ::fjall::Error::Io(io) => StorageError::Io(io),
            other => StorageError::Backend(Box::new(other)),
        }
    }
}
