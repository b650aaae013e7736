"""A bot start's cgroup has a random name (a bot sees it in /proc/self/cgroup), and
the sweep of leftovers tells them by name, emptiness and age, not by a pid."""

from __future__ import annotations

import os
import time
from pathlib import Path

from referee.players import sandbox


def test_names_are_random_and_say_nothing() -> None:
    names = {sandbox.cgroup_name() for _ in range(100)}
    assert len(names) == 100
    for name in names:
        assert sandbox._NAME.fullmatch(name), name


def test_the_sweep_removes_old_empty_leftovers_only(tmp_path: Path) -> None:
    now = time.time()
    old = now - sandbox.STALE_SECONDS - 5
    made = {}
    for label, name, age in [("old", sandbox.cgroup_name(), old),
                             ("young", sandbox.cgroup_name(), now - 1),
                             ("foreign", "someone-else", old),
                             ("dead-pid", "updown-999999999-3", now),
                             ("live-pid", f"updown-{os.getpid()}-3", now)]:
        d = tmp_path / name
        d.mkdir()
        os.utime(d, (age, age))
        made[label] = d
    sandbox._sweep({"memory": ("2", str(tmp_path))}, now=now)
    left = {label for label, d in made.items() if d.exists()}
    assert left == {"young", "foreign", "live-pid"}
