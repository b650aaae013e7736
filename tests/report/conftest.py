"""A small tournament with a faulting bot, played once per test session through the
real ``referee tournament run`` command, and its report written by ``referee report``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from referee.cli.main import main
from tests.report.browser import open_browser

FAKEBOTS = Path(__file__).resolve().parents[1] / "tournament" / "fakebots.py"


def invoke(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, list(args))
    if r.exception and not isinstance(r.exception, SystemExit):
        raise r.exception
    return r.exit_code, r.stdout, r.stderr


@pytest.fixture(scope="session")
def results_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three bots, two seats, two duplicate deals (12 games); 'garbage' answers
    'banana' every fifth decision (illegal, substituted; three strikes forfeit), and
    a turn limit ends some games."""
    tmp = tmp_path_factory.mktemp("league")
    cfg = tmp / "t.toml"
    cfg.write_text(f"""
[tournament]
name = "report test"
seats = 2
deals = 2
seed = 5
jobs = 1
output = "out"
[rules]
turn_limit = 120
[[bots]]
name = "heuristic"
builtin = "heuristic"
[[bots]]
name = "random"
builtin = "random"
[[bots]]
name = "garbage <b>"
python = "{FAKEBOTS}:Garbage"
""")
    code, _, err = invoke("tournament", "run", str(cfg), "--quiet")
    assert code == 0, err
    return tmp / "out"


@pytest.fixture(scope="session")
def site_dir(results_dir: Path) -> Path:
    site = results_dir.parent / "site"
    code, out, err = invoke("report", str(results_dir), "-o", str(site))
    assert code == 0, err
    assert str((site / "index.html").resolve()) in out
    return site


@pytest.fixture(scope="session")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Headless Chromium (tests/report/browser.py), one fresh profile per session."""
    yield from open_browser(tmp_path_factory.mktemp("chromium") / "profile")
