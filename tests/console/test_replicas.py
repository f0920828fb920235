"""The Replicas tab (global tables): a plain table says it is not global;
the Add replica dialog shows its UpdateTable request and makes a replica in
another region of the server, which becomes ACTIVE; writes made afterwards
show replication latency; Remove, confirmed, makes the table plain again.
The toast of an addition or removal says how it ended (ACTIVE, removed)
once the table shows it, not that it is still under way.
Screenshots of the tab go to docs/screenshots/ (SCREENSHOTS=1)."""

import os
import socket
import time

from selenium.webdriver.common.by import By

from conftest import ROOT, Server, button, by_label, create_table, js_errors, open_console, put_many, wait

SHOTS = ROOT / "docs" / "screenshots"


def shoot(browser, name):
    if os.environ.get("SCREENSHOTS"):
        SHOTS.mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(SHOTS / name))


def replica_row(browser, region):
    return browser.find_element(By.CSS_SELECTOR, f'table.replicas tr[data-region="{region}"]')


def toasts(browser):
    return [t.text for t in browser.find_elements(By.CSS_SELECTOR, "#toasts .toast:not(.gone)")]


def items(start, count):
    return [{"pk": {"S": f"user#{i:03}"}, "name": {"S": f"user {i}"}} for i in range(start, start + count)]


def test_a_replica_is_added_measured_and_removed(server, browser):
    browser.set_window_size(1440, 860)
    create_table(server, "app", sk=None)
    put_many(server, "app", items(0, 40))
    open_console(browser, server, "#/table/app/replicas")
    hint = wait(browser, lambda b: b.find_element(By.CSS_SELECTOR, ".replicas-none"))
    assert "is not a global table" in hint.text
    shoot(browser, "console-replicas-none.png")

    button(browser, "Add replica…").click()
    dialog = wait(browser, lambda b: b.find_element(By.CSS_SELECTOR, ".dialog"))
    by_label(browser, "Region").send_keys("us-west-2")
    request = wait(browser, lambda b: by_label(b, "UpdateTable request") if "us-west-2" in by_label(b, "UpdateTable request").text else None)
    assert '"Create"' in request.text and '"ReplicaUpdates"' in request.text
    aws = wait(browser, lambda b: by_label(b, "aws command"))
    assert "update-table" in aws.text and "us-west-2" in aws.text
    time.sleep(0.4)
    shoot(browser, "console-replicas-add.png")
    button(dialog, "Create replica").click()

    wait(browser, lambda b: replica_row(b, "us-west-2").find_element(By.CSS_SELECTOR, ".pill").text == "ACTIVE", timeout=30)
    # The toast follows the replica: once the row says ACTIVE, no toast
    # still says it is being created (it used to stay up for four seconds).
    shoot(browser, "console-replicas-created.png")
    notes = toasts(browser)
    assert not any("being created" in n for n in notes), notes
    assert "Replica in us-west-2 is ACTIVE" in notes, notes
    text = browser.find_element(By.CSS_SELECTOR, ".replicasview").text
    assert "2019.11.21" in text and "EVENTUAL" in text
    # The replica holds the items written before it existed.
    copied = server.api("call/Scan", {"TableName": "app", "Select": "COUNT"}, headers={})[1]["Count"]
    assert copied == 40

    put_many(server, "app", items(40, 10))
    time.sleep(0.5)

    def measured(b):
        button(b, "Refresh").click()
        latency = replica_row(b, "us-west-2").find_element(By.CSS_SELECTOR, "td.latency").text
        return latency if latency.count("ms") == 3 else None

    latency = wait(browser, measured, timeout=20)
    row = replica_row(browser, "us-west-2").text
    assert "done" in row, row
    sent = int(replica_row(browser, "us-west-2").find_elements(By.CSS_SELECTOR, "td.num")[2].text.replace(",", ""))
    assert sent >= 10, row
    assert latency
    shoot(browser, "console-replicas.png")

    button(replica_row(browser, "us-west-2"), "Remove…").click()
    dialog = wait(browser, lambda b: b.find_element(By.CSS_SELECTOR, ".dialog"))
    wait(browser, lambda b: '"Delete"' in by_label(b, "UpdateTable request").text)
    time.sleep(0.4)  # the dialog fades in
    shoot(browser, "console-replicas-remove.png")
    assert "every item it holds there" in dialog.text
    button(dialog, "Remove replica").click()
    wait(browser, lambda b: b.find_element(By.CSS_SELECTOR, ".replicas-none"), timeout=20)
    notes = toasts(browser)
    assert "Replica in us-west-2 removed" in notes and not any("being removed" in n for n in notes), notes
    assert js_errors(browser) == []


def test_a_strong_table_shows_its_consistency_and_witness(server, browser):
    create_table(server, "ledger", sk=None)
    server.call("UpdateTable", {
        "TableName": "ledger", "MultiRegionConsistency": "STRONG",
        "ReplicaUpdates": [{"Create": {"RegionName": "us-west-2"}}],
        "GlobalTableWitnessUpdates": [{"Create": {"RegionName": "eu-west-1"}}]})
    open_console(browser, server, "#/table/ledger/replicas")
    summary = wait(browser, lambda b: b.find_element(By.CSS_SELECTOR, ".replicas-summary"))
    assert "STRONG" in summary.text and "eu-west-1" in summary.text
    row = replica_row(browser, "us-west-2")
    assert "ACTIVE" in row.text
    # An MRSC group changes as a whole: no Remove per replica.
    assert not row.find_elements(By.CSS_SELECTOR, "button")
    assert "Add replica…" not in browser.find_element(By.CSS_SELECTOR, ".replicas-head").text
    shoot(browser, "console-replicas-strong.png")
    assert js_errors(browser) == []


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_replica_on_a_stopped_peer_shows_its_pending_age_and_error(browser):
    ports = {"us-east-1": free_port(), "us-west-2": free_port()}

    def serve(region, other):
        return Server("--region", region, "--peer", f"{other}=http://127.0.0.1:{ports[other]}",
                      "--credentials", "AKIDPEERS:s3cr3t", port=ports[region])

    east, west = serve("us-east-1", "us-west-2"), serve("us-west-2", "us-east-1")
    try:
        token = {"X-Console-Token": east.console_url.split("token=")[1]}
        east.api("call/CreateTable", {
            "TableName": "orders", "BillingMode": "PAY_PER_REQUEST",
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]}, headers=token)
        east.api("call/UpdateTable", {"TableName": "orders", "ReplicaUpdates": [{"Create": {"RegionName": "us-west-2"}}]}, headers=token)
        open_console(browser, east, "#/table/orders/replicas")
        wait(browser, lambda b: replica_row(b, "us-west-2").find_element(By.CSS_SELECTOR, ".pill").text == "ACTIVE", timeout=30)
        west.stop()
        east.api("call/PutItem", {"TableName": "orders", "Item": {"pk": {"S": "written-while-away"}}}, headers=token)

        def failing(b):
            button(b, "Refresh").click()
            error = replica_row(b, "us-west-2").find_element(By.CSS_SELECTOR, "td.lasterror").text
            return error if "could not be reached" in error else None

        wait(browser, failing, timeout=20)
        # A setting changed meanwhile waits for the region, shown on its row.
        east.api("call/UpdateTimeToLive", {"TableName": "orders", "TimeToLiveSpecification": {
            "Enabled": True, "AttributeName": "expires"}}, headers=token)
        time.sleep(1.2)
        button(browser, "Refresh").click()
        wait(browser, lambda b: replica_row(b, "us-west-2").find_element(By.CSS_SELECTOR, "td.pending").text not in ("0 ms", "—"))
        waiting = replica_row(browser, "us-west-2").find_element(By.CSS_SELECTOR, "td.lasterror .pill.waiting").text
        assert waiting == "1 setting change waiting", waiting
        why = replica_row(browser, "us-west-2").find_element(By.CSS_SELECTOR, ".pill.waiting").get_attribute("title")
        assert "could not be reached" in why, why
        assert browser.find_element(By.CSS_SELECTOR, "dd.tombstones").text.startswith("0")
        shoot(browser, "console-replicas-peer-down.png")
        assert js_errors(browser) == []
    finally:
        west.stop()
        east.stop()
