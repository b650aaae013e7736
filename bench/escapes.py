"""What escaping costs (issue 21 item 5): ``printable`` (referee/text/quoting.py), the
one function every line a command writes and every bot's stderr log go through, in
millions of characters a second -- on ordinary log lines (ASCII, and non-ASCII text),
and on hostile text (every character a control, or random bytes); and a whole
``referee play`` with its transcript (20 games) against the same command with the
command line's Guard taken out.

    .venv/bin/python bench/escapes.py

Target: ordinary lines at 20 M characters/s or more (a 1 MiB stderr log: 50 ms),
and the transcript's command within 10 % of the unguarded one.  The exit status is 1 when a target is missed.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from referee.text.quoting import printable  # noqa: E402

UNGUARDED = """
import sys
import referee.cli.main as m
class Pass:
    def __new__(cls, stream): return stream
m.Guard = Pass
sys.argv[0] = "referee"
m.main()
"""


def rate(text: str) -> float:
    runs = 5
    took = timeit.timeit(lambda: printable(text, keep_tabs=True, keep_newlines=True),
                         number=runs) / runs
    return len(text) / took / 1e6


def play(guarded: bool) -> float:
    args = ["play", "heuristic", "random", "--games", "20", "--seed", "1", "--transcript",
            "--full", "--no-colour"]
    cmd = ([str(Path(sys.executable).parent / "referee"), *args] if guarded else
           [sys.executable, "-c", UNGUARDED, *args])
    t0 = os.times()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    t1 = os.times()
    return (t1.children_user + t1.children_system) - (t0.children_user + t0.children_system)


def main() -> int:
    ok = True
    cases = {
        "ASCII log lines": "thinking about move 12: play hand 7r\n" * 30000,
        "non-ASCII lines": "pensée é 日本 🂡 coup 12\n" * 30000,
        "every char ESC": "\x1b" * 1_000_000,
        "random bytes": os.urandom(1_000_000).decode("utf-8", "backslashreplace"),
    }
    for name, text in cases.items():
        r = rate(text)
        ordinary = "lines" in name
        ok &= r >= 20 or not ordinary
        print(f"printable, {name:16s} {r:8.1f} M chars/s"
              + ("" if not ordinary else "  (target >= 20)"))
    ratios = []
    start = time.monotonic()
    for _ in range(5):  # in turn, so that the machine's drift hits both alike
        ratios.append(play(True) / play(False))
    ratio = statistics.median(ratios)
    ok &= ratio <= 1.10
    print(f"referee play --games 20 --transcript: CPU with the Guard / without it: "
          f"median {ratio:.3f} of 5 pairs (target <= 1.10; {time.monotonic() - start:.0f} s)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
