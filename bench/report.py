#!/usr/bin/env python3
"""How long ``referee report`` takes, and how large the site is.

Plays a round-robin of built-in bots (two seats, duplicate deals, play-out: games of
about 100 turns, like the demo's) into a temporary folder, then writes its report
(``write_site``) and prints the time per game and the site's size per game, with and
without the replay viewer pages.  The target: the demo league's report (240 games)
in a few seconds, so that ``make demo`` stays quick.

    .venv/bin/python bench/report.py [--deals 60]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from referee.report import write_site

CONFIG = """
[tournament]
name = "bench"
seats = 2
deals = {deals}
seed = 1
jobs = 2
output = "out"
[rules]
variants = ["play_out"]
[[bots]]
name = "heuristic"
builtin = "heuristic"
[[bots]]
name = "lowest"
builtin = "lowest"
[[bots]]
name = "random"
builtin = "random"
[[bots]]
name = "heuristic-2"
builtin = "heuristic"
"""


def size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--deals", type=int, default=20, help="deals per pair (default 20: 240 games)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "t.toml"
        cfg.write_text(CONFIG.format(deals=args.deals))
        subprocess.run([sys.executable, "-m", "referee.cli.main", "tournament", "run", str(cfg),
                        "--quiet"], check=True, stdout=subprocess.DEVNULL)
        out = Path(tmp) / "out"
        for games in (True, False):
            site = Path(tmp) / f"site-{games}"
            t0 = time.perf_counter()
            res = write_site(out, site, games=games)
            dt = time.perf_counter() - t0
            n = res.standings.played
            print(f"{'with' if games else 'without'} replay pages: {n} games in {dt:.2f} s "
                  f"({1000 * dt / n:.1f} ms/game), site {size(site) / 1e6:.1f} MB "
                  f"({size(site) / n / 1e3:.0f} kB/game)")


if __name__ == "__main__":
    main()
