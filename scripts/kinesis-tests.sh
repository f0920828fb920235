#!/usr/bin/env bash
# Kinesis streaming destinations against a real Kinesis server, as
# scripts/test.sh runs it: moto's server (from PyPI, in target/s3-venv, the
# environment scripts/s3-tests.sh also uses) and tests/kinesis/*.py, which
# start moto, a TCP proxy they can cut, and `ferrodyn serve
# --kinesis-endpoint` behind it, and read the stream back with boto3.
# Everything started here is stopped on exit. If moto cannot be installed:
# with CI=true the run fails; elsewhere the stage is skipped with a message
# saying so.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/s3-venv
unavailable() {
    if [[ ${CI:-} == true ]]; then
        echo "kinesis-tests: FAILED: $1 (CI=true: the Kinesis stage may not be skipped)" >&2
        exit 1
    fi
    echo "kinesis-tests: SKIPPED: $1 (Kinesis destinations were NOT tested)" >&2
    exit 0
}
if ! "$venv/bin/python" -c 'import moto, boto3, pytest, flask' 2>/dev/null; then
    python3 -m venv "$venv" || unavailable "cannot create $venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check 'moto[server]' boto3 pytest zstandard \
        || unavailable "pip install 'moto[server]' boto3 pytest zstandard failed"
fi
[ -x target/debug/ferrodyn ] || cargo build -p ferrodyn --bin ferrodyn
"$venv/bin/python" -m pytest -q tests/kinesis "$@"
