"""The installed ``referee`` command, run as a user would run it (a subprocess)."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.cli.cli_helpers import env_for_subprocess, referee_command, write_deal
from tests.procs import Children, scaled

pytestmark = pytest.mark.slow

#: The smallest pipe buffer Linux allows: one page.
PIPE_PAGE = 4096


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([referee_command(), *args], capture_output=True, text=True,
                          timeout=scaled(30), env=env_for_subprocess())


def test_play_record_and_replay(tmp_path: Path) -> None:
    deal = write_deal(tmp_path)
    rec = tmp_path / "g.jsonl"
    p = _run("play", "heuristic", "heuristic", "--deck-file", str(deal), "--first-player", "0",
             "--record", str(rec), "--json")
    assert p.returncode == 0, p.stderr
    game = json.loads(p.stdout)["games"][0]
    assert (game["places"], game["points"], game["record"]) == ([1, 2], [0, 30], str(rec))
    p = _run("replay", str(rec), "--seat", "0")
    assert p.returncode == 0, p.stderr
    assert "verified:" in p.stdout and "heuristic-2 [1] is dealt six cards" in p.stdout


def test_play_help_documents_the_bot_syntax() -> None:
    p = _run("play", "--help")
    assert p.returncode == 0
    for word in ("example:python-random", "zmq:COMMAND", "stdio:COMMAND", "--transcript",
                 "--human", "--deck-file", "--record-dir", "match_scoring"):
        assert word in p.stdout, word


def test_a_mistake_is_one_line_without_a_traceback(tmp_path: Path) -> None:
    p = _run("play", "heuristic", "definitely-not-a-bot-program")
    assert p.returncode == 1
    assert p.stderr.strip().count("\n") == 0 and p.stderr.startswith("Error: unknown bot command")
    p = _run("replay", str(tmp_path / "nope.jsonl"))
    assert p.returncode == 1 and "Traceback" not in p.stderr and "no such file" in p.stderr


def test_output_into_a_reader_that_stops_ends_quietly(tmp_path: Path,
                                                     children: Children) -> None:
    rec = tmp_path / "g.jsonl"
    assert _run("play", "heuristic", "random", "--seed", "3", "--quiet", "--record",
                str(rec)).returncode == 0
    # The replay must still have output to write when the reader has gone: its pipe
    # holds one page, far less than the replay (a pipe of 64 KiB could take all of it,
    # and the replay would end, rightly, with 0 before 'head' had read a line).
    assert len(_run("replay", str(rec)).stdout.encode()) > 4 * PIPE_PAGE
    r, w = os.pipe()
    fcntl.fcntl(w, fcntl.F_SETPIPE_SZ, PIPE_PAGE)
    # 'head -1' reads one line and exits; the replay goes on writing into a closed pipe.
    referee = children.popen([referee_command(), "replay", str(rec)], stdout=w,
                             stderr=subprocess.PIPE, env=env_for_subprocess())
    os.close(w)
    assert referee.stderr is not None
    head = subprocess.run(["head", "-1"], stdin=r, capture_output=True, text=True)
    os.close(r)
    err = referee.stderr.read().decode()
    assert referee.wait(scaled(30)) == 141, err
    assert head.stdout.startswith("game g")
    assert err == ""  # no 'Error: cannot write the deck file None', no traceback
