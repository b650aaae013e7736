"""Standings tables as the commands print them (``tournament standings``, ``league
standings``, the end of a run)."""

from __future__ import annotations

import os
import shutil
import sys

from ..tournament.standings import Standings, render


def render_standings(st: Standings, fmt: str, wide: bool) -> str:
    """Plain standings fit the terminal they are printed on, or $COLUMNS (any width when
    piped without COLUMNS)."""
    width = (shutil.get_terminal_size().columns
             if sys.stdout.isatty() or "COLUMNS" in os.environ else None)
    return render(st, fmt, wide=wide, width=width)
