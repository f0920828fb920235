"""Browser tests of the web console: each test starts its own `ferrodyn serve`
(in memory, port 0, tied to the test's life through stdin) and drives the
real console in headless Chromium through Selenium (Debian's chromium and
chromium-driver; see scripts/console-tests.sh)."""

import json
import os
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.common.exceptions import ElementNotInteractableException, StaleElementReferenceException
from selenium.webdriver.support.ui import WebDriverWait

ROOT = Path(__file__).resolve().parents[2]
BINARY = os.environ.get("FERRODYN_BIN", str(ROOT / "target" / "debug" / "ferrodyn"))
ARTIFACTS = ROOT / "target" / "console-tests"


class Server:
    """A `ferrodyn serve` process and its console URL."""

    def __init__(self, *args, port=0):
        self.proc = subprocess.Popen(
            [BINARY, "serve", "--in-memory", "--port", str(port), "--exit-on-stdin-eof", *args],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        first = self.proc.stdout.readline().strip()
        assert first.startswith("ferrodyn listening on http://"), first
        self.base = first.split()[3]
        second = self.proc.stdout.readline().strip()
        assert second.startswith("console: "), second
        self.console_url = second.split(" ", 1)[1]

    def api(self, path, body=None, headers=None, expect_error=False):
        """Calls the console API like a same-origin script (no Origin header)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"{self.base}/console/api/{path}", data=data, headers={
            "content-type": "application/json", **(headers or {})})
        try:
            with urllib.request.urlopen(request) as response:
                return response.status, json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as e:
            if not expect_error:
                raise AssertionError(f"{path}: HTTP {e.code} {e.read().decode()}")
            return e.code, json.loads(e.read() or b"{}")

    def call(self, operation, request):
        return self.api(f"call/{operation}", request)[1]

    def usage(self):
        with urllib.request.urlopen(f"{self.base}/ferrodyn/usage") as response:
            return json.loads(response.read())

    def stop(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()


@pytest.fixture
def server(request):
    marker = request.node.get_closest_marker("serve_args")
    s = Server(*(marker.args if marker else ()))
    yield s
    s.stop()


def make_driver():
    options = webdriver.ChromeOptions()
    for flag in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--window-size=1440,900"]:
        options.add_argument(flag)
    options.binary_location = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(os.environ.get("CHROMEDRIVER", "/usr/bin/chromedriver"))
    return webdriver.Chrome(service=service, options=options)


@pytest.fixture
def browser(request):
    driver = make_driver()
    yield driver
    failed = getattr(request.node, "rep_call", None) and request.node.rep_call.failed
    # CONSOLE_SCREENSHOTS=1 keeps every test's last screen, to look at.
    if failed or os.environ.get("CONSOLE_SCREENSHOTS"):
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(ARTIFACTS / f"{request.node.name}.png"))
        (ARTIFACTS / f"{request.node.name}.log").write_text(
            "\n".join(str(e) for e in driver.get_log("browser")))
    driver.quit()


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    setattr(item, "rep_" + report.when, report)


def pytest_configure(config):
    config.addinivalue_line("markers", "serve_args(*args): extra flags for ferrodyn serve")


# ---- helpers used by the tests ---------------------------------------------------

def wait(driver, condition, timeout=10):
    """Waits for `condition`; an element re-rendered mid-check, or a lookup
    helper (`button`, `by_label`) that finds nothing yet, counts as not yet
    (a CI run failed when the first poll came before the tab had drawn)."""
    return WebDriverWait(driver, timeout, ignored_exceptions=[StaleElementReferenceException, ElementNotInteractableException, ValueError, AssertionError]).until(
        lambda d: condition(d))


def open_console(driver, server, fragment=""):
    driver.get(server.console_url + fragment)
    wait(driver, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true")


def js_errors(driver):
    """JavaScript errors (uncaught exceptions, console.error); HTTP error
    statuses the page expects and handles are logged as `network`, not here."""
    return [e for e in driver.get_log("browser") if e["level"] == "SEVERE" and e.get("source") != "network"]


def by_label(driver, label):
    return driver.find_element(By.CSS_SELECTOR, f'[aria-label="{label}"]')


def button(driver, text, root=None):
    root = root or driver
    for b in root.find_elements(By.CSS_SELECTOR, "button"):
        if b.is_displayed() and b.text.strip() == text:
            return b
    raise AssertionError(f"no visible button {text!r}")


def grid_rows(driver):
    return driver.find_elements(By.CSS_SELECTOR, "table.grid tbody tr")


def create_table(server, name, pk="pk", sk="sk"):
    request = {
        "TableName": name,
        "AttributeDefinitions": [{"AttributeName": pk, "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": pk, "KeyType": "HASH"}],
        "BillingMode": "PAY_PER_REQUEST",
    }
    if sk:
        request["AttributeDefinitions"].append({"AttributeName": sk, "AttributeType": "S"})
        request["KeySchema"].append({"AttributeName": sk, "KeyType": "RANGE"})
    server.call("CreateTable", request)


def put_many(server, table, items):
    for start in range(0, len(items), 25):
        chunk = items[start:start + 25]
        server.call("BatchWriteItem", {"RequestItems": {table: [{"PutRequest": {"Item": i}} for i in chunk]}})
