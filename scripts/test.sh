#!/usr/bin/env bash
# The whole test suite: builds the server binary the integration tests spawn,
# then runs every crate's tests (unit, storage crash tests, and the AWS SDK
# integration tests in crates/tests). Lints run too, so CI keeps them clean.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build -p ferrodyn --bin ferrodyn
cargo test --workspace
