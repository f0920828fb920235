#!/usr/bin/env bash
# A PostgreSQL cluster on loopback for Ferrodyn's shared-storage tests and
# benchmarks: a primary, optionally two synchronous standbys (streaming
# replication, synchronous_standby_names 'ANY 1 (s1, s2)', remote_apply, so
# an acknowledged commit is applied on a standby too), and optionally N
# `ferrodyn serve --storage postgres://...` nodes in front of it.
#
#   scripts/pg-cluster.sh start DIR PORT [--standbys 0|2] [--nodes N --node-port P] [--bin FERRODYN]
#   scripts/pg-cluster.sh stop DIR
#
# PORT is the primary's; standbys take PORT+1 and PORT+2. Everything lives
# under DIR (data directories, logs, DIR/env with the connection strings,
# DIR/pids). PostgreSQL is installed from Debian packages when missing
# (apt-get install postgresql) and always runs as the `postgres` user when
# this runs as root (PostgreSQL refuses to run as root). `stop` stops what
# `start` started, by PID file, and removes DIR.
set -euo pipefail

die() { echo "pg-cluster: $*" >&2; exit 1; }

pg_bindir() {
    local dir
    for dir in /usr/lib/postgresql/*/bin; do
        [[ -x "$dir/pg_ctl" ]] && { echo "$dir"; return; }
    done
    return 1
}

ensure_postgres() {
    if pg_bindir >/dev/null; then return; fi
    [[ $(id -u) -eq 0 ]] || die "PostgreSQL is not installed and installing it needs root"
    echo "pg-cluster: installing PostgreSQL (apt-get install postgresql)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >/dev/null 2>&1 || {
        apt-get update -q >/dev/null 2>&1 || true
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q postgresql >/dev/null
    }
    pg_bindir >/dev/null || die "apt-get install postgresql did not provide pg_ctl"
}

# Runs a PostgreSQL command as the postgres user (as ourselves when not root).
as_pg() {
    if [[ $(id -u) -eq 0 ]]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

pg_user() { if [[ $(id -u) -eq 0 ]]; then echo postgres; else id -un; fi; }

configure_primary() {
    local data=$1 port=$2 standbys=$3
    cat >>"$data/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$(dirname "$data")'
max_connections = 200
# A transaction's checked writes take one SERIALIZABLE predicate lock per
# key read; past this many (default 64) PostgreSQL coarsens them to page or
# table locks, and a 100-action TransactWriteItems then conflicts with every
# concurrent writer (a false TransactionConflict, seen in CI).
max_pred_locks_per_transaction = 1024
wal_level = replica
max_wal_senders = 10
wal_keep_size = 256MB
shared_buffers = 128MB
fsync = on
EOF
    if [[ $standbys -gt 0 ]]; then
        cat >>"$data/postgresql.conf" <<EOF
synchronous_standby_names = 'ANY 1 (s1, s2)'
synchronous_commit = remote_apply
EOF
    fi
    cat >"$data/pg_hba.conf" <<EOF
local all all trust
host all all 127.0.0.1/32 trust
host replication all 127.0.0.1/32 trust
EOF
}

start_standby() {
    local dir=$1 name=$2 primary_port=$3 port=$4 bindir=$5 user=$6
    as_pg "$bindir/pg_basebackup" -h 127.0.0.1 -p "$primary_port" -U "$user" -D "$dir/$name" -R -X stream -c fast
    cat >>"$dir/$name/postgresql.auto.conf" <<EOF
port = $port
unix_socket_directories = '$dir'
primary_conninfo = 'host=127.0.0.1 port=$primary_port user=$user application_name=$name'
EOF
    echo "$dir/$name" >>"$dir/clusters"
    as_pg "$bindir/pg_ctl" -D "$dir/$name" -l "$dir/$name.log" -w -t 30 start >/dev/null \
        || { tail -n 20 "$dir/$name.log" >&2; die "standby $name did not start (its log is above)"; }
}

start_nodes() {
    local dir=$1 nodes=$2 node_port=$3 bin=$4 url=$5
    local i
    for ((i = 0; i < nodes; i++)); do
        local port=$((node_port + i))
        "$bin" serve --storage "$url" --port "$port" >"$dir/node$i.out" 2>"$dir/node$i.log" &
        echo "$!" >>"$dir/pids"
        echo "NODE$i=http://127.0.0.1:$port" >>"$dir/env"
    done
    for ((i = 0; i < nodes; i++)); do
        local waited=0
        until grep -q "listening" "$dir/node$i.out" 2>/dev/null; do
            sleep 0.1; waited=$((waited + 1))
            [[ $waited -lt 300 ]] || die "ferrodyn node $i did not start; see $dir/node$i.log"
        done
    done
}

start() {
    local dir=$1 port=$2; shift 2
    local standbys=0 nodes=0 node_port=8400 bin=""
    while [[ $# -gt 0 ]]; do
        case $1 in
            --standbys) standbys=$2; shift 2 ;;
            --nodes) nodes=$2; shift 2 ;;
            --node-port) node_port=$2; shift 2 ;;
            --bin) bin=$2; shift 2 ;;
            *) die "unknown option $1" ;;
        esac
    done
    [[ $standbys -eq 0 || $standbys -eq 2 ]] || die "--standbys is 0 or 2"
    ensure_postgres
    local bindir user
    bindir=$(pg_bindir); user=$(pg_user)
    [[ ! -e $dir ]] || die "$dir exists (stop the previous cluster first)"
    mkdir -p "$dir"
    # A start cut short (an error, Ctrl-C, kill) stops what it had started;
    # the directory stays, with its logs, for `stop` to remove.
    trap "stop_processes '$dir'" EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    [[ $(id -u) -ne 0 ]] || chown postgres "$dir"
    : >"$dir/pids"
    as_pg "$bindir/initdb" -D "$dir/primary" -U "$user" -A trust -E UTF8 --no-locale >/dev/null
    configure_primary "$dir/primary" "$port" "$standbys"
    echo "$dir/primary" >>"$dir/clusters" # before it starts: a cut-short start stops it
    as_pg "$bindir/pg_ctl" -D "$dir/primary" -l "$dir/primary.log" -w -t 30 start >/dev/null \
        || { tail -n 20 "$dir/primary.log" >&2; die "the primary did not start (its log is above)"; }
    if [[ $standbys -eq 2 ]]; then
        start_standby "$dir" s1 "$port" $((port + 1)) "$bindir" "$user"
        start_standby "$dir" s2 "$port" $((port + 2)) "$bindir" "$user"
    fi
    as_pg "$bindir/createdb" -h 127.0.0.1 -p "$port" -U "$user" ferrodyn
    local url="postgres://$user@127.0.0.1:$port/ferrodyn"
    if [[ $standbys -eq 2 ]]; then
        url="postgres://$user@127.0.0.1:$port,127.0.0.1:$((port + 1)),127.0.0.1:$((port + 2))/ferrodyn?target_session_attrs=read-write"
    fi
    {
        echo "PG_BINDIR=$bindir"
        echo "PG_USER=$user"
        echo "PG_PORT=$port"
        echo "PG_ADMIN_URL=postgres://$user@127.0.0.1:$port"
        echo "FERRODYN_STORAGE=$url"
    } >>"$dir/env"
    if [[ $nodes -gt 0 ]]; then
        [[ -n $bin ]] || die "--nodes needs --bin PATH_TO_FERRODYN"
        start_nodes "$dir" "$nodes" "$node_port" "$bin" "$url"
    fi
    trap - EXIT INT TERM
    cat "$dir/env"
}

# Stops the nodes and PostgreSQL servers recorded in DIR; keeps DIR.
stop_processes() {
    local dir=$1
    local pid
    if [[ -f $dir/pids ]]; then
        while read -r pid; do
            kill "$pid" 2>/dev/null || true
        done <"$dir/pids"
    fi
    if [[ -f $dir/clusters ]]; then
        local bindir data
        bindir=$(pg_bindir)
        while read -r data; do
            [[ -f $data/postmaster.pid ]] || continue
            as_pg "$bindir/pg_ctl" -D "$data" -m immediate -w -t 30 stop >/dev/null 2>&1 || true
        done <"$dir/clusters"
    fi
}

stop() {
    local dir=$1
    [[ -d $dir ]] || return 0
    stop_processes "$dir"
    rm -rf "$dir"
}

case ${1:-} in
    start) shift; [[ $# -ge 2 ]] || die "usage: start DIR PORT [options]"; start "$@" ;;
    stop) shift; [[ $# -eq 1 ]] || die "usage: stop DIR"; stop "$1" ;;
    *) die "usage: $0 start DIR PORT [--standbys 0|2] [--nodes N --node-port P --bin FERRODYN] | stop DIR" ;;
esac
