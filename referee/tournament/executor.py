"""Running scheduled games: the ``Executor`` interface and the local one, a pool of
worker processes each pinned to one CPU.

Owns playing one ``GameSpec`` (``play_game``: players, ``run_game``, the game record
on disk, the ``GameOutcome``) and the worker processes.  An executor is handed a
list of games and reports each outcome (and each fault as it happens) through a
callback; it knows nothing of how games were chosen or how results are kept, so a
cluster executor can be added without touching scheduling, the store or standings.

Workers keep their bots across games: a worker makes each bot's ``Player`` (for an
external bot: starts its process) the first time the bot plays there, and closes
them all when it runs out of games.  Duplicate deals without memory: no process of
an external bot ever plays two seatings of the same deal.  A worker keeps up to as
many instances of each external bot as a deal has seatings, each remembering the
deals it has played, and gives each game an instance that has not seen its deal
(starting one, or starting the least recently used afresh); every instance has its
own scratch in the sandbox.  The game id a bot is sent is an alias derived from the
secret seed, which does not tell which games share a deal.

Remote bots (``remote = true``) connect to one endpoint, once: every game with a
remote bot is played by worker 0, which listens for them (``RemoteBots``); it plays
those games first, then helps with the others.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import os
import pickle
import signal
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any, Protocol

from ..errors import ExecutionError, StorageError
from ..play.runner import Fault, Player, run_game
from ..players.factory import make_player
from ..players.sandbox import Sandbox, unsandboxed
from .config import TournamentConfig, seatings_per_deal
from .outcome import GameOutcome
from .players import RemoteBots, close_player
from .schedule import GameSpec, derive_seed
from .stopping import StoppedPlayer


@dataclass(frozen=True)
class Batch:
    """Finished games to commit in one transaction, all or none: one or more whole
    duplicate sets, as the Dask executor plays them (the set is its unit of work),
    the sets that came back together sharing the commit."""

    outcomes: tuple[GameOutcome, ...]


def finished(r: Report) -> tuple[GameOutcome, ...]:
    """The finished games in a report: a game's outcome, a batch's, else none."""
    if isinstance(r, GameOutcome):
        return (r,)
    return r.outcomes if isinstance(r, Batch) else ()


@dataclass(frozen=True)
class FaultNotice:
    """A bot fault, reported while its game is still running."""

    game_id: str
    text: str


@dataclass(frozen=True)
class NotPlayed:
    """A game the referee could not play (not a bot's fault: a bug, a bot that could
    not be started at all, a worker that died), or -- ``storage`` -- whose record could
    not be written (the disk is full, the folder is not writable), which stops the run
    giving out games.  The game is not recorded, and is played again on resume."""

    index: int
    game_id: str
    message: str  # with ``storage``: one line, naming the path and the problem
    storage: bool = False


@dataclass(frozen=True)
class Notice:
    """Something the organiser must see while the games go on: where remote bots
    connect, which connected, which is absent, a refused connection."""

    text: str


def storage_failure(spec: GameSpec, error: StorageError) -> NotPlayed:
    """The report of a game whose record could not be kept."""
    return NotPlayed(spec.index, spec.game_id, str(error), storage=True)


Report = GameOutcome | Batch | FaultNotice | NotPlayed | Notice


IDLE, NOT_READY = -1, -2  # a worker's entry in the shared ``playing`` array


@dataclass(frozen=True)
class Job:
    """What a worker needs to play games: the configuration and where records go."""

    config: TournamentConfig
    output_dir: str
    records: str = "games"  # folder under output_dir
    sandbox: Sandbox = field(default_factory=unsandboxed)
    #: Off only to measure what duplicate isolation costs (bench/tournament.py).
    isolate_deals: bool = True

    def bot_game_id(self, spec: GameSpec) -> str:
        """The id a bot is sent for ``spec``: unlinkable to its deal without the seed."""
        return f"t{derive_seed(self.config.seed or 0, 'game-alias', spec.index):016x}"[:13]


#: Most instances of one external bot a worker keeps (``all`` seats a deal k! times).
MAX_INSTANCES = 6


@dataclass
class _Instance:
    player: Player
    number: int  # 1, 2...: its log files' name
    deals: set[int] = field(default_factory=set)
    used: int = 0  # when it last played (a counter)


class Executor(Protocol):
    def run(self, job: Job, games: Sequence[GameSpec], report: Callable[[Report], None]) -> None:
        """Play ``games`` (in any order, in parallel if it can), calling ``report``
        in the caller's thread for each outcome and fault.  Returns when every game
        is reported or cannot be played.  Interrupting the caller (KeyboardInterrupt)
        stops the games in flight."""


@dataclass
class PlayerCache:
    """A worker's bots, made on first use and kept across games: in-process bots
    once each, external bots as up to ``MAX_INSTANCES`` instances each, none of which
    plays two seatings of one deal (the module docstring).  External bots' logs go to
    ``logs/worker-N/`` (two workers' copies of a bot must not share a file), an
    instance after the first to ``NAME.I.stderr.log``."""

    job: Job
    worker: int = 0
    notify: Callable[[str], None] = lambda text: None
    players: dict[str, Player] = field(default_factory=dict)
    instances: dict[str, list[_Instance]] = field(default_factory=dict)
    remote: RemoteBots | None = None
    clock: int = 0
    started: int = 0  # external bot instances made
    stopped: set[str] = field(default_factory=set)  # bots stopped (``stopping``)

    def get(self, name: str, deal: int | None = None) -> Player:
        spec = self.job.config.bot(name)
        if name in self.stopped:
            for player in [self.players.pop(name, None),
                           *(i.player for i in self.instances.pop(name, []))]:
                if player is not None:  # its processes are not needed any more
                    with contextlib.suppress(Exception):
                        close_player(player)
            return StoppedPlayer(name, self.job.config.stop_after)
        if spec.remote:
            if self.remote is None:
                self.remote = RemoteBots(self.job.config, self.notify)
            return self.remote.player(spec)  # not kept: RemoteBots owns it
        if spec.command is None:  # in-process: no process to remember anything
            if name not in self.players:
                self.players[name] = make_player(spec, time_control=self.job.config.time,
                                                 base_dir=self.job.config.base_dir,
                                                 streams=True)
            return self.players[name]
        self.clock += 1
        pool = self.instances.setdefault(name, [])
        isolate = self.job.isolate_deals and deal is not None
        fresh = [i for i in pool if not isolate or deal not in i.deals]
        if fresh:
            inst = min(fresh, key=lambda i: i.used)  # spread the deals over the instances
        else:
            cap = min(MAX_INSTANCES, seatings_per_deal(self.job.config.seating,
                                                       self.job.config.seats))
            if len(pool) >= cap:  # every instance has seen this deal: renew the oldest
                old = min(pool, key=lambda i: i.used)
                pool.remove(old)
                with contextlib.suppress(Exception):
                    close_player(old.player)
            taken = {i.number for i in pool}
            number = next(n for n in range(1, cap + 2) if n not in taken)
            inst = _Instance(self._make(name, number), number)
            pool.append(inst)
        inst.used = self.clock
        if isolate:
            assert deal is not None
            inst.deals.add(deal)
        return inst.player

    def _make(self, name: str, number: int) -> Player:
        spec = self.job.config.bot(name)
        log_dir = os.path.join(self.job.output_dir, "logs", f"worker-{self.worker}")
        self.started += 1
        return make_player(spec, time_control=self.job.config.time,
                           base_dir=self.job.config.base_dir, sandbox=self.job.sandbox,
                           log_dir=log_dir, streams=True,
                           log_name=name if number == 1 else f"{name}.{number}")

    def close(self) -> None:
        try:
            for p in self.players.values():
                with contextlib.suppress(Exception):
                    close_player(p)
            self.players.clear()
            for pool in self.instances.values():
                for inst in pool:
                    with contextlib.suppress(Exception):
                        close_player(inst.player)
            self.instances.clear()
        finally:
            if self.remote is not None:
                self.remote.close()


def play_game(job: Job, spec: GameSpec, seats: PlayerCache, worker: int = 0,
              on_fault: Callable[[Fault], None] | None = None,
              save: Callable[[str, Sequence[str]], None] | None = None) -> GameOutcome:
    """Play one scheduled game and write its record (durably, before returning), or
    hand it to ``save`` (its path, its lines: a Dask worker sends it back instead)."""
    config = job.config
    players = [seats.get(name, spec.deal) for name in spec.seats]

    def on_event(kind: str, payload: Any) -> None:
        if kind == "fault" and on_fault is not None:
            on_fault(payload)

    record = run_game(config.game, spec.deal_seed, players, game_id=spec.game_id,
                      bot_game_id=job.bot_game_id(spec),
                      time_control=config.time, policy=config.faults,
                      on_event=on_event if on_fault else None)
    record.sandbox = job.sandbox.describe()
    record.tournament_seed = config.seed
    rel = os.path.join(job.records, f"{spec.game_id}.jsonl")
    path = os.path.join(job.output_dir, rel)
    (save or write_record)(path, record.to_lines())
    return GameOutcome.of(record, spec, worker=worker, record_path=rel)


def write_record(path: str, lines: Sequence[str]) -> None:
    """Write a game record durably (a temporary file, synced, renamed, the folder
    synced) or raise StorageError naming the path and the problem; no temporary file
    is left behind."""
    try:
        replace_synced(path, ("\n".join(lines) + "\n").encode())
        # The rename itself must reach the disk before the game is committed.
        folder = os.open(os.path.dirname(path), os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
    except OSError as e:
        raise StorageError(f"cannot write the game record {path}: {e.strerror or e}") from None


def replace_synced(path: str, data: bytes) -> None:
    """``path`` holds ``data`` on the disk, or is as it was: written to a temporary
    file, synced, renamed over ``path`` (the folder is the caller's to sync); no
    temporary file is left behind."""
    tmp = path + ".tmp"
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def default_jobs() -> int:
    return len(os.sched_getaffinity(0))


def _die_with_parent() -> None:
    """Linux: have the kernel kill this worker when the referee dies (even by
    SIGKILL), so that a killed tournament leaves no orphan workers and bots."""
    with contextlib.suppress(Exception):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _worker(number: int, cpu: int | None, job: Job, tasks: Connection, results: Connection,
            playing: Any, parent: int, stopped: Any = None) -> None:
    """Play the games the parent sends on ``tasks``, one at a time, until None.
    ``results`` is this worker's own pipe; ``send`` returns once the message is in
    the pipe, so nothing is lost if a bot takes the process down right after.
    ``playing[number]`` (shared memory, readable after a crash) holds the index of the
    game being played, IDLE between games, NOT_READY until the worker is set up;
    ``stopped`` (shared memory, one flag per bot) the bots the parent stopped.

    No queue is shared between workers: a worker killed at any point (the kernel's
    OOM killer) holds nothing the others need, and the parent knows which game it
    had been given."""
    _die_with_parent()
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)
    # Ctrl-C goes to the whole process group; the parent decides what to do.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if cpu is not None:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, {cpu})  # bots started from here inherit it
    seats = PlayerCache(job, number, notify=lambda text: results.send(Notice(text)))
    playing[number] = IDLE
    try:
        while True:
            try:
                spec = tasks.recv()
            except EOFError:  # the parent is gone
                break
            if spec is None:
                break
            playing[number] = spec.index
            if stopped is not None:  # the bots the parent stopped (shared memory)
                names = job.config.bot_names
                seats.stopped = {names[i] for i in range(len(names)) if stopped[i]}

            def on_fault(f: Fault, game_id: str = spec.game_id) -> None:
                results.send(FaultNotice(game_id, str(f)))

            try:
                report: Report = play_game(job, spec, seats, number, on_fault)
            except StorageError as e:
                report = storage_failure(spec, e)
            except Exception as e:
                report = NotPlayed(spec.index, spec.game_id,
                                     f"{type(e).__name__}: {e}\n{traceback.format_exc()}")
            results.send(report)
            playing[number] = IDLE
        # No game left: say so first (the parent needs nothing more from us), then
        # end the bots' sessions.
        results.send(("exit", number))
    finally:
        seats.close()


class SerialExecutor:
    """Plays the games one after another in this process: for debugging and
    profiling (a bot's exception surfaces here), and as the smallest example of the
    interface."""

    def __init__(self) -> None:
        self.stopped: set[str] = set()

    def stop(self, bot: str) -> None:
        """Forfeit ``bot``'s games not started yet, without starting it."""
        self.stopped.add(bot)

    def run(self, job: Job, games: Sequence[GameSpec], report: Callable[[Report], None]) -> None:
        os.makedirs(os.path.join(job.output_dir, job.records), exist_ok=True)
        seats = PlayerCache(job, notify=lambda text: report(Notice(text)), stopped=self.stopped)
        try:
            for spec in games:
                def on_fault(f: Fault, game_id: str = spec.game_id) -> None:
                    report(FaultNotice(game_id, str(f)))

                try:
                    result: Report = play_game(job, spec, seats, 0, on_fault)
                except StorageError as e:
                    report(storage_failure(spec, e))
                    return
                except Exception as e:
                    result = NotPlayed(spec.index, spec.game_id, f"{type(e).__name__}: {e}")
                report(result)
        finally:
            seats.close()


class ProcessExecutor:
    """``jobs`` worker processes on this machine, worker i pinned to the i-th CPU the
    referee may use (round robin when there are more workers than CPUs).

    A worker that dies (a bot library calling ``exit``, the kernel's OOM killer) is
    replaced; the game it was playing is reported as a ``NotPlayed`` (and so played
    again by the next run), the others go on.

    Each game is reported, and so committed, the moment it ends, not with its
    duplicate set (which the Dask executor returns whole, as a ``Batch``): here the
    unit of work is a game, a set's seatings are played at once by different workers,
    and holding finished games back until their set is complete would lose them with
    a killed referee, or force a choice for a set that lost a game with a dying
    worker.  One synced commit per game allows some 500-1,800 games/s here
    (bench/tournament.py --executor dask): more than one machine's workers finish
    with bots that run as programs; only built-in bots on many CPUs come near it."""

    def __init__(self, jobs: int | None = None, pin: bool = True) -> None:
        self.jobs = jobs or default_jobs()
        self.pin = pin
        self.stopped: set[str] = set()
        self._stopped: Any = None  # while running: one flag per bot, shared
        self._names: list[str] = []

    def stop(self, bot: str) -> None:
        """Forfeit ``bot``'s games not started yet, without starting it (each
        worker reads the flag before its next game)."""
        self.stopped.add(bot)
        if self._stopped is not None and bot in self._names:
            self._stopped[self._names.index(bot)] = 1

    @staticmethod
    def _read(pipes: dict[int, Connection], number: int,
              receive: Callable[[int, Any], None]) -> None:
        """One message from a worker's pipe; a closed pipe is forgotten."""
        try:
            msg = pipes[number].recv()
        except (EOFError, OSError, pickle.UnpicklingError):  # a worker killed mid-send
            pipes.pop(number).close()
            return
        receive(number, msg)

    #: A worker slot whose workers die this many times in a row before their first
    #: game stops the run: replacing them would only fail again (e.g. a script
    #: without an ``if __name__ == "__main__"`` guard).
    START_FAILURES = 3

    def run(self, job: Job, games: Sequence[GameSpec], report: Callable[[Report], None]) -> None:
        if not games:
            return
        os.makedirs(os.path.join(job.output_dir, job.records), exist_ok=True)
        # spawn, not fork: the parent may hold a SQLite connection and (external
        # bots) ZeroMQ contexts, neither of which survives a fork.
        ctx = multiprocessing.get_context("spawn")
        jobs = min(self.jobs, len(games))
        remote = {b.name for b in job.config.remote_bots}
        # Worker 0 listens for the remote bots: it plays their games, first.
        remote_todo = deque(g for g in games if remote.intersection(g.seats))
        todo = deque(g for g in games if not remote.intersection(g.seats))
        cpus = sorted(os.sched_getaffinity(0))
        workers: dict[int, Any] = {}
        pipes: dict[int, Connection] = {}  # results, worker -> parent
        tasks: dict[int, Connection] = {}  # games, parent -> worker
        given: dict[int, GameSpec | None] = {}  # the game each worker was sent last
        playing = ctx.Array("q", jobs, lock=False)  # per worker: game index, IDLE, NOT_READY
        self._names = job.config.bot_names
        self._stopped = ctx.Array("b", [int(b in self.stopped) for b in self._names],
                                  lock=False)
        pending = {g.index: g for g in games}
        start_failures = dict.fromkeys(range(jobs), 0)
        stopped: list[NotPlayed] = []  # storage failures

        def start(number: int) -> None:
            cpu = cpus[number % len(cpus)] if self.pin else None
            reader, writer = ctx.Pipe(duplex=False)
            task_reader, task_writer = ctx.Pipe(duplex=False)
            playing[number] = NOT_READY
            w = ctx.Process(target=_worker, name=f"referee-worker-{number}", daemon=True,
                            args=(number, cpu, job, task_reader, writer, playing, os.getpid(),
                                  self._stopped))
            w.start()
            writer.close()
            task_reader.close()
            workers[number], pipes[number], tasks[number] = w, reader, task_writer
            give(number)

        def give(number: int) -> None:
            """Send the worker its next game (None: no more)."""
            spec: GameSpec | None = None
            if not stopped:
                if number == 0 and remote_todo:
                    spec = remote_todo.popleft()
                elif todo:
                    spec = todo.popleft()
            given[number] = spec
            with contextlib.suppress(OSError):
                tasks[number].send(spec)  # a dead worker is noticed by its sentinel

        def receive(number: int, msg: Any) -> None:
            if isinstance(msg, tuple):  # ("exit", worker): no more games for it
                exited.add(number)
                return
            if isinstance(msg, NotPlayed) and msg.storage:
                # The disk is full (or the folder unwritable): stop giving out games;
                # the game is not recorded, and is played again on resume.
                stopped.append(msg)
                pending.pop(msg.index, None)
                report(msg)
                give(number)
                return
            if not isinstance(msg, (FaultNotice, Notice)):
                pending.pop(msg.index, None)
                start_failures[number] = 0
                report(msg)
                give(number)
                return
            report(msg)

        exited: set[int] = set()
        try:
            for i in range(jobs):
                start(i)
            while len(exited) < jobs:
                # Wait for a message, or for a worker still owing us one to die.
                by_reader = {id(c): n for n, c in pipes.items()}
                watch = [w.sentinel for n, w in workers.items() if n not in exited]
                for obj in wait([*pipes.values(), *watch], 1.0):
                    number = by_reader.get(id(obj))
                    if number is not None:
                        self._read(pipes, number, receive)
                for number, w in list(workers.items()):
                    if number in exited or w.exitcode is None:
                        continue
                    while number in pipes and pipes[number].poll():
                        self._read(pipes, number, receive)  # what it said before dying
                    if number in exited:
                        continue
                    index = playing[number]
                    lost = given.get(number)
                    if lost is not None and lost.index in pending:
                        if index == lost.index:
                            pending.pop(lost.index)
                            report(NotPlayed(lost.index, lost.game_id,
                                               f"worker {number} died while playing it "
                                               f"(exit code {w.exitcode})"))
                        else:
                            # It died before it began the game (while starting, or
                            # taking it): the game is given to the next worker.
                            (remote_todo if remote.intersection(lost.seats)
                             else todo).appendleft(lost)
                    if index == NOT_READY:
                        start_failures[number] += 1
                        if start_failures[number] >= self.START_FAILURES:
                            raise ExecutionError(
                                f"worker {number} died before its first game "
                                f"{start_failures[number]} times in a row "
                                f"(exit code {w.exitcode})")
                    for conns in (pipes, tasks):
                        if number in conns:
                            conns.pop(number).close()
                    start(number)  # a replacement takes the dead worker's place
            for lost in pending.values():
                if not stopped:
                    report(NotPlayed(lost.index, lost.game_id, "lost with a worker that died"))
            for w in workers.values():  # let them say bye to their bots
                w.join(timeout=10)
        finally:
            for w in workers.values():
                if w.is_alive():
                    w.terminate()
            for w in workers.values():
                w.join(timeout=5)
            for c in [*pipes.values(), *tasks.values()]:
                c.close()

