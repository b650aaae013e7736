#!/usr/bin/env python3
"""A 3UP 3DOWN bot that picks a uniformly random legal decision.

    referee play --bot "python3 example_bots/python/random_bot.py" ...

``--seed N`` (or the environment variable ``RANDOM_BOT_SEED``) makes it reproducible.
"""

from __future__ import annotations

import argparse
import os
import random
import sys

import updown_bot


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=os.environ.get("RANDOM_BOT_SEED"))
    parser.add_argument("--name", default="random")
    args = parser.parse_args()
    rng = random.Random(args.seed)

    def decide(observation: dict[str, object], legal: list[str]) -> int:
        return rng.randrange(len(legal))

    return updown_bot.run(decide, name=args.name, version="1.0")


if __name__ == "__main__":
    sys.exit(main())
