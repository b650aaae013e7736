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
import queue
import signal
import traceback
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any, Protocol

from ..errors import ExecutionError, StorageError
from ..play.runner import Fault, GameRecord, GameSteps, Player, drive, game_steps
from ..players.concurrent import GameLoop
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


def _ignore_signal(signum: int, frame: object) -> None:
    """SIGINT in a worker: ignored (see ``_worker``), by a handler that exec resets."""


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


#: Threads that start bots at once for the games in flight (``InFlight``).
STARTERS = 16

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
    #: Players in a game now (by id): with games in flight at once (``concurrency``),
    #: each game has players of its own, never one another game is using.
    busy: set[int] = field(default_factory=set)
    #: In-process bots beyond the first of each, for games in flight at once.
    spares: dict[str, list[Player]] = field(default_factory=dict)

    def take(self, names: Sequence[str], deal: int | None = None) -> list[Player] | None:
        """Players for one game (``get`` for each seat), held until ``release``;
        None if one of them is in another game now and cannot be doubled (a remote
        bot: one connection)."""
        players: list[Player] = []
        for name in names:
            player = self.get(name, deal)
            if id(player) in self.busy:  # a remote bot, playing elsewhere
                self.release(players)
                return None
            if not isinstance(player, StoppedPlayer):
                self.busy.add(id(player))
            players.append(player)
        return players

    def release(self, players: Sequence[Player]) -> None:
        """The game of ``players`` (``take``) is over: they may play again."""
        for p in players:
            self.busy.discard(id(p))

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
                self.players[name] = self._inprocess(spec)
            if id(self.players[name]) not in self.busy:
                return self.players[name]
            spares = self.spares.setdefault(name, [])
            free = [p for p in spares if id(p) not in self.busy]
            if not free:
                free.append(self._inprocess(spec))
                spares.append(free[0])
            return free[0]
        self.clock += 1
        pool = self.instances.setdefault(name, [])
        isolate = self.job.isolate_deals and deal is not None
        idle = [i for i in pool if id(i.player) not in self.busy]
        fresh = [i for i in idle if not isolate or deal not in i.deals]
        if fresh:
            inst = min(fresh, key=lambda i: i.used)  # spread the deals over the instances
        else:
            # As many instances as a deal has seatings, and one more for each game in
            # flight that holds one now.
            cap = min(MAX_INSTANCES, seatings_per_deal(self.job.config.seating,
                                                       self.job.config.seats)) + \
                len(pool) - len(idle)
            if len(pool) >= cap and idle:  # every idle one has seen this deal: renew one
                old = min(idle, key=lambda i: i.used)
                pool.remove(old)
                with contextlib.suppress(Exception):
                    close_player(old.player)
            taken = {i.number for i in pool}
            number = next(n for n in range(1, len(pool) + 2) if n not in taken)
            inst = _Instance(self._make(name, number), number)
            pool.append(inst)
        inst.used = self.clock
        if isolate:
            assert deal is not None
            inst.deals.add(deal)
        return inst.player

    def _inprocess(self, spec: Any) -> Player:
        return make_player(spec, time_control=self.job.config.time,
                           base_dir=self.job.config.base_dir, streams=True)

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
            for p in [*self.players.values(), *(p for ps in self.spares.values() for p in ps)]:
                with contextlib.suppress(Exception):
                    close_player(p)
            self.players.clear()
            self.spares.clear()
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
    players = seats.take(spec.seats, spec.deal)
    if players is None:
        raise RuntimeError(f"a player of {spec.game_id} is in another game")
    try:
        record = drive(game_of(job, spec, players, on_fault))
    finally:
        seats.release(players)
    return keep_game(job, spec, record, worker, save)


def game_of(job: Job, spec: GameSpec, players: Sequence[Player],
            on_fault: Callable[[Fault], None] | None = None) -> GameSteps:
    """The steps of ``spec``'s game among ``players`` (``game_steps``), to be driven
    alone (``play_game``) or among others in flight (``play_many``)."""
    config = job.config

    def on_event(kind: str, payload: Any) -> None:
        if kind == "fault" and on_fault is not None:
            on_fault(payload)

    return game_steps(config.game, spec.deal_seed, players, game_id=spec.game_id,
                      bot_game_id=job.bot_game_id(spec),
                      time_control=config.time, policy=config.faults,
                      on_event=on_event if on_fault else None)


def keep_game(job: Job, spec: GameSpec, record: GameRecord, worker: int = 0,
              save: Callable[[str, Sequence[str]], None] | None = None) -> GameOutcome:
    """Write the record of ``spec``'s finished game (durably; or hand it to
    ``save``) and return its outcome."""
    config = job.config
    record.sandbox = job.sandbox.describe()
    record.tournament_seed = config.seed
    rel = os.path.join(job.records, f"{spec.game_id}.jsonl")
    path = os.path.join(job.output_dir, rel)
    (save or write_record)(path, record.to_lines())
    return GameOutcome.of(record, spec, worker=worker, record_path=rel,
                          value=config.luck.value_for(seat_builtins(config, spec.seats)))


def seat_builtins(config: TournamentConfig, seats: Sequence[str]) -> list[str | None]:
    """The built-in bot of each seat (None: another kind of bot), for a value
    function that plays the seats by their own policies."""
    out: list[str | None] = []
    for name in seats:
        try:
            out.append(config.bot(name).builtin)
        except KeyError:
            out.append(None)
    return out


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


class InFlight:
    """Up to ``concurrency`` games at once in this thread, for one worker (or the
    serial executor): each game has players of its own (``PlayerCache.take``), and a
    ``GameLoop`` serves them all, waiting on every bot being waited for at once, so
    that bots that think (sleep, compute) keep many games going on few CPUs.  Games
    are ``add``-ed; each finished one is written (``keep_game``) and reported.
    ``on_slot(slot, index)`` is told which game each of the ``concurrency`` slots is
    playing (IDLE when none)."""

    def __init__(self, job: Job, seats: PlayerCache, worker: int, concurrency: int,
                 report: Callable[[Report], None],
                 on_slot: Callable[[int, int], None] = lambda slot, index: None) -> None:
        self.job = job
        self.seats = seats
        self.worker = worker
        self.report = report
        self.on_slot = on_slot
        self.loop = GameLoop()
        self.waiting: deque[GameSpec] = deque()  # given, not begun (no free slot yet)
        self.free = list(range(concurrency - 1, -1, -1))  # free slots
        self.storage_failed = False
        self._starting = False
        self._again = False
        # Bots are started in threads, many at once (a bot takes tens of ms to start
        # and say hello, hundreds on a busy machine: one after another, the games in
        # flight would wait for every start); a game begins once its bots are up.
        self._starters: ThreadPoolExecutor | None = None
        self._warming: dict[int, list[Any]] = {}  # slot -> [spec, players, bots to go]
        self._warm: queue.SimpleQueue[int] = queue.SimpleQueue()  # slots, from the threads
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        self.loop.watch(self._wake_r, self._on_wake)

    @property
    def busy(self) -> int:
        """Games given and not reported yet."""
        return len(self.loop) + len(self.waiting) + len(self._warming)

    def add(self, spec: GameSpec) -> None:
        self.waiting.append(spec)
        self._begin_waiting()

    def run(self) -> None:
        """Serve the games until every one given is reported."""
        while self.busy:
            self.loop.run_once()

    def _begin_waiting(self) -> None:
        """Begin the waiting games that have a free slot and free players (a game
        that ends at once, all its bots in-process, frees its slot for the next)."""
        if self._starting:
            self._again = True
            return
        self._starting = True
        try:
            self._again = True
            while self._again:
                self._again = False
                for _ in range(len(self.waiting)):
                    if not self.free or self.storage_failed:
                        break
                    self._begin(self.waiting.popleft())
        finally:
            self._starting = False

    def _begin(self, spec: GameSpec) -> None:
        try:
            players = self.seats.take(spec.seats, spec.deal)
        except Exception as e:
            self.report(NotPlayed(spec.index, spec.game_id, f"{type(e).__name__}: {e}"))
            return
        if players is None:  # one of its bots is in another game: later
            self.waiting.append(spec)
            return
        slot = self.free.pop()
        self.on_slot(slot, spec.index)
        cold = [p for p in players if getattr(p, "needs_start", lambda: False)()]
        if cold:
            if self._starters is None:
                self._starters = ThreadPoolExecutor(STARTERS, "referee-start")
            self._warming[slot] = [spec, players, len(cold)]
            for p in cold:
                self._starters.submit(self._start_bot, slot, p)
            return
        self._play(spec, players, slot)

    def _start_bot(self, slot: int, player: Any) -> None:
        """In a starter thread: start one bot of the game in ``slot``."""
        try:
            player.prepare()
        finally:
            self._warm.put(slot)
            with contextlib.suppress(OSError):
                os.write(self._wake_w, b"!")

    def _on_wake(self) -> None:
        """Bots started: the games whose bots are all up begin."""
        with contextlib.suppress(OSError):
            os.read(self._wake_r, 4096)
        while not self._warm.empty():
            slot = self._warm.get()
            warming = self._warming[slot]
            warming[2] -= 1
            if warming[2] == 0:
                del self._warming[slot]
                self._play(warming[0], warming[1], slot)

    def _play(self, spec: GameSpec, players: list[Player], slot: int) -> None:
        def on_fault(f: Fault) -> None:
            self.report(FaultNotice(spec.game_id, str(f)))

        def done(record: GameRecord | None, error: BaseException | None) -> None:
            self.seats.release(players)
            report: Report
            if record is None:
                report = NotPlayed(spec.index, spec.game_id, f"{type(error).__name__}: "
                                     f"{error}\n{''.join(traceback.format_exception(error))}")
            else:
                try:
                    report = keep_game(self.job, spec, record, self.worker)
                except StorageError as e:
                    report = storage_failure(spec, e)
                    self.storage_failed = True
                    self.waiting.clear()
                except Exception as e:
                    report = NotPlayed(spec.index, spec.game_id, f"{type(e).__name__}: {e}")
            self.on_slot(slot, IDLE)
            self.free.append(slot)
            self.report(report)
            self._begin_waiting()

        try:
            steps = game_of(self.job, spec, players, on_fault)
        except Exception as e:
            self.seats.release(players)
            self.free.append(slot)
            self.on_slot(slot, IDLE)
            self.report(NotPlayed(spec.index, spec.game_id, f"{type(e).__name__}: {e}"))
            return
        self.loop.start(steps, done)

    def close(self) -> None:
        if self._starters is not None:
            self._starters.shutdown(wait=True, cancel_futures=True)
        self.loop.close()
        for fd in (self._wake_r, self._wake_w):
            with contextlib.suppress(OSError):
                os.close(fd)


def _worker(number: int, cpu: int | None, job: Job, tasks: Connection, results: Connection,
            playing: Any, parent: int, stopped: Any = None, concurrency: int = 1,
            stride: int = 1) -> None:
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
    # Ctrl-C goes to the whole process group; the parent decides what to do.  A
    # handler that does nothing, not SIG_IGN: an ignored signal stays ignored in the
    # bots started from here, and a bot must not tell its games (started here) from
    # its check (started by the referee itself) by what it inherits.
    signal.signal(signal.SIGINT, _ignore_signal)
    if cpu is not None:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, {cpu})  # bots started from here inherit it
    seats = PlayerCache(job, number, notify=lambda text: results.send(Notice(text)))
    if concurrency > 1:
        try:
            _serve_many(number, job, seats, tasks, results, playing, stopped, concurrency,
                        stride)
        finally:
            seats.close()
        return
    entry = number * stride  # its entry in ``playing`` (its first slot)
    playing[entry] = IDLE
    try:
        while True:
            try:
                spec = tasks.recv()
            except EOFError:  # the parent is gone
                break
            if spec is None:
                break
            playing[entry] = spec.index
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
            playing[entry] = IDLE
        # No game left: say so first (the parent needs nothing more from us), then
        # end the bots' sessions.
        results.send(("exit", number))
    finally:
        seats.close()


def _serve_many(number: int, job: Job, seats: PlayerCache, tasks: Connection,
                results: Connection, playing: Any, stopped: Any, concurrency: int,
                stride: int) -> None:
    """``_worker`` with up to ``concurrency`` games in flight (``InFlight``): the
    parent sends that many games ahead; ``playing[number * stride + slot]`` holds
    each slot's game."""
    def on_slot(slot: int, index: int) -> None:
        playing[number * stride + slot] = index

    flight = InFlight(job, seats, number, concurrency, results.send, on_slot)
    for slot in range(concurrency):
        on_slot(slot, IDLE)
    more = True

    def on_task() -> None:
        nonlocal more
        try:
            spec = tasks.recv()
        except EOFError:  # the parent is gone
            spec = None
        if spec is None:
            more = False
            flight.loop.unwatch(tasks.fileno())
            return
        if stopped is not None:  # the bots the parent stopped (shared memory)
            names = job.config.bot_names
            seats.stopped = {names[i] for i in range(len(names)) if stopped[i]}
        flight.add(spec)

    flight.loop.watch(tasks.fileno(), on_task)
    try:
        while more or flight.busy:
            flight.loop.run_once()
        results.send(("exit", number))
    finally:
        flight.close()


class SerialExecutor:
    """Plays the games one after another in this process: for debugging and
    profiling (a bot's exception surfaces here), and as the smallest example of the
    interface."""

    def __init__(self, concurrency: int = 1) -> None:
        self.stopped: set[str] = set()
        self.concurrency = concurrency

    def stop(self, bot: str) -> None:
        """Forfeit ``bot``'s games not started yet, without starting it."""
        self.stopped.add(bot)

    def run(self, job: Job, games: Sequence[GameSpec], report: Callable[[Report], None]) -> None:
        os.makedirs(os.path.join(job.output_dir, job.records), exist_ok=True)
        seats = PlayerCache(job, notify=lambda text: report(Notice(text)), stopped=self.stopped)
        if self.concurrency > 1:
            flight = InFlight(job, seats, 0, self.concurrency, report)
            try:
                for spec in games:
                    flight.add(spec)
                flight.run()
            finally:
                flight.close()
                seats.close()
            return
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

    def __init__(self, jobs: int | None = None, pin: bool = True,
                 concurrency: int | None = None) -> None:
        self.jobs = jobs or default_jobs()
        self.pin = pin
        #: Games in flight at once, over all the workers (None: one per worker).  More
        #: games than workers when the bots think (sleep, wait, compute in their own
        #: processes) rather than the referee: each worker then serves its share of
        #: them at once (``InFlight``).
        self.concurrency = concurrency
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
        if self.concurrency is not None:
            jobs = max(1, min(jobs, self.concurrency))
            # The games in flight shared out among the workers, as evenly as they go.
            share = [self.concurrency // jobs + (i < self.concurrency % jobs)
                     for i in range(jobs)]
        else:
            share = [1] * jobs
        remote = {b.name for b in job.config.remote_bots}
        # Worker 0 listens for the remote bots: it plays their games, first.
        remote_todo = deque(g for g in games if remote.intersection(g.seats))
        todo = deque(g for g in games if not remote.intersection(g.seats))
        cpus = sorted(os.sched_getaffinity(0))
        workers: dict[int, Any] = {}
        pipes: dict[int, Connection] = {}  # results, worker -> parent
        tasks: dict[int, Connection] = {}  # games, parent -> worker
        conc = max(share)  # slots per worker in ``playing``
        # The games each worker was sent and has not reported; None once it was told
        # that there are no more.
        given: dict[int, dict[int, GameSpec] | None] = {}
        # Per worker (and per slot, with games in flight at once): game index, IDLE,
        # NOT_READY.
        playing = ctx.Array("q", jobs * conc, lock=False)
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
            for slot in range(conc):
                playing[number * conc + slot] = NOT_READY
            w = ctx.Process(target=_worker, name=f"referee-worker-{number}", daemon=True,
                            args=(number, cpu, job, task_reader, writer, playing, os.getpid(),
                                  self._stopped, share[number], conc))
            w.start()
            writer.close()
            task_reader.close()
            workers[number], pipes[number], tasks[number] = w, reader, task_writer
            given[number] = {}
            for _ in range(share[number]):
                give(number)

        def give(number: int) -> None:
            """Send the worker its next game (None: no more)."""
            held = given.get(number)
            if held is None:
                return  # told already that there are no more
            spec: GameSpec | None = None
            if not stopped:
                if number == 0 and remote_todo:
                    spec = remote_todo.popleft()
                elif todo:
                    spec = todo.popleft()
            if spec is None:
                if held and share[number] > 1:
                    return  # games in flight: told when they are done
                given[number] = None
            else:
                held[spec.index] = spec
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
                _done(number, msg.index)
                report(msg)
                give(number)
                return
            if not isinstance(msg, (FaultNotice, Notice)):
                pending.pop(msg.index, None)
                _done(number, msg.index)
                start_failures[number] = 0
                report(msg)
                give(number)
                return
            report(msg)

        def _done(number: int, index: int) -> None:
            held = given.get(number)
            if held is not None:
                held.pop(index, None)

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
                    slots = [playing[number * conc + k] for k in range(conc)]
                    index = slots[0]
                    for lost in list((given.get(number) or {}).values()):
                        if lost.index not in pending:
                            continue
                        if lost.index in slots:
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

