# SPDX-License-Identifier: GPL-2.0
"""The SVG chart of `make bench` (tools/bench/report writes it).

One bar group per metric, one bar per impl. Metrics come in different
units and directions (ns/op lower is better, ops/s higher), so each bar
is that impl's performance relative to kgo's median, the right way up:
kgo's median over the impl's for times, the impl's over kgo's for
rates. kgo's bar is always 1; a peer's bar above 1 means the peer did
better. Whiskers span the impl's min to max, on the same scale.

The scale is logarithmic: a peer twice as fast and one twice as slow
then stand the same distance from kgo's line.
"""

import math
from xml.sax.saxutils import escape

# Tableau 10: told apart by most eyes; kgo gets the blue.
COLOURS = ["#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1",
           "#76b7b2", "#edc948", "#9c755f", "#ff9da7", "#bab0ac"]
BAR_W, BAR_GAP, GROUP_MIN_W, GROUP_GAP = 28, 4, 120, 24
LEFT, RIGHT, TOP, PLOT_H, BOTTOM = 64, 24, 92, 300, 64


def relative(m, impl, ref, key):
    """@impl's @key figure of metric @m as performance relative to @ref."""
    v, r = m["impls"][impl][key], m["impls"][ref]["median"]
    return v / r if m["better"] == "higher" else r / v


def number(v):
    return f"{v:.3g}" if v < 1000 else f"{v:.0f}"


def ratio(v):
    return f"{v:.2g}" if v < 10 else f"{v:.0f}"


def svg(metrics, ref, fmt=number):
    """The chart of @metrics, relative to impl @ref; @fmt writes a figure."""
    impls = [ref]  # then the peers as they first come
    for m in metrics:
        impls += [i for i in m["impls"] if i not in impls]
    colour = {i: COLOURS[n % len(COLOURS)] for n, i in enumerate(impls)}

    # Every bar and whisker end, as relative figures, fixes the scale.
    groups = []
    for m in metrics:
        bars = []
        if ref in m["impls"]:
            for impl in impls:
                if impl in m["impls"]:
                    lo, hi = sorted((relative(m, impl, ref, "min"),
                                     relative(m, impl, ref, "max")))
                    bars.append((impl, relative(m, impl, ref, "median"), lo, hi))
        groups.append((m, bars))
    values = [1.0] + [v for _, bars in groups for b in bars for v in b[1:]]
    lo_exp = math.floor(math.log10(min(values)))
    hi_exp = math.ceil(math.log10(max(values)))
    if lo_exp == hi_exp:
        lo_exp, hi_exp = lo_exp - 1, hi_exp + 1

    def y(v):
        return TOP + PLOT_H * (hi_exp - math.log10(v)) / (hi_exp - lo_exp)

    widths = [max(GROUP_MIN_W, len(bars) * (BAR_W + BAR_GAP)) for _, bars in groups]
    width = max(560, LEFT + sum(widths) + GROUP_GAP * len(groups) + RIGHT)
    height = TOP + PLOT_H + BOTTOM
    runs = max([s["runs"] for m in metrics for s in m["impls"].values()] or [0])

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}"'
           f' viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{LEFT}" y="22" font-size="16" font-weight="bold">'
           f'{escape(ref)} and its peers: performance relative to {escape(ref)}'
           ' (higher is better)</text>',
           f'<text x="{LEFT}" y="40" fill="#444">median of {runs} run{"s" if runs != 1 else ""}'
           ', whiskers min to max, log scale; in an emulated (TCG) VM,'
           ' so the ratios are the result, not the times</text>']

    # The legend.
    x = LEFT
    for impl in impls:
        out.append(f'<rect x="{x}" y="54" width="12" height="12" fill="{colour[impl]}"/>')
        out.append(f'<text x="{x + 16}" y="64">{escape(impl)}</text>')
        x += 28 + 7 * len(impl)

    # Gridlines: each decade, and its 2 and 5 when there are few decades.
    marks = []
    for e in range(lo_exp, hi_exp + 1):
        marks.append((10.0 ** e, True))
        if hi_exp - lo_exp <= 3 and e < hi_exp:
            marks += [(2 * 10.0 ** e, False), (5 * 10.0 ** e, False)]
    for v, major in marks:
        out.append(f'<line x1="{LEFT}" x2="{width - RIGHT}" y1="{y(v):.1f}" y2="{y(v):.1f}"'
                   f' stroke="{"#bbb" if major else "#e4e4e4"}"/>')
        out.append(f'<text x="{LEFT - 6}" y="{y(v) + 4:.1f}" text-anchor="end"'
                   f' fill="{"#333" if major else "#888"}">{number(v)}</text>')
    out.append(f'<line x1="{LEFT}" x2="{width - RIGHT}" y1="{y(1):.1f}" y2="{y(1):.1f}"'
               f' stroke="{colour[ref]}" stroke-dasharray="6 3"/>')

    base = y(10.0 ** lo_exp)
    x = LEFT + GROUP_GAP / 2
    for (m, bars), w in zip(groups, widths):
        centre = x + w / 2
        bx = centre - len(bars) * (BAR_W + BAR_GAP) / 2 + BAR_GAP / 2
        for impl, rel, lo, hi in bars:
            top = y(rel)
            mid = bx + BAR_W / 2
            out.append(f'<rect x="{bx:.1f}" y="{top:.1f}" width="{BAR_W}"'
                       f' height="{base - top:.1f}" fill="{colour[impl]}">'
                       f'<title>{escape(m["metric"])} {escape(impl)}: {rel:.3g}</title></rect>')
            if hi > lo:
                out.append(f'<path d="M{mid:.1f} {y(hi):.1f}V{y(lo):.1f}'
                           f'M{mid - 4:.1f} {y(hi):.1f}h8M{mid - 4:.1f} {y(lo):.1f}h8"'
                           ' stroke="#222" fill="none"/>')
            out.append(f'<text x="{mid:.1f}" y="{min(top, y(hi)) - 4:.1f}"'
                       f' text-anchor="middle" font-size="11">{ratio(rel)}</text>')
            bx += BAR_W + BAR_GAP
        if ref in m["impls"]:
            sub = f'{ref} {fmt(m["impls"][ref]["median"])} {m["unit"]}'
        else:
            sub = f"no {ref} figure"
        out.append(f'<text x="{centre:.1f}" y="{base + 18:.1f}" text-anchor="middle"'
                   f' font-weight="bold">{escape(m["metric"])}</text>')
        out.append(f'<text x="{centre:.1f}" y="{base + 34:.1f}" text-anchor="middle"'
                   f' fill="#555" font-size="11">{escape(sub)}</text>')
        x += w + GROUP_GAP

    out.append(f'<line x1="{LEFT}" x2="{width - RIGHT}" y1="{base:.1f}" y2="{base:.1f}"'
               ' stroke="#333"/>')
    out.append("</svg>\n")
    return "\n".join(out)
