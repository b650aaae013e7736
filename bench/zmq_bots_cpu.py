#!/usr/bin/env python3
"""What the trivial ZeroMQ bots cost, beside the referee, per decision.

``bench/protocol.py`` prints the referee's CPU per ZeroMQ decision; this adds the
bots' side: the CPU of the trivial launched ZeroMQ bots (pyzmq, a libzmq I/O thread
in each) per decision, as the children's CPU of ``--games`` games minus that of
starting and stopping the same bots with no game, pinned to one CPU as
``bench/protocol.py`` is.  Issue 24's ZeroMQ target (<= 1.5 x stdio) meets it here:
with a referee no dearer than on stdio, the bots' own libzmq already takes the
ratio to about 1.5 (stdio's trivial bots: about 11 us a decision).

    .venv/bin/python bench/zmq_bots_cpu.py [--games 40] [--rounds 3] [--cpu 0]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from referee.players.external import bench_game_zmq  # noqa: E402


def children_cpu() -> float:
    t = os.times()
    return t.children_user + t.children_system


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=40)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cpu", type=int, default=min(os.sched_getaffinity(0)))
    args = ap.parse_args()
    os.sched_setaffinity(0, {args.cpu})
    start_only: list[float] = []
    played: list[tuple[float, int, float, float]] = []
    for _ in range(args.rounds):
        k0 = children_cpu()
        bench_game_zmq(0, seed=1)
        start_only.append(children_cpu() - k0)
        k0 = children_cpu()
        r = bench_game_zmq(args.games, seed=1)
        played.append((children_cpu() - k0, r.decisions, r.cpu, r.seconds))
    base = min(start_only)
    us = 1e6
    for bots, decisions, cpu, wall in played:
        print(f"{decisions} decisions: wall {wall / decisions * us:.1f} us, referee CPU "
              f"{cpu / decisions * us:.1f} us, bots' CPU {(bots - base) / decisions * us:.1f} us "
              "per decision")


if __name__ == "__main__":
    main()
