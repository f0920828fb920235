//! Ferrodyn's server: the DynamoDB wire protocol over HTTP ([`protocol`]) and
//! the operations it dispatches to ([`ops`]), each validating its request
//! ([`validate`] holds the shared constraint checks) before running it on the
//! engine. [`faults`] injects failures on purpose when configured;
//! [`EmbeddedServer`] runs an in-memory server inside another program's
//! process (for Rust users' own tests).

pub mod embedded;
pub mod faults;
pub mod ops;
pub mod protocol;
pub mod validate;

pub use embedded::{EmbeddedOptions, EmbeddedServer};
pub use protocol::connections::{bind, ConnectionLimits};
pub use protocol::http::{router, serve, serve_with, AppState};
