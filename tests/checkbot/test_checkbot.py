"""``referee check-bot``: it passes the example bots and fails broken ones.

The broken bots are tiny scripts (as python-chess tests its engine driver): one
never says hello, one answers with a decision that is never legal, one prints debug
output on stdout, one does not exit on bye.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from referee.checkbot.checker import run_checks
from referee.checkbot.report import FAIL, PASS
from referee.checkbot.scenarios import KINDS, SCENARIOS
from referee.cli.check_bot import check_bot
from referee.play.runner import TimeControl
from tests.procs import scaled

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
BOTS = ROOT / "example_bots"
PY = sys.executable
FAST = TimeControl(startup=scaled(5.0), per_decision=scaled(1.0), bank=scaled(2.0))

def fake_bot(answer: object = 0, exit_on: tuple[str, ...] = ("bye",), twice: bool = False,
             chatty: bool = False) -> str:
    """A tiny bot script: says hello, answers every request with ``answer``; exits on
    the message types ``exit_on``; optionally answers twice, or prints debug output
    on stdout first."""
    return "\n".join([
        "import json, os, sys",
        "def say(m): print(json.dumps(m), flush=True)",
        "say({'type': 'hello', 'protocol': [1], 'name': 'fake'})",
        "for line in sys.stdin:",
        "    msg = json.loads(line)",
        f"    if msg['type'] in {exit_on!r}: os._exit(0)",
        "    if msg['type'] == 'request':",
        "        print('thinking...', flush=True)" if chatty else "        pass",
        f"        say({{'type': 'decision', 'id': msg['id'], 'decision': {answer!r}}})",
        f"        say({{'type': 'decision', 'id': msg['id'], 'decision': {answer!r}}})"
        if twice else "",
    ])


# Ignores 'bye' (and stdin's EOF never comes while the referee holds the pipe open).
NO_BYE = fake_bot(exit_on=())
# Always answers 'pass', which is never a decision (RULES §8: no passing).
ILLEGAL = fake_bot(answer="pass")
CHATTY = fake_bot(chatty=True)
# Exits after each game instead of waiting for the next 'new_game' or 'bye'.
ONE_GAME = fake_bot(exit_on=("bye", "game_over"))
TWICE = fake_bot(twice=True)


def rows(report: object) -> dict[str, str]:
    return {c.name: c.status for c in report.checks}  # type: ignore[attr-defined]


@pytest.mark.parametrize("command", [
    [PY, str(BOTS / "python" / "random_bot.py")],
    [PY, str(BOTS / "python" / "heuristic_bot.py")],
    pytest.param(["node", str(BOTS / "js" / "bot.js")],
                 marks=pytest.mark.skipif(shutil.which("node") is None, reason="no node")),
], ids=["python-random", "python-heuristic", "js"])
def test_example_bots_pass(command: list[str]) -> None:
    report = run_checks(command, time_control=FAST)
    assert report.ok, report.render()
    statuses = rows(report)
    for kind in KINDS:  # every kind of decision was requested
        assert statuses[f"decision: {kind}"] == PASS
    assert statuses["carries on after 'rejected'"] == PASS
    assert statuses["ignores unknown messages and fields"] == PASS
    assert statuses["exits on bye"] == PASS
    assert sum(name.startswith("game: 6 players") for name in statuses) == 2


def test_python_bot_passes_over_zeromq() -> None:
    report = run_checks([PY, str(BOTS / "python" / "random_bot.py")], transport="zmq",
                        time_control=FAST, scenarios=SCENARIOS[:3], extra_games=0)
    statuses = rows(report)
    assert statuses["starts and says hello"] == PASS, report.render()
    assert all(statuses[f"game: {sc.title}"] == PASS for sc in SCENARIOS[:3]), report.render()
    assert statuses["exits on bye"] == PASS


def test_bot_that_never_says_hello_fails_fast() -> None:
    silent = [PY, "-c", "import sys, time; sys.stdin.readline(); time.sleep(30)"]
    report = run_checks(silent, time_control=TimeControl(startup=0.5))
    assert not report.ok
    check = report.checks[0]
    assert (check.name, check.status) == ("starts and says hello", FAIL)
    assert "no hello within the startup limit" in check.detail
    assert "FAILED" in report.render()


def test_bot_answering_illegal_decisions_fails_with_transcript() -> None:
    report = run_checks([PY, "-c", ILLEGAL], time_control=FAST, scenarios=SCENARIOS[:2],
                        extra_games=0)
    statuses = rows(report)
    assert statuses["starts and says hello"] == PASS
    assert statuses[f"game: {SCENARIOS[0].title}"] == FAIL
    assert statuses["decision: 3up"] == FAIL
    assert statuses["exits on bye"] == PASS
    text = report.render()
    assert "'pass'" in text and '"decision": "pass"' in text  # the transcript  # the transcript is shown


def test_bot_printing_to_stdout_fails() -> None:
    report = run_checks([PY, "-c", CHATTY], time_control=FAST, scenarios=SCENARIOS[:1],
                        extra_games=0, bye_grace=0.3)
    game = next(c for c in report.checks if c.name.startswith("game:"))
    assert game.status == FAIL
    assert "malformed" in game.detail and "thinking" in game.detail


def test_bot_that_ignores_bye_fails() -> None:
    report = run_checks([PY, "-c", NO_BYE], time_control=FAST, scenarios=SCENARIOS[1:2],
                        extra_games=0, bye_grace=0.3)
    statuses = rows(report)
    assert statuses[f"game: {SCENARIOS[1].title}"] == PASS
    assert statuses["exits on bye"] == FAIL
    bye = next(c for c in report.checks if c.name == "exits on bye")
    assert "did not exit" in bye.detail


def test_cli_exit_status() -> None:
    runner = CliRunner()
    bad = runner.invoke(check_bot, ["--startup", "0.5", "--", PY, "-c",
                                    "import time; time.sleep(30)"])
    assert bad.exit_code == 1
    assert "starts and says hello" in bad.output and "FAIL" in bad.output



def test_bot_that_exits_after_a_game_fails() -> None:
    report = run_checks([PY, "-c", ONE_GAME], time_control=FAST, scenarios=SCENARIOS[1:3],
                        extra_games=0)
    statuses = rows(report)
    assert statuses["stays up across games"] == FAIL, report.render()


def test_bot_that_answers_twice_fails() -> None:
    report = run_checks([PY, "-c", TWICE], time_control=FAST, scenarios=SCENARIOS[1:2],
                        extra_games=0)
    statuses = rows(report)
    assert statuses["answers each request once"] == FAIL, report.render()
    assert statuses["stays up across games"] == PASS


def test_bot_choking_on_unknown_messages_fails() -> None:
    # Crashes on any message type it does not know (here: the checker's probe).
    strict = fake_bot().replace(
        "    if msg['type'] == 'request':",
        "    assert msg['type'] in ('welcome', 'new_game', 'request', 'rejected', 'game_over')\n"
        "    if msg['type'] == 'request':")
    report = run_checks([PY, "-c", strict], time_control=FAST, scenarios=SCENARIOS[:1],
                        extra_games=0)
    statuses = rows(report)
    assert statuses["ignores unknown messages and fields"] == FAIL, report.render()
    assert "x_check_bot_notice" in report.render()


def test_slow_bot_fails_the_time_check_only_for_its_timeouts() -> None:
    slow = fake_bot().replace("        pass", "        import time; time.sleep(0.12)")
    report = run_checks([PY, "-c", slow], scenarios=SCENARIOS[1:2], extra_games=0,
                        time_control=TimeControl(startup=5.0, per_decision=0.05, bank=0.05))
    statuses = rows(report)
    assert statuses["decides in time"] == FAIL, report.render()
    assert statuses["answers each request once"] == PASS  # late answers are not strays
    assert "timeout" in next(c.detail for c in report.checks if c.name == "decides in time")


def test_installed_command_passes_the_js_bot() -> None:
    referee = shutil.which("referee", path=str(Path(PY).parent))
    node = shutil.which("node")
    assert referee is not None, "the referee command is not installed: run make test"
    if node is None:
        pytest.skip("the JavaScript example bot needs Node.js, which is not installed")
    import subprocess

    done = subprocess.run([referee, "check-bot", f"{node} {BOTS / 'js' / 'bot.js'}"],
                          capture_output=True, text=True, timeout=scaled(60))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASSED" in done.stdout and "decision: swap/keep" in done.stdout
