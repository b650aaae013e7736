"""Which games a league plays: a pure function of its active field, its table sizes,
its deals per lineup and its seed.

Each game is a function of its lineup and its deal number only, never of when it
was scheduled (unlike a tournament's one global list): the deal's seed comes from
the league seed, the table size and the deal number; the seating from those and the
lineup's bot *names* (not their versions, so that a resubmitted bot meets the same
deals in the same seats).  So a league grown one submission at a time, with deals
raised on the way, ends up with exactly the games of a fresh league of its final
field, and adding a bot schedules only its new lineups.

The list is deal-major (deal 0 of every lineup and table size, then deal 1...), so
pending games are handed out interleaved across lineups and the standings are fair
at any moment.  Uses ``referee.tournament.schedule`` for the seeds and seatings.
Does no I/O.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..tournament.schedule import derive_seed, seatings


def entry_id(name: str, version: int) -> str:
    """How an entry sits at a table, in records and logs: ``alice@2``."""
    return f"{name}@{version}"


def name_of(entry: str) -> str:
    return entry.rpartition("@")[0] or entry


@dataclass(frozen=True)
class LeagueGame:
    """One game of a league: ``seats[i]`` is the entry (``name@version``) in seat i."""

    table: int  # seats at the table
    deal: int
    deal_seed: int
    seating: int  # which seating of the deal
    seats: tuple[str, ...]

    @property
    def key(self) -> str:
        """The game's identity in the store: the same game has the same key whenever
        and however it was scheduled."""
        return f"{self.table}:{self.deal}:{self.seating}:{','.join(self.seats)}"

    @property
    def lineup(self) -> tuple[str, ...]:
        return tuple(sorted(self.seats))


def deal_seed(seed: int, table: int, deal: int) -> int:
    return derive_seed(seed, "league-deal", table, deal)


def lineup_games(lineup: Sequence[str], table: int, deal: int, seed: int,
                 seating: str) -> list[LeagueGame]:
    """The games of one deal of one lineup (entries sorted by name)."""
    ordered = tuple(sorted(lineup, key=name_of))
    names = [name_of(e) for e in ordered]
    rng = random.Random(derive_seed(seed, "league-seating", table, deal, *names))
    ds = deal_seed(seed, table, deal)
    return [LeagueGame(table, deal, ds, i, seats)
            for i, seats in enumerate(seatings(ordered, seating, rng))]


def league_schedule(field: Iterable[str], tables: Sequence[int], deals: int, seed: int,
                    seating: str = "rotate", *,
                    authors: Mapping[str, str] | None = None) -> list[LeagueGame]:
    """Every game of a league whose active entries are ``field`` (one per name),
    deal-major: deal 0 of every table size and lineup, then deal 1, ...
    ``authors`` (entry -> its author): a lineup holding two entries of one author is
    not played (``[league] separate_authors``)."""
    entries = sorted(field, key=name_of)
    names = [name_of(e) for e in entries]
    if len(set(names)) != len(names):
        raise ValueError(f"the active field has two versions of one bot: {entries}")
    out: list[LeagueGame] = []
    for deal in range(deals):
        for table in sorted(tables):
            for lineup in itertools.combinations(entries, table):
                if authors is not None and not apart(lineup, authors):
                    continue
                out += lineup_games(lineup, table, deal, seed, seating)
    return out


def apart(lineup: Sequence[str], authors: Mapping[str, str]) -> bool:
    """No two entries of ``lineup`` have one author."""
    owners = [authors.get(e, name_of(e)) for e in lineup]
    return len(set(owners)) == len(owners)


def interleave(games: Sequence[LeagueGame], counts: dict[str, int]) -> list[LeagueGame]:
    """``games`` (pending, deal-major) in the order to hand them out: deal by deal,
    and within a deal the lineup whose bots have played least so far first (the
    seatings of one lineup's deal stay together), so that the games per bot stay
    within about one lineup of each other however far the league has got.
    ``counts``: games each entry has played."""
    counts = dict(counts)
    units: dict[tuple[int, int, tuple[str, ...]], list[LeagueGame]] = {}
    for g in games:
        units.setdefault((g.deal, g.table, g.lineup), []).append(g)
    out: list[LeagueGame] = []
    by_deal: dict[int, list[tuple[int, tuple[str, ...]]]] = {}
    for deal, table, lineup in units:
        by_deal.setdefault(deal, []).append((table, lineup))
    for deal in sorted(by_deal):
        left = list(by_deal[deal])
        while left:
            def load(u: tuple[int, tuple[str, ...]]) -> tuple[int, int]:
                cs = [counts.get(e, 0) for e in u[1]]
                return (max(cs), sum(cs))
            best = min(left, key=load)  # min keeps the first of equals: deterministic
            left.remove(best)
            unit = units[(deal, best[0], best[1])]
            out += unit
            for e in best[1]:
                counts[e] = counts.get(e, 0) + len(unit)
    return out
