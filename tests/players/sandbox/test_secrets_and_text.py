"""What a bot must not learn (other seats' fault details, the deals of a tournament,
which games share a deal) and text it must not control (the organiser's terminal)."""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from referee.game import GameConfig
from referee.play.runner import OTHERS_FAULT_DETAIL, DecisionRequest, GameResult, run_game
from referee.text.quoting import printable
from referee.tournament.config import parse_config
from referee.tournament.executor import SerialExecutor
from referee.tournament.run import Progress, run_tournament, standings_of
from referee.tournament.schedule import derive_seed
from referee.tournament.standings import render
from tests.procs import scaled

pytestmark = pytest.mark.slow

BOTS = Path(__file__).resolve().parents[2] / "bots"


class Scripted:
    """An in-process player answering a fixed text first, then the first legal
    decision; it keeps what ``game_over`` told it."""

    def __init__(self, name: str, first: str | None = None) -> None:
        self.name = name
        self.first = first
        self.told: GameResult | None = None

    def start_game(self, game_id: str, seat: int, config: GameConfig, seed: int) -> None:
        pass

    def decide(self, request: DecisionRequest) -> Any:
        if self.first is not None:
            text, self.first = self.first, None
            return text
        return request.legal[0]

    def end_game(self, game_id: str, result: GameResult,
                 events: Sequence[dict[str, Any]]) -> None:
        self.told = result


def test_a_seat_is_told_only_the_kind_and_turn_of_another_seats_fault() -> None:
    cheat, other = Scripted("cheat", first="play hand 99x1"), Scripted("other")
    rec = run_game(GameConfig(players=2), 5, [cheat, other])
    assert [f.kind for f in rec.faults] == ["illegal"]
    full = rec.faults[0].detail
    assert "legal now:" in full  # names the cheat's own cards: not for the other seat
    assert cheat.told is not None and other.told is not None
    mine = cheat.told.faults[0].to_dict()
    theirs = other.told.faults[0].to_dict()
    assert mine["detail"] == full
    assert theirs["detail"] == OTHERS_FAULT_DETAIL
    assert {k: v for k, v in theirs.items() if k != "detail"} == \
        {k: v for k, v in mine.items() if k != "detail"}
    assert rec.faults[0].detail == full  # the record keeps the detail


def test_printable_shows_control_characters_instead_of_obeying_them() -> None:
    fake = "x\rXX other REJECTED\x1b[2J\x1b]0;pwned\x07\u202eevil\x9b1m"
    shown = printable(fake)
    assert not re.search(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e]", shown)
    assert shown == "x\\x0dXX other REJECTED\\x1b[2J\\x1b]0;pwned\\x07\\u202eevil\\u009b1m"
    assert printable("plain text, é, 🂡") == "plain text, é, 🂡"


def test_a_bots_text_reaches_the_organisers_terminal_escaped(tmp_path: Path) -> None:
    referee = shutil.which("referee", path=str(Path(sys.executable).parent))
    assert referee is not None
    done = subprocess.run(
        [referee, "play", f"{sys.executable} {BOTS / 'attack_text.py'}", "heuristic",
         "--seed", "3", "--transcript", "--no-colour", "--sandbox", "off"],
        capture_output=True, text=True, timeout=scaled(120), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    for stream in (done.stdout, done.stderr):
        assert not re.search(r"[\r\x1b\x07\u202e]", stream), repr(stream[:2000])
    assert "thinking\\x0dXX other-bot REJECTED illegal \\x1b[2J" in done.stdout  # stderr line
    assert "illegal" in done.stdout  # the decision text, in the fault lines


def test_tournament_progress_escapes_fault_text() -> None:
    out = io.StringIO()
    p = Progress(10, 0, stream=out, tty=False)
    p.fault("g000001", "bad (seat 0) turn 3: illegal: sent \"\rXX good REJECTED\x1b[2J\"")
    assert "\r" not in out.getvalue() and "\x1b" not in out.getvalue()
    assert "\\x0dXX good REJECTED\\x1b[2J" in out.getvalue()


def _seedless(tmp_path: Path, out: str) -> Any:
    raw = {"tournament": {"name": "t", "seats": 2, "deals": 2, "output": out},
           "bots": [{"name": "a", "builtin": "lowest"}, {"name": "b", "builtin": "random"}]}
    return parse_config(raw, base_dir=str(tmp_path))


def test_a_tournament_without_a_seed_draws_a_secret_one_and_keeps_it(tmp_path: Path) -> None:
    seeds = []
    for out in ("one", "two"):
        cfg = _seedless(tmp_path, out)
        run_tournament(cfg, executor=SerialExecutor(), quiet=True)
        st = standings_of(tmp_path / out)
        assert st.seed_source == "random" and isinstance(st.seed, int)
        assert f"seed {st.seed} (drawn at random)" in render(st)
        assert json.loads(render(st, "json"))["seed"] == st.seed
        seeds.append(st.seed)
    assert seeds[0] != seeds[1]
    assert seeds[0] > 1 << 32 or seeds[1] > 1 << 32  # not a small, guessable number
    # Resumed, it keeps its seed and has nothing left to play.
    summary = run_tournament(_seedless(tmp_path, "one"), executor=SerialExecutor(), quiet=True)
    assert summary.played == 0 and summary.already_done == 4
    assert standings_of(tmp_path / "one").seed == seeds[0]
    # No deal is the default seed's (1) any more.
    head = json.loads((tmp_path / "one" / "games" / "g000000.jsonl").read_text()
                      .splitlines()[0])
    assert head["seed"] != derive_seed(1, "deal", 0)


def test_the_game_ids_bots_are_sent_do_not_tell_which_games_share_a_deal(
        tmp_path: Path) -> None:
    cfg = _seedless(tmp_path, "ids")
    run_tournament(cfg, executor=SerialExecutor(), quiet=True)
    heads = [json.loads(p.read_text().splitlines()[0])
             for p in sorted((tmp_path / "ids" / "games").glob("*.jsonl"))]
    sent = [h["bot_game_id"] for h in heads]
    assert len(set(sent)) == len(sent) == 4
    assert all(re.fullmatch(r"t[0-9a-f]{12}", s) for s in sent)
    assert all(h["game_id"] not in h["bot_game_id"] for h in heads)
