"""Running a tournament end to end: schedule, skip what the store already holds,
hand the rest to an executor, commit each outcome as it arrives (a batch of whole
duplicate sets in one transaction), show progress.

Owns resuming and the progress display.  The schedule, the executor, the store and
the standings are used only through their interfaces.
"""

from __future__ import annotations

import contextlib
import json
import re
import secrets
import sqlite3
import sys
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TextIO

from ..errors import StorageError
from ..players.sandbox import Sandbox, resolve
from ..text.quoting import printable
from .config import TournamentConfig
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
from .players import check_bots
from .schedule import schedule, schedule_digest
from .standings import Standings, compute
from .stopping import Stopper
from .store import Store


class Progress:
    """Games done, games/s and time left on stderr: a redrawn bar on a terminal,
    a plain line every tenth of the way (and at most every 10 s) otherwise.  Faults
    and errors are printed on their own lines as they happen."""

    WIDTH = 30

    def __init__(self, total: int, done: int, stream: TextIO | None = None,
                 tty: bool | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.total = total
        self.start_done = self.done = done
        self.clock = clock
        self.t0 = clock()
        self.first: tuple[float, int] | None = None  # (when, done) at the first game
        self.last_draw = -1.0
        self.last_step = -1
        self.faults_seen: set[str] = set()
        self.shown_kinds: dict[tuple[str, str], int] = {}
        self.repeats = 0

    #: The rate is measured from the first finished game on (the time before it is
    #: spent starting workers and bots, and says nothing of the pace), once this long
    #: has passed since: before, a rate of one or two games would be noise.
    MEASURE_FROM = 1.0

    def _status(self) -> str:
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
        frac = self.done / self.total if self.total else 1.0
        filled = int(frac * self.WIDTH)
        bar = "#" * filled + "." * (self.WIDTH - filled)
        self.stream.write(f"\r\x1b[K[{bar}] {self._status()}")
        self.stream.flush()

    def advance(self) -> None:
        self.done += 1
        now = self.clock()
        if self.first is None:
            self.first = (now, self.done)
        if self.tty:
            if now - self.last_draw >= 0.1 or self.done == self.total:
                self.last_draw = now
                self._draw()
        else:
            step = self.done * 10 // self.total if self.total else 10
            if step != self.last_step or now - self.last_draw >= 10:
                self.last_step, self.last_draw = step, now
                self.stream.write(self._status() + "\n")
                self.stream.flush()

    def message(self, text: str) -> None:
        text = printable(text)  # faults and notices carry bots' own text
        if self.tty:
            self.stream.write("\r\x1b[K" + text + "\n")
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

    def close(self) -> None:
        if self.repeats:
            self.message(f"{self.repeats} more fault{'s' if self.repeats > 1 else ''} not shown "
                         f"(the standings count every fault; each game's record lists its own)")
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


def _hms(seconds: float) -> str:
    s = int(seconds + 0.5)
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}" if s >= 3600 else f"{s // 60}:{s % 60:02d}"


@dataclass
class RunSummary:
    scheduled: int
    already_done: int
    played: int = 0
    errors: list[NotPlayed] = field(default_factory=list)
    output_dir: Path = Path(".")
    replayed: list[str] = field(default_factory=list)  # games whose record was bad
    stopped: dict[str, str] = field(default_factory=dict)  # bots stopped in this run: why


def sweep_partial_records(out: Path, records: str = "games") -> None:
    """Remove the temporary files of records that were never finished (a record is
    written beside its place and renamed into it, ``executor.write_record``)."""
    for p in (out / records).glob("*.jsonl.tmp"):
        with contextlib.suppress(OSError):
            p.unlink()


def with_seed(config: TournamentConfig, output_dir: Path) -> tuple[TournamentConfig, str]:
    """The configuration with its seed fixed, and where the seed came from: the
    file's ``seed``; else the one drawn when the tournament in ``output_dir`` first
    ran (kept in its store); else a new one drawn at random (63 bits from the
    system's randomness: no bot can compute the deals from what it knows)."""
    if config.seed is not None:
        return config, "given"
    stored = Store.stored_config(output_dir)
    if stored is not None and isinstance(stored.get("seed"), int):
        return replace(config, seed=stored["seed"]), "random"
    return replace(config, seed=secrets.randbelow(1 << 63)), "random"


def sandbox_of(config: TournamentConfig, mode: str | None = None) -> Sandbox:
    """The sandbox the tournament's bots run in on this machine (``mode`` overrides
    the configuration's); raises SandboxError for ``on`` where it cannot be had."""
    cfg = replace(config.sandbox, mode=mode) if mode else config.sandbox
    return resolve(cfg)


def run_tournament(
    config: TournamentConfig,
    *,
    output_dir: Path | None = None,
    executor: Executor | None = None,
    jobs: int | None = None,
    progress: Progress | None = None,
    quiet: bool = False,
    sandbox: Sandbox | None = None,
    on_game: Callable[[RunSummary], None] | None = None,
) -> RunSummary:
    """Play every scheduled game the output folder does not hold yet, its bots in
    ``sandbox`` (default: the configuration's, ``sandbox_of``).  Raises StorageError if
    the folder holds another tournament, SandboxError if the sandbox is required and
    cannot be had; KeyboardInterrupt passes through after the finished games are
    committed.  ``on_game`` is called after each game is committed (``referee
    tournament run --report`` rewrites the report from it)."""
    out = (output_dir or config.output_dir).resolve()
    config, seed_source = with_seed(config, out)
    check_bots(config)
    if sandbox is None:
        sandbox = sandbox_of(config)
    keys = [config.resolve(k) for k in (config.remote.keys, config.remote.server_key)]
    sandbox = sandbox.hide(str(out), *keys)
    games = schedule(config)
    store = Store.create_or_resume(out, config.to_dict(), config.name, len(games),
                                   schedule_digest(games),
                                   meta={"seed_source": seed_source,
                                         "sandbox": json.dumps(sandbox.describe())})
    try:
        store.lock()
        for w in sandbox.warnings:
            print(w, file=sys.stderr, flush=True)
        # A committed game whose record is missing or cut short is played again:
        # the record is what 'tournament verify' and 'replay' check the row against.
        replayed = store.forget_unrecorded()
        done = store.done()
        todo = [g for g in games if g.index not in done]
        summary = RunSummary(scheduled=len(games), already_done=len(done), output_dir=out,
                             replayed=replayed)
        storage: list[NotPlayed] = []
        if done and not quiet:
            # Said first: the run that follows is the rest of an earlier one.
            print(f"resumed: {len(done)} of {len(games)} games were already played"
                  + ("; nothing left to play" if not todo else
                     f", {len(todo)} to go"), file=sys.stderr, flush=True)
        if progress is None and not quiet and todo:
            progress = Progress(len(games), len(done))
        executor = executor or ProcessExecutor(jobs or config.jobs)
        stop = getattr(executor, "stop", None)
        stopper = Stopper(config.stop_after if callable(stop) else 0,
                          never=[b.name for b in config.remote_bots])
        left_of = Counter(b for g in todo for b in g.seats)  # games not finished, per bot
        stopper.see_all(list(store.outcomes()) if done else [])
        for bot in stopper.stopped:
            assert callable(stop)
            stop(bot)

        def say(text: str) -> None:
            if progress:
                progress.message(text)  # escapes bots' text
            else:
                print(printable(text), file=sys.stderr, flush=True)

        if stopper.stopped and todo:
            say("stopped earlier: " + ", ".join(sorted(stopper.stopped)) + " (its games "
                "are forfeited without starting it)")

        def report(r: Report) -> None:
            if isinstance(r, (GameOutcome, Batch)):
                games = finished(r)
                store.add_all(list(games))  # a batch (whole sets) in one transaction
                for o in games:
                    summary.played += 1
                    for b in o.seats:
                        left_of[b] -= 1
                    for bot, why in stopper.see(o):
                        assert callable(stop)
                        stop(bot)
                        summary.stopped[bot] = why
                        say(f"stopped {bot}: {why}; its {left_of[bot]} remaining games are "
                            f"forfeited without starting it ([faults] stop_after = "
                            f"{config.stop_after})")
                    if progress:
                        progress.advance()
                if on_game:
                    on_game(summary)
            elif isinstance(r, FaultNotice):
                if progress:
                    progress.fault(r.game_id, r.text)
            elif isinstance(r, NotPlayed) and r.storage:
                storage.append(r)
            elif isinstance(r, Notice):
                # Shown even when quiet: without it, a wait for remote bots looks
                # like a hang.
                say(r.text)
            else:
                summary.errors.append(r)
                if progress:
                    progress.message(f"game not played: {r.game_id}: "
                                     f"{r.message.splitlines()[0]}")

        sweep_partial_records(out)  # a run killed mid-write leaves its temporary file
        try:
            executor.run(Job(config, str(out), sandbox=sandbox), todo, report)
        finally:
            # Every worker is gone now: what one was writing when it was stopped
            # (a full disk stops the run) is no record.
            sweep_partial_records(out)
            if progress:
                progress.close()
        if storage:
            raise StorageError(f"{storage[0].message}; the {store.count()} games saved before "
                             "are kept: make room (or fix the folder) and run the same "
                             "command again to resume")
        return summary
    finally:
        store.close()


def standings_of(output_dir: Path) -> Standings:
    """Standings of the tournament in ``output_dir`` (finished or running), with
    its seed and the sandbox its bots ran in."""
    store = Store.open_existing(output_dir)
    try:
        cfg = store.config
        bots = [b["name"] for b in cfg["bots"]]
        st = compute(list(store.outcomes()), bots, cfg["seats"], name=cfg["name"],
                     scheduled=store.scheduled)
        st.seed = cfg.get("seed")
        st.seed_source = store.meta("seed_source") or "given"
        st.running = Store.in_use(output_dir) if not st.complete else None
        sandbox = store.meta("sandbox")
        st.sandbox = json.loads(sandbox) if sandbox else None
        return st
    except sqlite3.Error as e:
        raise StorageError(f"{store.path} cannot be read: {e}; 'referee tournament verify "
                         f"{output_dir} --repair' rebuilds it from the game records") from None
    finally:
        store.close()
