//! Ferrodyn's integration test suite.
//!
//! The library is empty on purpose: every test lives under `tests/`, one file
//! per area of DynamoDB behaviour, and drives a spawned `ferrodyn serve`
//! through the official AWS SDK for Rust (or raw HTTP for protocol details).
//! The shared harness is `tests/common/mod.rs`; it spawns the server once per
//! test binary, or talks to an external server named by
//! `FERRODYN_TEST_ENDPOINT` (for example DynamoDB Local, to validate the tests
//! themselves against Amazon's implementation).
