#!/usr/bin/env bash
# The whole test suite, as CI runs it: formatting and lints, then every
# crate's tests (unit tests, the storage crash tests, the client and CLI
# tests, and the AWS SDK integration tests in crates/tests, which spawn the
# server binary built here), then a boto3 and AWS CLI smoke test and moto's
# AWS-verified tests.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
# The engine's modules import each other without cycles (they form a tree
# you can draw; scripts/module_cycles.py prints any cycle it finds).
python3 scripts/module_cycles.py crates/engine/src
cargo build -p ferrodyn --bin ferrodyn
cargo test --workspace
# Shared storage on PostgreSQL: backend suite, SDK tests, three nodes, failover
# (installs postgresql when missing; skipped with a message if it cannot).
./scripts/pg-tests.sh
# The other official clients: boto3 and the AWS CLI (installed locally by the script).
./scripts/smoke.sh
# moto's AWS-verified DynamoDB tests, unchanged, against a fresh server (moto's
# sdist from PyPI; failures outside scripts/library-suites.exclusions fail the run).
./scripts/library-suites.sh moto
# The web console in headless Chromium (installs chromium, chromium-driver and selenium when missing).
./scripts/console-tests.sh
