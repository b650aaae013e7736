"""The processes the tests start, and the time they give them.

**Signals.**  A test that interrupts a referee (Ctrl-C, ``kill``) relies on the
referee starting with SIGINT and SIGTERM at their defaults.  A program started from a
background job (``nohup make test &``, cron, some CI runners) starts with SIGINT
ignored, and an ignored signal stays ignored across ``fork`` and ``exec``: every
referee the suite started would then (rightly) ignore the test's Ctrl-C.  A signal
that has a *handler* is reset to its default by ``exec``, so the suite's process
holds handlers for both (:func:`own_signals`, called by ``tests/conftest.py`` before
any test, in every xdist worker too): each child starts with both at their default,
wherever the suite was started.  (``preexec_fn`` could reset them in the child
instead, but it is unsafe in a process with threads, and the tests have them.)

**Processes.**  :class:`Children` (the ``children`` fixture) starts each process in a
process group of its own and, when the test ends -- passed or failed -- kills every
group it started that is still running and reaps it: no referee, bot or worker
outlives its test, even when an assertion stopped the test half-way.

**Time.**  Tests wait for events (a line, a file, a state), never for a fixed time.
Where a bound is needed (a safety net, so that a hung child fails the test instead of
hanging the suite) or a time limit is the point, :func:`scaled` multiplies it by
``REFEREE_TEST_TIME_FACTOR`` (default 1; tests/soak.sh sets 4 when it oversubscribes
the machine).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator, Sequence
from typing import Any

TIME_FACTOR = float(os.environ.get("REFEREE_TEST_TIME_FACTOR", "1") or "1")

#: The ``referee`` command as a Python program that prints its own peak RSS on
#: stderr as it exits (``PEAK_RSS_KB N``: read by :func:`peak_rss_mb`).
REFEREE_WITH_PEAK_RSS = [
    sys.executable, "-c",
    "import atexit, resource, sys\n"
    "atexit.register(lambda: print('PEAK_RSS_KB', resource.getrusage("
    "resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr))\n"
    "from referee.cli.main import main\n"
    "sys.argv[0] = 'referee'\n"
    "main()\n"]


def peak_rss_mb(stderr: str) -> float:
    """The peak RSS (MB) a ``REFEREE_WITH_PEAK_RSS`` process said it had."""
    [peak] = [int(line.split()[1]) for line in stderr.splitlines()
              if line.startswith("PEAK_RSS_KB ")]
    return peak / 1024


def scaled(seconds: float) -> float:
    """``seconds`` times the suite's time factor (REFEREE_TEST_TIME_FACTOR)."""
    return seconds * TIME_FACTOR


def own_signals() -> None:
    """Give this process handlers for SIGINT and SIGTERM where it ignores them, so that
    its children start with both at their defaults (see the module's docstring).
    SIGINT gets Python's own handler (KeyboardInterrupt), as when started in the
    foreground; SIGTERM, when ignored, its default."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if signal.getsignal(signal.SIGTERM) is signal.SIG_IGN:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


class Children:
    """The processes one test started; :meth:`close` (the fixture's teardown) kills
    the process group of each one still running."""

    def __init__(self) -> None:
        self.procs: list[tuple[subprocess.Popen[Any], bool]] = []

    def popen(self, args: Sequence[str], **kw: Any) -> subprocess.Popen[Any]:
        """``subprocess.Popen(args, **kw)`` in a new session (so its group can be
        signalled and killed whole), owned by this test."""
        kw.setdefault("start_new_session", True)
        p: subprocess.Popen[Any] = subprocess.Popen(list(args), **kw)
        self.procs.append((p, bool(kw["start_new_session"])))
        return p

    def close(self) -> None:
        for p, group in self.procs:
            # the group even when its leader has ended: what it started may not have
            if group:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(p.pid, signal.SIGKILL)
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    p.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.communicate(timeout=scaled(30))
        self.procs.clear()


@contextlib.contextmanager
def children() -> Iterator[Children]:
    owner = Children()
    try:
        yield owner
    finally:
        owner.close()
