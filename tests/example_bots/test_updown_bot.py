"""The Python helper module and the heuristic port, in-process (no subprocess):
``read_move`` reads every decision text the engine lists, and the ported heuristic
decides exactly as the rule part of the built-in HeuristicBot it ports
(``decide_by_rule``: the built-in adds an endgame search, which the port leaves out)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

from referee.bots.policies import HeuristicBot
from referee.game import Game, GameConfig, parse_decision
from referee.game.cards import KIND_TEXT
from referee.game.decisions import SOURCE_NAMES

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "example_bots" / "python"))
import heuristic_bot  # noqa: E402
import updown_bot  # noqa: E402

from tests.procs import scaled

CONFIGS = [
    GameConfig(players=2),
    GameConfig(players=3, variants=frozenset({"four_of_a_colour", "may_decline"})),
    GameConfig(players=4, variants=frozenset({"choose_for_others", "ones_reverse",
                                              "play_out", "swap_piles"})),
    GameConfig(players=2, variants=frozenset({"four_of_a_colour"}), deck="alternative",
               colours=1),
]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "+".join(sorted(c.variants)) or "std")
def test_read_move_and_heuristic_port(config: GameConfig) -> None:
    ported = heuristic_bot.HeuristicBot()
    builtin = HeuristicBot()
    for seed in range(6):
        game = Game(config, seed)
        rng = random.Random(seed)
        while not game.over:
            for seat in game.to_decide():
                legal = game.legal(seat)
                texts = [d.text for d in legal]
                for d in legal:
                    m = updown_bot.read_move(d.text)
                    assert m.action == d.text.split()[0]
                    if m.action == "play":
                        assert m.source == SOURCE_NAMES[d.src]
                        assert m.kind == KIND_TEXT[d.kind] and m.count == d.count
                    elif m.action == "down":
                        assert m.slot == d.slot
                obs = game.observation(seat)
                mine = ported.decide(obs, texts)
                mine_text = texts[mine] if isinstance(mine, int) else mine
                assert mine_text == builtin.decide_by_rule(obs, legal).text, (seed, texts)
                # Play on with a random decision, so that every kind comes up.
                game.apply(seat, legal[rng.randrange(len(legal))])


def test_card_values() -> None:
    assert [updown_bot.card_value(c) for c in ("1g", "10r", "Cy", "C+1o", "C+2g", "7")] == [
        1, 10, 11, 12, 13, 7]
    assert updown_bot.read_move("play hand 7g 7r").cards == ("7g", "7r")
    assert parse_decision("play 3up C+2").text == updown_bot.read_move("play 3up C+2").text


def _run_script(bot: str, messages: list[dict[str, object]], name: str | None = None,
                ) -> tuple[int, list[dict[str, object]], str]:
    import json
    import os
    import subprocess

    path = Path(__file__).resolve().parents[2] / "example_bots" / "python" / bot
    stdin = "".join(json.dumps(m) + "\n" for m in messages)
    env = {k: v for k, v in os.environ.items() if k != "UPDOWN_NAME"}
    if name is not None:
        env["UPDOWN_NAME"] = name
    done = subprocess.run([sys.executable, str(path)], input=stdin, capture_output=True,
                          text=True, timeout=scaled(20), env=env)
    return done.returncode, [json.loads(x) for x in done.stdout.splitlines()], done.stderr


def test_helper_speaks_the_protocol_over_stdio() -> None:
    request = {"type": "request", "id": 7, "game_id": "g", "seat": 0, "time_left": 1.0,
               "observation": {"pile": [], "variants": []}, "events": [],
               "legal": ["play hand 3x1", "play hand 3x2", "pickup"], "x_new": 1}
    rc, out, err = _run_script("heuristic_bot.py", [
        {"type": "welcome", "protocol": 1, "referee": "test", "time": {}, "max_message_bytes": 9},
        {"type": "new_game", "game_id": "g", "seat": 0, "players": 2, "config": {}, "bots": []},
        {"type": "x_from_the_future", "data": [1, 2]},
        request,
        {"type": "rejected", "id": 7, "code": "illegal", "message": "no", "action": "substituted",
         "substitute": "pickup"},
        {**request, "id": 8},
        {"type": "game_over", "game_id": "g", "how": "winner", "places": [1, 2]},
        {"type": "bye", "reason": "done"},
        request,  # after bye: never read
    ])
    assert rc == 0
    assert out[0] == {"type": "hello", "protocol": [1], "name": "heuristic", "version": "1.0"}
    assert out[1:] == [{"type": "decision", "id": 7, "decision": "play hand 3x2"},
                       {"type": "decision", "id": 8, "decision": "play hand 3x2"}]
    assert "rejected: illegal: no" in err


def test_helper_exits_1_when_the_referee_refuses() -> None:
    rc, out, err = _run_script("random_bot.py", [
        {"type": "error", "code": "unsupported_version", "message": "speak 2",
         "action": "disconnect"}])
    assert rc == 1 and out[0]["type"] == "hello" and len(out) == 1
    assert "unsupported_version" in err


def test_updown_name_renames_the_bot_for_a_remote_seat() -> None:
    rc, out, err = _run_script("heuristic_bot.py", [{"type": "bye", "reason": "done"}],
                               name="alice")
    assert rc == 0
    assert out == [{"type": "hello", "protocol": [1], "name": "alice", "version": "1.0"}]
