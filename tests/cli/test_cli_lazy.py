"""The commands are loaded lazily (referee/cli/main.py ``COMMANDS``, click's "lazily
loading subcommands"), and so are the league's (referee/cli/league.py
``LEAGUE_COMMANDS``): ``referee --help`` and ``referee league --help`` list every
command with its own short help without loading any, each command and subcommand
shows its own ``--help``, a mistyped command is still told the close names,
``--help``/``--version`` start without the library's heavy modules, and each league
command loads only what it uses."""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest

from referee.cli.kit import Group, Lazy
from referee.cli.league import LEAGUE_COMMANDS
from referee.cli.main import COMMANDS, main
from tests.cli.cli_helpers import invoke
from tests.procs import scaled

#: What ``referee --help`` and ``--version`` must not load (the commands' modules,
#: the layers above the players, the report's templates, ZeroMQ, Dask, and the
#: sandbox's seccomp binding: importing it runs ``ldconfig -p`` twice).
HEAVY = ("referee.cli.play", "referee.cli.tournament", "referee.cli.league",
         "referee.tournament", "referee.league", "referee.report", "referee.checkbot",
         "jinja2", "zmq", "distributed", "dask", "pyseccomp")


def _loaded_by(*args: str) -> tuple[int, list[str], str]:
    """Run ``referee ARGS`` in a fresh interpreter: its exit status, the modules it
    had loaded at the end, and what it printed."""
    script = (
        "import io, json, sys, contextlib\n"
        "from referee.cli.main import main\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    try:\n"
        "        main(sys.argv[1:], prog_name='referee')\n"
        "        code = 0\n"
        "    except SystemExit as e:\n"
        "        code = e.code\n"
        "sys.__stdout__.write(json.dumps([code, sorted(sys.modules), out.getvalue()]))\n")
    r = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True,
                       timeout=scaled(120))
    assert r.returncode == 0, r.stderr
    code, modules, printed = json.loads(r.stdout)
    return code, modules, printed


@pytest.mark.parametrize("table", [COMMANDS, LEAGUE_COMMANDS], ids=["referee", "league"])
def test_the_command_list_shows_each_command_s_own_short_help(table: dict[str, Lazy]) -> None:
    """The short help kept for ``referee --help`` (``referee league --help``) is the
    command's own (the list would otherwise drift from the commands)."""
    for name, lazy in table.items():
        command = lazy.load()
        assert command.name == name
        assert lazy.short_help == command.get_short_help_str(limit=500), name


def test_referee_help_lists_every_command_and_each_help_works() -> None:
    top = invoke("--help")
    assert top.exit_code == 0
    listing = " ".join(top.stdout.split("Commands:")[1].split())
    for name, lazy in COMMANDS.items():
        assert f"{name} {lazy.short_help}" in listing, name
    ctx = click.Context(main)
    for name in COMMANDS:
        r = invoke(name, "--help")
        assert r.exit_code == 0 and r.stdout.split("\n")[0].startswith(f"Usage: main {name} ")
        command = main.get_command(ctx, name)
        if isinstance(command, click.Group):
            for sub in command.list_commands(ctx):
                r = invoke(name, sub, "--help")
                assert r.exit_code == 0, (name, sub, r.stderr)
                assert r.stdout.startswith(f"Usage: main {name} {sub} "), (name, sub)


def test_a_mistyped_command_is_told_the_close_names_none_loaded() -> None:
    """click suggests among the loaded commands only; the group suggests among all."""
    group = Group(name="g", lazy={"play": COMMANDS["play"], "replay": COMMANDS["replay"]})
    with pytest.raises(click.UsageError) as e:
        group.resolve_command(click.Context(group), ["plya"])
    assert e.value.format_message() == ("No such command 'plya'. (Did you mean one of: "
                                        "'play', 'replay'?)")
    assert group.commands == {}  # nothing was loaded to say so


@pytest.mark.parametrize("args", [["--help"], ["--version"]])
def test_help_and_version_load_no_command(args: list[str]) -> None:
    code, modules, printed = _loaded_by(*args)
    assert code == 0 and printed
    assert not [m for m in modules if m.startswith(HEAVY)], args


def test_a_command_loads_only_its_own_module() -> None:
    """``referee play`` needs neither the tournaments, the leagues nor the report."""
    code, modules, printed = _loaded_by("play", "--help")
    assert code == 0 and printed.startswith("Usage: referee play ")
    assert "referee.cli.play" in modules
    assert not [m for m in modules
                if m.startswith(("referee.cli.tournament", "referee.cli.league",
                                 "referee.league", "referee.report", "jinja2"))]


def test_a_run_loads_the_report_only_to_write_one() -> None:
    """``tournament run`` (and ``quick``) load the report's modules and Jinja2 when
    ``--report`` asks for a report, at its first write, not at every start."""
    for args in (["tournament", "run", "--help"], ["tournament", "quick", "--help"]):
        code, modules, printed = _loaded_by(*args)
        assert code == 0 and printed.startswith("Usage: referee " + " ".join(args[:2]))
        assert "referee.tournament.run" in modules
        assert not [m for m in modules if m.startswith(("referee.report", "jinja2"))], args


#: What each league command must not load: the checks, the executors and the run
#: loop, the report (Jinja2) and ZeroMQ, unless it uses them.
LEAGUE_HEAVY = {"checks": ("referee.checkbot", "referee.league.run"),
                "executors": ("referee.tournament.executor", "referee.tournament.driver"),
                "report": ("referee.report", "jinja2"),
                "zeromq": ("zmq", "referee.league.remote")}


@pytest.mark.parametrize(("command", "uses"), [
    ("standings", ()), ("games", ()), ("show", ()), ("game", ()), ("verify", ()),
    ("new", ("checks", "executors", "zeromq")), ("withdraw", ("checks", "executors", "zeromq")),
    ("submit", ("checks", "executors", "zeromq")),  # the check plays games, ZeroMQ bots too
    ("run", ("checks", "executors", "zeromq")),  # the report: only when it writes one
])
def test_a_league_command_loads_only_what_it_uses(command: str, uses: tuple[str, ...]) -> None:
    """``league standings`` reads the league: it starts with neither the checks, the
    executors, the report nor ZeroMQ; ``league submit`` without the report; none
    loads the other league commands' modules."""
    code, modules, printed = _loaded_by("league", command, "--help")
    assert code == 0 and printed.startswith(f"Usage: referee league {command} ")
    own = LEAGUE_COMMANDS[command].module
    assert own in modules
    others = {lazy.module for lazy in LEAGUE_COMMANDS.values()} - {own}
    assert not others & set(modules), command
    for what, heavy in LEAGUE_HEAVY.items():
        if what not in uses:
            assert not [m for m in modules if m.startswith(heavy)], (command, what)
