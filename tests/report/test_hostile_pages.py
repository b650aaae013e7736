"""Issue 22 item 6: the report's pages escape by default.  A tournament whose name, bot
names and a bot's decisions are markup (``<script>``, ``"><img onerror>``, a brace
that looks like a card) is reported; every page shows that text as text -- in the
HTML source escaped, in the browser's DOM as the very characters -- no script but the
page's own runs, and the Content-Security-Policy has no ``'unsafe-inline'``."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.report.browser import watched_page
from tests.report.conftest import invoke
from tests.report.hostilebots import MARKUP

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
NAME = "<script>alert(1)</script>"
OTHER = '"><img src=x onerror=alert(2)>{2g}'
TITLE = "t</title><script>alert(5)</script>"


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    tmp = tmp_path_factory.mktemp("hostile")
    # JSON's strings are TOML's basic strings
    (tmp / "t.toml").write_text(f"""
[tournament]
name = {json.dumps(TITLE)}
seats = 2
deals = 2
seed = 3
jobs = 1
output = "out"
[rules]
turn_limit = 80
[[bots]]
name = {json.dumps(NAME)}
builtin = "heuristic"
[[bots]]
name = {json.dumps(OTHER)}
python = {json.dumps(f"{HERE / 'hostilebots.py'}:Hostile")}
""")
    code, _, err = invoke("tournament", "run", str(tmp / "t.toml"), "--quiet")
    assert code == 0, err
    code, _, err = invoke("report", str(tmp / "out"), "-o", str(tmp / "site"))
    assert code == 0, err
    yield tmp / "out", tmp / "site"


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def test_the_pages_hold_the_text_escaped_and_allow_only_their_own_scripts(
        hostile_site: tuple[Path, Path]) -> None:
    _, site = hostile_site
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 4
    for path in pages:
        html = path.read_text()
        # the viewer's data: JSON, with no "<" that could end its element
        data = re.findall(r'<script id="game-data" type="application/json">(.*?)</script>',
                          html, re.S)
        assert all("<" not in d for d in data)
        markup = re.sub(r'(<script id="game-data" type="application/json">).*?(</script>)',
                        r"\1\2", html, flags=re.S)
        for raw in ("<script>alert", "<img", "onerror=alert(2)>", "</title><script>"):
            assert raw not in markup, f"{path.name}: {raw} unescaped"
        csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', html)
        assert csp is not None, path.name
        assert "unsafe-inline" not in csp.group(1) and "unsafe-eval" not in csp.group(1)
        # every script that runs is named by its hash; the data is not a script that runs
        scripts = re.findall(r"<script( [^>]*)?>(.*?)</script>", html, re.S)
        for attrs, body in scripts:
            if 'type="application/json"' in (attrs or ""):
                continue
            assert _hash(body) in csp.group(1), path.name
        styles = re.findall(r"<style>(.*?)</style>", html, re.S)
        assert [_hash(s) in csp.group(1) for s in styles] == [True]
        assert not re.search(r"<[^>]+ style=", html), f"{path.name}: an inline style attribute"
    index = (site / "index.html").read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in index
    assert "&#34;&gt;&lt;img src=x onerror=alert(2)&gt;" in index


def _open(browser: Any, path: Path) -> tuple[Any, Any, list[str]]:
    page, w = watched_page(browser)
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    page.goto(path.resolve().as_uri())
    return page, w, dialogs


def test_in_the_browser_the_text_is_text_and_nothing_else_runs(
        hostile_site: tuple[Path, Path], browser: Any) -> None:
    out, site = hostile_site
    # the standings, a bot's page, the games list: the names are the DOM's text
    page, w, dialogs = _open(browser, site / "index.html")
    names = page.eval_on_selector_all("#standings td[data-field=bot]", "ts => ts.map(t => t.textContent)")
    assert sorted(names) == sorted([NAME, OTHER])
    assert page.title() == f"{TITLE}: results"
    assert page.eval_on_selector_all("img", "is => is.length") == 0
    # the index runs no script but the package's own table sorter (by its hash)
    scripts = page.evaluate("Array.from(document.scripts).map(s => s.textContent)")
    assert [x.split("\n", 1)[0] for x in scripts] == [
        "// Sortable tables (referee/report): a click on a header of a table.sortable sorts"]
    page.click("#standings th:nth-child(2)")  # sorting by name runs, and runs nothing else
    assert sorted(page.eval_on_selector_all(
        "#standings td[data-field=bot]", "ts => ts.map(t => t.textContent)")) == sorted(names)
    page.close()
    assert w.errors == [] and dialogs == []
    for path in [site / "games.html", *sorted((site / "bots").glob("*.html"))]:
        page, w, dialogs = _open(browser, path)
        options = page.eval_on_selector_all("select[name=opp] option", "os => os.map(o => o.value)")
        assert NAME in options or OTHER in options
        page.select_option("select[name=opp]", options[1])  # the filter's script runs
        assert " shown" in page.inner_text("#shown")
        assert page.eval_on_selector_all("img", "is => is.length") == 0
        page.close()
        assert w.errors == [] and dialogs == [], path.name
    # the viewer of a game with a fault: the names, the fault's detail and the event
    # lines are text; a brace in a name draws no card
    game = next(f.stem for f in sorted((out / "games").glob("*.jsonl"))
                if '"type":"fault"' in f.read_text())
    page, w, dialogs = _open(browser, site / "games" / f"{game}.html")
    seats = page.eval_on_selector_all("#seats .name", "ns => ns.map(n => n.firstChild.textContent)")
    assert sorted(seats) == sorted([f"{NAME} [0]", f"{OTHER} [1]"]) or \
        sorted(seats) == sorted([f"{NAME} [1]", f"{OTHER} [0]"])
    found = False
    for _ in range(200):
        page.keyboard.press("ArrowRight")
        text = page.eval_on_selector("#faults", "f => f.textContent")
        if text:
            # the bot's text, as it sent it (the detail quotes its start)
            assert MARKUP[3:39] == "<img src=x onerror=alert(3)><script>"
            assert MARKUP[3:39] in text
            found = True
            break
    assert found
    # the name's "{2g}" stays text in the event lines (a card would lose its braces)
    events = page.eval_on_selector_all("#log li", "ls => ls.map(l => l.textContent)")
    assert any(OTHER in e for e in events)
    assert page.eval_on_selector_all("img", "is => is.length") == 0
    assert page.evaluate("document.scripts.length") == 2  # the data and the viewer
    page.close()
    assert w.errors == [] and dialogs == []
