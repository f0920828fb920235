#!/usr/bin/env bash
# Exports to S3 against a real S3-compatible server, as scripts/test.sh runs
# it: moto's server (from PyPI, in target/s3-venv) on a free port, a
# `ferrodyn serve --in-memory --s3-endpoint` beside it, and
# tests/exports/*.py driving both with boto3 (reading the export
# back with gzip, as a user would). Everything started here is stopped on
# exit. If moto cannot be installed: with CI=true the run fails; elsewhere
# the stage is skipped with a message saying so.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/s3-venv
unavailable() {
    if [[ ${CI:-} == true ]]; then
        echo "s3-tests: FAILED: $1 (CI=true: the S3 stage may not be skipped)" >&2
        exit 1
    fi
    echo "s3-tests: SKIPPED: $1 (exports to S3 were NOT tested)" >&2
    exit 0
}
if ! "$venv/bin/python" -c 'import moto, boto3, pytest, flask, zstandard' 2>/dev/null; then
    python3 -m venv "$venv" || unavailable "cannot create $venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check 'moto[server]' boto3 pytest zstandard \
        || unavailable "pip install 'moto[server]' boto3 pytest zstandard failed"
fi
[ -x target/debug/ferrodyn ] || cargo build -p ferrodyn --bin ferrodyn
# With FERRODYN_TEST_POSTGRES set (scripts/pg-tests.sh), only the test of
# transfers on shared storage; without it, every other one.
if [[ -n ${FERRODYN_TEST_POSTGRES:-} ]]; then
    "$venv/bin/python" -m pytest -q tests/exports/test_shared_transfers.py "$@"
else
    "$venv/bin/python" -m pytest -q tests/exports --ignore=tests/exports/test_shared_transfers.py "$@"
fi
