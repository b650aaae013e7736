"""Shared helpers of the CLI tests: the installed command, a deal known in advance."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from referee.cli.main import main

# A deal whose game between two heuristic bots is known in advance (seat 0 first):
# both lay their high cards face up and keep three of a kind in hand; every play of
# three clears the pile; then seat 0 turns 4g, 8g, 9g, seat 1 plays 5g and fails on
# 6g (picking up 4g 5g 8g): seat 0 wins at turn 9, seat 1 holds 4+5+8+6+7 = 30.
KNOWN_DEAL = """\
# 3DOWN cards: seat 0 slot 0, seat 1 slot 0, seat 0 slot 1, ...
4g 5g   8g 6g   9g 7g
# the six cards, dealt one at a time: seat 0, seat 1, seat 0, ...
1g 2g 1r 2r 1b 2b
10g 3g 10r 3r 10b 3b
"""


def write_deal(tmp_path: Path) -> Path:
    p = tmp_path / "deal.txt"
    p.write_text(KNOWN_DEAL)
    return p


def invoke(*args: str, input: str | None = None) -> Result:
    """Run ``referee ARGS`` in-process (CliRunner), stdout and stderr apart."""
    return CliRunner().invoke(main, list(args), input=input, catch_exceptions=False)


def referee_command() -> str:
    """The installed ``referee`` script, next to the running interpreter."""
    here = Path(sys.executable).parent
    found = shutil.which("referee", path=str(here)) or shutil.which("referee")
    if found is None:
        pytest.fail("the referee command is not installed next to this Python: run make test "
                    "(it installs the project with pip install -e .)")
    return found


def env_for_subprocess() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    env["PYTHONUNBUFFERED"] = "1"
    return env
