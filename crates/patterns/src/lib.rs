//! Safe DynamoDB patterns, usable against Ferrodyn and AWS DynamoDB alike.
//!
//! - [`stage`]: stage puts, updates and deletes locally, review a per-attribute
//!   diff against the live items, and commit them as TransactWriteItems with
//!   optimistic-lock conditions and an idempotency token; a cancellation is
//!   reported per staged change.
//! - [`unique`]: uniqueness constraints on non-key attributes with marker
//!   items written in the same transaction as their owner, a Query-only
//!   inspection of the markers, and repair of orphans and missing markers.
//! - [`expr`]: Condition/Update/KeyCondition expressions with names aliased
//!   and values typed, from a readable syntax or flags.
//! - [`cost`]: capacity units and monthly on-demand/provisioned price
//!   estimates from a price table kept as editable data.
//!
//! Everything that talks to DynamoDB goes through the one-method
//! [`DynamoApi`] trait, so the CLI, tests and other programs can bring their
//! own client.

pub mod api;
pub mod cancel;
pub mod cost;
pub mod expr;
pub mod reads;
pub mod stage;
pub mod table;
pub mod transact;
pub mod typed;
pub mod unique;

pub use api::{ApiError, DynamoApi};
