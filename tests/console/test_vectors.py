"""The vector search form of the item explorer: on a table with a vector
index the explorer offers Vectors beside Scan and Query; a pasted vector,
TopK and the search-schema values give SearchVectors' results in the grid,
most similar first with their scores, and the request and commands below."""

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from conftest import open_console, wait, js_errors, by_label, button, grid_rows, ARTIFACTS


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
    # An INLINE_FILTER value narrows the results.
    by_label(browser, "lang equals").send_keys("fr")
    button(browser, "Search").click()
    wait(browser, lambda b: len(grid_rows(b)) == 1 and "faq" in grid_rows(b)[0].text)
    assert js_errors(browser) == []
