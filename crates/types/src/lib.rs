//! DynamoDB's data model, shared by every other Ferrodyn crate.
//!
//! - [`Number`]: exact decimals of up to 38 significant digits, normalised the way
//!   DynamoDB returns them, with an order-preserving byte encoding for keys.
//! - [`AttributeValue`] and [`Item`]: the ten attribute types, their wire (DynamoDB
//!   JSON) encoding and DynamoDB's item-size arithmetic.
//! - [`DynamoError`]: the service's error kinds, HTTP statuses and wire shape.
//!
//! Nothing here knows about tables, storage or HTTP.

pub mod dates;
mod error;
mod json;
pub mod limits;
mod number;
mod size;
mod value;

pub use error::{DynamoError, ErrorKind, Family, NewerWording, Result};
pub use json::{deserialize_expression_values, json_error_to_dynamo, VALIDATION_MARKER};
pub use limits::{MAX_ITEM_SIZE, MAX_NESTING_DEPTH};
pub use number::{Number, NumberError};
pub use size::{attribute_size, item_size};
pub use value::{AttributeValue, Item, ScalarType};
