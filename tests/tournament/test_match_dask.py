"""A match played on a real Dask LocalCluster (issue: beyond one machine) reaches the
verdict, with the same figures, that the process pool does; the cluster is started
once for all its batches."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest

from tests.cli.cli_helpers import env_for_subprocess, referee_command
from tests.procs import scaled

pytestmark = pytest.mark.slow


def _match(tmp_path: Path, name: str, *extra: str) -> dict[str, object]:
    done = subprocess.run([referee_command(), "match", "heuristic", "random", "--games", "16",
                           "--jobs", "2", "--json", "-o", str(tmp_path / name), *extra],
                          capture_output=True, text=True, timeout=scaled(300),
                          env=env_for_subprocess(), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out: dict[str, object] = json.loads(done.stdout)
    out.pop("output")
    return out


def test_a_match_on_a_local_dask_cluster_equals_the_process_pool(tmp_path: Path) -> None:
    on_dask = _match(tmp_path, "dask", "--executor", "dask")
    assert on_dask == _match(tmp_path, "pool")
    assert on_dask["resumed_sets"] == 0
    # the cluster's workers played it: each game names its worker HOST:PID
    con = sqlite3.connect(tmp_path / "dask" / "tournament.sqlite")
    workers = {str(w) for (w,) in con.execute("SELECT worker FROM games")}
    con.close()
    assert workers and all(":" in w for w in workers), workers
