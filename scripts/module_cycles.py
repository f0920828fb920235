#!/usr/bin/env python3
"""Lists the import cycles among a crate's top-level modules.

usage: scripts/module_cycles.py [SRC_DIR]     e.g. scripts/module_cycles.py crates/engine/src

A module `a` depends on `b` when a file of `a` (a.rs, or a/...) names
`crate::b` outside its tests (everything after a `#[cfg(test)]` line is
skipped). Prints each strongly connected component of more than one module
with the edges inside it, and exits 1 if there is any; `--allow a,b,c`
accepts a cycle among (a subset of) those modules only, a ratchet while the
last cycle is being cut: a new cycle, or one reaching another module, fails.
"""
import os
import re
import sys

REF = re.compile(r'\bcrate::(\w+)')
# `use crate::{a, b::X}` names several modules at once.
GROUP = re.compile(r'\bcrate::\{([^}]*)\}', re.S)


def modules(src):
    found = {}
    for name in sorted(os.listdir(src)):
        path = os.path.join(src, name)
        if name.endswith('.rs') and name not in ('lib.rs', 'main.rs'):
            found.setdefault(name[:-3], []).append(path)
        elif os.path.isdir(path):
            for folder, _, files in os.walk(path):
                found.setdefault(name, []).extend(
                    os.path.join(folder, f) for f in files if f.endswith('.rs'))
    return found


def code(path):
    text = open(path, encoding='utf-8').read()
    cut = text.find('#[cfg(test)]')
    text = text if cut < 0 else text[:cut]
    return '\n'.join(l for l in text.split('\n') if not l.strip().startswith('//'))


def graph(src):
    mods = modules(src)
    edges = {m: set() for m in mods}
    for m, paths in mods.items():
        for path in paths:
            text = code(path)
            names = set(REF.findall(text))
            for group in GROUP.findall(text):
                names.update(re.findall(r'(?:^|,)\s*(\w+)', group))
            edges[m].update(n for n in names if n in mods and n != m)
    return edges


def components(edges):
    """Tarjan's strongly connected components."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return [c for c in out if len(c) > 1]


def main():
    args = sys.argv[1:]
    allow = set()
    if '--allow' in args:
        i = args.index('--allow')
        allow = set(args[i + 1].split(','))
        del args[i:i + 2]
    src = args[0] if args else 'crates/engine/src'
    edges = graph(src)
    cycles = components(edges)
    for comp in cycles:
        print(f'cycle of {len(comp)}: {", ".join(comp)}')
        for m in comp:
            inside = sorted(n for n in edges[m] if n in comp)
            print(f'  {m} -> {", ".join(inside)}')
    if not cycles:
        print(f'{src}: no import cycles')
    unexpected = [c for c in cycles if not set(c) <= allow]
    sys.exit(1 if unexpected else 0)


if __name__ == '__main__':
    main()
