"""The charts (referee/report/svg.py): well-formed SVG, labels escaped, and figures
where they belong."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from referee.report import svg

NS = "{http://www.w3.org/2000/svg}"


def parse(text: str) -> ET.Element:
    return ET.fromstring(text)


def test_error_bars_put_the_dot_at_the_value_and_the_whiskers_at_the_interval() -> None:
    root = parse(svg.error_bars("t", [("a<b>", 50.0, 10.0), ("none", None, None)], 0, 100))
    dot = root.find(f"{NS}circle")
    assert dot is not None and float(dot.get("cx", 0)) == 150 + 150  # the middle of 300 px
    lines = [(float(x.get("x1", 0)), float(x.get("x2", 0))) for x in root.iter(f"{NS}line")
             if x.get("stroke-width") == "2"]
    assert (270.0, 330.0) in lines  # 40 .. 60 on the axis
    texts = [t.text for t in root.iter(f"{NS}text")]
    assert "a<b>" in texts and "no games" in texts and "50.00 ± 10.00" in texts


def test_histogram_counts_every_value_once_and_ticks_whole_numbers() -> None:
    values = [105] + [120] * 9 + [110, 119]
    root = parse(svg.histogram("h", values, x_label="turns"))
    counts = [int(r.findtext(f"{NS}title", "").rsplit(": ", 1)[1].split()[0])
              for r in root.iter(f"{NS}rect")]
    assert sum(counts) == len(values) and max(counts) == 9
    ticks = [t.text for t in root.iter(f"{NS}text") if t.get("text-anchor") == "end"]
    assert ticks and all(t is not None and float(t) == int(float(t)) for t in ticks)


def test_latency_and_lines_and_bars_are_well_formed() -> None:
    parse(svg.latency("l", [("a", 0.05, 0.2), ("b", None, None), ("c", 0.0, 0.0)]))
    parse(svg.lines("r", [("a", [(0, 25.0), (1, 27.5)]), ("b", [(0, 25.0), (1, 22.0)])],
                    x_label="games", y_label="mu"))
    parse(svg.lines("r", [], x_label="g", y_label="m"))
    parse(svg.histogram("h", [], x_label="t"))
    root = parse(svg.bars("b", [("played out to the last player", 3), ("x", 9)]))
    widths = [float(r.get("width", 0)) for r in root.iter(f"{NS}rect")]
    assert widths == [round(280 * 3 / 9, 1), 280.0]
