"""What copying a league entry into its sandbox costs at start-up (issue 26: no host
path in /proc/self/mountinfo; issue 24: sandbox start-up <= +15 ms over unsandboxed).

A league entry is not bind-mounted from its folder (the kernel would name the
folder's host path in the bot's /proc/self/mountinfo): a small one is copied into
the sandbox's own tmpfs at each start (``referee.players.sandbox.entry_tree``), a
larger one is staged once per process at a neutral path and bound from there
(``stage_entry``).  For entries of a few shapes -- a one-file bot, and the same with
N extra files of S bytes -- this times start to hello (the handshake included) of a
trivial stdio bot, median of ``--starts``, in interleaved rounds (same noise for
each way):

* ``plain``: no sandbox;
* ``bound``: sandboxed, the entry bind-mounted from its folder (the way before);
* ``league``: sandboxed as a league runs it now (copied or staged);
* ``copied``: copied at each start whatever its size (where no tmpfs has room).

    .venv/bin/python bench/entry_startup.py --starts 15 --rounds 3
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from referee.play.runner import TimeControl  # noqa: E402
from referee.players.external import stdio_player  # noqa: E402
from referee.players.sandbox import (  # noqa: E402
    EntryTree,
    Sandbox,
    SandboxConfig,
    entry_tree,
    resolve,
)

BOT = """import sys
sys.stdout.write('{"type": "hello", "protocol": [1], "name": "t"}\\n'); sys.stdout.flush()
for line in sys.stdin:
    if '"bye"' in line: break
"""
TC = TimeControl(startup=30.0, per_decision=10.0, bank=0.0)
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else \
    os.path.realpath(sys.executable)


def make_entry(root: Path, files: int, size: int) -> Path:
    entry = root / f"entry-{files}x{size}"
    (entry / "data").mkdir(parents=True)
    (entry / "bot.py").write_text(BOT)
    for i in range(files):
        (entry / "data" / f"f{i}").write_bytes(os.urandom(size))
    return entry


def start_once(sandbox: Sandbox | None, entry: Path) -> float:
    p = stdio_player("s", [PYTHON, "bot.py"], cwd=str(entry), time_control=TC,
                     memory_mb=None, sandbox=sandbox)
    t0 = time.perf_counter()
    p.connect()
    took = time.perf_counter() - t0
    p.close()
    return took


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--starts", type=int, default=20, help="starts per way and round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--shapes", default="0x0,10x2000,100x20000,1000x20000",
                    help="extra files x bytes each, comma-separated")
    args = ap.parse_args()
    league = resolve(SandboxConfig(mode="on", entry_fence=True))
    real_entry = Sandbox._entry

    def bound(self: Sandbox, folder: str) -> tuple[None, str]:
        return None, folder

    def copied(self: Sandbox, folder: str) -> tuple[EntryTree | None, str]:
        return entry_tree(folder, self.hidden, 1 << 30, 1 << 40), ""

    patch = {"plain": real_entry, "bound": bound, "league": real_entry, "copied": copied}

    root = Path(tempfile.mkdtemp(prefix="entry-startup-"))
    try:
        for shape in args.shapes.split(","):
            n, size = (int(x) for x in shape.split("x"))
            entry = make_entry(root, n, size)
            sandbox = league
            ways: dict[str, list[float]] = {w: [] for w in patch}
            for _ in range(args.rounds):
                for way in ways:
                    Sandbox._entry = patch[way]  # type: ignore[method-assign]
                    sb = None if way == "plain" else sandbox
                    start_once(sb, entry)  # warm (and staged, once)
                    ways[way].append(statistics.median(
                        start_once(sb, entry) for _ in range(args.starts)))
            Sandbox._entry = real_entry  # type: ignore[method-assign]
            best = {w: min(v) * 1000 for w, v in ways.items()}
            how = "copied" if entry_tree(str(entry), ()) is not None else "staged"
            print(f"entry {1 + n} files, {n * size / 1e6:.2f} MB ({how} in a league): "
                  f"plain {best['plain']:.1f} ms, bound {best['bound']:.1f} ms, league "
                  f"{best['league']:.1f} ms ({best['league'] - best['bound']:+.1f} ms), "
                  f"copied {best['copied']:.1f} ms ({best['copied'] - best['bound']:+.1f} ms)"
                  f"; median of {args.starts}, best of {args.rounds}")
    finally:
        Sandbox._entry = real_entry  # type: ignore[method-assign]
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
