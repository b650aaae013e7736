"""The largest message of each type the referee and a bot exchange, over many games
(default: 6 seats, every variant alone and all together, both decks): what a bot's
size limit (``max_message_bytes``) must allow, and how far the referee's own
messages go.  Each seat answers with a random legal index (the games go where random
play takes them); its reply is measured as the longest it could be: the legal text,
not the index, and its largest possible ``hello`` (200-character fields, each
character escaped as JSON's longest form).

    .venv/bin/python bench/message_sizes.py --games 200 --players 6
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from referee.game import GameConfig  # noqa: E402
from referee.game.config import VARIANTS  # noqa: E402
from referee.play.runner import TimeControl, run_game  # noqa: E402
from referee.players.external import ExternalPlayer  # noqa: E402
from referee.players.launcher import Connection  # noqa: E402
from referee.transport.stdio import StdioTransport, encode  # noqa: E402

TC = TimeControl(startup=30.0, per_decision=30.0, bank=0.0)


class _Measured(StdioTransport):
    """A bot in this process that answers each request with a random legal index
    and notes the size of every message it is sent (and of its longest reply)."""

    def __init__(self, largest: dict[str, int], rng: random.Random) -> None:
        r, self.reply_fd = os.pipe()
        super().__init__(os.open(os.devnull, os.O_WRONLY), r)
        self.largest, self.rng = largest, rng
        os.write(self.reply_fd, b'{"type":"hello","protocol":[1],"name":"m"}\n')

    def send(self, message: dict[str, Any]) -> None:
        data = encode(message)
        kind = message["type"]
        self.largest[kind] = max(self.largest.get(kind, 0), len(data) - 1)
        super().send_bytes(data)
        if kind == "request":
            legal = message["legal"]
            longest = max(legal, key=len)
            reply = encode({"type": "decision", "id": message["id"], "decision": longest})
            self.largest["decision"] = max(self.largest.get("decision", 0), len(reply) - 1)
            os.write(self.reply_fd, b'{"type":"decision","id":%d,"decision":%d}\n'
                     % (message["id"], self.rng.randrange(len(legal))))

    def close(self) -> None:
        if not self._closed:
            os.close(self.reply_fd)
        super().close()


def largest_hello() -> int:
    """The longest hello the protocol allows: 200-character name, version and token
    of astral characters (each ``\\udXXX\\udXXX`` in JSON: 12 bytes)."""
    worst = "\U0001f600" * 200  # orjson writes UTF-8; Python's json escapes it: 12 bytes
    hello = {"type": "hello", "protocol": [1], "name": worst, "version": worst,
             "token": worst}
    return len(json.dumps(hello, separators=(",", ":")).encode())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=200, help="games per configuration")
    ap.add_argument("--players", type=int, default=6)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    configs = [GameConfig(players=args.players, deck=deck, variants=v)
               for deck in ("standard", "alternative")
               for v in [frozenset(), *(frozenset({x}) for x in VARIANTS), frozenset(VARIANTS)]
               if deck == "standard" or args.players <= 3]
    largest: dict[str, int] = {}
    rng = random.Random(args.seed)
    games = 0
    for config in configs:
        bots = [_Measured(largest, rng) for _ in range(config.players)]
        seats = [ExternalPlayer(f"m{i}", lambda b=b: Connection(b, None), time_control=TC)
                 for i, b in enumerate(bots)]
        for p in seats:
            p.connect()
        for g in range(args.games):
            record = run_game(config, args.seed + g, seats, game_id=f"s{g}", time_control=TC)
            if record.faults:
                raise RuntimeError(f"game {g}: {record.faults[0]}")
            games += 1
        for p in seats:
            p.close()
    largest["hello (longest allowed)"] = largest_hello()
    print(f"{games} games at {args.players} seats ({len(configs)} configurations); "
          f"largest message, bytes (JSON, without its newline):")
    for kind in sorted(largest, key=lambda k: -largest[k]):
        print(f"  {kind:26} {largest[kind]:>8}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
