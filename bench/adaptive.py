#!/usr/bin/env python3
"""How many games does an adaptive league schedule need to settle its top 3, against
a round-robin?

Simulated fields of 8, 16 and 32 bots of known strengths (evenly spaced, the best
first) play duplicate sets of a fast outcome model: in a set of a lineup, each seat
of the deal has a luck of its own (drawn once per set, shared by its seatings: what
duplicate cancels), and each game each bot's performance is its strength plus its
seat's luck plus noise; places by performance; an entry's score in a game is the
share of opponents it finished ahead of (``referee.tournament.standings``).  Seats
rotate (``rotate``: k games per set).

Both schedules are checked with the same test after every batch of the same size
(``referee.stats.adaptive``: a batch is n/k sets, about one set per bot), and stop
when the top 3 are separated at 95 % (every top-3 bot against every other bot, the
95 % interval of the difference of strengths above 0):

* round-robin: the league's ``round-robin``: deal 0 of every lineup, then deal 1...
  (in a seeded random order within a deal, as ``interleave`` spreads them);
* adaptive: ``referee.stats.adaptive.choose`` (the league's ``schedule =
  "adaptive"``), with the league's defaults (top 3, minimum share 0.25, warm-up 2
  sets).

Printed per field size and seed: games to separation of each and their ratio, and
the share of each one's sets that held the true 3rd and 4th together (the pair
that decides the top 3: a round-robin holds it in k(k-1)/(n(n-1)) of its sets,
which bounds what choosing can gain); then the median ratio (target: <= 0.5), the
mean and median games of each, and how often the top 3 found were not the true
top 3.
``--real SEEDS`` plays instead a small league end to end with real in-process bots
(the built-in ``heuristic``, ``lowest`` and ``random`` bots under 8 names: 3, 3
and 2) through ``referee.league`` (store, schedule, driver, luck-adjusted scores),
adaptive against round-robin, each to the separation of its top 3.

    .venv/bin/python bench/adaptive.py [--sizes 8 16 32] [--seeds 7] [--seats 2]
                                       [--gap 0.15]
    .venv/bin/python bench/adaptive.py --real 3
"""

from __future__ import annotations

import argparse
import itertools
import math
import random
import statistics
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from referee.league.adaptive import states  # noqa: E402
from referee.league.config import parse_league_config  # noqa: E402
from referee.league.results import config_of  # noqa: E402
from referee.league.run import new_league, run_league, submit  # noqa: E402
from referee.league.store import LeagueStore  # noqa: E402
from referee.players.botspec import BotSpec  # noqa: E402
from referee.players.sandbox import unsandboxed  # noqa: E402
from referee.stats.adaptive import SetScore, choose, fit, separation  # noqa: E402
from referee.tournament.executor import Job, Report, SerialExecutor  # noqa: E402
from referee.tournament.schedule import GameSpec  # noqa: E402

LUCK = 0.8  # sd of a seat's luck in a deal
NOISE = 1.0  # sd of a game's own noise
CAP = 400_000  # games: a run that has not separated by then is counted as this


def play_set(lineup: Sequence[str], strength: dict[str, float], rng: random.Random
             ) -> tuple[SetScore, int]:
    """One duplicate set of ``lineup`` (every rotation of the seats): its scores and
    its games."""
    k = len(lineup)
    luck = [rng.gauss(0.0, LUCK) for _ in range(k)]
    total = dict.fromkeys(lineup, 0.0)
    for r in range(k):
        seats = [lineup[(s + r) % k] for s in range(k)]
        perf = [strength[b] + luck[s] + rng.gauss(0.0, NOISE) for s, b in enumerate(seats)]
        for s, b in enumerate(seats):
            ahead = sum(1.0 if perf[s] > perf[t] else 0.5 if perf[s] == perf[t] else 0.0
                        for t in range(k) if t != s)
            total[b] += ahead / (k - 1)
    return SetScore(tuple(lineup), tuple(total[b] / k for b in lineup)), k


def run(kind: str, n: int, seats: int, gap: float, seed: int, top: int = 3,
        min_share: float = 0.25, warmup: int = 2) -> tuple[int, bool, float]:
    """Games until the top ``top`` are separated, whether they are the true top, and
    the share of the sets that held the true ``top``-th and ``top + 1``-th bots
    together (the pair hardest to separate)."""
    names = [f"b{i:02d}" for i in range(n)]
    strength = {b: -gap * i for i, b in enumerate(names)}
    rng = random.Random(seed * 1000 + n)
    order_rng = random.Random(seed)
    batch = max(1, math.ceil(n / seats))
    sets: list[SetScore] = []
    counts = dict.fromkeys(names, 0)
    games = 0
    rr: list[tuple[str, ...]] = []
    while games < CAP:
        if kind == "round-robin":
            todo: list[tuple[str, ...]] = []
            while len(todo) < batch:
                if not rr:
                    rr = list(itertools.combinations(names, seats))
                    order_rng.shuffle(rr)
                todo.append(rr.pop())
        else:
            st = fit(sets, names)
            todo = choose(st, seats, batch, top=top, counts=counts, per_set=seats,
                          min_share=min_share, warmup=warmup, seed=seed * 7919 + len(sets))
        for lineup in todo:
            s, g = play_set(lineup, strength, rng)
            sets.append(s)
            games += g
            for b in lineup:
                counts[b] += g
        st = fit(sets, names)
        sep = separation(st, top)
        if sep.separated:
            hard = sum(1 for x in sets if {names[top - 1], names[top]} <= set(x.lineup))
            return games, set(st.ranking()[:top]) == set(names[:top]), hard / len(sets)
    return CAP, False, 0.0


REAL_FIELD = [("heur1", "heuristic"), ("heur2", "heuristic"), ("heur3", "heuristic"),
              ("low1", "lowest"), ("low2", "lowest"), ("low3", "lowest"),
              ("rnd1", "random"), ("rnd2", "random")]


class BuiltinExecutor:
    """Real games in this process: each entry plays as the built-in bot its folder
    names (``builtin.txt``), through the tournament's serial executor (the real
    engine, records, luck-adjusted scores)."""

    def __init__(self) -> None:
        self.inner = SerialExecutor()

    def run(self, job: Job, games: Sequence[GameSpec], report: Callable[[Report], None]) -> None:
        bots = tuple(BotSpec(name=b.name, builtin=(Path(b.cwd or ".") / "builtin.txt")
                             .read_text().split()[0]) for b in job.config.bots)
        self.inner.run(replace(job, config=replace(job.config, bots=bots)), games, report)


def run_real(kind: str, seed: int, where: Path, step: int) -> tuple[int, str]:
    """A league of REAL_FIELD (2 seats, top 3) played to the separation of its top 3
    (round-robin: ``step`` games at a time, the separation checked after each);
    its games and its top 3."""
    text = (f'[league]\nname = "{kind}"\nseats = 2\ndeals = 60\nseed = {seed}\n'
            f'schedule = "{kind}"\ntop = 3\n')
    league = where / f"{kind}-{seed}"
    new_league(league, parse_league_config(tomllib.loads(text), source="bench"), text,
               secret=seed.to_bytes(32, "big"))
    for name, bot in REAL_FIELD:
        folder = where / "bots" / name
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "builtin.txt").write_text(f"{bot} {name}\n")
        submit(league, name, folder, ["python3", "bot.py"], sandbox=unsandboxed(),
               checker=lambda *a: (True, ""))
    while True:
        summary = run_league(league, executor=BuiltinExecutor(), sandbox=unsandboxed(),
                             progress=False, limit=step if kind == "round-robin" else None)
        store = LeagueStore.open(league)
        try:
            (state,) = states(store, config_of(store))
        finally:
            store.close()
        if state.separation.separated or not summary.played:
            top = ", ".join(state.strengths.ranking()[:3])
            return state.games, top + ("" if state.separation.separated else " (NOT separated)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[8, 16, 32])
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--seats", type=int, default=2)
    ap.add_argument("--gap", type=float, default=0.15,
                    help="strength step between neighbours (noise sd 1)")
    ap.add_argument("--real", type=int, default=0, metavar="SEEDS",
                    help="instead, play a league of real in-process bots (8 entries, 2 seats) "
                         "to the separation of its top 3, adaptive and round-robin, for "
                         "this many seeds")
    args = ap.parse_args()
    ok = True
    if args.real:
        with tempfile.TemporaryDirectory() as tmp:
            for seed in range(1, args.real + 1):
                t0 = time.perf_counter()
                g_rr, top_rr = run_real("round-robin", seed, Path(tmp), 8)
                t1 = time.perf_counter()
                g_ad, top_ad = run_real("adaptive", seed, Path(tmp), 8)
                t2 = time.perf_counter()
                print(f"real bots (3 x heuristic, 3 x lowest, 2 x random), 2 seats, seed {seed}: "
                      f"round-robin {g_rr} games (top {top_rr}), adaptive {g_ad} games "
                      f"(top {top_ad}): ratio {g_ad / g_rr:.2f}  [{t1 - t0:.0f}s, "
                      f"{t2 - t1:.0f}s]", flush=True)
    for n in args.sizes if not args.real else []:
        ratios = []
        games: dict[str, list[int]] = {"round-robin": [], "adaptive": []}
        wrong = {"round-robin": 0, "adaptive": 0}
        for seed in range(1, args.seeds + 1):
            t0 = time.perf_counter()
            g_rr, right_rr, hard_rr = run("round-robin", n, args.seats, args.gap, seed)
            t1 = time.perf_counter()
            g_ad, right_ad, hard_ad = run("adaptive", n, args.seats, args.gap, seed)
            t2 = time.perf_counter()
            ratios.append(g_ad / g_rr)
            games["round-robin"].append(g_rr)
            games["adaptive"].append(g_ad)
            wrong["round-robin"] += not right_rr
            wrong["adaptive"] += not right_ad
            print(f"{n} bots, {args.seats} seats, seed {seed}: round-robin {g_rr} games"
                  f"{'' if right_rr else ' (wrong top)'}, adaptive {g_ad} games"
                  f"{'' if right_ad else ' (wrong top)'}: ratio {g_ad / g_rr:.2f}; sets "
                  f"holding the 3rd and 4th: {100 * hard_rr:.0f} % and {100 * hard_ad:.0f} %"
                  f"  [{t1 - t0:.1f}s, {t2 - t1:.1f}s]", flush=True)
        med = statistics.median(ratios)
        means = statistics.mean(games["adaptive"]) / statistics.mean(games["round-robin"])
        ok &= med <= 0.5
        print(f"{n} bots, {args.seats} seats: median ratio {med:.2f} over {len(ratios)} seeds "
              f"(target <= 0.5: {'met' if med <= 0.5 else 'MISSED'}); mean games "
              f"{statistics.mean(games['adaptive']):.0f} / "
              f"{statistics.mean(games['round-robin']):.0f} = {means:.2f}; median games "
              f"{statistics.median(games['adaptive']):.0f} / "
              f"{statistics.median(games['round-robin']):.0f}; wrong top 3: adaptive "
              f"{wrong['adaptive']}, round-robin {wrong['round-robin']}", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
