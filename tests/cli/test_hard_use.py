"""Defects found by hard use (issue 23): each test failed before its fix.

Tracebacks where a one-line error belongs (a seed out of range, a config that is not
UTF-8, an output folder that cannot be made), a league with no entries, and the
messages a bot author reads (a timeout names the bank, a debug print on stdout is
told where diagnostics go).
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

import pytest

from referee.game.seeds import MAX_SEED

from .cli_helpers import invoke

BIG = str(2**64)


@pytest.mark.parametrize("args", [
    ["play", "random", "random", "--seed", BIG],
    ["play", "random", "random", "--seed", "-1"],
    ["tournament", "quick", "random", "lowest", "--seed", BIG],
    ["match", "random", "lowest", "--seed", BIG],
])
def test_a_seed_out_of_range_is_refused_up_front(args: list[str]) -> None:
    r = invoke(*args)
    assert r.exit_code == 2, r.output
    assert "--seed" in r.stderr and str(MAX_SEED) in r.stderr
    assert "Traceback" not in r.output + r.stderr


def test_a_play_series_whose_last_seed_does_not_fit_is_refused() -> None:
    r = invoke("play", "random", "random", "--seed", str(MAX_SEED), "--games", "2")
    assert r.exit_code == 1
    assert r.stderr.startswith("Error: --seed") and "2**63-1" in r.stderr


def test_the_largest_seed_plays_and_records(tmp_path: Path) -> None:
    rec = tmp_path / "g.jsonl"
    r = invoke("play", "random", "lowest", "--seed", str(MAX_SEED), "--record", str(rec),
               "--quiet")
    assert r.exit_code == 0, r.stderr
    assert invoke("replay", str(rec)).exit_code == 0


@pytest.mark.parametrize("section", ["tournament", "league"])
def test_a_config_seed_out_of_range_is_refused(tmp_path: Path, section: str) -> None:
    cfg = tmp_path / "c.toml"
    bots = '\n[[bots]]\nname = "a"\nbuiltin = "random"\n[[bots]]\nname = "b"\nbuiltin = "lowest"\n'
    cfg.write_text(f"[{section}]\nseed = {2**64}\n" + (bots if section == "tournament" else ""))
    args = (["tournament", "run", str(cfg)] if section == "tournament"
            else ["league", "new", str(tmp_path / "L"), "--config", str(cfg)])
    r = invoke(*args)
    assert r.exit_code != 0, r.output
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert f"{section}.seed" in r.stderr and str(MAX_SEED) in r.stderr
    assert not (tmp_path / "L").exists()


@pytest.mark.parametrize("args", [
    ["tournament", "run", "{cfg}"],
    ["tournament", "schedule", "{cfg}"],
    ["league", "new", "{dir}", "--config", "{cfg}"],
])
def test_a_config_that_is_not_utf8_is_one_line(tmp_path: Path, args: list[str]) -> None:
    cfg = tmp_path / "bad.toml"
    cfg.write_bytes(b'[tournament]\nname = "\xff"\n')
    r = invoke(*[a.format(cfg=cfg, dir=tmp_path / "L") for a in args])
    assert r.exit_code != 0
    assert r.stderr == f"Error: {cfg}: not a UTF-8 text file (byte 22 is 0xff); TOML files are UTF-8\n"


@pytest.mark.parametrize("option,what", [
    ("--bot-log-dir", "the bots' log directory"),
    ("--record-dir", "the records' directory"),
])
def test_an_output_folder_that_cannot_be_made_is_one_line(option: str, what: str) -> None:
    r = invoke("play", "random", f"{sys.executable} -c pass", option, "/proc/nope/x",
               "--sandbox", "off")
    assert r.exit_code == 1, r.output
    assert r.stderr == f"Error: cannot make {what} /proc/nope/x: No such file or directory\n"


def test_a_league_with_no_entries_has_standings_a_run_and_a_report(tmp_path: Path) -> None:
    cfg = tmp_path / "league.toml"
    cfg.write_text("[league]\nseats = [2, 3]\ndeals = 1\nseed = 1\n")
    league = tmp_path / "L"
    assert invoke("league", "new", str(league), "--config", str(cfg)).exit_code == 0
    r = invoke("league", "standings", str(league))
    assert r.exit_code == 0, r.stderr
    assert r.stdout.count("no games played yet") == 2
    r = invoke("league", "run", str(league))
    assert r.exit_code == 0, r.stderr
    assert "played 0 games" in r.stderr
    r = invoke("report", str(league), "-o", str(tmp_path / "site"))
    assert r.exit_code == 0, r.stderr
    assert (tmp_path / "site" / "index.html").is_file()


SLOW_BOT = textwrap.dedent("""\
    import json, sys, time
    print(json.dumps({"type": "hello", "protocol": [1], "name": "slow"}), flush=True)
    for line in sys.stdin:
        m = json.loads(line)
        if m.get("type") == "request":
            if m["id"] == 1:
                time.sleep(10)  # far beyond its time: the referee gives up first
            print(json.dumps({"type": "decision", "id": m["id"], "decision": 0}), flush=True)
    """)


def test_a_timeout_says_how_much_came_from_the_bank(tmp_path: Path) -> None:
    bot = tmp_path / "slow.py"
    bot.write_text(SLOW_BOT)
    r = invoke("play", "random", f"{sys.executable} {bot}", "--sandbox", "off",
               "--move-time", "0.2", "--bank", "0.5", "--seed", "3")
    assert "within 0.700s (0.2 s per decision + 0.500 s left of its bank)" in r.stdout


DEBUG_PRINT_BOT = textwrap.dedent("""\
    import json, sys
    print(json.dumps({"type": "hello", "protocol": [1], "name": "chatty"}), flush=True)
    for line in sys.stdin:
        m = json.loads(line)
        if m.get("type") == "request":
            print("debug: choosing 0", flush=True)
            print(json.dumps({"type": "decision", "id": m["id"], "decision": 0}), flush=True)
    """)


def test_a_debug_print_on_stdout_is_told_where_diagnostics_go(tmp_path: Path) -> None:
    bot = tmp_path / "chatty.py"
    bot.write_text(DEBUG_PRINT_BOT)
    r = invoke("play", "random", f"{sys.executable} {bot}", "--sandbox", "off", "--seed", "3")
    assert '"debug: choosing 0"; stdout carries protocol messages only: print diagnostics ' \
        "to stderr" in r.stdout


def test_schedule_of_a_seedless_file_says_whether_the_run_will_play_those_deals(
        tmp_path: Path) -> None:
    cfg = tmp_path / "t.toml"
    cfg.write_text('[tournament]\ndeals = 1\noutput = "out"\n[[bots]]\nname = "a"\n'
                   'builtin = "random"\n[[bots]]\nname = "b"\nbuiltin = "lowest"\n')
    r = invoke("tournament", "schedule", str(cfg))
    assert r.exit_code == 0, r.stderr
    assert "it will NOT play these deals" in r.stderr and "add 'seed = " in r.stderr
    assert invoke("tournament", "run", str(cfg), "-q", "--jobs", "1").exit_code == 0
    seed = json.loads(invoke("tournament", "standings", str(tmp_path / "out"),
                             "--format", "json").stdout)["seed"]
    r = invoke("tournament", "schedule", str(cfg))
    assert f"these are the deals of the tournament in {tmp_path / 'out'} (seed {seed}," \
        in r.stderr
