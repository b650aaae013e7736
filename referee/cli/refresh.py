"""A run's HTML report kept up to date while its games are played (``tournament run
--report``, ``league run --report``)."""

from __future__ import annotations

import time
from pathlib import Path

import click

#: Seconds between two rewrites of the report while a tournament runs (writing it
#: takes a moment per hundred games: not after every game).
REPORT_EVERY = 30.0


def write_report(results: Path, site: Path, stamp: str = "") -> None:
    """``report.site.write_site``, the report's modules loaded on the first write: they
    and Jinja2 take ~30 ms of CPU to import, which a run without ``--report`` (most
    ``tournament run``, ``tournament quick`` and ``league run`` commands) should not
    pay at its start."""
    from ..report.site import write_site

    write_site(results, site, stamp=stamp)


class Refresh:
    """``run_tournament``'s ``on_game``: rewrites the report when it is older than
    REPORT_EVERY.  A report that cannot be written is said once; the games go on."""

    def __init__(self, site: Path) -> None:
        self.site = site
        self.results = site
        self.last = time.monotonic()
        self.failed = False

    def __call__(self, summary: object, *, state: str = "", now: bool = False) -> None:
        """Rewrite the report if it is older than REPORT_EVERY, or ``now`` (a state
        change: a league going idle, a submission arriving, the run's end); with
        ``state``, every page says when it was written and in what state."""
        if self.failed or not now and time.monotonic() - self.last < REPORT_EVERY:
            return
        stamp = ""
        if state:
            stamp = time.strftime("updated %Y-%m-%d %H:%M:%S UTC", time.gmtime()) + \
                f" · {state}"
        from ..report.site import ReportError  # loaded by the first write (write_report)

        try:
            write_report(Path(self.results), self.site, stamp=stamp)
        except ReportError as e:
            self.failed = True
            click.echo(f"warning: the report is not kept up to date: {e}", err=True)
        self.last = time.monotonic()
