"""What a results folder holds, read once for the report: the store's finished
games in schedule order, the standings exactly as ``tournament standings`` computes
them, and the figures the charts need (rating after each game, decision times,
how games ended, faults per kind, per-deal differences).

A tournament folder is one; a league folder with the same store (``tournament.sqlite``
and its records) is read the same way.  The store may be written while we read
(WAL): the report shows the games finished so far.  No HTML here.
"""

from __future__ import annotations

import dataclasses
import json
import math
import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import StorageError
from ..league.results import LeagueError, tables
from ..league.store import DB_NAME as LEAGUE_DB
from ..league.store import LeagueStore
from ..protocol.messages import FAULT_KINDS
from ..stats.ratings import RatedGame, fit_plackett_luce
from ..stats.sprt import PENTANOMIAL, MatchSummary, SetSummary, SprtState, summarize
from ..tournament.kinds import MatchSettings, Settings
from ..tournament.match import reduce_set
from ..tournament.outcome import GameOutcome
from ..tournament.standings import Standings, compute, render
from ..tournament.store import Store


@dataclass(frozen=True)
class MatchFigures:
    """A match's result as ``referee match`` prints it (``summary``), with the LLR
    after each set the test counted and the sets found in the store."""

    match: MatchSettings
    summary: MatchSummary
    llr: list[float]
    stored_sets: int

    @property
    def leader(self) -> str:
        """Who the match says is ahead: NEW when its set score is above one half."""
        s = self.summary.score
        return self.match.new if s is not None and s > 0.5 else self.match.old \
            if s is not None and s < 0.5 else self.match.new

    @property
    def finished(self) -> bool:
        s, m = self.summary, self.match
        if s.sprt is not None:
            return s.sprt.verdict is not None or s.sets >= m.max_sets
        return self.stored_sets >= m.max_sets

    @property
    def status(self) -> str:
        """Where the match stands, in words: "stopped after 224 games (112 sets): H1
        accepted", never the cap as if it were the games to play."""
        s, m = self.summary, self.match
        played = f"{s.games} games ({s.sets} sets)"
        if s.sprt is not None and s.sprt.verdict is not None:
            extra = (f"; {s.sets_after_verdict} sets played past the verdict are not counted"
                     if s.sets_after_verdict else "")
            return f"stopped after {played}: {s.sprt.verdict} accepted{extra}"
        if s.sprt is not None:
            if s.sets >= m.max_sets:
                return f"stopped at the cap of {m.max_sets} sets ({s.games} games): no decision"
            return (f"{played} so far: no decision yet (the test stops at its verdict, "
                    f"at most {m.max_sets} sets)")
        if self.finished:
            return f"{played}: all played"
        return f"{played} of {m.max_sets} sets: in progress"


def match_figures(m: MatchSettings, outcomes: Sequence[GameOutcome]) -> MatchFigures:
    """The figures of the match stored as ``m``, over its whole sets, exactly as
    ``referee match`` computes them (``reduce_set``, ``summarize``)."""
    by_set: dict[int, list[GameOutcome]] = defaultdict(list)
    for o in outcomes:
        by_set[o.deal].append(o)
    whole = {s: reduce_set(m, s, sorted(g, key=lambda o: o.index))
             for s, g in by_set.items() if len(g) == m.per_set}
    ordered: list[SetSummary] = [whole[s] for s in sorted(whole)]
    if m.sprt is not None:  # the test takes the sets in order, up to the first not played
        gap = next((i for i, x in enumerate(ordered) if x.index != i), len(ordered))
        ordered = ordered[:gap]
    summary = summarize(ordered, m.sprt, m.seats)
    path: list[float] = []
    if m.sprt is not None:
        adjusted = any(x.raw is not None for x in ordered)
        state = SprtState.over(m.sprt, PENTANOMIAL if m.seats == 2 and not adjusted else ())
        for x in ordered[:summary.sets]:
            state.add(x.score)
            path.append(state.llr)
    return MatchFigures(m, summary, path, len(whole))


@dataclass
class Results:
    folder: Path
    name: str
    bots: list[str]
    seats: int
    scheduled: int
    outcomes: list[GameOutcome]
    standings: Standings
    #: What the store keeps: a tournament's or a match's configuration (``MatchSettings``:
    #: the folder is a match's); None for a league's table.
    settings: Settings | None = None
    #: A league's deal numbers as ``league games`` shows them (the lineup's deal,
    #: 0 to deals - 1), by game id; the outcomes' ``deal`` numbers the duplicate sets
    #: the statistics are taken over, which a league counts across its lineups.
    deal_numbers: dict[str, int] = field(default_factory=dict)
    #: A match's own result (``referee match``): its verdict, LLR, Elo; None for a
    #: tournament or a league.
    match: MatchFigures | None = None

    def shown_deal(self, o: GameOutcome) -> int:
        """The deal number shown for ``o``: as ``league games`` shows it in a league."""
        return self.deal_numbers.get(o.game_id, o.deal)

    @property
    def standings_json(self) -> str:
        """Exactly what ``referee tournament standings DIR --format json`` prints."""
        return render(self.standings, "json")

    def record_path(self, o: GameOutcome) -> Path:
        return self.folder / o.record

    def deals(self) -> dict[int, list[GameOutcome]]:
        out: dict[int, list[GameOutcome]] = defaultdict(list)
        for o in self.outcomes:
            out[o.deal].append(o)
        return out

    @property
    def duplicate(self) -> bool:
        """Some deal was played more than once (in other seatings)."""
        return any(len(g) > 1 for g in self.deals().values())


def load(folder: Path, scores: str = "adjusted") -> Results:
    """The results in ``folder``, ranked by ``scores`` (adjusted or raw); StorageError
    when it holds none."""
    store = Store.open_existing(folder)
    try:
        cfg = store.settings
        outcomes = list(store.outcomes())
        scheduled = store.scheduled
        seed_source = store.meta("seed_source") or "given"
        sandbox = store.meta("sandbox")
    finally:
        store.close()
    bots, seats, name = cfg.bot_names, cfg.seats, cfg.name
    match = None
    if isinstance(cfg, MatchSettings):
        match = match_figures(cfg, outcomes)
        # A match stops when its test decides: the games it would have played up to
        # its cap (--max-sets) were never scheduled.
        played = len(outcomes)
        scheduled = played if match.finished else scheduled
    st = compute(outcomes, bots, seats, name=name, scheduled=scheduled, scores=scores)
    # As ``tournament standings`` gives them: with the seed and the sandbox.
    st.seed, st.seed_source = cfg.seed, seed_source
    st.sandbox = json.loads(sandbox) if sandbox else None
    if match is not None:
        # Ranked by the match's result: the one it says is ahead first, then the other,
        # then the field's bots as the standings rank them.
        first = [match.leader, match.match.old if match.leader == match.match.new
                 else match.match.new]
        rows = sorted(st.rows, key=lambda r: (first.index(r.bot) if r.bot in first else 2,
                                              r.rank))
        st.rows = [dataclasses.replace(r, rank=i) for i, r in enumerate(rows, 1)]
    return Results(folder=folder, name=name, bots=bots, seats=seats, scheduled=scheduled,
                   outcomes=outcomes, standings=st, settings=cfg, match=match)


def is_league(folder: Path) -> bool:
    return (folder / LEAGUE_DB).is_file()


def load_league(folder: Path, *, history: bool = False,
                scores: str = "adjusted") -> list[Results]:
    """A league's results (``referee league``), one per table size: its active
    entries over the games among them, as ``league standings`` counts them (with
    ``history``: every version, retired ones included, over every game played)."""
    try:
        found = tables(folder, history=history, scores=scores)
    except (LeagueError, StorageError) as e:
        raise StorageError(str(e)) from None
    store = LeagueStore.open(folder)
    try:
        numbers = {p.game_id: p.deal for p in store.planned()}
    finally:
        store.close()
    out = []
    for st, games in found:
        out.append(Results(folder=folder, name=f"{st.name}, {st.seats} seats",
                           bots=[r.bot for r in st.rows], seats=st.seats,
                           scheduled=st.scheduled, outcomes=games, standings=st,
                           deal_numbers=numbers))
    return out


def rating_history(outcomes: Sequence[GameOutcome], bots: Sequence[str], points: int = 30,
                   scores: str = "raw") -> dict[str, list[tuple[int, float]]]:
    """Per bot, (games played, rating) as the games came in: the standings' batch
    rating (``referee.stats.ratings``, Plackett-Luce on the logistic Elo scale;
    ``scores="adjusted"``: fitted to the luck-adjusted shares) fitted to the first
    games, at about ``points`` moments of the run.  Its last value is the standings'
    rating (the whole set of games) for the same ``scores``."""
    hist: dict[str, list[tuple[int, float]]] = {b: [(0, 0.0)] for b in bots}
    games = [RatedGame(o.deal, tuple(o.seats), tuple(o.places),
                       o.adjusted[0] if scores == "adjusted" and o.adjusted is not None
                       else None) for o in outcomes]
    if not any(g.shares is not None for g in games):
        scores = "raw"  # no game has adjusted scores: as the standings, the orders
    step = max(1, math.ceil(len(games) / points))
    marks = sorted({*range(step, len(games), step), len(games)}) if games else []
    played = dict.fromkeys(bots, 0)
    done = 0
    for k in marks:
        for g in games[done:k]:
            for b in g.bots:
                if b in played:
                    played[b] += 1
        done = k
        ratings = fit_plackett_luce(games[:k], list(bots), scores=scores)
        for b in bots:
            if not played[b]:
                continue
            if played[b] == hist[b][-1][0]:  # no game of its since: the newer fit
                hist[b][-1] = (played[b], ratings[b])
            else:
                hist[b].append((played[b], ratings[b]))
    return hist


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (q in 0..100) of ``values``."""
    if not values:
        return None
    s = sorted(values)
    k = max(1, math.ceil(q / 100 * len(s)))
    return s[k - 1]


@dataclass
class Latency:
    decisions: int = 0
    median: float | None = None
    p99: float | None = None
    max: float | None = None


def latencies(ms: dict[str, list[float]]) -> dict[str, Latency]:
    out = {}
    for bot, vals in ms.items():
        out[bot] = Latency(len(vals), statistics.median(vals) if vals else None,
                           percentile(vals, 99), max(vals) if vals else None)
    return out


def endings(outcomes: Sequence[GameOutcome]) -> list[tuple[str, int]]:
    """How games ended, with a forfeit counted apart (its game still ended one way)."""
    c = Counter(o.how for o in outcomes)
    rows = [(how, c[how]) for how in ("winner", "played_out", "turn_limit") if how in c]
    rows += [(how, n) for how, n in sorted(c.items()) if how not in
             ("winner", "played_out", "turn_limit")]
    forfeited = sum(1 for o in outcomes if o.forfeits)
    if forfeited:
        rows.append(("with a forfeit", forfeited))
    return rows


def faults_by_kind(outcomes: Sequence[GameOutcome], bots: Sequence[str]
                   ) -> dict[str, dict[str, int]]:
    """bot -> kind -> count (every fault kind the standings count, plus forfeits)."""
    out = {b: dict.fromkeys((*FAULT_KINDS, "forfeit"), 0) for b in bots}
    for o in outcomes:
        for f in o.faults:
            bot = o.seats[f.seat]
            kind = str(f.kind)
            out[bot][kind if kind in FAULT_KINDS else "protocol"] += 1
        for s in o.forfeits:
            out[o.seats[s]]["forfeit"] += 1
    return out


@dataclass
class PairDeals:
    """Two bots over the deals they both played: per deal, the row bot's score
    against the column bot minus the reverse (1 a game ahead, half level)."""

    diffs: list[float] = field(default_factory=list)

    @property
    def mean(self) -> float | None:
        return sum(self.diffs) / len(self.diffs) if self.diffs else None

    @property
    def won(self) -> int:
        return sum(1 for d in self.diffs if d > 0)

    @property
    def lost(self) -> int:
        return sum(1 for d in self.diffs if d < 0)

    @property
    def level(self) -> int:
        return sum(1 for d in self.diffs if d == 0)


def per_deal(outcomes: Sequence[GameOutcome], bots: Sequence[str]
             ) -> dict[str, dict[str, PairDeals]]:
    by_deal: dict[int, list[GameOutcome]] = defaultdict(list)
    for o in outcomes:
        by_deal[o.deal].append(o)
    out = {a: {b: PairDeals() for b in bots if b != a} for a in bots}
    for games in by_deal.values():
        diff: dict[tuple[str, str], float] = defaultdict(float)
        for o in games:
            for s, a in enumerate(o.seats):
                for t, b in enumerate(o.seats):
                    if s != t:
                        pa, pb = o.places[s], o.places[t]
                        diff[a, b] += 1.0 if pa < pb else 0.5 if pa == pb else 0.0
        for (a, b), v in diff.items():
            if a != b and b in out.get(a, {}):
                out[a][b].diffs.append(v - diff[b, a])
    return out
