#!/usr/bin/env python3
"""Start-up time of `ferrodyn serve`: from spawning the process to the first
answered request (a GET / health check over a fresh connection), the way a
test fixture meets it. Prints the median and spread of N runs.

usage: bench/startup.py [BINARY] [N] [-- extra serve flags]
"""
import socket
import statistics
import subprocess
import sys
import time

binary = sys.argv[1] if len(sys.argv) > 1 else "target/dist/ferrodyn"
runs = int(sys.argv[2]) if len(sys.argv) > 2 else 30
extra = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else ["--in-memory"]


def once() -> float:
    started = time.perf_counter()
    process = subprocess.Popen(
        [binary, "serve", "--port", "0", "--exit-on-stdin-eof", "--console", "off", *extra],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    line = process.stdout.readline().decode()
    host, port = line.split("http://")[1].split()[0].rsplit(":", 1)
    with socket.create_connection((host, int(port))) as connection:
        connection.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        answer = connection.recv(64)
    elapsed = time.perf_counter() - started
    assert answer.startswith(b"HTTP/1.1 200"), answer
    process.stdin.close()
    process.wait()
    return elapsed * 1000


times = sorted(once() for _ in range(runs))
print(f"{binary} {' '.join(extra)}: first answer after {statistics.median(times):.1f} ms median "
      f"(min {times[0]:.1f}, p90 {times[int(runs * 0.9) - 1]:.1f}) over {runs} runs")
