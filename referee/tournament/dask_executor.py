"""Running a tournament's games on a Dask cluster (``--executor dask``): the same
``Executor`` interface as the process pool, so scheduling, the store, standings and
resuming do not change.

Owns the coordinator's side (``DaskExecutor``: connecting to a scheduler or starting
a ``distributed.LocalCluster``, packing the bots' folders, handing out duplicate
sets, committing what comes back) and the worker's (``play_set``: unpacking the
bots into a cache, playing a set's games with the process pool's ``play_game``).
Knows nothing of how games were chosen or how results are kept.

The rules it keeps (fishtest's, and ../shared/STYLE.md's "work over many
machines"): the coordinator's store is the truth, workers are disposable, any unit
may run twice and is stored once.

* **The unit of work is one duplicate set**: every seating of one deal by one
  lineup, played by one worker, returned whole (outcomes and records) and committed by the
  coordinator only, whole, in one transaction (``Batch``; the sets that came back
  together share it): a worker writes nothing the coordinator keeps.  A set that
  comes back twice is committed once (by game index, which the store also keys
  on).  A set lost with its worker is submitted again by the coordinator, whatever
  Dask's own retry limit says (``KilledWorker``), up to ``resubmit`` times; then
  its games are reported as not played (``NotPlayed``), and played again on
  resume.
* **Bots are shipped by content hash.**  Each external bot's folder (what the
  sandbox shows it: ``referee.players.sandbox.bot_folder``) and each ``python = "file.py:..."``
  bot's folder is packed once (a deterministic tar, its SHA-256 its name), held on
  the cluster as a task's result keyed by that hash, fetched by the workers that
  play the bot and unpacked into a worker-local cache
  (``$UPDOWN_WORKER_DIR/bots/HASH``, default ``~/.cache/updown-referee``).  The
  bot's command and working directory are rewritten to point there.  With
  ``ship = False`` nothing is shipped: the workers must see the bots at the same
  paths (a shared file system).
* **The sandbox goes along.**  A worker runs external bots in the coordinator's
  sandbox settings (``Job.sandbox.config``), resolved on the worker's own machine:
  a sandbox active on the coordinator is required on every worker (a worker
  without bubblewrap reports the set's games as not played, naming why).
* **One game per CPU, pinned.**  A worker process plays one game at a time (run
  ``dask worker --nthreads 1``); the thread that plays is pinned to a CPU of its
  own on its machine (a lock file per CPU under the worker folder), so bots
  started from it inherit that CPU, as in the process pool.
* **Who played it.**  Each outcome's ``worker`` is ``HOST:PID`` of the Dask
  worker process (``referee tournament standings --faults`` groups faults by it).
* **The scheduler going away** cancels every future: the run stops with one
  ``ExecutionError`` line; everything committed stays, and the run resumes later,
  locally or on a cluster.

Remote bots (``remote = true``) connect to the coordinator and are refused here.

Must not import: the CLI, the store, standings (the executor layer).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import fcntl
import hashlib
import io
import logging
import os
import shutil
import socket
import tarfile
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import dask
from distributed import Client, KilledWorker, LocalCluster, as_completed
from distributed.client import FutureCancelledError

from ..errors import ExecutionError
from ..play.runner import Fault
from ..players.botspec import BotSpec
from ..players.sandbox import SandboxError, absolute_args, bot_folder, resolve
from .config import TournamentConfig
from .executor import (
    Batch,
    FaultNotice,
    Job,
    Notice,
    NotPlayed,
    PlayerCache,
    Report,
    play_game,
    replace_synced,
)
from .outcome import GameOutcome
from .schedule import GameSpec

#: The port a Dask scheduler listens on unless told otherwise.
DEFAULT_PORT = 8786
#: A bot folder larger than this is refused (put the bot in a folder of its own).
MAX_BUNDLE_BYTES = 256 << 20
#: Folders never shipped with a bot.
SKIP_DIRS = frozenset({".git", "__pycache__", ".venv", "node_modules", ".mypy_cache",
                       ".pytest_cache", ".ruff_cache"})
#: The scheduler settings a LocalCluster gets (and a ``dask scheduler`` should, README):
#: no queuing of tasks on the scheduler (worker-saturation inf).  The coordinator
#: keeps only two sets per worker thread in flight, so each worker holds its next
#: set while it plays one, instead of waiting a round trip to the scheduler for it.
SCHEDULER_CONFIG = {"distributed.scheduler.worker-saturation": float("inf")}
#: How long the coordinator waits for a scheduler to answer.
CONNECT_TIMEOUT = 20.0


# --- bots shipped by content hash -------------------------------------------------------


@dataclass(frozen=True)
class Bundle:
    """A bot's folder, packed: ``digest`` (SHA-256 of ``data``, a tar) names it."""

    bot: str
    folder: str  # where it is on the coordinator
    digest: str
    data: bytes = field(repr=False)


def folder_of(spec: BotSpec, config: TournamentConfig) -> str | None:
    """The folder a bot needs on a worker: an external bot's folder (what the sandbox
    shows it), a ``python = "file.py:Class"`` bot's file's folder; None for the
    others (built-in bots, ``module:attr``, remote bots)."""
    if spec.command:
        cwd = config.resolve(spec.cwd or ".")
        assert cwd is not None
        if config.sandbox.entry_fence:
            return cwd  # a league's entry: its folder is its working directory
        return bot_folder(absolute_args(spec.command, cwd), cwd)
    if spec.python:
        where = spec.python.rpartition(":")[0]
        if where.endswith(".py"):
            return str((Path(config.base_dir) / where).resolve().parent)
    return None


def pack(bot: str, folder: str, exclude: Sequence[str] = ()) -> Bundle:
    """``folder`` as a deterministic tar (sorted names, no owners or times: the same
    files give the same digest on every machine), leaving out ``exclude`` (the
    output folder, keys) and ``SKIP_DIRS``."""
    root = os.path.abspath(folder)
    skip = {os.path.abspath(p) for p in exclude}
    buf = io.BytesIO()
    total = 0
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for here, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS
                             and os.path.join(here, d) not in skip)
            for name in sorted(files):
                path = os.path.join(here, name)
                if path in skip or not (os.path.isfile(path) or os.path.islink(path)):
                    continue
                info = tar.gettarinfo(path, arcname=os.path.relpath(path, root))
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                info.mtime = 0
                if info.isfile():
                    total += info.size
                    if total > MAX_BUNDLE_BYTES:
                        raise ExecutionError(
                            f"bot {bot}: its folder {root} holds more than "
                            f"{MAX_BUNDLE_BYTES >> 20} MB to ship to the Dask workers; give "
                            f"the bot a folder of its own (cwd), or put the bots on a shared "
                            f"file system and turn shipping off (ship_bots = false)")
                    with open(path, "rb") as f:
                        tar.addfile(info, f)
                elif info.issym():
                    tar.addfile(info)
    data = buf.getvalue()
    return Bundle(bot, root, hashlib.sha256(data).hexdigest(), data)


def unpack(digest: str, data: bytes, cache: Path) -> Path:
    """The bot folder ``digest`` in ``cache``, unpacked there once (into a temporary
    folder renamed into place: two workers on one machine may race for it, and a
    worker killed while unpacking leaves no half folder behind)."""
    target = cache / digest
    if target.is_dir():
        return target
    if hashlib.sha256(data).hexdigest() != digest:
        raise ExecutionError(f"a bot bundle does not match its hash {digest[:12]}")
    cache.mkdir(parents=True, exist_ok=True)
    tmp = cache / f".{digest}.{os.getpid()}.{threading.get_ident()}"
    with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
        tar.extractall(tmp, filter="data")
    try:
        os.rename(tmp, target)
    except OSError:  # another worker put it there first: the same files
        shutil.rmtree(tmp, ignore_errors=True)
    return target


def _moved(path: str, old: str, new: str) -> str:
    if path == old:
        return new
    if path.startswith(old.rstrip("/") + "/"):
        return new + path[len(old.rstrip("/")):]
    return path


def localize(config: TournamentConfig, placed: dict[str, tuple[str, str]]) -> TournamentConfig:
    """``config`` with each bot of ``placed`` (name -> (its folder on the coordinator,
    its folder here)) pointing at its folder here: the command's paths, the working
    directory, a Python bot's file."""
    bots = []
    for spec in config.bots:
        if spec.name not in placed:
            bots.append(spec)
            continue
        old, new = placed[spec.name]
        if spec.command:
            cwd = config.resolve(spec.cwd or ".")
            assert cwd is not None
            argv = [_moved(a, old, new) for a in absolute_args(spec.command, cwd)]
            moved = _moved(cwd, old, new)
            bots.append(replace(spec, command=tuple(argv),
                                cwd=moved if moved != cwd else new))
        else:
            assert spec.python is not None
            where, _, attr = spec.python.rpartition(":")
            path = str((Path(config.base_dir) / where).resolve())
            bots.append(replace(spec, python=f"{_moved(path, old, new)}:{attr}"))
    return replace(config, bots=tuple(bots))


# --- the worker's side ----------------------------------------------------------------------


@dataclass(frozen=True)
class SetResult:
    """What a worker sends back for one duplicate set: the outcomes, each game's
    record (JSON lines, zlib-compressed), the games it could not play, the faults
    as they happened, and notices (the worker's sandbox warnings, once)."""

    deal: int
    worker: str
    outcomes: tuple[GameOutcome, ...]
    records: tuple[bytes, ...]
    errors: tuple[NotPlayed, ...] = ()
    faults: tuple[FaultNotice, ...] = ()
    notices: tuple[str, ...] = ()


@dataclass
class _WorkerState:
    key: str
    job: Job  # localized: its bots' folders here, its output folder the worker's own
    seats: PlayerCache
    warned: bool = False


_STATE: _WorkerState | None = None
_STATE_LOCK = threading.Lock()  # one game at a time per worker process
_CPU: int | None = None
_CPU_LOCK: Any = None  # the open lock file that holds this process's CPU


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def worker_dir() -> Path:
    """Where a worker keeps bots and bot logs: ``$UPDOWN_WORKER_DIR``, else
    ``~/.cache/updown-referee``."""
    env = os.environ.get("UPDOWN_WORKER_DIR")
    return Path(env) if env else Path.home() / ".cache" / "updown-referee"


def _pin(root: Path) -> None:
    """Pin the calling thread (and so the bots it starts) to a CPU no other worker
    process of this machine holds: a lock file per CPU, held for the process's life
    (the kernel drops it when the process dies).  With more workers than CPUs, the
    CPU is shared round robin."""
    global _CPU, _CPU_LOCK
    if _CPU is None:
        cpus = sorted(os.sched_getaffinity(0))
        (root / "cpus").mkdir(parents=True, exist_ok=True)
        for cpu in cpus:
            f = open(root / "cpus" / f"{cpu}.lock", "w")  # noqa: SIM115 (held open)
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                f.close()
                continue
            _CPU, _CPU_LOCK = cpu, f
            break
        else:
            _CPU = cpus[os.getpid() % len(cpus)]
    with contextlib.suppress(OSError):
        os.sched_setaffinity(0, {_CPU})


def _state(job: Job, bundles: dict[str, tuple[str, str, bytes]], key: str,
           root: Path) -> _WorkerState:
    """This process's bots for ``job`` (kept across sets, as a process-pool worker
    keeps them across games); a new job closes the old one's bots."""
    global _STATE
    if _STATE is not None and _STATE.key == key:
        return _STATE
    if _STATE is not None:
        _STATE.seats.close()
        _STATE = None
    placed = {name: (folder, str(unpack(digest, data, root / "bots")))
              for name, (digest, folder, data) in bundles.items()}
    config = localize(job.config, placed) if placed else job.config
    out = root / "runs" / key
    (out / job.records).mkdir(parents=True, exist_ok=True)
    sandbox = job.sandbox
    # The coordinator's limits, this machine's bubblewrap and cgroups: required here
    # if it was active there.
    cfg = replace(sandbox.config, mode="on" if sandbox.active else "off")
    sandbox = resolve(cfg).hide(str(out))
    local = replace(job, config=config, output_dir=str(out), sandbox=sandbox)
    _STATE = _WorkerState(key, local, PlayerCache(local, os.getpid()))
    return _STATE


def play_set(job: Job, specs: Sequence[GameSpec], key: str,
             bundles: dict[str, tuple[str, str, bytes]], root: str | None = None) -> SetResult:
    """Play one duplicate set on this worker (a Dask task).  ``bundles``: bot name ->
    (digest, folder on the coordinator, packed folder); ``key``: the job's identity
    (bots are kept across sets of one job); ``root``: the worker folder (default
    ``worker_dir()``).  Writes nothing the coordinator keeps: the records come back
    in the result."""
    here = Path(root) if root else worker_dir()
    who = worker_name()
    with _STATE_LOCK:
        _pin(here)
        try:
            state = _state(job, bundles, key, here)
        except (SandboxError, ExecutionError, OSError) as e:
            msg = f"worker {who} cannot play: {e}"
            return SetResult(specs[0].deal, who, (), (),
                             tuple(NotPlayed(s.index, s.game_id, msg) for s in specs))
        faults: list[FaultNotice] = []
        outcomes: list[GameOutcome] = []
        records: list[bytes] = []
        errors: list[NotPlayed] = []
        for spec in specs:
            def on_fault(f: Fault, game_id: str = spec.game_id) -> None:
                faults.append(FaultNotice(game_id, str(f)))

            kept: list[bytes] = []

            def save(path: str, lines: Sequence[str], kept: list[bytes] = kept) -> None:
                # Sent back, not written: only the coordinator keeps records (and
                # syncing a file here that nobody keeps costs a game's time).
                kept.append(zlib.compress(("\n".join(lines) + "\n").encode(), 1))

            try:
                o = play_game(state.job, spec, state.seats, 0, on_fault, save)
                records.append(kept[0])
                outcomes.append(replace(o, worker=who))
            except Exception as e:
                errors.append(NotPlayed(spec.index, spec.game_id,
                                          f"{type(e).__name__}: {e} (on worker {who})"))
        notices: tuple[str, ...] = ()
        if not state.warned:
            state.warned = True
            notices = tuple(f"worker {who}: {w}" for w in state.job.sandbox.warnings)
        return SetResult(specs[0].deal, who, tuple(outcomes), tuple(records), tuple(errors),
                         tuple(faults), notices)


def close_bots() -> str:
    """End this worker's bots (``Client.run`` at the end of a run)."""
    global _STATE
    with _STATE_LOCK:
        if _STATE is not None:
            _STATE.seats.close()
            _STATE = None
    return worker_name()


def _hold(value: Any) -> Any:
    """A task that returns its argument: data the cluster keeps (a bot bundle, the
    job) and can make again if the worker holding it dies, which scattered data
    cannot."""
    return value


# --- the coordinator's side -----------------------------------------------------------------


def deal_sets(games: Sequence[GameSpec]) -> list[list[GameSpec]]:
    """The duplicate sets: the games of one deal played by one lineup (every seating
    of it), each in schedule order, the sets in the order of their first game.  (A
    deal played by several lineups makes several sets: each is the paired evidence
    of its own lineup, and no bot process sees its deal twice either way.)"""
    by_set: dict[tuple[int, tuple[str, ...]], list[GameSpec]] = {}
    for g in games:
        by_set.setdefault((g.deal, tuple(sorted(g.seats))), []).append(g)
    return list(by_set.values())


def write_records(folder: str, named: Sequence[tuple[str, bytes]]) -> None:
    """Write records durably: each (its path relative to ``folder``) to a temporary
    file, synced and renamed, then each folder they are in synced once (the renames
    must reach the disk before the games are committed)."""
    dirs: set[str] = set()
    for rel, data in named:
        path = os.path.join(folder, rel)
        dirs.add(os.path.dirname(path))
        replace_synced(path, data)
    for d in sorted(dirs):
        fd = os.open(d, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@dataclass
class _Set:
    specs: list[GameSpec]
    losses: int = 0  # times it was lost with a worker


class DaskExecutor:
    """Plays the games on a Dask cluster: the scheduler at ``scheduler``
    (``tcp://HOST:8786``), or, without one, a ``LocalCluster`` of ``workers``
    process workers (default one per CPU) with one thread each, started for the run.

    ``resubmit``: how many times a set lost with its worker (Dask's ``KilledWorker``)
    is submitted again before its games are reported as not played.  ``ship``:
    False when the workers see the bots at the coordinator's paths (a shared file
    system)."""

    def __init__(self, scheduler: str | None = None, workers: int | None = None, *,
                 resubmit: int = 3, ship: bool = True) -> None:
        self.scheduler = address(scheduler) if scheduler else None
        self.workers = workers
        self.resubmit = resubmit
        self.ship = ship
        self.connect_timeout = CONNECT_TIMEOUT
        # Inside ``with executor:``, one client (one LocalCluster) for every run: a
        # match plays batch after batch.
        self._shared: tuple[Client, str | None] | None = None
        self._stack: contextlib.ExitStack | None = None

    @property
    def jobs(self) -> int:
        """Games played at once (a match sizes its batches by it): the workers asked
        for, else one per CPU of this machine."""
        return self.workers or len(os.sched_getaffinity(0))

    def __enter__(self) -> DaskExecutor:
        self._stack = contextlib.ExitStack()
        self._shared = self._stack.enter_context(self._new_client())
        return self

    def __exit__(self, *exc: object) -> None:
        stack, self._stack, self._shared = self._stack, None, None
        if stack is not None:
            stack.close()

    def _lost(self, e: BaseException) -> str:
        return (f"lost {self.where} ({_reason(e)}): the run stops; run the same command "
                f"again to resume, on a cluster or on this machine (--executor process)")

    @property
    def where(self) -> str:
        return f"the Dask scheduler {self.scheduler}" if self.scheduler else "a local Dask cluster"

    def pack(self, job: Job) -> dict[str, Bundle]:
        """The bundle of each bot that needs its folder on the workers."""
        if not self.ship:
            return {}
        out: dict[str, Bundle] = {}
        by_folder: dict[str, Bundle] = {}
        for spec in job.config.bots:
            folder = folder_of(spec, job.config)
            if folder is None:
                continue
            if folder not in by_folder:
                by_folder[folder] = pack(spec.name, folder, (job.output_dir, *job.sandbox.hidden))
            out[spec.name] = by_folder[folder]
        return out

    @contextlib.contextmanager
    def _client(self) -> Iterator[tuple[Client, str | None]]:
        """The client of ``with executor:``, else a new one for this run."""
        if self._shared is not None:
            yield self._shared
            return
        with self._new_client() as shared:
            yield shared

    @contextlib.contextmanager
    def _new_client(self) -> Iterator[tuple[Client, str | None]]:
        """A client of the scheduler, or of a LocalCluster started for the run; and
        the worker folder to use (None: each worker's own)."""
        quiet = _Quiet()
        with quiet:
            if self.scheduler:
                try:
                    client = Client(self.scheduler, timeout=self.connect_timeout,
                                    set_as_default=False)
                except (OSError, TimeoutError) as e:
                    raise ExecutionError(
                        f"cannot reach the Dask scheduler at {self.scheduler} ({e}); start "
                        f"one there with 'dask scheduler', or leave out --scheduler to run "
                        f"on this machine") from None
                try:
                    yield client, None
                finally:
                    with contextlib.suppress(Exception):
                        client.close(timeout=5)
                return
            n = self.workers or len(os.sched_getaffinity(0))
            with dask.config.set(SCHEDULER_CONFIG):
                cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", worker_dashboard_address=None,
                                       silence_logs=logging.CRITICAL)
            try:
                client = Client(cluster, set_as_default=False)
                try:
                    yield client, None
                finally:
                    with contextlib.suppress(Exception):
                        client.close(timeout=5)
            finally:
                with contextlib.suppress(Exception):
                    cluster.close(timeout=10)

    def run(self, job: Job, games: Sequence[GameSpec], report: Callable[[Report], None]) -> None:
        if not games:
            return
        if job.config.remote_bots:
            raise ExecutionError(
                "remote bots (" + ", ".join(b.name for b in job.config.remote_bots) + ") "
                "connect to this machine: play this tournament with --executor process")
        records = os.path.join(job.output_dir, job.records)
        os.makedirs(records, exist_ok=True)
        bundles = self.pack(job)
        key = hashlib.sha256("\n".join(
            [job.config.fingerprint(), str(job.config.seed), str(job.isolate_deals),
             job.output_dir,
             *sorted(f"{n}={b.digest}" for n, b in bundles.items())]).encode()).hexdigest()[:16]
        todo = [_Set(s) for s in deal_sets(games)]
        todo.reverse()  # popped from the end: schedule order
        pending = {g.index for g in games}
        with self._client() as (client, root):
            job_f = client.submit(_hold, job, key=f"updown-job-{key}")
            held = {b.digest: client.submit(_hold, b.data, key=f"updown-bot-{b.digest}")
                    for b in bundles.values()}
            if self.scheduler and not client.scheduler_info().get("workers"):
                report(Notice(f"waiting for Dask workers to join {self.scheduler} "
                              f"(dask worker {self.scheduler} --nthreads 1)"))
            flying: dict[Any, _Set] = {}
            done = as_completed(loop=client.loop)
            committer = Committer(job.output_dir, pending, report)
            capacity = _Capacity(client)

            def submit(s: _Set) -> None:
                lineup = set(s.specs[0].seats)
                mine = {n: (b.digest, b.folder, held[b.digest]) for n, b in bundles.items()
                        if n in lineup}
                f = client.submit(play_set, job_f, s.specs, key, mine, root, pure=False,
                                  priority=-s.specs[0].index)
                flying[f] = s
                done.add(f)

            def fill() -> None:
                while todo and not committer.stopped and len(flying) < capacity():
                    submit(todo.pop())

            def take(f: Any, s: _Set, result: SetResult | None) -> None:
                """A set's future is done: commit what came back (``result``, if it
                was gathered with others), or submit the set again."""
                try:
                    if result is None:
                        result = f.result()
                except FutureCancelledError as e:  # the scheduler went away
                    raise ExecutionError(self._lost(e)) from None
                except (KilledWorker, OSError, TimeoutError, asyncio.CancelledError) as e:
                    if not isinstance(e, KilledWorker) and client.status != "running":
                        raise ExecutionError(self._lost(e)) from None
                    # Lost with its worker (or with the worker sending it back):
                    # played again, the coordinator decides, not Dask's retry limit.
                    s.losses += 1
                    if s.losses <= self.resubmit:
                        submit(s)
                    else:
                        for g in s.specs:
                            if g.index in pending:
                                pending.discard(g.index)
                                report(NotPlayed(
                                    g.index, g.game_id,
                                    f"lost with {s.losses} Dask workers that died "
                                    f"playing its deal (a bot may take its machine "
                                    f"down)"))
                    return
                except Exception as e:
                    for g in s.specs:
                        if g.index in pending:
                            pending.discard(g.index)
                            report(NotPlayed(g.index, g.game_id, f"{type(e).__name__}: {e}"))
                    return
                finally:
                    f.release()
                committer.arrive(result)

            try:
                fill()
                while flying:
                    batch = done.next_batch(block=True)
                    # The sets that came back together are fetched in one round trip
                    # (any that fails, alone, in ``take``).
                    ready = [f for f in batch if f.status == "finished"]
                    got: dict[Any, SetResult] = {}
                    if len(ready) > 1:
                        with contextlib.suppress(Exception):
                            got = dict(zip(ready, client.gather(ready), strict=True))
                    for f in batch:
                        take(f, flying.pop(f), got.get(f))
                    committer.drain(block=False)
                    fill()
                committer.drain(block=True)
                with contextlib.suppress(Exception):
                    client.run(close_bots)
            finally:
                for f in flying:
                    f.cancel()
                # What arrived is committed, even when the run stops (the scheduler
                # went away, Ctrl-C): it is finished work.
                committer.close()


@dataclass
class _Arrived:
    result: SetResult
    new: list[tuple[GameOutcome, bytes]]  # its games not committed yet, and their records
    errors: list[NotPlayed]
    written: concurrent.futures.Future[None] | None = None


class Committer:
    """The coordinator's commits of the sets that come back, in the order they
    arrive: each set's new records are written and synced by a small thread pool
    (so that one set's syncs overlap the next set's), then its outcomes go through
    ``report`` in this thread as one ``Batch``: a set is committed whole, in one
    transaction, and the sets whose records are on disk together share it (group
    commit: when the commits fall behind, more sets wait, and each commit takes
    more of them).  A game already taken from an earlier arrival (a set that came
    back twice) is skipped: stored once, by game index.  ``pending``: the games not
    reported yet (shared with the executor, which reports lost ones itself).  A
    record that cannot be written (a full disk) is a storage ``NotPlayed`` for its
    games, and ``stopped``: nothing more is taken."""

    THREADS = 4

    def __init__(self, output_dir: str, pending: set[int], report: Callable[[Report], None],
                 threads: int = THREADS) -> None:
        self.output_dir = output_dir
        self.pending = pending
        self.report = report
        self.taken: set[int] = set()
        self.stopped = False  # a record could not be written
        self.queue: deque[_Arrived] = deque()
        self.pool = concurrent.futures.ThreadPoolExecutor(threads, "updown-records")
        self.commits = 0  # transactions asked of ``report`` (bench/tournament.py)

    def arrive(self, result: SetResult) -> None:
        if self.stopped:  # nothing more can be stored: played again on resume
            return

        def fresh(index: int) -> bool:
            return index in self.pending and index not in self.taken

        new = [(o, zlib.decompress(r)) for o, r in zip(result.outcomes, result.records,
                                                      strict=True) if fresh(o.index)]
        errors = [e for e in result.errors if fresh(e.index)]
        self.taken.update([o.index for o, _ in new] + [e.index for e in errors])
        a = _Arrived(result, new, errors)
        if new:
            # o.record: relative to the output folder, as the worker would write it
            a.written = self.pool.submit(write_records, self.output_dir,
                                         [(o.record, data) for o, data in new])
        self.queue.append(a)

    def drain(self, block: bool) -> None:
        """Commit the sets whose records are on disk, in arrival order, those ready
        now in one transaction (all of them, waiting for their records, if
        ``block``)."""
        ready: list[_Arrived] = []
        while self.queue and (block or self.queue[0].written is None
                              or self.queue[0].written.done()):
            a = self.queue.popleft()
            if a.written is not None:
                try:
                    a.written.result()
                except OSError as e:
                    # The disk is full (or the folder unwritable): these games are not
                    # recorded, and no more sets are handed out (the run then stops
                    # with one line; what was committed stays).
                    self._commit(ready)
                    ready = []
                    self.stopped = True
                    msg = (f"cannot write the game records in {self.output_dir}: "
                           f"{e.strerror or e}")
                    for o, _ in a.new:
                        self.pending.discard(o.index)
                        self.report(NotPlayed(o.index, o.game_id, msg, storage=True))
                    continue
            ready.append(a)
        self._commit(ready)

    def _commit(self, arrived: list[_Arrived]) -> None:
        """The notices and faults of ``arrived``, then their games as one batch,
        then the games they could not play."""
        for a in arrived:
            for text in a.result.notices:
                self.report(Notice(text))
            ids = {o.game_id for o, _ in a.new} | {e.game_id for e in a.errors}
            for fn in a.result.faults:
                if fn.game_id in ids:
                    self.report(fn)
        games = tuple(o for a in arrived for o, _ in a.new)
        if games:
            for o in games:
                self.pending.discard(o.index)
            self.commits += 1
            self.report(Batch(games))
        for a in arrived:
            for e in a.errors:
                if e.index in self.pending:
                    self.pending.discard(e.index)
                    self.report(e)

    def close(self) -> None:
        """Commit what arrived (if its records can be written), and stop the pool."""
        try:
            self.drain(block=True)
        finally:
            self.pool.shutdown(wait=True)


class _Capacity:
    """How many sets to keep in flight: two per worker thread (one playing, one
    waiting), asked of the scheduler at most every 2 s (workers come and go)."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.at = -1e9
        self.value = 2

    def __call__(self) -> int:
        now = time.monotonic()
        if now - self.at >= 2.0:
            self.at = now
            with contextlib.suppress(Exception):
                self.value = max(2, 2 * sum(self.client.nthreads().values()))
        return self.value


def _reason(e: BaseException) -> str:
    text = str(e)
    if "scheduler-connection-lost" in text:
        return "the connection to the scheduler was lost"
    return text.splitlines()[0] if text else type(e).__name__


class _Quiet:
    """Dask's own log lines (reconnection tracebacks, worker restarts) off the
    organiser's terminal while the executor runs: what matters is reported as
    notices and errors."""

    NAMES = ("distributed", "tornado")

    def __enter__(self) -> None:
        # distributed sets a level on its modules' own loggers: each is quietened.
        names = [n for n in logging.root.manager.loggerDict
                 if n.split(".")[0] in self.NAMES] + list(self.NAMES)
        self.levels = {n: logging.getLogger(n).level for n in names}
        for n in names:
            logging.getLogger(n).setLevel(logging.CRITICAL)

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is not None:
            # The run stops (the scheduler went away): distributed's reconnection
            # may still log on its way out; nothing of it concerns the organiser.
            return
        for n, level in self.levels.items():
            logging.getLogger(n).setLevel(level)


def address(scheduler: str) -> str:
    """``HOST``, ``HOST:PORT`` or ``tcp://HOST:PORT`` as a scheduler address."""
    if "://" in scheduler:
        return scheduler
    if ":" not in scheduler:
        scheduler = f"{scheduler}:{DEFAULT_PORT}"
    return f"tcp://{scheduler}"
