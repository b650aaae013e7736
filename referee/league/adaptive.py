"""A league that schedules where its ranking is least certain (``[league] schedule =
"adaptive"``): which duplicate sets it plays next, from the results so far.

The arithmetic is ``referee.stats.adaptive`` (the strengths and their intervals,
the separation of the top k, the choice of lineups); this module feeds it a
league's games and turns its choice into games of the league: each chosen lineup
plays its next deal (numbered per lineup: 0, 1, 2...) in every seating, its deck
keyed as every league deck is (``schedule.lineup_games``: the league's secret and
the whole lineup), so the deal luck still cancels within a set and no deck is
dealt to two lineups.

Determinism.  A batch is chosen only when every game planned before it, among the
active field, has been played: the choice is then a function of the league (its
seed, its secret, its settings, its active entries) and of the games played so far,
and of nothing else (not of when they were played, how many workers played them,
nor whether the run was interrupted and resumed).  The games of a batch are planned
(``LeagueStore.plan``) before they are played; a run that resumes plays the rest of
its batch first, as an uninterrupted run would have.

When it stops.  For each table size, once the top ``top`` entries are separated at
95 % (``stats.adaptive.separation``) and every entry has had its warm-up; or once
the table size has had as many games as a round-robin of ``deals`` deals per lineup
would play.  A new entry (or version) reopens it; so do raised ``deals``.

Does no I/O but through the store it is given.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from ..stats.adaptive import Separation, SetScore, Strengths, choose, deficits, fit, separation
from ..tournament.config import seatings_per_deal
from ..tournament.outcome import GameOutcome
from ..tournament.standings import place_points
from .config import LeagueConfig
from .schedule import LeagueGame, apart, deck_idents, keyed, lineup_games, name_of
from .store import Entry, LeagueStore, Planned

#: Sets each entry plays before the choice is by usefulness (lineups drawn at random).
WARMUP = 2


@dataclass(frozen=True)
class TableState:
    """Where one table size of an adaptive league stands."""

    table: int
    strengths: Strengths
    separation: Separation
    counts: dict[str, int]  # games per active entry among the active field
    games: int  # games played among the active field
    budget: int  # the round-robin's games: the most it plays
    cold: bool  # some entry has not had its warm-up

    @property
    def settled(self) -> bool:
        """Nothing more to play: the top are separated (every entry warmed up), or
        the budget is spent."""
        return (self.separation.separated and not self.cold) or self.games >= self.budget


def field_planned(planned: Sequence[Planned], active: Sequence[Entry], table: int
                  ) -> list[Planned]:
    """The games ever planned at ``table`` among the active entries (their exact
    versions), cancelled or not."""
    ids = {e.id for e in active}
    return [p for p in planned if p.table == table and set(p.seats) <= ids]


def set_scores(games: Sequence[tuple[Planned, GameOutcome]], scores: str) -> list[SetScore]:
    """Each duplicate set's scores: per entry, the mean over the set's games of the
    share of opponents it finished ahead of (luck-adjusted when ``scores`` is
    ``adjusted`` and the game has them, as the standings count it)."""
    per: dict[tuple[tuple[str, ...], int], dict[str, list[float]]] = defaultdict(
        lambda: defaultdict(list))
    for p, o in games:
        k = len(o.seats)
        lineup = tuple(sorted(o.seats))
        for s, e in enumerate(o.seats):
            if scores == "adjusted" and o.adjusted is not None:
                share = o.adjusted[0][s]
            else:
                share = place_points(o.places, s) / (k - 1)
            per[(lineup, p.deal)][e].append(share)
    return [SetScore(lineup, tuple(math.fsum(per[(lineup, d)][e]) / len(per[(lineup, d)][e])
                                   for e in lineup))
            for lineup, d in sorted(per)]


def table_state(config: LeagueConfig, active: Sequence[Entry], table: int,
                planned: Sequence[Planned], outcomes: dict[int, GameOutcome]) -> TableState:
    mine = field_planned(planned, active, table)
    games = [(p, outcomes[p.idx]) for p in mine if p.idx in outcomes]
    ids = [e.id for e in active]
    st = fit(set_scores(games, config.scores), ids)
    counts = dict.fromkeys(ids, 0)
    for _, o in games:
        for e in o.seats:
            counts[e] += 1
    per_set = seatings_per_deal(config.seating, table)
    budget = config.deals * math.comb(len(ids), table) * per_set
    cold = bool(deficits(counts, ids, table, per_set, min_share=0.0, warmup=WARMUP))
    return TableState(table, st, separation(st, config.top), counts, len(games), budget, cold)


def states(store: LeagueStore, config: LeagueConfig) -> list[TableState]:
    """Each table size's state, from the store."""
    active = store.active()
    planned = store.planned()
    outcomes = {o.index: o for o in store.outcomes()}
    return [table_state(config, active, k, planned, outcomes) for k in config.seats]


def _authors(config: LeagueConfig, active: Sequence[Entry]) -> dict[str, str] | None:
    return {e.id: e.author for e in active} if config.separate_authors else None


def next_games(store: LeagueStore, config: LeagueConfig) -> list[LeagueGame]:
    """The games to play now: those planned and not played among the active field
    (the rest of a batch), or else the next batch, chosen from the results so far
    (empty when every table size is settled)."""
    active = store.active()
    planned = store.planned()
    outcomes = {o.index: o for o in store.outcomes()}
    by_id = {e.id: e for e in active}
    idents = deck_idents((e.id, e.ident) for e in store.entries())  # a repeat: its own decks
    secret = store.secret()
    left = [p for k in config.seats for p in field_planned(planned, active, k)
            if p.idx not in outcomes]
    if left:
        return [LeagueGame(p.table, p.deal, p.deal_seed, p.seating, p.seats) for p in left]
    authors = _authors(config, active)
    out: list[LeagueGame] = []
    for k in config.seats:
        state = table_state(config, active, k, planned, outcomes)
        if state.settled or len(active) < k:
            continue
        per_set = seatings_per_deal(config.seating, k)
        sets = config.batch or math.ceil(len(active) / k)
        sets = min(sets, math.ceil((state.budget - state.games) / per_set))
        mine = field_planned(planned, active, k)
        done_sets = len({(p.deal, tuple(sorted(p.seats))) for p in mine})
        seed = keyed(secret, "league-adaptive", config.seed, k, done_sets)
        chosen = choose(state.strengths, k, sets, top=config.top, counts=state.counts,
                        per_set=per_set, min_share=config.min_share, warmup=WARMUP,
                        seed=seed,
                        allowed=(lambda lineup: apart(lineup, authors)) if authors else None)
        deals: dict[tuple[str, ...], int] = {}
        for p in mine:
            lineup = tuple(sorted(p.seats, key=name_of))
            deals[lineup] = max(deals.get(lineup, 0), p.deal + 1)
        for lineup in chosen:
            ordered = tuple(sorted(lineup, key=name_of))
            deal = deals.get(ordered, 0)
            deals[ordered] = deal + 1
            out += lineup_games(ordered, k, deal, config.seed, config.seating, secret=secret,
                                idents={e: idents[e] for e in ordered if e in by_id})
    return out


def describe(state: TableState, config: LeagueConfig) -> str:
    """Whether the top are separated at 95 %, by what, and (an adaptive league)
    whether its schedule has stopped."""
    kind = "luck-adjusted" if config.scores == "adjusted" else "raw"
    more = ""
    if config.schedule == "adaptive":
        if state.separation.separated and not state.cold:
            more = "; the adaptive schedule has stopped"
        elif state.games >= state.budget:
            more = ("; the adaptive schedule has played its budget (as many games as "
                    f"{config.deals} deals of every lineup)")
    return (f"{state.separation.text()} (strengths from the {kind} scores, corrected for "
            f"the opponents met){more}")


def separation_lines(store: LeagueStore, config: LeagueConfig) -> list[str]:
    """A line per table size that has games: are its top ``top`` separated at 95 %?"""
    return [f"{s.table} seats: {describe(s, config)}" for s in states(store, config) if s.games]
