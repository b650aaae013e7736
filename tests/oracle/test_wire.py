"""The referee's whole path against the oracle: what the bots are sent (observation,
legal list, events, game_over) and the game record, for games played by `run_game`
with bots over the in-memory transport (fast), and in real processes over stdio
and ZeroMQ (slow).  The games are the engine's own seeded ones (its shuffle, its first player):
the oracle re-runs them from the record."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

import pytest

from referee.game import GameConfig
from referee.play.runner import TimeControl, run_game
from referee.players.external import ExternalPlayer, external_player
from referee.players.launcher import Connection
from referee.transport.memory import MemoryTransport
from tests.oracle.adapter import random_setting
from tests.oracle.wire import WireDisagreement, check_game, random_answer

# Generous limits: no decision here may time out (a substituted one fails the check).
PATIENT = TimeControl(startup=120.0, per_decision=120.0, bank=0.0)


class MemoryBot:
    """A bot over the in-memory transport: keeps every message, answers at once."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.transports: list[MemoryTransport] = []

    @property
    def received(self) -> list[dict[str, Any]]:
        return [m for t in self.transports for m in t.peer.received]

    def launch(self) -> Connection:
        t = MemoryTransport()
        peer = t.peer

        def on_send(msg: dict[str, Any]) -> None:
            if msg["type"] == "request":
                answer = random_answer(self.seed, msg)
                peer.send({"type": "decision", "id": msg["id"], "decision": answer})

        peer.on_send = on_send
        peer.send({"type": "hello", "protocol": [1], "name": "oracle-memory"})
        self.transports.append(t)
        return Connection(t)


def settings(count: int, base: int) -> list[tuple[GameConfig, int]]:
    out = []
    for i in range(count):
        rng = random.Random(base + i)
        s = random_setting(rng, 2 + i % 5)
        out.append((s.engine_config(), base + i))
    return out


@pytest.mark.parametrize(("config", "seed"), settings(10, 500))
def test_what_bots_are_sent_in_memory(config: GameConfig, seed: int) -> None:
    bots = [MemoryBot(seed * 10 + s) for s in range(config.players)]
    players = [ExternalPlayer(f"m{s}", b.launch, time_control=PATIENT)
               for s, b in enumerate(bots)]
    try:
        record = run_game(config, seed, players, game_id=f"g{seed}")
    finally:
        for p in players:
            p.close()
    checked = check_game(record, [b.received for b in bots], [b.seed for b in bots])
    assert checked == len(record.decisions) > 0


def test_a_wrong_message_is_caught() -> None:
    """The check can fail: one observation altered in transit is named."""
    config, seed = GameConfig(players=2), 3
    bots = [MemoryBot(s) for s in range(2)]
    players = [ExternalPlayer(f"m{s}", b.launch, time_control=PATIENT)
               for s, b in enumerate(bots)]
    try:
        record = run_game(config, seed, players, game_id="g")
    finally:
        for p in players:
            p.close()
    received = [b.received for b in bots]
    request = next(m for m in received[1] if m["type"] == "request" and m["observation"]["turn"])
    request["observation"]["draw_pile"] += 1
    with pytest.raises(WireDisagreement, match="seat 1, request .*: observation"):
        check_game(record, received, [b.seed for b in bots])


@pytest.mark.slow
@pytest.mark.parametrize("transport", ["stdio", "zmq"])
@pytest.mark.parametrize(("config", "seed"), settings(4, 900))
def test_what_bot_processes_are_sent(
    config: GameConfig, seed: int, transport: str, tmp_path: Path
) -> None:
    bot = Path(__file__).with_name("wire_bot.py")
    seeds = [seed * 10 + s for s in range(config.players)]
    logs = [tmp_path / f"seat{s}.jsonl" for s in range(config.players)]
    players = [external_player(f"w{s}", [sys.executable, str(bot), str(logs[s]), str(seeds[s])],
                               time_control=PATIENT, memory_mb=None, transport=transport)
               for s in range(config.players)]
    try:
        record = run_game(config, seed, players, game_id=f"g{seed}")
    finally:
        for p in players:
            p.close()
    received = [[json.loads(x) for x in log.read_text().splitlines()] for log in logs]
    assert check_game(record, received, seeds) == len(record.decisions) > 0
