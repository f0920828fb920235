//! DynamoDB's errors: the kinds the service returns, their HTTP statuses, and
//! the extra fields some of them carry (the item of a failed condition, a
//! transaction's cancellation reasons).

use serde_json::{Map, Value};
use std::fmt;

pub type Result<T, E = DynamoError> = std::result::Result<T, E>;

/// Every error kind Ferrodyn returns. `name()` is the wire name, the part of
/// `__type` after `#`, which is what SDKs match on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    Validation,
    Serialization,
    UnknownOperation,
    MissingAuthenticationToken,
    IncompleteSignature,
    InvalidSignature,
    UnrecognizedClient,
    AccessDenied,
    ResourceNotFound,
    ResourceInUse,
    LimitExceeded,
    ConditionalCheckFailed,
    /// A PartiQL INSERT of a key that exists.
    DuplicateItem,
    TransactionCanceled,
    TransactionConflict,
    TransactionInProgress,
    IdempotentParameterMismatch,
    ProvisionedThroughputExceeded,
    Throttling,
    RequestLimitExceeded,
    ItemCollectionSizeLimitExceeded,
    RequestEntityTooLarge,
    ExpiredIterator,
    TableNotFound,
    /// Restore targets and table names (backups).
    TableAlreadyExists,
    TableInUse,
    BackupNotFound,
    BackupInUse,
    /// Point-in-time recovery (RestoreTableToPointInTime).
    PointInTimeRecoveryUnavailable,
    InvalidRestoreTime,
    /// Exports to S3.
    InvalidExportTime,
    ExportConflict,
    ExportNotFound,
    /// Imports from S3.
    ImportConflict,
    ImportNotFound,
    TrimmedDataAccess,
    /// No resource-based policy (or not the expected revision).
    PolicyNotFound,
    /// Global tables: a concurrent write of the item in another region
    /// (MRSC), and the legacy (2017.11.29) operations' own errors.
    ReplicatedWriteConflict,
    GlobalTableAlreadyExists,
    GlobalTableNotFound,
    ReplicaAlreadyExists,
    ReplicaNotFound,
    /// UpdateGlobalTableSettings naming an index the table lacks.
    IndexNotFound,
    InternalServerError,
}

impl ErrorKind {
    /// Every kind, for [`ErrorKind::from_name`].
    pub const ALL: [ErrorKind; 44] = [
        ErrorKind::Validation,
        ErrorKind::Serialization,
        ErrorKind::UnknownOperation,
        ErrorKind::MissingAuthenticationToken,
        ErrorKind::IncompleteSignature,
        ErrorKind::InvalidSignature,
        ErrorKind::UnrecognizedClient,
        ErrorKind::AccessDenied,
        ErrorKind::ResourceNotFound,
        ErrorKind::ResourceInUse,
        ErrorKind::LimitExceeded,
        ErrorKind::ConditionalCheckFailed,
        ErrorKind::DuplicateItem,
        ErrorKind::TransactionCanceled,
        ErrorKind::TransactionConflict,
        ErrorKind::TransactionInProgress,
        ErrorKind::IdempotentParameterMismatch,
        ErrorKind::ProvisionedThroughputExceeded,
        ErrorKind::Throttling,
        ErrorKind::RequestLimitExceeded,
        ErrorKind::ItemCollectionSizeLimitExceeded,
        ErrorKind::RequestEntityTooLarge,
        ErrorKind::ExpiredIterator,
        ErrorKind::TableNotFound,
        ErrorKind::TableAlreadyExists,
        ErrorKind::TableInUse,
        ErrorKind::BackupNotFound,
        ErrorKind::BackupInUse,
        ErrorKind::PointInTimeRecoveryUnavailable,
        ErrorKind::InvalidRestoreTime,
        ErrorKind::InvalidExportTime,
        ErrorKind::ExportConflict,
        ErrorKind::ExportNotFound,
        ErrorKind::ImportConflict,
        ErrorKind::ImportNotFound,
        ErrorKind::TrimmedDataAccess,
        ErrorKind::PolicyNotFound,
        ErrorKind::ReplicatedWriteConflict,
        ErrorKind::GlobalTableAlreadyExists,
        ErrorKind::GlobalTableNotFound,
        ErrorKind::ReplicaAlreadyExists,
        ErrorKind::ReplicaNotFound,
        ErrorKind::IndexNotFound,
        ErrorKind::InternalServerError,
    ];

    /// The kind whose [`ErrorKind::name`] is `name` (another Ferrodyn's
    /// answer, read back).
    pub fn from_name(name: &str) -> Option<ErrorKind> {
        ErrorKind::ALL.into_iter().find(|kind| kind.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Validation => "ValidationException",
            ErrorKind::Serialization => "SerializationException",
            ErrorKind::UnknownOperation => "UnknownOperationException",
            ErrorKind::MissingAuthenticationToken => "MissingAuthenticationTokenException",
            ErrorKind::IncompleteSignature => "IncompleteSignatureException",
            ErrorKind::InvalidSignature => "InvalidSignatureException",
            ErrorKind::UnrecognizedClient => "UnrecognizedClientException",
            ErrorKind::AccessDenied => "AccessDeniedException",
            ErrorKind::ResourceNotFound => "ResourceNotFoundException",
            ErrorKind::ResourceInUse => "ResourceInUseException",
            ErrorKind::LimitExceeded => "LimitExceededException",
            ErrorKind::ConditionalCheckFailed => "ConditionalCheckFailedException",
            ErrorKind::DuplicateItem => "DuplicateItemException",
            ErrorKind::TransactionCanceled => "TransactionCanceledException",
            ErrorKind::TransactionConflict => "TransactionConflictException",
            ErrorKind::TransactionInProgress => "TransactionInProgressException",
            ErrorKind::IdempotentParameterMismatch => "IdempotentParameterMismatchException",
            ErrorKind::ProvisionedThroughputExceeded => "ProvisionedThroughputExceededException",
            ErrorKind::Throttling => "ThrottlingException",
            ErrorKind::RequestLimitExceeded => "RequestLimitExceeded",
            ErrorKind::ItemCollectionSizeLimitExceeded => {
                "ItemCollectionSizeLimitExceededException"
            }
            ErrorKind::RequestEntityTooLarge => "RequestEntityTooLarge",
            ErrorKind::ExpiredIterator => "ExpiredIteratorException",
            ErrorKind::TableNotFound => "TableNotFoundException",
            ErrorKind::TableAlreadyExists => "TableAlreadyExistsException",
            ErrorKind::TableInUse => "TableInUseException",
            ErrorKind::BackupNotFound => "BackupNotFoundException",
            ErrorKind::BackupInUse => "BackupInUseException",
            ErrorKind::PointInTimeRecoveryUnavailable => "PointInTimeRecoveryUnavailableException",
            ErrorKind::InvalidRestoreTime => "InvalidRestoreTimeException",
            ErrorKind::InvalidExportTime => "InvalidExportTimeException",
            ErrorKind::ExportConflict => "ExportConflictException",
            ErrorKind::ExportNotFound => "ExportNotFoundException",
            ErrorKind::ImportConflict => "ImportConflictException",
            ErrorKind::ImportNotFound => "ImportNotFoundException",
            ErrorKind::TrimmedDataAccess => "TrimmedDataAccessException",
            ErrorKind::PolicyNotFound => "PolicyNotFoundException",
            ErrorKind::ReplicatedWriteConflict => "ReplicatedWriteConflictException",
            ErrorKind::GlobalTableAlreadyExists => "GlobalTableAlreadyExistsException",
            ErrorKind::GlobalTableNotFound => "GlobalTableNotFoundException",
            ErrorKind::ReplicaAlreadyExists => "ReplicaAlreadyExistsException",
            ErrorKind::ReplicaNotFound => "ReplicaNotFoundException",
            ErrorKind::IndexNotFound => "IndexNotFoundException",
            ErrorKind::InternalServerError => "InternalServerError",
        }
    }

    /// The namespace DynamoDB puts before `#` in `__type`. Errors raised by the
    /// request-handling framework (validation, serialization, auth) come from
    /// "coral"; the service's own errors carry the DynamoDB API version.
    pub fn namespace(self) -> &'static str {
        match self {
            ErrorKind::Validation => "com.amazon.coral.validate",
            ErrorKind::Serialization
            | ErrorKind::UnknownOperation
            | ErrorKind::MissingAuthenticationToken
            | ErrorKind::IncompleteSignature
            | ErrorKind::InvalidSignature
            | ErrorKind::UnrecognizedClient
            | ErrorKind::AccessDenied
            | ErrorKind::RequestEntityTooLarge => "com.amazon.coral.service",
            _ => "com.amazonaws.dynamodb.v20120810",
        }
    }

    pub fn status(self) -> u16 {
        match self {
            ErrorKind::InternalServerError => 500,
            ErrorKind::RequestEntityTooLarge => 413,
            _ => 400,
        }
    }
}

/// A family of validation messages whose wording depends on the operation
/// that reports them. DynamoDB validates some requests with a newer
/// validator, which words these checks differently from the older one; the
/// raise site says which family a message belongs to, and the server's
/// per-operation wording (never a match on the text) decides what the
/// client reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// Expression attribute names and values (unused, empty maps), empty
    /// sets, and UpdateExpression structure (empty, overlapping paths, a
    /// section repeated): item writes report them as "1 validation error
    /// detected: <message>", reads bare.
    WriteValidation,
    /// Select against ProjectionExpression, AttributesToGet or an index:
    /// Query and Scan report them with the prefix, GetItem bare.
    SelectValidation,
    /// An unknown index: Query and Scan name it, PartiQL does not.
    UnknownIndex,
}

/// How the newer validation words an error of a [`Family`]: its family and
/// its message there (without any prefix), which differs from the older
/// wording when the older one wraps it.
#[derive(Clone, Debug, PartialEq)]
pub struct NewerWording {
    pub family: Family,
    pub message: String,
}

/// An error as DynamoDB reports it: a kind, a message and optional extra
/// top-level fields of the error body, and for errors of a [`Family`], how
/// the newer validation words them.
#[derive(Clone, Debug, PartialEq)]
pub struct DynamoError {
    pub kind: ErrorKind,
    pub message: String,
    pub extra: Option<Box<Map<String, Value>>>,
    pub newer: Option<Box<NewerWording>>,
}

impl DynamoError {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> DynamoError {
        DynamoError {
            kind,
            message: message.into(),
            extra: None,
            newer: None,
        }
    }

    /// Marks the error as one of `family`, worded alike by both validators.
    pub fn in_family(self, family: Family) -> DynamoError {
        let message = self.message.clone();
        self.worded_newer(family, message)
    }

    /// Marks the error as one of `family`, which the newer validation words
    /// `message` (e.g. the set error an older "contains invalid value"
    /// message wraps).
    pub fn worded_newer(mut self, family: Family, message: impl Into<String>) -> DynamoError {
        self.newer = Some(Box::new(NewerWording {
            family,
            message: message.into(),
        }));
        self
    }

    pub fn validation(message: impl Into<String>) -> DynamoError {
        DynamoError::new(ErrorKind::Validation, message)
    }

    /// A ValidationException with DynamoDB's "One or more parameter values were
    /// invalid: " prefix.
    pub fn invalid_parameter(message: impl fmt::Display) -> DynamoError {
        DynamoError::validation(format!(
            "One or more parameter values were invalid: {message}"
        ))
    }

    pub fn serialization(message: impl Into<String>) -> DynamoError {
        DynamoError::new(ErrorKind::Serialization, message)
    }

    pub fn resource_not_found(message: impl Into<String>) -> DynamoError {
        DynamoError::new(ErrorKind::ResourceNotFound, message)
    }

    pub fn internal(message: impl Into<String>) -> DynamoError {
        DynamoError::new(ErrorKind::InternalServerError, message)
    }

    /// Adds a top-level field to the error body (e.g. `Item`).
    pub fn with_field(mut self, name: &str, value: Value) -> DynamoError {
        self.extra
            .get_or_insert_with(Default::default)
            .insert(name.to_string(), value);
        self
    }

    /// The full `__type` value.
    pub fn type_string(&self) -> String {
        format!("{}#{}", self.kind.namespace(), self.kind.name())
    }

    /// The JSON error body DynamoDB sends.
    pub fn to_body(&self) -> Vec<u8> {
        let mut body = Map::new();
        body.insert("__type".into(), Value::String(self.type_string()));
        body.insert("message".into(), Value::String(self.message.clone()));
        if let Some(extra) = &self.extra {
            for (k, v) in extra.iter() {
                body.insert(k.clone(), v.clone());
            }
        }
        serde_json::to_vec(&body).expect("plain data always serialises")
    }
}

impl fmt::Display for DynamoError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.name(), self.message)
    }
}

impl std::error::Error for DynamoError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_found_again_by_its_name() {
        for kind in ErrorKind::ALL {
            assert_eq!(ErrorKind::from_name(kind.name()), Some(kind));
        }
        assert_eq!(ErrorKind::from_name("NoSuchException"), None);
    }
}
