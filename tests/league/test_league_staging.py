"""A submission killed with SIGKILL cannot clean up its staging folder; the next
submission sweeps it, and never one that a live submission holds (issue 23)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from referee.league.submission import STAGING_PREFIX, sweep_staging
from tests.procs import scaled

# Stages a folder, says where, and waits with it staged (until killed).
HOLDER = """\
import sys
from pathlib import Path
from referee.league.config import Limits
from referee.league.submission import stage
with stage(Path(sys.argv[1]), Path(sys.argv[2]), Limits()) as root:
    print(root, flush=True)
    sys.stdin.read()
"""


def _holder(src: Path, parent: Path) -> tuple[subprocess.Popen[str], Path]:
    proc = subprocess.Popen([sys.executable, "-c", HOLDER, str(src), str(parent)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()  # an event: the folder is staged
    assert line, "the holder ended before staging"
    return proc, Path(line)


def test_a_killed_submissions_staging_is_swept_a_live_one_kept(tmp_path: Path) -> None:
    src = tmp_path / "bot"
    src.mkdir()
    (src / "bot.py").write_text("print('hi')\n")
    parent = tmp_path / "entries"
    live, live_root = _holder(src, parent)
    dead, dead_root = _holder(src, parent)
    try:
        os.kill(dead.pid, signal.SIGKILL)
        dead.wait(timeout=scaled(60))
        assert dead_root.is_dir()  # what SIGKILL leaves
        assert sweep_staging(parent) == [dead_root.name]
        assert not dead_root.exists()
        assert not (parent / (dead_root.name + ".lock")).exists()
        assert (live_root / "bot.py").is_file()  # held: kept
        assert sweep_staging(parent) == []
    finally:
        for p in (live, dead):
            if p.poll() is None:
                p.kill()
            p.wait(timeout=scaled(60))
    # the live one, once gone by SIGKILL too, goes with the next sweep; nothing stays
    assert sweep_staging(parent) == [live_root.name]
    assert [n for n in os.listdir(parent) if n.startswith(STAGING_PREFIX)] == []
