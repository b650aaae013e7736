"""Games in flight: ``tournament run --concurrency N`` with bots that think.

Plays 2-seat games between two external bots (``bench/sleepy_bot.py``: each
decision takes it ``--sleep`` seconds, 50 ms by default, then it answers index 0),
in the bubblewrap sandbox, through the real command (``referee tournament run
--jobs J --concurrency N``), for each N of ``--concurrency``, and prints:

* games/s over the whole run (worker start-up and every bot's start included), and
  its ratio to the first N's;
* time losses: timeout faults in the records (a decision is allowed 1 s: any
  timeout is the referee's doing);
* the referee's added latency per decision, p50 / p99 / max: from one bot's reply to
  the next request of the same game reaching a bot (either), by the bots' own
  CLOCK_MONOTONIC notes (the same clock in every process, sandboxed or not) --
  everything the referee adds: waking up, reading, the engine, the next request,
  the pipes;
* the largest total memory of the run's processes (referee, workers, bots and their
  sandboxes), sampled every second: RSS summed (counts shared pages once per
  process: an over-count) and PSS (shared pages split among their users).

Targets (issue 24): 0 time losses in >= 2,000 games at 200 in flight, games/s at 200
>= 150 x at 1, total memory <= 4 GB at 200.  The machine is shared: say what ran.

    .venv/bin/python bench/concurrency.py                       # 1, 50, 200; few games
    .venv/bin/python bench/concurrency.py --concurrency 200 --games 2000
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def tree(root: int) -> list[int]:
    """``root`` and every process below it."""
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except OSError:
            continue
    return out


def memory(pids: list[int]) -> tuple[int, int]:
    """(RSS, PSS) in kB, summed over ``pids``."""
    rss = pss = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Rss:"):
                        rss += int(line.split()[1])
                    elif line.startswith("Pss:"):
                        pss += int(line.split()[1])
        except OSError:
            continue
    return rss, pss


def cpu_of(pid: int) -> float | None:
    """CPU seconds (user + system) a process has used so far."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def is_worker(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"multiprocessing" in f.read()
    except OSError:
        return False


class Sampler(threading.Thread):
    """The largest total RSS and PSS of a process tree, sampled every second."""

    def __init__(self, root: int) -> None:
        super().__init__(daemon=True)
        self.root = root
        self.peak_rss = self.peak_pss = 0
        self.peak_procs = 0
        self.cpu: dict[int, float] = {}
        self.kind: dict[int, str] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(1.0):
            pids = tree(self.root)
            rss, pss = memory(pids)
            self.peak_rss = max(self.peak_rss, rss)
            self.peak_pss = max(self.peak_pss, pss)
            self.peak_procs = max(self.peak_procs, len(pids))
            for pid in pids:
                cpu = cpu_of(pid)
                if cpu is None:
                    continue
                if pid not in self.kind:
                    self.kind[pid] = "referee" if pid == self.root or is_worker(pid) else "bots"
                self.cpu[pid] = max(self.cpu.get(pid, 0.0), cpu)

    def cpu_by_kind(self) -> dict[str, float]:
        """CPU seconds of the referee's processes (the command, its workers) and of
        the bots' (the bots, their sandboxes), as last sampled."""
        out = {"referee": 0.0, "bots": 0.0}
        for pid, cpu in self.cpu.items():
            out[self.kind[pid]] += cpu
        return out


def config(folder: Path, games: int, sleep: float, sandbox: str) -> Path:
    bot = f'command = ["python3", "-S", "{HERE / "sleepy_bot.py"}", "{sleep}"]'
    text = f"""
[tournament]
name = "concurrency"
seats = 2
deals = {max(1, games // 2)}
seed = 24
output = "{folder / 'out'}"
[time]
startup = 60.0
per_decision = 1.0
bank = 0.0
[sandbox]
mode = "{sandbox}"
[[bots]]
name = "a"
{bot}
[[bots]]
name = "b"
{bot}
"""
    path = folder / "t.toml"
    path.write_text(text)
    return path


def latencies(out: Path) -> list[float]:
    """Seconds from a bot's reply to the next request of its game reaching a bot."""
    games: dict[str, list[tuple[float, float]]] = {}
    for log in out.glob("logs/worker-*/*.stderr.log"):
        for line in log.read_text(errors="replace").splitlines():
            if not line.startswith("T "):
                continue
            _, game, *pairs = line.split(" ")
            games.setdefault(game, []).extend(
                tuple(map(float, p.split(","))) for p in pairs if p)  # type: ignore[misc]
    gaps = []
    for pairs in games.values():
        pairs.sort()
        gaps += [pairs[k + 1][0] - pairs[k][1] for k in range(len(pairs) - 1)]
    return gaps


def faults(out: Path) -> tuple[int, int, dict[str, int]]:
    """(games, decisions, faults by kind) from the records."""
    games = decisions = 0
    kinds: dict[str, int] = {}
    for rec in out.glob("games/*.jsonl"):
        games += 1
        for line in rec.read_text().splitlines():
            if line.startswith('{"type":"decision"'):
                decisions += 1
            elif line.startswith('{"type":"fault"'):
                kind = json.loads(line)["kind"]
                kinds[kind] = kinds.get(kind, 0) + 1
    return games, decisions, kinds


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def run(n: int, games: int, jobs: int, sleep: float, sandbox: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bench-concurrency-") as tmp:
        folder = Path(tmp)
        cfg = config(folder, games, sleep, sandbox)
        cmd = [sys.executable, "-m", "referee.cli.main", "tournament", "run", str(cfg),
               "--jobs", str(jobs), "--concurrency", str(n), "-q", "--format", "json"]
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        sampler = Sampler(proc.pid)
        sampler.start()
        out, err = proc.communicate()
        wall = time.perf_counter() - t0
        sampler.stop.set()
        sampler.join()
        if proc.returncode != 0:
            raise SystemExit(f"the run failed ({proc.returncode}): {err.decode()[-2000:]}")
        played, decisions, kinds = faults(folder / "out")
        gaps = latencies(folder / "out")
    cpu = sampler.cpu_by_kind()
    return {"n": n, "games": played, "ref_cpu": cpu["referee"] / max(1, decisions),
            "bot_cpu": cpu["bots"] / max(1, decisions), "decisions": decisions, "wall": wall,
            "games_s": played / wall, "timeouts": kinds.get("timeout", 0),
            "faults": sum(kinds.values()), "p50": pct(gaps, 0.5), "p99": pct(gaps, 0.99),
            "max": max(gaps) if gaps else float("nan"), "gaps": len(gaps),
            "rss_mb": sampler.peak_rss / 1024, "pss_mb": sampler.peak_pss / 1024,
            "procs": sampler.peak_procs}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 50, 200])
    ap.add_argument("--games", type=int, nargs="+", default=None,
                    help="games at each concurrency (default: 2 at 1, else 2 x N)")
    ap.add_argument("--jobs", type=int, default=len(os.sched_getaffinity(0)),
                    help="worker processes (default: one per CPU)")
    ap.add_argument("--sleep", type=float, default=0.05, help="each bot's seconds per decision")
    ap.add_argument("--sandbox", default="on", choices=["on", "off"])
    args = ap.parse_args()
    games = args.games or [2 if n == 1 else 2 * n for n in args.concurrency]
    if len(games) == 1:
        games = games * len(args.concurrency)
    print(f"2-seat games of two sandboxed bots thinking {args.sleep * 1000:.0f} ms a decision "
          f"(sandbox {args.sandbox}), --jobs {args.jobs}, 1 s per decision allowed")
    rows = []
    for n, g in zip(args.concurrency, games, strict=True):
        r = run(n, g, args.jobs, args.sleep, args.sandbox)
        rows.append(r)
        base = rows[0]["games_s"]
        print(f"N={n:4d}: {r['games']:5d} games, {r['decisions']:7d} decisions in "
              f"{r['wall']:7.1f} s = {r['games_s']:7.3f} games/s ({r['games_s'] / base:6.1f} x "
              f"N={rows[0]['n']}); time losses {r['timeouts']} (faults {r['faults']}); "
              f"referee's added latency per decision p50 {r['p50'] * 1000:.2f} ms, p99 "
              f"{r['p99'] * 1000:.2f} ms, max {r['max'] * 1000:.1f} ms ({r['gaps']} gaps); "
              f"peak memory RSS {r['rss_mb']:.0f} MB, PSS {r['pss_mb']:.0f} MB "
              f"({r['procs']} processes); CPU per decision: referee "
              f"{r['ref_cpu'] * 1e6:.0f} us, bots {r['bot_cpu'] * 1e6:.0f} us (start-ups "
              f"included, sampled each second)", flush=True)
    if len(rows) > 1:
        print("median added latency over all: "
              f"{statistics.median([r['p50'] for r in rows]) * 1000:.2f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
