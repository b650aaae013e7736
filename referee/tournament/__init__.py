"""Tournaments: which games are played (schedule), who plays them (executor), where
their results go (store) and what they add up to (standings).

Layers, each in its own module and each ignorant of the ones above it::

    config     TOML file -> TournamentConfig (every mistake named by its key)
    schedule   TournamentConfig -> [GameSpec]   (pure, deterministic for a seed)
    outcome    GameOutcome: what is kept of one finished game (executors make it,
               the store keeps it, standings and reports read it)
    executor   runs GameSpecs in worker processes -> GameOutcome  (an interface)
    store      SQLite file + game records: every finished game committed at once
    standings  stored outcomes -> tables (pure arithmetic, no I/O)
    driver     the one run loop (tournaments, matches, leagues): the store and its
               lock, resume, the executor's reports, stop rules, progress
    run        a tournament's run: seed, sandbox, its fixed schedule to the driver
    cli        the ``referee tournament`` click group: parses, calls, prints
"""

from __future__ import annotations

from ..players.botspec import BotSpec
from .config import TournamentConfig, TournamentConfigError, load_config
from .schedule import GameSpec, schedule

__all__ = [
    "BotSpec",
    "GameSpec",
    "TournamentConfig",
    "TournamentConfigError",
    "load_config",
    "schedule",
]
