"""What organisers ran into (issue 16), through the CLI: bot commands checked before
the first game, a bot that cannot play stopped, bot specs as commands, tournaments
from flags alone ('quick') and a starter file ('init'), a warning for a variants
list without play_out, a first ETA worth reading."""

from __future__ import annotations

import io
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from referee.cli.main import main
from referee.tournament.config import load_config
from referee.tournament.driver import Progress
from tests.procs import scaled

pytestmark = pytest.mark.slow

PY = sys.executable
TWO = """
[[bots]]
name = "heuristic"
builtin = "heuristic"
[[bots]]
name = "lowest"
builtin = "lowest"
"""


def invoke(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return r.exit_code, r.stdout, r.stderr


def write(tmp_path: Path, body: str) -> Path:
    p = tmp_path / "t.toml"
    p.write_text(body)
    return p


def test_a_missing_script_or_one_not_executable_is_refused_before_the_first_game(
        tmp_path: Path) -> None:
    (tmp_path / "first.py").write_text("print('never run')\n")  # not executable
    (tmp_path / "cbot").write_bytes(b"\x7fELF\x02\x01\x01" + bytes(57))  # compiled, no +x
    (tmp_path / "bot.js").write_text("console.log('never run')\n")
    for command, words in [
        ("python3 frist.py", "bot 'python3 frist.py': no such file 'frist.py'; check the path "
                             "(relative to the bot directory)"),
        ("./first.py", "bot './first.py': './first.py' is not executable; run 'chmod +x "
                       "./first.py' or give its interpreter: 'python3 ./first.py'"),
        # a compiled program needs only its bit (no interpreter to suggest)
        ("./cbot", "bot './cbot': './cbot' is not executable; run 'chmod +x ./cbot'"),
        ("./bot.js", "bot './bot.js': './bot.js' is not executable; run 'chmod +x ./bot.js' "
                     "or give its interpreter: 'node ./bot.js'"),
    ]:
        p = write(tmp_path, '[tournament]\noutput = "out"\n' + TWO
                  + f'[[bots]]\nname = "mine"\ncommand = "{command}"\n')
        code, _, err = invoke("tournament", "run", str(p), "-q")
        assert code == 1
        assert err == f"Error: bots[2] (mine).command: {words}\n"
        assert not (tmp_path / "out").exists()  # nothing was started


def test_a_bot_failing_its_first_games_is_stopped(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("import sys\nsys.exit('ImportError: no module named numpy')\n")
    p = write(tmp_path, '[tournament]\ndeals = 4\noutput = "out"\n[faults]\nstop_after = 2\n'
              + TWO + f'[[bots]]\nname = "broken"\ncommand = "{PY} {broken}"\n')
    code, out, err = invoke("tournament", "run", str(p), "--jobs", "1")
    assert code == 0, err
    # Progress says so when it happens...
    assert ("stopped broken: it failed in each of its first 2 games; the first: crash: broken "
            "ended before its hello: the bot process exited with code 1; last stderr: "
            "ImportError: no module named numpy; its 14 remaining games are forfeited without "
            "starting it ([faults] stop_after = 2)") in err
    code, js, _ = invoke("tournament", "standings", str(tmp_path / "out"), "--format", "json")
    row = next(r for r in json.loads(js)["standings"] if r["bot"] == "broken")
    # (The worker may have begun its next game before it was told: one more crash.)
    assert row["crashes"] in (2, 3)
    assert (row["games"], row["crashes"] + row["stopped"], row["forfeits"]) == (16, 16, 16)
    # ...and the standings.
    assert ("broken was stopped: it failed in each of its first games (a crash or no hello), "
            f"so {row['stopped']} of its games were forfeited without starting it") in out
    # Its remaining games were played by the others, without starting it again.
    db = sqlite3.connect(tmp_path / "out" / "tournament.sqlite")
    assert db.execute("SELECT COUNT(*) FROM games").fetchone()[0] == 24
    # Resumed, it stays stopped (and is said to be).
    code, _, err = invoke("tournament", "run", str(p), "--jobs", "1")
    assert code == 0 and err.startswith("resumed: 24 of 24 games were already played")


def test_a_tournament_command_is_a_bot_spec(tmp_path: Path) -> None:
    p = write(tmp_path, '[tournament]\ndeals = 1\noutput = "out"\n' + TWO
              + '[[bots]]\nname = "ex"\ncommand = "example:python-random"\n'
              + '[[bots]]\nname = "exz"\ncommand = "zmq:example:python-random"\n')
    cfg = load_config(p)
    ex, exz = cfg.bot("ex"), cfg.bot("exz")
    assert ex.transport == "stdio" and exz.transport == "zmq"
    assert ex.command is not None and ex.command[-1].endswith("example_bots/python/random_bot.py")
    code, out, err = invoke("tournament", "run", str(p), "--jobs", "1", "--format", "json")
    assert code == 0, err
    rows = {r["bot"]: r for r in json.loads(out)["standings"]}
    assert rows["ex"]["games"] == rows["exz"]["games"] == 6
    assert all(r["crashes"] == r["forfeits"] == 0 for r in rows.values())
    bad = write(tmp_path, TWO + '[[bots]]\nname = "h"\ncommand = "heuristic"\n')
    code, _, err = invoke("tournament", "schedule", str(bad))
    assert code == 1 and "'heuristic' is a builtin bot, not a command: write builtin = " \
                         "\"heuristic\" instead" in err


def test_quick_runs_a_round_robin_from_flags_alone(tmp_path: Path) -> None:
    out = tmp_path / "q"
    code, text, err = invoke("tournament", "quick", "heuristic", "lowest", "random",
                             "--seats", "2", "--deals", "2", "--jobs", "2", "--seed", "4",
                             "-o", str(out))
    assert code == 0, err
    assert err.startswith("quick tournament: round-robin of heuristic, lowest, random; 2 seats, "
                          "2 deals per lineup, 2 seatings per deal: 12 games; seed 4")
    assert text.startswith("quick-4: 12 games, 2 seats")
    for bot in ("heuristic", "lowest", "random"):
        assert f"  {bot} " in text
    code, _, err = invoke("tournament", "quick", "heuristic", "lowest", "random", "--seats", "2",
                          "--deals", "2", "--seed", "4", "-o", str(out))
    assert code == 0 and "resumed: 12 of 12 games were already played" in err
    code, _, err = invoke("tournament", "quick", "heuristic", "human")
    assert code == 1 and "a human bot cannot play a quick tournament" in err


def test_quick_through_the_installed_command(tmp_path: Path) -> None:
    referee = Path(PY).parent / "referee"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    p = subprocess.run([str(referee), "tournament", "quick", "heuristic", "lowest", "random",
                        "--seats", "2", "--deals", "3", "--jobs", "2", "--format", "csv"],
                       capture_output=True, text=True, timeout=scaled(120), cwd=tmp_path, env=env)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("bot,rank,games") and len(lines) == 4
    assert list((tmp_path / "runs").iterdir())[0].name.startswith("quick-")


def test_init_writes_a_starter_file_that_runs(tmp_path: Path) -> None:
    f = tmp_path / "league.toml"
    code, out, err = invoke("tournament", "init", str(f))
    assert code == 0, err
    assert out == f"wrote {f}: edit the [[bots]], then run 'referee tournament run {f}'\n"
    text = f.read_text()
    assert "[tournament]" in text and "per_decision = 1.0" in text and "(--move-time)" in text
    cfg = load_config(f)
    assert cfg.name == "league" and cfg.game.has("play_out")
    assert [b.name for b in cfg.bots] == ["heuristic", "lowest", "mybot"]
    code, sched, _ = invoke("tournament", "schedule", str(f))
    assert code == 0 and "120 games: 60 deals, 2 seatings per deal" in sched
    code, _, err = invoke("tournament", "init", str(f))
    assert code == 1 and err.startswith(f"Error: {f} exists already")
    assert invoke("tournament", "init", str(f), "--force")[0] == 0


def test_a_variants_list_without_play_out_is_warned_about(tmp_path: Path) -> None:
    p = write(tmp_path, '[rules]\nvariants = ["may_decline"]\n' + TWO)
    code, _, err = invoke("tournament", "schedule", str(p))
    assert code == 0
    assert err.startswith(f"warning: {p}: rules.variants leaves out play_out, which "
                          f"tournaments use by default")
    code, _, err = invoke("tournament", "schedule", str(write(tmp_path, TWO)))
    assert code == 0 and "warning" not in err


def test_the_first_eta_waits_for_a_measured_pace() -> None:
    class Clock:
        t = 0.0

        def __call__(self) -> float:
            return self.t

    out, clock = io.StringIO(), Clock()
    p = Progress(100, 0, stream=out, tty=False, clock=clock)
    clock.t = 5.0  # starting the workers and bots took 5 s
    p.advance()
    assert out.getvalue().splitlines()[-1] == "1/100 games  -- games/s  --:-- left"
    for _ in range(19):
        clock.t += 0.1
        p.advance()
    # 19 games in 1.9 s since the first: 10 games/s, 80 left -- not 20 games in 6.9 s.
    assert out.getvalue().splitlines()[-1] == "20/100 games  10.0 games/s  0:08 left"


def test_a_key_above_every_table_is_told_where_it_belongs(tmp_path: Path) -> None:
    p = write(tmp_path, 'name = "league"\n' + TWO)
    code, _, err = invoke("tournament", "run", str(p))
    assert code == 1
    assert err == (f"Error: {p}: name: unknown key; it belongs in a table: write it under "
                   f"[tournament]; expected one of tournament, rules, time, faults, remote, "
                   f"sandbox, scores, bots\n")
