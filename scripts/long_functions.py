#!/usr/bin/env python3
"""Lists functions outside tests longer than a limit (default 80 lines), longest first.

usage: scripts/long_functions.py [DIR] [LIMIT]      e.g. scripts/long_functions.py crates 80

A crude scanner, not a parser: a function runs from its `fn` line to the next
line that closes a brace at the same indentation; everything after a
`#[cfg(test)]` line in a file, `tests/` folders and `tests.rs` files are skipped.
Issue 8 asks that nothing outside tests exceed about 80 lines without a reason
written above it; this is how to find the offenders.
"""
import os
import re
import sys

FN = re.compile(r'^(\s*)(pub(\([a-z]+\))? )?(async )?(const )?fn (\w+)')


def long_functions(root, limit):
    found = []
    for folder, _, files in os.walk(root):
        if '/tests' in folder or '/target' in folder:
            continue
        for name in files:
            if not name.endswith('.rs') or name == 'tests.rs':
                continue
            path = os.path.join(folder, name)
            lines = open(path, encoding='utf-8').read().split('\n')
            for i, line in enumerate(lines):
                if line.strip().startswith('#[cfg(test)]'):
                    break
                m = FN.match(line)
                if not m:
                    continue
                indent = m.group(1)
                for j in range(i + 1, len(lines)):
                    closing = lines[j]
                    if closing.startswith(indent + '}') and len(closing) - len(closing.lstrip()) == len(indent):
                        if j - i + 1 > limit:
                            found.append((j - i + 1, path, m.group(6)))
                        break
    return sorted(found, reverse=True)


if __name__ == '__main__':
    root = sys.argv[1] if len(sys.argv) > 1 else 'crates'
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else 80
    for length, path, name in long_functions(root, limit):
        print(f'{length:5} {path} {name}')
