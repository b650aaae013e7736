"""Tournament configuration files: what a good one becomes, and that every mistake
is one line naming the key and what would be right."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from referee.cli.main import main
from referee.tournament import TournamentConfigError, load_config

BOTS = """
[[bots]]
name = "a"
builtin = "heuristic"
[[bots]]
name = "b"
builtin = "lowest"
[[bots]]
name = "c"
builtin = "random"
"""

REPO = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "t.toml"
    p.write_text(text)
    return p


def test_full_configuration_is_read(tmp_path: Path) -> None:
    p = write(tmp_path, """
[tournament]
name = "league"
format = "gauntlet"
seats = 3
deals = 7
seed = 42
seating = "all"
challengers = ["a"]
jobs = 2
output = "out/league"
[rules]
variants = ["ones_reverse"]
colours = 5
turn_limit = 300
[time]
per_decision = 0.5
bank = 3
[faults]
policy = "forfeit"
strike_limit = 1
""" + BOTS + """
[[bots]]
name = "ext"
command = "python3 bot.py --level 2"
cwd = "bots"
env = { LEVEL = "2" }
memory_mb = 256
""")
    c = load_config(p)
    assert (c.name, c.format, c.seats, c.deals, c.seed, c.seating) == ("league", "gauntlet", 3, 7, 42, "all")
    assert c.challengers == ("a",) and c.jobs == 2
    assert c.output_dir == (tmp_path / "out" / "league").resolve()
    assert c.game.players == 3 and c.game.variants == {"ones_reverse"}
    assert c.game.colours == 5 and c.game.turn_limit == 300
    assert (c.time.per_decision, c.time.bank, c.time.startup) == (0.5, 3.0, 10.0)
    assert (c.faults.mode, c.faults.strike_limit) == ("forfeit", 1)
    ext = c.bot("ext")
    assert ext.command == ("python3", "bot.py", "--level", "2")
    assert ext.env == (("LEVEL", "2"),) and ext.memory_mb == 256
    assert c.resolve(ext.cwd) == str((tmp_path / "bots").resolve())
    assert c.bot("a").kind == "builtin" and ext.kind == "external"


def test_defaults_play_out_and_two_seats(tmp_path: Path) -> None:
    c = load_config(write(tmp_path, BOTS))
    assert c.format == "round-robin" and c.seats == 2 and c.seating == "rotate"
    assert c.game.variants == {"play_out"}  # RULES §4: full placings in tournaments
    assert c.output_dir == (tmp_path / "runs" / "tournament").resolve()


def test_fingerprint_ignores_jobs_and_output_but_not_the_seed(tmp_path: Path) -> None:
    a = load_config(write(tmp_path, "[tournament]\njobs = 1\n" + BOTS)).fingerprint()
    b = load_config(write(tmp_path, '[tournament]\njobs = 2\noutput = "x"\n' + BOTS)).fingerprint()
    c = load_config(write(tmp_path, "[tournament]\nseed = 9\n" + BOTS)).fingerprint()
    assert a == b != c


MISTAKES = [
    ("[tournament]\nseats = 7\n" + BOTS, "tournament.seats: must be a whole number from 2 to 6, not 7"),
    ("[tournament]\nseat = 3\n" + BOTS, "tournament.seat: unknown key; did you mean 'seats'?"),
    ('[tournament]\nformat = "swiss"\n' + BOTS, "tournament.format: must be one of round-robin, gauntlet, balanced"),
    ('[tournament]\nformat = "round_robin"\n' + BOTS, "(did you mean 'round-robin'?)"),
    ("[tournament]\ndeals = 0\n" + BOTS, "tournament.deals: must be a whole number of 1 or more, not 0"),
    ("[tournament]\ndeals = 2.5\n" + BOTS, "tournament.deals: must be a whole number"),
    ('[tournament]\nformat = "balanced"\n' + BOTS, "tournament.games: the balanced format needs the number of games"),
    ('[tournament]\nformat = "balanced"\ngames = 7\n' + BOTS, "tournament.games: must be a multiple of 2"),
    ('[tournament]\nformat = "gauntlet"\n' + BOTS, "tournament.challengers: a gauntlet needs its challengers"),
    ('[tournament]\nformat = "gauntlet"\nchallengers = ["z"]\n' + BOTS, "'z' is not a bot of [[bots]]: choose from a, b, c"),
    ('[tournament]\nchallengers = ["a"]\n' + BOTS, "only a gauntlet has challengers"),
    ("[tournament]\nseats = 4\n" + BOTS, "bots: 4 seats need at least 4 bots, 3 given"),
    ("[rules]\nvariants = [\"play_outt\"]\n" + BOTS, "rules.variants: unknown variant 'play_outt'"),
    ("[rules]\ncolours = 1\n" + BOTS, "rules: a deck of 12 cards is too small for 2 players"),
    ("[time]\nper_decision = -1\n" + BOTS, "time.per_decision: must be a number of seconds, 0 or more, not -1"),
    ('[faults]\npolicy = "ignore"\n' + BOTS, "faults.policy: must be one of substitute, forfeit"),
    ("[tournament]\nseats = 2\n", "bots: no bots; add [[bots]] tables"),
    (BOTS + '[[bots]]\nname = "a"\nbuiltin = "random"\n', "bots[3] (a).name: 'a' is used by two bots"),
    (BOTS + '[[bots]]\nname = "d"\n', "bots[3] (d): give exactly one of builtin"),
    (BOTS + '[[bots]]\nname = "d"\nbuiltin = "clever"\n', "bots[3] (d).builtin: must be one of random, lowest, heuristic"),
    (BOTS + '[[bots]]\nname = "d"\nbuiltin = "random"\ncwd = "x"\n', "bots[3] (d).cwd: only applies to an external bot"),
    (BOTS + '[[bots]]\nname = "d"\ncommand = "x"\ntransport = "tcp"\n', "bots[3] (d).transport: must be one of stdio, zmq"),
    (BOTS + '[[bots]]\nname = "d"\ncommand = []\n', "bots[3] (d).command: must be a command line or a list of words"),
    (BOTS + '[[bots]]\nname = "d"\npython = "nocolon"\n', 'bots[3] (d).python: must be "path/to/file.py:Class"'),
    ("[tournament\n" + BOTS, "not valid TOML"),
    ("[rulez]\n" + BOTS, "rulez: unknown key; did you mean 'rules'?"),
]


@pytest.mark.parametrize(("text", "expected"), MISTAKES)
def test_mistakes_name_the_key(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(TournamentConfigError) as e:
        load_config(write(tmp_path, text))
    message = str(e.value)
    assert expected in message
    assert message.startswith(str(tmp_path / "t.toml") + ": ")
    assert "\n" not in message


def test_cli_reports_a_mistake_in_one_line_without_traceback(tmp_path: Path) -> None:
    p = write(tmp_path, "[tournament]\nseats = 9\n" + BOTS)
    for args in (["tournament", "run", str(p)], ["tournament", "schedule", str(p)]):
        r = CliRunner().invoke(main, args)
        assert r.exit_code == 1  # the exit status of every command's errors
        lines = r.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("Error: ")
        assert "tournament.seats: must be a whole number from 2 to 6" in lines[0]
        assert "Traceback" not in r.output


def test_an_unloadable_python_bot_is_named_before_any_game(tmp_path: Path) -> None:
    p = write(tmp_path, BOTS + '[[bots]]\nname = "d"\npython = "missing.py:Bot"\n')
    r = CliRunner().invoke(main, ["tournament", "run", str(p), "-q"])
    assert r.exit_code == 1
    assert "bots[3] (d).python: cannot load 'missing.py:Bot'" in r.output
    assert not (tmp_path / "runs").exists()


def test_a_missing_external_program_is_named(tmp_path: Path) -> None:
    p = write(tmp_path, BOTS + '[[bots]]\nname = "d"\ncommand = "no-such-program-xyz"\n')
    r = CliRunner().invoke(main, ["tournament", "run", str(p), "-q"])
    assert r.exit_code == 1
    assert ("Error: bots[3] (d).command: unknown bot command 'no-such-program-xyz'"
            in r.output)
    assert "it is not on PATH" in r.output


@pytest.mark.parametrize("path", sorted((REPO / "tournaments").glob("*.toml")), ids=lambda p: p.name)
def test_shipped_configurations_load(path: Path) -> None:
    c = load_config(path)
    assert len(c.bots) >= 2
