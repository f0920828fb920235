"""Console speed (BENCHMARKS.md, "Web console"): first load in headless
Chromium, asset bytes, page reads on a small and a large table, a bulk
delete's rate against `ferrodyn import`'s on the same server, and in the
browser: a 1,000-row page drawn after the server answered, and 200 deletes
staged from a selection.

    cargo build --release -p ferrodyn
    target/console-venv/bin/python bench/console.py [--large 1000000] [--bulk 100000]
    target/console-venv/bin/python bench/console.py --only grid
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("FERRODYN_BIN", str(ROOT / "target" / "release" / "ferrodyn"))
sys.path.insert(0, str(ROOT / "tests" / "console"))
from conftest import BINARY, Server, make_driver, wait  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return value, (time.perf_counter() - start) * 1000


def first_load(server, runs=5):
    driver = make_driver()
    try:
        results = []
        for _ in range(runs):
            driver.get("about:blank")
            driver.get(server.console_url + "#/")
            wait(driver, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true")
            ready = float(driver.find_element(By.TAG_NAME, "body").get_attribute("data-ready-ms"))
            nav = driver.execute_script("const n = performance.getEntriesByType('navigation')[0]; return n.loadEventEnd;")
            results.append((ready, nav))
        return results
    finally:
        driver.quit()


def import_file(server, table, n):
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        for i in range(n):
            f.write(json.dumps({"pk": f"user#{i}", "sk": "profile", "n": i, "name": "Ada Lovelace"}) + "\n")
        path = f.name
    _, ms = timed(lambda: subprocess.run([BINARY, "import", table, path, "--endpoint-url", server.base, "-o", "json"],
                                         check=True, capture_output=True))
    os.unlink(path)
    return ms


def page_reads(server, table, pages=5, limit=50):
    """Milliseconds of the first page and of each following page (console API)."""
    times, start = [], None
    for _ in range(pages):
        form = {"operation": "Scan", "table": table, "limit": limit, "startKey": start}
        page, ms = timed(lambda: server.api("read", form)[1])
        times.append(ms)
        start = page["LastEvaluatedKey"]
    return times


def table(server, name):
    server.call("CreateTable", {
        "TableName": name, "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]})


def bulk_delete(server, name):
    job = server.api("bulk", {"table": name, "action": "delete", "read": {"operation": "Scan", "table": name}})[1]["job"]
    start = time.perf_counter()
    while True:
        progress = server.api(f"bulk/{job}")[1]
        if progress["state"] != "running":
            return progress, (time.perf_counter() - start) * 1000
        time.sleep(0.05)


def wide_items(n):
    """Items of ten attributes of every kind a grid shows."""
    return [{"pk": {"S": f"user#{i:05}"}, "sk": {"S": "profile"}, "name": {"S": f"Ada Lovelace {i}"},
             "email": {"S": f"ada{i}@example.com"}, "n": {"N": str(i)}, "balance": {"N": "12345678901234567890.5"},
             "active": {"BOOL": i % 2 == 0}, "roles": {"SS": ["admin", "dev", "ops"]},
             "address": {"M": {"city": {"S": "London"}, "zip": {"S": "N1"}}}, "tags": {"L": [{"S": "a"}, {"N": "1"}]}}
            for i in range(n)]


def grid(server, runs=5):
    """A 1,000-row page of ten attributes: milliseconds from the server's
    answer to the grid painted (the page's data-draw-ms), per run; then
    200 rows (a filtered page) selected and staged as deletes, click to
    badge."""
    from selenium.webdriver.support.ui import Select
    sys.path.insert(0, str(ROOT / "tests" / "console"))
    from conftest import by_label, put_many  # noqa: E402
    table(server, "wide")
    put_many(server, "wide", wide_items(1000))
    driver = make_driver()
    rows = lambda d: d.find_elements(By.CSS_SELECTOR, "table.grid tbody tr")
    try:
        driver.get(server.console_url + "#/table/wide")
        wait(driver, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true")
        Select(by_label(driver, "Page size")).select_by_value("1000")
        draws = []
        drawn = lambda d: d.find_element(By.CSS_SELECTOR, ".explorer").get_attribute("data-draw-ms")
        for _ in range(runs):
            # Long pages draw the rows in view only: wait for the summary.
            wait(driver, lambda d: "1000 items" in d.find_element(By.CSS_SELECTOR, ".summary").text and drawn(d), timeout=30)
            draws.append(int(drawn(driver)))
            driver.execute_script("document.querySelector('.explorer').dataset.drawMs = ''")
            driver.execute_script("document.querySelector('form.queryform').requestSubmit()")
        print("1,000-row page, server answer -> grid drawn (ms):", draws)
        Select(by_label(driver, "Page size")).select_by_value("250")
        by_label(driver, "Filter").send_keys("n < 200\n")
        wait(driver, lambda d: "200 items" in d.find_element(By.CSS_SELECTOR, ".summary").text, timeout=30)
        by_label(driver, "Select all rows").click()
        # Timed inside the page (WebDriver's polling would add up to 500 ms):
        # the click, to the badge saying 200 and the grid redrawn.
        ms = driver.execute_async_script("""
            const done = arguments[arguments.length - 1];
            const badge = document.getElementById('stage-count');
            const button = [...document.querySelectorAll('.toolbar button')].find((b) => b.textContent === 'Stage delete');
            const start = performance.now();
            new MutationObserver((_, observer) => {
              if (badge.textContent !== '200') return;
              observer.disconnect();
              requestAnimationFrame(() => setTimeout(() => done(performance.now() - start)));
            }).observe(badge, { childList: true, characterData: true, subtree: true });
            button.click();""")
        print(f"200 deletes staged from a selection, click -> badge and grid painted: {ms:.0f} ms")
    finally:
        driver.quit()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--large", type=int, default=1_000_000)
    parser.add_argument("--bulk", type=int, default=100_000)
    parser.add_argument("--only", choices=["all", "grid"], default="all")
    args = parser.parse_args()
    server = Server()
    try:
        grid(server)
        if args.only == "grid":
            return
        with urllib.request.urlopen(f"{server.base}/console/api/info") as r:
            print("assets bytes:", json.loads(r.read())["assetsBytes"])
        loads = first_load(server)
        print("first load (ready ms, loadEventEnd ms):", [(round(a), round(b)) for a, b in loads])
        table(server, "small")
        import_file(server, "small", 100)
        print("small (100 items) page ms:", [round(t, 1) for t in page_reads(server, "small", pages=2)])
        table(server, "large")
        ms = import_file(server, "large", args.large)
        print(f"large: imported {args.large} in {ms / 1000:.1f} s ({args.large / ms * 1000:,.0f} items/s)")
        print(f"large ({args.large} items) page ms:", [round(t, 1) for t in page_reads(server, "large")])
        server.call("DeleteTable", {"TableName": "large"})
        table(server, "bulk")
        ms = import_file(server, "bulk", args.bulk)
        import_rate = args.bulk / ms * 1000
        print(f"import {args.bulk}: {ms / 1000:.2f} s, {import_rate:,.0f} items/s")
        progress, ms = bulk_delete(server, "bulk")
        rate = progress["done"] / ms * 1000
        print(f"bulk delete {progress['done']} ({progress['state']}, {progress['failed']} failed): "
              f"{ms / 1000:.2f} s, {rate:,.0f} items/s = {rate / import_rate:.2f} x import")
        left = server.call("Scan", {"TableName": "bulk", "Select": "COUNT"})["Count"]
        print("left after bulk delete:", left)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
