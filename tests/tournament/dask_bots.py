"""In-process bots for the Dask executor's tests (``python = "dask_bots.py:Name"``),
played in the Dask workers' processes: the heuristic bot, plus a way to take its
worker down mid-set, or to hold it, at a point the test chooses."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Sequence
from typing import Any

from referee.bots import HeuristicBot
from referee.game import Decision


class KillsItsWorker(HeuristicBot):
    """The heuristic bot, which kills its own process (SIGKILL: a machine that dies)
    at the first decision of its second game in that process, once in all: if
    $KILL_ONCE names a file that does not exist yet, it makes it (holding its pid and
    the game's seed) and dies.  Its second game in a process is the second seating of
    the first deal it plays there: the worker dies in the middle of a duplicate set."""

    games = 0  # in this process

    def new_game(self, seed: int) -> None:
        super().new_game(seed)
        type(self).games += 1
        self.seed = seed
        self.armed = type(self).games == 2 and bool(os.environ.get("KILL_ONCE"))

    def decide(self, obs: dict[str, Any], legal: Sequence[Decision]) -> Decision:
        if self.armed:
            self.armed = False
            try:
                fd = os.open(os.environ["KILL_ONCE"], os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:  # another worker died already
                return super().decide(obs, legal)
            os.write(fd, f"{os.getpid()} {self.seed}".encode())
            os.fsync(fd)
            os.close(fd)
            os.kill(os.getpid(), signal.SIGKILL)
        return super().decide(obs, legal)


class Stalls(HeuristicBot):
    """The heuristic bot, which stops deciding in its third game in a process while
    $STALL is set in the environment (for at most 120 s), so that a run is certainly
    still going when the test pulls its scheduler away."""

    games = 0

    def new_game(self, seed: int) -> None:
        super().new_game(seed)
        type(self).games += 1

    def decide(self, obs: dict[str, Any], legal: Sequence[Decision]) -> Decision:
        if type(self).games >= 3 and os.environ.get("STALL"):
            end = time.monotonic() + 120
            while time.monotonic() < end:
                time.sleep(0.5)
        return super().decide(obs, legal)


class KillsEveryWorker(HeuristicBot):
    """Kills its process (SIGKILL) at its first decision while the file $KILL_ALWAYS
    exists, noting its pid in $KILL_ALWAYS.deaths first."""

    def decide(self, obs: dict[str, Any], legal: Sequence[Decision]) -> Decision:
        flag = os.environ.get("KILL_ALWAYS")
        if flag and os.path.exists(flag):
            with open(os.path.splitext(flag)[0] + ".deaths", "a") as f:
                f.write(f"{os.getpid()}\n")
                f.flush()
                os.fsync(f.fileno())
            os.kill(os.getpid(), signal.SIGKILL)
        return super().decide(obs, legal)
