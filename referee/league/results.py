"""What a league's games add up to: which games of its active field are pending, how
far it has got, and its standings per table size (``standings``, ``tables``).

Read by the commands that only look at a league (``league standings``, ``show``,
``games``; ``submit --status`` on a server; the report) as well as by its runs
(``run.py``): it imports neither the checks nor the executors, so that those
commands start without them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from ..errors import UsageError
from ..tournament.outcome import GameOutcome
from ..tournament.standings import Standings, compute
from ..tournament.store import Store
from . import adaptive
from .config import LeagueConfig
from .schedule import LeagueGame, deck_idents, interleave, league_schedule, name_of
from .store import Entry, LeagueStore, Planned


class LeagueError(UsageError):
    """A league command that cannot be done: one line."""


def config_of(store: LeagueStore) -> LeagueConfig:
    return store.league_config()


def league_config(league_dir: Path) -> LeagueConfig:
    """The configuration of the league in ``league_dir``."""
    store = LeagueStore.open(league_dir)
    try:
        return config_of(store)
    finally:
        store.close()


def authors_of(config: LeagueConfig, entries: Sequence[Entry]) -> dict[str, str] | None:
    """Each entry's author, when the league keeps one author's entries apart."""
    return {e.id: e.author for e in entries} if config.separate_authors else None


def schedule_of(store: LeagueStore, config: LeagueConfig, entries: Sequence[Entry],
                tables: Sequence[int]) -> list[LeagueGame]:
    """Every game of ``entries`` (one version per name) at ``tables``: its decks
    keyed by the league's secret and by what each entry is (``deck_idents``)."""
    idents = deck_idents((e.id, e.ident) for e in store.entries())
    return league_schedule([e.id for e in entries], tables, config.deals, config.seed,
                           config.seating, authors=authors_of(config, entries),
                           secret=store.secret(), idents=idents)


def pending(store: LeagueStore) -> list[tuple[LeagueGame, int]]:
    """The games of the active field not played yet, in schedule order (deal-major:
    interleaved across lineups), with their idx."""
    config = config_of(store)
    if config.schedule == "adaptive":
        chosen = adaptive.next_games(store, config)
        idx = store.plan(chosen)
        return [(g, idx[g.key]) for g in chosen]
    active = store.active()
    games = schedule_of(store, config, active, config.seats)
    played = store.played_keys()
    keys = {g.key for g in games}
    counts: dict[str, int] = {}
    for p in store.planned():
        if p.key in keys and p.key in played:
            for e in p.seats:
                counts[e] = counts.get(e, 0) + 1
    todo = interleave([g for g in games if g.key not in played], counts)
    idx = store.plan(todo)
    return [(g, idx[g.key]) for g in todo]


def progress_of(store: LeagueStore) -> tuple[int, int]:
    """(games played, games scheduled) of the active field, every table size (an
    adaptive league: games planned so far)."""
    config = config_of(store)
    if config.schedule == "adaptive":
        field = [p for k in config.seats
                 for p in adaptive.field_planned(store.planned(), store.active(), k)]
        played_keys = store.played_keys()
        return sum(1 for p in field if p.key in played_keys), len(field)
    games = schedule_of(store, config, store.active(), config.seats)
    played = store.played_keys()
    return sum(1 for g in games if g.key in played), len(games)


def _relabel(st: Standings, label: dict[str, str]) -> Standings:
    """``st`` with its bots renamed by ``label``."""
    for r in st.rows:
        r.bot = label[r.bot]
    st.head = {label[a]: {label[b]: v for b, v in row.items()} for a, row in st.head.items()}
    st.met = {label[a]: {label[b]: v for b, v in row.items()} for a, row in st.met.items()}
    st.significant = {label[a]: {label[b]: v for b, v in row.items()}
                      for a, row in st.significant.items()}
    return st


def _set_key(p: Planned) -> tuple[int, tuple[str, ...], int]:
    """A duplicate set of a league: its table size, its lineup's names and deal."""
    return (p.table, tuple(sorted(name_of(s) for s in p.seats)), p.deal)


def canonical(p: Planned) -> tuple[int, int, int, tuple[str, ...]]:
    """The order games are counted in (the rating depends on it): the schedule's,
    deal-major, by bot names, so that it does not depend on versions or timing."""
    return (p.deal, p.table, p.seating, tuple(name_of(s) for s in p.seats))


def standings(league_dir: Path, *, table: int | None = None,
              history: bool = False, scores: str = "adjusted") -> list[Standings]:
    """One table per table size: the active entries over the games among the active
    field (``history``: every version over every game), games taken in schedule
    order (deal-major), whatever order they were played in."""
    return [st for st, _ in tables(league_dir, table=table, history=history, scores=scores)]


def tables(league_dir: Path, *, table: int | None = None, history: bool = False,
           scores: str = "adjusted") -> list[tuple[Standings, list[GameOutcome]]]:
    """``standings``, each table with the games it counts (in its order): what
    ``referee report`` draws of a league."""
    store = LeagueStore.open(league_dir)
    try:
        config = config_of(store)
        entries = store.entries() if history else store.active()
        ids = [e.id for e in entries]
        by_idx = {p.idx: p for p in store.planned()}
        outcomes = list(store.outcomes())
        separations = {} if history else {
            s.table: adaptive.describe(s, config) for s in adaptive.states(store, config)
            if s.games}
        out = []
        for k in config.seats:
            if table is not None and k != table:
                continue
            if history:
                games = [o for o in outcomes if len(o.seats) == k]
                scheduled = len(games)
            elif config.schedule == "adaptive":
                # The games planned among the active field (its exact versions).
                field = adaptive.field_planned(list(by_idx.values()), entries, k)
                idxs = {p.idx for p in field}
                games = [o for o in outcomes if o.index in idxs]
                scheduled = len(field)
            else:
                plan = schedule_of(store, config, entries, [k])
                keys = {g.key for g in plan}
                games = [o for o in outcomes if by_idx[o.index].key in keys]
                scheduled = len(plan)
            games.sort(key=lambda o: canonical(by_idx[o.index]))
            # A duplicate set is one lineup's deal (every lineup plays the same deal
            # numbers): numbered here from what it is, not from when it was planned,
            # so that a grown league counts its sets as a fresh one does (the
            # intervals are taken over them).
            sets = sorted({_set_key(by_idx[o.index]) for o in games})
            number = {key: i for i, key in enumerate(sets)}
            games = [replace(o, deal=number[_set_key(by_idx[o.index])]) for o in games]
            if history:
                st = compute(games, ids, k, name=config.name + " (every version)",
                             scheduled=scheduled, scores=scores)
            else:
                # Counted under the entries' names (one version each is active), then
                # labelled with their versions: the figures (the rating's bootstrap
                # included) are those of a fresh league of the same bots.
                label = {name_of(i): i for i in ids}
                named = [replace(o, seats=tuple(name_of(b) for b in o.seats)) for o in games]
                st = _relabel(compute(named, list(label), k, name=config.name,
                                      scheduled=scheduled, scores=scores), label)
            if not history:
                st.separation = separations.get(k)
            st.seed, st.seed_source = config.seed, "given"
            st.luck_value = store.luck_setting().describe()
            st.running = Store.in_use(league_dir) if not st.complete else None
            described = store.meta("sandbox")
            st.sandbox = json.loads(described) if described else None
            out.append((st, games))
        if table is not None and not out:
            raise LeagueError(f"the league plays no {table}-seat games: --seats is one of "
                              f"{', '.join(map(str, config.seats))}")
        return out
    finally:
        store.close()
