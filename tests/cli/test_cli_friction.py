"""What new users ran into with ``referee play``, ``replay`` and ``--help`` (issue 16):
hints for the classic mistakes, one error style, the deck file's whole command,
seats that rotate in a match, the error line a bot can read, memory limits."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.cli_helpers import env_for_subprocess, invoke, referee_command
from tests.procs import scaled

pytestmark = pytest.mark.slow

PY = sys.executable


def _run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([referee_command(), *args], capture_output=True, text=True,
                          timeout=scaled(60), env=env_for_subprocess(), cwd=cwd)


def test_an_unquoted_command_is_detected_and_the_quoting_suggested(tmp_path: Path) -> None:
    # What the shell makes of: referee play heuristic zmq:node bot.js
    p = _run("play", "heuristic", "zmq:node", "bot.js", cwd=tmp_path)
    assert p.returncode == 1
    assert p.stderr == ("Error: 'zmq:node bot.js' looks like one bot's command line split into "
                        "2 bots by the shell: quote the whole command, as in "
                        "\"zmq:node bot.js\"\n")
    r = invoke("play", "heuristic", "python3", "-u", "--", "my bot.py")
    assert r.exit_code == 2  # '-u' is taken for an option: a usage error, one line
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("Error: No such option '-u'")
    r = invoke("play", "heuristic", "python3", "mybot.py")
    assert r.exit_code == 1
    assert "quote the whole command, as in \"python3 mybot.py\"" in r.stderr


def test_a_misspelt_builtin_gets_did_you_mean() -> None:
    r = invoke("play", "heuristic", "heurstic")
    assert r.exit_code == 1 and "(did you mean 'heuristic'?)" in r.stderr
    r = invoke("play", "heuristic", "exmple:js")
    assert r.exit_code == 1 and "did you mean 'example:'?" in r.stderr


def test_nothing_on_stdout_gets_the_flush_hint() -> None:
    r = invoke("play", "heuristic", "sh -c 'read x; sleep 10'", "--startup", "0.3", "-q")
    assert r.exit_code == 0
    assert "sent no hello within the startup limit of 0.300s; nothing at all arrived on its " \
           "stdout: is stdout flushed? most languages buffer a pipe" in r.stdout


def test_a_bot_reads_the_error_line_before_it_is_ended(tmp_path: Path) -> None:
    # Sends a decision before its hello; the referee answers 'error' and must give it
    # a moment to read that line before ending it.
    seen = tmp_path / "seen.txt"
    bot = tmp_path / "early.py"
    bot.write_text("\n".join([
        "import json, sys",
        "print(json.dumps({'type': 'decision', 'id': 1, 'decision': 0}), flush=True)",
        "line = sys.stdin.readline()",
        f"open({str(seen)!r}, 'w').write(line)",
    ]))
    # Unsandboxed: the bot notes what it read outside its folder.
    r = invoke("play", "heuristic", f"{PY} {bot}", "-q", "--sandbox", "off")
    assert r.exit_code == 0
    got = json.loads(seen.read_text())
    assert got["type"] == "error" and got["code"] == "protocol"
    assert "expected a hello" in got["message"]


def test_write_deck_prints_the_command_that_plays_the_same_game(tmp_path: Path) -> None:
    rec = tmp_path / "g.jsonl"
    assert invoke("play", "heuristic", "random", "--seed", "8", "-V", "may_decline,ones_reverse",
                  "--record", str(rec), "-q").exit_code == 0
    deck = tmp_path / "deal.txt"
    r = invoke("replay", str(rec), "--check", "--write-deck", str(deck))
    assert r.exit_code == 0
    command = r.stdout.splitlines()[1].strip()
    assert command == (f"referee play heuristic random --deck-file {deck} --first-player "
                       f"{json.loads(rec.read_text().splitlines()[0])['first_player']} --seed 8 "
                       f"-V may_decline,ones_reverse")
    assert f"# Play it again with: {command.replace(str(deck), 'FILE')}" in deck.read_text()
    again = tmp_path / "again.jsonl"
    words = shlex.split(command)[1:] + ["--record", str(again), "-q"]
    assert invoke(*words).exit_code == 0

    def decisions(p: Path) -> list[str]:
        return [json.loads(x)["decision"] for x in p.read_text().splitlines()
                if json.loads(x)["type"] == "decision"]

    assert decisions(again) == decisions(rec)  # the same game


def test_a_match_rotates_the_seats_unless_told_not_to() -> None:
    r = invoke("play", "heuristic", "random", "lowest", "--games", "3", "--seed", "3", "--json")
    games = json.loads(r.stdout)["games"]
    assert [g["bots"] for g in games] == [["heuristic", "random", "lowest"],
                                          ["random", "lowest", "heuristic"],
                                          ["lowest", "heuristic", "random"]]
    r = invoke("play", "heuristic", "random", "--games", "2", "--seed", "3", "--no-rotate",
               "--json")
    assert [g["bots"] for g in json.loads(r.stdout)["games"]] == [["heuristic", "random"]] * 2
    text = invoke("play", "heuristic", "random", "--games", "2", "--seed", "3").stdout
    assert "the seats rotate from game to game" in text and "first seat" in text
    # Who won each game is named by the bot that sat there.
    assert all(line.split("won by ")[1].split(" [")[0] in ("heuristic", "random")
               for line in text.splitlines() if line.startswith("game "))


def test_play_memory_limit_and_its_hint(tmp_path: Path) -> None:
    bot = tmp_path / "hungry.py"
    bot.write_text("\n".join([
        "import json, sys",
        "print(json.dumps({'type': 'hello', 'protocol': [1], 'name': 'hungry'}), flush=True)",
        "for line in sys.stdin:",
        "    if json.loads(line)['type'] == 'request':",
        "        big = bytearray(300 * 1024 * 1024)",
    ]))
    r = invoke("play", "heuristic", f"{PY} {bot}", "--memory-mb", "200", "-q",
               "--sandbox", "off")
    assert r.exit_code == 0
    assert "MemoryError" in r.stdout
    assert "it ran under a memory limit of 200 MB" in r.stdout
    boxed = invoke("play", "heuristic", f"{PY} {bot}", "--memory-mb", "200", "-q",
                   "--sandbox", "on")
    assert boxed.exit_code == 0
    assert "out of memory under the 200 MB limit of its sandbox" in boxed.stdout


@pytest.mark.parametrize("args", [[], ["tournament"], ["keys"]])
def test_command_summaries_are_whole_sentences(args: list[str]) -> None:
    r = invoke(*args, "--help")
    assert r.exit_code == 0
    commands = r.stdout.split("Commands:")[1]
    assert "..." not in commands.replace("BOT...", "BOT")  # none cut short
    assert "verify it by re-running it." in commands or args
    if args == ["tournament"]:
        assert "quick" in commands and "init" in commands


@pytest.mark.parametrize("args", [["tournament", "run"], ["tournament", "standings"],
                                  ["tournament", "schedule"], ["tournament", "quick"],
                                  ["tournament", "init"], ["replay"], ["check-bot"], ["play"]])
def test_every_command_has_examples(args: list[str]) -> None:
    r = invoke(*args, "--help")
    assert r.exit_code == 0 and "Examples:" in r.stdout, r.stdout


def test_options_are_described_and_run_points_to_the_keys() -> None:
    play = invoke("play", "--help").stdout
    assert "--turn-limit INTEGER RANGE Turns after which the game ends" in " ".join(play.split())
    standings = invoke("tournament", "standings", "--help").stdout
    assert "markdown: for a README" in " ".join(standings.split())
    run = " ".join(invoke("tournament", "run", "--help").stdout.split())
    assert "tournaments/README.md lists every key" in run and "tournament init FILE" in run
    top = invoke("--help").stdout
    assert "Exit status (every command):" in top and "130" in top


def test_usage_errors_are_one_line_everywhere() -> None:
    for args in (["tournament", "run"], ["tournament", "run", "--bogus", "x"],
                 ["replay"], ["check-bot"], ["nosuchcommand"]):
        r = invoke(*args)
        assert r.exit_code == 2, args
        assert r.stderr.count("\n") == 1 and r.stderr.startswith("Error: "), r.stderr
    p = _run("tournament", "run", "missing.toml")
    assert p.returncode == 1 and p.stderr.startswith("Error: missing.toml: cannot read")


def test_node_under_a_small_memory_limit_gets_the_hint() -> None:
    import os
    import shutil

    if shutil.which("node") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("Node.js is needed for this test in CI")
        pytest.skip("Node.js is not installed")
    # Node reserves more address space than this to start: "Fatal process OOM", SIGTRAP.
    r = invoke("play", "heuristic", "example:js", "--memory-mb", "256", "-q",
               "--sandbox", "off")
    assert r.exit_code == 0
    assert "example-js ended before its hello" in r.stdout
    assert "it ran under a memory limit of 256 MB" in r.stdout
    # The sandbox limits what it uses (a cgroup), not what it reserves: it plays.
    boxed = invoke("play", "heuristic", "example:js", "--memory-mb", "256", "-q",
                   "--sandbox", "on")
    assert boxed.exit_code == 0 and "faults: none" in boxed.stdout
