#!/usr/bin/env bash
# Ferrodyn on shared PostgreSQL storage (issue 13), as scripts/test.sh runs it:
# a throwaway primary on 127.0.0.1:25435 (scripts/pg-cluster.sh, installing
# PostgreSQL from Debian packages when missing), then
#   - the storage crate's shared backend suite on PostgreSQL,
#   - a representative set of the AWS SDK tests on a PostgreSQL-backed server,
#   - three nodes on one database (crates/tests/tests/cluster.rs),
#   - failover under load: a primary with two synchronous standbys on
#     25430-25432, stopped with an immediate shutdown, a standby promoted.
# Everything started here is stopped on exit, Ctrl-C or kill. If PostgreSQL cannot be
# installed, the stage is skipped with a message saying so.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=/tmp/ferrodyn-pg-tests-$$
install_postgres() {
    [[ $(id -u) -eq 0 ]] || return 1
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q postgresql >/dev/null 2>&1 && return 0
    apt-get update -q >/dev/null 2>&1 || true
    apt-get install -y -q postgresql >/dev/null 2>&1
}
if ! ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 && ! install_postgres; then
    echo "pg-tests: SKIPPED: PostgreSQL is not installed and cannot be installed here (apt-get install postgresql failed)"
    exit 0
fi
# Ports may be moved (PG_TEST_PORT, PG_FAILOVER_PORT: the failover test also
# uses the next two) when another run holds the defaults. The defaults lie
# below Linux's ephemeral range (32768-60999): a CI run failed when a
# standby could not bind 55432, most likely held for a moment as the local
# port of one of the many client connections the earlier tests open.
port=${PG_TEST_PORT:-25435}
failover_port=${PG_FAILOVER_PORT:-25430}
# Stop what this run started however it ends: normally, on an error, or on
# Ctrl-C / kill (INT and TERM exit through the EXIT trap). The failover test
# starts its own cluster in /tmp/ferrodyn-failover-PID and stops it when the
# test ends; one left by a test process that no longer runs is stopped too.
cleanup() {
    scripts/pg-cluster.sh stop "$dir" || true
    local left
    for left in /tmp/ferrodyn-failover-*; do
        [[ -d $left ]] || continue
        kill -0 "${left##*-}" 2>/dev/null || scripts/pg-cluster.sh stop "$left" || true
    done
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
scripts/pg-cluster.sh start "$dir" "$port" >/dev/null
export FERRODYN_TEST_POSTGRES=postgres://$( [[ $(id -u) -eq 0 ]] && echo postgres || id -un )@127.0.0.1:$port
export FERRODYN_TEST_STORAGE=$FERRODYN_TEST_POSTGRES
cargo test -p ferrodyn-storage-postgres
for t in items transactions batches query indexes; do
    cargo test -p ferrodyn-tests --test "$t"
done
cargo test -p ferrodyn-tests --test cluster
FERRODYN_TEST_FAILOVER_PORT=$failover_port cargo test -p ferrodyn-tests --test failover -- --nocapture
