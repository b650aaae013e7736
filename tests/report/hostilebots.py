"""An in-process bot for the report's hostile-text test (``python = "hostilebots.py:Hostile"``):
every third decision it sends markup instead of a decision (an illegal decision, which
the fault's detail quotes), else the first legal one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from referee.bots.policies import Bot
from referee.game import Decision

MARKUP = "\"'><img src=x onerror=alert(3)><script>alert(4)</script>{1r}"


class Hostile(Bot):
    name = "hostile"

    def new_game(self, seed: int) -> None:
        super().new_game(seed)
        self.n = 0

    def decide(self, obs: dict[str, Any], legal: Sequence[Decision]) -> Any:
        self.n += 1
        return MARKUP if self.n % 3 == 0 else legal[0]
