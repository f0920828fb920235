#!/usr/bin/env python3
"""Memory per indexed vector, measured in the server (issue 25: within 1.5
times the raw float32 size).

Two durable servers hold the same COUNT items of DIMS-dimension vectors, one
table with a vector index (KEYS_ONLY) and one without. Each is stopped after
its load and started again on its data, so neither holds the load's buffers;
once the restarted server's graphs are built (and the other has read its
table once, so both storage block caches are full), the difference of the
two processes' resident sizes divided by COUNT is what the index costs per
vector in memory (graph, vectors, keys). The structure's own count
(GET /ferrodyn/vectors) and an empty server's RSS are printed beside it.

usage: bench/vector_memory.py target/release/ferrodyn [--count N] [--dims D]
"""
import argparse
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import vectors as vb  # noqa: E402  (bench/vectors.py: the client, the loader)


def settled_rss(process, wait=3.0):
    """RSS (MB) once the process has been idle `wait` seconds, less the pages
    the allocator has given back lazily (MADV_FREE: counted in RSS until the
    kernel needs them; LazyFree in smaps_rollup), and that lazily freed part."""
    time.sleep(wait)
    with open(f"/proc/{process.pid}/smaps_rollup") as f:
        fields = dict((line.split(":")[0], int(line.split()[1])) for line in f if line.split()[-1:] == ["kB"])
    lazy = fields.get("LazyFree", 0) / 1024
    return fields["Rss"] / 1024 - lazy, lazy


def scan_all(port):
    """Reads the whole table once: the storage's block cache fills as the
    index's start-up read of its entries fills it on the other server."""
    conn, start = vb.Conn(port), None
    while True:
        body = {"TableName": "vec", "ProjectionExpression": "pk"}
        if start:
            body["ExclusiveStartKey"] = start
        start = conn.call("Scan", body).get("LastEvaluatedKey")
        if not start:
            return


def loaded(binary, count, dims, vectors, with_index):
    """A data directory holding `vectors` in table "vec"; server stopped."""
    work = tempfile.mkdtemp(prefix="vector-memory-")
    server, port, _, _ = vb.start(binary, work)
    vb.create(vb.Conn(port), "vec", dims, with_index=with_index)
    took = vb.load(port, "vec", vectors)
    print(f"  loaded {count} items {'with' if with_index else 'without'} the index in {took:.0f} s")
    if with_index:
        vb.wait_for_graphs(port, "vec", count)
    vb.stop(server)
    return work


def main():
    p = argparse.ArgumentParser()
    p.add_argument("binary")
    p.add_argument("--count", type=int, default=100_000)
    p.add_argument("--dims", type=int, default=768)
    a = p.parse_args()
    print(f"# bench/vector_memory.py: {a.count} x {a.dims}-d, durable storage; {os.cpu_count()} cores")
    vectors = vb.make_vectors(a.count, a.dims, False, 1)
    with_dir = loaded(a.binary, a.count, a.dims, vectors, True)
    without_dir = loaded(a.binary, a.count, a.dims, vectors, False)
    del vectors
    empty_dir = tempfile.mkdtemp(prefix="vector-memory-")
    server, _, _, _ = vb.start(a.binary, empty_dir)
    empty, _ = settled_rss(server)
    vb.stop(server)
    server, port, _, _ = vb.start(a.binary, without_dir)
    scan_all(port)
    without, _ = settled_rss(server)
    vb.stop(server)
    server, port, up, _ = vb.start(a.binary, with_dir)
    built, report = vb.wait_for_graphs(port, "vec", a.count)
    with_index, lazy = settled_rss(server)
    vb.stop(server)
    raw = a.dims * 4
    per_vector = (with_index - without) * 1024 * 1024 / a.count
    print(f"RSS: empty server {empty:.0f} MB; the items without an index {without:.0f} MB; "
          f"with the index {with_index:.0f} MB (answering {up:.1f} s after start, graphs built {built:.0f} s later); "
          f"not counted: {lazy:.0f} MB given back to the kernel lazily (LazyFree)")
    print(f"memory per indexed vector, measured: {per_vector:.0f} bytes = {per_vector / raw:.2f}x the raw "
          f"float32 vector ({raw} bytes)")
    print(f"the structure's own count (GET /ferrodyn/vectors): {report['bytesPerVector']} bytes per vector "
          f"= {report['bytesPerVector'] / raw:.2f}x")
    for d in (with_dir, without_dir, empty_dir):
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
