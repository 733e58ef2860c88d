#!/usr/bin/env python3
"""Checks the house rules of the muggins code base (ARCHITECTURE.md):

1. No import cycle between the modules of a crate. Each layer has one owner
   and dependencies point one way, so every `.rs` file under a crate's `src/`
   is a module and `crate::`, `super::`, `self::` and child-module paths (in
   `use` trees and inline in code) are edges X -> Y. A path resolves to the
   longest prefix that is a module, following `use` re-exports
   (`pub use child::X` in a parent sends `super::X` to `child`). Code under
   `#[cfg(test)]` is ignored, and so are edges between a module and its
   ancestors (a parent declares and re-exports its children; children use
   what the parent defines): a cycle runs between modules neither of which
   contains the other. Every strongly connected component of two or
   more modules is reported, with one file:line per edge inside it: the
   places to cut.
2. No file under a crate's `src/` or `tests/` over 600 lines.
3. No `too_many_arguments` allowance anywhere: split the arguments instead.

No function over 150 lines is checked by `checks/` (a real parser, syn),
which scripts/check-invariants.sh runs beside this script.

Usage: python3 scripts/check-structure.py [--sizes-only] [--list-cycles-verbose]
Prints one violation per line and exits 1, or a summary and exits 0.
Standard library only; it reads sources and never runs cargo.
"""
import bisect
import os
import re
import sys
from pathlib import Path

MAX_FILE_LINES = 600
SKIP_DIRS = {"fuzz", "target"}

LITERAL = re.compile(r"""//[^\n]*|/\*(?:[^*/]|\*(?!/)|/(?!\*)|/\*[\s\S]*?\*/)*\*/"""  # comments, one level nested
                     r'|(?<!\w)b?r(#*)"[\s\S]*?"\1|"(?:\\[\s\S]|[^"\\])*"'  # raw and plain strings
                     r"""|'(?:\\u\{\w*\}|\\.|[^'\\\n])'""")  # char literals, not lifetimes
CFG_TEST = re.compile(r"#\s*\[\s*cfg\s*\(\s*(?:all\s*\(\s*)?test\b[^\]]*\]")
USE_STMT = re.compile(r"(?<![\w$])(pub\s*(?:\([^)]*\)\s*)?)?use\s+([^;]*);")
USE_TOKEN = re.compile(r"::|[{},*]|[A-Za-z_]\w*")
PATH = re.compile(r"(?<![\w$:.'])([A-Za-z_]\w*(?:\s*::\s*[A-Za-z_]\w*)+)")
MOD_DECL = re.compile(r"(?<![\w$])mod\s+([A-Za-z_]\w*)\s*;")


def blank(text):
    return re.sub(r"[^\n]", " ", text)


def strip(text):
    """Blanks comments, string and char literals (keeping newlines and
    offsets), so braces and paths can be found by plain scanning."""
    return LITERAL.sub(lambda m: blank(m.group()), text)


def match_brace(clean, open_at):
    """Offset of the `}` closing the `{` at open_at (clean text)."""
    depth = 0
    for k in range(open_at, len(clean)):
        if clean[k] == "{":
            depth += 1
        elif clean[k] == "}":
            depth -= 1
            if depth == 0:
                return k
    return len(clean) - 1


class Source:
    def __init__(self, path):
        self.path = Path(os.path.normpath(path))
        self.text = path.read_text(encoding="utf-8", errors="replace")
        self.clean = strip(self.text)
        self.newlines = [m.start() for m in re.finditer("\n", self.text)]

    def line(self, offset):
        return bisect.bisect_left(self.newlines, offset) + 1

    def without_tests(self):
        """Clean text with `#[cfg(test)]` items blanked, and the names of
        `#[cfg(test)] mod name;` file modules."""
        out, test_mods = self.clean, set()
        for m in CFG_TEST.finditer(self.clean):
            brace, semi, close = (self.clean.find(c, m.end()) for c in "{;}")
            if 0 <= close < min(x if x >= 0 else len(self.clean) for x in (brace, semi)):
                end = close - 1  # a field or variant: blank up to the closing brace
            elif semi >= 0 and (brace < 0 or semi < brace):
                end = semi
                if d := MOD_DECL.search(self.clean, m.end(), semi + 1):
                    test_mods.add(d.group(1))
            elif brace >= 0:
                end = match_brace(self.clean, brace)
            else:
                continue
            out = out[: m.start()] + blank(out[m.start(): end + 1]) + out[end + 1:]
        return out, test_mods


def rs_files(root):
    """The .rs files under root, sorted, never looking into target/ or .git/."""
    found = []
    for d, subdirs, names in os.walk(root):
        subdirs[:] = [x for x in subdirs if x not in ("target", ".git")]
        found += [Path(d, n) for n in names if n.endswith(".rs")]
    return sorted(found)


def parse_use(body, base_offset):
    """Flattens a use tree into (segments, bound name or None, offset)."""
    toks = [(m.group(), base_offset + m.start()) for m in USE_TOKEN.finditer(body)]
    out, pos = [], 0

    def tree(prefix):
        nonlocal pos
        if pos < len(toks) and toks[pos][0] == "::":
            pos += 1
        if pos >= len(toks):
            return
        tok, off = toks[pos]
        pos += 1
        if tok == "{":
            while pos < len(toks) and toks[pos][0] != "}":
                if toks[pos][0] == ",":
                    pos += 1
                else:
                    tree(prefix)
            pos += 1
        elif tok == "*":
            out.append((prefix + ["*"], None, off))
        elif pos < len(toks) and toks[pos][0] == "::":
            tree(prefix + [tok])
        else:
            path = prefix if tok == "self" and prefix else prefix + [tok]
            name = path[-1]
            if pos + 1 < len(toks) and toks[pos][0] == "as":
                name, pos = toks[pos + 1][0], pos + 2
            out.append((path, name, off))

    if toks and toks[0][0] != "::":  # `use ::name` is another crate
        tree([])
    return out


def analyse_crate(crate_dir, verbose):
    """Returns (number of modules, violation lines) for one crate."""
    src = crate_dir / "src"
    root_file = src / "lib.rs" if (src / "lib.rs").exists() else src / "main.rs"
    files = {}
    for p in rs_files(src):
        rel = p.relative_to(src).with_suffix("").parts
        if p == root_file:
            mod = ()
        elif rel in (("lib",), ("main",)) or len(rel) > 1 and rel[0] == "bin":
            continue
        else:
            mod = rel[:-1] if rel[-1] == "mod" else rel
        files[mod] = Source(p)
    texts, test_only = {}, set()
    for mod, s in files.items():
        texts[mod], tm = s.without_tests()
        test_only |= {mod + (t,) for t in tm}
    for mod in list(files):
        if any(mod[: len(t)] == t for t in test_only):
            del files[mod], texts[mod]
    mods = set(files)

    def to_abs(mod, segs):
        """Path from the crate root, or None when it leaves the crate."""
        segs, up = list(segs), list(mod)
        if segs[0] == "crate":
            return segs[1:]
        if segs[0] in ("self", "super"):
            segs = segs[1:] if segs[0] == "self" else segs
            while segs and segs[0] == "super":
                if not up:
                    return None
                up, segs = up[:-1], segs[1:]
            return up + segs
        return up + segs if mod + (segs[0],) in mods else None

    uses, reexp = {}, {m: {} for m in mods}
    for mod, text in texts.items():
        uses[mod] = []
        for m in USE_STMT.finditer(text):
            for segs, name, off in parse_use(m.group(2), m.start(2)):
                ab = to_abs(mod, segs)
                if ab is None:
                    continue
                uses[mod].append((ab, off, bool(m.group(1))))
                if name and name not in ("_", "*"):
                    reexp[mod][name] = ab

    def resolve(segs, depth=0):
        cur, i = (), 0
        while i < len(segs) and cur + (segs[i],) in mods:
            cur, i = cur + (segs[i],), i + 1
        if i < len(segs) and depth < 8 and segs[i] in reexp[cur]:
            target = reexp[cur][segs[i]]
            if target[: len(cur) + 1] != list(cur) + [segs[i]]:  # not `use self::x`
                return resolve(target + list(segs[i + 1:]), depth + 1)
        return cur

    edges = {}  # (src, dst) -> [(file, line)]
    for mod, text in texts.items():
        s = files[mod]
        refs = list(uses[mod])
        blanked = USE_STMT.sub(lambda m: blank(m.group()), text)
        for m in PATH.finditer(blanked):
            if re.search(r"\(\s*in\s+$", blanked[max(0, m.start() - 8): m.start()]):
                continue  # pub(in crate::x) is visibility, not a dependency
            ab = to_abs(mod, re.split(r"\s*::\s*", m.group(1)))
            if ab is not None:
                refs.append((ab, m.start(), False))
        for ab, off, reexport in refs:
            dst = resolve(ab)
            # A module and its ancestors are one unit: a parent declares
            # and re-exports its children, and children use what their
            # parent defines. Cycles are counted between the others.
            if dst[: len(mod)] != mod and mod[: len(dst)] != dst:
                edges.setdefault((mod, dst), []).append((s.path, s.line(off), reexport))

    succ = {m: sorted({d for (a, d) in edges if a == m}) for m in mods}
    name = lambda m: "::".join(m) if m else "crate"
    out = []
    for comp in sccs(sorted(mods), succ):
        if len(comp) < 2:
            continue
        members = set(comp)
        cyc = shortest_cycle(comp[0], succ, members)
        head = " -> ".join(name(m) for m in cyc)
        rest = sorted(members - set(cyc))
        extra = f" (and {', '.join(name(m) for m in rest)} in the same knot)" if rest else ""
        out.append(f"cycle in {crate_dir.name}: {head}{extra}")
        for (a, b), where in sorted(edges.items()):
            if a in members and b in members:
                note = " (pub use re-export only)" if all(r for _, _, r in where) else ""
                for f, ln, _ in sorted(set(where)) if verbose else where[:1]:
                    out.append(f"  {f}:{ln}: {name(a)} -> {name(b)}{note}")
    return len(mods), out


def sccs(nodes, succ):
    """Tarjan's strongly connected components."""
    index, low, stack, on, comps = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in succ[v]:
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
            comps.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in nodes:
        if v not in index:
            visit(v)
    return comps


def shortest_cycle(start, succ, members):
    """A shortest cycle through start (breadth-first, inside members)."""
    paths, queue = {start: [start]}, [start]
    for v in queue:
        for w in succ[v]:
            if w == start:
                return paths[v] + [start]
            if w in members and w not in paths:
                paths[w] = paths[v] + [w]
                queue.append(w)
    return [start]


def main(argv):
    os.chdir(Path(__file__).resolve().parent.parent)
    sizes_only, verbose = "--sizes-only" in argv, "--list-cycles-verbose" in argv
    crates = sorted(d for d in Path(".").iterdir()
                    if d.is_dir() and d.name not in SKIP_DIRS and (d / "Cargo.toml").is_file() and (d / "src").is_dir())
    problems, n_mods = [], 0
    if not sizes_only:
        for c in crates:
            n, out = analyse_crate(c, verbose)
            n_mods += n
            problems += out
    n_cycles = sum(p.startswith("cycle in") for p in problems)
    for c in crates:
        for sub in ("src", "tests", "benches"):
            for p in rs_files(c / sub):
                s = Source(p)
                lines = len(s.text.splitlines())
                if sub != "benches" and lines > MAX_FILE_LINES:
                    problems.append(f"{p}: {lines} lines (over {MAX_FILE_LINES})")
    for p in rs_files("."):
        for i, ln in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
            if "too_many_arguments" in ln:
                problems.append(f"{p}:{i}: too_many_arguments allowance: {ln.strip()}")
    if problems:
        print("\n".join(problems))
        print(f"check-structure: {len(problems) - sum(p.startswith('  ') for p in problems)} violation(s)"
              + (f", {n_cycles} import cycle(s)" if n_cycles else ""), file=sys.stderr)
        return 1
    cyc = "cycles not checked" if sizes_only else f"{n_mods} modules, no import cycle"
    print(f"structure: {len(crates)} crates, {cyc}; no file over {MAX_FILE_LINES} lines; "
          "no too_many_arguments allowance")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
