#!/usr/bin/env bash
# boto3 and AWS CLI smoke test against the built server. Installs the two
# clients into a project-local virtualenv (target/smoke-venv) on first use.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/smoke-venv
if ! "$venv/bin/python" -c 'import boto3, awscli' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check boto3 awscli
fi
"$venv/bin/python" tests/smoke/boto3_and_cli.py target/debug/ferrodyn "$venv/bin/aws"
