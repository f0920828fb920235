#!/usr/bin/env bash
# The whole test suite, as CI runs it: formatting and lints, then every
# crate's tests (unit tests, the storage crash tests, and the integration
# tests: one binary, crates/ferrodyn/tests/tests.rs, driving the server Cargo
# builds for it through the AWS SDK, the client library and the CLI), then
# exports to a real S3-compatible server (moto's), a boto3 and AWS CLI smoke
# test, moto's AWS-verified tests, the packages
# installed as users install them, and the console in a browser.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
# The engine's modules import each other without cycles (they form a tree
# you can draw; scripts/module_cycles.py prints any cycle it finds).
python3 scripts/module_cycles.py crates/engine/src
# Serialisations that cannot fail say so one way (scripts/cannot_fail.py).
python3 scripts/cannot_fail.py crates
cargo build -p ferrodyn --bin ferrodyn
cargo test --workspace
# Shared storage on PostgreSQL: backend suite, SDK tests, three nodes, failover
# (installs postgresql when missing; if it cannot, fails under CI=true and is
# skipped with a message elsewhere). Those tests are #[ignore]d in the
# `cargo test --workspace` above and run only here.
./scripts/pg-tests.sh
# Exports to S3 against moto's S3 server (installed from PyPI by the script),
# read back with boto3 and gzip.
./scripts/s3-tests.sh
# Kinesis streaming destinations against moto's Kinesis server, through a
# proxy the tests cut and restore.
./scripts/kinesis-tests.sh
# The other official clients: boto3 and the AWS CLI (installed locally by the script).
./scripts/smoke.sh
# moto's AWS-verified DynamoDB tests, unchanged, against a fresh server (moto's
# sdist from PyPI; failures outside scripts/library-suites.exclusions fail the run).
./scripts/library-suites.sh moto
# The packages (wheel, npm tarballs, crates; a stripped `dist` build) and
# small pytest, vitest and jest projects installed from them in fresh
# environments (packages from PyPI and npm, fetched by the script).
./scripts/package.sh
./scripts/package-tests.sh
# The web console in headless Chromium (installs chromium, chromium-driver and selenium when missing).
./scripts/console-tests.sh
