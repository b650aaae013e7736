"""In-process reference bots, for tests, benchmarks and the demo.

Each bot sees exactly what an external bot sees: the seat's observation (a JSON-ready
dict, RULES §6), the list of legal decisions, and (``Bot.observe``, called by the
in-process players before each decision) the seat's events since its previous one;
it returns one of the decisions.  They take their randomness from a seeded
``random.Random``.
"""

from __future__ import annotations

from .policies import BUILTIN_BOTS, Bot, HeuristicBot, LowestBot, RandomBot, make_bot

__all__ = ["BUILTIN_BOTS", "Bot", "HeuristicBot", "LowestBot", "RandomBot", "make_bot"]
