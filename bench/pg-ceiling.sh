#!/usr/bin/env bash
# What PostgreSQL alone can do with the statements a PostgreSQL-backed
# PutItem sends, without any Ferrodyn node: pgbench, 16 clients, prepared
# statements, on a scratch table shaped like ferrodyn_kv (bytea key and
# value, 10,000 keys, ~100-byte values). Each line is one pgbench run:
#
#   upsert            one INSERT ... ON CONFLICT DO UPDATE (the least a
#                     durable write can cost)
#   get+upsert        a point read, then that upsert
#   get+cas           a point read, then UPDATE ... WHERE v IS NOT DISTINCT
#                     FROM the value read, SERIALIZABLE
#   get+ferrodyn      a point read, then the write statement PutItem sends
#                     (storage-postgres/src/sql.rs UPSERT: the check CTE and
#                     the UNNEST insert), SERIALIZABLE, generic plans, as the
#                     node's sessions run it
#
#   bench/pg-ceiling.sh ADMIN_URL [SECONDS]     (e.g. postgres://postgres@127.0.0.1:55700)
#
# It creates (and at the end drops) the database pgceiling. Needs pgbench
# (PostgreSQL's own package, as scripts/pg-cluster.sh installs) and, as
# root, runs it as the postgres user.
set -euo pipefail
admin=$1 secs=${2:-6}
bindir=$(ls -d /usr/lib/postgresql/*/bin | tail -n 1)
work=$(mktemp -d)
trap 'rm -rf "$work"; psql "$admin/postgres" -qc "DROP DATABASE IF EXISTS pgceiling" >/dev/null 2>&1 || true' EXIT
chmod 755 "$work"
PGOPTIONS=--client-min-messages=warning psql "$admin/postgres" -qc "DROP DATABASE IF EXISTS pgceiling" -c "CREATE DATABASE pgceiling"
psql "$admin/pgceiling" -qc "CREATE TABLE kv (k bytea PRIMARY KEY, v bytea NOT NULL)" \
    -c "INSERT INTO kv SELECT int4send(i), decode(repeat('ab', 96), 'hex') FROM generate_series(1, 10000) i"

value="decode(repeat('ab', 96), 'hex')"
key='int4send(:key)'
read="SELECT v FROM kv WHERE k = $key;"
cat >"$work/upsert.sql" <<EOF
\set key random(1, 10000)
INSERT INTO kv (k, v) VALUES ($key, $value) ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v;
EOF
{ echo '\set key random(1, 10000)'; echo "$read"; tail -n 1 "$work/upsert.sql"; } >"$work/get+upsert.sql"
cat >"$work/get+cas.sql" <<EOF
\set key random(1, 10000)
$read
UPDATE kv SET v = $value WHERE k = $key AND v IS NOT DISTINCT FROM $value;
EOF
cat >"$work/get+ferrodyn.sql" <<EOF
\set key random(1, 10000)
$read
WITH chk AS (SELECT 1 / (CASE WHEN coalesce(bool_and((SELECT kv2.v FROM kv kv2 WHERE kv2.k = c.k) IS NOT DISTINCT FROM c.v), true) THEN 1 ELSE 0 END) AS ok FROM UNNEST(ARRAY[$key]::bytea[], ARRAY[$value]::bytea[]) AS c(k, v)), ins AS (INSERT INTO kv (k, v) SELECT n.k, n.v FROM UNNEST(ARRAY[$key]::bytea[], ARRAY[$value]::bytea[]) AS n(k, v) WHERE (SELECT ok FROM chk) = 1 ON CONFLICT (k) DO UPDATE SET v = EXCLUDED.v RETURNING 1) SELECT (SELECT ok FROM chk), (SELECT count(*) FROM ins);
EOF

host=$(sed -E 's|.*@([^:/]+).*|\1|' <<<"$admin")
port=$(sed -E 's|.*:([0-9]+).*|\1|' <<<"$admin")
user=$(sed -E 's|postgres://([^@:]+).*|\1|' <<<"$admin")
as_pg() { if [[ $(id -u) -eq 0 ]]; then runuser -u postgres -- "$@"; else "$@"; fi; }
for shape in upsert get+upsert get+cas get+ferrodyn; do
    options="-c plan_cache_mode=force_generic_plan -c enable_seqscan=off"
    [[ $shape == get+cas || $shape == get+ferrodyn ]] &&
        options="$options -c default_transaction_isolation=serializable"
    out=$(as_pg env PGOPTIONS="$options" "$bindir/pgbench" -h "$host" -p "$port" -U "$user" \
        -n -M prepared -c 16 -j 1 -T "$secs" -f "$work/$shape.sql" pgceiling 2>&1)
    tps=$(awk '/^tps/ {printf "%d", $3}' <<<"$out")
    failed=$(awk '/failed transactions/ {print $5}' <<<"$out")
    printf '%-14s %7s transactions/s  (%s failed: serialization)\n' "$shape" "$tps" "${failed:-0}"
done
