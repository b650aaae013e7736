"""The example bots play whole games through the real referee path: ``run_game`` with
``stdio_player`` (every bot) and ``zmq_player`` (the Python bots), the bots in their
own processes.  A game with no fault and a replayable record is a pass."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.bots import make_bot
from referee.game import GameConfig
from referee.play.runner import InProcessPlayer, Player, TimeControl, replay_check, run_game
from referee.players.external import ExternalPlayer, stdio_player
from tests.procs import scaled

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "example_bots"
TC = TimeControl(startup=scaled(5.0), per_decision=scaled(1.0), bank=scaled(5.0))

COMMANDS = {
    "python-random": [sys.executable, str(BOTS / "python" / "random_bot.py"), "--seed", "7"],
    "python-heuristic": [sys.executable, str(BOTS / "python" / "heuristic_bot.py")],
    "js": ["node", str(BOTS / "js" / "bot.js")],
}
needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")


def _params() -> list[object]:
    return [pytest.param(k, marks=needs_node) if k == "js" else k for k in COMMANDS]


@pytest.fixture
def opened() -> Iterator[list[ExternalPlayer]]:
    """Remote players to close (bye, then end the process) after the test."""
    players: list[ExternalPlayer] = []
    yield players
    for p in players:
        p.close()


def _check(rec: object, n: int) -> None:
    assert rec.faults == [], [str(f) for f in rec.faults]  # type: ignore[attr-defined]
    assert sorted(rec.places)[0] == 1  # type: ignore[attr-defined]
    assert len(rec.places) == n  # type: ignore[attr-defined]
    ok, why = replay_check(rec.to_lines())  # type: ignore[attr-defined]
    assert ok, why


@pytest.mark.parametrize("bot", _params())
def test_two_games_over_stdio(bot: str, opened: list[ExternalPlayer]) -> None:
    remote = stdio_player(bot, COMMANDS[bot], time_control=TC)
    opened.append(remote)
    other = InProcessPlayer(make_bot("random", 3))
    # The same bot process plays two games, one per seat, the second with variants.
    rec = run_game(GameConfig(players=2), 11, [remote, other], time_control=TC)
    _check(rec, 2)
    config = GameConfig(players=2, variants=frozenset({"may_decline", "four_of_a_colour"}))
    rec = run_game(config, 12, [other, remote], time_control=TC)
    _check(rec, 2)
    assert remote.starts == 1  # one process, kept across games


def test_six_example_bots_in_one_game(opened: list[ExternalPlayer]) -> None:
    names = ["python-random", "python-heuristic", "python-random", "python-heuristic"]
    if shutil.which("node"):
        names += ["js", "js"]
    else:  # pragma: no cover
        names += ["python-random", "python-heuristic"]
    players: list[Player] = []
    for i, bot in enumerate(names):
        p = stdio_player(f"{bot}-{i}", COMMANDS[bot], time_control=TC)
        opened.append(p)
        players.append(p)
    config = GameConfig(players=6, variants=frozenset({"play_out", "ones_reverse",
                                                       "choose_for_others"}))
    _check(run_game(config, 5, players, time_control=TC), 6)


@pytest.mark.parametrize("bot", ["python-random", "python-heuristic"])
def test_python_bots_over_zeromq(bot: str, opened: list[ExternalPlayer]) -> None:
    from referee.players.external import zmq_player

    remote = zmq_player(bot, COMMANDS[bot], time_control=TC)
    opened.append(remote)
    config = GameConfig(players=3, variants=frozenset({"ones_reverse", "play_out"}))
    others = [InProcessPlayer(make_bot(n, 1)) for n in ("heuristic", "lowest")]
    _check(run_game(config, 21, [others[0], remote, others[1]], time_control=TC), 3)


def test_heuristic_bot_beats_random_bot(opened: list[ExternalPlayer]) -> None:
    """A small sample of the measurement in example_bots/README.md: over stdio, the
    heuristic bot wins clearly more than half of its two-player games."""
    h = stdio_player("heuristic", COMMANDS["python-heuristic"], time_control=TC)
    r = stdio_player("random", COMMANDS["python-random"], time_control=TC)
    opened += [h, r]
    wins = games = 0
    for g in range(12):
        for seats in ((h, r), (r, h)):  # the same deal with the seats swapped
            rec = run_game(GameConfig(players=2), 500 + g, list(seats), time_control=TC)
            assert rec.faults == []
            games += 1
            wins += rec.places[seats.index(h)] == 1
    assert wins / games >= 0.7, f"heuristic won {wins} of {games}"
