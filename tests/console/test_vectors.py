"""The vector search form of the item explorer: on a table with a vector
index the explorer offers Vectors beside Scan and Query; a pasted vector,
TopK and the search-schema values give SearchVectors' results in the grid,
most similar first with their scores, and the request and commands below
(long commands wrap beside their Copy button, never under it; the form is
readable in both themes)."""

import os

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from conftest import ROOT, open_console, wait, js_errors, by_label, button, grid_rows, ARTIFACTS



def shoot(browser, path):
    """With SCREENSHOTS=1, the screen goes to docs/ (the README shows it)."""
    if os.environ.get("SCREENSHOTS"):
        (ROOT / "docs" / path).parent.mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(ROOT / "docs" / path))


# WCAG contrast of each visible text (and placeholder) under `roots`
# against the first opaque background behind it: [ratio, what] below 4.5.
LOW_CONTRAST = """
const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
const lum = ([r, g, b]) => [r, g, b].map((v) => (v /= 255) <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4)
  .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
const behind = (el) => { for (let n = el; n; n = n.parentElement) { const c = rgb(getComputedStyle(n).backgroundColor); if (c.length && (c[3] ?? 1) > 0.5) return c; } return [255, 255, 255]; };
const low = [];
for (const el of document.querySelectorAll(arguments[0])) {
  if (!el.offsetParent) continue;
  const text = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim()) || el.value;
  const r = ratio(rgb(getComputedStyle(el).color), behind(el));
  if (text && r < 4.5) low.push([r, `${el.tagName} ${(el.value || el.textContent).trim().slice(0, 30)}`]);
  const p = el.placeholder && ratio(rgb(getComputedStyle(el, '::placeholder').color), behind(el));
  if (p && p < 4.5) low.push([p, `placeholder ${el.placeholder}`]);
}
return low;
"""


def copy_beside_code(browser, label):
    """The block's Copy button and code do not overlap, and the code needs
    no sideways scrolling."""
    return browser.execute_script("""
        const pre = document.querySelector(`pre[aria-label="${arguments[0]}"]`);
        const copy = pre.parentElement.querySelector('.copy').getBoundingClientRect();
        const code = pre.getBoundingClientRect();
        const apart = copy.left >= code.right || copy.bottom <= code.top;
        return apart && pre.scrollWidth <= pre.clientWidth;""", label)


def vector_table(server):
    server.call("CreateTable", {
        "TableName": "docs", "BillingMode": "PAY_PER_REQUEST",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                 {"AttributeName": "tenant", "AttributeType": "S"},
                                 {"AttributeName": "lang", "AttributeType": "S"}],
        "VectorIndexes": [{"IndexName": "by_emb", "VectorAttribute": {"AttributeName": "emb"}, "Dimensions": 3,
                           "DistanceFunction": "COSINE", "Projection": {"ProjectionType": "ALL"},
                           "SearchSchema": [{"AttributeName": "tenant", "SearchSchemaElementType": "HASH"},
                                            {"AttributeName": "lang", "SearchSchemaElementType": "INLINE_FILTER"}]}]})
    rows = [("intro", "en", [1, 0, 0]), ("guide", "en", [0.9, 0.1, 0]), ("faq", "fr", [0.7, 0.7, 0]),
            ("notes", "en", [0, 1, 0]), ("other", "en", [0, 0, 1])]
    for pk, lang, v in rows:
        server.call("PutItem", {"TableName": "docs", "Item": {
            "pk": {"S": pk}, "tenant": {"S": "acme"}, "lang": {"S": lang}, "title": {"S": f"The {pk}"},
            "emb": {"L": [{"N": str(x)} for x in v]}}})


def test_vector_search_shows_the_most_similar_items_with_scores(server, browser):
    vector_table(server)
    open_console(browser, server, "#/table/docs")
    browser.find_element(By.XPATH, "//div[@aria-label='Operation']/label[contains(., 'Vectors')]").click()
    assert Select(by_label(browser, "Vector index")).first_selected_option.text.startswith("by_emb")
    by_label(browser, "Search vector").send_keys("[1, 0.05, 0]")
    topk = by_label(browser, "TopK")
    topk.clear()
    topk.send_keys("3")
    # The HASH value is required: without it, DynamoDB's answer is shown.
    button(browser, "Search").click()
    wait(browser, lambda b: "SearchConditionExpression must be provided" in b.find_element(By.CSS_SELECTOR, ".summary").text)
    by_label(browser, "tenant equals").send_keys("acme")
    button(browser, "Search").click()
    wait(browser, lambda b: len(grid_rows(b)) == 3)
    keys = [r.find_elements(By.CSS_SELECTOR, "td")[1].text.split("\n")[-1] for r in grid_rows(browser)]
    assert keys == ["intro", "guide", "faq"], keys
    headers = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "table.grid thead th")]
    assert any("_score" in h for h in headers), headers
    summary = browser.find_element(By.CSS_SELECTOR, ".summary").text
    assert "3 results" in summary and "vector search bytes" in summary
    details = browser.find_element(By.CSS_SELECTOR, "details.request")
    assert '"IndexName": "by_emb"' in details.get_attribute("textContent")
    browser.execute_script("arguments[0].open = true", details)
    button(browser, "ferrodyn CLI", details).click()
    wait(browser, lambda b: "ferrodyn search-vectors 'docs' 'by_emb'" in details.get_attribute("textContent"))
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / "vector-search.png"))
    # Both commands are longer than the panel is wide: they wrap beside Copy.
    assert copy_beside_code(browser, "ferrodyn command")
    shoot(browser, "console-vector-search.png")
    button(browser, "aws CLI", details).click()
    assert copy_beside_code(browser, "aws command")
    assert len(by_label(browser, "aws command").text) > 200
    # Readable in the light theme (white on the orange Search button
    # included) and in the dark one (the header's theme button, or t).
    low = browser.execute_script(LOW_CONTRAST, "form.queryform *, .summary *, details.request *")
    assert low == [], low
    browser.find_element(By.ID, "theme-button").click()
    assert browser.execute_script("return document.documentElement.dataset.theme") == "dark"
    by_label(browser, "lang equals").clear()
    low = browser.execute_script(LOW_CONTRAST, "form.queryform *, .summary *, details.request *")
    assert low == [], low
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", details)
    shoot(browser, "screenshots/console-vector-search-dark.png")
    browser.find_element(By.ID, "theme-button").click()
    # An INLINE_FILTER value narrows the results.
    by_label(browser, "lang equals").send_keys("fr")
    button(browser, "Search").click()
    wait(browser, lambda b: len(grid_rows(b)) == 1 and "faq" in grid_rows(b)[0].text)
    assert js_errors(browser) == []
