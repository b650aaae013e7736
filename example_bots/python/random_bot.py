#!/usr/bin/env python3
"""A 3UP 3DOWN bot that picks a uniformly random legal decision.

    referee play --bot "python3 example_bots/python/random_bot.py" ...

``--seed N`` (or the environment variable ``RANDOM_BOT_SEED``) makes it reproducible.
It seeds its random numbers afresh for each game, from that seed and the game's id:
a tournament gives each of this bot's processes whichever games its worker happens
to get, so a bot seeded once per process would play a game differently from one
run to the next.  Seeded per game, it plays each game the same way every time.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
from typing import Any

import updown_bot


class RandomBot(updown_bot.Bot):
    version = "1.0"

    def __init__(self, name: str, seed: int | None) -> None:
        super().__init__()
        self.name = name
        self.seed = seed
        self.rng = random.Random(seed)

    def on_new_game(self, message: dict[str, Any]) -> None:
        if self.seed is not None:
            self.rng = random.Random(f"{self.seed}:{message.get('game_id')}")

    def decide(self, observation: dict[str, Any], legal: list[str]) -> int:
        return self.rng.randrange(len(legal))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=os.environ.get("RANDOM_BOT_SEED"))
    parser.add_argument("--name", default="random")
    args = parser.parse_args()
    return updown_bot.run(RandomBot(args.name, args.seed))


if __name__ == "__main__":
    sys.exit(main())
