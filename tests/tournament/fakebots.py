"""Misbehaving and instrumented in-process bots for tournament tests, loaded by the
tournament configuration as ``python = "fakebots.py:Name"`` (in worker processes)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from referee.bots import HeuristicBot
from referee.bots.policies import Bot
from referee.game import Decision


class Raiser(Bot):
    """Crashes on its third decision of every game."""

    name = "raiser"

    def new_game(self, seed: int) -> None:
        super().new_game(seed)
        self.n = 0

    def decide(self, obs: dict[str, Any], legal: Sequence[Decision]) -> Decision:
        self.n += 1
        if self.n == 3:
            raise RuntimeError("the raiser bot fell over")
        return legal[0]


class Garbage(Bot):
    """Answers nonsense every fifth decision (an illegal decision, substituted)."""

    name = "garbage"

    def new_game(self, seed: int) -> None:
        super().new_game(seed)
        self.n = 0

    def decide(self, obs: dict[str, Any], legal: Sequence[Decision]) -> Any:
        self.n += 1
        return "banana" if self.n % 5 == 0 else legal[-1]


class Counted(HeuristicBot):
    """The heuristic bot, leaving a file named after its process and object in
    $COUNTED_DIR each time one is made (to see how often workers make bots)."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        folder = os.environ["COUNTED_DIR"]
        with open(os.path.join(folder, f"{os.getpid()}-{id(self)}"), "w") as f:
            f.write(str(os.sched_getaffinity(0)))


class Exiter(Bot):
    """Takes its worker process down with it (``os._exit``), as a bot library
    calling ``exit()`` would."""

    name = "exiter"

    def decide(self, obs: dict[str, Any], legal: Sequence[Decision]) -> Decision:
        os._exit(3)
