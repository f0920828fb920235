//! The shared suite against the in-memory backend.

mod common;

storage_suite!((ferrodyn_storage::open_memory(), ()));
