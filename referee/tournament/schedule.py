"""Which games a tournament plays: a pure function from the configuration to a list
of ``GameSpec``, the same list for the same configuration (cutechess: a tournament
type only says which games; running them is someone else's job).

Owns the formats (round-robin, gauntlet, balanced), the deals and their seeds, and
the seatings of each deal.  Does no I/O, reads no clock, uses no global randomness:
every random choice comes from a ``random.Random`` seeded from the tournament seed.

Fairness (duplicate deals): a deal is played once per seating of its lineup, all
with the same deck order and the same first player (the deal seed fixes both,
RULES §2 and §7).  With ``seating = "rotate"`` the lineup's cyclic order is drawn at
random for each deal and then rotated through all seats: rotating one fixed order
would always seat the same bot right after the same bot, and who plays after whom
matters in a game where one player's pick-ups feed the next.  With ``seating =
"williams"`` the deal is played in the orders of a Williams design
(``referee.stats.designs``: every bot in every seat equally often, and right after
every other bot equally often), the bots drawn at random onto its symbols.
"""

from __future__ import annotations

import hashlib
import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass

from ..game.seeds import derive_seed as derive_seed  # re-exported
from ..stats.designs import williams
from .config import TournamentConfig, seatings_per_deal


@dataclass(frozen=True)
class GameSpec:
    """One game to play: ``seats[i]`` is the name of the bot in seat i.  Every game of
    one ``deal`` has the same ``deal_seed`` (same deck order and first player)."""

    index: int  # position in the schedule
    deal: int  # the deal this game replays
    deal_seed: int
    seats: tuple[str, ...]

    @property
    def game_id(self) -> str:
        return f"g{self.index:06d}"

    def to_dict(self) -> dict[str, object]:
        return {"index": self.index, "game_id": self.game_id, "deal": self.deal,
                "deal_seed": self.deal_seed, "seats": list(self.seats)}


def lineups(config: TournamentConfig) -> list[tuple[str, ...]]:
    """The lineups of one round (round-robin, gauntlet), in a fixed order."""
    names = config.bot_names
    k = config.seats
    if config.format == "round-robin":
        return list(itertools.combinations(names, k))
    if config.format == "gauntlet":
        field = [n for n in names if n not in config.challengers]
        return [(c, *rest) for c in config.challengers for rest in itertools.combinations(field, k - 1)]
    raise ValueError(f"the {config.format} format has no fixed lineups")


def balanced_lineups(names: Sequence[str], seats: int, count: int, seed: int) -> list[tuple[str, ...]]:
    """``count`` lineups of ``seats`` bots each such that every bot sits at as many
    tables as any other (to within one) and every pair meets about equally often.

    Greedy: each seat of a new lineup goes to a bot among those with the fewest
    tables so far (which keeps the table counts within one), the one that has met the
    bots already chosen least often, ties broken at random."""
    rng = random.Random(derive_seed(seed, "balanced"))
    tables = dict.fromkeys(names, 0)
    met = {a: dict.fromkeys(names, 0) for a in names}
    out: list[tuple[str, ...]] = []
    for _ in range(count):
        chosen: list[str] = []
        for _ in range(seats):
            free = [b for b in names if b not in chosen]
            fewest = min(tables[b] for b in free)
            pool = [b for b in free if tables[b] == fewest]
            best = min(pool, key=lambda b: (sum(met[b][c] for c in chosen), rng.random()))
            chosen.append(best)
        for b in chosen:
            tables[b] += 1
            for c in chosen:
                if c != b:
                    met[b][c] += 1
        out.append(tuple(chosen))
    return out


def seatings(lineup: tuple[str, ...], how: str, rng: random.Random) -> list[tuple[str, ...]]:
    """The seatings one deal is played with (see the module docstring)."""
    if how == "all":
        return list(itertools.permutations(lineup))
    order = list(lineup)
    rng.shuffle(order)
    if how == "random":
        return [tuple(order)]
    if how == "williams":
        return [tuple(order[i] for i in row) for row in williams(len(order))]
    return [tuple(order[i:] + order[:i]) for i in range(len(order))]


def schedule(config: TournamentConfig) -> list[GameSpec]:
    """Every game of the tournament, in the order they are handed out.

    Round-robin and gauntlet: ``deals`` deals for each lineup, deal-major (round 1 of
    every lineup, then round 2...), so that a tournament stopped early is still
    balanced.  Balanced: ``games / seatings per deal`` deals, one lineup each.  The
    seed must be fixed (``run.with_seed``: a tournament without one draws it when it
    first runs)."""
    if config.seed is None:
        raise ValueError("the tournament's seed is not fixed yet (run.with_seed)")
    seed = config.seed
    if config.format == "balanced":
        assert config.games is not None
        n_deals = config.games // seatings_per_deal(config.seating, config.seats)
        per_deal = balanced_lineups(config.bot_names, config.seats, n_deals, seed)
    else:
        ups = lineups(config)
        per_deal = [lineup for _ in range(config.deals) for lineup in ups]
    games: list[GameSpec] = []
    for deal, lineup in enumerate(per_deal):
        deal_seed = derive_seed(seed, "deal", deal)
        rng = random.Random(derive_seed(seed, "seating", deal))
        for seats in seatings(lineup, config.seating, rng):
            games.append(GameSpec(len(games), deal, deal_seed, seats))
    return games


def schedule_digest(games: Sequence[GameSpec]) -> str:
    """A short fingerprint of a schedule: resuming is refused when it changed."""
    h = hashlib.sha256()
    for g in games:
        h.update(f"{g.index}:{g.deal}:{g.deal_seed}:{','.join(g.seats)};".encode())
    return h.hexdigest()[:16]
