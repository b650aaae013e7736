"""Which games a league plays: a pure function of its active field, its table sizes,
its deals per lineup, its seed and its secret.

Each game is a function of its lineup and its deal number only, never of when it
was scheduled (unlike a tournament's one global list).  **A deck is dealt to one
lineup only**: a deal's seed is a keyed hash (HMAC-SHA256) under the league's
*secret* of the seed, the table size, the deal number and the *whole lineup*: each
entry's name and what it is (``ident``: its content hash, command and transport;
and, for a version identical to an earlier one, which repeat it is: ``deck_idents``).
So a new entry or a new version plays decks no game has played before -- whatever
its author read of earlier games (its bot's stderr, ``submit --status``) says
nothing of them -- while a league grown one submission at a time still ends up with
exactly the games of a fresh league of its final field (the same bots, the same
secret), and adding a bot schedules only its new lineups.  The seatings come from
the same key; within a lineup, a deal is played in every seating (duplicate).

The list is deal-major (deal 0 of every lineup and table size, then deal 1...), so
pending games are handed out interleaved across lineups and the standings are fair
at any moment.  Uses ``referee.tournament.schedule`` for the seatings.  Does no I/O.
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..tournament.schedule import seatings


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


def keyed(secret: bytes, *parts: object) -> int:
    """A 63-bit number only the holder of ``secret`` can compute from ``parts``."""
    msg = json.dumps(parts, separators=(",", ":")).encode()
    return int.from_bytes(hmac.new(secret, msg, hashlib.sha256).digest()[:8], "big") >> 1


def deck_idents(versions: Iterable[tuple[str, str]]) -> dict[str, str]:
    """What keys each submission's decks (entry id -> key), from every version ever
    submitted ``(entry id, ident)``: its ident, and when earlier versions of its
    name were that very bot, how many.  So no two submissions share a deck: an
    identical resubmission is a submission of its own and meets none of the decks
    its earlier self met -- else its author could scout them with the first, then
    tell the second what they hold in its version number and the time it is sent
    (``new_game`` names both).  A league whose final field holds such a
    resubmission therefore plays other decks than a fresh league of that field."""
    seen: dict[tuple[str, str], int] = {}
    out: dict[str, str] = {}
    for entry, ident in sorted(versions, key=lambda v: (name_of(v[0]), version_of(v[0]))):
        k = seen.get((name_of(entry), ident), 0)
        seen[name_of(entry), ident] = k + 1
        out[entry] = ident if k == 0 else f"{ident}+{k}"
    return out


def version_of(entry: str) -> int:
    v = entry.rpartition("@")[2]
    return int(v) if v.isdigit() else 0


def lineup_key(lineup: Sequence[str], idents: Mapping[str, str] | None) -> list[list[str]]:
    """What a lineup is, for its decks: each entry's name and ident, by name."""
    return [[name_of(e), (idents or {}).get(e, e)] for e in sorted(lineup, key=name_of)]


def deal_seed(seed: int, table: int, deal: int, lineup: Sequence[str] = (), *,
              secret: bytes = b"", idents: Mapping[str, str] | None = None) -> int:
    """The seed of ``lineup``'s deal number ``deal`` at a ``table``-seat table: its
    own, dealt to no other lineup."""
    return keyed(secret, "league-deal", seed, table, deal, lineup_key(lineup, idents))


def lineup_games(lineup: Sequence[str], table: int, deal: int, seed: int,
                 seating: str, *, secret: bytes = b"",
                 idents: Mapping[str, str] | None = None) -> list[LeagueGame]:
    """The games of one deal of one lineup (entries sorted by name)."""
    ordered = tuple(sorted(lineup, key=name_of))
    key = lineup_key(ordered, idents)
    rng = random.Random(keyed(secret, "league-seating", seed, table, deal, key))
    ds = deal_seed(seed, table, deal, ordered, secret=secret, idents=idents)
    return [LeagueGame(table, deal, ds, i, seats)
            for i, seats in enumerate(seatings(ordered, seating, rng))]


def league_schedule(field: Iterable[str], tables: Sequence[int], deals: int, seed: int,
                    seating: str = "rotate", *,
                    authors: Mapping[str, str] | None = None, secret: bytes = b"",
                    idents: Mapping[str, str] | None = None) -> list[LeagueGame]:
    """Every game of a league whose active entries are ``field`` (one per name),
    deal-major: deal 0 of every table size and lineup, then deal 1, ...
    ``authors`` (entry -> its author): a lineup holding two entries of one author is
    not played (``[league] separate_authors``).  ``secret`` and ``idents`` (entry ->
    what it is: ``Entry.ident``) key the decks (without them: the entry ids)."""
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
                out += lineup_games(lineup, table, deal, seed, seating, secret=secret,
                                    idents=idents)
    return out


def apart(lineup: Sequence[str], authors: Mapping[str, str]) -> bool:
    """No two entries of ``lineup`` have one author."""
    owners = [authors.get(e, name_of(e)) for e in lineup]
    return len(set(owners)) == len(owners)


def game_alias(secret: bytes, deal_seed: int, seats: Sequence[str]) -> str:
    """The game id a league's bots are sent: ``t`` and 12 hex digits, keyed by the
    secret from the game's own (lineup-own) deal and seating, so that it links the
    game to nothing of another lineup, or of another version."""
    # Names, not versions: the deal seed already says which bots these are, and a
    # grown league's games must be a fresh league's to the letter (bots seeded by
    # their game id play them alike).
    msg = json.dumps(["league-alias", deal_seed, [name_of(s) for s in seats]]).encode()
    return "t" + hmac.new(secret, msg, hashlib.sha256).hexdigest()[:12]


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
