#!/usr/bin/env python3
"""Fails when an #include climbs from a lower layer to a higher one, or when
files include each other in a circle.

The layers, bottom-up, are written once, here. A file may include files of
its own layer and of the layers below it. Usage: check_layers.py [ROOT]
(default: the repository holding this script). Prints the include graph's
layers and exits 0 when it is clean; prints one line per offending include
and exits 1 otherwise.
"""
import os
import re
import sys

# (layer, directories it holds), lowest first.
LAYERS = [
    ("vocabulary", ["classify/include/autocat", "classify/base"]),
    ("io", ["classify/io"]),
    ("text", ["classify/text"]),
    ("corpus", ["classify/corpus"]),
    ("metrics", ["classify/metrics"]),
    ("methods", ["classify/methods"]),
    ("model", ["classify/model"]),
    ("decide", ["classify/decide"]),
    ("train", ["classify/train"]),
    ("plugin", ["plugin"]),
    ("indexer", ["indexer"]),
    ("python", ["python"]),
]
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path):
    best = None
    for rank, (name, dirs) in enumerate(LAYERS):
        for d in dirs:
            if path == d or path.startswith(d + "/"):
                if best is None or len(d) > best[2]:
                    best = (rank, name, len(d))
    return None if best is None else best[:2]


def resolve(root, including, target):
    """The repository path `target` names, or None (system or generated)."""
    candidates = [target]
    if target.startswith("autocat/"):
        candidates = ["classify/include/" + target, "plugin/include/" + target]
    candidates.append(os.path.join(os.path.dirname(including), target))
    for c in candidates:
        if os.path.isfile(os.path.join(root, c)):
            return os.path.normpath(c)
    return None


def module(path):
    """A .h and its .cc are one node of the graph."""
    return os.path.splitext(path)[0]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(
        os.path.dirname(os.path.abspath(__file__)))
    files = []
    for _, dirs in LAYERS:
        for d in dirs:
            for base, _, names in os.walk(os.path.join(root, d)):
                for n in names:
                    if n.endswith((".h", ".cc")):
                        files.append(os.path.relpath(os.path.join(base, n), root))
    problems = []
    edges = {}
    for f in sorted(set(files)):
        with open(os.path.join(root, f), encoding="utf-8") as text:
            source = text.read()
        rank, name = layer_of(f)
        for target in INCLUDE.findall(source):
            path = resolve(root, f, target)
            if path is None:
                continue
            to = layer_of(path)
            if to is None:
                problems.append(f"{f}: includes {target}, which is in no layer")
                continue
            if to[0] > rank:
                problems.append(f"{f}: {name} layer includes {target} of the higher {to[1]} layer")
            if module(path) != module(f):
                edges.setdefault(module(f), set()).add(module(path))
    problems += circles(edges)
    if problems:
        for p in problems:
            print("check_layers: " + p)
        print(f"check_layers: FAIL: {len(problems)} include(s) against the layer order "
              "(scripts/check_layers.py lists the layers bottom-up)")
        return 1
    print("check_layers: layers, bottom-up: " + " < ".join(n for n, _ in LAYERS))
    print(f"check_layers: OK: {sum(len(v) for v in edges.values())} includes between "
          f"{len(set(module(f) for f in files))} modules, none upward, no circles")
    return 0


def circles(edges):
    """One problem per strongly connected group of modules (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append("modules include each other in a circle: " +
                             " -> ".join(sorted(group)))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


if __name__ == "__main__":
    sys.exit(main())
