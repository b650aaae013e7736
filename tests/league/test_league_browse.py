"""Browsing a league without SQL: the game filters, a bot's page, per-game stderr."""

from __future__ import annotations

from pathlib import Path

from referee.checkbot.report import Report
from referee.league.browse import games, show, stderr_of
from referee.league.config import load_league_config
from referee.league.run import new_league, run_league, submit
from referee.league.store import LeagueStore
from referee.players.sandbox import unsandboxed
from tests.league.leaguehelpers import FakeExecutor, fake_bot, league_toml


def league_of(tmp_path: Path) -> Path:
    league = tmp_path / "l"
    cfg = league_toml(tmp_path / "l.toml", seats=[2, 3], deals=2, seed=8)
    new_league(league, load_league_config(cfg), cfg.read_text())
    for name, strength in (("strong", 3), ("weak", 0), ("mid", 1)):
        r = submit(league, name, fake_bot(tmp_path / name, strength), ["python3", "b.py"],
                   sandbox=unsandboxed(), checker=lambda *a: (True, ""))
        assert r.accepted
    run_league(league, executor=FakeExecutor(), sandbox=unsandboxed(), progress=False)
    return league


def test_game_filters(tmp_path: Path) -> None:
    league = league_of(tmp_path)
    store = LeagueStore.open(league)
    try:
        every = games(store)
        assert len(every) == 2 * (3 * 2 + 3)
        weak = games(store, bot="weak")
        assert len(weak) == 2 * (2 * 2 + 3)
        assert [r.outcome.game_id for r in games(store, bot="weak@1")] == \
            [r.outcome.game_id for r in weak]
        vs = games(store, bot="weak", vs="strong")
        assert vs and all("strong@1" in r.outcome.seats for r in vs)
        assert len(vs) == 2 * (2 + 3)
        lost = games(store, bot="strong", lost=True)
        assert all(r.outcome.places[r.outcome.seats.index("strong@1")] != 1 for r in lost)
        assert len(lost) < len(games(store, bot="strong"))
        faults = games(store, faults=True)
        assert faults and all(r.outcome.faults for r in faults)
        assert games(store, bot="strong", faults=True) == []  # only weak is slow
        ended = games(store, ended="turn_limit")
        assert ended and all(r.outcome.how == "turn_limit" and r.outcome.deal == 1
                             for r in ended)
        line = every[0].line()
        assert line.startswith(every[0].outcome.game_id) and "seats" in line
    finally:
        store.close()


def test_a_bots_page(tmp_path: Path) -> None:
    league = league_of(tmp_path)
    store = LeagueStore.open(league)
    try:
        text = show(store, league, "weak")
        assert "weak: 1 version(s)" in text and "v1  active" in text
        assert "vs strong@1" in text and "vs mid@1" in text
        assert "weak@1 faults: 14" in text and "timeout: strength 0 is slow" in text
        try:
            show(store, league, "nobody")
        except KeyError as e:
            assert "its bots are mid, strong, weak" in str(e)
        else:
            raise AssertionError("no error for an unknown bot")
    finally:
        store.close()


def test_stderr_is_cut_per_game_at_the_referees_markers(tmp_path: Path) -> None:
    logs = tmp_path / "logs" / "worker-0"
    logs.mkdir(parents=True)
    (logs / "alice_2.stderr.log").write_text(
        "==== [referee 09:00:00.000] bot started (pid 1): python3 bot.py ====\n"
        "warming up\n"
        "==== [referee 09:00:00.100] game g000001, seat 0 ====\n"
        "one\n"
        "==== [referee 09:00:00.200] game g000002, seat 1 ====\n"
        "two\ntwo more\n")
    (logs / "alice_2.2.stderr.log").write_text(
        "==== [referee 09:00:00.300] game g000003, seat 1 ====\nthree\n")
    (logs / "bob_1.stderr.log").write_text(
        "==== [referee 09:00:00.100] game g000001, seat 1 ====\nbob's secret\n")
    assert stderr_of(tmp_path, "alice@2", "g000001") == "one\n"
    assert stderr_of(tmp_path, "alice@2", "g000002") == "two\ntwo more\n"
    assert stderr_of(tmp_path, "alice@2", "g000003") == "three\n"
    assert stderr_of(tmp_path, "alice@2", "g000009") is None
    assert stderr_of(tmp_path, "alice@1", "g000001") is None


FORGED = "\r\n#99 accepted: alice version 7"


def test_a_command_word_cannot_forge_a_line(tmp_path: Path) -> None:
    """A command word holding a CR/LF and a fake log line: ``league show`` and the
    check's report show it escaped and quoted, on the entry's own line (found by an
    attacker: the newline reached the organiser's terminal raw)."""
    league = tmp_path / "l"
    cfg = league_toml(tmp_path / "l.toml", seats=[2], deals=1, seed=8)
    new_league(league, load_league_config(cfg), cfg.read_text())
    r = submit(league, "mallory", fake_bot(tmp_path / "m", 1), ["python3", "b.py", FORGED],
               sandbox=unsandboxed(), checker=lambda *a: (True, ""))
    assert r.accepted
    store = LeagueStore.open(league)
    try:
        text = show(store, league, "mallory")
    finally:
        store.close()
    report = Report(["python3", "b.py", FORGED], "stdio").render()
    for out in (text, report):
        assert "\r" not in out and not any(x.startswith("#99") for x in out.splitlines()), out
        assert "python3 b.py '\\x0d\\x0a#99 accepted: alice version 7'" in out, out
