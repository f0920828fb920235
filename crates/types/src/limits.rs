//! DynamoDB's fixed service limits that more than one layer checks: one
//! home for each number, so the wire checks, the expression checks and the
//! engine cannot drift apart. Limits that only one operation checks live
//! beside that check.

/// The largest item DynamoDB stores, in bytes.
pub const MAX_ITEM_SIZE: usize = 400 * 1024;

/// Levels of nesting DynamoDB allows: in an item (counting the item itself as
/// one) and in a document path (counting its elements).
pub const MAX_NESTING_DEPTH: usize = 32;

/// Longest attribute name DynamoDB accepts, in bytes.
pub const MAX_ATTRIBUTE_NAME_BYTES: usize = 65535;

/// Global secondary indexes per table (the default quota).
pub const MAX_GSIS: usize = 20;

/// Local secondary indexes per table.
pub const MAX_LSIS: usize = 5;
