"""``referee play --transcript``: short and full messages, ``--only NAME``, one
latency per decision, and a crash called a crash.  Through the CLI (CliRunner, and the
installed command under a pseudo-terminal for the default on a terminal)."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.cli_helpers import env_for_subprocess, invoke, referee_command
from tests.procs import Children, scaled

pytestmark = pytest.mark.slow

BOTS = Path(__file__).resolve().parents[1] / "bots"
RANDOM_BOT = Path(__file__).resolve().parents[2] / "example_bots" / "python" / "random_bot.py"


def _requests(text: str, arrow: str) -> list[str]:
    return [x for x in text.splitlines() if f" {arrow} " in x and '"type": "request"' in x]


def test_short_shows_the_observation_as_dots_and_lists_by_their_counts() -> None:
    r = invoke("play", "heuristic", f"mine={sys.executable} {RANDOM_BOT}", "--seed", "3",
               "--quiet", "--transcript", "--short", "--no-colour")
    assert r.exit_code == 0, r.output
    wire = _requests(r.stdout, "->")
    assert wire and all('"observation": {...}' in x for x in wire)
    assert re.search(r'"legal": \[20 legal\], "events": \[\d+ events\]', wire[0])
    assert '"hand"' not in r.stdout  # no observation is shown whole
    builtin = _requests(r.stdout, "~>")
    assert builtin and all('"observation": {...}' in x and " legal]" in x for x in builtin)
    assert max(len(x) for x in wire + builtin) < 220  # a request fits on one line


def test_full_shows_every_message_whole() -> None:
    r = invoke("play", "heuristic", "lowest", "--seed", "3", "--quiet", "--transcript",
               "--full")
    assert r.exit_code == 0
    first = _requests(r.stdout, "~>")[0]
    assert '"observation": {"seat": ' in first and '"legal": ["3up ' in first


def test_a_terminal_gets_the_short_form_a_pipe_the_full_one(tmp_path: Path,
                                                           children: Children) -> None:
    args = [referee_command(), "play", "heuristic", "lowest", "--seed", "3", "--quiet",
            "--transcript", "--no-colour"]
    piped = subprocess.run(args, capture_output=True, text=True, env=env_for_subprocess(),
                           timeout=scaled(60))
    assert '"observation": {"seat"' in piped.stdout
    leader, follower = pty.openpty()
    p = children.popen(args, stdout=follower, stderr=follower, env=env_for_subprocess(),
                       start_new_session=False)  # the terminal's session, as a user's
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closes when the referee exits
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert p.wait(scaled(60)) == 0
    shown = b"".join(chunks).decode()
    assert '"observation": {...}' in shown and '"observation": {"seat"' not in shown


def test_only_keeps_one_bots_lines() -> None:
    r = invoke("play", "heuristic", f"mine={sys.executable} {RANDOM_BOT}", "--seed", "4",
               "--quiet", "--transcript", "--only", "mine", "--no-colour")
    assert r.exit_code == 0, r.output
    heads = {m.group(1) for x in r.stdout.splitlines()
             if (m := re.match(r"\d\d:\S+\s+\+\s*\S+s\s+\S\S (\S+)", x))}
    assert heads == {"mine", "referee"}  # and the legend line
    r = invoke("play", "heuristic", "lowest", "--transcript", "--only", "bob")
    assert r.exit_code != 0
    assert r.stderr.strip().splitlines()[-1] == (
        "Error: --only bob: no seat is named 'bob'; the seats are heuristic, lowest")
    r = invoke("play", "heuristic", "lowest", "--only", "lowest")
    assert r.exit_code != 0 and "add --transcript" in r.stderr


def test_one_latency_line_per_decision() -> None:
    r = invoke("play", "lowest", f"mine={sys.executable} {RANDOM_BOT}", "--seed", "5",
               "--quiet", "--transcript", "--only", "mine", "--no-colour")
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    answers = [x for x in lines if " <- mine " in x and '"type": "decision"' in x]
    assert answers and all(re.search(r"\[\d+\.\d ms\]$", x) for x in answers)
    assert not any("latency request" in x for x in lines)
    applied = [x for x in lines if " == mine " in x]
    assert len(applied) == len(answers)
    assert all(re.search(r"referee applies '[^']+'$", x) for x in applied)


def test_a_crash_is_called_a_crash() -> None:
    r = invoke("play", "heuristic", f"crasher={sys.executable} {BOTS / 'crash.py'}",
               "--seed", "2", "--quiet", "--transcript", "--no-colour")
    assert r.exit_code == 0, r.output
    fault = next(x for x in r.stdout.splitlines() if " XX crasher " in x)
    assert re.search(r"XX crasher\s+CRASHED at turn \d+: .*\[forfeit\]$", fault), fault
    assert "REJECTED crash" not in r.stdout


def test_a_message_nested_deep_within_the_limit_keeps_the_transcript_on() -> None:
    """A bot's legal decision with a field nested 1000 levels (1024 are allowed) is
    shown, its depth past 64 levels as a note, and the transcript goes on showing
    everything the bot sends after it (the bot attacker's F3: json's recursion limit
    switched the bot's transcript off, hiding its later messages)."""
    r = invoke("play", f"deep={sys.executable} {BOTS / 'deep_legal.py'}", "lowest", "--seed",
               "3", "--quiet", "--transcript", "--full", "--no-colour")
    assert r.exit_code == 0, r.output
    assert "switched off" not in r.output
    received = [x for x in r.stdout.splitlines() if " <- " in x and '"decision"' in x]
    assert '"... (a list nested deeper than 64 levels)"' in received[0]
    assert received[0].count("[") == 64, received[0]
    assert len(received) > 5 and all('"x": "still-here"' in x for x in received[1:])
