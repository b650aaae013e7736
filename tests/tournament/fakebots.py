"""Misbehaving and instrumented in-process bots for tournament tests, loaded by the
tournament configuration as ``python = "fakebots.py:Name"`` (in worker processes)."""

from __future__ import annotations

import linecache
import os
import sys
import threading
from collections.abc import Sequence
from typing import Any

from referee.bots import HeuristicBot
from referee.bots.policies import Bot
from referee.game import Decision


class Raiser(Bot):
    """Crashes on its third decision of every game."""

    name = "raiser"

    def new_game(self, seed: int) -> None:
        super().new_game(seed)
        self.n = 0

    def decide(self, obs: dict[str, Any], legal: Sequence[Decision]) -> Decision:
        self.n += 1
        if self.n == 3:
            raise RuntimeError("the raiser bot fell over")
        return legal[0]


class Garbage(Bot):
    """Answers nonsense every fifth decision (an illegal decision, substituted)."""

    name = "garbage"

    def new_game(self, seed: int) -> None:
        super().new_game(seed)
        self.n = 0

    def decide(self, obs: dict[str, Any], legal: Sequence[Decision]) -> Any:
        self.n += 1
        return "banana" if self.n % 5 == 0 else legal[-1]


class Counted(HeuristicBot):
    """The heuristic bot, leaving a file named after its process and object in
    $COUNTED_DIR each time one is made (to see how often workers make bots)."""

    def __init__(self, seed: int = 0) -> None:
        super().__init__(seed)
        folder = os.environ["COUNTED_DIR"]
        with open(os.path.join(folder, f"{os.getpid()}-{id(self)}"), "w") as f:
            f.write(str(os.sched_getaffinity(0)))


class HeuristicRule(HeuristicBot):
    """The heuristic bot's rule part alone, without its endgame search: what
    ``example_bots/python/heuristic_bot.py`` ports to the protocol."""

    name = "heuristic-rule"

    def decide(self, obs: dict[str, Any], legal: Sequence[Decision]) -> Decision:
        return self.decide_by_rule(obs, legal)


class Exiter(Bot):
    """Takes its worker process down with it (``os._exit``), as a bot library
    calling ``exit()`` would."""

    name = "exiter"

    def decide(self, obs: dict[str, Any], legal: Sequence[Decision]) -> Decision:
        os._exit(3)


def _kill_once(marker: str, value: str) -> str:
    """Unpickled in a worker as it starts: the first worker to get here is killed
    before its first game (as by the OOM killer); the others go on."""
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return value
    os.close(fd)
    os.kill(os.getpid(), 9)
    return value


class KillOnce(str):
    """A ``Job.records`` value whose unpickling kills the first worker (see
    ``_kill_once``); ``marker`` is the file that says it happened."""

    marker = ""

    def __reduce__(self) -> Any:
        return (_kill_once, (self.marker, str(self)))


class KilledWhileWaiting(HeuristicBot):
    """Plays well, but once per tournament (the file $KILL_MARKER says it happened)
    SIGKILLs its own worker at the moment the worker waits for its next game -- where
    a worker of a shared queue held the queue's lock."""

    name = "waiter"

    def new_game(self, seed: int) -> None:
        super().new_game(seed)
        marker = os.environ.get("KILL_MARKER", "")
        if marker and not os.path.exists(marker) and not getattr(KilledWhileWaiting, "armed", 0):
            KilledWhileWaiting.armed = 1
            main = threading.main_thread().ident
            threading.Thread(target=_kill_when_waiting, args=(main, marker), daemon=True).start()


def _kill_when_waiting(main: int | None, marker: str) -> None:
    while True:
        frame = sys._current_frames().get(main or 0)
        inner = frame
        while frame is not None and "multiprocessing" in frame.f_code.co_filename:
            frame = frame.f_back
        if inner is not frame and frame is not None and frame.f_code.co_name == "_worker":
            line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
            if ".recv()" in line or ".get()" in line:  # waiting for its next game
                open(marker, "w").close()
                os.kill(os.getpid(), 9)
        threading.Event().wait(0.001)


class DiesHoldingLocks(HeuristicBot):
    """Once per tournament ($KILL_MARKER): takes every lock of every multiprocessing
    queue in its worker, as a worker does while it takes its next game from a shared
    queue, and is SIGKILLed holding them (the OOM killer)."""

    name = "locker"

    def new_game(self, seed: int) -> None:
        super().new_game(seed)
        marker = os.environ.get("KILL_MARKER", "")
        if marker and not os.path.exists(marker):
            open(marker, "w").close()
            import gc
            import multiprocessing.queues

            for o in gc.get_objects():
                if isinstance(o, multiprocessing.queues.Queue):
                    o._rlock.acquire()  # type: ignore[attr-defined]
            os.kill(os.getpid(), 9)
