#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The file-level call graph of a set of objects, and its cycles.

    scripts/file-cycles.py [-v] FILE.o...

File A calls file B when A's object leaves undefined a global function
that B's object defines (nm: T), as nm shows them.  References to data
(module parameters, counters) are no calls: a file's parameters live in
main.c, which calls every file's init and exit.  Prints each cycle among the files, with the symbols of each step,
and exits 1 if there is one; 0 if the graph has none.  -v prints every
edge too.  scripts/lint runs it on the module's objects.
"""
import subprocess
import sys
from os.path import basename


def nm(obj, *opts):
    """{symbol: nm's type letter}"""
    out = subprocess.run(["nm", *opts, obj], check=True, capture_output=True,
                         text=True).stdout
    return {w[-1]: w[-2] for w in map(str.split, out.splitlines()) if len(w) >= 2}


def sccs(nodes, edges):
    """Tarjan's strongly connected components, iteratively."""
    index, low, on, stack, out, n = {}, {}, set(), [], [], 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = n
        n += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = n
                    n += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                out.append(sorted(comp))
    return out


def a_cycle(comp, edges):
    """The shortest cycle inside comp."""
    return min((cycle_through(f, comp, edges) for f in comp), key=len)


def cycle_through(start, comp, edges):
    """A shortest cycle through start, inside comp (breadth first)."""
    inside = set(comp)
    prev, todo = {}, [start]
    while todo:
        v = todo.pop(0)
        for w in sorted(edges[v]):
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(prev[path[-1]])
                return path[::-1] + [start]
            if w in inside and w not in prev:
                prev[w] = v
                todo.append(w)
    return comp + [comp[0]]


def main(argv):
    verbose = bool(argv) and argv[0] == "-v"
    objs = argv[1:] if verbose else argv
    if not objs:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    files = [basename(o).removesuffix(".o") + ".c" for o in objs]
    defined = {}
    for f, o in zip(files, objs):
        for s, t in nm(o, "--defined-only", "-g").items():
            if t == "T":
                defined[s] = f
    edges = {f: {} for f in files}
    for f, o in zip(files, objs):
        for s in nm(o, "-u"):
            g = defined.get(s)
            if g and g != f:
                edges[f].setdefault(g, []).append(s)
    nedges = sum(len(e) for e in edges.values())
    if verbose:
        for f in files:
            for g, syms in sorted(edges[f].items()):
                print(f"# {f} -> {g}: {' '.join(sorted(syms))}")
    cycles = [c for c in sccs(files, edges) if len(c) > 1]
    for comp in cycles:
        path = a_cycle(comp, edges)
        steps = [f"{a} -> {b} ({', '.join(sorted(edges[a][b])[:3])})"
                 for a, b in zip(path, path[1:])]
        print(f"call cycle among {', '.join(comp)}:")
        for s in steps:
            print(f"    {s}")
    print(f"# {len(files)} files, {nedges} file-to-file edges, "
          f"{len(cycles)} cycle{'s' if len(cycles) != 1 else ''}")
    return 1 if cycles else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
