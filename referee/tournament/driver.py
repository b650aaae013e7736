"""The one run loop of tournaments, matches and leagues (as cutechess's
``tournament.cpp`` and fastchess drive every kind of event).

A run is a ``Driver`` over a store and an executor, given two plug-ins:

* **what to play next** -- a ``Schedule``: ``next`` hands out the next ``Work`` (a
  job and its games): a tournament's fixed schedule in one piece
  (``FixedSchedule``), a match's sets a batch at a time until its test decides, a
  league's pending games as its field grows;
* **when to stop** -- the schedule's ``next`` returning None (the schedule is
  played, the SPRT decided, the league's ``--max-games``), and, per bot, the
  ``Stopper`` (``[faults] stop_after``: a bot that fails each of its first games
  is stopped, its remaining games forfeited without starting it).

The driver owns the rest, the same for all three: the store and its lock;
resuming (committed games whose record is missing or cut short are forgotten and
played again; temporary files of records never finished are swept away, before
and after every executor run); the dispatch of the executor's ``Report``\\s
(finished games committed as the schedule groups them, faults and notices shown,
games not played counted); a record that cannot be written (``NotPlayed`` with
``storage``) stops the run with one ``StorageError``; an interruption
(KeyboardInterrupt) passes through after the finished games are committed; and
the progress display (``Progress``: one class, one rule for showing faults).

Also owns choosing the executor (``choose_executor``), for ``tournament run``,
``match`` and ``league run`` alike.
"""

from __future__ import annotations

import contextlib
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TextIO

from ..errors import StorageError
from ..text.quoting import control, printable
from .config import EXECUTORS, TournamentConfigError
from .executor import (
    Batch,
    Executor,
    FaultNotice,
    Job,
    Notice,
    NotPlayed,
    ProcessExecutor,
    Report,
    finished,
)
from .outcome import GameOutcome
from .schedule import GameSpec
from .stopping import Stopper
from .store import Store


class Progress:
    """Games done, games/s and time left on stderr (or, given ``line``, the text it
    returns: a match's test as it goes): a redrawn bar on a terminal, a plain line
    every tenth of the way (and at most every ``every`` seconds) otherwise.  Faults
    and errors are printed on their own lines as they happen, a few of each bot's
    kind of fault (``fault``)."""

    WIDTH = 30

    def __init__(self, total: int, done: int, stream: TextIO | None = None,
                 tty: bool | None = None, clock: Callable[[], float] = time.monotonic,
                 line: Callable[[], str] | None = None, every: float = 10.0) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.total = total
        self.start_done = self.done = done
        self.clock = clock
        self.line = line
        self.every = every
        self.t0 = clock()
        self.first: tuple[float, int] | None = None  # (when, done) at the first game
        self.last_draw = -1.0
        self.last_step = -1
        self.faults_seen: set[str] = set()
        self.shown_kinds: dict[tuple[str, str], int] = {}
        self.repeats = 0
        self.drawn = False  # on a terminal: the bar is on screen

    #: The rate is measured from the first finished game on (the time before it is
    #: spent starting workers and bots, and says nothing of the pace), once this long
    #: has passed since: before, a rate of one or two games would be noise.
    MEASURE_FROM = 1.0

    def _status(self) -> str:
        if self.line is not None:
            return self.line()
        now = self.clock()
        left = self.total - self.done
        rate = None
        if self.first is not None:
            t_first, done_first = self.first
            if now - t_first >= self.MEASURE_FROM and self.done - done_first >= 2:
                rate = (self.done - done_first) / (now - t_first)
        if rate is None and not left and self.done > self.start_done:
            rate = (self.done - self.start_done) / max(now - self.t0, 1e-9)
        speed = f"{rate:.1f} games/s" if rate is not None else "-- games/s"
        eta = ("done" if not left else f"{_hms(left / rate)} left" if rate else "--:-- left")
        return f"{self.done}/{self.total} games  {speed}  {eta}"

    def _draw(self) -> None:
        self.drawn = True
        if self.line is not None:
            control(self.stream, "\r\x1b[K")
            self.stream.write(self._status())
        else:
            frac = self.done / self.total if self.total else 1.0
            filled = int(frac * self.WIDTH)
            bar = "#" * filled + "." * (self.WIDTH - filled)
            control(self.stream, "\r\x1b[K")
            self.stream.write(f"[{bar}] {self._status()}")
        self.stream.flush()

    def grow(self, games: int) -> None:
        """``games`` more to play (a league whose field grew)."""
        self.total += games

    def advance(self, games: int = 1) -> None:
        self.done += games
        now = self.clock()
        if self.first is None:
            self.first = (now, self.done)
        if self.tty:
            if now - self.last_draw >= 0.1 or self.done == self.total:
                self.last_draw = now
                self._draw()
        else:
            step = self.done * 10 // self.total if self.total else 10
            if step != self.last_step or now - self.last_draw >= self.every:
                self.last_step, self.last_draw = step, now
                self.stream.write(self._status() + "\n")
                self.stream.flush()

    def message(self, text: str) -> None:
        text = printable(text)  # faults and notices carry bots' own text
        if self.tty:
            control(self.stream, "\r\x1b[K")
            self.stream.write(text + "\n")
            self._draw()
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    #: Faults shown per bot and kind; the rest are counted (a broken entry can make
    #: hundreds, and they would bury everything else).
    SHOWN_PER_KIND = 3

    def fault(self, game_id: str, text: str) -> None:
        """A fault, as it happens -- but a fault that repeats one shown before (the
        same bot, the same words, another game: a bot that cannot be started, a remote
        bot that is absent), or one more of a kind the bot has had SHOWN_PER_KIND
        times, is counted, not shown."""
        key = re.sub(r" \(seat \d+\) turn \d+:", ":", text)
        m = re.match(r"(.*?) \(seat \d+\) turn \d+: (\w+): ", text)
        kind = (m.group(1), m.group(2)) if m else (text, "")
        shown = self.shown_kinds.get(kind, 0)
        if key in self.faults_seen or shown >= self.SHOWN_PER_KIND:
            self.repeats += 1
            if shown == self.SHOWN_PER_KIND and m:
                self.shown_kinds[kind] = shown + 1
                self.message(f"(more {m.group(2)} faults of {m.group(1)} are counted, not shown)")
            return
        self.faults_seen.add(key)
        self.shown_kinds[kind] = shown + 1
        self.message(f"fault: {game_id}: {text}")

    def close(self, final: str | None = None) -> None:
        """The end of the display: ``final`` (a match's last figures) on a line of its
        own, and how many faults were not shown."""
        if final is not None:
            if self.tty:
                control(self.stream, "\r\x1b[K")
                self.stream.write(final + "\n")
            else:
                self.stream.write(final + "\n")
        elif self.tty and self.drawn:
            self.stream.write("\n")
        self.stream.flush()
        if self.repeats:
            self.tty = False  # the bar is finished: plain lines from here
            self.message(f"{self.repeats} more fault{'s' if self.repeats > 1 else ''} not "
                         f"shown (the standings count every fault; each game's record lists "
                         f"its own)")


def _hms(seconds: float) -> str:
    s = int(seconds + 0.5)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


def sweep_partial_records(out: Path, records: str = "games") -> None:
    """Remove the temporary files of records that were never finished (a record is
    written beside its place and renamed into it, ``executor.write_record``)."""
    for p in (out / records).glob("*.jsonl.tmp"):
        with contextlib.suppress(OSError):
            p.unlink()


@dataclass(frozen=True)
class Work:
    """Games to hand to the executor in one run, with the job they belong to."""

    job: Job
    games: Sequence[GameSpec]


class Schedule(Protocol):
    """What to play next (the driver's plug-in)."""

    def next(self, run: Driver) -> Work | None:
        """The next games to play; None: the run is over.  May wait (a league
        watching for submissions)."""

    def arrived(self, games: Sequence[GameOutcome]) -> list[list[GameOutcome]]:
        """Finished games have arrived: the groups to commit now, each in one
        transaction (a match holds a duplicate set back until it is whole)."""

    def committed(self, group: Sequence[GameOutcome]) -> None:
        """A group is in the store."""


class FixedSchedule:
    """A fixed list of games, played in one executor run; each game committed as
    it arrives (a ``Batch`` of them in one transaction)."""

    def __init__(self, job: Job, games: Sequence[GameSpec]) -> None:
        self.work: Work | None = Work(job, games) if games else None

    def next(self, run: Driver) -> Work | None:
        work, self.work = self.work, None
        return work

    def arrived(self, games: Sequence[GameOutcome]) -> list[list[GameOutcome]]:
        return [list(games)]

    def committed(self, group: Sequence[GameOutcome]) -> None:
        pass


@dataclass
class Played:
    """What a run did."""

    played: int = 0  # games committed by this run
    errors: list[NotPlayed] = field(default_factory=list)  # games it could not play
    replayed: list[str] = field(default_factory=list)  # committed, record bad: played again
    stopped: dict[str, str] = field(default_factory=dict)  # bots stopped in this run: why


class Driver:
    """One run: the store locked, resumed and closed; each ``Work`` the schedule
    hands out played by the executor, its reports dispatched; see the module's
    docstring.  Use as a context manager (the store is locked on entry and closed,
    the progress display finished, on exit), then ``run``."""

    def __init__(self, store: Store, out: Path, executor: Executor, *,
                 progress: Progress | None = None, stop_after: int = 0,
                 never_stop: Iterable[str] = (), say: Callable[[str], None] | None = None,
                 on_commit: Callable[[], None] | None = None,
                 busy: str | None = None, records: str = "games") -> None:
        self.store = store
        self.out = out
        self.executor = executor
        self.progress = progress
        self._say = say
        self.on_commit = on_commit
        self.busy = busy
        self.records = records
        self.result = Played()
        self.storage: list[NotPlayed] = []
        self.final: str | None = None  # the progress display's last line
        stop = getattr(executor, "stop", None)
        self._stop: Callable[[str], None] | None = stop if callable(stop) else None
        self.stop_after = stop_after if self._stop else 0
        self.stopper = Stopper(self.stop_after, never=never_stop)
        self.left_of: Counter[str] = Counter()  # games handed out, not finished, per bot
        self._schedule: Schedule | None = None
        self._stack = contextlib.ExitStack()
        self._entered = False

    # --- the store and resuming -------------------------------------------------------

    def __enter__(self) -> Driver:
        try:
            self.store.lock()
        except StorageError as e:
            raise StorageError(self.busy or str(e)) from None
        try:
            # A committed game whose record is missing or cut short is played again:
            # the record is what 'verify' and 'replay' check the row against.
            self.result.replayed = self.store.forget_unrecorded()
            sweep_partial_records(self.out, self.records)  # a run killed mid-write
            if self.stop_after:
                self.stopper.see_all(list(self.store.outcomes()))
                for bot in self.stopper.stopped:
                    self._stop_bot(bot)
        except BaseException:
            self.store.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self._stack.close()
        finally:
            if self.progress:
                self.progress.close(self.final)
            self.store.close()

    # --- playing ------------------------------------------------------------------------

    def say(self, text: str) -> None:
        """A line for the organiser (escaped: it may carry bots' text)."""
        if self.progress:
            self.progress.message(text)
        elif self._say is not None:
            self._say(text)
        else:
            print(printable(text), file=sys.stderr, flush=True)

    def run(self, schedule: Schedule) -> Played:
        """Play what ``schedule`` hands out until it hands out nothing more."""
        self._schedule = schedule
        while (work := schedule.next(self)) is not None:
            self.play(work)
        return self.result

    def play(self, work: Work) -> None:
        """One executor run.  Raises StorageError when a record could not be written
        (what was committed before stays)."""
        self.left_of.update(b for g in work.games for b in g.seats)
        if not self._entered and work.games:
            # Entered once (a Dask cluster started, or reached), for every executor
            # run of this one -- and only when there are games to play.
            self._stack.enter_context(entered(self.executor))
            self._entered = True
        try:
            self.executor.run(work.job, work.games, self._report)
        finally:
            # Every worker is gone now: what one was writing when it was stopped
            # (a full disk stops the run) is no record.
            sweep_partial_records(self.out, self.records)
        if self.storage:
            raise StorageError(f"{self.storage[0].message}; the {self.store.count()} games "
                               "saved before are kept: make room (or fix the folder) and "
                               "run the same command again to resume")

    def _stop_bot(self, bot: str) -> None:
        assert self._stop is not None
        self._stop(bot)

    def _report(self, r: Report) -> None:
        if isinstance(r, (GameOutcome, Batch)):
            assert self._schedule is not None
            for group in self._schedule.arrived(finished(r)):
                self._commit(group)
        elif isinstance(r, FaultNotice):
            if self.progress:
                self.progress.fault(r.game_id, r.text)
        elif isinstance(r, Notice):
            # Shown even when quiet: without it, a wait for remote bots looks like
            # a hang.
            self.say(r.text)
        elif r.storage:
            self.storage.append(r)
        else:
            self.result.errors.append(r)
            if self.progress:
                self.progress.message(f"game not played: {r.game_id}: "
                                      f"{r.message.splitlines()[0]}")

    def _commit(self, group: list[GameOutcome]) -> None:
        if not group:
            return
        self.store.add_all(group)  # one transaction: a batch, a whole set
        self.result.played += len(group)
        for o in group:
            self.left_of.subtract(o.seats)
            for bot, why in self.stopper.see(o):
                self._stop_bot(bot)
                self.result.stopped[bot] = why
                self.say(f"stopped {bot}: {why}; its {self.left_of[bot]} remaining games are "
                         f"forfeited without starting it ([faults] stop_after = "
                         f"{self.stop_after})")
        assert self._schedule is not None
        self._schedule.committed(group)
        if self.progress:
            self.progress.advance(len(group))
        if self.on_commit:
            self.on_commit()


def choose_executor(kind: str | None = None, scheduler: str | None = None,
                    jobs: int | None = None, *, default: str = "process",
                    default_scheduler: str | None = None, ship: bool = True,
                    concurrency: int | None = None) -> Executor:
    """The executor a run plays on, from the options (``--executor``, ``--scheduler``,
    ``--jobs``) and the configuration's defaults: ``process`` (this machine's worker
    processes, ``jobs`` of them, default one per CPU) or ``dask`` (the cluster at
    the scheduler, else a local one of ``jobs`` workers; ``ship``: send the bots'
    folders to its workers).  A scheduler alone means ``dask``.  ``concurrency``:
    games in flight at once over the process workers (a Dask worker plays one at a
    time).  The same for ``tournament run``, ``match`` and ``league run``."""
    kind = kind or ("dask" if scheduler else default)
    if kind not in EXECUTORS:
        raise TournamentConfigError(f"unknown executor {kind!r}: choose from "
                                    f"{', '.join(EXECUTORS)}")
    if kind != "dask":
        if scheduler:
            raise TournamentConfigError("--scheduler is for the Dask executor: add "
                                        "--executor dask")
        return ProcessExecutor(jobs, concurrency=concurrency)
    if concurrency is not None:
        raise TournamentConfigError("--concurrency is for the process executor (a Dask "
                                    "worker plays one game at a time)")
    # distributed takes a second to import: only when a run asks for it.
    from .dask_executor import DaskExecutor

    return DaskExecutor(scheduler or default_scheduler, jobs, ship=ship)


def entered(executor: Executor) -> contextlib.AbstractContextManager[Any]:
    """``executor`` entered for a run of several batches, if it is a context manager
    (a ``DaskExecutor`` then keeps one client, one local cluster, for them all)."""
    if isinstance(executor, contextlib.AbstractContextManager):
        return executor
    return contextlib.nullcontext()
