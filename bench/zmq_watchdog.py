"""What the TCP watchdog (referee/transport/zmq/watchdog.py) costs an honest game.

Plays games between two trivial ZeroMQ bots through a libzmq ROUTER on
``tcp://127.0.0.1`` -- the path of remote bots, whose connections the watchdog
watches -- with the watchdog on and off, rounds interleaved (the order alternating),
and prints the wall time and the referee's CPU (its process, the watchdog's thread
included) per decision, best and median of the rounds, and their ratios on / off.
Pinned to one CPU by default, as bench/protocol.py is.

    .venv/bin/python bench/zmq_watchdog.py --games 20 --rounds 5
"""

from __future__ import annotations

import argparse
import os
import statistics
from unittest import mock

from referee.players.external import bench_game_zmq
from referee.transport.zmq import router


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=20, help="games per run")
    ap.add_argument("--rounds", type=int, default=5, help="rounds of (on, off)")
    ap.add_argument("--cpu", type=int, default=None, help="CPU to pin to (default: the "
                    "last one allowed)")
    ap.add_argument("--no-pin", action="store_true", help="do not pin to one CPU")
    args = ap.parse_args()
    if not args.no_pin and hasattr(os, "sched_setaffinity"):
        cpu = args.cpu if args.cpu is not None else max(os.sched_getaffinity(0))
        os.sched_setaffinity(0, {cpu})  # the bots inherit it
    runs: dict[str, list[tuple[float, float]]] = {"on": [], "off": []}
    for r in range(args.rounds):
        for mode in (("on", "off") if r % 2 == 0 else ("off", "on")):
            if mode == "on":
                res = bench_game_zmq(args.games, seed=1 + r, transport="tcp", direct=False)
            else:
                with mock.patch.object(router, "TcpWatch", lambda *a, **k: None):
                    res = bench_game_zmq(args.games, seed=1 + r, transport="tcp",
                                         direct=False)
            runs[mode].append((res.seconds / res.decisions, res.cpu / res.decisions))
            print(f"round {r + 1} {mode:>3}: {res.seconds / res.decisions * 1e6:7.1f} us wall, "
                  f"{res.cpu / res.decisions * 1e6:6.1f} us referee CPU per decision "
                  f"({res.decisions} decisions)", flush=True)
    load = os.getloadavg()[0]
    us = 1e6
    for i, what in ((0, "wall"), (1, "referee CPU")):
        on = [x[i] for x in runs["on"]]
        off = [x[i] for x in runs["off"]]
        print(f"{what:>11} per decision: on best {min(on) * us:.1f} / median "
              f"{statistics.median(on) * us:.1f} us; off best {min(off) * us:.1f} / median "
              f"{statistics.median(off) * us:.1f} us; on / off: best "
              f"{min(on) / min(off):.3f}, median "
              f"{statistics.median(on) / statistics.median(off):.3f}")
    print(f"load average {load:.1f}")


if __name__ == "__main__":
    main()
