"""The progress line on a terminal: the referee's own control sequences (carriage
return, erase line) reach the terminal as sequences, through the command line's
Guard (referee/text/quoting.py), via ``control``; a progress writer that wrote them
with ``stream.write`` would show ``\\x0d\\x1b[K`` as text instead."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.test_hostile_text import on_terminal, raw_controls

pytestmark = pytest.mark.slow


def test_the_progress_line_is_redrawn_on_a_terminal(tmp_path: Path) -> None:
    (tmp_path / "t.toml").write_text("""
[tournament]
name = "progress"
seats = 2
deals = 2
seed = 5
jobs = 1
output = "out"
[[bots]]
name = "heuristic"
builtin = "heuristic"
[[bots]]
name = "random"
builtin = "random"
""")
    text = on_terminal(tmp_path, "tournament", "run", "t.toml")
    assert "\r\x1b[K" in text, "no progress line was drawn on the terminal"
    assert "\\x0d" not in text and "\\x1b[K" not in text, (
        "the progress line's own sequences were escaped: write them with "
        "referee.text.quoting.control(stream, ...), not stream.write")
    # nothing else than the referee's own sequences
    assert not raw_controls(text.replace("\r\x1b[K", "").replace("\r", "")), text[-500:]
