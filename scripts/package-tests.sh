#!/usr/bin/env bash
# Installs the packages scripts/package.sh built the way users do, in fresh
# environments, and runs small test projects against them:
#   the wheel in a new virtual environment with pytest, pytest-xdist and
#   boto3: tests/packages/python, once in one process and once over two
#   xdist workers (a server per worker);
#   the two npm tarballs in a new project with vitest and the AWS SDK for
#   JavaScript v3: tests/packages/vitest, and with jest: tests/packages/jest.
# Nothing here uses the workspace's own binary: FERRODYN_BIN is unset, so the
# fixtures must find the one their package installed.
# usage: scripts/package-tests.sh   (after scripts/package.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
PKG=$ROOT/target/packages
WORK=$ROOT/target/package-tests
VERSION=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
unset FERRODYN_BIN
WHEEL=$(ls "$PKG"/ferrodyn-"$VERSION"-*.whl)
rm -rf "$WORK" && mkdir -p "$WORK"

echo "== wheel + pytest plugin"
python3 -m venv "$WORK/venv"
"$WORK/venv/bin/pip" install --quiet "$WHEEL" pytest pytest-xdist boto3
cp -r tests/packages/python "$WORK/python"
(
  cd "$WORK/python"
  export PATH="$WORK/venv/bin:$PATH"
  [ "$(command -v ferrodyn)" = "$WORK/venv/bin/ferrodyn" ]
  pytest -q
  pytest -q -n 2
  # One server shared by the workers, kept apart by per-test namespaces
  # (started here, not by the plugin: it is stopped by PID, so no helper
  # process outlives the script).
  ferrodyn serve --in-memory --port 0 --namespaces access-key --clock manual \
    --console off < /dev/null > shared-server.out 2>&1 &
  shared=$!
  trap 'kill "$shared" 2>/dev/null || true' EXIT
  for _ in $(seq 100); do grep -q listening shared-server.out 2>/dev/null && break; sleep 0.05; done
  FERRODYN_ENDPOINT=$(sed -n 's/^ferrodyn listening on \([^ ]*\).*/\1/p' shared-server.out) \
    pytest -q -n 2
  kill "$shared"
)

echo "== npm packages + vitest"
mkdir -p "$WORK/vitest"
cp tests/packages/vitest/* "$WORK/vitest/"
(
  cd "$WORK/vitest"
  printf '{ "name": "ferrodyn-package-test", "private": true, "type": "module" }\n' > package.json
  npm install --no-audit --no-fund --loglevel=error \
    "$PKG/ferrodyn-linux-x64-$VERSION.tgz" "$PKG/ferrodyn-$VERSION.tgz" \
    'vitest@^3.2' '@aws-sdk/client-dynamodb@^3'
  [ -x node_modules/@ferrodyn/linux-x64/bin/ferrodyn ]
  npx vitest run
  npx ferrodyn --version
)
echo "== npm packages + jest"
mkdir -p "$WORK/jest"
cp tests/packages/jest/* "$WORK/jest/"
(
  cd "$WORK/jest"
  printf '{ "name": "ferrodyn-jest-test", "private": true }\n' > package.json
  npm install --no-audit --no-fund --loglevel=error \
    "$PKG/ferrodyn-linux-x64-$VERSION.tgz" "$PKG/ferrodyn-$VERSION.tgz" \
    'jest@^30' '@aws-sdk/client-dynamodb@^3'
  npx jest
)
echo "package tests: all ok"
