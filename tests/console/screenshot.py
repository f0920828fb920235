"""Makes docs/console.png, the README's screenshot: a table's item grid with
three staged edits and the diff panel open. Run it with the console venv:
target/console-venv/bin/python tests/console/screenshot.py [out.png] [light|dark]"""

import sys
import time
from pathlib import Path

from selenium.webdriver.common.by import By

sys.path.insert(0, str(Path(__file__).parent))
from conftest import ROOT, Server, make_driver, open_console, put_many, wait  # noqa: E402


def seed(server):
    server.call("CreateTable", {
        "TableName": "app", "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": n, "AttributeType": "S"} for n in ("PK", "SK", "status")],
        "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
        "GlobalSecondaryIndexes": [{"IndexName": "by-status", "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"}],
                                    "Projection": {"ProjectionType": "ALL"}}]})
    server.call("CreateTable", {"TableName": "sessions", "BillingMode": "PAY_PER_REQUEST",
                                "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
                                "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}]})
    names = ["ada", "grace", "alan", "edsger", "barbara", "donald", "ken", "dennis", "margaret", "linus", "frances", "john"]
    balances = ["12345678901234567890.123456789012345678", "42", "-7.5", "0", "1024.25"]
    items = []
    for i, n in enumerate(names):
        items.append({"PK": {"S": f"ACCT#{i + 1:02}"}, "SK": {"S": "PROFILE"}, "email": {"S": f"{n}@example.com"},
                      "status": {"S": ["active", "trial", "closed"][i % 3]}, "balance": {"N": balances[i % 5]},
                      "roles": {"SS": ["admin", "dev", "ops"][: 1 + i % 3]}})
        items.append({"PK": {"S": f"UNIQ#account#email"}, "SK": {"S": f"UNIQ#account#email#{n}@example.com"},
                      "uniq_owner": {"M": {"PK": {"S": f"ACCT#{i + 1:02}"}, "SK": {"S": "PROFILE"}}}})
    put_many(server, "app", items)


def click(driver, css, text):
    next(b for b in driver.find_elements(By.CSS_SELECTOR, css) if b.text == text).click()
    time.sleep(0.4)


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else str(ROOT / "docs" / "console.png")
    server = Server()
    driver = make_driver()
    driver.set_window_size(1440, 860)
    try:
        seed(server)
        open_console(driver, server, "#/table/app")
        if len(sys.argv) > 2:
            driver.execute_script(f"document.documentElement.dataset.theme = '{sys.argv[2]}'")
        wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "table.grid tbody tr"))
        driver.execute_script("document.querySelector('[aria-label=\"Filter\"]').value = 'begins_with(PK, \"ACCT#\")'")
        driver.execute_script("document.querySelector('form.queryform').requestSubmit()")
        wait(driver, lambda d: len(d.find_elements(By.CSS_SELECTOR, "table.grid tbody tr")) == 12)
        time.sleep(0.5)
        driver.execute_script("document.querySelectorAll('table.grid tbody tr')[1].querySelector('td[data-col=status]')"
                              ".dispatchEvent(new MouseEvent('dblclick', {bubbles: true}))")
        time.sleep(0.3)
        value = driver.find_element(By.CSS_SELECTOR, '[aria-label="Value"]')
        value.clear()
        value.send_keys("suspended")
        click(driver, ".dialog button", "Stage change")
        driver.execute_script("document.querySelectorAll('table.grid tbody tr')[3].querySelector('td.sel input').click()")
        click(driver, ".toolbar button", "Stage delete")
        click(driver, ".toolbar button", "+ New item")
        area = driver.find_element(By.CSS_SELECTOR, '[aria-label="Item JSON"]')
        area.clear()
        area.send_keys('{"PK": "ACCT#13", "SK": "PROFILE", "email": "hedy@example.com", "status": "trial", '
                       '"balance": 99999999999999999999999999999999999999, "roles": {"$SS": ["dev"]}}')
        click(driver, ".dialog button", "Stage new item")
        driver.find_element(By.ID, "stage-button").click()
        time.sleep(4.5)  # let the toasts fade
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(out)
        print(out)
    finally:
        driver.quit()
        server.stop()


if __name__ == "__main__":
    main()
