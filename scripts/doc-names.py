#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""doc-names.py [FILE.md...]: the files and tests the docs name must exist.

In each Markdown file (default: README.md and docs/*.md), every `code
span` that names a path of the tree (module/..., recorder/...,
tests/..., scripts/..., include/..., docs/..., .ci/...; its first word,
globs allowed) must exist, and every `PROGRAM TEST` where PROGRAM is a
kselftest program of tests/ (defer_test, sess_test, ...) must name one
of its tests.  Prints each stale name with its place; exits 1 if any.
"""
import glob
import os
import re
import sys

TOP = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
DIRS = ('module/', 'recorder/', 'tests/', 'scripts/', 'include/', 'docs/', '.ci/')
SPAN = re.compile(r'`([^`\n]+)`')
TEST = re.compile(r'^(\w+_test)\s+(\w+)$')
# TEST(name), TEST_F(fixture, name), TEST_F_TIMEOUT(fixture, name, secs),
# and a FIXTURE_VARIANT_ADD(fixture, name) runs as fixture.name
DEF = re.compile(r'\b(?:TEST|TEST_F|TEST_F_TIMEOUT|FIXTURE_VARIANT_ADD)\s*\(\s*(?:\w+\s*,\s*)?(\w+)')


def tests_of(prog):
    """The test names of PROGRAM.c in tests/vm or tests/host, or None."""
    for d in ('tests/vm', 'tests/host'):
        path = os.path.join(TOP, d, prog + '.c')
        if os.path.exists(path):
            with open(path, encoding='utf-8') as f:
                return set(DEF.findall(f.read()))
    return None


def stale(md):
    """(line, name, why) for each name of MD that the tree lacks."""
    out = []
    with open(md, encoding='utf-8') as f:
        lines = f.read().split('\n')
    for n, line in enumerate(lines, 1):
        for span in SPAN.findall(line):
            span = span.strip()
            m = TEST.match(span)
            if m:
                names = tests_of(m.group(1))
                if names is not None and m.group(2) not in names:
                    out.append((n, span, 'no such test in ' + m.group(1)))
                continue
            word = span.split()[0].rstrip(':,;)')
            # not a path, or a pattern: $VAR, <x>, NAME
            if (not word.startswith(DIRS) or '$' in word or '<' in word or
                    re.search(r'[A-Z]{3,}', word)):
                continue
            if not glob.glob(os.path.join(TOP, word)):
                out.append((n, word, 'no such file'))
    return out


def main(argv):
    mds = argv[1:] or [os.path.join(TOP, 'README.md')] + sorted(
        glob.glob(os.path.join(TOP, 'docs', '*.md')))
    bad = 0
    for md in mds:
        for n, name, why in stale(md):
            print('%s:%d: `%s`: %s' % (os.path.relpath(md, TOP), n, name, why))
            bad += 1
    print('# %d Markdown files, %d stale names' % (len(mds), bad))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
