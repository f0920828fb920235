#!/usr/bin/env python3
"""Turns one library suite's report into per-test outcomes and checks them
against the documented exclusions (scripts/library-suites.exclusions).

usage: library_results.py FORMAT REPORT SUITE EXCLUSIONS OUT_TSV
  FORMAT: junit (pytest --junitxml), mocha (mocha's json reporter, possibly
  preceded by the tests' own stdout) or jest (jest --json --outputFile).

Writes OUT_TSV (test<TAB>passed|failed|skipped|excluded), prints
"SUITE: P passed, F failed, X excluded (failing as documented), S skipped",
lists the failures no exclusion names, and exits 1 if there are any.
An exclusion that matches no failing test is reported too (it may be stale),
without failing the run.
"""
import json
import sys
import xml.etree.ElementTree as ET


def junit(path):
    for case in ET.parse(path).getroot().iter("testcase"):
        # pytest's classname: the dotted module, then the class if any.
        name = f"{case.get('classname')}::{case.get('name')}"
        if any(child.tag in ("failure", "error") for child in case):
            yield name, "failed"
        elif any(child.tag == "skipped" for child in case):
            yield name, "skipped"
        else:
            yield name, "passed"


def mocha(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    report = json.loads(text[text.rfind('{\n  "stats"'):])
    failed = {t["fullTitle"] for t in report["failures"]}
    pending = {t["fullTitle"] for t in report["pending"]}
    for test in report["tests"]:
        title = test["fullTitle"]
        yield title, "failed" if title in failed else "skipped" if title in pending else "passed"


def jest(path):
    report = json.load(open(path, encoding="utf-8"))
    outcome = {"passed": "passed", "failed": "failed"}
    for suite in report["testResults"]:
        if suite.get("status") == "failed" and not suite.get("assertionResults"):
            yield suite["name"], "failed"  # the file did not even load
        for test in suite.get("assertionResults", []):
            yield test["fullName"], outcome.get(test["status"], "skipped")


def exclusions(path, suite):
    rules = []
    for line in open(path, encoding="utf-8"):
        if not line.strip() or line.startswith("#"):
            continue
        name, pattern, reason = line.rstrip("\n").split("\t", 2)
        if name == suite:
            rules.append((pattern, reason))
    return rules


def matches(pattern, test):
    return test.startswith(pattern[:-1]) if pattern.endswith("*") else test == pattern


def main():
    fmt, report, suite, exclusion_file, out = sys.argv[1:6]
    results = list({"junit": junit, "mocha": mocha, "jest": jest}[fmt](report))
    rules = exclusions(exclusion_file, suite)
    used, unexpected, counts = set(), [], {"passed": 0, "failed": 0, "skipped": 0, "excluded": 0}
    with open(out, "w", encoding="utf-8") as tsv:
        for test, outcome in results:
            if outcome == "failed":
                rule = next((r for r in rules if matches(r[0], test)), None)
                if rule:
                    used.add(rule[0])
                    outcome = "excluded"
                else:
                    unexpected.append(test)
            counts[outcome] += 1
            tsv.write(f"{test}\t{outcome}\n")
    print(f"{suite}: {counts['passed']} passed, {counts['failed']} failed, "
          f"{counts['excluded']} excluded (failing as documented), {counts['skipped']} skipped")
    for test in unexpected:
        print(f"  FAILED (not excluded): {test}")
    for pattern, _ in rules:
        if pattern not in used:
            print(f"  note: exclusion matched no failure (stale?): {pattern}")
    sys.exit(1 if unexpected else 0)


if __name__ == "__main__":
    main()
