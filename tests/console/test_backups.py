"""The Backups tab in a real browser: a backup created, listed, restored under a
new name and deleted; point-in-time recovery switched on, its window shown, a
restore to the latest instant and to a typed one; DynamoDB's refusals shown in
the dialog that caused them."""

import time

from selenium.webdriver.common.by import By

from conftest import open_console, wait, js_errors, by_label, button, create_table, put_many


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
