"""A finished match's report (``referee match`` then ``referee report``), in a real
headless Chromium: the verdict, the Elo with its interval, the scores the test read,
the pairs' counts and the LLR over sets between its bounds, each as ``referee match
--json`` gives it; the match's standing, not its cap (``--max-sets``), says how many
games were played; the bots are ranked by the match's result (issue 23, 3)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.report.browser import watched_page
from tests.report.conftest import invoke

pytestmark = pytest.mark.slow

MATCH = ["match", "heuristic", "random", "--sprt", "elo0=0,elo1=150,alpha=0.1,beta=0.1",
         "--max-sets", "800", "--jobs", "1"]


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("match")
    code, _, err = invoke(*MATCH, "-o", str(tmp / "m"), "--quiet")
    assert code == 0, err
    # the same command again plays nothing and prints the summary
    code, out, err = invoke(*MATCH, "-o", str(tmp / "m"), "--json")
    assert code == 0, err
    summary = json.loads(out)
    assert summary["sprt"]["verdict"] == "H1" and summary["sets"] < 800
    code, out, err = invoke("report", str(tmp / "m"), "-o", str(tmp / "site"), "--no-games")
    assert code == 0, err
    return tmp / "site", summary


def test_a_finished_match_report_shows_its_verdict_elo_and_llr(
        finished: tuple[Path, dict[str, Any]], browser: Any, tmp_path: Path) -> None:
    site, s = finished
    page, w = watched_page(browser)
    page.goto((site / "index.html").resolve().as_uri())
    sets, games = s["sets"], s["games"]
    sub = page.inner_text(".subtitle")
    assert f"stopped after {games} games ({sets} sets): H1 accepted" in sub, sub
    body = page.inner_text("body")
    assert "of 1600" not in body and "of 800" not in body and "in progress" not in body
    # the verdict, as referee match says it
    assert page.get_attribute("#verdict", "data-verdict") == "H1"
    assert page.inner_text("#verdict").startswith(
        "H1 accepted: heuristic is better than random")

    def cell(field: str, attr: str = "data-value") -> Any:
        v = page.get_attribute(f"#match tr[data-field='{field}'] td[data-value]", attr)
        assert v is not None, field
        return json.loads(v)

    # (JSON has no infinity: an end of the interval past every set won is null)
    def same(a: float | None, b: float | None) -> bool:
        return a is None and b is None or a == pytest.approx(b)

    def elo(x: float | None) -> str:
        return "+inf" if x is None else f"{x:+.1f}"

    assert s["elo"] is not None and same(cell("elo"), s["elo"])
    lo, hi = s["elo_interval"]
    assert same(cell("elo", "data-low"), lo) and same(cell("elo", "data-high"), hi)
    elo_text = page.inner_text("#match tr[data-field='elo'] td[data-value]")
    assert elo_text == f"{elo(s['elo'])} [{elo(lo)}, {elo(hi)}]"
    assert cell("scores") == s["scores"] == "adjusted"
    assert cell("score") == pytest.approx(s["score"])
    assert cell("raw_score") == pytest.approx(s["raw_score"])
    assert cell("llr") == pytest.approx(s["sprt"]["llr"])
    assert cell("sets") == sets
    pairs = page.eval_on_selector_all("#pentanomial td", "ts => ts.map(t => Number(t.textContent))")
    assert pairs == s["pentanomial"] and sum(pairs) == sets
    # the LLR after every set counted, ending where the test stopped, and its bounds
    points = page.get_attribute("#llr-chart polyline.llr", "points")
    assert points is not None and len(points.split()) == sets + 1
    bounds = page.eval_on_selector_all("#llr-chart line.bound",
                                       "ls => ls.map(l => Number(l.dataset.bound))")
    assert sorted(bounds) == pytest.approx([s["sprt"]["lower"], s["sprt"]["upper"]], abs=1e-5)
    # ranked by the match's result: the winner first
    first = page.eval_on_selector("#standings tr[data-bot]", "r => r.dataset.bot")
    assert first == "heuristic"
    page.screenshot(path=str(tmp_path / "match-report.png"), full_page=True)
    assert w.errors == []
    page.close()
