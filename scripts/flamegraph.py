#!/usr/bin/env python3
"""A flame graph (SVG) from `perf script` output, with the standard library only.

    perf record -F 499 -g -o perf.data BINARY ARGS   # a build with frame pointers
    perf script -i perf.data | python3 scripts/flamegraph.py --root 'bench::double6::run' \
        --title 'muggins bench --suite double6' > flame.svg

Each sample's stack is read leaf first, as perf prints it, and drawn root at
the bottom: a frame's width is its share of the samples under the root.
Offsets (`+0x..`) are dropped; a function that calls itself directly (the
alpha-beta recursion) is drawn once per run of such calls, so the graph
shows where time goes rather than how deep the search went. With --root,
only samples whose stack holds a frame containing that text count, drawn
from that frame up. Colours: full:: orange, engine:: green, muggins (the
CLI) and jobs:: blue, everything else (std, libc, the kernel) grey.
"""

import argparse
import html
import re
import sys
from collections import defaultdict

FRAME = re.compile(r"^\s*[0-9a-f]+\s+(.+?)(\+0x[0-9a-f]+)?\s+\((.*)\)\s*$")


def stacks(lines):
    """Yields each sample's frames, root first."""
    frames = []
    for line in lines:
        if not line.strip():
            if frames:
                yield frames[::-1]
            frames = []
            continue
        m = FRAME.match(line)
        if m:
            frames.append(m.group(1))
    if frames:
        yield frames[::-1]


def fold(samples, root):
    """Counts per folded stack (a tuple of names, root first)."""
    counts = defaultdict(int)
    for frames in samples:
        if root:
            at = next((i for i, f in enumerate(frames) if root in f), None)
            if at is None:
                continue
            frames = frames[at:]
        folded = []
        for f in frames:
            if not folded or folded[-1] != f:
                folded.append(f)
        counts[tuple(folded)] += 1
    return counts


def tree(counts):
    """A nested dict: name -> [count, children]."""
    top = [0, {}]
    for stack, n in counts.items():
        node = top
        node[0] += n
        for name in stack:
            node = node[1].setdefault(name, [0, {}])
            node[0] += n
    return top


def colour(name):
    if name.startswith("full::") or "<full::" in name:
        return "#f0a050"
    if name.startswith("engine::") or "<engine::" in name:
        return "#7cc47c"
    if name.startswith("muggins::") or name.startswith("jobs::"):
        return "#79a9e0"
    return "#c8c8c8"


def short(name):
    """The name without generic arguments' noise, for labels."""
    return re.sub(r"::\{\{closure\}\}", "::{closure}", name)


def render(top, title, width=1200, row=17):
    total = top[0]
    rects = []
    depth_max = 0

    def walk(node, name, x, depth):
        nonlocal depth_max
        count, kids = node
        w = count / total * (width - 20)
        if w < 0.3:
            return
        depth_max = max(depth_max, depth)
        rects.append((x, depth, w, name, count))
        cx = x
        for kname, kid in sorted(kids.items()):
            walk(kid, kname, cx, depth + 1)
            cx += kid[0] / total * (width - 20)

    x = 10.0
    for name, kid in sorted(top[1].items()):
        walk(kid, name, x, 0)
        x += kid[0] / total * (width - 20)
    height = (depth_max + 1) * row + 60
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="monospace" font-size="11">',
        f'<rect width="{width}" height="{height}" fill="#fbfbf6"/>',
        f'<text x="{width / 2}" y="20" text-anchor="middle" font-size="15">{html.escape(title)}</text>',
        f'<text x="{width / 2}" y="38" text-anchor="middle" fill="#555">{total} samples; width: share of '
        f"samples; hover a frame for its name and share</text>",
    ]
    for x, depth, w, name, count in rects:
        y = height - 10 - (depth + 1) * row
        pct = 100.0 * count / total
        label = short(name)
        chars = int((w - 4) / 6.6)
        text = ""
        if chars >= 3:
            text = label if len(label) <= chars else label[: chars - 2] + ".."
        out.append(
            f'<g><title>{html.escape(label)} ({count} samples, {pct:.1f}%)</title>'
            f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{row - 1}" fill="{colour(name)}" '
            f'stroke="#fff" stroke-width="0.5" rx="2"/>'
            + (f'<text x="{x + 3:.1f}" y="{y + row - 5}">{html.escape(text)}</text>' if text else "")
            + "</g>"
        )
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", default="", help="draw from the frame containing this text (others dropped)")
    ap.add_argument("--title", default="flame graph")
    ap.add_argument("--width", type=int, default=1200)
    args = ap.parse_args()
    counts = fold(stacks(sys.stdin), args.root)
    if not counts:
        sys.exit("flamegraph.py: no samples (with --root, no stack holds that frame)")
    sys.stdout.write(render(tree(counts), args.title, args.width))


if __name__ == "__main__":
    main()
