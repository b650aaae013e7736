"""The one run loop of tournaments, matches and leagues.

Owns choosing the executor (``choose_executor``).
"""

from __future__ import annotations

import contextlib
from typing import Any

from .config import EXECUTORS, TournamentConfigError
from .executor import Executor, ProcessExecutor


def choose_executor(kind: str | None = None, scheduler: str | None = None,
                    jobs: int | None = None, *, default: str = "process",
                    default_scheduler: str | None = None, ship: bool = True) -> Executor:
    """The executor a run plays on, from the options (``--executor``, ``--scheduler``,
    ``--jobs``) and the configuration's defaults: ``process`` (this machine's worker
    processes, ``jobs`` of them, default one per CPU) or ``dask`` (the cluster at
    the scheduler, else a local one of ``jobs`` workers; ``ship``: send the bots'
    folders to its workers).  A scheduler alone means ``dask``.  The same for
    ``tournament run``, ``match`` and ``league run``."""
    kind = kind or ("dask" if scheduler else default)
    if kind not in EXECUTORS:
        raise TournamentConfigError(f"unknown executor {kind!r}: choose from "
                                    f"{', '.join(EXECUTORS)}")
    if kind != "dask":
        if scheduler:
            raise TournamentConfigError("--scheduler is for the Dask executor: add "
                                        "--executor dask")
        return ProcessExecutor(jobs)
    # distributed takes a second to import: only when a run asks for it.
    from .dask_executor import DaskExecutor

    return DaskExecutor(scheduler or default_scheduler, jobs, ship=ship)


def entered(executor: Executor) -> contextlib.AbstractContextManager[Any]:
    """``executor`` entered for a run of several batches, if it is a context manager
    (a ``DaskExecutor`` then keeps one client, one local cluster, for them all)."""
    if isinstance(executor, contextlib.AbstractContextManager):
        return executor
    return contextlib.nullcontext()
