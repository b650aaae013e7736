"""Charts as inline SVG, drawn in Python: no chart library, no script, nothing to
load.  Each function returns one ``<svg>`` element as ``Markup`` (MarkupSafe: the
templates insert it as it is); every label is escaped here through MarkupSafe's
``escape``, every number is formatted here.  Owns the look of the charts and nothing
else.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from markupsafe import Markup
from markupsafe import escape as esc

PALETTE = ("#1f5fbf", "#c5221f", "#137333", "#b45309", "#7b1fa2", "#0e7c86", "#c2185b",
           "#5f6368", "#8a6d00", "#3949ab")


def colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def _f(x: float) -> str:
    return f"{x:.1f}"


def _ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    if hi <= lo:
        return [lo]
    raw = (hi - lo) / n
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    first = math.ceil(lo / step) * step
    out = []
    x = first
    while x <= hi + step * 1e-9:
        out.append(round(x, 10))
        x += step
    return out


def _num(x: float) -> str:
    return f"{x:g}" if abs(x) >= 0.01 or x == 0 else f"{x:.2g}"


def error_bars(title: str,
               rows: Sequence[tuple[str, float | None, float | tuple[float, float] | None]],
               lo: float, hi: float, *, fmt: str = ".2f", unit: str = "",
               better: str = "") -> Markup:
    """One horizontal row per label: a dot at the value and a whisker over value
    +- interval.  ``rows``: (label, value, half-width, or the interval's (low, high)
    when it is not symmetric)."""
    left, width, row_h = 150, 300, 22
    h = 30 + row_h * len(rows) + 12
    # room on the right for the value and its interval ("+111 [+77, +144]")
    room = 150 if any(isinstance(ci, tuple) for _, _, ci in rows) else 90
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + room}" height="{h}" '
           f'role="img" aria-label="{esc(title)}">']

    def x(v: float) -> float:
        return left + (v - lo) / (hi - lo) * width if hi > lo else left

    axis_y = 24 + row_h * len(rows)
    for t in _ticks(lo, hi):
        out.append(f'<line x1="{_f(x(t))}" y1="18" x2="{_f(x(t))}" y2="{axis_y}" stroke="#e3e6eb"/>'
                   f'<text x="{_f(x(t))}" y="{axis_y + 14}" text-anchor="middle">{_num(t)}{esc(unit)}</text>')
    if better:
        out.append(f'<text x="{left + width}" y="12" text-anchor="end" fill="#5b6475">{esc(better)}</text>')
    for i, (label, v, ci) in enumerate(rows):
        y = 30 + i * row_h
        out.append(f'<text x="{left - 8}" y="{y + 4}" text-anchor="end">{esc(label)}</text>')
        if v is None:
            out.append(f'<text x="{left + 4}" y="{y + 4}" fill="#7a8294">no games</text>')
            continue
        c = colour(i)
        span = None if ci is None else (ci if isinstance(ci, tuple) else (v - ci, v + ci))
        if span is not None:
            a, b = x(max(lo, span[0])), x(min(hi, span[1]))
            out.append(f'<line x1="{_f(a)}" y1="{y}" x2="{_f(b)}" y2="{y}" stroke="{c}" stroke-width="2"/>'
                       f'<line x1="{_f(a)}" y1="{y - 5}" x2="{_f(a)}" y2="{y + 5}" stroke="{c}" stroke-width="2"/>'
                       f'<line x1="{_f(b)}" y1="{y - 5}" x2="{_f(b)}" y2="{y + 5}" stroke="{c}" stroke-width="2"/>')
        if ci is None:
            label_v = format(v, fmt)
        elif isinstance(ci, tuple):
            label_v = f"{format(v, fmt)} [{format(ci[0], fmt)}, {format(ci[1], fmt)}]"
        else:
            label_v = f"{format(v, fmt)} ± {format(ci, fmt)}"
        out.append(f'<circle cx="{_f(x(v))}" cy="{y}" r="4.5" fill="{c}"/>'
                   f'<text x="{left + width + 8}" y="{y + 4}">{label_v}</text>')
    out.append("</svg>")
    return Markup("".join(out))


def bars(title: str, rows: Sequence[tuple[str, float]], *, fmt: str = "g") -> Markup:
    """Horizontal bars from zero, with their values."""
    left, width, row_h = 12 + 7 * max((len(label) for label, _ in rows), default=10), 280, 22
    top = max((v for _, v in rows), default=0) or 1
    h = 14 + row_h * len(rows)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 70}" height="{h}" '
           f'role="img" aria-label="{esc(title)}">']
    for i, (label, v) in enumerate(rows):
        y = 8 + i * row_h
        w = v / top * width
        out.append(f'<text x="{left - 8}" y="{y + 12}" text-anchor="end">{esc(label)}</text>'
                   f'<rect x="{left}" y="{y}" width="{_f(w)}" height="15" fill="{colour(i)}" opacity="0.8"/>'
                   f'<text x="{_f(left + w + 6)}" y="{y + 12}">{format(v, fmt)}</text>')
    out.append("</svg>")
    return Markup("".join(out))


def lines(title: str, series: Sequence[tuple[str, Sequence[tuple[float, float]]]], *,
          x_label: str, y_label: str) -> Markup:
    """Line chart, one line per series, with a legend."""
    left, top, width, height = 50, 12, 520, 220
    pts = [p for _, s in series for p in s]
    if not pts:
        return Markup('<svg xmlns="http://www.w3.org/2000/svg" width="200" height="30">'
                      '<text x="4" y="18">no games yet</text></svg>')
    x0, x1 = min(p[0] for p in pts), max(p[0] for p in pts)
    y0, y1 = min(p[1] for p in pts), max(p[1] for p in pts)
    pad = (y1 - y0) * 0.05 or 1
    y0, y1 = y0 - pad, y1 + pad
    legend_w = 170
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + legend_w}" '
           f'height="{top + height + 36}" role="img" aria-label="{esc(title)}">']

    def X(v: float) -> float:
        return left + (v - x0) / ((x1 - x0) or 1) * width

    def Y(v: float) -> float:
        return top + height - (v - y0) / (y1 - y0) * height

    for t in _ticks(y0, y1):
        out.append(f'<line x1="{left}" y1="{_f(Y(t))}" x2="{left + width}" y2="{_f(Y(t))}" stroke="#e3e6eb"/>'
                   f'<text x="{left - 5}" y="{_f(Y(t) + 4)}" text-anchor="end">{_num(t)}</text>')
    for t in _ticks(x0, x1):
        out.append(f'<text x="{_f(X(t))}" y="{top + height + 15}" text-anchor="middle">{_num(t)}</text>')
    out.append(f'<text x="{left + width / 2}" y="{top + height + 31}" text-anchor="middle" '
               f'fill="#5b6475">{esc(x_label)}</text>'
               f'<text x="12" y="{top + height / 2}" transform="rotate(-90 12 {top + height / 2})" '
               f'text-anchor="middle" fill="#5b6475">{esc(y_label)}</text>')
    for i, (name, s) in enumerate(series):
        c = colour(i)
        path = " ".join(f"{_f(X(a))},{_f(Y(b))}" for a, b in s)
        out.append(f'<polyline fill="none" stroke="{c}" stroke-width="1.8" points="{path}"/>'
                   f'<rect x="{left + width + 14}" y="{top + 6 + i * 18}" width="12" height="4" fill="{c}"/>'
                   f'<text x="{left + width + 30}" y="{top + 11 + i * 18}">{esc(name)}</text>')
    out.append("</svg>")
    return Markup("".join(out))


def histogram(title: str, values: Sequence[int], *, x_label: str, bins: int = 20) -> Markup:
    """Counts of ``values`` in equal bins."""
    left, top, width, height = 44, 10, 520, 180
    if not values:
        return Markup('<svg xmlns="http://www.w3.org/2000/svg" width="200" height="30">'
                      '<text x="4" y="18">no games yet</text></svg>')
    lo, hi = min(values), max(values)
    size = max(1, math.ceil((hi - lo + 1) / bins))
    n_bins = (hi - lo) // size + 1
    counts = [0] * n_bins
    for v in values:
        counts[(v - lo) // size] += 1
    top_c = max(counts)
    bw = width / n_bins
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 20}" '
           f'height="{top + height + 36}" role="img" aria-label="{esc(title)}">']
    for t in [t for t in _ticks(0, top_c, 4) if t == int(t)]:  # counts: whole numbers
        y = top + height - t / top_c * height
        out.append(f'<line x1="{left}" y1="{_f(y)}" x2="{left + width}" y2="{_f(y)}" stroke="#e3e6eb"/>'
                   f'<text x="{left - 5}" y="{_f(y + 4)}" text-anchor="end">{_num(t)}</text>')
    for i, c in enumerate(counts):
        h = c / top_c * height
        a = lo + i * size
        label = f"{a}" if size == 1 else f"{a}-{a + size - 1}"
        out.append(f'<rect x="{_f(left + i * bw + 1)}" y="{_f(top + height - h)}" '
                   f'width="{_f(max(bw - 2, 1))}" height="{_f(h)}" fill="#1f5fbf" opacity="0.8">'
                   f'<title>{label}: {c} games</title></rect>')
    for t in _ticks(lo, hi + 1, 6):
        out.append(f'<text x="{_f(left + (t - lo) / (size * n_bins) * width)}" '
                   f'y="{top + height + 15}" text-anchor="middle">{_num(t)}</text>')
    out.append(f'<text x="{left + width / 2}" y="{top + height + 31}" text-anchor="middle" '
               f'fill="#5b6475">{esc(x_label)}</text></svg>')
    return Markup("".join(out))


def latency(title: str, rows: Sequence[tuple[str, float | None, float | None]]) -> Markup:
    """Per bot, median and 99th percentile (ms) on a log scale: a dot at the median,
    a bar on to the p99."""
    left, width, row_h = 150, 300, 22
    vals = [v for _, a, b in rows for v in (a, b) if v is not None and v > 0]
    lo_e = math.floor(math.log10(min(vals))) if vals else -2
    hi_e = math.ceil(math.log10(max(vals))) if vals else 3
    hi_e = max(hi_e, lo_e + 1)
    h = 30 + row_h * len(rows) + 24
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 150}" height="{h}" '
           f'role="img" aria-label="{esc(title)}">']

    def x(v: float) -> float:
        v = max(v, 10 ** lo_e)
        return left + (math.log10(v) - lo_e) / (hi_e - lo_e) * width

    axis_y = 24 + row_h * len(rows)
    for e in range(lo_e, hi_e + 1):
        out.append(f'<line x1="{_f(x(10 ** e))}" y1="18" x2="{_f(x(10 ** e))}" y2="{axis_y}" '
                   f'stroke="#e3e6eb"/><text x="{_f(x(10 ** e))}" y="{axis_y + 14}" '
                   f'text-anchor="middle">{_num(10 ** e)} ms</text>')
    out.append(f'<text x="{left}" y="12" fill="#5b6475">● median  ▬ to the 99th percentile</text>')
    for i, (label, med, p99) in enumerate(rows):
        y = 30 + i * row_h
        out.append(f'<text x="{left - 8}" y="{y + 4}" text-anchor="end">{esc(label)}</text>')
        if med is None or p99 is None:
            out.append(f'<text x="{left + 4}" y="{y + 4}" fill="#7a8294">no decisions</text>')
            continue
        c = colour(i)
        out.append(f'<line x1="{_f(x(med))}" y1="{y}" x2="{_f(x(p99))}" y2="{y}" stroke="{c}" '
                   f'stroke-width="6" opacity="0.45"/><circle cx="{_f(x(med))}" cy="{y}" r="4.5" '
                   f'fill="{c}"/><text x="{left + width + 8}" y="{y + 4}">{med:.3g} / {p99:.3g} ms'
                   f'</text>')
    out.append("</svg>")
    return Markup("".join(out))


def llr(title: str, values: Sequence[float], lower: float, upper: float) -> Markup:
    """A sequential test's log-likelihood ratio after each set (``values[i]``: after
    set i + 1), between its two bounds drawn as dashed lines (H0 below, H1 above)."""
    left, top, width, height = 50, 12, 520, 200
    if not values:
        return Markup('<svg xmlns="http://www.w3.org/2000/svg" width="200" height="30">'
                      '<text x="4" y="18">no sets yet</text></svg>')
    n = len(values)
    y0, y1 = min(lower, *values), max(upper, *values)
    pad = (y1 - y0) * 0.08 or 1
    y0, y1 = y0 - pad, y1 + pad
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{left + width + 110}" '
           f'height="{top + height + 36}" role="img" aria-label="{esc(title)}">']

    def X(v: float) -> float:
        return left + v / n * width

    def Y(v: float) -> float:
        return top + height - (v - y0) / (y1 - y0) * height

    for t in _ticks(y0, y1):
        out.append(f'<line x1="{left}" y1="{_f(Y(t))}" x2="{left + width}" y2="{_f(Y(t))}" stroke="#e3e6eb"/>'
                   f'<text x="{left - 5}" y="{_f(Y(t) + 4)}" text-anchor="end">{_num(t)}</text>')
    for t in _ticks(0, n):
        if t == int(t):
            out.append(f'<text x="{_f(X(t))}" y="{top + height + 15}" text-anchor="middle">{_num(t)}</text>')
    for bound, name, c in ((upper, "H1: accept", "#137333"), (lower, "H0: accept", "#c5221f")):
        out.append(f'<line class="bound" data-bound="{bound:.6g}" x1="{left}" y1="{_f(Y(bound))}" '
                   f'x2="{left + width}" y2="{_f(Y(bound))}" stroke="{c}" stroke-dasharray="6 4"/>'
                   f'<text x="{left + width + 6}" y="{_f(Y(bound) + 4)}" fill="{c}">{name} '
                   f'{bound:+.2f}</text>')
    out.append(f'<line x1="{left}" y1="{_f(Y(0))}" x2="{left + width}" y2="{_f(Y(0))}" stroke="#9aa3b2"/>'
               f'<text x="{left + width / 2}" y="{top + height + 31}" text-anchor="middle" '
               f'fill="#5b6475">sets</text>'
               f'<text x="12" y="{top + height / 2}" transform="rotate(-90 12 {top + height / 2})" '
               f'text-anchor="middle" fill="#5b6475">LLR</text>')
    path = " ".join(f"{_f(X(i))},{_f(Y(v))}" for i, v in enumerate([0.0, *values]))
    out.append(f'<polyline class="llr" fill="none" stroke="#1f5fbf" stroke-width="1.8" '
               f'points="{path}"/><circle cx="{_f(X(n))}" cy="{_f(Y(values[-1]))}" r="4" '
               f'fill="#1f5fbf"/></svg>')
    return Markup("".join(out))
