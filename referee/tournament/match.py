"""A/B tests of two bots, NEW against OLD, on duplicate sets (``referee match``).

Owns the match's schedule (duplicate sets), running it through the tournament's
executor and store until the test decides, and the match's summary.  The
statistics are ``referee.stats.sprt``'s; the games are played by the same
executors, and kept in the same SQLite store, as a tournament's.

A **duplicate set** is every game of one deal, all with its deck order and first
player (RULES §2, §7):

* at 2 seats without a field, NEW against OLD in both seat orders: 2 games;
* with a field (``--field``; at k seats k - 1 of its bots sit at the table), NEW
  and OLD each play the *same* seat against the *same* opponents in the same seats,
  in every seating of the deal (``rotate``: k seatings, ``williams``: k or 2k,
  ``all``: k!): 2 games per seating.

In-process bots draw their random numbers from a stream seeded by the deal and the
bot's name (``runner.InProcessPlayer`` with a ``stream``); in a match NEW and OLD
share one stream name (common random numbers): in a set, the field's bots play the same random numbers
in both games, and NEW and OLD in the same seat get the same ones too, so that the
games differ only by what NEW and OLD decide differently.  (An external bot seeds
itself; one that seeds from ``game_id`` draws new numbers in every game.)

A set is committed to the store in one transaction, whole or not at all, so a
resumed match never holds half a set.  The SPRT takes the sets in set order and
stops at the first one that crosses a bound: the verdict depends on the games'
results only, not on which worker finished first nor on where a run was
interrupted (sets played in parallel past the verdict are kept, and counted apart).
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..errors import ExecutionError
from ..players.sandbox import Sandbox, resolve
from ..stats.sprt import (
    PENTANOMIAL,
    Z95,
    MatchSummary,
    Scores,
    SetSummary,
    Sprt,
    SprtOutcome,
    SprtState,
    elo_of_score,
    set_score,
    summarize,
)
from .config import TournamentConfig, TournamentConfigError, seatings_per_deal
from .driver import Driver, Progress, Work
from .executor import Executor, Job, ProcessExecutor
from .kinds import JsonObject, MatchSettings, TournamentSettings, wrong_kind
from .outcome import GameOutcome
from .players import check_bots
from .schedule import GameSpec, derive_seed, schedule_digest, seatings
from .store import Store

#: Seatings a match may use (``random`` gives one seating per deal: nothing to pair).
MATCH_SEATINGS = ("rotate", "williams", "all")
#: The random stream NEW and OLD share (``BotSpec.stream``).
PAIRED_STREAM = "match:new-old"
#: The most sets an SPRT plays before it gives up undecided, unless told otherwise.
DEFAULT_MAX_SETS = 20000


class MatchError(ExecutionError):
    """A match that cannot go on (one readable line)."""


@dataclass(frozen=True)
class MatchConfig:
    """A match: ``tournament`` holds the bots (NEW, OLD and the field's), rules, time
    limits, faults, seed, seats, seating and output; ``sprt`` or ``games`` says when
    to stop."""

    tournament: TournamentConfig
    new: str
    old: str
    field: tuple[str, ...] = ()
    sprt: Sprt | None = None
    games: int | None = None  # fixed-games mode
    max_sets: int = DEFAULT_MAX_SETS
    #: "adjusted": the test reads luck-adjusted set scores (``referee.play.luck``);
    #: "raw": the places as they fell.
    scores: Scores = "adjusted"

    def __post_init__(self) -> None:
        # Common random numbers: NEW and OLD in-process bots draw their random numbers
        # under one name, so in a set each meets the same cards *and* the same dice.
        t = dataclasses.replace(self.tournament, bots=tuple(
            dataclasses.replace(b, stream=PAIRED_STREAM) if b.name in (self.new, self.old)
            else b for b in self.tournament.bots))
        object.__setattr__(self, "tournament", t)
        if self.scores not in ("adjusted", "raw"):
            raise TournamentConfigError(f"scores must be adjusted or raw, not {self.scores!r}")
        if (self.sprt is None) == (self.games is None):
            raise TournamentConfigError("a match stops either by an SPRT or after a number of "
                                        "games: give one of --sprt and --games")
        if t.game.players != t.seats:
            raise TournamentConfigError(f"the rules are for {t.game.players} players, the "
                                        f"table has {t.seats} seats")
        if t.seating not in MATCH_SEATINGS:
            raise TournamentConfigError(
                f"seating {t.seating!r} cannot pair NEW with OLD: choose from "
                f"{', '.join(MATCH_SEATINGS)}")
        if not self.field and t.seats != 2:
            raise TournamentConfigError(
                f"{t.seats} seats need a field of at least {t.seats - 1} bots besides NEW and "
                f"OLD (--field BOT, once per bot); without one NEW and OLD play each other "
                "at 2 seats")
        if self.field and len(self.field) < t.seats - 1:
            raise TournamentConfigError(
                f"{t.seats} seats need a field of at least {t.seats - 1} bots, "
                f"{len(self.field)} given (--field BOT, once per bot)")

    @property
    def head_to_head(self) -> bool:
        return not self.field

    @property
    def seats(self) -> int:
        return self.tournament.seats

    @property
    def per_set(self) -> int:
        k = self.tournament.seats
        per = seatings_per_deal(self.tournament.seating, k)
        return per if self.head_to_head else 2 * per

    @property
    def sets(self) -> int:
        """The most sets this match plays."""
        if self.games is not None:
            return max(1, math.ceil(self.games / self.per_set))
        return self.max_sets

    @property
    def lineups(self) -> list[tuple[str, ...]]:
        """The field's lineups, taken in turn by the sets."""
        if self.head_to_head:
            return [()]
        return list(itertools.combinations(self.field, self.tournament.seats - 1))

    def settings(self) -> MatchSettings:
        """What decides the games and the verdict, as the store keeps it
        (``kinds.MatchSettings``): a resumed match must match it."""
        t = TournamentSettings.of(self.tournament)
        return MatchSettings(
            name=t.name, seats=t.seats, seed=t.seed, seating=t.seating, rules=t.rules,
            time=t.time, faults=t.faults, stop_after=t.stop_after, sandbox=t.sandbox,
            bots=t.bots, new=self.new, old=self.old, field=self.field, sprt=self.sprt,
            games=self.games, max_sets=self.sets, scores=self.scores)

    def to_dict(self) -> JsonObject:
        """``settings`` as JSON (the store's row, less its ``kind``)."""
        return self.settings().to_json()


def set_games(mc: MatchConfig, s: int) -> list[GameSpec]:
    """The games of set ``s`` (a pure function of the configuration)."""
    t = mc.tournament
    assert t.seed is not None, "a match's seed is fixed (match_cli: 1 by default)"
    deal_seed = derive_seed(t.seed, "deal", s)
    rng = random.Random(derive_seed(t.seed, "seating", s))
    base = s * mc.per_set
    games: list[GameSpec] = []
    if mc.head_to_head:
        for order in seatings((mc.new, mc.old), t.seating, rng):
            games.append(GameSpec(base + len(games), s, deal_seed, order))
        return games
    ups = mc.lineups
    lineup = ups[s % len(ups)]
    x = "\0X"  # NEW's and OLD's seat, while the seatings are drawn
    for order in seatings((x, *lineup), t.seating, rng):
        for who in (mc.new, mc.old):
            seats = tuple(who if b == x else b for b in order)
            games.append(GameSpec(base + len(games), s, deal_seed, seats))
    return games


class MatchRules(Protocol):
    """What reduces a match's sets to its figures: a ``MatchConfig`` (a run) or the
    ``MatchSettings`` a match's store keeps (``stored_summary``)."""

    @property
    def new(self) -> str: ...
    @property
    def old(self) -> str: ...
    @property
    def seats(self) -> int: ...
    @property
    def scores(self) -> Scores: ...
    @property
    def sprt(self) -> Sprt | None: ...
    @property
    def head_to_head(self) -> bool: ...
    @property
    def per_set(self) -> int: ...


def reduce_set(mc: MatchRules, s: int, games: Sequence[GameOutcome]) -> SetSummary:
    """One set's score (``referee.stats.sprt``), place difference and faults."""
    k = mc.seats
    shares: dict[str, list[float]] = {mc.new: [], mc.old: []}
    adjusted: dict[str, list[float]] = {mc.new: [], mc.old: []}
    places: dict[str, list[int]] = {mc.new: [], mc.old: []}
    faults = {"new": 0, "old": 0, "field": 0}
    use_luck = mc.scores == "adjusted" and all(o.adjusted is not None for o in games)
    for o in games:
        for seat, bot in enumerate(o.seats):
            if bot in shares:
                mine = o.places[seat]
                pp = sum(1.0 if p > mine else 0.5 if p == mine else 0.0
                         for t, p in enumerate(o.places) if t != seat)
                shares[bot].append(pp / (k - 1))
                if use_luck and o.adjusted is not None:
                    adjusted[bot].append(o.adjusted[0][seat])
                places[bot].append(mine)
        for f in o.faults:
            bot = o.seats[f.seat]
            faults["new" if bot == mc.new else "old" if bot == mc.old else "field"] += 1
    pn, po = places[mc.new], places[mc.old]
    raw = set_score(shares[mc.new], shares[mc.old])
    # Adjusted set scores are rounded to 1/1000 (unbiased to within that), so that
    # the test's multinomial support stays a few hundred values.
    score = round(set_score(adjusted[mc.new], adjusted[mc.old]), 3) if use_luck else raw
    return SetSummary(index=s, score=score,
                      place_diff=sum(po) / len(po) - sum(pn) / len(pn), games=len(games),
                      faults_new=faults["new"], faults_old=faults["old"],
                      faults_field=faults["field"], raw=raw if use_luck else None)


def _pm(x: float | None, hw: float | None, fmt: str) -> str:
    if x is None:
        return "-"
    return format(x, fmt) + ("" if hw is None else " ± " + format(hw, fmt.lstrip("+")))


def status_line(s: MatchSummary, mc: MatchConfig) -> str:
    parts = [f"{s.sets} sets ({s.games} games)"]
    sp = s.sprt
    if sp:
        parts.append(f"LLR {sp.llr:+.2f} [{sp.lower:+.2f}, {sp.upper:+.2f}]")
    if s.elo is not None:
        parts.append("Elo " + _elo_text(s))
    if s.score is not None:
        parts.append("score " + _pm(s.score, s.score_ci, ".3f"))
    if s.faulty_sets:
        parts.append(f"faults in {s.faulty_sets} sets")
    return "  ".join(parts)


def _elo_text(s: MatchSummary) -> str:
    e = s.elo
    if e is None:
        return "-"
    if not math.isfinite(e):
        return f"{e:+}"
    e += 0.0  # -0.0 prints as +0.0
    iv = s.elo_interval
    if iv is None:
        return f"{e:+.1f}"
    lo, hi = iv
    if lo == hi:  # every set scored alike: no interval to show
        alike = " (every set even: the two bots never played differently)" if e == 0 else \
            " (every set scored alike)"
        return f"{e:+.1f}{alike}"
    return f"{e:+.1f} [{lo + 0.0:+.1f}, {hi + 0.0:+.1f}]"


@dataclass
class MatchResult:
    config: MatchConfig
    summary: MatchSummary
    output_dir: Path
    already_done: int = 0  # sets found in the store
    played: int = 0  # sets played by this run
    errors: list[str] = dataclasses.field(default_factory=list)

    @property
    def decided(self) -> bool:
        return self.summary.verdict is not None


class _Sets:
    """The sets known so far, and the SPRT over their contiguous prefix."""

    def __init__(self, mc: MatchRules) -> None:
        self.mc = mc
        self.done: dict[int, SetSummary] = {}
        self.prefix = 0
        support = PENTANOMIAL if mc.head_to_head and mc.scores == "raw" else ()
        self.state = SprtState.over(mc.sprt, support) if mc.sprt else None
        # running sums over the sets the figures count: n, x, x^2, games, faulty
        self.sums = [0, 0.0, 0.0, 0, 0]

    def _count(self, s: SetSummary) -> None:
        self.sums[0] += 1
        self.sums[1] += s.score
        self.sums[2] += s.score * s.score
        self.sums[3] += s.games
        self.sums[4] += s.faulty

    def add(self, summary: SetSummary) -> None:
        self.done[summary.index] = summary
        if not self.state:
            self._count(summary)
        while self.prefix in self.done and not self.decided:
            if self.state:
                self.state.add(self.done[self.prefix].score)
                self._count(self.done[self.prefix])
            self.prefix += 1

    def live(self) -> MatchSummary:
        """The figures of the progress line (sets, games, score, Elo, LLR, faulty
        sets), from running sums (the full summary reads every set again: too slow
        to redo after each one)."""
        n, sx, sxx, games, faulty = self.sums
        m = hw = elo = None
        interval: tuple[float, float] | None = None
        if n:
            m = sx / n
            if n > 1:
                var = max(sxx - n * m * m, 0.0) / (n - 1)
                hw = Z95 * math.sqrt(var / n)
                interval = (elo_of_score(m - hw), elo_of_score(m + hw))
            elo = elo_of_score(m)
        st = self.state
        return MatchSummary(
            seats=self.mc.seats, sets=int(n), games=int(games), score=m, score_ci=hw,
            elo=elo, elo_interval=interval, scores=self.mc.scores, faulty_sets=int(faulty),
            sprt=SprtOutcome(st.test, st.llr, st.verdict) if st else None)

    @property
    def decided(self) -> bool:
        return bool(self.state and self.state.verdict)

    @classmethod
    def of(cls, mc: MatchRules, outcomes: Iterable[GameOutcome]) -> _Sets:
        """The sets of ``outcomes`` (a store's games): the whole ones counted."""
        sets = cls(mc)
        by_set: dict[int, list[GameOutcome]] = defaultdict(list)
        for o in outcomes:
            by_set[o.deal].append(o)
        for s, games in sorted(by_set.items()):
            if len(games) == mc.per_set:
                sets.add(reduce_set(mc, s, games))
        return sets

    def ordered(self) -> list[SetSummary]:
        return [self.done[i] for i in sorted(self.done)]

    def summary(self) -> MatchSummary:
        if not self.state:
            return summarize(self.ordered(), None, self.mc.seats)
        # The SPRT reads the sets in order: a set after a gap (one that could not be
        # played yet) waits for it.
        out = summarize([self.done[i] for i in range(self.prefix)], self.mc.sprt, self.mc.seats)
        return dataclasses.replace(out, sets_after_verdict=len(self.done) - out.sets)


class _SetSchedule:
    """What a match plays next: the first sets not played yet, a batch at a time,
    until the test decides (or the fixed number, or ``max_sets``, is played).  A set
    is committed whole, once its last game arrives."""

    def __init__(self, mc: MatchConfig, job: Job, sets: _Sets, size: int,
                 result: MatchResult) -> None:
        self.mc, self.job, self.sets, self.size, self.result = mc, job, sets, size, result
        self.pending: dict[int, list[GameOutcome]] = defaultdict(list)
        self.mark: tuple[int, int] | None = None  # (sets played, errors) before a batch

    def next(self, run: Driver) -> Work | None:
        errors = run.result.errors
        if self.mark is not None and len(errors) > self.mark[1] \
                and self.result.played == self.mark[0]:
            e = errors[-1]
            raise MatchError(f"no set could be played ({e.game_id}: "
                             f"{e.message.splitlines()[0]}); the finished sets are saved in "
                             f"{self.result.output_dir}")
        if self.sets.decided or self.sets.prefix >= self.mc.sets:
            return None
        todo = [s for s in range(self.sets.prefix, self.mc.sets)
                if s not in self.sets.done][:self.size]
        self.pending.clear()
        self.mark = (self.result.played, len(errors))
        return Work(self.job, [g for s in todo for g in set_games(self.mc, s)])

    def arrived(self, games: Sequence[GameOutcome]) -> list[list[GameOutcome]]:
        whole = []
        for o in games:
            self.pending[o.deal].append(o)
            if len(self.pending[o.deal]) == self.mc.per_set:
                whole.append(sorted(self.pending.pop(o.deal), key=lambda g: g.index))
        return whole

    def committed(self, group: Sequence[GameOutcome]) -> None:
        self.sets.add(reduce_set(self.mc, group[0].deal, group))
        self.result.played += 1


def run_match(mc: MatchConfig, *, output_dir: Path | None = None,
              executor: Executor | None = None, jobs: int | None = None,
              progress: Progress | None = None, quiet: bool = False,
              batch: int | None = None, sandbox: Sandbox | None = None) -> MatchResult:
    """Play the match's sets until the SPRT decides (or the fixed number of games is
    played, or ``max_sets``), resuming from what the output folder holds.  Raises
    StorageError if the folder holds something else; KeyboardInterrupt passes through
    after the finished sets are committed.  The run itself is the ``driver``'s, over
    the match's sets (``progress``: its line is the test's figures)."""
    t = mc.tournament
    check_bots(t)
    out = (output_dir or t.output_dir).resolve()
    job_sandbox = (sandbox if sandbox is not None else resolve(t.sandbox)).hide(str(out))
    head = [g for s in range(min(mc.sets, 64)) for g in set_games(mc, s)]
    store = Store.create_or_resume(out, mc.settings(), t.name, mc.sets * mc.per_set,
                                   schedule_digest(head))
    executor = executor or ProcessExecutor(jobs or t.jobs)
    driver = Driver(store, out, executor, stop_after=t.stop_after,
                    never_stop=[b.name for b in t.remote_bots])
    with driver:
        sets = _Sets.of(mc, store.outcomes())
        result = MatchResult(mc, sets.summary(), out, already_done=len(sets.done))
        if progress is None and not quiet:
            progress = Progress(0, 0, every=5.0)
        if progress is not None and progress.line is None:
            progress.line = lambda: status_line(sets.live(), mc)
        driver.progress = progress
        workers = getattr(executor, "jobs", 1) or 1
        size = batch or (mc.sets if mc.games is not None else max(16, 4 * workers))
        try:
            driver.run(_SetSchedule(mc, Job(t, str(out), sandbox=job_sandbox), sets, size,
                                    result))
        finally:
            result.summary = sets.summary()
            result.errors = [f"{e.game_id}: {e.message.splitlines()[0]}"
                             for e in driver.result.errors]
            driver.final = status_line(result.summary, mc)
        return result


def stored_summary(store: Store) -> tuple[MatchSettings, MatchSummary]:
    """The match in ``store`` and its summary now, exactly as ``run_match`` gives it
    over the same sets (whole sets only; a running match's so far).  StoredConfigError
    when the store holds no match (a tournament's)."""
    settings = store.settings
    if not isinstance(settings, MatchSettings):
        raise wrong_kind(store.path, settings.kind, "a match")
    return settings, _Sets.of(settings, store.outcomes()).summary()


def describe(result: MatchResult) -> list[str]:
    """The verdict and the whole summary, as lines of text."""
    mc, s = result.config, result.summary
    new, old = mc.new, mc.old
    lines: list[str] = []
    sp = s.sprt
    if sp:
        t = sp.test
        test = f"SPRT elo0={t.elo0:g} elo1={t.elo1:g} alpha={t.alpha:g} beta={t.beta:g}"
        if sp.verdict == "H1":
            lines.append(f"H1 accepted: {new} is better than {old} (LLR {sp.llr:.2f} >= "
                         f"{sp.upper:.2f}; {test})")
        elif sp.verdict == "H0":
            lines.append(f"H0 accepted: {new} is not {t.elo1:g} Elo better than {old} "
                         f"(LLR {sp.llr:.2f} <= {sp.lower:.2f}; {test})")
        else:
            why = (f"the cap of {mc.sets} sets" if s.sets >= mc.sets else "interrupted")
            lines.append(f"no decision yet: LLR {sp.llr:.2f} is between {sp.lower:.2f} "
                         f"and {sp.upper:.2f} after {s.sets} sets ({why}; {test})")
    else:
        lines.append(f"{new} - {old} after {s.sets} sets ({s.games} games):")
    scale = ("logistic, on the pair score" if mc.head_to_head
             else "the Elo-equivalent of the score against the field")
    lines.append(f"  sets            {s.sets} ({s.games} games, {mc.per_set} per set"
                 + (f"; {s.sets_after_verdict} more played after the verdict, not counted"
                    if s.sets_after_verdict else "") + ")")
    if s.score is not None:
        adjusted = s.scores == "adjusted"
        lines.append(f"  set score       {_pm(s.score, s.score_ci, '.4f')} "
                     f"(equal bots: 0.5000; "
                     + ("luck-adjusted: less the luck of the cards drawn and turned)"
                        if adjusted else "raw)"))
        if adjusted and s.raw_score is not None:
            lines.append(f"  raw set score   {_pm(s.raw_score, s.raw_score_ci, '.4f')}"
                         f" (the places as they fell; --scores raw tests these)")
        lines.append(f"  {'Elo':<15} {_elo_text(s)}  ({scale}; 95 % interval)")
        lines.append(f"  score diff      {_pm(s.score_diff, s.score_diff_ci, '+.4f')} "
                     f"(share of opponents beaten, {new} minus {old})")
        lines.append(f"  place diff      {_pm(s.place_diff, s.place_diff_ci, '+.3f')} "
                     f"(mean place of {old} minus {new}: positive, {new} finished higher)")
        if s.los is not None:
            lines.append(f"  LOS             {100 * s.los:.1f} % (probability that {new} is "
                         f"better)")
    if s.pentanomial is not None:
        lines.append("  pairs           " + "  ".join(
            f"{lab}: {n}" for lab, n in zip(("0-2", "0.5-1.5", "1-1", "1.5-0.5", "2-0"),
                                            s.pentanomial, strict=True))
            + f"  ({new}'s score first)")
    f = s.faults
    lines.append(f"  faults          {s.faulty_sets} of {s.sets} sets had faults "
                 f"({new} {f.new}, {old} {f.old}, field {f.field}; scored by the "
                 "rules: substituted decisions, forfeits)")
    if sp:
        lines.append(f"  LLR             {sp.llr:.3f} (bounds {sp.lower:.3f}, "
                     f"{sp.upper:.3f})")
    return lines
