#!/usr/bin/env python3
"""Ferrodyn's benchmark: DynamoDB-API servers side by side on loopback, driven by wrk.

usage: bench/run.py [options] NAME=URL [NAME=URL ...]

  bench/run.py --secs 8 --conns 16 --ops put,get \\
      --ferrodyn-bin target/release/ferrodyn --ceiling http://127.0.0.1:8199 \\
      ferrodyn=http://127.0.0.1:8000 ferrodyn-durable=http://127.0.0.1:8002 \\
      ddblocal=http://127.0.0.1:8100 dynoxide=http://127.0.0.1:8101

For every server: a fresh table (PK S hash key, SK S range key) is created and loaded
with 10,000 ~100-byte user#N items and 100 partitions of 20 grp#N items (through
BatchWriteItem, or PutItem when the server answers UnknownOperationException). Then
each op runs for --secs after a warm-up; ops are interleaved across servers (op 1 on
every server, then op 2, ...) so a burst of background load hits all of them alike.
An op a server answers with UnknownOperationException is skipped with a note.

Prints markdown: requests/s, p50/p99 latency and non-2xx answers per server and op;
ratios against the peers; the servers' RSS idle and after the run; server CPU while
measured and the CPU used by everything else (noise); and, with --ferrodyn-bin, the
startup time of `ferrodyn serve --in-memory --port 0` (exec to first answered
request, median of 5 runs). Python 3.11 standard library only; needs wrk.
"""
import argparse
import concurrent.futures
import datetime
import http.client
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
LUA = os.path.join(HERE, "ops.lua")
OPS = ["put", "get", "query", "txn", "bwrite", "bget", "pselect", "pinsert", "hot"]
TARGET = {"pselect": "ExecuteStatement", "pinsert": "ExecuteStatement",
          "put": "PutItem", "get": "GetItem", "query": "Query", "txn": "TransactWriteItems",
          "bwrite": "BatchWriteItem", "bget": "BatchGetItem", "hot": "TransactWriteItems"}
CLK = os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------- HTTP client

def amz_date():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")


def headers(op):
    d = amz_date()
    return {
        "Content-Type": "application/x-amz-json-1.0",
        "X-Amz-Target": "DynamoDB_20120810." + op,
        "X-Amz-Date": d,
        "Authorization": "AWS4-HMAC-SHA256 Credential=AKIAFERRODYNBENCH000/" + d[:8] +
                         "/us-east-1/dynamodb/aws4_request, SignedHeaders=content-type;host;x-amz-date;"
                         "x-amz-target, Signature=" + "5f" * 32,
    }


class Client:
    """One keep-alive connection to a server; call() returns (status, parsed body)."""

    def __init__(self, url, timeout=60):
        u = urllib.parse.urlsplit(url)
        self.host, self.port, self.timeout = u.hostname, u.port or 80, timeout
        self.conn = None

    def call(self, op, body):
        data = json.dumps(body).encode()
        for attempt in range(3):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
                self.conn.request("POST", "/", body=data, headers=headers(op))
                r = self.conn.getresponse()
                raw = r.read()
                try:
                    parsed = json.loads(raw) if raw else {}
                except ValueError:
                    parsed = {"__raw": raw[:300].decode("utf-8", "replace")}
                return r.status, parsed
            except (OSError, http.client.HTTPException):
                if self.conn:
                    self.conn.close()
                self.conn = None
                if attempt == 2:
                    raise
                time.sleep(0.2)

    def close(self):
        if self.conn:
            self.conn.close()


def err_type(status, body):
    if status < 300:
        return None
    t = body.get("__type", "") if isinstance(body, dict) else ""
    return t.rsplit("#", 1)[-1] or f"HTTP {status}"


# ---------------------------------------------------------------- data set

def user_item(k, n):  # the same ~100-byte shape ops.lua writes
    return {"PK": {"S": f"user#{k}"}, "SK": {"S": "profile"}, "name": {"S": "Ada Lovelace"},
            "email": {"S": f"ada{k}@example.com"}, "n": {"N": str(n)}, "tags": {"SS": ["a", "b", "c"]},
            "bio": {"S": "Analyst and metaphysician"}}


def group_item(g, j):
    return {"PK": {"S": f"grp#{g}"}, "SK": {"S": f"item#{j:03d}"}, "v": {"N": str(j)},
            "payload": {"S": "query row payload of forty-odd bytes....."}}


def probe_body(op, table):
    """One request of each op, shaped like ops.lua's, to see whether a server has the op."""
    guard = "attribute_not_exists(PK)"
    if op == "put":
        return {"TableName": table, "Item": user_item(1, 1)}
    if op == "pselect":
        return {"Statement": f'SELECT * FROM "{table}" WHERE PK = ? AND SK = ?',
                "Parameters": [{"S": "user#1"}, {"S": "profile"}]}
    if op == "pinsert":
        return {"Statement": f"INSERT INTO \"{table}\" VALUE {{'PK': ?, 'SK': 'profile'}}",
                "Parameters": [{"S": f"ins#probe{time.time_ns()}"}]}
    if op == "get":
        return {"TableName": table, "Key": {"PK": {"S": "user#1"}, "SK": {"S": "profile"}}}
    if op == "query":
        return {"TableName": table, "KeyConditionExpression": "PK = :p AND begins_with(SK, :s)",
                "ExpressionAttributeValues": {":p": {"S": "grp#1"}, ":s": {"S": "item#"}}}
    if op == "txn":
        i = f"probe{time.time_ns()}"
        return {"TransactItems": [
            {"Put": {"TableName": table, "Item": {"PK": {"S": f"ACCT#{i}"}, "SK": {"S": "PROFILE"}},
                     "ConditionExpression": guard}},
            {"Put": {"TableName": table, "Item": {"PK": {"S": f"UNIQ#EMAIL#{i}"}, "SK": {"S": "LOCK"}},
                     "ConditionExpression": guard}},
            {"Put": {"TableName": table, "Item": {"PK": {"S": f"UNIQ#HANDLE#{i}"}, "SK": {"S": "LOCK"}},
                     "ConditionExpression": guard}}]}
    if op == "hot":
        return {"TransactItems": [
            {"Update": {"TableName": table, "Key": {"PK": {"S": "hot"}, "SK": {"S": "counter"}},
                        "UpdateExpression": "ADD n :one", "ExpressionAttributeValues": {":one": {"N": "1"}}}},
            {"Put": {"TableName": table, "Item": {"PK": {"S": f"LEDGER#probe{time.time_ns()}"}, "SK": {"S": "ENTRY"}},
                     "ConditionExpression": guard}}]}
    if op == "bwrite":
        return {"RequestItems": {table: [{"PutRequest": {"Item": {"PK": {"S": "bw#probe"}, "SK": {"S": f"{j:02d}"}}}}
                                         for j in range(1, 26)]}}
    if op == "bget":
        return {"RequestItems": {table: {"Keys": [{"PK": {"S": f"user#{k}"}, "SK": {"S": "profile"}}
                                                  for k in range(1, 101)]}}}
    raise ValueError(op)


def setup_table(name, url, table, keys, groups):
    c = Client(url)
    c.call("DeleteTable", {"TableName": table})
    for _ in range(300):  # deletion may be asynchronous
        st, _ = c.call("DescribeTable", {"TableName": table})
        if st >= 400:
            break
        time.sleep(0.1)
    st, r = c.call("CreateTable", {
        "TableName": table, "BillingMode": "PAY_PER_REQUEST",
        "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
        "AttributeDefinitions": [{"AttributeName": "PK", "AttributeType": "S"},
                                 {"AttributeName": "SK", "AttributeType": "S"}]})
    if st >= 300:
        sys.exit(f"{name}: CreateTable failed: {st} {r}")
    for _ in range(300):
        st, d = c.call("DescribeTable", {"TableName": table})
        if d.get("Table", {}).get("TableStatus") == "ACTIVE":
            break
        time.sleep(0.1)
    items = [user_item(k, k) for k in range(1, keys + 1)]
    items += [group_item(g, j) for g in range(1, groups + 1) for j in range(20)]
    t0 = time.perf_counter()
    # BatchWriteItem if the server has it, else PutItem.
    method = "BatchWriteItem"
    st, r = c.call("BatchWriteItem", {"RequestItems": {table: [{"PutRequest": {"Item": it}} for it in items[:25]]}})
    if err_type(st, r) == "UnknownOperationException":
        method = "PutItem"
    elif st >= 300:
        sys.exit(f"{name}: BatchWriteItem load failed: {st} {r}")
    if method == "BatchWriteItem":
        todo = [items[i:i + 25] for i in range(25, len(items), 25)]
        # the first batch may have left unprocessed items
        todo.insert(0, [p["PutRequest"]["Item"] for p in (r.get("UnprocessedItems") or {}).get(table, [])])

        def work(chunk, cl):
            pending = {table: [{"PutRequest": {"Item": it}} for it in chunk]}
            for _ in range(50):
                if not pending or not pending.get(table):
                    return
                st, r = cl.call("BatchWriteItem", {"RequestItems": pending})
                if st >= 300:
                    raise RuntimeError(f"{name}: BatchWriteItem load failed: {st} {r}")
                pending = r.get("UnprocessedItems") or {}
                time.sleep(0.02 if pending else 0)
            raise RuntimeError(f"{name}: BatchWriteItem kept returning UnprocessedItems")
        chunks = todo
    else:
        chunks = [items[i::4] for i in range(4)]

        def work(chunk, cl):
            for it in chunk:
                st, r = cl.call("PutItem", {"TableName": table, "Item": it})
                if st >= 300:
                    raise RuntimeError(f"{name}: PutItem load failed: {st} {r}")
    local = threading.local()

    def run(chunk):
        if not hasattr(local, "c"):
            local.c = Client(url)
        work(chunk, local.c)
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        for f in [ex.submit(run, ch) for ch in chunks]:
            f.result()
    c.close()
    return method, len(items), time.perf_counter() - t0


# ---------------------------------------------------------------- processes

def port_of(url):
    u = urllib.parse.urlsplit(url)
    return u.port or 80


def find_pid(url):
    """The pid listening on the URL's port, from `ss -ltnpH`."""
    port = port_of(url)
    try:
        out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True).stdout
    except FileNotFoundError:
        return None
    for line in out.splitlines():
        cols = line.split()
        if len(cols) >= 4 and cols[3].rsplit(":", 1)[-1] == str(port):
            m = re.search(r"pid=(\d+)", line)
            if m:
                return int(m.group(1))
    return None


def proc_status(pid, field):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])  # kB
    except OSError:
        return None
    return None


def proc_cmd(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return None


def proc_cpu_ticks(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime + stime
    except (OSError, IndexError, ValueError):
        return None


def machine_busy_ticks():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + (v[4] if len(v) > 4 else 0)
    return sum(v[:8]) - idle


def children_ticks():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r.ru_utime + r.ru_stime) * CLK


def loadavg():
    with open("/proc/loadavg") as f:
        return f.read().split()[0]


def mb(kb):
    return "?" if kb is None else f"{kb / 1024:.1f} MB"


# ---------------------------------------------------------------- wrk

def run_wrk(url, op, secs, conns, threads, table, keys, groups):
    env = dict(os.environ, BENCH_OP=op, BENCH_TABLE=table, BENCH_KEYS=str(keys),
               BENCH_GROUPS=str(groups), BENCH_AMZ_DATE=amz_date())
    cmd = ["wrk", f"-t{threads}", f"-c{conns}", f"-d{secs}s", "--timeout", "10s", "-s", LUA, url]
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    m = re.search(r"^BENCH_RESULT (.*)$", p.stdout, re.M)
    if not m:
        raise RuntimeError(f"wrk gave no result for {op} on {url}:\n{p.stdout}\n{p.stderr}")
    kv = dict(x.split("=", 1) for x in m.group(1).split())
    n = int(kv["requests"])
    dur = int(kv["duration_us"]) / 1e6
    return {"rps": n / dur if dur else 0.0, "requests": n, "secs": dur,
            "p50_ms": int(kv["p50_us"]) / 1000, "p90_ms": int(kv["p90_us"]) / 1000,
            "p99_ms": int(kv["p99_us"]) / 1000, "p999_ms": int(kv["p999_us"]) / 1000,
            "max_ms": int(kv["max_us"]) / 1000, "non2xx": int(kv["status"]),
            "sock_errors": sum(int(kv[k]) for k in ("connect", "read", "write", "timeout"))}


def measure(s, op, conns, a):
    """Warm up, then measure one op on one server with `conns` connections, with CPU accounting
    around the measured run."""
    run_wrk(s["url"], op, a.warmup, conns, a.threads, a.table, a.keys, a.groups)
    pid = s.get("pid")
    srv0, busy0, ch0, t0 = proc_cpu_ticks(pid) if pid else None, machine_busy_ticks(), children_ticks(), time.time()
    r = run_wrk(s["url"], op, a.secs, conns, a.threads, a.table, a.keys, a.groups)
    srv1, busy1, ch1, t1 = proc_cpu_ticks(pid) if pid else None, machine_busy_ticks(), children_ticks(), time.time()
    wall = (t1 - t0) * CLK
    wrk_t = ch1 - ch0
    r["wrk_cpu"] = 100 * wrk_t / wall
    if srv0 is not None and srv1 is not None:
        r["srv_cpu"] = 100 * (srv1 - srv0) / wall
        r["other_cpu"] = max(0.0, 100 * ((busy1 - busy0) - (srv1 - srv0) - wrk_t) / wall)
    else:
        r["srv_cpu"] = r["other_cpu"] = None
    r["load1"] = loadavg()
    return r


# ---------------------------------------------------------------- startup

def startup_once(binary, extra):
    t0 = time.perf_counter()
    p = subprocess.Popen([binary, "serve", "--port", "0", *extra], stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    try:
        port, seen = None, []
        while port is None:
            line = p.stdout.readline()
            if not line:
                raise RuntimeError("ferrodyn exited before printing its address: " + "".join(seen))
            seen.append(line)
            m = re.search(r"http://[^\s:]+:(\d+)", line)
            if m:
                port = int(m.group(1))
        t_addr = time.perf_counter() - t0
        deadline = time.perf_counter() + 10
        while True:
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
                c.request("POST", "/", body=b"{}", headers=headers("ListTables"))
                r = c.getresponse()
                r.read()
                c.close()
                if r.status == 200:
                    break
            except OSError:
                pass
            if time.perf_counter() > deadline:
                raise RuntimeError("ferrodyn did not answer ListTables within 10 s")
            time.sleep(0.0005)
        t_ready = time.perf_counter() - t0
        rss = proc_status(p.pid, "VmRSS")
        return t_ready, t_addr, rss
    finally:
        p.terminate()
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def startup(binary, runs):
    out = {}
    for label, durable in (("in-memory", False), ("durable (fresh --data-dir)", True)):
        res = []
        for _ in range(runs):
            if durable:
                with tempfile.TemporaryDirectory(prefix="fd-bench-start-") as d:
                    res.append(startup_once(binary, ["--data-dir", d]))
            else:
                res.append(startup_once(binary, ["--in-memory"]))
        out[label] = {"ready_ms": [r[0] * 1000 for r in res], "addr_ms": [r[1] * 1000 for r in res],
                      "rss_kb": [r[2] for r in res]}
    return out


# ---------------------------------------------------------------- report

def fmt_ms(v):
    return f"{v:.2f}" if v < 10 else f"{v:.1f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("servers", nargs="*", metavar="NAME=URL")
    ap.add_argument("--secs", type=int, default=8, help="measured seconds per op and server (default 8)")
    ap.add_argument("--warmup", type=int, default=2, help="warm-up seconds before each measurement (default 2)")
    ap.add_argument("--conns", default="16",
                    help="wrk connections (default 16); a list (1,64) measures every op at each, back to back, "
                         "as rows OP@N, with a ratio table against the first")
    ap.add_argument("--op-conns", default="", metavar="OP=N,...",
                    help="connections for these ops instead of --conns (e.g. hot=64)")
    ap.add_argument("--threads", type=int, default=1, help="wrk threads (default 1: the machine has 2 cores)")
    ap.add_argument("--ops", default=",".join(OPS), help="comma-separated, from " + ",".join(OPS))
    ap.add_argument("--rounds", type=int, default=1, help="repeat every measurement; report the median")
    ap.add_argument("--pid", action="append", default=[], metavar="NAME=PID",
                    help="server process for RSS/CPU (default: the process listening on the URL's port)")
    ap.add_argument("--ceiling", metavar="URL", help="no-storage ceiling server, measured for put and get")
    ap.add_argument("--ferrodyn-bin", metavar="PATH", help="measure startup time of this ferrodyn binary")
    ap.add_argument("--startup-runs", type=int, default=5)
    ap.add_argument("--peers", default="ddblocal,dynoxide", help="names to quote ratios against")
    ap.add_argument("--table", default="fdbench")
    ap.add_argument("--keys", type=int, default=10000)
    ap.add_argument("--groups", type=int, default=100)
    ap.add_argument("--json-out", metavar="FILE", help="also write every figure as JSON")
    ap.add_argument("--quiet-load", type=float, metavar="L",
                    help="before starting, wait (up to --quiet-wait s) until the 1-minute load average is below L")
    ap.add_argument("--quiet-wait", type=int, default=600)
    ap.add_argument("--max-other", type=float, default=25.0, metavar="PCT",
                    help="a measurement during which the rest of the machine used more than PCT%% of a core is "
                         "repeated (up to --retries times; the least noisy attempt is kept; default 25)")
    ap.add_argument("--retries", type=int, default=3)
    ap.add_argument("--retry-pause", type=int, default=15, metavar="S")
    a = ap.parse_args()
    if not a.servers and not a.ferrodyn_bin:
        ap.error("name at least one NAME=URL server (or --ferrodyn-bin for startup time only)")
    if a.servers and not shutil.which("wrk"):
        sys.exit("wrk not found: install it with `sudo apt-get install wrk` (Debian/Ubuntu) "
                 "or build it from https://github.com/wg/wrk")
    ops = [o for o in a.ops.split(",") if o]
    bad = [o for o in ops if o not in OPS]
    if bad:
        ap.error(f"unknown ops {bad}; choose from {OPS}")
    conns = [int(c) for c in a.conns.split(",") if c]
    op_conns = {k: int(v) for k, v in (x.split("=", 1) for x in a.op_conns.split(",") if x)}
    # Every measurement: (label, op, connections), in the order they run each round.
    plan = []
    for op in ops:
        for c in ([op_conns[op]] if op in op_conns else conns):
            plan.append((f"{op}@{c}" if len(conns) > 1 or op in op_conns else op, op, c))
    labels = [label for label, _, _ in plan]

    pids = dict(p.split("=", 1) for p in a.pid)
    servers = []
    for spec in a.servers:
        name, url = spec.split("=", 1)
        pid = int(pids[name]) if name in pids else find_pid(url)
        servers.append({"name": name, "url": url.rstrip("/"), "pid": pid, "ceiling": False})
    if a.ceiling:
        servers.append({"name": "ceiling", "url": a.ceiling.rstrip("/"), "pid": find_pid(a.ceiling), "ceiling": True})

    log = lambda *x: print(*x, file=sys.stderr, flush=True)
    if a.quiet_load:
        deadline = time.time() + a.quiet_wait
        while float(loadavg()) >= a.quiet_load and time.time() < deadline:
            log(f"load average {loadavg()} >= {a.quiet_load}: waiting for a quiet machine ...")
            time.sleep(10)
    report = {"started": datetime.datetime.now().isoformat(timespec="seconds"), "host": platform.node(),
              "load_start": open("/proc/loadavg").read().strip(), "args": vars(a), "servers": {}, "startup": None}
    log(f"load average at start: {report['load_start']}")

    # Idle RSS before anything is loaded, then a fresh loaded table per server.
    for s in servers:
        s["rss_idle"] = proc_status(s["pid"], "VmRSS") if s["pid"] else None
        s["cmd"] = proc_cmd(s["pid"]) if s["pid"] else None
        s["results"], s["skipped"], s["probe_errors"] = {}, {}, {}
        if s["ceiling"]:
            continue
        log(f"{s['name']}: loading {a.keys + 20 * a.groups} items ...")
        method, n, secs = setup_table(s["name"], s["url"], a.table, a.keys, a.groups)
        s["load"] = {"method": method, "items": n, "secs": secs}
        s["rss_loaded"] = proc_status(s["pid"], "VmRSS") if s["pid"] else None
        log(f"{s['name']}: loaded {n} items with {method} in {secs:.1f} s")
        c = Client(s["url"])
        for op in ops:
            st, body = c.call(TARGET[op], probe_body(op, a.table))
            e = err_type(st, body)
            if e == "UnknownOperationException":
                s["skipped"][op] = e
            elif e:
                s["probe_errors"][op] = f"{e}: {body.get('message', body.get('Message', ''))}"[:200]
        c.close()

    for rnd in range(a.rounds):
        for label, op, c in plan:
            for s in servers:
                if op in s["skipped"] or (s["ceiling"] and op not in ("put", "get")):
                    continue
                log(f"round {rnd + 1}/{a.rounds}: {label} on {s['name']} ({c} connections) ...")
                r = last = measure(s, op, c, a)
                for retry in range(a.retries):
                    if last["other_cpu"] is None or last["other_cpu"] <= a.max_other:
                        break
                    log(f"   noisy ({last['other_cpu']:.0f}% other CPU, {last['rps']:,.0f} req/s): measuring again "
                        f"({retry + 1}/{a.retries}) after {a.retry_pause} s")
                    time.sleep(a.retry_pause)
                    r2 = last = measure(s, op, c, a)
                    r2["noisy_attempts"] = r.get("noisy_attempts", 0) + 1
                    r = r2 if r2["other_cpu"] is not None and r2["other_cpu"] < r["other_cpu"] else \
                        dict(r, noisy_attempts=r2["noisy_attempts"])
                s["results"].setdefault(label, []).append(r)
                log(f"   {r['rps']:,.0f} req/s  p50 {r['p50_ms']:.2f} ms  p99 {r['p99_ms']:.2f} ms  "
                    f"non-2xx {r['non2xx']}  server CPU {r['srv_cpu'] or 0:.0f}%  other {r['other_cpu'] or 0:.0f}%  "
                    f"load {r['load1']}")
    for s in servers:
        s["rss_after"] = proc_status(s["pid"], "VmRSS") if s["pid"] else None
        s["rss_peak"] = proc_status(s["pid"], "VmHWM") if s["pid"] else None
    report["load_end"] = open("/proc/loadavg").read().strip()

    if a.ferrodyn_bin:
        log(f"startup time of {a.ferrodyn_bin} ({a.startup_runs} runs each) ...")
        report["startup"] = startup(a.ferrodyn_bin, a.startup_runs)

    # ---- the median round of every measurement
    def med(s, op):
        rs = s["results"].get(op)
        if not rs:
            return None
        rs = sorted(rs, key=lambda r: r["rps"])
        m = dict(rs[len(rs) // 2])
        m["rps_all"] = [r["rps"] for r in s["results"][op]]
        return m

    P = print
    overrides = "".join(f", {op} -c{n}" for op, n in op_conns.items() if op in ops)
    P(f"wrk -t{a.threads} -c{a.conns}{overrides}, {a.secs} s per op after a {a.warmup} s warm-up, "
      f"{a.rounds} round(s){' (median shown)' if a.rounds > 1 else ''}; "
      f"load average {report['load_start'].split()[0]} at start, {report['load_end'].split()[0]} at end.\n")
    P("| op | server | requests/s | p50 ms | p99 ms | non-2xx | server CPU | other CPU |")
    P("|---|---|---:|---:|---:|---:|---:|---:|")
    for label, op, _ in plan:
        for s in servers:
            if s["ceiling"] and op not in ("put", "get"):
                continue
            if op in s["skipped"]:
                P(f"| {label} | {s['name']} | skipped: {s['skipped'][op]} | | | | | |")
                continue
            m = med(s, label)
            if not m:
                continue
            rps = f"{m['rps']:,.0f}"
            if a.rounds > 1:
                rps += f" ({min(m['rps_all']):,.0f}–{max(m['rps_all']):,.0f})"
            bad = f"**{m['non2xx']:,}** of {m['requests']:,}" if m["non2xx"] else "0"
            if m["sock_errors"]:
                bad += f" + {m['sock_errors']} socket errors"
            cpu = lambda v: "?" if v is None else f"{v:.0f}%"
            P(f"| {label} | {s['name']} | {rps} | {fmt_ms(m['p50_ms'])} | {fmt_ms(m['p99_ms'])} | {bad} | "
              f"{cpu(m['srv_cpu'])} | {cpu(m['other_cpu'])} |")
    P("\nserver CPU: the server process's CPU time during the measured seconds (100% = one core); "
      "other CPU: everything on the machine except the server and wrk (noise).")

    notes = []
    for s in servers:
        for op, e in s["probe_errors"].items():
            notes.append(f"{s['name']} answered the {op} probe with {e}")
        for label in labels:
            m = med(s, label)
            if m and m["non2xx"] and m["non2xx"] >= 0.5 * m["requests"]:
                notes.append(f"{s['name']} {label}: {m['non2xx']:,} of {m['requests']:,} answers were errors "
                             "(its requests/s is not a result)")
    if notes:
        P("\nNotes:\n" + "\n".join("- " + n for n in notes))

    peers = [p for p in a.peers.split(",") if any(s["name"] == p for s in servers)]
    ceiling = next((s for s in servers if s["ceiling"]), None)
    others = [s for s in servers if s["name"] not in peers and not s["ceiling"]]
    if others and (peers or ceiling):
        cols = [f"× {p}" for p in peers] + (["% of ceiling"] if ceiling else [])
        P("\n| op | server | " + " | ".join(cols) + " |")
        P("|---|---|" + "---:|" * len(cols))
        for label in labels:
            for s in others:
                m = med(s, label)
                if not m:
                    continue
                cells = []
                for p in peers:
                    peer = next(x for x in servers if x["name"] == p)
                    pm = med(peer, label)
                    cell = f"{m['rps'] / pm['rps']:.2f}×" if pm and pm["rps"] else "–"
                    if a.rounds > 1 and pm:
                        # Round by round: the two were measured back to back, a paired sample.
                        paired = zip(s["results"][label], peer["results"][label])
                        cell += " (" + ", ".join(f"{x['rps'] / y['rps']:.2f}" for x, y in paired if y["rps"]) + ")"
                    cells.append(cell)
                if ceiling:
                    cm = med(ceiling, label)
                    cells.append(f"{100 * m['rps'] / cm['rps']:.0f}%" if cm and cm["rps"] else "–")
                P(f"| {label} | {s['name']} | " + " | ".join(cells) + " |")
    connection_ratios(P, servers, plan, a.rounds)

    P("\n| server | RSS idle (before load) | RSS loaded | RSS after the run | peak RSS (VmHWM) | loaded with |")
    P("|---|---:|---:|---:|---:|---|")
    for s in servers:
        if s["ceiling"]:
            continue
        ld = s.get("load", {})
        P(f"| {s['name']} | {mb(s['rss_idle'])} | {mb(s.get('rss_loaded'))} | {mb(s['rss_after'])} | "
          f"{mb(s['rss_peak'])} | {ld.get('method', '?')}, {ld.get('items', 0):,} items in {ld.get('secs', 0):.1f} s |")
    if any(s["pid"] is None for s in servers):
        P("\n(? = no pid: pass --pid NAME=PID, or run where `ss -ltnp` can see the server's process)")

    if report["startup"]:
        P(f"\nStartup of `{a.ferrodyn_bin} serve --port 0` (exec to the first answered ListTables; "
          f"{a.startup_runs} runs):\n")
        P("| mode | median | min | max | address printed after (median) | RSS at first answer |")
        P("|---|---:|---:|---:|---:|---:|")
        for label, v in report["startup"].items():
            r = v["ready_ms"]
            P(f"| {label} | {statistics.median(r):.1f} ms | {min(r):.1f} ms | {max(r):.1f} ms | "
              f"{statistics.median(v['addr_ms']):.1f} ms | {mb(statistics.median(x for x in v['rss_kb'] if x) if any(v['rss_kb']) else None)} |")

    if a.json_out:
        for s in servers:
            report["servers"][s["name"]] = {k: v for k, v in s.items()}
        with open(a.json_out, "w") as f:
            json.dump(report, f, indent=1, default=str)


def connection_ratios(P, servers, plan, rounds):
    """With several connection counts: each op's requests/s at every count against its first, per
    server, round by round (rounds run back to back, so each round's ratio is one paired sample)."""
    firsts = {}
    for label, op, c in plan:
        firsts.setdefault(op, (label, c))
    pairs = [(label, op, c) for label, op, c in plan if firsts[op][0] != label]
    if not pairs:
        return
    P("\n| op | server | ratio to the first count, median (per round) |")
    P("|---|---|---:|")
    for label, op, c in pairs:
        base_label, base_c = firsts[op]
        for s in servers:
            mine, base = s["results"].get(label, []), s["results"].get(base_label, [])
            ratios = [m["rps"] / b["rps"] for m, b in zip(mine, base) if b["rps"]]
            if ratios:
                each = ", ".join(f"{r:.2f}" for r in ratios)
                P(f"| {op} -c{c} ÷ -c{base_c} | {s['name']} | {statistics.median(ratios):.2f}× ({each}) |")


if __name__ == "__main__":
    main()
