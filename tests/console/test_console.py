"""The web console in a real browser: what a person does, checked through the
page and, behind its back, through the API (the server the test started)."""

import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.common.action_chains import ActionChains

from conftest import (BINARY, ROOT, Server, open_console, wait, js_errors, by_label, button, grid_rows,
                      create_table, put_many)

BIG = "12345678901234567890123456789012345678"


def visible(driver, css):
    return [e for e in driver.find_elements(By.CSS_SELECTOR, css) if e.is_displayed()]


def dialog(driver):
    return wait(driver, lambda d: visible(d, ".dialog") and visible(d, ".dialog")[-1])


def stage_count(driver):
    # One script, so the badge cannot change between two reads.
    return driver.execute_script(
        "const b = document.getElementById('stage-count'); return b.hidden ? 0 : Number(b.textContent)")


def scan_count(server, table):
    return server.call("Scan", {"TableName": table, "Select": "COUNT"})["Count"]


def test_page_loads_without_javascript_errors(server, browser):
    open_console(browser, server)
    assert js_errors(browser) == []
    conn = browser.find_element(By.ID, "conn").text
    assert server.base.replace("http://", "") in conn
    assert "us-east-1" in conn


def test_create_table_with_a_gsi_through_the_form(server, browser):
    open_console(browser, server)
    button(browser, "+ Create").click()
    d = dialog(browser)
    d.find_element(By.NAME, "table-name").send_keys("app")
    d.find_element(By.NAME, "pk-name").send_keys("pk")
    d.find_element(By.NAME, "sk-name").send_keys("sk")
    button(browser, "+ Global secondary index", d).click()
    by_label(browser, "GSI name").send_keys("gsi1")
    d.find_element(By.NAME, "GSI-pk-name").send_keys("status")
    d.find_element(By.NAME, "ttl").send_keys("expiresAt")
    d.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait(browser, lambda b: "table/app/details" in b.current_url)
    wait(browser, lambda b: "gsi1" in b.find_element(By.CSS_SELECTOR, '[aria-label="GSI indexes"]').text)
    table = server.call("DescribeTable", {"TableName": "app"})["Table"]
    assert [i["IndexName"] for i in table["GlobalSecondaryIndexes"]] == ["gsi1"]
    assert table["GlobalSecondaryIndexes"][0]["KeySchema"] == [{"AttributeName": "status", "KeyType": "HASH"}]
    ttl = server.call("DescribeTimeToLive", {"TableName": "app"})["TimeToLiveDescription"]
    assert ttl == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expiresAt"}
    assert "app" in browser.find_element(By.ID, "table-list").text
    assert js_errors(browser) == []


def test_create_table_refuses_two_types_for_one_key_and_an_unnamed_index(server, browser):
    """Issue 26, bug 2: pk String on the table and Number on a GSI created the
    table with pk as Number; a GSI left without a name was dropped silently."""
    from selenium.webdriver.support.ui import Select
    open_console(browser, server)
    button(browser, "+ Create").click()
    d = dialog(browser)
    d.find_element(By.NAME, "table-name").send_keys("typed")
    d.find_element(By.NAME, "pk-name").send_keys("pk")
    button(browser, "+ Global secondary index", d).click()
    d.find_element(By.NAME, "GSI-pk-name").send_keys("pk")
    Select(d.find_element(By.NAME, "GSI-pk-type")).select_by_value("N")
    d.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    error = wait(browser, lambda b: visible(b, ".dialog .error"))[0]
    assert "no name" in error.text, error.text
    by_label(browser, "GSI name").send_keys("by_pk")
    d.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait(browser, lambda b: "String in the table's partition key and Number in index by_pk's partition key"
         in d.text)
    assert server.call("ListTables", {})["TableNames"] == []
    Select(d.find_element(By.NAME, "GSI-pk-type")).select_by_value("S")
    d.find_element(By.CSS_SELECTOR, "button[type=submit]").click()
    wait(browser, lambda b: "table/typed/details" in b.current_url)
    table = server.call("DescribeTable", {"TableName": "typed"})["Table"]
    assert table["AttributeDefinitions"] == [{"AttributeName": "pk", "AttributeType": "S"}]
    assert js_errors(browser) == []


def commit_from_panel(browser):
    browser.find_element(By.ID, "stage-button").click()
    commit = wait(browser, lambda b: visible(b, "#commit-button") and visible(b, "#commit-button")[0])
    commit.click()


def test_a_new_item_on_an_existing_key_asks_before_it_overwrites(server, browser):
    """Issue 26, bug 6: "New item" with the key of an existing item staged a
    put that replaced it without a word."""
    create_table(server, "app", sk=None)
    put_many(server, "app", [{"pk": {"S": "u1"}, "name": {"S": "Ada"}, "email": {"S": "ada@x.io"}}])
    open_console(browser, server, "#/table/app")
    wait(browser, lambda b: len(grid_rows(b)) == 1)
    button(browser, "+ New item").click()
    d = dialog(browser)
    area = by_label(browser, "Item JSON")
    area.clear()
    area.send_keys('{"pk": "u1", "name": "Someone else"}')
    button(browser, "Stage new item", d).click()
    wait(browser, lambda b: "already exists" in d.text)
    assert stage_count(browser) == 0, "nothing staged without asking"
    button(browser, "Stage as overwrite", d).click()
    wait(browser, lambda b: stage_count(b) == 1)
    commit_from_panel(browser)
    wait(browser, lambda b: stage_count(b) == 0)
    item = server.call("GetItem", {"TableName": "app", "Key": {"pk": {"S": "u1"}}})["Item"]
    assert item == {"pk": {"S": "u1"}, "name": {"S": "Someone else"}}
    assert js_errors(browser) == []


def test_set_binary_and_38_digit_number_round_trip_in_both_json_views(server, browser):
    create_table(server, "app", sk=None)
    open_console(browser, server, "#/table/app")
    wait(browser, lambda b: visible(b, ".toolbar"))
    button(browser, "+ New item").click()
    d = dialog(browser)
    area = by_label(browser, "Item JSON")
    area.clear()
    area.send_keys('{"pk": "u1", "tags": {"$SS": ["red", "blue"]}, "blob": {"$B": "AAEC/w=="}, "n": %s}' % BIG)
    button(browser, "Stage new item", d).click()
    wait(browser, lambda b: stage_count(b) == 1)
    commit_from_panel(browser)
    wait(browser, lambda b: stage_count(b) == 0)
    item = server.call("GetItem", {"TableName": "app", "Key": {"pk": {"S": "u1"}}})["Item"]
    assert item["n"] == {"N": BIG}
    assert sorted(item["tags"]["SS"]) == ["blue", "red"]
    assert item["blob"] == {"B": "AAEC/w=="}
    # The grid shows the exact digits; the item opens as plain JSON...
    wait(browser, lambda b: BIG in b.find_element(By.CSS_SELECTOR, "table.grid").text)
    by_label(browser, "Open u1 as JSON").click()
    dialog(browser)
    plain = wait(browser, lambda b: by_label(b, "Item JSON").get_attribute("value"))
    assert BIG in plain and '"$SS"' in plain and '"$B": "AAEC/w=="' in plain
    assert json.loads(plain)["tags"]["$SS"]
    # ...and as DynamoDB JSON, and back, losslessly.
    browser.find_element(By.XPATH, "//label[contains(., 'DynamoDB JSON')]").click()
    wait(browser, lambda b: '"N"' in by_label(b, "Item JSON").get_attribute("value"))
    ddb = json.loads(by_label(browser, "Item JSON").get_attribute("value"))
    assert ddb["n"] == {"N": BIG} and ddb["blob"] == {"B": "AAEC/w=="}
    assert sorted(ddb["tags"]["SS"]) == ["blue", "red"]
    browser.find_element(By.XPATH, "//label[contains(., 'Plain JSON')]").click()
    wait(browser, lambda b: '"$SS"' in by_label(b, "Item JSON").get_attribute("value"))
    assert BIG in by_label(browser, "Item JSON").get_attribute("value")
    assert js_errors(browser) == []


def seed_orders(server, table, n, accounts=5):
    put_many(server, table, [{
        "pk": {"S": f"ACCOUNT#{i % accounts}"}, "sk": {"S": f"ORDER#{i:04}"},
        "status": {"S": "closed" if i % 4 == 0 else "open"}, "total": {"N": str(i)},
    } for i in range(n)])


def keys_on_page(browser):
    keys = browser.execute_script(
        "return [...document.querySelectorAll('table.grid tbody tr')].map((r) => r.dataset.key)")
    return [json.dumps(json.loads(k), sort_keys=True) for k in keys]


def test_browse_250_items_across_pages(server, browser):
    create_table(server, "app")
    seed_orders(server, "app", 250)
    open_console(browser, server, "#/table/app")
    from selenium.webdriver.support.ui import Select
    Select(by_label(browser, "Page size")).select_by_value("100")
    seen, sizes = set(), []
    for page in range(3):
        expected = 100 if page < 2 else 50
        wait(browser, lambda b: f"Page {page + 1}" in b.find_element(By.CSS_SELECTOR, ".pager").text
             and len(keys_on_page(b)) == expected)
        keys = keys_on_page(browser)
        sizes.append(len(keys))
        seen.update(keys)
        if page < 2:
            by_label(browser, "Next page").click()
    assert sizes == [100, 100, 50]
    assert len(seen) == 250
    # The last page has no LastEvaluatedKey... unless it was exactly full.
    headers = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "table.grid thead th")]
    assert headers[1].endswith("pk") and headers[2].endswith("sk")  # keys first
    assert js_errors(browser) == []


def test_item_count_follows_writes_made_outside_the_console(server, browser):
    create_table(server, "app")
    seed_orders(server, "app", 3)
    open_console(browser, server, "#/table/app")
    meta = lambda b: b.find_element(By.ID, "table-meta").text
    wait(browser, lambda b: "3 items" in meta(b))
    seed_orders(server, "app", 5)  # two more, written behind the console's back
    wait(browser, lambda b: len(keys_on_page(b)) == 3)
    ActionChains(browser).send_keys("r").perform()
    wait(browser, lambda b: "5 items" in meta(b) and len(keys_on_page(b)) == 5)
    assert js_errors(browser) == []


def test_query_with_begins_with_and_on_the_gsi(server, browser):
    server.call("CreateTable", {
        "TableName": "app", "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk", "status")],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        "GlobalSecondaryIndexes": [{"IndexName": "gsi1", "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"}],
                                    "Projection": {"ProjectionType": "ALL"}}],
    })
    seed_orders(server, "app", 100)
    open_console(browser, server, "#/table/app")
    from selenium.webdriver.support.ui import Select
    browser.find_element(By.XPATH, "//div[@aria-label='Operation']/label[contains(., 'Query')]").click()
    by_label(browser, "Partition key value").send_keys("ACCOUNT#1")
    Select(by_label(browser, "Sort key condition")).select_by_value("begins_with")
    by_label(browser, "Sort key value").send_keys("ORDER#00")
    button(browser, "Query").click()
    # ACCOUNT#1 holds orders 1, 6, 11, ...; those below 100 start with ORDER#00: 20 of them.
    wait(browser, lambda b: len(grid_rows(b)) == 20)
    assert all("ACCOUNT#1" in r.text for r in grid_rows(browser))
    request = browser.find_element(By.CSS_SELECTOR, "details.request")
    assert "begins_with" in request.get_attribute("textContent")
    # On the GSI: every closed order (i % 4 == 0): 25.
    Select(by_label(browser, "Table or index")).select_by_value("gsi1")
    pk = by_label(browser, "Partition key value")
    pk.clear()
    pk.send_keys("closed")
    assert not by_label(browser, "Sort key condition").is_enabled()  # gsi1 has no sort key
    button(browser, "Query").click()
    wait(browser, lambda b: len(grid_rows(b)) == 25 and all("closed" in r.text for r in grid_rows(b)))
    summary = browser.find_element(By.CSS_SELECTOR, ".summary").text
    assert "25 items" in summary and "scanned 25" in summary
    assert '"IndexName": "gsi1"' in request.get_attribute("textContent")
    assert js_errors(browser) == []


def edit_cell(browser, key_text, column, value):
    def open_editor(b):
        # The grid may redraw under us (a stage change, a refresh): find the
        # row again until a double-click lands.
        rows = grid_rows(b)
        exact = [r for r in rows if any(c.text.strip().split("\n")[-1].split(" ", 1)[-1] == key_text for c in r.find_elements(By.CSS_SELECTOR, "td.key"))]
        row = next(iter(exact), None) or next(r for r in rows if key_text in r.text)
        ActionChains(b).double_click(row.find_element(By.CSS_SELECTOR, f'td[data-col="{column}"]')).perform()
        return True
    wait(browser, open_editor)
    d = dialog(browser)
    area = by_label(browser, "Value")
    area.clear()
    area.send_keys(value)
    button(browser, "Stage change", d).click()


def test_a_change_to_a_table_that_is_gone_stays_reviewable_and_discardable(server, browser):
    """Issue 26, bug 7: one change on a deleted table made the whole panel a
    ResourceNotFoundException."""
    create_table(server, "app", sk=None)
    create_table(server, "gone", sk=None)
    put_many(server, "app", [{"pk": {"S": "u1"}, "name": {"S": "Ada"}}])
    put_many(server, "gone", [{"pk": {"S": "g1"}, "name": {"S": "Old"}}])
    open_console(browser, server, "#/table/gone")
    wait(browser, lambda b: len(grid_rows(b)) == 1)
    edit_cell(browser, "g1", "name", "New")
    wait(browser, lambda b: stage_count(b) == 1)
    open_console(browser, server, "#/table/app")
    wait(browser, lambda b: len(grid_rows(b)) == 1)
    edit_cell(browser, "u1", "name", "Grace")
    wait(browser, lambda b: stage_count(b) == 2)
    server.call("DeleteTable", {"TableName": "gone"})
    browser.find_element(By.ID, "stage-button").click()
    cards = wait(browser, lambda b: len(visible(b, "li.card.change")) == 2 and visible(b, "li.card.change"))
    assert "Cannot read the live item" in cards[0].text and "not found" in cards[0].text, cards[0].text
    assert "Grace" in cards[1].text
    button(browser, "Discard", cards[0]).click()
    wait(browser, lambda b: stage_count(b) == 1)
    wait(browser, lambda b: len(visible(b, "li.card.change")) == 1)
    assert js_errors(browser) == []


def test_per_value_markers_show_the_lock_pill(server, browser):
    """Issue 26, bug 9: the pill showed only for grouped markers (UNIQ# in the
    sort key), never for the default per-value ones (UNIQ#... / LOCK)."""
    create_table(server, "app")
    put_many(server, "app", [
        {"pk": {"S": "UNIQ#EMAIL#ada@x.io"}, "sk": {"S": "LOCK"}},
        {"pk": {"S": "ACCT#1"}, "sk": {"S": "PROFILE"}},
    ])
    open_console(browser, server, "#/table/app")
    wait(browser, lambda b: len(grid_rows(b)) == 2)
    marker = next(r for r in grid_rows(browser) if "UNIQ#EMAIL#ada@x.io" in r.text)
    owner = next(r for r in grid_rows(browser) if "ACCT#1" in r.text)
    assert marker.find_elements(By.CSS_SELECTOR, ".lockpill")
    assert not owner.find_elements(By.CSS_SELECTOR, ".lockpill")


def test_a_staged_row_says_when_someone_else_changed_the_item(server, browser):
    """Issue 26, bug 3: after another writer changed a staged item, a
    re-query showed the staged snapshot with no sign it was out of date."""
    create_table(server, "app", sk=None)
    put_many(server, "app", [{"pk": {"S": "u1"}, "name": {"S": "Ada"}, "visits": {"N": "1"}},
                             {"pk": {"S": "u2"}, "name": {"S": "Bob"}}])
    open_console(browser, server, "#/table/app")
    wait(browser, lambda b: len(grid_rows(b)) == 2)
    edit_cell(browser, "u1", "name", "Grace")
    wait(browser, lambda b: stage_count(b) == 1)  # the grid redraws: then edit the next
    edit_cell(browser, "u2", "name", "Bobby")
    wait(browser, lambda b: stage_count(b) == 2)
    assert not browser.find_elements(By.CSS_SELECTOR, ".driftpill")
    server.call("UpdateItem", {"TableName": "app", "Key": {"pk": {"S": "u1"}},
                               "UpdateExpression": "SET visits = :v", "ExpressionAttributeValues": {":v": {"N": "2"}}})
    browser.find_element(By.TAG_NAME, "body").send_keys("r")  # Refresh
    pill = wait(browser, lambda b: visible(b, ".driftpill"))
    assert len(pill) == 1 and pill[0].text == "changed since staged"
    assert "visits" in pill[0].get_attribute("title")
    row = next(r for r in grid_rows(browser) if "u1" in r.text)
    assert "Grace" in row.text, "the staged value is still what the commit would write"
    visits = row.find_element(By.CSS_SELECTOR, 'td[data-col="visits"]').text
    assert visits.endswith("2"), f"the attribute the change leaves alone shows its live value: {visits!r}"
    assert js_errors(browser) == []


def test_the_diff_shows_only_what_the_commit_writes_and_restages(server, browser):
    """Issue 26, bug 4: another writer's change showed reversed as part of
    yours ("visits 12345 -> 21"), and there was no way to restage."""
    create_table(server, "app", sk=None)
    put_many(server, "app", [{"pk": {"S": "u1"}, "name": {"S": "Ada"}, "visits": {"N": "21"}}])
    open_console(browser, server, "#/table/app")
    wait(browser, lambda b: len(grid_rows(b)) == 1)
    edit_cell(browser, "u1", "name", "Grace")
    wait(browser, lambda b: stage_count(b) == 1)
    server.call("UpdateItem", {"TableName": "app", "Key": {"pk": {"S": "u1"}},
                               "UpdateExpression": "SET visits = :v", "ExpressionAttributeValues": {":v": {"N": "12345"}}})
    browser.find_element(By.ID, "stage-button").click()
    card = wait(browser, lambda b: visible(b, "li.card.change"))[0]
    wait(browser, lambda b: "Changed since staged" in card.text)
    written = card.find_element(By.CSS_SELECTOR, "ul.attrs").text
    assert "name" in written and "Grace" in written
    assert "visits" not in written, f"someone else's change shown as ours: {written!r}"
    button(browser, "Restage against the current item", card).click()
    wait(browser, lambda b: "Changed since staged" not in b.find_element(By.CSS_SELECTOR, "li.card.change").text)
    commit = wait(browser, lambda b: visible(b, "#commit-button") and visible(b, "#commit-button")[0])
    commit.click()
    wait(browser, lambda b: stage_count(b) == 0)
    item = server.call("GetItem", {"TableName": "app", "Key": {"pk": {"S": "u1"}}})["Item"]
    assert item == {"pk": {"S": "u1"}, "name": {"S": "Grace"}, "visits": {"N": "12345"}}
    assert js_errors(browser) == []


def test_long_and_hidden_set_members_can_be_read_in_full(server, browser):
    """Issue 26, bug 9: set members were cut at 24 characters, and members
    past the sixth were only counted, with no way to see them."""
    create_table(server, "app", sk=None)
    long_member = "a-member-much-longer-than-twenty-four-characters"
    members = [long_member] + [f"m{i}" for i in range(7)]
    put_many(server, "app", [{"pk": {"S": "u1"}, "tags": {"SS": members}}])
    open_console(browser, server, "#/table/app")
    wait(browser, lambda b: len(grid_rows(b)) == 1)
    chips = browser.find_elements(By.CSS_SELECTOR, 'td[data-col="tags"] .chip')
    titles = [c.get_attribute("title") for c in chips]
    assert long_member in titles, titles
    more = browser.find_element(By.CSS_SELECTOR, 'td[data-col="tags"] .more')
    shown = {t for t in titles}
    hidden = set(more.get_attribute("title").split("\n"))
    assert shown | hidden == set(members), (shown, hidden)


def test_stage_three_edits_reload_diff_commit_as_one_transaction(server, browser):
    create_table(server, "app", sk=None)
    put_many(server, "app", [{"pk": {"S": f"u{i}"}, "name": {"S": f"user {i}"}} for i in range(1, 4)])
    open_console(browser, server, "#/table/app")
    wait(browser, lambda b: len(grid_rows(b)) == 3)
    # 1: edit a cell.
    edit_cell(browser, "u1", "name", "Ada")
    wait(browser, lambda b: stage_count(b) == 1)
    # 2: add a row.
    button(browser, "+ New item").click()
    d = dialog(browser)
    area = by_label(browser, "Item JSON")
    area.clear()
    area.send_keys('{"pk": "u9", "name": "Grace"}')
    button(browser, "Stage new item", d).click()
    wait(browser, lambda b: stage_count(b) == 2)
    # 3: delete a row.
    by_label(browser, "Select u3").click()
    button(browser, "Stage delete").click()
    wait(browser, lambda b: stage_count(b) == 3)
    wait(browser, lambda b: len(b.find_elements(By.CSS_SELECTOR, "tr.row-delete")) == 1
         and len(b.find_elements(By.CSS_SELECTOR, "tr.row-new")) == 1
         and len(b.find_elements(By.CSS_SELECTOR, "tr.row-update")) == 1)
    # The stage survives a reload; nothing is written yet.
    browser.refresh()
    wait(browser, lambda b: b.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true")
    assert stage_count(browser) == 3
    assert server.call("GetItem", {"TableName": "app", "Key": {"pk": {"S": "u1"}}})["Item"]["name"] == {"S": "user 1"}
    assert scan_count(server, "app") == 3
    before = server.usage()["Requests"].get("TransactWriteItems", 0)
    # The diff, attribute by attribute.
    browser.find_element(By.ID, "stage-button").click()
    wait(browser, lambda b: len(b.find_elements(By.CSS_SELECTOR, "#stage-panel li.card")) == 3)
    cards = browser.find_elements(By.CSS_SELECTOR, "#stage-panel li.card")
    assert "user 1" in cards[0].text and "Ada" in cards[0].text
    assert "Grace" in cards[1].text
    assert "user 3" in cards[2].text
    browser.find_element(By.ID, "commit-button").click()
    wait(browser, lambda b: stage_count(b) == 0)
    assert server.usage()["Requests"].get("TransactWriteItems", 0) == before + 1
    get = lambda k: server.call("GetItem", {"TableName": "app", "Key": {"pk": {"S": k}}}).get("Item")
    assert get("u1")["name"] == {"S": "Ada"}
    assert get("u9")["name"] == {"S": "Grace"}
    assert get("u3") is None
    assert js_errors(browser) == []


def test_conflicting_change_shows_its_cancellation_reason_and_nothing_is_applied(server, browser):
    create_table(server, "app", sk=None)
    put_many(server, "app", [{"pk": {"S": "u1"}, "status": {"S": "new"}}, {"pk": {"S": "u2"}, "status": {"S": "new"}}])
    open_console(browser, server, "#/table/app")
    wait(browser, lambda b: len(grid_rows(b)) == 2)
    edit_cell(browser, "u1", "status", "active")
    wait(browser, lambda b: stage_count(b) == 1)
    edit_cell(browser, "u2", "status", "active")
    wait(browser, lambda b: stage_count(b) == 2)
    # Someone else changes u1 behind the console's back.
    server.call("PutItem", {"TableName": "app", "Item": {"pk": {"S": "u1"}, "status": {"S": "closed"}}})
    commit_from_panel(browser)
    failed = wait(browser, lambda b: visible(b, "#stage-panel li.card.failed"))
    assert len(failed) == 1
    text = failed[0].text
    assert "ConditionalCheckFailed" in text and "u1" in text
    assert "closed" in text  # the current value is shown
    assert stage_count(browser) == 2  # the stage is kept
    get = lambda k: server.call("GetItem", {"TableName": "app", "Key": {"pk": {"S": k}}})["Item"]["status"]
    assert get("u1") == {"S": "closed"} and get("u2") == {"S": "new"}  # nothing applied
    assert js_errors(browser) == []


@pytest.mark.serve_args("--fault", "BatchWriteItem=unprocessed@0.3", "--fault-seed", "7")
def test_bulk_delete_120_rows_retries_unprocessed_items_and_leaves_none(server, browser):
    create_table(server, "app")
    for i in range(120):  # PutItem: the injected faults are for BatchWriteItem
        server.call("PutItem", {"TableName": "app", "Item": {"pk": {"S": f"p{i % 7}"}, "sk": {"S": f"s{i:03}"}}})
    open_console(browser, server, "#/table/app")
    from selenium.webdriver.support.ui import Select
    Select(by_label(browser, "Page size")).select_by_value("250")
    wait(browser, lambda b: len(grid_rows(b)) == 120)
    by_label(browser, "Select all rows").click()
    wait(browser, lambda b: "120 selected" in b.find_element(By.CSS_SELECTOR, ".toolbar").text)
    button(browser, "Bulk…").click()
    d = dialog(browser)
    button(browser, "Start", d).click()
    wait(browser, lambda b: d.find_element(By.CSS_SELECTOR, ".state").text == "done", timeout=60)
    counts = d.find_element(By.CSS_SELECTOR, ".counts").text
    done = int(d.find_element(By.CSS_SELECTOR, ".counts .done b").text)
    retried = int(d.find_element(By.CSS_SELECTOR, ".counts .retried b").text)
    failed = int(d.find_element(By.CSS_SELECTOR, ".counts .failed b").text)
    assert (done, failed) == (120, 0), counts
    assert retried > 0, counts
    assert scan_count(server, "app") == 0
    assert js_errors(browser) == []


def test_lock_view_flags_an_orphaned_marker_and_repairs_it(server, browser):
    server.call("CreateTable", {
        "TableName": "app", "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": "PK", "AttributeType": "S"}, {"AttributeName": "SK", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
    })
    for n, email in ((1, "ada@lovelace.io"), (2, "grace@hopper.io")):
        subprocess.run([BINARY, "unique", "create", "--endpoint-url", server.base, "--table", "app",
                        "--entity", "account", "--unique", "email",
                        json.dumps({"PK": f"ACCT#{n}", "SK": "PROFILE", "email": email})],
                       check=True, capture_output=True)
    # Delete an owner without its marker: the marker is now an orphan.
    server.call("DeleteItem", {"TableName": "app", "Key": {"PK": {"S": "ACCT#2"}, "SK": {"S": "PROFILE"}}})
    open_console(browser, server, "#/table/app/locks")
    # Nothing typed: the view discovers the constraint from the markers and
    # checks the owners by default, saying what that scan costs.
    discovered = wait(browser, lambda b: b.find_element(By.CSS_SELECTOR, ".locks .discovered"))
    assert "of email (per-value), owned by ACCT#… items" in discovered.text, discovered.text
    assert by_label(browser, "Unique attributes").get_attribute("value") == "email"
    assert by_label(browser, "Scan owners with key prefix").get_attribute("value") == "ACCT#"
    assert "RCU" in browser.find_element(By.CSS_SELECTOR, ".locks form").text
    table = wait(browser, lambda b: visible(b, '[aria-label="Uniqueness markers"]'))[0]
    wait(browser, lambda b: "ORPHAN" in table.text and "owners scanned" in b.find_element(By.CSS_SELECTOR, ".locks").text)
    assert "grace@hopper.io" in table.text and "held" in table.text
    # Without the owners listed, repair cannot prove the value unused: it
    # keeps the marker and says why.
    by_label(browser, "Check owners for missing markers").click()
    button(browser, "Inspect locks").click()
    wait(browser, lambda b: "owners scanned" not in b.find_element(By.CSS_SELECTOR, ".locks").text)
    button(browser, "Repair all").click()
    wait(browser, lambda b: "not proved" in b.find_element(By.CSS_SELECTOR, ".locks").text)
    by_label(browser, "Check owners for missing markers").click()
    button(browser, "Inspect locks").click()
    wait(browser, lambda b: "owners scanned" in b.find_element(By.CSS_SELECTOR, ".locks").text)
    button(browser, "Repair all").click()
    wait(browser, lambda b: "healthy" in b.find_element(By.CSS_SELECTOR, ".locks").text)
    assert "fixed" in browser.find_element(By.CSS_SELECTOR, ".locks .report").text
    # The CLI's default, per-value markers: UNIQ#EMAIL#<value> / LOCK.
    markers = server.call("Scan", {"TableName": "app", "FilterExpression": "begins_with(PK, :p)",
                                   "ExpressionAttributeValues": {":p": {"S": "UNIQ#EMAIL#"}}})
    assert markers["Count"] == 1
    assert markers["Items"][0]["PK"] == {"S": "UNIQ#EMAIL#ada@lovelace.io"}
    assert js_errors(browser) == []


def test_repair_leaves_a_marker_it_cannot_read_and_its_owner_attribute(server, browser):
    """Issue 26, bug 1: a marker naming its owner in `owner` (not uniq_owner)
    beside the owner holding that e-mail was called an orphan and deleted."""
    server.call("CreateTable", {
        "TableName": "foreign", "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": "PK", "AttributeType": "S"}, {"AttributeName": "SK", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
    })
    owner = {"PK": {"S": "USER#1"}, "SK": {"S": "PROFILE"}}
    server.call("PutItem", {"TableName": "foreign", "Item": {**owner, "email": {"S": "o1@example.com"}}})
    server.call("PutItem", {"TableName": "foreign", "Item": {
        "PK": {"S": "UNIQ#EMAIL#o1@example.com"}, "SK": {"S": "LOCK"}, "uniq_attr": {"S": "EMAIL"},
        "uniq_value": {"S": "o1@example.com"}, "owner": {"M": owner}}})
    open_console(browser, server, "#/table/foreign/locks")
    for label, value in (("Entity", "user"), ("Unique attributes", "email"), ("Scan owners with key prefix", "USER#")):
        field = by_label(browser, label)
        field.clear()
        field.send_keys(value)
    button(browser, "Inspect locks").click()
    table = wait(browser, lambda b: visible(b, '[aria-label="Uniqueness markers"]'))[0]
    wait(browser, lambda b: "UNREADABLE" in table.text)
    assert "ORPHAN" not in table.text
    button(browser, "Repair all").click()
    wait(browser, lambda b: "left alone" in b.find_element(By.CSS_SELECTOR, ".locks").text)
    kept = server.call("GetItem", {"TableName": "foreign",
                                   "Key": {"PK": {"S": "UNIQ#EMAIL#o1@example.com"}, "SK": {"S": "LOCK"}}})
    assert kept["Item"]["owner"] == {"M": owner}
    assert js_errors(browser) == []


def raw(server, path, method="POST", headers=None, body=b"{}"):
    request = urllib.request.Request(f"{server.base}{path}", data=body if method == "POST" else None,
                                     method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(request) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def test_cross_origin_post_to_the_console_api_is_refused(server):
    status, headers, body = raw(server, "/console/api/call/ListTables", headers={"Origin": "http://evil.example"})
    assert status == 403, body
    assert not any(h.lower().startswith("access-control") for h in headers)
    status, _, _ = raw(server, "/console/api/call/ListTables", headers={"Sec-Fetch-Site": "cross-site"})
    assert status == 403
    # DNS rebinding: a foreign Host name is refused, page and API alike.
    assert raw(server, "/console", method="GET", headers={"Host": "evil.example"})[0] == 403
    assert raw(server, "/console/api/info", method="GET", headers={"Host": "evil.example:80"})[0] == 403
    # Same origin passes, with no CORS headers either.
    host = server.base.replace("http://", "")
    status, headers, _ = raw(server, "/console/api/call/ListTables", headers={"Origin": server.base, "Host": host})
    assert status == 200 and not any(h.lower().startswith("access-control") for h in headers)


@pytest.mark.serve_args("--credentials", "AKIDCONSOLE:s3cr3t")
def test_with_credentials_the_console_demands_its_token(server, browser):
    assert "?token=" in server.console_url
    token = server.console_url.split("token=")[1]
    status, body = server.api("call/ListTables", {}, expect_error=True)
    assert status == 401 and body["code"] == "MissingConsoleToken"
    status, body = server.api("call/ListTables", {}, headers={"X-Console-Token": "wrong"}, expect_error=True)
    assert status == 401
    status, body = server.api("call/ListTables", {}, headers={"X-Console-Token": token})
    assert status == 200  # signed with the configured key, or the server would refuse it
    browser.get(server.base + "/console")
    wait(browser, lambda b: "needs its token" in b.find_element(By.TAG_NAME, "h1").text)
    open_console(browser, server)  # ?token= sets the cookie and redirects
    assert "token" not in browser.current_url
    assert "AKIDCONSOLE" not in browser.page_source and "s3cr3t" not in browser.page_source
    assert js_errors(browser) == []


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_banner_when_the_server_goes_away_and_recovery_when_it_returns(browser):
    port = str(free_port())
    first = Server(port=port)
    try:
        open_console(browser, first)
        first.stop()
        browser.find_element(By.TAG_NAME, "body").send_keys("r")
        wait(browser, lambda b: b.find_element(By.ID, "banner").is_displayed())
        assert "not answering" in browser.find_element(By.ID, "banner").text
        second = Server(port=port)
        try:
            wait(browser, lambda b: not b.find_element(By.ID, "banner").is_displayed(), timeout=15)
        finally:
            second.stop()
    finally:
        first.stop()


def dot_color(browser):
    return browser.execute_script(
        "return getComputedStyle(document.querySelector('#conn .dot')).backgroundColor")


def test_an_idle_page_notices_the_outage_and_the_dot_turns_red(browser):
    """Issue 26, bugs 8 and 9: an idle page kept a green dot until the next
    action, and the dot stayed green while the banner said "not answering"."""
    port = str(free_port())
    first = Server(port=port)
    try:
        open_console(browser, first)
        browser.execute_script("localStorage.setItem('ferrodyn.heartbeatSeconds', '1')")
        browser.refresh()
        wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, "#conn .dot"))
        green = dot_color(browser)
        first.stop()
        # No key pressed, no click: the heartbeat finds out.
        wait(browser, lambda b: b.find_element(By.ID, "banner").is_displayed(), timeout=10)
        assert "not answering" in browser.find_element(By.ID, "banner").text
        assert dot_color(browser) != green
        second = Server(port=port)
        try:
            wait(browser, lambda b: not b.find_element(By.ID, "banner").is_displayed(), timeout=15)
            assert dot_color(browser) == green
        finally:
            second.stop()
    finally:
        first.stop()
        browser.execute_script("localStorage.removeItem('ferrodyn.heartbeatSeconds')")


def test_stream_records_newest_first_with_old_and_new_images(server, browser):
    server.call("CreateTable", {
        "TableName": "app", "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    })
    key = {"pk": {"S": "u1"}}
    server.call("PutItem", {"TableName": "app", "Item": {**key, "status": {"S": "new"}}})
    server.call("PutItem", {"TableName": "app", "Item": {**key, "status": {"S": "paid"}}})
    server.call("DeleteItem", {"TableName": "app", "Key": key})
    open_console(browser, server, "#/table/app/streams")
    records = wait(browser, lambda b: len(b.find_elements(By.CSS_SELECTOR, '[aria-label="Stream records"] > li')) == 3
                   and b.find_elements(By.CSS_SELECTOR, '[aria-label="Stream records"] > li'))
    assert [r.find_element(By.CSS_SELECTOR, ".op").text for r in records] == ["REMOVE", "MODIFY", "INSERT"]
    modify = records[1].text
    assert "new" in modify and "paid" in modify
    # The shard tree: a new on-demand table has four partitions, a shard each.
    tree = browser.find_element(By.CSS_SELECTOR, "details.shard-tree")
    assert "Shards: 4 (4 open" in tree.find_element(By.TAG_NAME, "summary").text
    shards = tree.find_elements(By.CSS_SELECTOR, '[aria-label="Stream shards"] > li')
    assert len(shards) == 4
    assert sum(int(s.text.split(" record(s)")[0].split()[-1]) for s in shards) == 3
    assert js_errors(browser) == []


def test_expression_builder_aliases_a_reserved_word(server, browser):
    open_console(browser, server, "#/expr")
    by_label(browser, "Condition").send_keys('attribute_exists(id) and status = "active"')
    button(browser, "Build").click()
    code = wait(browser, lambda b: visible(b, '[aria-label="request fields"]'))[0].text
    fields = json.loads(code)
    assert fields["ConditionExpression"] == "attribute_exists(id) AND #status = :status"
    assert fields["ExpressionAttributeNames"] == {"#status": "status"}
    assert fields["ExpressionAttributeValues"] == {":status": {"S": "active"}}
    assert fields["Key"] == {"pk": {"S": "ACCT#1"}}, "issue 26 bug 9: snippets had no Key"
    browser.find_element(By.XPATH, "//button[@role='tab'][.='Python']").click()
    python = wait(browser, lambda b: visible(b, '[aria-label="Python snippet"]'))[0].text
    assert "update_item(" in python and "Key=" in python
    assert js_errors(browser) == []


def test_dark_theme_persists_and_escape_closes_dialogs(server, browser):
    open_console(browser, server)
    body = browser.find_element(By.TAG_NAME, "body")
    start = browser.execute_script("return document.documentElement.dataset.theme")
    body.send_keys("t")
    flipped = browser.execute_script("return document.documentElement.dataset.theme")
    assert flipped != start
    browser.refresh()
    wait(browser, lambda b: b.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true")
    assert browser.execute_script("return document.documentElement.dataset.theme") == flipped
    browser.find_element(By.TAG_NAME, "body").send_keys("?")
    dialog(browser)
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)
    wait(browser, lambda b: not visible(b, ".dialog"))
    assert js_errors(browser) == []


def test_import_a_csv_file_with_progress_and_export_it_again(server, browser, tmp_path):
    create_table(server, "app", sk=None)
    csv = tmp_path / "users.csv"
    csv.write_text("pk,n,name\n" + "".join(f'u{i},{BIG if i == 0 else i},"User, {i}"\n' for i in range(40)))
    open_console(browser, server, "#/table/app/transfer")
    by_label(browser, "File to import").send_keys(str(csv))
    assert by_label(browser, "Import format").get_attribute("value") == "csv"
    button(browser, "Import").click()
    wait(browser, lambda b: b.find_element(By.CSS_SELECTOR, ".transfer .state").text == "done")
    assert "40 written, 0 not written" in browser.find_element(By.CSS_SELECTOR, ".transfer .report").text
    item = server.call("GetItem", {"TableName": "app", "Key": {"pk": {"S": "u0"}}})["Item"]
    assert item["n"] == {"N": BIG} and item["name"] == {"S": "User, 0"}
    status, body = server.api("export", {"table": "app", "format": "csv"})
    assert body["rows"] == 40 and body["text"].startswith("pk,n,name\n") and BIG in body["text"]
    assert js_errors(browser) == []


def test_dropping_one_attribute_keeps_the_rest_of_the_change(server, browser):
    create_table(server, "app", sk=None)
    put_many(server, "app", [{"pk": {"S": "u1"}, "a": {"S": "1"}, "b": {"S": "1"}}])
    open_console(browser, server, "#/table/app")
    wait(browser, lambda b: len(grid_rows(b)) == 1)
    edit_cell(browser, "u1", "a", "2")
    wait(browser, lambda b: stage_count(b) == 1)
    edit_cell(browser, "u1", "b", "2")
    browser.find_element(By.ID, "stage-button").click()
    wait(browser, lambda b: len(b.find_elements(By.CSS_SELECTOR, "#stage-panel li.attr")) == 2)
    by_label(browser, "Drop the change to b").click()
    wait(browser, lambda b: len(b.find_elements(By.CSS_SELECTOR, "#stage-panel li.attr")) == 1)
    assert "a" in browser.find_element(By.CSS_SELECTOR, "#stage-panel li.attr .name").text
    browser.find_element(By.ID, "commit-button").click()
    wait(browser, lambda b: stage_count(b) == 0)
    item = server.call("GetItem", {"TableName": "app", "Key": {"pk": {"S": "u1"}}})["Item"]
    assert item["a"] == {"S": "2"} and item["b"] == {"S": "1"}
    assert js_errors(browser) == []


@pytest.mark.serve_args("--fault", "TransactWriteItems=conflict@1")
def test_an_injected_transaction_conflict_is_shown_per_change_and_the_stage_kept(server, browser):
    create_table(server, "app", sk=None)
    put_many(server, "app", [{"pk": {"S": "u1"}, "a": {"S": "1"}}])
    open_console(browser, server, "#/table/app")
    wait(browser, lambda b: len(grid_rows(b)) == 1)
    edit_cell(browser, "u1", "a", "2")
    wait(browser, lambda b: stage_count(b) == 1)
    commit_from_panel(browser)
    failed = wait(browser, lambda b: visible(b, "#stage-panel li.card.failed"))
    assert "TransactionConflict" in failed[0].text
    assert stage_count(browser) == 1
    assert server.call("GetItem", {"TableName": "app", "Key": {"pk": {"S": "u1"}}})["Item"]["a"] == {"S": "1"}


def test_a_typed_filter_from_the_form_shows_only_matching_rows_with_counts(server, browser):
    create_table(server, "app")
    seed_orders(server, "app", 100)
    open_console(browser, server, "#/table/app")
    browser.find_element(By.CSS_SELECTOR, "details.composer summary").click()
    from selenium.webdriver.support.ui import Select
    for attribute, op, kind, value in (("status", "=", "S", "closed"), ("total", ">=", "N", "50")):
        by_label(browser, "Condition attribute").send_keys(attribute)
        Select(by_label(browser, "Condition operator")).select_by_value(op)
        Select(by_label(browser, "Condition value type")).select_by_value(kind)
        by_label(browser, "Condition value").send_keys(value)
        button(browser, "Add to filter").click()
    assert by_label(browser, "Filter").get_attribute("value") == 'status = "closed" and total >= 50'
    # Limit applies before the filter (as in DynamoDB): one page of 250 reads all 100.
    Select(by_label(browser, "Page size")).select_by_value("250")
    # closed: i % 4 == 0; total >= 50: i in 52, 56, ..., 96 -> 12 items, all 100 scanned.
    wait(browser, lambda b: len(grid_rows(b)) == 12)
    summary = browser.find_element(By.CSS_SELECTOR, ".summary").text
    assert "12 items" in summary and "scanned 100" in summary
    assert js_errors(browser) == []


def test_console_off_serves_no_console(tmp_path):
    proc = subprocess.Popen([BINARY, "serve", "--in-memory", "--port", "0", "--exit-on-stdin-eof", "--console", "off"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        base = proc.stdout.readline().split()[3]
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"{base}/console")
        assert refused.value.code == 404
    finally:
        proc.stdin.close()
        proc.wait(timeout=5)


@pytest.mark.serve_args("--host", "0.0.0.0")
def test_beyond_loopback_the_console_demands_its_token(server):
    assert "?token=" in server.console_url
    status, body = server.api("info", expect_error=True)
    assert status == 401 and body["code"] == "MissingConsoleToken"
    token = server.console_url.split("token=")[1]
    status, _ = server.api("info", headers={"X-Console-Token": token})
    assert status == 200


def test_an_import_with_unreadable_lines_names_them_writes_nothing_and_offers_the_rest(server, browser, tmp_path):
    create_table(server, "app", sk=None)
    lines = tmp_path / "users.jsonl"
    lines.write_text('{"pk": "u1", "n": 1}\n{"pk": "u2",}\n{"pk": "u3", "tags": {"$SS": 5}}\n{"pk": "u4"}\n')
    open_console(browser, server, "#/table/app/transfer")
    by_label(browser, "File to import").send_keys(str(lines))
    button(browser, "Import").click()
    wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, ".transfer .unreadable"))
    report = browser.find_element(By.CSS_SELECTOR, ".transfer .unreadable").text
    assert "2 line(s) cannot be read; nothing was written." in report
    assert "line 2, byte 12: " in report and "line 1" not in report and "line 3: " in report
    assert server.call("Scan", {"TableName": "app"})["Count"] == 0
    button(browser, "Import the 2 readable item(s), skip 2 line(s)").click()
    wait(browser, lambda b: b.find_element(By.CSS_SELECTOR, ".transfer .state").text == "done")
    assert "2 written, 0 not written" in browser.find_element(By.CSS_SELECTOR, ".transfer .report").text
    keys = sorted(i["pk"]["S"] for i in server.call("Scan", {"TableName": "app"})["Items"])
    assert keys == ["u1", "u4"]
    assert js_errors(browser) == []


def test_export_defaults_to_a_lossless_format_and_says_what_csv_loses(server, browser):
    from selenium.webdriver.support.ui import Select
    create_table(server, "app", sk=None)
    open_console(browser, server, "#/table/app/transfer")
    assert by_label(browser, "Export format").get_attribute("value") == "jsonl"
    assert not browser.find_element(By.CSS_SELECTOR, ".csv-loses").is_displayed()
    Select(by_label(browser, "Export format")).select_by_value("csv")
    loses = browser.find_element(By.CSS_SELECTOR, ".csv-loses")
    assert loses.is_displayed() and "sets, binary, maps, lists and NULL become strings" in loses.text
    assert js_errors(browser) == []


def test_200_staged_deletes_say_the_limit_and_commit_as_separate_transactions_on_request(server, browser):
    create_table(server, "app", sk=None)
    put_many(server, "app", [{"pk": {"S": f"u{i:03}"}} for i in range(200)])
    open_console(browser, server, "#/table/app")
    from selenium.webdriver.support.ui import Select
    Select(by_label(browser, "Page size")).select_by_value("250")
    wait(browser, lambda b: "200 items" in b.find_element(By.CSS_SELECTOR, ".summary").text)
    by_label(browser, "Select all rows").click()
    started = time.monotonic()
    button(browser, "Stage delete").click()
    wait(browser, lambda b: stage_count(b) == 200)
    staged_in = time.monotonic() - started
    print(f"200 deletes staged in {staged_in:.2f} s")
    # Someone deletes an item of the second transaction: it will be cancelled.
    server.call("DeleteItem", {"TableName": "app", "Key": {"pk": {"S": "u150"}}})
    browser.find_element(By.ID, "stage-button").click()
    warning = wait(browser, lambda b: b.find_element(By.CSS_SELECTOR, "#stage-panel .not-atomic"))
    assert "200 changes need 2 transactions." in warning.text
    commit = browser.find_element(By.ID, "commit-button")
    assert commit.text == "Commit as 2 separate transactions…"
    commit.click()
    browser.switch_to.alert.accept()
    report = wait(browser, lambda b: b.find_element(By.CSS_SELECTOR, "#stage-panel .split-report"))
    assert "The first 100 change(s) were committed" in report.text
    assert stage_count(browser) == 100
    failed = wait(browser, lambda b: b.find_element(By.CSS_SELECTOR, "#stage-panel li.card.failed"))
    assert "u150" in failed.text
    assert scan_count(server, "app") == 99  # u100..u199 but u150: nothing of the second was written
    # One transaction holds the rest now: discard the failed change and commit atomically.
    failed.find_element(By.CSS_SELECTOR, "button[aria-label^='Discard change']").click()
    wait(browser, lambda b: browser.find_element(By.ID, "commit-button").text == "Commit")
    browser.find_element(By.ID, "commit-button").click()
    wait(browser, lambda b: stage_count(b) == 0)
    assert scan_count(server, "app") == 0
    assert js_errors(browser) == []


def test_a_split_commit_reports_each_transaction(server, browser):
    create_table(server, "app", sk=None)
    put_many(server, "app", [{"pk": {"S": f"u{i:03}"}} for i in range(120)])
    open_console(browser, server, "#/table/app")
    from selenium.webdriver.support.ui import Select
    Select(by_label(browser, "Page size")).select_by_value("250")
    wait(browser, lambda b: len(grid_rows(b)) == 120)
    by_label(browser, "Select all rows").click()
    button(browser, "Stage delete").click()
    wait(browser, lambda b: stage_count(b) == 120)
    browser.find_element(By.ID, "stage-button").click()
    wait(browser, lambda b: b.find_element(By.ID, "commit-button").text.startswith("Commit as 2"))
    browser.find_element(By.ID, "commit-button").click()
    browser.switch_to.alert.accept()
    report = wait(browser, lambda b: b.find_element(By.CSS_SELECTOR, "#stage-panel .split-report"))
    assert "Committed 120 changes in 2 transactions." in report.text
    assert "Changes 1–100" in report.text and "Changes 101–120" in report.text
    assert scan_count(server, "app") == 0
    assert js_errors(browser) == []


@pytest.mark.serve_args("--fault", "UpdateItem=throttling@0.6", "--fault-seed", "3")
def test_a_bulk_job_stays_visible_and_cancellable_after_its_dialog_is_closed(server, browser):
    from selenium.webdriver.support.ui import Select
    create_table(server, "app", sk=None)
    put_many(server, "app", [{"pk": {"S": f"u{i:04}"}} for i in range(1500)])
    open_console(browser, server, "#/table/app")
    wait(browser, lambda b: len(grid_rows(b)) > 0)
    button(browser, "Bulk on whole result…").click()
    d = dialog(browser)
    Select(by_label(browser, "Bulk action")).select_by_value("set")
    by_label(browser, "Attribute name").send_keys("seen")
    by_label(browser, "Attribute value").send_keys("yes")
    wait(browser, lambda b: by_label(b, "Confirm every item").is_displayed())
    by_label(browser, "Confirm every item").click()
    button(browser, "Start", d).click()
    wait(browser, lambda b: d.find_element(By.CSS_SELECTOR, ".state").text == "running")
    button(browser, "Close", d).click()
    jobs = wait(browser, lambda b: b.find_element(By.ID, "jobs-button") if
                b.find_element(By.ID, "jobs-button").text == "⟳ 1 job running" else None)
    jobs.click()
    d = dialog(browser)
    row = wait(browser, lambda b: d.find_element(By.CSS_SELECTOR, "li.job"))
    assert "Set seen: every item of this scan (app)" in row.text
    by_label(browser, "Cancel Set seen: every item of this scan (app)").click()
    wait(browser, lambda b: d.find_element(By.CSS_SELECTOR, "li.job .state").text == "cancelled", timeout=20)
    seen = server.call("Scan", {"TableName": "app", "FilterExpression": "attribute_exists(seen)", "Select": "COUNT"})["Count"]
    assert 0 < seen < 1500, seen  # stopped part way; what was written stays
    wait(browser, lambda b: b.find_element(By.ID, "jobs-button").text == "Jobs")
    # A reload still lists it.
    open_console(browser, server, "#/table/app")
    wait(browser, lambda b: b.find_element(By.ID, "jobs-button").is_displayed())
    assert js_errors(browser) == []


def test_a_rare_filter_reads_on_until_the_page_has_matches(server, browser):
    create_table(server, "app", sk=None)
    put_many(server, "app", [{"pk": {"S": f"u{i:04}"}, "n": {"N": str(i)}} for i in range(2000)])
    open_console(browser, server, "#/table/app")
    wait(browser, lambda b: len(grid_rows(b)) > 0)
    by_label(browser, "Filter").send_keys("n = 1234" + Keys.ENTER)
    wait(browser, lambda b: len(grid_rows(b)) == 1)
    summary = browser.find_element(By.CSS_SELECTOR, ".summary").text
    assert "1 items" in summary and " requests" in summary, summary
    assert "u1234" in grid_rows(browser)[0].text
    assert js_errors(browser) == []


def test_a_filter_that_matches_nothing_in_the_time_given_says_so_and_reads_on(server, browser):
    create_table(server, "app", sk=None)
    put_many(server, "app", [{"pk": {"S": f"u{i:04}"}, "n": {"N": str(i)}} for i in range(600)])
    open_console(browser, server, "#/table/app")
    browser.execute_script("localStorage.setItem('ferrodyn.fillMillis', '1')")
    wait(browser, lambda b: len(grid_rows(b)) > 0)
    by_label(browser, "Filter").send_keys("n = -1" + Keys.ENTER)
    empty = wait(browser, lambda b: b.find_element(By.CSS_SELECTOR, ".empty.unfinished"))
    assert "No matches yet: 50 item(s) scanned in 1 request(s)." in empty.text, empty.text
    button(browser, "Keep reading").click()
    wait(browser, lambda b: "Page 2" in b.find_element(By.CSS_SELECTOR, ".summary").text)
    # Without the shortened budget the whole table is read to its end.
    browser.execute_script("localStorage.removeItem('ferrodyn.fillMillis')")
    by_label(browser, "Filter").send_keys(Keys.ENTER)
    wait(browser, lambda b: "scanned 600" in b.find_element(By.CSS_SELECTOR, ".summary").text)
    assert "No items on this page." in browser.find_element(By.CSS_SELECTOR, ".empty").text
    assert js_errors(browser) == []
    browser.execute_script("localStorage.clear()")


def test_a_grid_edit_of_a_unique_value_moves_its_marker_in_the_same_commit(server, browser):
    create_table(server, "app", pk="PK", sk="SK")
    put_many(server, "app", [
        {"PK": {"S": "ACCT#1"}, "SK": {"S": "PROFILE"}, "email": {"S": "ada@x.io"}},
        {"PK": {"S": "UNIQ#EMAIL#ada@x.io"}, "SK": {"S": "LOCK"}, "uniq_attr": {"S": "EMAIL"},
         "uniq_owner": {"M": {"PK": {"S": "ACCT#1"}, "SK": {"S": "PROFILE"}}}, "uniq_value": {"S": "ada@x.io"}},
        {"PK": {"S": "ACCT#2"}, "SK": {"S": "PROFILE"}, "email": {"S": "grace@x.io"}},
        {"PK": {"S": "UNIQ#EMAIL#grace@x.io"}, "SK": {"S": "LOCK"}, "uniq_attr": {"S": "EMAIL"},
         "uniq_owner": {"M": {"PK": {"S": "ACCT#2"}, "SK": {"S": "PROFILE"}}}, "uniq_value": {"S": "grace@x.io"}},
    ])
    open_console(browser, server, "#/table/app")
    wait(browser, lambda b: len(grid_rows(b)) == 4)
    # A value another account holds is refused before anything is staged.
    edit_cell(browser, "ACCT#1", "email", "grace@x.io")
    wait(browser, lambda b: any("is taken" in t.text for t in b.find_elements(By.CSS_SELECTOR, ".toast, .dialog .error")))
    assert stage_count(browser) == 0
    browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)
    edit_cell(browser, "ACCT#1", "email", "ada@new.io")
    wait(browser, lambda b: stage_count(b) == 3)
    assert any("Uniqueness markers follow the edit" in t.text for t in browser.find_elements(By.CSS_SELECTOR, ".toast"))
    browser.find_element(By.ID, "stage-button").click()
    wait(browser, lambda b: b.find_element(By.ID, "commit-button")).click()
    wait(browser, lambda b: stage_count(b) == 0)
    get = lambda pk, sk: server.call("GetItem", {"TableName": "app", "Key": {"PK": {"S": pk}, "SK": {"S": sk}}}).get("Item")
    assert get("ACCT#1", "PROFILE")["email"] == {"S": "ada@new.io"}
    assert get("UNIQ#EMAIL#ada@x.io", "LOCK") is None
    assert get("UNIQ#EMAIL#ada@new.io", "LOCK")["uniq_owner"] == {"M": {"PK": {"S": "ACCT#1"}, "SK": {"S": "PROFILE"}}}
    assert js_errors(browser) == []


def test_a_long_page_draws_the_rows_in_view_and_keeps_every_row_reachable(server, browser):
    from selenium.webdriver.support.ui import Select
    create_table(server, "app", sk=None)
    put_many(server, "app", [{"pk": {"S": f"u{i:04}"}, "n": {"N": str(i)}} for i in range(600)])
    open_console(browser, server, "#/table/app")
    Select(by_label(browser, "Page size")).select_by_value("1000")
    wait(browser, lambda b: "600 items" in b.find_element(By.CSS_SELECTOR, ".summary").text)
    wait(browser, lambda b: 0 < len(b.find_elements(By.CSS_SELECTOR, "tbody tr[data-index]")) < 200)
    browser.execute_script("const g = document.querySelector('.gridwrap'); g.scrollTop = g.scrollHeight")
    wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, 'tbody tr[data-index="599"]'))
    # Editing works in a drawn window (one listener for every cell).
    last = browser.find_element(By.CSS_SELECTOR, 'tbody tr[data-index="599"]')
    key = json.loads(last.get_attribute("data-key"))["pk"]["S"]
    ActionChains(browser).double_click(last.find_element(By.CSS_SELECTOR, 'td[data-col="n"]')).perform()
    d = dialog(browser)
    by_label(browser, "Value").clear()
    by_label(browser, "Value").send_keys("-1")
    button(browser, "Stage change", d).click()
    wait(browser, lambda b: stage_count(b) == 1)
    staged = browser.execute_script("return JSON.parse(localStorage.getItem(Object.keys(localStorage).find(k => k.startsWith('ferrodyn.stage:'))))")
    assert staged["changes"][0]["key"] == {"pk": {"S": key}}
    by_label(browser, "Select all rows").click()
    wait(browser, lambda b: "600 selected" in b.find_element(By.CSS_SELECTOR, ".toolbar").text)
    assert js_errors(browser) == []


def test_wide_items_keep_their_keys_in_place_and_sort_this_page_with_blanks_last(server, browser):
    create_table(server, "app")
    wide = {f"attribute_{c:02}": {"S": "x" * 30} for c in range(14)}
    put_many(server, "app", [
        {"pk": {"S": "p"}, "sk": {"S": f"s{i}"}, **wide, **({"n": {"N": str(i * 7 % 5)}} if i % 3 else {})} for i in range(9)])
    open_console(browser, server, "#/table/app")
    wait(browser, lambda b: len(grid_rows(b)) == 9)
    key_x = lambda: browser.execute_script("return document.querySelector('tbody td.key1').getBoundingClientRect().x")
    before = key_x()
    browser.execute_script("document.querySelector('.gridwrap').scrollLeft = 600")
    assert browser.execute_script("return document.querySelector('.gridwrap').scrollLeft") > 0
    assert abs(key_x() - before) < 1, "the key columns stay in place"
    cell = browser.find_element(By.CSS_SELECTOR, 'td.num[data-col="n"]')
    assert cell.value_of_css_property("text-align") == "right"
    column = lambda: [r.find_element(By.CSS_SELECTOR, 'td[data-col="n"]').text.split()[-1] if r.find_element(By.CSS_SELECTOR, 'td[data-col="n"]').text else ""
                      for r in grid_rows(browser)]
    browser.execute_script("document.querySelector('.gridwrap').scrollLeft = 0")
    sort = lambda: browser.find_element(By.CSS_SELECTOR, 'th[data-col="n"] .colname, th .colname[title*="by n "]')
    sort().click()
    wait(browser, lambda b: column()[-3:] == ["", "", ""] and column()[0] == "0")
    assert "on this page only" in browser.find_element(By.CSS_SELECTOR, ".gridnote").text
    sort().click()
    wait(browser, lambda b: column()[-3:] == ["", "", ""] and column()[0] == "4")
    browser.find_element(By.CSS_SELECTOR, ".colchooser summary").click()
    by_label(browser, "Column attribute_03").click()
    wait(browser, lambda b: not b.find_elements(By.CSS_SELECTOR, 'td[data-col="attribute_03"]'))
    assert "Columns 16/17" in browser.find_element(By.CSS_SELECTOR, ".colchooser summary").text
    assert browser.find_element(By.CSS_SELECTOR, ".colchooser").get_attribute("open") is not None
    assert js_errors(browser) == []


def test_a_failed_read_keeps_the_last_page_dimmed_and_dated(browser):
    port = str(free_port())
    first = Server(port=port)
    try:
        create_table(first, "app", sk=None)
        put_many(first, "app", [{"pk": {"S": f"u{i}"}} for i in range(3)])
        open_console(browser, first, "#/table/app")
        wait(browser, lambda b: len(grid_rows(b)) == 3)
        first.stop()
        browser.find_element(By.TAG_NAME, "body").send_keys("r")
        note = wait(browser, lambda b: b.find_element(By.CSS_SELECTOR, ".summary .stale-note"))
        assert "still shows the page read at" in note.text
        assert len(grid_rows(browser)) == 3
        assert "stale" in browser.find_element(By.CSS_SELECTOR, ".gridwrap").get_attribute("class")
    finally:
        first.stop()


def test_the_query_form_lives_in_the_url_so_a_reload_or_a_link_keeps_it(server, browser):
    create_table(server, "app")
    put_many(server, "app", [{"pk": {"S": p}, "sk": {"S": f"s{i}"}, "n": {"N": str(i)}} for p in ("a", "b") for i in range(4)])
    open_console(browser, server, "#/table/app?op=Query&pk=b&skOp=%3E%3D&sk=s2")
    wait(browser, lambda b: len(grid_rows(b)) == 2)
    assert by_label(browser, "Partition key value").get_attribute("value") == "b"
    assert {r.find_element(By.CSS_SELECTOR, 'td[data-col="sk"]').text.split()[-1] for r in grid_rows(browser)} == {"s2", "s3"}
    by_label(browser, "Filter").send_keys("n = 3" + Keys.ENTER)
    wait(browser, lambda b: len(grid_rows(b)) == 1)
    assert "filter=n+%3D+3" in browser.current_url and "pk=b" in browser.current_url
    browser.refresh()
    wait(browser, lambda b: b.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true")
    wait(browser, lambda b: len(grid_rows(b)) == 1)
    assert by_label(browser, "Filter").get_attribute("value") == "n = 3"
    assert browser.find_element(By.CSS_SELECTOR, "h1").text == "app"
    assert js_errors(browser) == []


def test_a_partiql_write_says_what_it_did(server, browser):
    create_table(server, "app", sk=None)
    open_console(browser, server, "#/partiql")
    area = by_label(browser, "PartiQL statement")
    area.clear()
    area.send_keys("INSERT INTO \"app\" VALUE {'pk': 'u1', 'n': 1}")
    button(browser, "Run").click()
    done = wait(browser, lambda b: b.find_element(By.CSS_SELECTOR, ".write-done"))
    assert "INSERT done: one item inserted into app (1 WCU)" in done.text, done.text
    assert server.call("GetItem", {"TableName": "app", "Key": {"pk": {"S": "u1"}}})["Item"]["n"] == {"N": "1"}
    area.clear()
    area.send_keys("SELECT * FROM \"app\"")
    button(browser, "Run").click()
    wait(browser, lambda b: "1 item(s)" in b.find_element(By.CSS_SELECTOR, ".summary").text)
    assert js_errors(browser) == []
    browser.execute_script("localStorage.removeItem('ferrodyn.partiql')")


def test_locking_only_the_written_attributes_lets_an_unrelated_counter_through(server, browser):
    from selenium.webdriver.support.ui import Select
    create_table(server, "app", sk=None)
    put_many(server, "app", [{"pk": {"S": "u1"}, "status": {"S": "new"}, "visits": {"N": "1"}}])
    open_console(browser, server, "#/table/app")
    wait(browser, lambda b: len(grid_rows(b)) == 1)
    edit_cell(browser, "u1", "status", "active")
    wait(browser, lambda b: stage_count(b) == 1)
    server.call("UpdateItem", {"TableName": "app", "Key": {"pk": {"S": "u1"}}, "UpdateExpression": "ADD visits :one",
                               "ExpressionAttributeValues": {":one": {"N": "1"}}})
    browser.find_element(By.ID, "stage-button").click()
    wait(browser, lambda b: "Changed since staged" in b.find_element(By.ID, "stage-panel").text)
    Select(by_label(browser, "Lock scope")).select_by_value("attributes")
    wait(browser, lambda b: "Changed since staged" not in b.find_element(By.ID, "stage-panel").text
         and b.find_elements(By.CSS_SELECTOR, "#stage-panel li.card"))
    wait(browser, lambda b: b.find_element(By.ID, "commit-button").click() or True)
    wait(browser, lambda b: stage_count(b) == 0)
    item = server.call("GetItem", {"TableName": "app", "Key": {"pk": {"S": "u1"}}})["Item"]
    assert item["status"] == {"S": "active"} and item["visits"] == {"N": "2"}
    assert js_errors(browser) == []


def test_update_table_from_the_console_shows_the_request_and_follows_the_backfill(server, browser):
    from selenium.webdriver.support.ui import Select
    create_table(server, "app", sk=None)
    put_many(server, "app", [{"pk": {"S": f"u{i}"}, "status": {"S": "active" if i % 2 else "closed"}} for i in range(40)])
    open_console(browser, server, "#/table/app/details")
    wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, ".details .manage"))
    button(browser, "+ Add a global index…").click()
    d = dialog(browser)
    by_label(browser, "GSI name").send_keys("by-status")
    d.find_element(By.CSS_SELECTOR, 'input[name="new-gsi-pk-name"]').send_keys("status")
    wait(browser, lambda b: '"status"' in d.find_element(By.CSS_SELECTOR, '[aria-label="aws command"]').text)
    assert "aws dynamodb update-table" in d.find_element(By.CSS_SELECTOR, '[aria-label="aws command"]').text
    request = json.loads(d.find_element(By.CSS_SELECTOR, '[aria-label="UpdateTable request"]').text)
    assert request["GlobalSecondaryIndexUpdates"][0]["Create"]["IndexName"] == "by-status"
    assert {"AttributeName": "status", "AttributeType": "S"} in request["AttributeDefinitions"]
    wait(browser, lambda b: button(b, "Apply", d).click() or True)  # the preview redraws its Copy buttons
    # Details follows the index until it is ACTIVE and counts its items.
    wait(browser, lambda b: b.find_element(By.CSS_SELECTOR, ".details").get_attribute("data-changing") == "false"
         and "by-status" in b.find_element(By.CSS_SELECTOR, '[aria-label="GSI indexes"]').text, timeout=20)
    assert "ACTIVE" in browser.find_element(By.CSS_SELECTOR, '[aria-label="GSI indexes"]').text
    found = server.call("Query", {"TableName": "app", "IndexName": "by-status", "KeyConditionExpression": "#s = :v",
                                  "ExpressionAttributeNames": {"#s": "status"}, "ExpressionAttributeValues": {":v": {"S": "active"}}})
    assert found["Count"] == 20
    # Capacity: provisioned, with the index given the same capacity.
    wait(browser, lambda b: button(b, "Update table…").click() or True)
    d = dialog(browser)
    Select(by_label(browser, "Capacity mode")).select_by_value("PROVISIONED")
    wait(browser, lambda b: button(b, "Apply", d).click() or True)  # the preview redraws its Copy buttons
    wait(browser, lambda b: "Provisioned" in b.find_element(By.CSS_SELECTOR, ".details").text
         and b.find_element(By.CSS_SELECTOR, ".details").get_attribute("data-changing") == "false", timeout=20)
    table = server.call("DescribeTable", {"TableName": "app"})["Table"]
    assert table["BillingModeSummary"]["BillingMode"] == "PROVISIONED"
    assert table["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"]["ReadCapacityUnits"] == 5
    # Deletion protection, and DynamoDB's answer when a change is refused.
    wait(browser, lambda b: button(b, "Update table…").click() or True)
    d = dialog(browser)
    Select(by_label(browser, "Change")).select_by_value("protection")
    by_label(browser, "Deletion protection").click()
    wait(browser, lambda b: button(b, "Apply", d).click() or True)  # the preview redraws its Copy buttons
    wait(browser, lambda b: server.call("DescribeTable", {"TableName": "app"})["Table"].get("DeletionProtectionEnabled") is True)
    wait(browser, lambda b: button(b, "Update table…").click() or True)
    d = dialog(browser)
    Select(by_label(browser, "Change")).select_by_value("add-index")

    def filled(b):
        # The form redraws when the change is picked: (re)type until both stick.
        name, pk = by_label(b, "GSI name"), d.find_element(By.CSS_SELECTOR, 'input[name="new-gsi-pk-name"]')
        for field, text in ((name, "by-status"), (pk, "status")):
            if field.get_attribute("value") != text:
                field.clear()
                field.send_keys(text)
        return name.get_attribute("value") == "by-status" and pk.get_attribute("value") == "status"
    wait(browser, filled)
    wait(browser, lambda b: button(b, "Apply", d).click() or True)  # the preview redraws its Copy buttons
    error = wait(browser, lambda b: d.find_element(By.CSS_SELECTOR, ".error"))
    assert "ValidationException" in error.text or "already exists" in error.text, error.text
    assert js_errors(browser) == []


def test_a_bulk_change_on_the_whole_result_counts_first_and_asks_before_more_than_the_page(server, browser):
    create_table(server, "app", sk=None)
    put_many(server, "app", [{"pk": {"S": f"u{i:03}"}, "kind": {"S": "old" if i % 4 == 0 else "new"}} for i in range(300)])
    open_console(browser, server, "#/table/app")
    by_label(browser, "Filter").send_keys('kind = "old"' + Keys.ENTER)
    wait(browser, lambda b: "items" in b.find_element(By.CSS_SELECTOR, ".summary").text and grid_rows(b))
    shown = len(grid_rows(browser))
    assert shown < 75
    button(browser, "Bulk on whole result…").click()
    d = dialog(browser)
    preview = wait(browser, lambda b: "item(s)" in d.find_element(By.CSS_SELECTOR, ".preview").text and d.find_element(By.CSS_SELECTOR, ".preview"))
    assert "75 item(s) match (300 scanned" in preview.text, preview.text
    assert "Estimated writes: ≈ 75 WCU" in preview.text
    start = next(b for b in d.find_elements(By.CSS_SELECTOR, "button") if b.text == "Start")
    assert not start.is_enabled(), "more items than the page shows need confirming"
    assert scan_count(server, "app") == 300
    by_label(browser, "Confirm every item").click()
    assert start.is_enabled()
    start.click()
    wait(browser, lambda b: d.find_element(By.CSS_SELECTOR, ".state").text == "done", timeout=30)
    assert scan_count(server, "app") == 225
    assert js_errors(browser) == []


def accept_alert(browser):
    """Accepts a confirm() the page opens (perhaps after a request)."""
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait
    WebDriverWait(browser, 10).until(expected_conditions.alert_is_present()).accept()


def test_the_lock_view_filters_to_problems_links_owners_repairs_one_row_and_offers_the_index(server, browser):
    create_table(server, "app", pk="PK", sk="SK")
    for n, email in ((1, "ada@x.io"), (2, "grace@x.io"), (3, "alan@x.io")):
        subprocess.run([BINARY, "unique", "create", "--endpoint-url", server.base, "--table", "app",
                        "--entity", "account", "--unique", "email",
                        json.dumps({"PK": f"ACCT#{n}", "SK": "PROFILE", "email": email})],
                       check=True, capture_output=True)
    for n in (2, 3):  # two orphans
        server.call("DeleteItem", {"TableName": "app", "Key": {"PK": {"S": f"ACCT#{n}"}, "SK": {"S": "PROFILE"}}})
    open_console(browser, server, "#/table/app/locks")
    table = wait(browser, lambda b: visible(b, '[aria-label="Uniqueness markers"]'))[0]
    wait(browser, lambda b: table.text.count("ORPHAN") == 2 and "owners scanned" in b.find_element(By.CSS_SELECTOR, ".locks").text)
    by_label(browser, "Only problems").click()
    wait(browser, lambda b: "ada@x.io" not in b.find_element(By.CSS_SELECTOR, '[aria-label="Uniqueness markers"]').text)
    by_label(browser, "Repair UNIQ#EMAIL#grace@x.io").click()
    accept_alert(browser)
    wait(browser, lambda b: b.find_element(By.CSS_SELECTOR, '[aria-label="Uniqueness markers"]').text.count("ORPHAN") == 1)
    get = lambda pk: server.call("GetItem", {"TableName": "app", "Key": {"PK": {"S": pk}, "SK": {"S": "LOCK"}}}).get("Item")
    assert get("UNIQ#EMAIL#grace@x.io") is None and get("UNIQ#EMAIL#alan@x.io") is not None
    # The markers were listed by a Scan: the view offers the index.
    button(browser, "Create the uniq_attr index…").click()
    accept_alert(browser)
    wait(browser, lambda b: server.call("DescribeTable", {"TableName": "app"})["Table"].get("GlobalSecondaryIndexes"))
    index = server.call("DescribeTable", {"TableName": "app"})["Table"]["GlobalSecondaryIndexes"][0]
    assert index["KeySchema"] == [{"AttributeName": "uniq_attr", "KeyType": "HASH"}]
    # Owners link to the items view queried for them.
    by_label(browser, "Only problems").click()
    link = wait(browser, lambda b: next(a for a in b.find_elements(By.CSS_SELECTOR, '[aria-label="Uniqueness markers"] a.owner') if "ACCT#1" in a.text))
    link.click()
    wait(browser, lambda b: len(grid_rows(b)) == 1 and "ACCT#1" in grid_rows(b)[0].text)
    assert js_errors(browser) == []


def test_partitions_tab_lists_partitions_sizes_and_shards(server, browser):
    server.call("CreateTable", {
        "TableName": "app", "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"},
    })
    for i in range(40):
        server.call("PutItem", {"TableName": "app", "Item": {"pk": {"S": f"user-{i}"}, "note": {"S": "x" * 100}}})
    open_console(browser, server, "#/table/app/partitions")
    rows = wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, '[aria-label="Table partitions"] tbody tr'))
    # A new on-demand table: four partitions over the whole hash range,
    # every item in one of them, a shard each.
    assert len(rows) == 4
    counts = [int(r.find_elements(By.TAG_NAME, "td")[3].text) for r in rows]
    assert sum(counts) == 40 and all(c > 0 for c in counts), counts
    assert rows[0].find_elements(By.TAG_NAME, "td")[1].text.startswith("0000000000000000")
    assert rows[-1].find_elements(By.TAG_NAME, "td")[1].text.endswith("ffffffffffffffff")
    text = browser.find_element(By.CSS_SELECTOR, ".partitionsview").text
    assert "per-partition limits off" in text
    assert "Stream: 4 shard(s), 4 open" in text
    assert js_errors(browser) == []


def test_contributor_insights_switch_on_and_rank_the_most_read_keys(server, browser):
    server.call("CreateTable", {
        "TableName": "app", "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
    })
    open_console(browser, server, "#/table/app/partitions")
    enable = wait(browser, lambda b: [x for x in b.find_elements(By.CSS_SELECTOR, "section.insights button") if x.text == "Enable"])
    enable[0].click()
    wait(browser, lambda b: "ENABLED" in b.find_element(By.CSS_SELECTOR, "section.insights").text, timeout=10)
    for key, reads in (("hot", 5), ("warm", 2), ("cold", 1)):
        for _ in range(reads):
            server.call("GetItem", {"TableName": "app", "Key": {"pk": {"S": key}}, "ConsistentRead": True})
    browser.find_element(By.XPATH, "//section[contains(@class,'insights')]//button[.='Refresh']").click()
    top = wait(browser, lambda b: b.find_elements(By.CSS_SELECTOR, 'ol.topkeys[aria-label="PKC"] li'))
    assert [li.find_element(By.TAG_NAME, "code").text for li in top] == ["hot", "warm", "cold"]
    assert top[0].find_element(By.CSS_SELECTOR, ".num").text == "5"
    assert js_errors(browser) == []


def test_contributor_insights_of_a_global_index_have_a_card_of_their_own(server, browser):
    """Each GSI has its own Insights card beside the table's: enabled alone
    (UpdateContributorInsights with its IndexName), ranking the index's keys
    from the table's writes, with no sort-key rules when it has no sort key."""
    server.call("CreateTable", {
        "TableName": "orders", "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk", "status")],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        "GlobalSecondaryIndexes": [{"IndexName": "by-status", "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"}],
                                    "Projection": {"ProjectionType": "ALL"}}]})
    open_console(browser, server, "#/table/orders/partitions")
    card = lambda b: by_label(b, "Contributor insights of index by-status")  # noqa: E731
    table_card = lambda b: by_label(b, "Contributor insights")  # noqa: E731
    wait(browser, lambda b: "DISABLED" in card(b).text and "DISABLED" in table_card(b).text)
    assert "by-status" in card(browser).find_element(By.TAG_NAME, "h3").text
    button(browser, "Enable", card(browser)).click()
    wait(browser, lambda b: "ENABLED" in card(b).text, timeout=10)
    described = server.call("DescribeContributorInsights", {"TableName": "orders", "IndexName": "by-status"})
    assert described["ContributorInsightsStatus"] == "ENABLED"
    assert server.call("DescribeContributorInsights", {"TableName": "orders"})["ContributorInsightsStatus"] == "DISABLED"
    assert "DISABLED" in table_card(browser).text
    put_many(server, "orders", [{"pk": {"S": f"c{i}"}, "sk": {"S": "o"}, "status": {"S": "open" if i % 4 else "closed"}}
                                for i in range(8)])

    def ranked(b):
        button(b, "Refresh", card(b)).click()
        return card(b).find_elements(By.CSS_SELECTOR, 'ol.topkeys[aria-label="PKC"] li')

    top = wait(browser, ranked)
    assert [li.find_element(By.TAG_NAME, "code").text for li in top] == ["open", "closed"]
    # The index has no sort key: no item rules, only partition-key ones.
    assert [h.text for h in card(browser).find_elements(By.TAG_NAME, "h4")] == [
        "Most accessed partition keys (units)", "Most throttled partition keys (requests)"]
    browser.execute_script("arguments[0].scrollIntoView()", card(browser))
    if os.environ.get("SCREENSHOTS"):
        browser.save_screenshot(str(ROOT / "docs" / "screenshots" / "console-insights-gsi.png"))
    assert js_errors(browser) == []
