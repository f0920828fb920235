//! Table-driven tests of the whole pipeline.
