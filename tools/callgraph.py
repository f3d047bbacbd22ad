#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
The layering of kmod/, checked (`make style` runs it).

  tools/callgraph.py [--edges] [KMOD_DIR]

Finds which kmod/*.c file uses which: a reference from inside a function
of one file to a function, or a global variable, defined in another. A
static inline function or a function-like macro of a header counts as
what it uses in turn, so a call of kgo_wakep() (sched.h) is a call of
kgo_wakep_slow() (idle.c).

Fails (exit 1) if
  - a file of the scheduler core (CORE, bottom first) uses a file listed
    after it in CORE, or a file outside the core that is not in BELOW,
    other than through the named hook (HOOKS) or a use listed in KNOWN,
    the cycles still to break; or
  - a kmod/*.c file is longer than MAX_LINES.

--edges prints every cross-file use of the core files, for a look at the
graph as a whole.

A small parser rather than cscope: comments and strings are dropped,
braces counted, and a top-level "name(...) {" is a definition. It knows
the C the module is written in, not C at large.
"""
import os
import re
import sys

# The scheduler core, bottom first: each file may use only those before it.
CORE = ["stack", "g", "runq", "proc", "m", "idle", "switch", "sched"]

# Leaves outside the core that it calls down into: they use nothing of
# the core but its state.
BELOW = ["budget", "check", "count", "floor", "trace"]

# The scheduler's state: data every layer reads, defined in sched.c with
# the init that fills it. Not a call.
SHARED = {"kgo_sched"}

# The upcalls the core makes by name: a task feed learns that its
# first G started (feed.h documents it); an exiting G of kgo_go_wg() is
# done on its WaitGroup (kgo.h).
HOOKS = {("switch", "kgo_feed_started"), ("switch", "kgo_wg_add")}

# Uses that still go up, each a cycle to break, named so that no other
# joins them unseen. Printed on every run.
KNOWN = {
    ("m", "kgo_schedule"): "the M's kthread body runs the M's loop",
    ("m", "kgo_block_m_start"): "the M's kthread body registers its preempt notifiers",
    ("m", "kgo_block_m_stop"): "the M's kthread body unregisters them",
    ("switch", "kgo_block_end"): "an exiting G ends the kgo_block_begin() it left open",
    ("idle", "kgo_hog_takeover"): "a parking M may be the relief of a hog (hog.c)",
}

MAX_LINES = 1200

IDENT = re.compile(r"[A-Za-z_]\w*")
KEYWORDS = set("""if for while switch return sizeof typeof do else case goto
break continue default struct union enum static inline const volatile
unsigned signed int long short char void bool u8 u16 u32 u64 s8 s16 s32 s64
extern __always_inline __noreturn likely unlikely""".split())


def strip(text):
    """Comments and string/char literals out, line structure kept."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def split_macros(text):
    """Returns (text without preprocessor lines, {macro: body})."""
    macros = {}
    lines = text.split("\n")
    keep = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("#"):
            full = line
            while full.endswith("\\") and i + 1 < len(lines):
                i += 1
                full = full[:-1] + " " + lines[i]
                keep.append("")
            m = re.match(r"\s*#\s*define\s+(\w+)\((.*?)\)(.*)", full)
            if m:
                macros[m.group(1)] = m.group(3)
            keep.append("")
        else:
            keep.append(line)
        i += 1
    return "\n".join(keep), macros


def parse(text):
    """Top-level functions {name: (static, body)} and variables {name}."""
    funcs, vars_ = {}, set()
    depth = 0
    stmt = []
    i, n = 0, len(text)
    body_start = None
    head = ""
    while i < n:
        c = text[i]
        if c == "{":
            if depth == 0:
                head = "".join(stmt)
                body_start = i
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                m = re.search(r"(\w+)\s*\((?:[^()]|\([^()]*\))*\)\s*$", head)
                if m and "=" not in head:
                    static = re.search(r"\bstatic\b", head) is not None
                    funcs[m.group(1)] = (static, text[body_start:i])
                    stmt = []
                else:
                    stmt = [head, "{}"]
        elif depth == 0:
            if c == ";":
                s = "".join(stmt)
                stmt = []
                if not re.search(r"\b(static|extern|typedef)\b", s):
                    m = re.match(r"[^(=]*?\b(\w+)\s*(\[[^\]]*\])?\s*(=|$)", s.strip(),
                                 re.S)
                    if m and "(" not in s.split("=")[0]:
                        vars_.add(m.group(1))
            else:
                stmt.append(c)
        i += 1
    return funcs, vars_


def load(kmod):
    files = sorted(f for f in os.listdir(kmod) if f.endswith((".c", ".h")))
    defs = {}		# global name -> defining .c (stem)
    bodies = {}		# .c stem -> [function bodies]
    inline = {}		# header inline function or macro -> body
    lines = {}
    for f in files:
        path = os.path.join(kmod, f)
        with open(path, encoding="utf-8") as fh:
            raw = fh.read()
        text, macros = split_macros(strip(raw))
        funcs, vars_ = parse(text)
        stem = f[:-2]
        if f.endswith(".h"):
            inline.update(macros)
            for name, (_, body) in funcs.items():
                inline[name] = body
            continue
        lines[f] = raw.count("\n")
        bodies[stem] = [body for _, body in funcs.values()]
        for name, (static, _) in funcs.items():
            if not static:
                defs[name] = stem
        for name in vars_:
            defs[name] = stem
    return defs, bodies, inline, lines


def uses(bodies, defs, inline):
    """{stem: {(used stem, name)}} over every cross-file use."""
    memo = {}

    def expand(name, seen):
        if name in memo:
            return memo[name]
        out = set()
        for tok in set(IDENT.findall(inline[name])):
            if tok in defs:
                out.add(tok)
            elif tok in inline and tok not in seen:
                out |= expand(tok, seen | {tok})
        memo[name] = out
        return out

    graph = {}
    for stem, bs in bodies.items():
        names = set()
        for body in bs:
            for tok in set(IDENT.findall(body)):
                if tok in KEYWORDS:
                    continue
                if tok in defs:
                    names.add(tok)
                elif tok in inline:
                    names |= expand(tok, {tok})
        graph[stem] = {(defs[t], t) for t in names if defs[t] != stem}
    return graph


def main():
    args = sys.argv[1:]
    edges = "--edges" in args
    args = [a for a in args if a != "--edges"]
    kmod = args[0] if args else os.path.join(os.path.dirname(__file__), "..", "kmod")
    defs, bodies, inline, lines = load(kmod)
    graph = uses(bodies, defs, inline)
    bad = []
    for stem in CORE:
        if stem not in graph:
            bad.append(f"kmod/{stem}.c: core file missing")
            continue
        level = CORE.index(stem)
        for dst, name in sorted(graph[stem]):
            if name in SHARED:
                continue
            ok = dst in BELOW or (dst in CORE and CORE.index(dst) < level)
            if edges:
                print(f"{stem} -> {dst}: {name}{'' if ok else '  (up)'}")
            if ok:
                continue
            if (stem, name) in HOOKS:
                print(f"hook: kmod/{stem}.c -> {name}() of kmod/{dst}.c")
                continue
            if (stem, name) in KNOWN:
                print(f"known: kmod/{stem}.c -> {name}() of kmod/{dst}.c: "
                      f"{KNOWN[(stem, name)]}")
                continue
            bad.append(f"kmod/{stem}.c: uses {name}() of kmod/{dst}.c, above it")
    for f, n in sorted(lines.items()):
        if n > MAX_LINES:
            bad.append(f"kmod/{f}: {n} lines, over {MAX_LINES}")
    for b in bad:
        print(b)
    print(f"callgraph: core {' < '.join(CORE)}: "
          f"{'ok' if not bad else f'{len(bad)} violation(s)'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
