#!/usr/bin/env python3
"""Checks (and with --fix, applies) the one spelling of "cannot fail"
serialisations: serde_json's to_vec/to_string/to_value/to_writer (into a Vec) of our own plain data
(string map keys, no fallible Serialize impl) cannot fail, and every such
call says so the same way:

    serde_json::to_vec(&value).expect("plain data always serialises")

so a reader learns the reason once and a search finds them all. Prints each
call with another message and exits 1 if there is one.

    python3 scripts/cannot_fail.py crates [--fix]
"""
import pathlib
import re
import sys

MESSAGE = "plain data always serialises"
START = re.compile(r"serde_json::to_(?:vec|string|value|writer|string_pretty|vec_pretty|writer_pretty)\(")
EXPECT = re.compile(r'\s*\.expect\(\s*"([^"]*)"\s*\)', re.S)


def calls(text):
    """(start, end of the message's string, message) of each such call."""
    for start in START.finditer(text):
        depth, at = 1, start.end()
        while depth and at < len(text):
            depth += {"(": 1, ")": -1}.get(text[at], 0)
            at += 1
        expect = EXPECT.match(text, at)
        if expect:
            yield expect.start(1), expect.end(1), expect.group(1)


def main():
    root, fix = pathlib.Path(sys.argv[1]), "--fix" in sys.argv
    bad = []
    for path in sorted(root.rglob("*.rs")):
        text = path.read_text()
        found = [c for c in calls(text) if c[2] != MESSAGE]
        for start, _, message in found:
            bad.append(f"{path}:{text.count(chr(10), 0, start) + 1}: {message!r}")
        if fix and found:
            for start, end, _ in reversed(found):
                text = text[:start] + MESSAGE + text[end:]
            path.write_text(text)
    if bad and not fix:
        print(f"serialisations that cannot fail say so as .expect(\"{MESSAGE}\"):", *bad, sep="\n  ")
        sys.exit(1)


if __name__ == "__main__":
    main()
