#!/usr/bin/env python3
"""Tournament throughput and the referee's memory.

1. The same round-robin of in-process bots with ``--jobs 1`` and ``--jobs 2``:
   games/s (wall clock of ``referee tournament run``, worker start-up included) and
   the speed-up (target >= 1.8x on 2 CPUs).
2. Duplicate isolation: a 4-seat rotated tournament of external (stdio, sandboxed
   where bubblewrap works) bots, played as it is (no process plays two seatings of a
   deal: up to 4 instances of each bot per worker) and with one process per bot and
   worker (``Job.isolate_deals = False``, the old way): games/s of each, the cost
   (target <= 10 %), and how many bot processes were started.
3. A 10,000-game run: the referee process's resident memory sampled as the games
   are committed, and its peak (VmHWM); it should stay flat, since nothing is kept
   per game but the row in SQLite.

With ``--executor dask``, instead: the Dask executor beside the process pool.

4. The same round-robin through ``run_tournament`` (store commits included) on the
   process pool and on a Dask cluster (started beforehand, as a cluster is: by
   default ``dask scheduler`` and ``dask worker`` processes, ``--cluster local`` a
   ``LocalCluster`` in this process), at 1 and 2 workers, alternated, each run
   listed and the best taken, over ``--repeat`` rounds: games/s, wall time per game
   (target: Dask within 10 % of the pool at 2 workers), Dask's 2-worker speed-up
   (target >= 1.8x, or 95 % of the machine's ceiling, printed), and the CPU time
   per game of each process: coordinator, scheduler, workers (where the overhead
   goes on a machine whose CPUs the scheduler and the coordinator share with the
   workers);
5. the bytes that reach the coordinator per game (a ``SetResult``, pickled, as Dask
   sends it) and per set submitted;
6. the coordinator's commit rate under a flood of finished sets (``SetResult``s made
   from real records, unpickled and committed -- records written and synced -- as
   fast as it can), with one SQLite commit per game (as before group commit) and
   with the sets ready together in one commit (as the executor does), and the
   scheduler's rate for no-op tasks on this machine;
7. from these, on paper: what 100 machines would ask of the coordinator, and which
   limit comes first.

Games are the default rules with built-in bots (no play-out), so that the
referee's own costs -- records, commits, dispatch -- are a visible part of each game.  Run on an otherwise idle machine for meaningful numbers.

    .venv/bin/python bench/tournament.py [--games 4000] [--memory-games 10000]
    .venv/bin/python bench/tournament.py --executor dask [--games 4000] [--flood-sets 2000]
"""

from __future__ import annotations

import argparse
import os
import resource
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CONFIG = """
[tournament]
name = "bench"
seats = 2
deals = {deals}
seed = 1
output = "out"
[rules]
variants = []
colours = 7
[[bots]]
name = "heuristic"
builtin = "heuristic"
[[bots]]
name = "lowest"
builtin = "lowest"
[[bots]]
name = "random"
builtin = "random"
"""
GAMES_PER_DEAL = 3 * 2  # 3 pairs, both seatings


def referee(*args: str) -> list[str]:
    return [sys.executable, "-m", "referee.cli.main", "tournament", *args]


def status(pid: int) -> dict[str, int]:
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                out[key] = int(value.split()[0])  # kB
    return out


def count(db: Path) -> int:
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            return int(conn.execute("SELECT COUNT(*) FROM games").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def timed_run(root: Path, deals: int, jobs: int) -> tuple[int, float, float, float]:
    """Games, wall seconds, CPU seconds (referee and workers), and the share of the
    run's wall time its workers spent inside games (1.0 = never idle)."""
    folder = root / f"jobs{jobs}"
    folder.mkdir()
    cfg = folder / "t.toml"
    cfg.write_text(CONFIG.format(deals=deals))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(referee("run", str(cfg), "-q", "--jobs", str(jobs)), check=True,
                   stdout=subprocess.DEVNULL, cwd=REPO)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    conn = sqlite3.connect(folder / "out" / "tournament.sqlite")
    busy = conn.execute("SELECT SUM(wall_time) FROM games").fetchone()[0]
    conn.close()
    return deals * GAMES_PER_DEAL, wall, cpu, busy / (jobs * wall)


ISOLATION = """
[tournament]
name = "isolation"
seats = 4
deals = {deals}
seed = 1
output = "out"
[[bots]]
name = "a"
command = ["{python}", "random_bot.py", "--seed", "1"]
cwd = "{bots}"
[[bots]]
name = "b"
command = ["{python}", "random_bot.py", "--seed", "2"]
cwd = "{bots}"
[[bots]]
name = "c"
command = ["{python}", "random_bot.py", "--seed", "3"]
cwd = "{bots}"
[[bots]]
name = "d"
command = ["{python}", "random_bot.py", "--seed", "4"]
cwd = "{bots}"
[[bots]]
name = "e"
builtin = "heuristic"
"""


def isolation_run(root: Path, deals: int, jobs: int, isolate: bool) -> tuple[int, float]:
    """Games and wall seconds of the external-bot tournament, isolated or not."""
    sys.path.insert(0, str(REPO))
    from referee.tournament.config import load_config
    from referee.tournament.executor import Job, ProcessExecutor
    from referee.tournament.run import sandbox_of
    from referee.tournament.schedule import schedule

    folder = root / f"isolation-{isolate}"
    folder.mkdir()
    (folder / "t.toml").write_text(ISOLATION.format(
        deals=deals, python=sys.executable, bots=REPO / "example_bots" / "python"))
    cfg = load_config(folder / "t.toml")
    games = schedule(cfg)
    out = folder / "out"
    (out / "games").mkdir(parents=True)
    job = Job(cfg, str(out), sandbox=sandbox_of(cfg), isolate_deals=isolate)
    done = []
    t0 = time.perf_counter()
    ProcessExecutor(jobs).run(job, games, done.append)
    return sum(1 for r in done if hasattr(r, "places")), time.perf_counter() - t0


def memory_run(root: Path, games: int, jobs: int) -> None:
    folder = root / "memory"
    folder.mkdir()
    cfg = folder / "t.toml"
    deals = games // GAMES_PER_DEAL
    cfg.write_text(CONFIG.format(deals=deals))
    db = folder / "out" / "tournament.sqlite"
    proc = subprocess.Popen(referee("run", str(cfg), "-q", "--jobs", str(jobs)),
                            stdout=subprocess.DEVNULL, cwd=REPO)
    total = deals * GAMES_PER_DEAL
    marks = [total * i // 10 for i in range(1, 11)]
    print(f"\nreferee process memory over a {total}-game run (--jobs {jobs}):")
    print(f"{'games done':>12} {'RSS MB':>8} {'peak MB':>8}")
    t0 = time.perf_counter()
    last: dict[str, int] = {}
    while proc.poll() is None:
        try:
            last = status(proc.pid)
        except (FileNotFoundError, ProcessLookupError):
            break
        done = count(db)
        while marks and done >= marks[0]:
            print(f"{done:>12} {last['VmRSS'] / 1024:>8.1f} {last['VmHWM'] / 1024:>8.1f}")
            marks.pop(0)
        time.sleep(0.05)
    secs = time.perf_counter() - t0
    if proc.returncode:
        raise SystemExit(f"the run failed (exit {proc.returncode})")
    print(f"finished: {count(db)} games in {secs:.1f} s ({count(db) / secs:.0f} games/s); "
          f"last sampled peak {last.get('VmHWM', 0) / 1024:.1f} MB")


SPIN = """
import os, sys, time
os.sched_setaffinity(0, {int(sys.argv[1])})
t = time.perf_counter()
x = 0
for i in range(8_000_000):
    x += i
print(time.perf_counter() - t)
"""


def machine_ceiling() -> float:
    """The speed-up this machine gives two independent CPU-bound processes right
    now (pure Python loops, one per CPU, against one alone).  On a virtual machine
    whose CPUs share a host, this can be well below 2: the tournament cannot scale
    better than the machine."""
    cpus = sorted(os.sched_getaffinity(0))[:2]

    def spin(cpu: int) -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, "-c", SPIN, str(cpu)],
                                stdout=subprocess.PIPE, text=True)

    best_one, best_two = float("inf"), float("inf")
    for _ in range(3):
        one = spin(cpus[0])
        best_one = min(best_one, float(one.communicate()[0]))
        pair = [spin(c) for c in cpus]
        best_two = min(best_two, max(float(p.communicate()[0]) for p in pair))
    return 2 * best_one / best_two


def executor_run(root: Path, tag: str, deals: int, executor: object,
                 config: str = CONFIG, per_deal: int = GAMES_PER_DEAL) -> tuple[int, float]:
    """Games played and wall seconds of the bench round-robin (``config``, of
    ``per_deal`` games per deal) through ``run_tournament`` (commits and records
    included) on ``executor``."""
    sys.path.insert(0, str(REPO))
    from referee.tournament.config import load_config
    from referee.tournament.run import run_tournament

    folder = root / tag
    folder.mkdir()
    (folder / "t.toml").write_text(config.format(
        deals=deals, python=sys.executable, bots=REPO / "example_bots" / "python"))
    cfg = load_config(folder / "t.toml")
    t0 = time.perf_counter()
    summary = run_tournament(cfg, executor=executor, quiet=True)  # type: ignore[arg-type]
    wall = time.perf_counter() - t0
    assert not summary.errors and summary.played == deals * per_deal
    return summary.played, wall


def _secs(u: resource.struct_rusage) -> float:
    return u.ru_utime + u.ru_stime


class Cluster:
    """A Dask cluster of ``n`` one-thread workers for the bench: ``local``, a
    ``LocalCluster`` in this process (what ``--executor dask`` without a scheduler
    starts: its scheduler shares this process, and its CPU, with the coordinator),
    or ``processes``, ``dask scheduler`` and ``dask worker`` as their own processes
    (as on a cluster, README), whose CPU is measured apart."""

    def __init__(self, kind: str, n: int, root: Path) -> None:
        import logging

        import dask
        import psutil
        from distributed import Client, LocalCluster

        from referee.tournament.dask_executor import SCHEDULER_CONFIG

        self.kind, self.procs = kind, []
        self.psutil = psutil
        t0 = time.perf_counter()
        if kind == "local":
            with dask.config.set(SCHEDULER_CONFIG):  # as the executor's own LocalCluster
                self.local = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                          dashboard_address=":0",
                                          worker_dashboard_address=None,
                                          silence_logs=logging.CRITICAL)
            self.address = self.local.scheduler_address
            self.what = "LocalCluster in the coordinator's process"
        else:
            env = dict(os.environ, DASK_DISTRIBUTED__SCHEDULER__WORKER_SATURATION="inf")
            dask_cmd = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
            info = root / f"scheduler-{n}.json"
            quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "env": env,
                     "cwd": REPO}  # the workers import this referee
            self.procs.append(subprocess.Popen(
                [*dask_cmd, "--port", "0", "--no-dashboard", "--scheduler-file", str(info)],
                **quiet))  # type: ignore[call-overload]
            while not info.exists() or not info.read_text().strip():
                time.sleep(0.05)
            import json
            time.sleep(0.2)
            self.address = json.loads(info.read_text())["address"]
            self.procs.append(subprocess.Popen(
                [sys.executable, "-m", "distributed.cli.dask_worker", self.address,
                 "--nworkers", str(n), "--nthreads", "1", "--no-dashboard"],
                **quiet))  # type: ignore[call-overload]
            c = Client(self.address, set_as_default=False)
            c.wait_for_workers(n)
            c.close()
            self.what = "dask scheduler and dask worker processes, as on a cluster"
        print(f"Dask cluster of {n} worker(s) up in {time.perf_counter() - t0:.1f} s "
              "(once per cluster, not per run)")

    def cpu(self) -> tuple[float, float]:
        """CPU seconds so far of the scheduler and of the workers (for ``local``, the
        workers: this process's children alive now)."""
        def tree_cpu(p: object) -> float:
            total = 0.0
            for q in [p, *p.children(recursive=True)]:  # type: ignore[attr-defined]
                try:
                    t = q.cpu_times()
                    total += t.user + t.system
                except self.psutil.NoSuchProcess:
                    pass
            return total

        if self.kind == "local":
            kids = self.psutil.Process().children(recursive=True)
            return 0.0, sum(tree_cpu(k) for k in kids
                            if "spawn_main" in " ".join(k.cmdline()))
        return (tree_cpu(self.psutil.Process(self.procs[0].pid)),
                tree_cpu(self.psutil.Process(self.procs[1].pid)))

    def close(self) -> None:
        if self.kind == "local":
            self.local.close()
        for p in reversed(self.procs):
            p.terminate()
            p.wait(timeout=30)


def noop(x: int) -> int:
    return x


def dask_bench(args: argparse.Namespace, root: Path) -> None:
    import logging
    import pickle
    import zlib

    sys.path.insert(0, str(REPO))
    from distributed import Client

    from referee.tournament.config import BotSpec, TournamentConfig
    from referee.tournament.dask_executor import Committer, DaskExecutor, SetResult
    from referee.tournament.executor import ProcessExecutor, finished
    from referee.tournament.kinds import TournamentSettings
    from referee.tournament.outcome import GameOutcome
    from referee.tournament.store import Store

    flood_settings = TournamentSettings.of(TournamentConfig(
        bots=(BotSpec("a", builtin="random"), BotSpec("b", builtin="random")), name="flood"))
    for name in list(logging.root.manager.loggerDict):
        if name.startswith("distributed"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
    if args.bots == "external":  # 4 external (sandboxed) bots and one built-in, 4 seats
        config, per_deal, what, size = ISOLATION, 20, "4 external bots + 1 built-in, 4 seats", 4
    else:
        config, per_deal, what, size = CONFIG, GAMES_PER_DEAL, "3 built-in bots, 2 seats", 2
    deals = args.games // per_deal
    cpus = len(os.sched_getaffinity(0))
    print(f"Dask executor beside the process pool: round-robin of {what}, "
          f"{deals * per_deal} games (sets of {size}), {cpus} CPUs; best of {args.repeat}")
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    clusters = {n: Cluster(args.cluster, n, root) for n in (1, 2)}
    print(f"clusters: {clusters[1].what}")
    best: dict[tuple[str, int], float] = {}
    walls: dict[tuple[str, int], list[float]] = {}
    cpu: dict[tuple[str, int], list[tuple[float, float, float]]] = {}
    n_games = 0
    for r in range(args.repeat):
        for workers in (1, 2):
            for kind in ("process", "dask"):  # alternated: the same noise for both
                ex = (ProcessExecutor(workers) if kind == "process"
                      else DaskExecutor(clusters[workers].address))
                before = clusters[workers].cpu()
                me0 = resource.getrusage(resource.RUSAGE_SELF)
                ch0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                n_games, wall = executor_run(root, f"{kind}{workers}-{r}", deals, ex,
                                             config, per_deal)
                me1 = resource.getrusage(resource.RUSAGE_SELF)
                ch1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                after = clusters[workers].cpu()
                key = (kind, workers)
                best[key] = min(best.get(key, float("inf")), wall)
                walls.setdefault(key, []).append(1000 * wall / n_games)
                me = _secs(me1) - _secs(me0)  # this process: the coordinator
                if kind == "process":  # the pool's workers are its children, joined
                    role = (me, 0.0, _secs(ch1) - _secs(ch0))
                else:
                    role = (me, after[0] - before[0], after[1] - before[1])
                cpu.setdefault(key, []).append(tuple(1000 * x / n_games for x in role))
    for workers in (1, 2):
        p, d = best[("process", workers)], best[("dask", workers)]
        print(f"{workers} worker(s): process pool {n_games / p:.0f} games/s "
              f"({1000 * p / n_games:.2f} ms/game), Dask {n_games / d:.0f} games/s "
              f"({1000 * d / n_games:.2f} ms/game): Dask's wall time per game "
              f"{100 * (d / p - 1):+.1f} % of the pool's"
              + (f" (target <= +10 %: {'met' if d / p <= 1.10 else 'NOT met'})"
                 if workers == 2 else ""))
        ratios = [dw / pw for pw, dw in zip(walls[("process", workers)],
                                             walls[("dask", workers)], strict=True)]
        print(f"    runs, ms/game: pool {', '.join(f'{x:.2f}' for x in walls[('process', workers)])}"
              f"; Dask {', '.join(f'{x:.2f}' for x in walls[('dask', workers)])}; Dask/pool "
              f"per run {', '.join(f'{x:.2f}' for x in ratios)}")
        for kind in ("process", "dask"):
            roles = cpu[(kind, workers)]
            med = [sorted(x[i] for x in roles)[len(roles) // 2] for i in range(3)]
            print(f"    CPU ms per game ({'pool' if kind == 'process' else 'Dask'}, median "
                  f"of runs): coordinator {med[0]:.2f}"
                  + (f", scheduler {med[1]:.2f}" if kind == "dask" and args.cluster == "processes"
                     else " (with the scheduler: same process)" if kind == "dask" else "")
                  + f", workers {med[2]:.2f}; total {sum(med):.2f}")
    sp_d = best[("dask", 1)] / best[("dask", 2)]
    sp_p = best[("process", 1)] / best[("process", 2)]
    ceiling = machine_ceiling() if cpus >= 2 else 1.0
    print(f"2-worker speed-up: Dask {sp_d:.2f}x, process pool {sp_p:.2f}x; machine ceiling "
          f"now {ceiling:.2f}x: Dask reaches {100 * sp_d / ceiling:.0f} % of it (target >= 1.8x "
          f"or >= 95 % of the ceiling: "
          f"{'met' if sp_d >= 1.8 or sp_d >= 0.95 * ceiling else 'NOT met'})")

    # What reaches the coordinator per set and per game: a SetResult, as pickled.
    out = root / "dask2-0" / "out"
    store = Store.open_existing(out)
    outcomes = list(store.outcomes())
    store.close()
    by_deal: dict[int, list[GameOutcome]] = {}
    for o in outcomes:
        by_deal.setdefault(o.deal, []).append(o)
    results = []
    for deal, games in by_deal.items():
        recs = tuple(zlib.compress((out / g.record).read_bytes(), 1) for g in games)
        results.append(SetResult(deal, "host:1234", tuple(games), recs))
    sizes = [len(pickle.dumps(r)) for r in results]
    raw = sum((out / o.record).stat().st_size for o in outcomes) / len(outcomes)
    per_game = sum(sizes) / len(outcomes)
    from referee.tournament.config import load_config
    from referee.tournament.schedule import schedule
    specs = schedule(load_config(root / "dask2-0" / "t.toml"))
    submit = len(pickle.dumps(specs[:size]))
    print(f"\nbytes per game to the coordinator: {per_game:.0f} (its record is {raw:.0f} bytes, "
          f"sent zlib-compressed; plus the outcome); per set submitted: ~{submit} bytes of "
          "game specs (the job and the bots are sent once per worker)")

    # The coordinator's commit rate under a flood of finished sets: one SQLite
    # commit per game (as before group commit) and one per batch of whole sets.
    template = results[:50]
    blobs = []
    for i in range(args.flood_sets):
        base = template[i % len(template)]
        games = tuple(replace_index(o, size * i + j) for j, o in enumerate(base.outcomes))
        blobs.append(pickle.dumps(SetResult(i, base.worker, games, base.records)))

    def flood(tag: str, one_by_one: bool) -> tuple[float, float]:
        """Games/s, and games per commit."""
        folder = root / tag
        (folder / "games").mkdir(parents=True)
        fstore = Store.create_or_resume(folder, flood_settings, "flood",
                                        args.flood_sets * size)
        pending = set(range(size * args.flood_sets))
        commits = 0

        def report(r: object) -> None:
            nonlocal commits
            games = finished(r)  # type: ignore[arg-type]
            if one_by_one:
                for o in games:
                    fstore.add(o)
                    commits += 1
            elif games:
                fstore.add_all(list(games))
                commits += 1

        committer = Committer(str(folder), pending, report)
        t0 = time.perf_counter()
        for blob in blobs:
            committer.arrive(pickle.loads(blob))
            committer.drain(block=False)
        committer.close()
        secs = time.perf_counter() - t0
        assert not pending and count(folder / "tournament.sqlite") == size * args.flood_sets
        fstore.close()
        return size * args.flood_sets / secs, size * args.flood_sets / commits

    rates: dict[bool, list[float]] = {True: [], False: []}
    per_commit = 0.0
    for r in range(args.repeat):
        for one_by_one in (True, False):  # alternated: the same noise for both
            rate, games_per_commit = flood(f"flood-{one_by_one}-{r}", one_by_one)
            rates[one_by_one].append(rate)
            if not one_by_one:
                per_commit = games_per_commit
    for one_by_one in (True, False):
        got = sorted(rates[one_by_one])
        print(f"coordinator, a flood of {args.flood_sets} finished sets (unpickle, write and "
              f"sync the records, commit), "
              + ("one SQLite commit per game:   " if one_by_one else
                 "one commit per batch of sets: ")
              + f"{got[-1]:.0f} games/s = {got[-1] / size:.0f} sets/s (best; "
              f"runs {', '.join(f'{x:.0f}' for x in got)} games/s)"
              + ("" if one_by_one else f"; {per_commit:.1f} games per commit"))
    commit_rate = max(rates[False])

    # The scheduler's own rate on this machine: no-op tasks through as_completed.
    from distributed import as_completed
    client = Client(clusters[2].address, set_as_default=False)
    futs = client.map(noop, range(2000), pure=False)
    t0 = time.perf_counter()
    for _ in as_completed(futs, loop=client.loop):
        pass
    tasks_rate = 2000 / (time.perf_counter() - t0)
    del futs
    client.close()
    for c in clusters.values():
        c.close()
    print(f"Dask scheduler here: {tasks_rate:.0f} no-op tasks/s (2 workers, sharing the 2 CPUs "
          "with the client)")

    # On paper: 100 machines.
    per_core = n_games / best[("dask", 1)]  # games/s of one worker on the bench's games
    coord_ms = sorted(x[0] for x in cpu[("dask", 2)])[len(cpu[("dask", 2)]) // 2]
    coord_rate = 1000 / coord_ms  # games/s one coordinator CPU can take in
    flood_sets = commit_rate / size
    print(f"\n100 machines x 32 cores = 3200 Dask workers, on paper (sets of {size}; the "
          f"coordinator takes in {coord_rate:,.0f} games/s per CPU, {coord_ms:.2f} ms each, "
          f"measured above; commits {commit_rate:,.0f} games/s = {flood_sets:,.0f} sets/s "
          f"batched, {max(rates[True]):,.0f} games/s one by one; the scheduler "
          f"{tasks_rate:,.0f} tasks/s):")
    limits: dict[str, float] = {}
    for label, rate in (("the bench's games", per_core), ("games of 1 s (real bots)", 1.0),
                        ("games of 0.1 s", 10.0)):
        need = 3200 * rate
        limits = {"the coordinator's commits (records synced, batched SQLite commits)":
                  need / commit_rate,
                  "the coordinator's CPU (receiving the sets: Dask client, unpickling, "
                  "decompressing)": need / coord_rate,
                  "the Dask scheduler (one task per set)": need / size / tasks_rate}
        print(f"  {label}: {need:,.0f} games/s = {need / size:,.0f} sets/s, "
              f"{need * per_game / 1e6:,.1f} MB/s into the coordinator; commits "
              f"{100 * need / commit_rate:.0f} %, coordinator CPU "
              f"{100 * need / coord_rate:.0f} %, scheduler "
              f"{100 * need / size / tasks_rate:.0f} % of what this machine does")
    print("  first bottleneck: " + max(limits, key=lambda k: limits[k]))


def replace_index(o: object, index: int) -> object:
    import dataclasses

    return dataclasses.replace(o, index=index, game_id=f"g{index:06d}",  # type: ignore[type-var]
                               record=f"games/g{index:06d}.jsonl")


def main() -> int:
    ap = argparse.ArgumentParser(description="tournament throughput and memory")
    ap.add_argument("--games", type=int, default=4000, help="games of each timed run")
    ap.add_argument("--executor", choices=("process", "dask"), default="process",
                    help="dask: the Dask executor beside the process pool (sections 4-7)")
    ap.add_argument("--bots", choices=("builtin", "external"), default="builtin",
                    help="--executor dask: the games of built-in bots (short: the referee's "
                         "costs show) or of external sandboxed bots (longer, as real ones)")
    ap.add_argument("--cluster", choices=("processes", "local"), default="processes",
                    help="--executor dask: a scheduler and workers in processes of their own, "
                         "as on a cluster (their CPU measured apart), or a LocalCluster in "
                         "the coordinator's process (what --executor dask alone starts)")
    ap.add_argument("--flood-sets", type=int, default=2000,
                    help="finished sets in the coordinator's commit flood (--executor dask)")
    ap.add_argument("--memory-games", type=int, default=10000)
    ap.add_argument("--isolation-deals", type=int, default=100,
                    help="deals of the duplicate-isolation run (x 5 lineups x 4 seatings)")
    ap.add_argument("--repeat", type=int, default=2, help="isolation runs, best of")
    args = ap.parse_args()
    if args.executor == "dask":
        with tempfile.TemporaryDirectory() as tmp:
            dask_bench(args, Path(tmp))
        return 0
    cpus = len(os.sched_getaffinity(0))
    deals = args.games // GAMES_PER_DEAL
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        print(f"round-robin of 3 built-in bots, 2 seats, {deals * GAMES_PER_DEAL} games, "
              f"{cpus} CPUs available")
        print(f"load average before: {os.getloadavg()[0]:.2f} (other processes compete for the CPUs)")
        runs = {}
        for jobs in (1, 2):
            n, wall, cpu, busy = timed_run(root, deals, jobs)
            runs[jobs] = (n, wall, cpu)
            print(f"--jobs {jobs}: {n} games in {wall:.2f} s = {n / wall:.0f} games/s; "
                  f"{1000 * cpu / n:.2f} ms CPU per game; workers in games {100 * busy:.0f}% "
                  "of the run")
        speedup = runs[1][1] / runs[2][1]
        print(f"speed-up {speedup:.2f}x ({'meets' if speedup >= 1.8 else 'MISSES'} >= 1.8x); "
              f"CPU per game --jobs 2 / --jobs 1: {runs[2][2] / runs[1][2]:.2f}")
        if cpus >= 2:
            ceiling = machine_ceiling()
            print(f"machine ceiling now: two CPU-bound processes run {ceiling:.2f}x as fast as "
                  f"one; the tournament reaches {100 * speedup / ceiling:.0f}% of it")
        best = {True: float("inf"), False: float("inf")}
        n = 0
        for r in range(args.repeat):
            for isolate in (False, True):  # alternated: the same noise for both
                sub = root / f"iso{r}"
                sub.mkdir(exist_ok=True)
                n, secs = isolation_run(sub, args.isolation_deals, 2, isolate)
                best[isolate] = min(best[isolate], secs)
        cost = (best[True] / best[False] - 1) * 100
        print(f"\nduplicate isolation, {n} games of 4 external bots at 4 seats, --jobs 2 "
              f"(best of {args.repeat}): one process per bot {n / best[False]:.1f} games/s, "
              f"no process plays a deal twice {n / best[True]:.1f} games/s: {cost:+.1f} % "
              f"(target <= 10 %: {'met' if cost <= 10 else 'NOT met'})")
        memory_run(root, args.memory_games, 2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
