"""The Backups tab in a real browser: a backup created, listed, restored under a
new name and deleted; point-in-time recovery switched on, its window shown, a
restore to the latest instant and to a typed one; DynamoDB's refusals shown in
the dialog that caused them; bulk loads from a real S3-compatible server
(moto's, started here) into the table: counts, reports, a refused rate and a
cancel."""

import gzip
import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from conftest import Server, open_console, wait, js_errors, by_label, button, create_table, put_many

KEYS = dict(region_name="us-east-1", aws_access_key_id="test", aws_secret_access_key="test")


def seed(server, table="orders", count=30):
    create_table(server, table, sk=None)
    put_many(server, table, [{"pk": {"S": f"o{i:03}"}, "n": {"N": str(i)}} for i in range(count)])


def item_count(server, table):
    return server.call("Scan", {"TableName": table, "Select": "COUNT"})["Count"]


def backup_rows(browser):
    return browser.find_elements(By.CSS_SELECTOR, '[aria-label="Backups of this table"] tbody tr')


def wait_active(server, table):
    """Waits for the table the page asked for (the page's request may land
    after the first DescribeTable) to be ACTIVE."""
    for _ in range(200):
        status, answer = server.api("call/DescribeTable", {"TableName": table}, expect_error=True)
        if status == 200 and answer["Table"]["TableStatus"] == "ACTIVE":
            return
        time.sleep(0.05)
    raise AssertionError(f"{table} never became ACTIVE")


def restore_as(browser, name):
    target = wait(browser, lambda b: by_label(b, "New table name"))
    target.clear()
    target.send_keys(name)
    button(browser, "Restore").click()


def test_a_backup_is_created_listed_restored_and_deleted_in_the_backups_tab(server, browser):
    seed(server)
    open_console(browser, server, "#/table/orders/backups")
    wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, ".backups .empty"))
    field = browser.find_element(By.CSS_SELECTOR, "#backup-name")
    field.clear()
    field.send_keys("before-migration")
    button(browser, "Create backup").click()
    row = wait(browser, lambda b: [r for r in backup_rows(b) if "AVAILABLE" in r.text])[0]
    assert "before-migration" in row.text and "USER" in row.text
    server.call("DeleteItem", {"TableName": "orders", "Key": {"pk": {"S": "o000"}}})
    button(browser, "Restore…", root=row).click()
    restore_as(browser, "orders-copy")
    wait_active(server, "orders-copy")
    assert item_count(server, "orders-copy") == 30, "the backup's items, not today's 29"
    row = backup_rows(browser)[0]
    button(browser, "Delete…", root=row).click()
    browser.switch_to.alert.accept()
    wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, ".backups .empty"))
    assert server.call("ListBackups", {"TableName": "orders"})["BackupSummaries"] == []
    assert js_errors(browser) == []


def test_recovery_switched_on_shows_its_window_and_restores_the_latest_and_a_typed_instant(server, browser):
    seed(server, count=10)
    open_console(browser, server, "#/table/orders/backups")
    wait(browser, lambda b: button(b, "Turn on"))
    button(browser, "Turn on").click()
    earliest = wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, '[data-field="earliest"]'))[0]
    assert earliest.text != "—"
    put_many(server, "orders", [{"pk": {"S": f"late{i}"}} for i in range(5)])
    button(browser, "Restore to a point in time…").click()
    by_label(browser, "Latest restorable time").click()
    restore_as(browser, "orders-latest")
    wait_active(server, "orders-latest")
    assert item_count(server, "orders-latest") == 15
    # A typed instant: the earliest restorable one holds the ten first items.
    window = server.call("DescribeContinuousBackups", {"TableName": "orders"})
    first = window["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"]["EarliestRestorableDateTime"]
    button(browser, "Restore to a point in time…").click()
    at = wait(browser, lambda b: by_label(b, "Restore time (UTC)"))
    at.clear()
    at.send_keys(time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(first)) + f".{round(first * 1000) % 1000:03}Z")
    restore_as(browser, "orders-first")
    wait_active(server, "orders-first")
    assert item_count(server, "orders-first") == 10
    assert js_errors(browser) == []


def test_refusals_are_shown_in_the_dialog_that_caused_them(server, browser):
    seed(server, count=3)
    create_table(server, "taken", sk=None)
    server.call("UpdateContinuousBackups", {"TableName": "orders", "PointInTimeRecoverySpecification":
                                            {"PointInTimeRecoveryEnabled": True}})
    open_console(browser, server, "#/table/orders/backups")
    wait(browser, lambda b: button(b, "Restore to a point in time…")).click()
    restore_as(browser, "taken")
    error = wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, ".dialog .error"))[0]
    assert "TableAlreadyExistsException" in error.text and "Table already exists: taken" in error.text
    at = by_label(browser, "Restore time (UTC)")
    at.clear()
    at.send_keys("2001-01-01T00:00:00.000Z")
    restore_as(browser, "orders-2001")
    wait(browser, lambda b: "InvalidRestoreTimeException" in b.find_element(By.CSS_SELECTOR, ".dialog .error").text)
    assert js_errors(browser) == []


def test_an_export_without_a_store_shows_failed_with_its_reason(server, browser):
    seed(server, count=3)
    server.call("UpdateContinuousBackups", {"TableName": "orders", "PointInTimeRecoverySpecification":
                                            {"PointInTimeRecoveryEnabled": True}})
    open_console(browser, server, "#/table/orders/backups")
    bucket = wait(browser, lambda b: by_label(b, "S3 bucket"))
    bucket.send_keys("exports")
    button(browser, "Export now").click()
    failed = wait(browser, lambda b: [r for r in b.find_elements(By.CSS_SELECTOR, '[aria-label="Exports of this table"] tbody tr')
                                      if "FAILED" in r.text])[0]
    assert "no S3 endpoint" in failed.text and "--s3-endpoint" in failed.text
    button(browser, "Import a new table from S3…").click()
    by_label(browser, "Import bucket").send_keys("exports")
    button(browser, "Import").click()
    wait(browser, lambda b: not b.find_elements(By.CSS_SELECTOR, ".dialog"))
    listed = server.call("ListImports", {})["ImportSummaryList"]
    assert len(listed) == 1
    assert js_errors(browser) == []


# ---- bulk loads from S3 (moto's server) -------------------------------------------

def unavailable(reason):
    """A missing S3 server fails the test, never skips it: scripts/console-tests.sh
    installs boto3 and moto's server into the console's venv."""
    pytest.fail(f"{reason}: bulk loads cannot be tested")


def moto_server():
    """moto_server beside this Python (scripts/console-tests.sh installs it)."""
    candidate = Path(sys.executable).parent / "moto_server"
    if not candidate.exists():
        unavailable("no moto_server beside this Python (pip install 'moto[server]'; scripts/console-tests.sh does)")
    return candidate


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def moto():
    port = free_port()
    process = subprocess.Popen([str(moto_server()), "-p", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                break
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    process.terminate()
    process.wait(timeout=10)


@pytest.fixture
def loads(moto, request):
    """A server reading S3 from moto, a bucket of the test's own, boto3 clients."""
    try:
        import boto3
    except ImportError:
        unavailable("no boto3 in this Python (pip install boto3)")
    server = Server("--s3-endpoint", moto)
    s3 = boto3.client("s3", endpoint_url=moto, **KEYS)
    bucket = request.node.name.replace("_", "-")[5:55].strip("-")
    s3.create_bucket(Bucket=bucket)
    yield server, s3, boto3.client("dynamodb", endpoint_url=server.base, **KEYS), bucket
    server.stop()


def unit(pk, **attributes):
    return json.dumps({"Item": {"pk": {"S": pk}, **attributes}}) + "\n"


def bulk_rows(browser):
    return browser.find_elements(By.CSS_SELECTOR, '[aria-label="Bulk loads into this table"] tbody tr')


def fill_bulk_form(browser, bucket, prefix, units=""):
    for label, text in (("Bulk load bucket", bucket), ("Bulk load prefix", prefix), ("Max write units per second", units)):
        box = wait(browser, lambda b: by_label(b, label))
        box.clear()
        box.send_keys(text)


def count(row, name):
    """A count cell's number, whatever the browser's locale groups it with."""
    return int("".join(c for c in row.find_element(By.CSS_SELECTOR, f'[data-field="{name}"]').text if c.isdigit()))


def scanned(dynamodb, table):
    items, start = [], {}
    while True:
        page = dynamodb.scan(TableName=table, **start)
        items += page["Items"]
        if "LastEvaluatedKey" not in page:
            return items
        start = {"ExclusiveStartKey": page["LastEvaluatedKey"]}


def test_a_bulk_load_started_from_the_card_shows_its_counts_and_reports_and_its_items_land(loads, browser):
    server, s3, dynamodb, bucket = loads
    create_table(server, "orders", sk=None)
    server.call("PutItem", {"TableName": "orders", "Item": {"pk": {"S": "a00"}, "old": {"S": "overwritten"}}})
    first = [unit(f"a{i:02}", n={"N": str(i)}) for i in range(20)]
    # The line without the key abandons the rest of its object: b05 is never read.
    second = [unit(f"b{i:02}") for i in range(5)] + ['{"Item": {"other": {"S": "no key"}}}\n', unit("b05")]
    for name, lines in (("in/part-1.json.gz", first), ("in/part-2.json.gz", second)):
        s3.put_object(Bucket=bucket, Key=name, Body=gzip.compress("".join(lines).encode()))
    open_console(browser, server, "#/table/orders/backups")
    wait(browser, lambda b: "No bulk loads into orders yet" in b.find_element(By.CSS_SELECTOR, ".bulkloads").text)
    fill_bulk_form(browser, bucket, "in/")
    Select(by_label(browser, "Bulk load compression")).select_by_value("GZIP")
    button(browser, "Load into orders").click()
    row = wait(browser, lambda b: [r for r in bulk_rows(b) if "COMPLETED_WITH_ERRORS" in r.text], timeout=30)[0]
    assert (count(row, "processed"), count(row, "failed")) == (26, 1)
    assert "100%" in row.text and not row.find_elements(By.CSS_SELECTOR, "button")
    operation = server.call("ListBulkOperations", {})["BulkOperationsSummaryList"][0]["BulkOperationArn"]
    folder = f"bulk-reports/AWSDynamoDB/BulkOperation/{operation.rsplit('/', 1)[1]}/"
    assert f"s3://{bucket}/{folder}" in row.text and f"s3://{bucket}/in/" in row.text
    reported = s3.list_objects_v2(Bucket=bucket, Prefix=folder + "errors/")["Contents"]
    assert [o["Key"].endswith(".json") for o in reported] == [True], "the folder shown holds the error report"
    items = {i["pk"]["S"]: i for i in scanned(dynamodb, "orders")}
    assert sorted(items) == [f"a{i:02}" for i in range(20)] + [f"b{i:02}" for i in range(5)]
    assert "old" not in items["a00"] and items["a19"]["n"] == {"N": "19"}, "a put overwrites the stored item"
    assert js_errors(browser) == []


def test_a_paced_bulk_load_is_refused_under_1024_units_then_cancelled_from_the_card(loads, browser):
    server, s3, dynamodb, bucket = loads
    create_table(server, "orders", sk=None)
    s3.put_object(Bucket=bucket, Key="paced/all.json", Body="".join(unit(f"k{i:05}") for i in range(3000)).encode())
    open_console(browser, server, "#/table/orders/backups")
    fill_bulk_form(browser, bucket, "paced/", units="10")
    button(browser, "Load into orders").click()
    error = wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, ".bulkloads .error"))[0]
    assert "ValidationException" in error.text and "greater than or equal to 1024" in error.text
    assert server.call("ListBulkOperations", {})["BulkOperationsSummaryList"] == []
    # 3,000 one-unit puts at 1,024 units a second: about three seconds to cancel in.
    fill_bulk_form(browser, bucket, "paced/", units="1024")
    button(browser, "Load into orders").click()
    wait(browser, lambda b: not b.find_elements(By.CSS_SELECTOR, ".bulkloads .error"))

    def cancel(b):
        running = [r for r in bulk_rows(b) if "IN_PROGRESS" in r.text]
        if running:
            button(b, "Cancel…", root=running[0]).click()
        return bool(running)
    wait(browser, cancel)
    assert "Items it has already written stay" in browser.switch_to.alert.text
    browser.switch_to.alert.accept()
    row = wait(browser, lambda b: [r for r in bulk_rows(b) if "CANCELLED" in r.text], timeout=30)[0]
    written = len(scanned(dynamodb, "orders"))
    assert 0 < written < 3000, written
    assert (count(row, "processed"), count(row, "failed")) == (written, 0)
    assert not row.find_elements(By.CSS_SELECTOR, "button"), "no Cancel once cancelled"
    assert js_errors(browser) == []
