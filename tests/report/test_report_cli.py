"""``referee report``, ``replay --html/--turn/--seat`` and the standings that fit the
terminal, through the CLI, on the session's small tournament."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path

import pytest

from referee.report.results import load, per_deal, rating_history
from referee.tournament.run import standings_of
from referee.tournament.standings import compact_table, render
from tests.report.conftest import invoke

pytestmark = pytest.mark.slow


def faulty_record(results_dir: Path) -> Path:
    return next(f for f in sorted((results_dir / "games").glob("*.jsonl"))
                if '"type":"fault"' in f.read_text())


def test_the_site_has_every_page_and_holds_no_reference_outside_itself(site_dir: Path) -> None:
    names = {p.relative_to(site_dir).as_posix() for p in site_dir.rglob("*.html")}
    assert {"index.html", "games.html", "bots/heuristic.html", "bots/random.html",
            "bots/garbage__b_.html"} <= names
    assert len([n for n in names if n.startswith("games/")]) == 12
    for p in site_dir.rglob("*.html"):
        text = p.read_text()
        assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "")
        assert "https://" not in text and "<link" not in text and " src=" not in text
        assert "default-src 'none'" in text  # the browser refuses any request
    index = (site_dir / "index.html").read_text()
    assert "garbage &lt;b&gt;" in index and "garbage <b>" not in index
    assert "stopped at the turn limit" in index  # how games ended, turn limit included
    bot = (site_dir / "bots" / "garbage__b_.html").read_text()
    assert bot.count('<tr data-opp="') == 8 and 'data-faults="yes"' in bot


def test_figures_behind_the_charts(results_dir: Path) -> None:
    res = load(results_dir)
    st = standings_of(results_dir)
    assert json.loads(res.standings_json) == json.loads(render(st, "json"))
    for scores in ("adjusted", "raw"):  # the rating the standings show, for each --scores
        ranked = standings_of(results_dir, scores)
        hist = rating_history(res.outcomes, res.bots, scores=scores)
        for r in ranked.rows:
            games, rating = hist[r.bot][-1]
            assert games == r.games and abs(rating - r.rating) < 1e-9  # the whole set's fit
    deals = per_deal(res.outcomes, res.bots)
    assert res.duplicate
    for a in res.bots:
        for b in res.bots:
            if a != b:
                assert deals[a][b].diffs == [-d for d in deals[b][a].diffs]
                assert len(deals[a][b].diffs) == 2  # two deals, both seatings each
    # the heuristic bot against garbage: ahead on every deal, in both seatings
    assert deals["heuristic"]["garbage <b>"].diffs == [2.0, 2.0]


def test_a_report_of_a_tournament_still_being_played(results_dir: Path, tmp_path: Path) -> None:
    part = tmp_path / "part"
    shutil.copytree(results_dir, part, ignore=shutil.ignore_patterns("lock", "report"))
    conn = sqlite3.connect(part / "tournament.sqlite")
    with conn:
        conn.execute("DELETE FROM seats WHERE idx >= 8")
        conn.execute("DELETE FROM games WHERE idx >= 8")
    conn.close()
    code, out, err = invoke("report", str(part), "-o", str(tmp_path / "site"))
    assert code == 0, err
    assert "(8 games)" in out
    index = (tmp_path / "site" / "index.html").read_text()
    assert "8 of 12 games (in progress)" in index and "in progress: 8 of 12" in index
    assert len(list((tmp_path / "site" / "games").glob("*.html"))) == 8
    # again, on the same folder, with every game: pages are replaced, none left half-written
    code, out, err = invoke("report", str(results_dir), "-o", str(tmp_path / "site"))
    assert code == 0 and "(12 games)" in out
    assert not list((tmp_path / "site").rglob(".*.tmp"))


def test_report_errors_are_one_line(tmp_path: Path) -> None:
    code, out, err = invoke("report", str(tmp_path), "-o", str(tmp_path / "site"))
    assert code == 1 and err.startswith("Error: ") and "holds no tournament" in err
    assert err.count("\n") == 1


def test_replay_html_turn_and_seat(results_dir: Path, tmp_path: Path) -> None:
    rec = faulty_record(results_dir)
    out = tmp_path / "one.html"
    code, stdout, err = invoke("replay", str(rec), "--html", str(out))
    assert code == 0, err
    assert "replay viewer written to" in stdout and "verified:" in stdout
    page = out.read_text()
    assert page.startswith("<!DOCTYPE html>") and 'id="game-data"' in page

    code, stdout, err = invoke("replay", str(rec), "--turn", "30")
    assert code == 0, err
    lines = stdout.splitlines()
    assert not any(x.startswith("-- turn 29:") for x in lines)
    table = lines.index(next(x for x in lines if x.startswith("==== turn 30 ")))
    assert "hand:" in lines[table + 1] and "3DOWN:" in lines[table + 1]
    assert any(x.startswith("-- turn 30:") for x in lines[table:])

    code, _, err = invoke("replay", str(rec), "--turn", "9999")
    assert code == 1 and "has no turn 9999" in err and "choose 0 to" in err

    seat = json.loads(rec.read_text().splitlines()[-2])["seat"]  # the faulting seat
    code, stdout, err = invoke("replay", str(rec), "--seat", str(seat))
    assert code == 0, err
    lines = stdout.splitlines()
    i = next(k for k, x in enumerate(lines) if "FAULT garbage" in x)
    assert "'banana'" in lines[i] and "[substituted]" in lines[i]  # what the bot sent
    assert lines[i - 1].startswith("     legal: ") and "to decide: hand" in lines[i - 2]
    assert "(substituted by the referee)" in lines[i + 1]
    # the other seat learns that a fault happened, not what the bot sent
    code, stdout, _ = invoke("replay", str(rec), "--seat", str(1 - seat))
    shown = [x for x in stdout.splitlines() if "FAULT" in x]
    assert shown and all("banana" not in x and x.endswith("illegal [substituted]")
                         or "forfeit" in x for x in shown)


def test_standings_fit_the_terminal(results_dir: Path) -> None:
    st = standings_of(results_dir)
    for width in (80, 100, 150):
        h, rows = compact_table(st, width)
        text = render(st, "plain", wide=False, width=width)
        table = text.split("\n\n")[1]
        assert max(len(x) for x in table.splitlines()) <= width, (width, table)
        # a fault column for each kind that happened, and only those
        assert {"illegal", "forfeits"} <= set(h) or {"ill", "forf"} <= set(h)
        assert not {"timeouts", "tmo", "crashes", "crash"} & set(h)
    wide = render(st, "plain")
    assert all(k in wide for k in ("timeouts", "crashes", "place pts", "wins"))
    code, out, _ = invoke("tournament", "standings", str(results_dir))
    assert code == 0 and "timeouts" not in out and "illegal" in out
    code, out, _ = invoke("tournament", "standings", str(results_dir), "--wide")
    assert code == 0 and "timeouts" in out


def test_tournament_run_keeps_a_report(results_dir: Path, tmp_path: Path) -> None:
    cfg = tmp_path / "t.toml"
    cfg.write_text((results_dir.parent / "t.toml").read_text().replace('output = "out"',
                                                                       'output = "again"'))
    site = tmp_path / "site"
    code, out, err = invoke("tournament", "run", str(cfg), "--quiet", "--report", str(site))
    assert code == 0, err
    assert f"report: {(site / 'index.html').resolve()}" in err
    assert len(list((site / "games").glob("*.html"))) == 12
    assert "12 of 12 games" in (site / "index.html").read_text()


def test_replay_html_opens_at_the_seat_and_turn_given(results_dir: Path, tmp_path: Path) -> None:
    rec = faulty_record(results_dir)
    out = tmp_path / "g.html"
    code, _, err = invoke("replay", str(rec), "--html", str(out), "--seat", "1", "--turn", "12")
    assert code == 0, err
    assert '"start":{"view":"1","turn":12}' in out.read_text()
    code, _, err = invoke("replay", str(rec), "--html", str(out), "--seat", "2")
    assert code == 1 and "there is no seat 2 in this 2-player game" in err


def test_a_missing_record_is_named_and_the_rest_is_reported(results_dir: Path,
                                                             tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(results_dir, copy, ignore=shutil.ignore_patterns("lock", "report"))
    (copy / "games" / "g000003.jsonl").unlink()
    (copy / "games" / "g000004.jsonl").write_text("not a record\n")
    code, out, err = invoke("report", str(copy), "-o", str(tmp_path / "site"))
    assert code == 0, err
    index = (tmp_path / "site" / "index.html").read_text()
    assert "2 game records could not be read" in index
    assert "g000003: no such file" in index and "g000004:" in index
    assert len(list((tmp_path / "site" / "games").glob("*.html"))) == 10
    assert "12 of 12 games" in index  # the standings count every stored game


def test_no_link_leads_to_a_missing_replay(results_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(results_dir, copy, ignore=shutil.ignore_patterns("lock", "report"))
    (copy / "games" / "g000003.jsonl").unlink()
    lines = (copy / "games" / "g000005.jsonl").read_text().splitlines()
    lines[1] = json.dumps({"type": "decision", "seat": "x", "decision": 0})
    (copy / "games" / "g000005.jsonl").write_text("\n".join(lines) + "\n")
    site = tmp_path / "site"
    code, _, err = invoke("report", str(copy), "-o", str(site))
    assert code == 0, err
    for page in site.rglob("*.html"):
        for href in re.findall(r'href="([^"#]+)', page.read_text()):
            assert (page.parent / href).resolve().is_file(), (page, href)
    assert "g000003 <span class=note>(no replay)</span>" in (site / "games.html").read_text()
