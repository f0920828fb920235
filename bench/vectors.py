#!/usr/bin/env python3
"""Vector search, timed (issue 25). One run, one machine:

1. loads COUNT items of DIMS-dimension vectors (default 100,000 x 768) into a
   durable release server, the vectors drawn around 1,000 random centres
   (embeddings of real text cluster; uniformly random vectors are the
   worst case of every graph index, --uniform measures that instead);
2. SearchVectors, TopK 10, from CLIENTS (16) concurrent clients for SECONDS:
   throughput, p50 and p99 latency, with the HNSW graphs;
3. the same server restarted on the same data with --vector-search exact
   (a brute-force scan per search): the same figures, the time to answer
   after the restart, and the recall@10 of step 2's answers against the
   exact ones;
4. PutItem of 768-dimension items from CLIENTS clients into a table with one
   vector index and into the same table without it;
5. memory per indexed vector, as GET /ferrodyn/vectors reports it once the
   graphs are built (usearch's count plus the keys and filters held), and the
   process RSS;
6. --dynoxide URL: the same searches against a Dynoxide server loaded with
   the same items (--dynoxide-count of them), answers compared.

Pure Python (no numpy): the clients share the machine's cores with the
server, so throughputs are lower bounds. usage:
  bench/vectors.py target/release/ferrodyn [--count N] [--dims D] [--clients C]
                   [--seconds S] [--uniform] [--dynoxide URL --dynoxide-count N]
"""
import argparse
import http.client
import json
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import tempfile
import threading
import time

AUTH = ("AWS4-HMAC-SHA256 Credential=bench/20261204/us-east-1/dynamodb/aws4_request, "
        "SignedHeaders=host;x-amz-date, Signature=" + "0" * 64)


class Conn:
    """One keep-alive connection sending raw DynamoDB JSON requests."""

    def __init__(self, port):
        self.port = port
        self.http = http.client.HTTPConnection("127.0.0.1", port, timeout=600)

    def send(self, op, data):
        """Sends a ready request body; the response is read, not parsed."""
        headers = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810." + op,
                   "Authorization": AUTH, "X-Amz-Date": "20261204T000000Z"}
        self.http.request("POST", "/", data, headers)
        response = self.http.getresponse()
        payload = response.read()
        if response.status != 200:
            raise RuntimeError(f"{op}: {response.status} {payload[:300]}")

    def call(self, op, body):
        data = json.dumps(body)
        headers = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810." + op,
                   "Authorization": AUTH, "X-Amz-Date": "20261204T000000Z"}
        for attempt in range(3):
            try:
                self.http.request("POST", "/", data, headers)
                response = self.http.getresponse()
                payload = json.loads(response.read() or b"{}")
                if response.status != 200:
                    raise RuntimeError(f"{op}: {response.status} {payload}")
                return payload
            except (ConnectionError, http.client.HTTPException):
                self.http.close()
                self.http = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        raise RuntimeError(f"{op}: no answer")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(binary, data_dir, extra=()):
    port = free_port()
    log = open(os.path.join(data_dir, f"server-{port}.log"), "w")
    process = subprocess.Popen([binary, "serve", "--port", str(port), "--data-dir", os.path.join(data_dir, "db"), *extra],
                               stdout=log, stderr=subprocess.STDOUT)
    started = time.perf_counter()
    while True:
        try:
            Conn(port).call("ListTables", {})
            return process, port, time.perf_counter() - started, log.name
        except (OSError, RuntimeError):
            if process.poll() is not None:
                raise SystemExit(f"server exited: see {log.name}")
            time.sleep(0.05)


def stop(process):
    process.terminate()
    process.wait(60)


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1)) / 1024


def number(x):
    return {"N": f"{x:.6g}"}


def make_vectors(count, dims, uniform, seed):
    """`count` vectors; the clustered ones around 1,000 centres drawn once
    per seed (queries come from the same call, as real queries come from the
    same embedding model as the documents)."""
    rng = random.Random(seed)
    if uniform:
        return [[rng.uniform(-1, 1) for _ in range(dims)] for _ in range(count)]
    centres = [[rng.gauss(0, 1) for _ in range(dims)] for _ in range(1000)]
    out = []
    for _ in range(count):
        c = centres[rng.randrange(len(centres))]
        out.append([x + rng.gauss(0, 0.35) for x in c])
    return out


def create(conn, table, dims, with_index=True):
    body = {"TableName": table, "BillingMode": "PAY_PER_REQUEST",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}
    if with_index:
        body["VectorIndexes"] = [{"IndexName": "vix", "VectorAttribute": {"AttributeName": "emb"},
                                  "Dimensions": dims, "DistanceFunction": "COSINE",
                                  "Projection": {"ProjectionType": "KEYS_ONLY"}}]
    conn.call("CreateTable", body)


def load(port, table, vectors, workers=4):
    def part(rows):
        conn = Conn(port)
        for i in range(0, len(rows), 25):
            chunk = rows[i:i + 25]
            requests = [{"PutRequest": {"Item": {"pk": {"S": f"v{n:07d}"}, "emb": {"L": [number(x) for x in v]}}}}
                        for n, v in chunk]
            while requests:
                out = conn.call("BatchWriteItem", {"RequestItems": {table: requests}})
                requests = out.get("UnprocessedItems", {}).get(table, [])
    rows = list(enumerate(vectors))
    threads = [threading.Thread(target=part, args=(rows[w::workers],)) for w in range(workers)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.perf_counter() - started


def search_body(table, q):
    """TopK 10, the keys only (a retrieval reads ids, not the vectors back)."""
    return {"TableName": table, "IndexName": "vix", "TopK": 10, "ProjectionExpression": "pk",
            "SearchVector": [number(x) for x in q]}


def hammer(port, make_request, op, clients, seconds):
    """Requests from `clients` threads for `seconds`: (per second, p50 ms, p99 ms)."""
    latencies = []
    lock = threading.Lock()
    deadline = time.perf_counter() + seconds

    def run(worker):
        conn = Conn(port)
        mine = []
        n = 0
        while time.perf_counter() < deadline:
            body = make_request(worker, n)
            t = time.perf_counter()
            conn.send(op, body)
            mine.append(time.perf_counter() - t)
            n += 1
        with lock:
            latencies.extend(mine)
    threads = [threading.Thread(target=run, args=(w,)) for w in range(clients)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.perf_counter() - started
    latencies.sort()
    return len(latencies) / took, statistics.median(latencies) * 1000, latencies[int(len(latencies) * 0.99)] * 1000


def answers(port, table, queries):
    conn = Conn(port)
    return [[r["Item"]["pk"]["S"] for r in conn.call("SearchVectors", search_body(table, q))["SearchResults"]]
            for q in queries]


def vector_report(port, table):
    """GET /ferrodyn/vectors: the index's search structure as it stands."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    c.request("GET", f"/ferrodyn/vectors?table={table}")
    return json.loads(c.getresponse().read())[0]


def wait_for_graphs(port, table, count, timeout=3600):
    """Seconds until every one of `count` vectors is in a graph; the report then."""
    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        report = vector_report(port, table)
        if report["settled"] and report["vectors"] >= count and report["pending"] == 0:
            return time.perf_counter() - started, report
        time.sleep(0.5)
    raise SystemExit("graphs not built in time")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("binary")
    p.add_argument("--count", type=int, default=100_000)
    p.add_argument("--dims", type=int, default=768)
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--seconds", type=float, default=20)
    p.add_argument("--uniform", action="store_true")
    p.add_argument("--dynoxide")
    p.add_argument("--dynoxide-count", type=int, default=20_000)
    a = p.parse_args()
    work = tempfile.mkdtemp(prefix="vector-bench-")
    print(f"# bench/vectors.py: {a.count} x {a.dims}-d ({'uniform' if a.uniform else 'clustered'}), "
          f"TopK 10, {a.clients} clients, {a.seconds:.0f} s per figure; {os.cpu_count()} cores")
    vectors = make_vectors(a.count + 200, a.dims, a.uniform, 1)
    vectors, queries = vectors[:a.count], vectors[a.count:]
    server, port, _, _ = start(a.binary, work)
    create(Conn(port), "vec", a.dims)
    took = load(port, "vec", vectors)
    print(f"load: {a.count} items in {took:.1f} s ({a.count / took:.0f} items/s)")
    built, report = wait_for_graphs(port, "vec", a.count)
    print(f"graphs complete {built:.1f} s after the load ended: {report['bytesPerVector']} bytes per vector in memory "
          f"(raw f32 {report['rawBytesPerVector']}, {report['bytesPerVector'] / report['rawBytesPerVector']:.2f}x), "
          f"search expansions {report['searchExpansions']}")
    print(f"server RSS after load: {rss_mb(server.pid):.0f} MB")
    bodies = [json.dumps(search_body("vec", q)) for q in queries]
    make = lambda w, n: bodies[(w * 7919 + n) % len(bodies)]
    ann = hammer(port, make, "SearchVectors", a.clients, a.seconds)
    print(f"SearchVectors (HNSW): {ann[0]:.0f}/s, p50 {ann[1]:.2f} ms, p99 {ann[2]:.2f} ms")
    approximate = answers(port, "vec", queries)
    stop(server)
    server, port, up, _ = start(a.binary, work, ["--vector-search", "exact"])
    print(f"restart: answering after {up:.1f} s (its {a.count} entries read back; a graph is rebuilt after that"
          f" as it was built after the load, in the background; --vector-search exact builds none)")
    exact = hammer(port, make, "SearchVectors", a.clients, a.seconds)
    print(f"SearchVectors (exact scan): {exact[0]:.0f}/s, p50 {exact[1]:.2f} ms, p99 {exact[2]:.2f} ms")
    print(f"HNSW vs brute force: {ann[0] / exact[0]:.1f}x the throughput")
    truth = answers(port, "vec", queries)
    recall = sum(len(set(x) & set(t)) for x, t in zip(approximate, truth)) / (10 * len(queries))
    print(f"recall@10 of the HNSW answers against the exact ones: {recall:.3f}")
    writes(a, port, vectors)
    if a.dynoxide:
        dynoxide(a, vectors, queries, port)
    stop(server)
    shutil.rmtree(work, ignore_errors=True)


def writes(a, port, vectors):
    conn = Conn(port)
    create(conn, "plain", a.dims, with_index=False)
    create(conn, "indexed", a.dims)
    figures = {}
    for table in ["plain", "indexed", "plain", "indexed"]:
        embs = [json.dumps({"L": [number(x) for x in v]}) for v in vectors[:500]]
        make = lambda w, n, table=table, embs=embs: (
            f'{{"TableName": "{table}", "Item": {{"pk": {{"S": "w{w}-{n}"}}, "emb": {embs[(w * 31 + n) % len(embs)]}}}}}')
        figures.setdefault(table, []).append(hammer(port, make, "PutItem", a.clients, a.seconds / 2))
    for table, runs in figures.items():
        best = max(runs)
        print(f"PutItem, 768-d items, table {table}: {best[0]:.0f}/s, p50 {best[1]:.2f} ms, p99 {best[2]:.2f} ms")
    ratio = max(figures["indexed"])[0] / max(figures["plain"])[0]
    print(f"writes with one vector index: {ratio:.2f}x the throughput without")


def dynoxide(a, vectors, queries, ours):
    """The first --dynoxide-count items in Dynoxide and in our (exact) server:
    speed side by side, and how far Dynoxide's answers agree with ours."""
    port = int(a.dynoxide.rsplit(":", 1)[1])
    subset = vectors[:a.dynoxide_count]
    table = f"vec{int(time.time())}"
    create(Conn(port), table, a.dims)
    create(Conn(ours), table, a.dims)
    took = load(port, table, subset, workers=4)
    print(f"Dynoxide: loaded {len(subset)} items in {took:.1f} s")
    print(f"Ferrodyn: loaded {len(subset)} items in {load(ours, table, subset):.1f} s")
    bodies = [json.dumps(search_body(table, q)) for q in queries]
    make = lambda w, n: bodies[(w * 7919 + n) % len(bodies)]
    for name, target in [("Dynoxide", port), ("Ferrodyn (exact)", ours)]:
        figures = hammer(target, make, "SearchVectors", a.clients, a.seconds)
        print(f"{name} SearchVectors on {len(subset)} items: {figures[0]:.0f}/s, p50 {figures[1]:.2f} ms, p99 {figures[2]:.2f} ms")
    # Dynoxide takes seconds a search: 20 queries.
    theirs, mine = answers(port, table, queries[:20]), answers(ours, table, queries[:20])
    same = sum(len(set(x) & set(y)) for x, y in zip(theirs, mine)) / (10 * len(theirs))
    print(f"Dynoxide's top 10 against Ferrodyn's exact top 10 (20 queries): {same:.3f} agreement")


if __name__ == "__main__":
    main()
