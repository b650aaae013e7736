"""What a tournament's results add up to: per-bot figures, a multiplayer rating and
a head-to-head table, and their text forms (plain, markdown, csv, json).

Owns the arithmetic and nothing else: it takes finished games (``GameOutcome``, in
schedule order) and returns numbers and strings; no I/O, no clock.

Definitions (documented here because users read the table, not the code):

* win: finishing in place 1 (a shared first place is a win for each).
* place points: per game, one point for each opponent finishing behind and half a
  point for each finishing level (so a k-seat game hands out k(k-1)/2 points).
* average penalty: the mean of the game's penalty points (RULES §5).
* rating: a Plackett-Luce model (Bradley-Terry at 2 seats) fitted in one batch to
  every game's full finishing order (``referee.stats.ratings``): it does not depend
  on the order of the games.  Logistic Elo scale, the bots' mean 0; the 95 %
  interval is a bootstrap over deals, seeded from the games themselves.  With
  ``scores="adjusted"`` it is fitted to the games' luck-adjusted shares instead
  (pairwise Bradley-Terry comparisons on shares: ``referee.stats.ratings``), unless
  no game has them (no records): then to the finishing orders.
* 95 % confidence intervals for win rate and average place: mean +- 1.96 standard
  errors, the standard error taken over *deals* (each deal's games averaged first),
  because the games of one duplicated deal are not independent of each other.  With
  one game per deal this is the usual per-game interval.
* faults: counted per kind (timeouts, crashes, illegal, malformed, oversized,
  protocol: PROTOCOL.md's fault kinds); the plain and markdown tables show malformed
  and oversized messages together as "malformed" (messages that could not be read);
  forfeits count games the bot forfeited.
* score: the share of opponents a bot finished ahead of per game (place points /
  (seats - 1): the win rate at 2 seats), with its 95 % interval over deals.
  ``scores="adjusted"`` (the default): **luck-adjusted** (``referee.play.luck``): each
  game's score less what the cards drawn and the 3DOWN cards turned were worth to the
  seat, by a value function of the state; an unbiased estimate of the raw score with
  less variance.  The bots are ranked by it (raw: by average place); ``variance
  removed`` is 1 - (adjusted interval / raw interval)^2.  The raw figures (score, win
  rate, place, penalty) are always shown beside it.  A game whose luck cannot be
  computed (no record) counts its raw score.
* head-to-head: with 2 seats, each pair's score (wins + half of shared places); with
  more, the share of the games two bots played together in which the row bot
  finished ahead of the column bot (level counts half).  A cell is *significant*
  when the 95 % interval of that share, computed over deals, excludes one half.
"""

from __future__ import annotations

import csv
import io
import json
import math
import textwrap
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from tabulate import tabulate

from ..stats.ratings import RatedGame, rate
from .outcome import GameOutcome
from .stopping import STOPPED_WORDS

FORMATS = ("plain", "markdown", "csv", "json")
SCORE_KINDS = ("adjusted", "raw")
Z95 = 1.959964


@dataclass
class BotStanding:
    bot: str
    rank: int = 0
    games: int = 0
    wins: int = 0
    win_rate: float | None = None
    win_ci: float | None = None  # half-width of the 95 % interval
    avg_place: float | None = None
    place_ci: float | None = None
    place_points: float = 0.0
    avg_penalty: float | None = None
    rating: float = 0.0  # batch Plackett-Luce, logistic Elo scale, mean 0
    rating_low: float = 0.0  # its 95 % interval (bootstrap over deals)
    rating_high: float = 0.0
    timeouts: int = 0
    crashes: int = 0
    illegal: int = 0
    malformed: int = 0
    oversized: int = 0
    protocol: int = 0
    forfeits: int = 0
    stopped: int = 0  # games forfeited without starting it: the bot was stopped
    score: float | None = None  # raw: mean share of opponents beaten
    score_ci: float | None = None
    adj_score: float | None = None  # luck-adjusted
    adj_score_ci: float | None = None
    adj_win_rate: float | None = None
    adj_avg_place: float | None = None
    adj_avg_penalty: float | None = None
    variance_removed: float | None = None  # 1 - (adj_score_ci / score_ci)^2


@dataclass
class Standings:
    name: str
    seats: int
    played: int
    scheduled: int
    rows: list[BotStanding]
    # head[a][b]: a's score against b (wins + half of level finishes), and games
    head: dict[str, dict[str, float]] = field(default_factory=dict)
    met: dict[str, dict[str, int]] = field(default_factory=dict)
    #: Is a run playing the remaining games now (None: not known)?
    running: bool | None = None
    seed: int | None = None  # the tournament's seed
    seed_source: str = "given"  # or "random": drawn when it first ran
    sandbox: dict[str, Any] | None = None  # what its bots ran in (Sandbox.describe)
    # significant[a][b]: the 95 % interval of a's share against b excludes 1/2
    significant: dict[str, dict[str, bool]] = field(default_factory=dict)
    scores: str = "adjusted"  # which scores rank the bots: SCORE_KINDS
    rating_scores: str = "raw"  # what the rating is fitted to: adjusted shares or orders
    #: The value function of the adjusted scores (``LuckSetting.describe``).
    luck_value: str = "linear"
    #: A league's: are its top k separated at 95 % (``referee.stats.adaptive``)?
    separation: str | None = None

    @property
    def complete(self) -> bool:
        return self.played >= self.scheduled


def mean_ci(units: Sequence[float]) -> tuple[float | None, float | None]:
    """Mean and half-width of the 95 % interval (normal approximation) of independent
    units; no interval below 2 units.  Exact sums (``math.fsum``): the same units in
    any order give the same bytes."""
    n = len(units)
    if n == 0:
        return None, None
    m = math.fsum(units) / n
    if n < 2:
        return m, None
    var = math.fsum((x - m) ** 2 for x in units) / (n - 1)
    return m, Z95 * math.sqrt(var / n)


def place_points(places: Sequence[int], seat: int) -> float:
    mine = places[seat]
    return sum(1.0 if p > mine else 0.5 if p == mine else 0.0
               for s, p in enumerate(places) if s != seat)


def compute(outcomes: Iterable[GameOutcome], bots: Sequence[str], seats: int, *,
            name: str = "tournament", scheduled: int | None = None,
            scores: str = "adjusted") -> Standings:
    """Standings from finished games (in any order: no figure depends on it), the
    bots ranked by their luck-adjusted score (``scores="adjusted"``) or by their raw
    average place (``"raw"``)."""
    if scores not in SCORE_KINDS:
        raise ValueError(f"unknown scores {scores!r}: choose from {', '.join(SCORE_KINDS)}")
    # per bot, per deal: [games, raw share, adjusted share, adj. win, adj. place, adj. points]
    luck_deal: dict[str, dict[int, list[float]]] = {
        b: defaultdict(lambda: [0, 0.0, 0.0, 0.0, 0.0, 0.0]) for b in bots}
    rated: list[RatedGame] = []
    # per pair, per deal: [row bot's score against the column bot, games]
    pair_deal: dict[tuple[str, str], dict[int, list[float]]] = defaultdict(
        lambda: defaultdict(lambda: [0.0, 0]))
    rows = {b: BotStanding(b) for b in bots}
    # per bot, per deal: [games, wins, sum of places]
    per_deal: dict[str, dict[int, list[float]]] = {b: defaultdict(lambda: [0, 0, 0]) for b in bots}
    penalty: dict[str, int] = dict.fromkeys(bots, 0)
    head: dict[str, dict[str, float]] = {a: dict.fromkeys(bots, 0.0) for a in bots}
    met: dict[str, dict[str, int]] = {a: dict.fromkeys(bots, 0) for a in bots}
    played = 0
    for o in outcomes:
        played += 1
        for s, bot in enumerate(o.seats):
            r = rows[bot]
            r.games += 1
            won = o.places[s] == 1
            r.wins += won
            r.place_points += place_points(o.places, s)
            penalty[bot] += o.points[s]
            d = per_deal[bot][o.deal]
            d[0] += 1
            d[1] += won
            d[2] += o.places[s]
            if s in o.forfeits:
                r.forfeits += 1
            k = len(o.seats)
            share = place_points(o.places, s) / (k - 1)
            lk = luck_deal[bot][o.deal]
            lk[0] += 1
            lk[1] += share
            if o.adjusted is not None:
                adj_share, adj_win, adj_points = (o.adjusted[i][s] for i in range(3))
                lk[2] += adj_share
                lk[3] += adj_win
                lk[4] += o.places[s] - (k - 1) * (adj_share - share)
                lk[5] += adj_points
            else:
                lk[2] += share
                lk[3] += won
                lk[4] += o.places[s]
                lk[5] += o.points[s]
            for t, other in enumerate(o.seats):
                if t != s:
                    met[bot][other] += 1
                    score = (1.0 if o.places[s] < o.places[t]
                             else 0.5 if o.places[s] == o.places[t] else 0.0)
                    head[bot][other] += score
                    cell = pair_deal[bot, other][o.deal]
                    cell[0] += score
                    cell[1] += 1
        for f in o.faults:
            r = rows[o.seats[f.seat]]
            kind = f.kind
            if STOPPED_WORDS in str(f.detail):
                r.stopped += 1
                continue  # not a crash: it was not started
            if kind == "timeout":
                r.timeouts += 1
            elif kind == "crash":
                r.crashes += 1
            elif kind == "illegal":
                r.illegal += 1
            elif kind == "malformed":
                r.malformed += 1
            elif kind == "oversized":
                r.oversized += 1
            else:
                r.protocol += 1
        rated.append(RatedGame(o.deal, tuple(o.seats), tuple(o.places),
                               o.adjusted[0] if scores == "adjusted" and o.adjusted is not None
                               else None))
    # Fitted to the adjusted shares when ranked by them and some game has them; else
    # (--scores raw, or no game with a record) to the finishing orders.
    rating_scores = ("adjusted" if scores == "adjusted" and any(g.shares is not None
                                                                for g in rated) else "raw")
    ratings = rate(rated, list(bots), scores=rating_scores)
    for b, r in rows.items():
        deals = list(per_deal[b].values())
        if r.games:
            r.win_rate = r.wins / r.games
            r.avg_place = math.fsum(d[2] for d in deals) / r.games
            r.avg_penalty = penalty[b] / r.games
            _, r.win_ci = mean_ci([d[1] / d[0] for d in deals])
            _, r.place_ci = mean_ci([d[2] / d[0] for d in deals])
        r.rating = ratings.rating[b]
        r.rating_low, r.rating_high = ratings.low[b], ratings.high[b]
        lucky = list(luck_deal[b].values())
        if r.games:
            r.score, r.score_ci = mean_ci([d[1] / d[0] for d in lucky])
            r.adj_score, r.adj_score_ci = mean_ci([d[2] / d[0] for d in lucky])
            r.score = sum(d[1] for d in lucky) / r.games
            r.adj_score = sum(d[2] for d in lucky) / r.games
            r.adj_win_rate = sum(d[3] for d in lucky) / r.games
            r.adj_avg_place = sum(d[4] for d in lucky) / r.games
            r.adj_avg_penalty = sum(d[5] for d in lucky) / r.games
            if r.score_ci and r.adj_score_ci is not None:
                r.variance_removed = 1.0 - (r.adj_score_ci / r.score_ci) ** 2
    significant: dict[str, dict[str, bool]] = {a: dict.fromkeys(bots, False) for a in bots}
    for (a, b), deals_of in pair_deal.items():
        m, hw = mean_ci([sc / n for sc, n in deals_of.values()])
        significant[a][b] = m is not None and hw is not None and abs(m - 0.5) > hw
    if scores == "adjusted":
        ordered = sorted(rows.values(), key=lambda r: (
            -r.adj_score if r.adj_score is not None else math.inf,
            r.avg_place if r.avg_place is not None else math.inf,
            -(r.win_rate or 0.0), -r.rating, r.bot))
    else:
        ordered = sorted(rows.values(), key=lambda r: (
            r.avg_place if r.avg_place is not None else math.inf,
            -(r.win_rate or 0.0), -r.rating, r.bot))
    for i, r in enumerate(ordered):
        r.rank = i + 1
    return Standings(name=name, seats=seats, played=played,
                     scheduled=played if scheduled is None else scheduled,
                     rows=ordered, head=head, met=met, significant=significant,
                     scores=scores, rating_scores=rating_scores)


# --- text forms ----------------------------------------------------------------------

_FIELDS = [f for f in BotStanding.__dataclass_fields__]


def _num(x: float | None, fmt: str) -> str:
    return "-" if x is None else format(x, fmt)


def _pm(x: float | None, ci: float | None, fmt: str, scale: float = 1.0) -> str:
    if x is None:
        return "-"
    s = format(x * scale, fmt)
    return s if ci is None else f"{s} ± {format(ci * scale, fmt)}"


def _score(st: Standings, r: BotStanding) -> str:
    """The score the bots are ranked by, with its interval (in %)."""
    if st.scores == "adjusted":
        return _pm(r.adj_score, r.adj_score_ci, ".1f", 100)
    return _pm(r.score, r.score_ci, ".1f", 100)


def score_header(st: Standings, short: bool = False) -> str:
    if short:
        return "adj. score" if st.scores == "adjusted" else "score"
    return ("adj. score % (95% CI)" if st.scores == "adjusted" else "score % (95% CI)")


def standings_table(st: Standings) -> tuple[list[str], list[list[str]]]:
    adjusted = st.scores == "adjusted"
    headers = ["rank", "bot", "games", score_header(st),
               *(["raw score % (95% CI)", "var. removed"] if adjusted else []),
               "wins", "win % (95% CI)", "avg place (95% CI)",
               "place pts", "avg penalty", "rating (95% CI)", "timeouts", "crashes", "illegal",
               "malformed", "protocol", "forfeits"]
    rows = [[str(r.rank), r.bot, str(r.games), _score(st, r),
             *([_pm(r.score, r.score_ci, ".1f", 100), _num(
                 None if r.variance_removed is None else 100 * r.variance_removed, ".0f")
                + ("%" if r.variance_removed is not None else "")] if adjusted else []),
             str(r.wins), _pm(r.win_rate, r.win_ci, ".1f", 100),
             _pm(r.avg_place, r.place_ci, ".2f"), f"{r.place_points:g}", _num(r.avg_penalty, ".1f"),
             _rating(r), str(r.timeouts), str(r.crashes),
             str(r.illegal), str(r.malformed + r.oversized), str(r.protocol),
             str(r.forfeits)] for r in st.rows]
    return headers, rows


#: Fault columns of the compact table: (header, fields added up).
_FAULT_COLUMNS = (("timeouts", ("timeouts",)), ("crashes", ("crashes",)),
                  ("illegal", ("illegal",)), ("malformed", ("malformed", "oversized")),
                  ("protocol", ("protocol",)), ("forfeits", ("forfeits",)))


#: The fault columns' headers when even the short headers do not fit.
SHORT_FAULTS = {"timeouts": "tmo", "crashes": "crash", "illegal": "ill", "malformed": "malf",
                "protocol": "prot", "forfeits": "forf"}


def compact_table(st: Standings, width: int | None = None) -> tuple[list[str], list[list[str]]]:
    """The standings that fit a terminal: rank, bot, games, win rate and average place
    with their intervals, rating, average penalty, and a fault column only for the
    kinds some bot had.  With ``width``, shorter headers, then no average penalty,
    then shortened bot names, until the table fits (``--wide`` shows every column)."""
    faults = [(h, fs) for h, fs in _FAULT_COLUMNS
              if any(getattr(r, f) for r in st.rows for f in fs)]

    def build(short: int, names: int | None) -> tuple[list[str], list[list[str]]]:
        heads = (["rank", "bot", "games", score_header(st), "win % (95% CI)",
                  "avg place (95% CI)", "rating (95% CI)", "avg penalty"] if short == 0 else
                 ["#", "bot", "games", score_header(st, True) if short < 3
                  else ("adj." if st.scores == "adjusted" else "score"), "win %", "avg place",
                  "rating", "penalty"])
        if short >= 2:
            heads = heads[:-1]
        heads += [SHORT_FAULTS[h] if short >= 3 else h for h, _ in faults]
        rows = []
        for r in st.rows:
            bot = r.bot if names is None or len(r.bot) <= names else r.bot[:names - 1] + "…"
            value = r.adj_score if st.scores == "adjusted" else r.score
            score = (_score(st, r) if short < 3 else
                     _num(None if value is None else 100 * value, ".1f"))
            row = [str(r.rank), bot, str(r.games), score,
                   _pm(r.win_rate, r.win_ci, ".1f", 100),
                   _pm(r.avg_place, r.place_ci, ".2f"),
                   _rating(r) if short < 3 or not r.games else f"{r.rating:+.0f}"]
            if short < 2:
                row.append(_num(r.avg_penalty, ".1f"))
            row += [str(sum(getattr(r, f) for f in fs)) for _, fs in faults]
            rows.append(row)
        return heads, rows

    def fits(t: tuple[list[str], list[list[str]]]) -> bool:
        text = tabulate(t[1], headers=t[0], tablefmt="simple", disable_numparse=True)
        return width is None or max(len(line) for line in text.splitlines()) <= width

    for short in (0, 1, 2, 3):
        t = build(short, None)
        if fits(t):
            return t
    longest = max((len(r.bot) for r in st.rows), default=8)
    for names in range(longest - 1, 5, -1):
        t = build(3, names)
        if fits(t):
            return t
    return build(3, 6)


def _rating(r: BotStanding) -> str:
    if not r.games:
        return "-"
    return f"{r.rating:+.0f} [{r.rating_low:+.0f}, {r.rating_high:+.0f}]"


def head_to_head_table(st: Standings, compact: bool = False) -> tuple[list[str], list[list[str]]]:
    """Row bot against column bot; ``compact``: the columns headed by the bots' ranks."""
    order = [r.bot for r in st.rows]
    rows = []
    for a in order:
        row = [f"{order.index(a) + 1} {a}" if compact else a]
        for b in order:
            n = st.met[a][b]
            if a == b or n == 0:
                row.append("")
            else:
                mark = "*" if st.significant.get(a, {}).get(b) else ""
                if st.seats == 2:
                    row.append(f"{st.head[a][b]:g}-{st.head[b][a]:g}{mark}")
                else:
                    row.append(f"{100 * st.head[a][b] / n:.0f}%{mark}")
        rows.append(row)
    return ["", *(str(i + 1) for i in range(len(order)))] if compact else ["", *order], rows


def _title(st: Standings) -> str:
    if st.complete:
        done = ""
    elif st.running is False and st.played == 0:
        done = f" (not started: {st.scheduled} games to play)"
    elif st.running is False:
        done = (f" (stopped at {st.played} of {st.scheduled}: run it again to play the "
                f"rest)")
    else:
        done = f" (in progress: {st.played} of {st.scheduled})"
    lines = [f"{st.name}: {st.played} games, {st.seats} seats{done}"]
    notes = []
    if st.seed is not None:
        notes.append(f"seed {st.seed}" + (" (drawn at random)" if st.seed_source == "random"
                                           else ""))
    if st.sandbox is not None:
        sb = st.sandbox
        notes.append(f"sandbox: bubblewrap, {sb['memory_mb']} MB, {sb['processes']} processes, "
                     f"{sb['scratch_mb']} MB scratch" if sb.get("active") else "sandbox: off")
    if notes:
        lines.append("; ".join(notes))
    if st.scores == "adjusted":
        lines.append("ranked by luck-adjusted score: the share of opponents beaten, less the "
                     "luck of the cards drawn and the 3DOWN cards turned (value function: "
                     f"{st.luck_value}; --scores raw: "
                     "by raw average place); the rating is fitted to the "
                     + ("adjusted shares" if st.rating_scores == "adjusted" else
                        "finishing orders (no game has adjusted scores)")
                     + "; win %, place and penalty are raw")
    else:
        lines.append("ranked by raw average place (score: the share of opponents beaten); "
                     "the rating is fitted to the finishing orders")
    if st.separation is not None:
        lines.append(st.separation)
    return "\n".join(lines)


def render(st: Standings, fmt: str = "plain", *, wide: bool = True,
           width: int | None = None) -> str:
    """The standings in ``fmt``.  Plain text with ``wide=False``: the compact table
    (``compact_table``, fitted to ``width`` columns when given) and a head-to-head
    headed by ranks."""
    if fmt == "json":
        return json.dumps({
            "name": st.name, "seats": st.seats, "played": st.played,
            "scheduled": st.scheduled, "seed": st.seed, "seed_source": st.seed_source,
            "scores": st.scores, "rating_scores": st.rating_scores, "luck_value": st.luck_value,
            **({"separation": st.separation} if st.separation is not None else {}),
            "sandbox": st.sandbox,
            "standings": [asdict(r) for r in st.rows],
            "head_to_head": {a: {b: {"score": st.head[a][b], "games": st.met[a][b],
                                     "significant": st.significant.get(a, {}).get(b, False)}
                                 for b in st.head[a] if b != a and st.met[a][b]}
                             for a in st.head},
        }, indent=2)
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(_FIELDS)
        for r in st.rows:
            w.writerow(["" if v is None else v for v in (getattr(r, f) for f in _FIELDS)])
        return buf.getvalue().rstrip("\n")
    if fmt not in ("plain", "markdown"):
        raise ValueError(f"unknown format {fmt!r}: choose from {', '.join(FORMATS)}")
    if not st.rows:  # nothing played yet (a league right after `league new`)
        return (f"## {_title(st)}" if fmt == "markdown" else _title(st)) + \
            "\n\nno games played yet"
    tablefmt = "github" if fmt == "markdown" else "simple"
    compact = fmt == "plain" and not wide
    h, rows = compact_table(st, width) if compact else standings_table(st)
    hh, hrows = head_to_head_table(st, compact and len(st.rows) > 2)
    legend = ""
    if compact and any(x in h for x in SHORT_FAULTS.values()):
        legend = "\n" + ", ".join(f"{v}: {k}" for k, v in SHORT_FAULTS.items() if v in h)
    what = ("head-to-head score (row vs column)" if st.seats == 2
            else "head-to-head: how often the row bot finished ahead of the column bot")
    what += "; * significant (the 95 % interval over deals excludes an even score)"
    if compact and width:
        what = textwrap.fill(what, max(width, 40))
    sep = "\n\n"
    title = f"## {_title(st)}" if fmt == "markdown" else _title(st)
    stopped = [r for r in st.rows if r.stopped]
    notes = "".join(
        f"\n{'- ' if fmt == 'markdown' else ''}{r.bot} was stopped: it failed in each of its "
        f"first games (a crash or no hello), so {r.stopped} of its games were forfeited "
        f"without starting it" for r in stopped)
    return str(title + sep + tabulate(rows, headers=h, tablefmt=tablefmt, disable_numparse=True)
            + legend
            + (("\n" if fmt == "markdown" else "") + notes if notes else "")
            + sep + what + sep + tabulate(hrows, headers=hh, tablefmt=tablefmt,
                                          disable_numparse=True))


def as_dicts(st: Standings) -> list[dict[str, Any]]:
    return [asdict(r) for r in st.rows]


# --- faults by worker ------------------------------------------------------------------


@dataclass
class WorkerFaults:
    """One worker's games and faults (``standings --faults``): a machine whose games
    fault far more than the others', or where every seat faults at once (every bot
    timing out), is more likely sick than its bots."""

    worker: str
    games: int = 0
    faulty: int = 0  # games with a fault
    every_seat: int = 0  # games in which every seat had a fault
    faults: dict[str, int] = field(default_factory=dict)  # by kind
    examples: list[str] = field(default_factory=list)  # games where every seat faulted

    @property
    def faulty_rate(self) -> float:
        return self.faulty / self.games if self.games else 0.0


def by_worker(outcomes: Iterable[GameOutcome], examples: int = 5) -> list[WorkerFaults]:
    """Faults per worker that played the games (a process-pool worker's number, a
    Dask worker's HOST:PID), the workers whose games fault most often first."""
    rows: dict[str, WorkerFaults] = {}
    for o in outcomes:
        w = rows.setdefault(str(o.worker), WorkerFaults(str(o.worker)))
        w.games += 1
        if not o.faults:
            continue
        w.faulty += 1
        for f in o.faults:
            w.faults[f.kind] = w.faults.get(f.kind, 0) + 1
        if {f.seat for f in o.faults} >= set(range(len(o.seats))):
            w.every_seat += 1
            if len(w.examples) < examples:
                w.examples.append(o.game_id)
    return sorted(rows.values(), key=lambda w: (-w.faulty_rate, -w.every_seat, w.worker))


def render_by_worker(workers: Sequence[WorkerFaults], fmt: str = "plain") -> str:
    if fmt == "json":
        return json.dumps([{**asdict(w), "faulty_rate": w.faulty_rate} for w in workers],
                          indent=2)
    kinds = sorted({k for w in workers for k in w.faults})
    if fmt == "csv":
        buf = io.StringIO()
        out = csv.writer(buf, lineterminator="\n")
        out.writerow(["worker", "games", "faulty", "faulty_rate", "every_seat", *kinds,
                      "examples"])
        for w in workers:
            out.writerow([w.worker, w.games, w.faulty, w.faulty_rate, w.every_seat,
                          *(w.faults.get(k, 0) for k in kinds), " ".join(w.examples)])
        return buf.getvalue().rstrip("\n")
    headers = ["worker", "games", "games with faults", "every seat faulted", *kinds,
               "e.g. (every seat faulted)"]
    rows = [[w.worker, str(w.games), f"{w.faulty} ({100 * w.faulty_rate:.0f}%)",
             str(w.every_seat), *(str(w.faults.get(k, 0)) for k in kinds),
             " ".join(w.examples)] for w in workers]
    title = ("faults by the worker that played the games (a machine whose games fault far "
             "more often than the others', or where every seat faults, may be sick)")
    return str(("## " if fmt == "markdown" else "") + title + "\n\n" + tabulate(
        rows, headers=headers, tablefmt="github" if fmt == "markdown" else "simple",
        disable_numparse=True))
