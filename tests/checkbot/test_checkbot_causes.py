"""``referee check-bot`` through the command line: one line per root cause, no row
failed for what the protocol allows or what the referee did itself, hints for the
classic mistakes, bot specs as for ``play``, and ``--memory-mb`` (issue 16)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from referee.cli.main import main
from tests.procs import scaled

pytestmark = pytest.mark.slow

PY = sys.executable


def check_bot(*args: str) -> Result:
    return CliRunner().invoke(main, ["check-bot", *args], catch_exceptions=False)


def rows(output: str) -> dict[str, str]:
    """check name -> result (PASS, FAIL (1), skip) from the rendered table."""
    out: dict[str, str] = {}
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("check "))
    for line in lines[start + 2:]:
        if not line.strip():
            break
        if line.startswith(" "):
            continue  # a wrapped detail
        for result in ("PASS", "FAIL", "skip"):
            name, sep, rest = line.partition(f"  {result}")
            if sep:
                out[name.strip()] = result + (rest.split()[0] if rest.startswith(" (") else "")
                break
    return out


def slow_bot(tmp_path: Path, every: int, sleep: float) -> str:
    """A bot that answers at once, but every ``every``-th request after ``sleep`` s."""
    p = tmp_path / "slowish.py"
    p.write_text("\n".join([
        "import json, sys, time",
        "def say(m): print(json.dumps(m), flush=True)",
        "say({'type': 'hello', 'protocol': [1], 'name': 'slowish'})",
        "n = 0",
        "for line in sys.stdin:",
        "    msg = json.loads(line)",
        "    if msg['type'] == 'bye': break",
        "    if msg['type'] == 'request':",
        "        n += 1",
        f"        if n % {every} == 0: time.sleep({sleep})",
        "        say({'type': 'decision', 'id': msg['id'], 'decision': 0})",
    ]))
    return f"{PY} {p}"


def test_a_now_and_then_slow_bot_has_one_root_cause(tmp_path: Path) -> None:
    r = check_bot(slow_bot(tmp_path, 60, 0.35), "--per-decision", "0.1", "--bank", "0")
    assert r.exit_code == 1
    lines = r.output.splitlines()
    # The root causes come first (after the command and the sandbox it ran in): one,
    # the timeouts, with how slow the bot was.
    assert lines[1].startswith("sandbox: ")
    lines = lines[1:]
    assert lines[2] == "1 root cause (the rows below that fail from each give its number):"
    assert lines[3].startswith("  1. ")
    took = re.search(r" timeouts: the bot took up to (\d+\.\d+) s against", lines[3])
    assert took is not None and float(took.group(1)) >= 0.3, lines[3]  # it slept 0.35 s
    assert "against a 0.1 s limit per decision" in lines[3]
    assert lines[4] == ""
    status = rows(r.output)
    # Not failed: the referee restarts nothing here, late replies are harmless
    # (PROTOCOL.md), and the timeouts are not a failure to ignore unknown messages.
    assert status["stays up across games"] == "PASS"
    assert status["answers each request once"] == "PASS"
    assert status["ignores unknown messages and fields"] == "PASS"
    assert status["carries on after 'rejected'"] == "PASS"
    assert status["decision: play"] == "PASS"
    assert status["decides in time"] == "FAIL(1)"
    assert all(v in ("PASS", "FAIL(1)", "skip") for v in status.values()), status
    assert r.output.count("--- cause ") == 1  # one transcript, not one per row
    assert r.output.rstrip().splitlines()[-1].startswith("FAILED (1 root cause): ")


def test_a_bot_with_several_bugs_gets_one_line_per_bug(tmp_path: Path) -> None:
    # Illegal answers ('pass' is never a decision) and a second answer each time.
    p = tmp_path / "buggy.py"
    p.write_text("\n".join([
        "import json, sys",
        "def say(m): print(json.dumps(m), flush=True)",
        "say({'type': 'hello', 'protocol': [1], 'name': 'buggy'})",
        "for line in sys.stdin:",
        "    msg = json.loads(line)",
        "    if msg['type'] == 'bye': break",
        "    if msg['type'] == 'request':",
        "        say({'type': 'decision', 'id': msg['id'], 'decision': 'pass'})",
        "        say({'type': 'decision', 'id': msg['id'], 'decision': 0})",
    ]))
    r = check_bot(f"{PY} {p}")
    assert r.exit_code == 1
    causes = [line for line in r.output.splitlines() if line.startswith("  ") and ". " in line[:6]]
    assert any(" illegal decisions: the first: " in c for c in causes), r.output
    assert any("answers each request once" in c for c in causes), r.output
    assert len(causes) == r.output.count("--- cause ")
    assert f"FAILED ({len(causes)} root causes)" in r.output


def test_nothing_on_stdout_gets_the_flush_hint_and_a_true_summary() -> None:
    r = check_bot("--startup", "0.5", "sh -c 'read x; sleep 10'")
    assert r.exit_code == 1
    assert "nothing at all arrived on its stdout: is stdout flushed? most languages buffer " \
           "a pipe" in r.output
    # Nothing passed: the summary says so.
    assert r.output.rstrip().endswith("0 of 2 checks passed, 1 failed, 1 skipped")


def test_check_bot_takes_the_bot_specs_of_play() -> None:
    r = check_bot("example:python-random", "--per-decision", str(scaled(2.0)))
    assert r.exit_code == 0, r.output
    assert "example_bots/python/random_bot.py over stdio" in r.output.splitlines()[0]
    assert re.search(r"PASSED: (\d+) of \1 checks passed$", r.output.rstrip())
    bad = check_bot("heuristic")
    assert bad.exit_code == 1
    assert bad.output.startswith("Error: check-bot checks a bot program, and 'heuristic' is a "
                                 "builtin bot")
    typo = check_bot("example:pyhton-random")
    assert typo.exit_code == 1 and "did you mean 'example:python-random'?" in typo.output


def test_a_zmq_spec_chooses_the_transport() -> None:
    r = check_bot("zmq:sh -c 'sleep 10'", "--startup", "0.3")
    assert r.exit_code == 1
    assert r.output.splitlines()[0] == "check-bot: sh -c 'sleep 10' over zmq"
    clash = check_bot("zmq:sh -c 'sleep 10'", "--transport", "stdio")
    assert clash.exit_code == 1 and "drop one of them" in clash.output


def test_memory_limit_and_the_hint_when_a_bot_dies_under_it(tmp_path: Path) -> None:
    p = tmp_path / "hungry.py"
    p.write_text("\n".join([
        "import json, sys",
        "print(json.dumps({'type': 'hello', 'protocol': [1], 'name': 'hungry'}), flush=True)",
        "big = None",
        "for line in sys.stdin:",
        "    msg = json.loads(line)",
        "    if msg['type'] == 'bye': break",
        "    if msg['type'] == 'request':",
        "        big = big or bytearray(int(sys.argv[1]) * 1024 * 1024)  # once",
        "        print(json.dumps({'type': 'decision', 'id': msg['id'], 'decision': 0}),",
        "              flush=True)",
    ]))
    # Without the sandbox the limit is an address-space limit: the allocation fails.
    r = check_bot(f"{PY} {p} 300", "--memory-mb", "200", "--sandbox", "off")
    assert r.exit_code == 1
    assert "MemoryError" in r.output
    assert "it ran under a memory limit of 200 MB" in r.output
    assert "the limit is the likely cause" in r.output
    # In the sandbox it holds for the whole tree (a cgroup), and the kernel says so.
    boxed = check_bot(f"{PY} {p} 300", "--memory-mb", "200", "--sandbox", "on")
    assert boxed.exit_code == 1
    assert "out of memory under the 200 MB limit of its sandbox" in boxed.output
    # Within the limit it does not die, and no hint is given.
    ok = check_bot(f"{PY} {p} 20", "--memory-mb", "200", "--per-decision", str(scaled(5.0)))
    assert "memory limit" not in ok.output and "MemoryError" not in ok.output
