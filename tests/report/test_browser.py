"""The report in a real headless Chromium, opened from file://: every page loads
with no console error and no network request; the standings page shows the
figures of 'tournament standings --format json'; the viewer's controls show the
right turn and events, checked against the game record; a seat's view shows no card
that seat could not know (RULES §6, restated here from the record's event texts)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from referee.game import Game
from referee.game.cards import card_text, parse_deck
from referee.game.events import event_text, parse_event
from referee.play.replay import describe, read_record
from referee.play.runner import stop_if_stopped
from tests.report.browser import CARD, watched_page
from tests.report.conftest import invoke

pytestmark = pytest.mark.slow


def steps_of(record: Path) -> tuple[Any, list[int], list[list[list[str]]]]:
    """The record; per frame k, how many of its events the first k decisions caused
    (frame 0: the deal), counted by re-running it with the engine, whose events
    must be the record's; and per frame, each seat's hand (in set-up: its six cards)."""
    rec = read_record(str(record))
    game = Game(rec.config, rec.head.seed, deck=parse_deck(list(rec.head.deck)),
                first_player=rec.head.first_player)
    cum = [len(game.events)]

    def hands() -> list[list[str]]:
        return [sorted(card_text(c) for c in (game.dealt[s] if game.phase == 0 else game.hand(s)))
                for s in range(game.n)]

    held = [hands()]
    for d in rec.decisions:
        game.apply(d.seat, d.decision)
        cum.append(len(game.events))
        held.append(hands())
    stop_if_stopped(game, rec.result.how if rec.result else None)  # a game stopped by the referee (RULES §5.4)
    cum[-1] = len(game.events)  # its end is told with its last decision
    assert [event_text(e) for e in game.events] == rec.events
    return rec, cum, held


def knowable(events: list[str], seat: int) -> set[str]:
    """Every card ``seat`` may know after ``events`` (texts): a deal, a draw and the
    card of a failed 3DOWN turn are the seat's own secrets; everything else in an
    event is public."""
    out: set[str] = set()
    for text in events:
        tok = text.split()
        kind, who = tok[0], tok[1] if len(tok) > 1 else ""
        if kind in ("deal", "draw") and who != str(seat):
            continue
        if kind == "fail" and who != str(seat):
            tok = tok[:3] + tok[4:]  # the turned card is shown to its owner only
        out |= {t for t in tok if CARD.match(t)}
    return out


def shown_cards(page: Any) -> list[str]:
    return list(page.eval_on_selector_all("[data-card]", "els => els.map(e => e.dataset.card)"))


def labels(rec: Any) -> list[str]:
    return [f"{b} [{s}]" for s, b in enumerate(rec.bots)]


def faulty_game(results_dir: Path) -> str:
    for f in sorted((results_dir / "games").glob("*.jsonl")):
        if '"type":"fault"' in f.read_text():
            return f.stem
    raise AssertionError("the fixture tournament has no game with a fault")


def test_every_page_loads_from_file_with_no_error_and_no_request(site_dir: Path,
                                                                   browser: Any) -> None:
    pages = sorted(site_dir.rglob("*.html"))
    assert len(pages) == 1 + 1 + 3 + 12  # index, games, bots, a viewer per game
    for path in pages:
        page, w = watched_page(browser)
        url = path.resolve().as_uri()
        page.goto(url)
        page.wait_for_load_state("load")
        assert w.errors == [], f"{path.name}: {w.errors}"
        assert w.requests == [url], f"{path.name} made a request: {w.requests}"
        if path.parent.name == "games":
            assert page.inner_text("#turn") != ""  # the viewer's script ran
            assert page.locator("#seats .seat").count() == 2
        page.close()


def test_the_standings_page_shows_the_figures_of_standings_json(
        site_dir: Path, results_dir: Path, browser: Any, tmp_path: Path) -> None:
    code, out, err = invoke("tournament", "standings", str(results_dir), "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    page, w = watched_page(browser)
    page.goto((site_dir / "index.html").resolve().as_uri())
    shots = tmp_path / "screenshots"
    shots.mkdir()
    page.screenshot(path=str(shots / "standings.png"), full_page=True)
    rows = page.eval_on_selector_all("#standings tr[data-bot]", """rows => rows.map(r =>
        Object.fromEntries([...r.querySelectorAll('td')].map(td =>
            [td.dataset.field, [td.dataset.value, td.dataset.ci ?? null, td.innerText,
                                td.dataset.low ?? null, td.dataset.high ?? null]])))""")
    assert len(rows) == len(data["standings"]) == 3
    for row, want in zip(rows, data["standings"], strict=True):
        for f, (value, *_) in row.items():
            assert json.loads(value) == want[f], (want["bot"], f)
        assert json.loads(row["win_rate"][1]) == want["win_ci"]
        assert json.loads(row["avg_place"][1]) == want["place_ci"]
        assert json.loads(row["rating"][3]) == want["rating_low"]
        assert json.loads(row["rating"][4]) == want["rating_high"]
        assert row["win_rate"][2] == f"{100 * want['win_rate']:.1f} ± {100 * want['win_ci']:.1f}"
        assert row["avg_place"][2] == f"{want['avg_place']:.2f} ± {want['place_ci']:.2f}"
        assert row["rating"][2] == (f"{want['rating']:+.0f} [{want['rating_low']:+.0f}, "
                                    f"{want['rating_high']:+.0f}]")
        assert row["games"][2] == str(want["games"]) and row["wins"][2] == str(want["wins"])
    # fault columns: only the kinds that happened, and every one of them
    kinds = {f for r in data["standings"] for f in ("timeouts", "crashes", "illegal", "malformed",
                                                     "oversized", "protocol", "forfeits") if r[f]}
    assert kinds == {"illegal", "forfeits"}
    assert {f for f in rows[0] if f in ("timeouts", "crashes", "illegal", "malformed",
                                        "oversized", "protocol", "forfeits")} == kinds
    cells = page.eval_on_selector_all("#head-to-head td[data-a]", """cs => cs.map(c =>
        [c.dataset.a, c.dataset.b, JSON.parse(c.dataset.score), Number(c.dataset.games)])""")
    assert {(a, b): (s, n) for a, b, s, n in cells} == {
        (a, b): (v["score"], v["games"]) for a, r in data["head_to_head"].items()
        for b, v in r.items()}
    ended = dict(page.eval_on_selector_all("#endings td[data-how]",
                                           "cs => cs.map(c => [c.dataset.how, Number(c.innerText)])"))
    assert sum(v for k, v in ended.items() if k != "with a forfeit") == data["played"]
    assert ended.get("turn_limit", 0) > 0
    # the standings sort by any column: the rating header, then again the other way
    column = page.eval_on_selector("#standings td[data-field=rating]", "c => c.cellIndex")
    header = f"#standings tr:first-child th:nth-child({column + 1})"

    def ratings() -> list[float]:
        return [float(v) for v in page.eval_on_selector_all(
            "#standings td[data-field=rating]", "cs => cs.map(c => c.dataset.value)")]
    page.click(header)
    assert ratings() == sorted(r["rating"] for r in data["standings"])
    page.click(header)
    assert ratings() == sorted((r["rating"] for r in data["standings"]), reverse=True)
    assert w.errors == []
    page.close()


def test_viewer_forward_back_and_jump_show_the_records_turns(
        site_dir: Path, results_dir: Path, browser: Any, tmp_path: Path) -> None:
    gid = faulty_game(results_dir)
    rec, cum, held = steps_of(results_dir / "games" / f"{gid}.jsonl")
    names = labels(rec)

    def expected(k: int) -> tuple[str, list[str]]:
        turns = [e for e in rec.events[:cum[k]] if e.startswith("turn ")]
        turn = turns[-1].split()[1] if turns else "0"
        lines = [describe(parse_event(e), names) for e in rec.events[(cum[k - 1] if k else 0):cum[k]]]
        return turn, lines

    def shown() -> tuple[str, list[str]]:
        return (page.inner_text("#turn"),
                page.eval_on_selector_all("#events li", "ls => ls.map(l => l.textContent)"))

    page, w = watched_page(browser)
    page.goto((site_dir / "games" / f"{gid}.html").resolve().as_uri())
    assert shown() == expected(0)
    for k in range(1, 41):
        page.keyboard.press("ArrowRight")
        assert shown() == expected(k), f"after {k} steps forward"
    for k in range(39, 29, -1):
        page.keyboard.press("ArrowLeft")
        assert shown() == expected(k), f"back to step {k}"
    # jump: the first frame at turn 25 is the step whose events hold 'turn 25 ...'
    page.fill("#to-turn", "25")
    page.press("#to-turn", "Enter")
    k = next(i for i in range(1, len(cum)) if any(
        e.startswith("turn 25 ") for e in rec.events[cum[i - 1]:cum[i]]))
    assert shown() == expected(k) and shown()[0] == "25"
    page.keyboard.press("End")
    assert shown() == expected(len(cum) - 1)
    assert "game over" in page.inner_text("#next")
    page.keyboard.press("Home")
    assert shown() == expected(0)
    # Space plays (the step moves on by itself) and pauses; v picks the next view
    page.keyboard.press(" ")
    page.wait_for_function("() => document.getElementById('step').textContent.split(' ')[0] !== '0'")
    assert page.inner_text("#play") == "❚❚ pause"
    page.keyboard.press(" ")
    assert page.inner_text("#play") == "▶ play"
    page.keyboard.press("v")
    assert page.eval_on_selector("#view", "s => s.value") == "0"
    page.keyboard.press("v")
    page.keyboard.press("v")
    assert page.eval_on_selector("#view", "s => s.value") == "omni"
    page.keyboard.press("Home")
    # each fault at the decision the referee played for it: what the bot sent, and
    # what the referee did
    fault = rec.faults[0]
    seen = False
    for k in range(1, len(cum)):
        page.keyboard.press("ArrowRight")
        text = page.inner_text("#faults")
        if text:
            assert "banana" in text and "substituted" in text and "the referee played" in text
            assert f"at turn {fault.turn}" in text
            assert "played by the referee" in page.inner_text("#decision")
            assert rec.decisions[k - 1].substituted
            seen = True
            page.screenshot(path=str(tmp_path / "viewer-fault.png"), full_page=True)
            break
    assert seen
    assert w.errors == []
    page.close()


def test_a_seats_view_shows_no_card_the_seat_could_not_know(
        site_dir: Path, results_dir: Path, browser: Any, tmp_path: Path) -> None:
    gid = faulty_game(results_dir)
    rec, cum, held = steps_of(results_dir / "games" / f"{gid}.jsonl")
    page, w = watched_page(browser)
    page.goto((site_dir / "games" / f"{gid}.html").resolve().as_uri())
    omni_extra = 0
    for seat in range(2):
        page.select_option("#view", str(seat))
        page.keyboard.press("Home")
        for k in range(len(cum)):
            if k:
                page.keyboard.press("ArrowRight")
            cards, own, other = page.evaluate("""seat => [
                [...document.querySelectorAll('[data-card]')].map(e => e.dataset.card),
                [...document.querySelectorAll(`.seat[data-seat='${seat}'] .hand [data-card]`)]
                    .map(e => e.dataset.card),
                document.querySelector(`.seat[data-seat='${1 - seat}'] .hand`).innerText]""", seat)
            leaked = set(cards) - knowable(rec.events[:cum[k]], seat)
            assert not leaked, f"seat {seat} at step {k} is shown {leaked}"
            assert sorted(own) == held[k][seat], f"seat {seat}'s own hand at step {k}"
            assert f"{len(held[k][1 - seat])} card" in other
        page.screenshot(path=str(tmp_path / f"viewer-seat{seat}.png"), full_page=True)
    # the omniscient view does show what the seats do not know (the check has teeth)
    page.select_option("#view", "omni")
    page.keyboard.press("Home")
    for k in range(len(cum)):
        if k:
            page.keyboard.press("ArrowRight")
        omni_extra += len(set(shown_cards(page)) - knowable(rec.events[:cum[k]], 0))
    assert omni_extra > 0
    assert w.errors == []
    page.close()


def test_a_bots_page_filters_its_games(site_dir: Path, results_dir: Path, browser: Any,
                                       tmp_path: Path) -> None:
    code, out, _ = invoke("tournament", "standings", str(results_dir), "--format", "json")
    garbage = next(r for r in json.loads(out)["standings"] if r["bot"] == "garbage <b>")
    page, w = watched_page(browser)
    page.goto((site_dir / "bots" / "garbage__b_.html").resolve().as_uri())

    def visible() -> int:
        return int(page.evaluate("""() => [...document.querySelectorAll('#games tr[data-how]')]
            .filter(r => r.style.display !== 'none').length"""))

    assert visible() == garbage["games"] == 8
    assert page.inner_text("#shown") == "8 of 8 shown"
    page.select_option("select[name=opp]", "heuristic")
    assert visible() == 4  # two deals, both seatings
    page.select_option("select[name=opp]", "")
    page.select_option("select[name=result]", "won")
    assert visible() == garbage["wins"] == 0
    page.select_option("select[name=result]", "")
    # How the bot's games ended: each way is an option (the turn limit, forfeits...).
    hows = {json.loads(f.read_text().splitlines()[-1])["how"]
            for f in (results_dir / "games").glob("*.jsonl")
            if "garbage <b>" in f.read_text().splitlines()[0]}
    how = sorted(hows)[0]
    page.select_option("select[name=how]", how)
    want = sum(1 for f in (results_dir / "games").glob("*.jsonl")
               if "garbage <b>" in f.read_text().splitlines()[0]
               and json.loads(f.read_text().splitlines()[-1])["how"] == how)
    assert visible() == want
    page.screenshot(path=str(tmp_path / "bot-page.png"), full_page=True)
    # each row links to its game's viewer
    href = page.get_attribute("#games tr[data-how] a", "href")
    assert href is not None and href.startswith("../games/g") and href.endswith(".html")
    assert w.errors == []
    page.close()


def test_the_viewer_marks_each_fault_in_the_game_list(
        site_dir: Path, results_dir: Path, browser: Any) -> None:
    """Issue 23, 12: the game so far (the viewer's list) marks every fault where it
    happened, its detail in the omniscient view and its own seat's only; the same
    deal's other seatings are marked when they hold a fault."""
    gid = faulty_game(results_dir)
    rec = read_record(str(results_dir / "games" / f"{gid}.jsonl"))
    page, w = watched_page(browser)
    page.goto((site_dir / "games" / f"{gid}.html").resolve().as_uri())
    assert page.eval_on_selector_all("#log li.fault-mark", "ls => ls.length") == 0
    page.keyboard.press("End")
    marks = page.eval_on_selector_all("#log li.fault-mark", "ls => ls.map(l => l.textContent)")
    assert len(marks) == len(rec.faults)
    bad = rec.faults[0].seat
    for text, f in zip(marks, rec.faults, strict=True):
        assert text.startswith("⚠ fault") and f"{rec.bots[f.seat]} [{f.seat}]: {f.kind}" in text
        assert "banana" in text
    # the other seat's view: the fault is marked, its detail (what the bot sent) is not
    page.select_option("#view", str(1 - bad))
    page.keyboard.press("End")
    marks = page.eval_on_selector_all("#log li.fault-mark", "ls => ls.map(l => l.textContent)")
    assert len(marks) == len(rec.faults) and not any("banana" in m for m in marks)
    # a mark comes before the events of the decision the referee played for it
    page.select_option("#view", "omni")
    page.keyboard.press("Home")
    k = next(i for i, d in enumerate(rec.decisions, 1) if d.substituted)
    for _ in range(k):
        page.keyboard.press("ArrowRight")
    now = page.eval_on_selector_all("#log li.now", "ls => ls.map(l => l.className)")
    assert now[0] == "fault-mark now", now
    # the other seatings of the deal: a game with a fault is marked
    links = page.eval_on_selector_all(
        "a.seating", "as => as.map(a => [a.textContent, a.nextElementSibling && "
        "a.nextElementSibling.className === 'seating-fault'])")
    assert links
    for text, marked in links:
        other = read_record(str(results_dir / "games" / f"{text.split(':')[0]}.jsonl"))
        assert marked == bool(other.faults), text
    assert w.errors == []
    page.close()
