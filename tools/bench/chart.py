# SPDX-License-Identifier: GPL-2.0
"""The SVG chart of `make bench` (tools/bench/report writes it).

One panel per group (the scheduler under load, hot paths, rings,
blocking, net, fairness, other),
and in it one small plot per metric: kgo's bar beside each peer's, in
the metric's own unit on a linear scale from 0, whiskers from min to
max, each bar labelled with its median. A goal, where the row has one,
is a dashed red line across the plot, never a bar. A figure that could
not be measured is a grey "missing" slot with its reason on hover.
Each plot says whether lower or higher is better. Derived rows (ratios
of kgo's own rows) are plotted as one bar.

Ninety bars on one log axis were unreadable; a plot per metric with its
own axis lets each comparison be read at a glance, and the panel
headings group what belongs together.
"""

import math
from xml.sax.saxutils import escape

# kgo's blue, then Tableau 20's others for the peers: told apart by most
# eyes, and none of them kgo's, however many peers come.
REF_COLOUR = "#4e79a7"
COLOURS = ["#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2", "#edc948",
           "#9c755f", "#ff9da7", "#bab0ac", "#a0cbe8", "#ffbe7d", "#8cd17d",
           "#b6992d", "#86bcb6", "#d37295", "#79706e", "#d4a6c8"]
# A plot's medians further apart than this get a log scale: on a linear
# one the small bars beside a kthread's would not show.
LOG_SPREAD = 30
COLS, PLOT_W, PLOT_H, GAP = 5, 230, 170, 18
LEFT, TOP_PAD = 24, 34        # a plot's axis labels; its title
AXIS_W, BASE_PAD = 44, 38     # left of the bars; below them (impl names)

# Groups by metric prefix, in the order shown; the first match wins.
GROUPS = [
    # Before the hot paths, whose "yield" and "chan" would take them.
    ("Scheduler under load", ("yield_n", "chan_buf", "select", "chan_fanin", "mutex_")),
    ("Hot paths", ("spawn", "yield", "chan", "switch_raw", "wake", "tree", "mem",
                   "handoff")),
    ("Rings (NOPs)", ("nop_",)),
    ("Blocking work", ("blk_",)),
    ("Network echo", ("net_",)),
    ("Fairness", ("fair_",)),
    ("Scale counts", ("scale_",)),
]


def group_of(metric):
    for name, prefixes in GROUPS:
        if metric.startswith(prefixes):
            return name
    return "Other"


def number(v):
    if v >= 1e9:
        return f"{v / 1e9:.3g}G"
    if v >= 1e6:
        return f"{v / 1e6:.3g}M"
    if v >= 1e4:
        return f"{v / 1e3:.3g}k"
    return f"{v:.3g}" if v < 1000 else f"{v:.0f}"


def ratio(v):
    """Two significant digits, whole numbers from 10 up: 0.26, 2.5, 225."""
    return f"{v:.2g}" if v < 10 else f"{v:.0f}"


def nice_top(v):
    """A round axis top at or above @v: 1, 2 or 5 times a power of 10."""
    if v <= 0:
        return 1.0
    e = 10 ** math.floor(math.log10(v))
    for f in (1, 2, 5, 10):
        if v <= f * e:
            return f * e
    return 10 * e


def plot_width(m):
    """Two columns for a metric of more than four impls, or of four with
    a long name (system_wq, unbound_wq), else one."""
    names = set(m["impls"]) | set(m.get("missing", {}))
    wide = len(names) > 4 or len(names) == 4 and max(len(n) for n in names) > 7
    return PLOT_W * 2 + GAP if wide else PLOT_W


def plot(m, ref, colour, x0, y0):
    """One metric's plot, its top left at (@x0, @y0): SVG elements."""
    out = []
    impls = list(m["impls"])
    slots = impls + [i for i in m.get("missing", {}) if i not in impls]
    if ref in slots:
        slots.remove(ref)
        slots.insert(0, ref)
    tops = [s["max"] for s in m["impls"].values()] + ([m["goal"]] if m.get("goal") else [])
    top = nice_top(max(tops) * 1.08 if tops else 1)
    width = plot_width(m)
    ax = x0 + AXIS_W
    plot_w = width - AXIS_W - 8
    base = y0 + PLOT_H - BASE_PAD
    ph = base - (y0 + TOP_PAD)
    lows = [v for s in m["impls"].values() for v in (s["min"], s["median"]) if v > 0]
    log = bool(lows) and max(tops) / min(lows) > LOG_SPREAD
    if log:
        lo_exp = math.floor(math.log10(min(lows)))
        hi_exp = max(math.ceil(math.log10(max(tops))), lo_exp + 1)
        top = 10.0 ** hi_exp

    def y(v):
        if log:
            v = max(v, 10.0 ** lo_exp)
            return base - ph * (math.log10(v) - lo_exp) / (hi_exp - lo_exp)
        return base - ph * v / top

    better = "lower is better" if m["better"] == "lower" else "higher is better"
    out.append(f'<rect x="{x0}" y="{y0}" width="{width}" height="{PLOT_H}"'
               ' fill="#fafafa" stroke="#ddd"/>')
    out.append(f'<text x="{x0 + 6}" y="{y0 + 14}" font-weight="bold">'
               f'{escape(m["metric"])}</text>')
    out.append(f'<text x="{x0 + 6}" y="{y0 + 27}" fill="#555" font-size="10">'
               f'{escape(m["unit"])}, {better}{", log scale" if log else ""}</text>')
    marks = [10.0 ** e for e in range(lo_exp, hi_exp + 1)] if log else [0, top / 2, top]
    for v in marks:
        out.append(f'<line x1="{ax}" x2="{ax + plot_w}" y1="{y(v):.1f}" y2="{y(v):.1f}"'
                   ' stroke="#e4e4e4"/>')
        out.append(f'<text x="{ax - 4}" y="{y(v) + 3:.1f}" text-anchor="end" fill="#777"'
                   f' font-size="10">{number(v) if v else "0"}</text>')
    n = max(len(slots), 1)
    bw = min(36, plot_w / n - 6)
    for k, impl in enumerate(slots):
        cx = ax + plot_w * (k + 0.5) / n
        room = max(9, int(plot_w / n / 6.5))    # characters at 10px
        name = impl if len(impl) <= room else impl[:room - 1] + "."
        out.append(f'<text x="{cx:.1f}" y="{base + 13:.1f}" text-anchor="middle"'
                   f' font-size="10">{escape(name)}<title>{escape(impl)}</title></text>')
        s = m["impls"].get(impl)
        if s is None:
            why = "; ".join(m.get("missing", {}).get(impl, ["no figure"]))
            out.append(f'<rect x="{cx - bw / 2:.1f}" y="{base - 30:.1f}" width="{bw:.1f}"'
                       f' height="30" fill="none" stroke="#999" stroke-dasharray="3 2">'
                       f'<title>{escape(impl)}: missing: {escape(why)}</title></rect>')
            out.append(f'<text x="{cx:.1f}" y="{base - 12:.1f}" text-anchor="middle"'
                       ' font-size="9" fill="#777">missing</text>')
            continue
        t = y(s["median"])
        out.append(f'<rect x="{cx - bw / 2:.1f}" y="{t:.1f}" width="{bw:.1f}"'
                   f' height="{base - t:.1f}" fill="{colour(impl)}">'
                   f'<title>{escape(impl)}: {number(s["median"])} {escape(m["unit"])}'
                   f' [{number(s["min"])}-{number(s["max"])}]</title></rect>')
        if s["max"] > s["min"]:
            out.append(f'<path d="M{cx:.1f} {y(s["max"]):.1f}V{y(s["min"]):.1f}'
                       f'M{cx - 4:.1f} {y(s["max"]):.1f}h8M{cx - 4:.1f} {y(s["min"]):.1f}h8"'
                       ' stroke="#222" fill="none"/>')
        out.append(f'<text x="{cx:.1f}" y="{min(t, y(s["max"])) - 3:.1f}" text-anchor="middle"'
                   f' font-size="10">{number(s["median"])}</text>')
        sp = m.get("speedup", {}).get(impl)
        if sp:
            out.append(f'<text x="{cx:.1f}" y="{base + 25:.1f}" text-anchor="middle"'
                       f' font-size="9" fill="#555">kgo {ratio(sp["median"])}x</text>')
    if m.get("goal"):
        g = y(m["goal"])
        out.append(f'<line x1="{ax}" x2="{ax + plot_w}" y1="{g:.1f}" y2="{g:.1f}"'
                   ' stroke="#d62728" stroke-width="1.5" stroke-dasharray="6 3"/>')
        out.append(f'<text x="{ax + plot_w}" y="{g - 3:.1f}" text-anchor="end" font-size="10"'
                   f' fill="#d62728">goal {number(m["goal"])}</text>')
    out.append(f'<line x1="{ax}" x2="{ax + plot_w}" y1="{base}" y2="{base}" stroke="#333"/>')
    return out


def svg(metrics, ref, fmt=number, header=(), icount=False):
    """The chart of @metrics; @header lines (the configuration) on top."""
    del fmt  # the plots label with number(): short, for small plots
    impls = [ref]
    for m in metrics:
        impls += [i for i in list(m["impls"]) + list(m.get("missing", {})) if i not in impls]
    palette = {i: COLOURS[n % len(COLOURS)] for n, i in enumerate(impls[1:])}
    palette[ref] = REF_COLOUR

    grouped = {}
    for m in metrics:
        grouped.setdefault(group_of(m["metric"]), []).append(m)
    order = [g for g, _ in GROUPS] + ["Other"]
    runs = max([s["runs"] for m in metrics for s in m["impls"].values()] or [0])

    width = LEFT * 2 + COLS * PLOT_W + (COLS - 1) * GAP
    head = [f"{ref} and its peers: median of {runs} run{'s' if runs != 1 else ''}"
            ", whiskers min to max; under each peer, kgo's paired speed-up (above 1: kgo"
            " better)"]
    if icount:
        head.append("-icount: the guest's clock counts instructions: 'insn' figures are"
                    " instructions, not time")
    else:
        head.append("emulated (TCG) VM: compare the ratios, not the times")
    head += list(header)
    y = 28
    out = []
    out.append(f'<text x="{LEFT}" y="{y}" font-size="17" font-weight="bold">'
               f'{escape(head[0])}</text>')
    for line in head[1:]:
        y += 17
        out.append(f'<text x="{LEFT}" y="{y}" fill="#444">{escape(line)}</text>')
    y += 12
    x = LEFT
    for impl in impls:
        out.append(f'<rect x="{x}" y="{y}" width="12" height="12" fill="{palette[impl]}"/>')
        out.append(f'<text x="{x + 16}" y="{y + 10}">{escape(impl)}</text>')
        x += 30 + 7 * len(impl)
    out.append(f'<line x1="{x}" x2="{x + 24}" y1="{y + 6}" y2="{y + 6}" stroke="#d62728"'
               ' stroke-width="1.5" stroke-dasharray="6 3"/>')
    out.append(f'<text x="{x + 28}" y="{y + 10}">goal</text>')
    y += 28
    for g in order:
        ms = grouped.get(g)
        if not ms:
            continue
        out.append(f'<text x="{LEFT}" y="{y + 16}" font-size="15" font-weight="bold">'
                   f'{escape(g)}</text>')
        out.append(f'<line x1="{LEFT}" x2="{width - LEFT}" y1="{y + 22}" y2="{y + 22}"'
                   ' stroke="#999"/>')
        y += 30
        col = 0
        for m in ms:
            span = 2 if plot_width(m) > PLOT_W else 1
            if col + span > COLS:
                col = 0
                y += PLOT_H + GAP
            out += plot(m, ref, palette.get, LEFT + col * (PLOT_W + GAP), y)
            col += span
        y += PLOT_H + GAP + 8
    height = y + 10
    return "\n".join([f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}"'
                      f' height="{height}" viewBox="0 0 {width} {height}"'
                      ' font-family="sans-serif" font-size="12">',
                      f'<rect width="{width}" height="{height}" fill="white"/>']
                     + out + ["</svg>\n"])
