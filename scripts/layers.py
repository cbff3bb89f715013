#!/usr/bin/env python3
"""Calls go down: check that no file includes or calls a file of a higher layer.

The layers are listed in scripts/layers.txt, lowest first. The include graph
comes from the #include "..." lines; the call graph from the functions each
file defines (not static, or static inline in a header) and the names each
.c file calls (a header's prototypes are not calls; a macro's calls count
where it is used). A file may use its own layer and the layers below it.

    scripts/layers.py [--graph]       exit 1 and one line per violation
    scripts/layers.py --self-test     the check itself finds an upward call

--graph prints the layer-to-layer edges that exist, for docs/architecture.md.
--self-test adds a call from the session (transport) up into the control
handler, then an include of the handlers' header into the cache, to an
in-memory copy of the tree, and must see each refused.

Copyright (C) 2026 rtio developers
SPDX-License-Identifier: GPL-3.0-or-later
"""
import fnmatch
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLUDE_DIRS = ["common", "aiod", "vfs_rtio"]

DEF_RE = re.compile(r"^(?!static\b)(?:[A-Za-z_][\w \t\*]*?[\s\*])(\w+)\s*\(([^;]*)$")
INLINE_RE = re.compile(r"^static\s+inline\s+[\w \t\*]*?[\s\*](\w+)\s*\(")
CALL_RE = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
KEYWORDS = {"if", "for", "while", "switch", "return", "sizeof", "defined", "__attribute__",
            "_Static_assert", "offsetof", "__alignof__", "typeof"}


def load_layers():
    layers = []
    with open(os.path.join(ROOT, "scripts", "layers.txt")) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            name, _, pats = line.partition(":")
            layers.append((name.strip(), pats.split()))
    return layers


def layer_of(path, layers):
    for i, (_, pats) in enumerate(layers):
        if any(fnmatch.fnmatch(path, p) for p in pats):
            return i
    return None


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(?:\\.|[^"\\])*"', '""', text)


def sources():
    out = []
    for d in INCLUDE_DIRS + ["tools"]:
        for name in sorted(os.listdir(os.path.join(ROOT, d))):
            if name.endswith((".c", ".h")):
                out.append(d + "/" + name)
    return out


def resolve_include(src, inc):
    for d in [os.path.dirname(src)] + INCLUDE_DIRS:
        cand = os.path.normpath(os.path.join(d, inc))
        if os.path.exists(os.path.join(ROOT, cand)):
            return cand
    return None  # a system or Samba header


def definitions(path, text):
    names = set()
    lines = text.split("\n")
    for i, line in enumerate(lines):
        m = INLINE_RE.match(line) if path.endswith(".h") else None
        if m:
            names.add(m.group(1))
            continue
        if path.endswith(".c"):
            m = DEF_RE.match(line)
            # a definition: the body opens at column 0 within the next lines
            if m and m.group(1) not in KEYWORDS and not line.startswith((" ", "\t")):
                for nxt in lines[i:i + 6]:
                    if nxt.startswith("{"):
                        names.add(m.group(1))
                        break
                    if nxt.rstrip().endswith(";"):
                        break
    return names


def main(inject=None):
    layers = load_layers()
    files = sources()
    raw = {p: open(os.path.join(ROOT, p)).read() for p in files}
    texts = {p: strip_comments(raw[p]) for p in files}
    if inject is not None:
        raw[inject[0]] += inject[1]
        texts[inject[0]] += strip_comments(inject[1])
    unplaced = [p for p in files if layer_of(p, layers) is None]
    if unplaced:
        for p in unplaced:
            print("layers: %s is in no layer of scripts/layers.txt" % p)
        return 1
    defined_in = {}
    for p in files:
        for name in definitions(p, texts[p]):
            defined_in.setdefault(name, p)
    bad = []
    edges = set()
    for p in files:
        lp = layer_of(p, layers)
        # includes from the raw text: stripping string literals empties the names
        for line in raw[p].split("\n"):
            m = INCLUDE_RE.match(line)
            if not m:
                continue
            target = resolve_include(p, m.group(1))
            if target is None:
                continue
            lt = layer_of(target, layers)
            edges.add((layers[lp][0], layers[lt][0]))
            if lt > lp:
                bad.append("%s (%s) includes %s (%s)" % (p, layers[lp][0], target, layers[lt][0]))
        if p.endswith(".h"):
            continue  # a header declares; its users' calls are what count
        own = definitions(p, texts[p])
        seen = set()
        for m in CALL_RE.finditer(texts[p]):
            name = m.group(1)
            target = defined_in.get(name)
            if target is None or target == p or name in own or name in seen:
                continue
            seen.add(name)
            lt = layer_of(target, layers)
            edges.add((layers[lp][0], layers[lt][0]))
            if lt > lp:
                bad.append("%s (%s) calls %s() of %s (%s)" % (p, layers[lp][0], name, target,
                                                          layers[lt][0]))
    if "--graph" in sys.argv:
        for a, b in sorted(edges):
            if a != b:
                print("%s -> %s" % (a, b))
    for line in bad:
        print("layers: " + line)
    print("layers: %d files in %d layers, %d upward includes or calls"
          % (len(files), len(layers), len(bad)))
    return 1 if bad else 0


def self_test():
    if main(("aiod/session.c", "\nstatic void up(void)\n{\n\taiod_control_handle(0);\n}\n")) != 1:
        print("layers: self-test FAILED: an upward call went unnoticed")
        return 1
    if main(("aiod/cache.c", '\n#include "handlers.h"\n')) != 1:
        print("layers: self-test FAILED: an upward include went unnoticed")
        return 1
    print("layers: self-test ok: the upward call and the upward include were refused")
    return 0


if __name__ == "__main__":
    sys.exit(self_test() if "--self-test" in sys.argv else main())
