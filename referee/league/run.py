"""A league's life: making it, taking submissions, playing its pending games,
adding up its standings.

Built on the tournament machinery: each table size's pending games are handed, as
``GameSpec``s of a ``TournamentConfig`` whose field is the league's active entries,
to a tournament ``Executor`` (with its per-bot instance pool and sandbox), and each
outcome goes to the tournament ``Store.add``; standings are the tournament's
``compute``.  What is new is only which games are pending (``schedule``: a function
of the active field, not of history) and where entries come from (``submission``).

Submitted bots always run in the sandbox (``[sandbox] mode = "off"`` is refused; with
``auto`` the league still requires it, as ``on``).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import secrets
import shutil
import sys
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..checkbot.checker import Checker, LeadGame, league_alias
from ..checkbot.scenarios import SCENARIOS
from ..players.botspec import BotSpec, as_transport
from ..players.sandbox import Sandbox, SandboxConfig, SandboxError, resolve
from ..tournament.config import DEFAULT_STOP_AFTER, TournamentConfig
from ..tournament.driver import Driver, Progress, Work
from ..tournament.executor import Executor, Job, NotPlayed, ProcessExecutor
from ..tournament.outcome import GameOutcome
from ..tournament.run import use_luck_setting
from ..tournament.schedule import GameSpec
from . import adaptive
from .config import LeagueConfig, LeagueConfigError, changes
from .results import LeagueError, config_of, pending, progress_of, standings
from .schedule import (
    LeagueGame,
    entry_id,
    game_alias,
    name_of,
)
from .store import Entry, LeagueStore, now
from .submission import (
    check_entry_command,
    content_hash,
    freeze,
    make_writable,
    stage,
    sweep_staging,
)

NAME_CHARS = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")
CONFIG_FILE = "league.toml"


def check_name(name: str) -> None:
    if not name or len(name) > 40 or not set(name) <= NAME_CHARS:
        raise LeagueError(f"{name!r} is not a bot name: use 1 to 40 letters, digits, '-' "
                          "and '_'")


# --- making a league -------------------------------------------------------------------


def new_league(league_dir: Path, config: LeagueConfig, config_text: str, *,
               secret: bytes | None = None) -> list[str]:
    """Make the league in ``league_dir``, or take an edited configuration into the
    league there.  Returns the lines saying what changed; raises LeagueConfigError
    listing, in one line, the changes an existing league refuses.  ``secret``: a
    new league's secret (the key of its decks; default: drawn at random), e.g.
    another league's to play the same games."""
    if config.sandbox.mode == "off":
        raise LeagueConfigError("sandbox.mode: a league runs other people's bots: it must be "
                                "\"on\" or \"auto\" (both require the sandbox), not \"off\"")
    if (league_dir / "league.sqlite").exists():
        store = LeagueStore.open(league_dir)
        try:
            old = store.league_config()
            if config.seed != old.seed and _seed_drawn(config_text):
                config = replace(config, seed=old.seed)  # drawn now: keep the league's
            refused, accepted = changes(old, config)
            if refused:
                raise LeagueConfigError(
                    f"{league_dir} is a league whose games depend on these settings; "
                    f"this configuration changes them: {'; '.join(refused)} "
                    "(start another league for other settings)")
            if accepted:
                store.set_config(config)
                _write_config(league_dir, config_text)
            return accepted or ["nothing changed"]
        finally:
            store.close()
    league_dir.mkdir(parents=True, exist_ok=True)
    store = LeagueStore.create(league_dir, config, secret)
    store.close()
    for sub in ("entries", "games", "logs"):
        (league_dir / sub).mkdir(exist_ok=True)
    _write_config(league_dir, config_text)
    return [f"made league {config.name!r} in {league_dir}: seats {list(config.seats)}, "
            f"{config.deals} deals per lineup, seed {config.seed}"]


def secret_of(league_dir: Path) -> bytes:
    """The secret of the league in ``league_dir`` (``league new --secret-from``)."""
    store = LeagueStore.open(league_dir)
    try:
        return store.secret()
    finally:
        store.close()


def _seed_drawn(text: str) -> bool:
    return "seed" not in tomllib.loads(text).get("league", {})


def _write_config(league_dir: Path, text: str) -> None:
    tmp = league_dir / (CONFIG_FILE + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, league_dir / CONFIG_FILE)


#: A league's bots are frozen between their turns unless its ``[sandbox]`` says
#: ``freeze_between_turns = false``: on a shared machine a bot computing on the other
#: seats' turns takes CPU from the seat on the clock (RULES.md, Time control).
LEAGUE_FREEZE_DEFAULT = True


def league_sandbox_config(config: LeagueConfig) -> SandboxConfig:
    """The sandbox settings of a league's bots, for its checks and games alike: the
    league's, each bot's folder its entry, frozen between turns unless it says not."""
    return replace(config.sandbox, entry_fence=True,
                   freeze_between_turns=config.sandbox.freezes(LEAGUE_FREEZE_DEFAULT))


def league_sandbox(config: LeagueConfig, league_dir: Path) -> Sandbox:
    """The sandbox submitted bots run in: the league's, required."""
    sb = resolve(replace(league_sandbox_config(config), mode="on"))
    return sb.hide(str(league_dir))


# --- submissions -----------------------------------------------------------------------


@dataclass
class SubmitResult:
    accepted: bool
    name: str
    version: int | None
    hash: str
    report: str  # check-bot's report
    retired: int | None = None  # the version it replaces
    unchanged: bool = False  # the same bot as the active version: nothing done

    def summary(self) -> str:
        if self.unchanged:
            return (f"unchanged: {self.name} version {self.version} is this bot already "
                    f"(content {self.hash[:12]}, the same command); nothing was submitted")
        if not self.accepted:
            return f"refused: {self.name} did not pass check-bot (the report is above)"
        more = f"; version {self.retired} retired, its pending games cancelled" if self.retired else ""
        return (f"accepted: {self.name} version {self.version} (content {self.hash[:12]}){more}; "
                "its games against the field are scheduled")


def submit(league_dir: Path, name: str, source: Path, command: Sequence[str], *,
           transport: str = "stdio", author: str | None = None,
           sandbox: Sandbox | None = None,
           checker: Callable[[Sequence[str], str, Path, LeagueConfig, Sandbox], tuple[bool, str]]
           | None = None) -> SubmitResult:
    """Copy ``source`` into the league, check it under the league's sandbox and time
    limits, and on success make it ``name``'s new version.  Raises SubmissionError
    (an unsafe or oversized submission, nothing kept) or LeagueError."""
    check_name(name)
    if not command:
        raise LeagueError("the bot's command is empty: give it, e.g. --command \"python3 bot.py\"")
    store = LeagueStore.open(league_dir)
    try:
        config = config_of(store)
        entries_dir = league_dir / "entries"
        with stage(source, entries_dir, config.limits) as staged:
            digest = content_hash(staged)
            current = [e for e in store.entries(name) if e.active]
            if current and current[0].hash == digest and current[0].command == tuple(command) \
                    and current[0].transport == transport:
                return SubmitResult(True, name, current[0].version, digest, "",
                                    unchanged=True)
            check_entry_command(command, staged, config.sandbox)
            freeze(staged)
            if sandbox is None:
                try:
                    sandbox = league_sandbox(config, league_dir)
                except SandboxError as e:
                    raise LeagueError(f"cannot check the bot: {e}") from None
            # The check runs the bot from where its games will run it: its entry
            # folder, under the version it will be (RULES of the check: leagues/README.md).
            version = store.next_version(name)
            rel = Path("entries") / name / f"v{version}"
            dest = league_dir / rel
            committed = False
            try:  # from the first step that leaves a trace, to the commit: all or nothing
                dest.parent.mkdir(parents=True, exist_ok=True)
                if dest.exists():  # left by a submission that died before its commit
                    make_writable(dest)
                    shutil.rmtree(dest)
                make_writable(staged)
                os.replace(staged, dest)
                freeze(dest)
                if checker is not None:
                    ok, report = checker(command, transport, dest, config, sandbox)
                else:
                    # Its games' opponents (one author's entries never meet, when
                    # the league keeps them apart): their names seat its first games.
                    others = sorted(e.id for e in store.active() if e.name != name and not (
                        config.separate_authors and e.author == (author or name)))
                    ok, report = run_check(command, transport, dest, config, sandbox,
                                           entry=entry_id(name, version), opponents=others)
                if not ok:
                    _remove(dest)
                    return SubmitResult(False, name, None, digest, report)
                with store.transaction():
                    if store.next_version(name) != version:
                        raise LeagueError(f"another submission of {name} was accepted while "
                                          "this one was checked: submit again")
                    store.add_entry(Entry(name, version, digest, tuple(command), transport,
                                          str(rel), author or name, now(), None))
                committed = True
            except BaseException:
                # Interrupted (Ctrl-C) or failed anywhere before the commit: neither the
                # version's folder nor its name's new folder is left behind.  (Once
                # committed, the entry and its folder stay whatever comes next.)
                if not committed:
                    _remove(dest)
                raise
            retired = current[0].version if current else None
            return SubmitResult(True, name, version, digest, report, retired)
    finally:
        store.close()


def _remove(folder: Path) -> None:
    """A refused version's folder, and its name's folder if it holds no other."""
    make_writable(folder)
    shutil.rmtree(folder, ignore_errors=True)
    with contextlib.suppress(OSError):
        folder.parent.rmdir()


def run_check(command: Sequence[str], transport: str, folder: Path, config: LeagueConfig,
              sandbox: Sandbox, *, entry: str = "bot@1", opponents: Sequence[str] = (),
              on_stderr: Callable[[str], None] | None = None) -> tuple[bool, str]:
    """check-bot on the submission in its entry ``folder``, as the league will run it
    (``entry``: its name and version; ``opponents``: the other active entries).

    First a game at each of the league's table sizes as the league plays them: a
    fresh process of the bot, from the same folder, with the same environment and
    sandbox as in its league games, in a seat drawn at random, among entries' names,
    under a game id of the league's kind, on a deal drawn at random, with nothing
    check-bot adds -- so a bot cannot tell these from its games.  Then check-bot's own
    games, which bring up every kind of decision."""
    names = [o for o in opponents if name_of(o) != name_of(entry)]
    k = 2
    while len(names) < max(config.seats) - 1:  # a young league: names of its kind
        if f"bot{k}@1" not in names and name_of(entry) != f"bot{k}":
            names.append(f"bot{k}@1")
        k += 1
    lead = []
    for k in config.seats:
        seat = secrets.randbelow(k)
        others = random.Random(secrets.randbits(64)).sample(names, k - 1)
        lead.append(LeadGame(f"{k} players, the league's rules, as in the league",
                             config.game_for(k), secrets.randbelow(1 << 62), seat,
                             tuple([*others[:seat], entry, *others[seat:]]), league_alias()))
    report = Checker(list(command), transport=transport, time_control=config.time,
                     cwd=str(folder), sandbox=sandbox, scenarios=SCENARIOS, lead=lead,
                     on_stderr=on_stderr).run()
    return report.ok, report.render()


# --- playing ---------------------------------------------------------------------------


@dataclass(frozen=True)
class LeagueJob(Job):
    #: The league's secret: the key of the game ids its bots are sent.
    secret: bytes = b""

    def bot_game_id(self, spec: GameSpec) -> str:
        """Like a tournament's alias, but from the game itself (its lineup-own deal
        and seating, keyed by the league's secret), not its place in the schedule:
        the same game gets the same alias however the league grew, and no alias links
        a game to another lineup's or another version's."""
        return game_alias(self.secret, spec.deal_seed, spec.seats)


def field_config(config: LeagueConfig, entries: Sequence[Entry], table: int,
                 league_dir: Path) -> TournamentConfig:
    """The tournament a table size's pending games belong to: the active entries as
    its bots, each sandboxed, in its own folder."""
    bots = tuple(BotSpec(name=e.id, command=e.command, transport=as_transport(e.transport),
                         cwd=str(league_dir / e.folder)) for e in entries)
    return TournamentConfig(bots=bots, name=config.name, seats=table, deals=config.deals,
                            seed=config.seed, seating=config.seating,
                            game=config.game_for(table), time=config.time,
                            faults=config.faults, jobs=config.jobs,
                            output=str(league_dir), base_dir=str(league_dir),
                            sandbox=league_sandbox_config(config), luck=config.luck)


@dataclass
class LeagueRunSummary:
    played: int = 0
    errors: list[NotPlayed] = field(default_factory=list)


def _stamp(store: LeagueStore) -> tuple[object, ...]:
    """What a waiting ``--watch`` compares: the entries and the configuration."""
    row = store.conn.execute("SELECT COUNT(*), MAX(submitted), "
                             "COUNT(retired) FROM entries").fetchone()
    return (*row, store.meta("config"))


def top_of(league_dir: Path, n: int = 3) -> str:
    """The first ``n`` of each table size's standings, in a few words."""
    return "; ".join(f"{st.seats} seats: " + ", ".join(r.bot for r in st.rows[:n])
                     for st in standings(league_dir) if st.rows) or "-"


class _PendingSchedule:
    """What a league plays next: its pending games (a function of the active field:
    it grows with each submission), a batch at a time, each table size's games in one
    executor run; with ``watch``, waiting for submissions when none are pending."""

    def __init__(self, league_dir: Path, store: LeagueStore, *, jobs: int | None,
                 watch: bool, limit: int | None, sandbox: Sandbox | None, poll: float,
                 say: Callable[[str], None], stop: Callable[[], bool] | None,
                 on_batch: Callable[[str, bool], None] | None) -> None:
        self.league_dir, self.store = league_dir, store
        self.watch, self.limit, self.sandbox, self.poll = watch, limit, sandbox, poll
        self.say, self.stop, self.on_batch = say, stop or (lambda: False), on_batch
        # Watching plays in batches of a few games per worker, so that a new entry's
        # games start soon after it arrives.
        self.batch = None if not watch else max(8, 4 * (jobs or os.cpu_count() or 1))
        self.queue: list[Work] = []
        self.mark: tuple[int, int] | None = None  # (played, errors) before a batch
        self.idle = False
        self.known: set[str] | None = None  # the active entries last seen

    def next(self, run: Driver) -> Work | None:
        if self.queue:
            return self.queue.pop(0)
        played, errors = run.result.played, len(run.result.errors)
        if self.mark is not None:  # a batch is over
            new, failed = played - self.mark[0], errors - self.mark[1]
            if new:
                done, total = progress_of(self.store)
                if self.watch:  # the overall picture, a line per batch
                    self.say(f"batch: {new} games; {done} of {total} played"
                             + (f"; {failed} could not be played" if failed else "")
                             + f"; top: {top_of(self.league_dir)}")
                if self.on_batch is not None:
                    self.on_batch(f"playing: {done} of {total} games played", False)
            if failed and not new:
                return None  # every game failed: waiting would fail again
            if new or failed:
                self.idle = False
        while True:
            self._arrivals()
            left = None if self.limit is None else self.limit - played
            if left is not None and left <= 0:
                return None
            n = self.batch if left is None else (left if self.batch is None
                                                 else min(self.batch, left))
            todo = pending(self.store)
            if n is not None:
                todo = todo[:n]
            if todo:
                break
            if not self.watch or self.stop():
                return None
            if not self.idle:
                done, total = progress_of(self.store)
                config = config_of(self.store)
                if config.schedule == "adaptive":  # why it stopped
                    for line in adaptive.separation_lines(self.store, config):
                        self.say(line)
                self.say(f"all {total} games played; waiting for submissions (Ctrl-C to "
                         "stop)")
                self.idle = True
                if self.on_batch is not None:  # the report says so at once
                    self.on_batch(f"all {total} games played; waiting for submissions",
                                  True)
            seen = _stamp(self.store)
            while _stamp(self.store) == seen and not self.stop():
                time.sleep(self.poll)  # waiting for another process's submission
            if self.stop():
                return None
            if not self._arrivals():
                self.say(f"new settings: {len(pending(self.store))} games to play")
            if self.on_batch is not None:  # the new entry is on the report at once
                done, total = progress_of(self.store)
                self.on_batch(f"new submissions: {done} of {total} games played", True)
        self.mark = (played, errors)
        self.queue = self._work(todo)
        if run.progress:
            run.progress.grow(len(todo))
        return self.queue.pop(0)

    def _arrivals(self) -> bool:
        """Say, in a line, what changed in the field since it was last looked at:
        each new version (and the one it retires), each entry withdrawn, and the
        games now to be played.  Whether anything did."""
        now = self.store.active()
        ids = {e.id for e in now}
        before, self.known = self.known, ids
        if before is None or before == ids:
            return False
        new = [e for e in now if e.id not in before]
        gone = sorted(before - ids)
        parts = []
        for e in new:
            old = [b for b in gone if name_of(b) == e.name]
            parts.append(f"{e.id}" + (f" (retires {old[0]})" if old else ""))
        replaced = {name_of(e.id) for e in new}
        parts += [f"{b} withdrawn" for b in gone if name_of(b) not in replaced]
        self.say(f"new: {', '.join(parts)}; {len(pending(self.store))} games to play")
        return True

    def _work(self, todo: list[tuple[LeagueGame, int]]) -> list[Work]:
        config = config_of(self.store)
        if self.sandbox is None:
            try:
                self.sandbox = league_sandbox(config, self.league_dir)
            except SandboxError as e:
                raise LeagueError(str(e)) from None
            with self.store.transaction():
                self.store._set_meta("sandbox", json.dumps(self.sandbox.describe()))
        active = {e.id: e for e in self.store.active()}
        work = []
        for table in config.seats:
            specs = [GameSpec(i, g.deal, g.deal_seed, g.seats) for g, i in todo
                     if g.table == table]
            if not specs:
                continue
            in_play = sorted({s for spec in specs for s in spec.seats})
            tcfg = field_config(config, [active[e] for e in in_play], table, self.league_dir)
            work.append(Work(LeagueJob(tcfg, str(self.league_dir), sandbox=self.sandbox,
                                       secret=self.store.secret()), specs))
        return work

    def arrived(self, games: Sequence[GameOutcome]) -> list[list[GameOutcome]]:
        return [list(games)]  # a batch (whole sets) in one transaction

    def committed(self, group: Sequence[GameOutcome]) -> None:
        pass


def play_pending(league_dir: Path, *, executor: Executor | None = None, jobs: int | None = None,
                 limit: int | None = None, sandbox: Sandbox | None = None,
                 progress: bool = True) -> LeagueRunSummary:
    """Play the league's pending games (at most ``limit``) once: ``run_league``
    without watching."""
    return run_league(league_dir, executor=executor, jobs=jobs, limit=limit, sandbox=sandbox,
                      progress=progress)


def run_league(league_dir: Path, *, jobs: int | None = None, watch: bool = False,
               executor: Executor | None = None, sandbox: Sandbox | None = None,
               limit: int | None = None, progress: bool = True, poll: float = 0.5,
               on_line: Callable[[str], None] | None = None,
               stop: Callable[[], bool] | None = None,
               on_batch: Callable[[str, bool], None] | None = None) -> LeagueRunSummary:
    """Play every pending game (at most ``limit``); with ``watch``, keep going: take
    each new submission (or raised deals) as it arrives, until interrupted (or
    ``stop()``).  Watching plays in batches of a few games per worker, so that a new
    entry's games start soon after it arrives.  ``on_batch(state, now)`` is called
    after each batch that played games (``now`` False: a report may wait), and, with
    ``now`` True, when the league goes idle and when a submission arrives (``league
    run --report`` rewrites the report from it, saying ``state``).
    KeyboardInterrupt passes through; finished games are kept.  The run itself is
    the ``driver``'s, over the league's growing schedule."""
    say = on_line or (lambda text: print(text, file=sys.stderr, flush=True))
    store = LeagueStore.open(league_dir)
    try:
        config = config_of(store)
    except BaseException:
        store.close()
        raise
    executor = executor or ProcessExecutor(jobs or config.jobs)
    # An entry that fails each of its first games is stopped, as a tournament's bot
    # is (the tournament's default stop_after: a league has no [faults] key for it).
    driver = Driver(store, league_dir, executor, say=say, stop_after=DEFAULT_STOP_AFTER,
                    progress=Progress(0, 0) if progress else None,
                    busy=f"{league_dir} is played by another 'referee league run'; "
                         "one at a time")
    with driver:
        # The entries are external bots: rollouts model them (the heuristic's rule).
        use_luck_setting(store, config.luck, lambda seats: [None] * len(seats))
        for name in sweep_staging(league_dir / "entries"):  # a killed submission's copy
            say(f"removed {name}: the copy of a submission that was killed before it ended")
        driver.run(_PendingSchedule(league_dir, store, jobs=jobs, watch=watch, limit=limit,
                                    sandbox=sandbox, poll=poll, say=say, stop=stop,
                                    on_batch=on_batch))
    return LeagueRunSummary(driver.result.played, driver.result.errors)
