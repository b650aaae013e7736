"""One CLI wiring (issue 22 item 2): errors end in one place (``kit``), one helper runs
games under Ctrl-C and SIGTERM, one executor chooser for every command that plays."""

from __future__ import annotations

import signal
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from referee.cli.kit import Command, Group, Main, running
from referee.errors import ConfigError, ExecutionError, StorageError
from referee.tournament.config import TournamentConfigError
from referee.tournament.dask_executor import DaskExecutor
from referee.tournament.driver import choose_executor
from referee.tournament.executor import ProcessExecutor
from tests.cli.cli_helpers import invoke


def _program(what: str) -> click.Group:
    """A ``referee``-like program: a group of status 1, a subgroup of status 2, a
    command of status 2; each raises or is interrupted as ``what`` says."""

    def act() -> None:
        with running("the finished games are saved in out"):
            if what == "config":
                raise ConfigError("bad key")
            if what == "storage":
                raise StorageError("disk full")
            if what == "execution":
                raise ExecutionError("the cluster is gone")
            if what == "sigint":
                raise KeyboardInterrupt
            if what == "sigterm":
                signal.raise_signal(signal.SIGTERM)
                pytest.fail("SIGTERM did not stop the run")

    class Two(Group):
        error_status = 2

    class TwoCmd(Command):
        error_status = 2

    @click.group(cls=Main)
    def top() -> None:
        pass

    @top.command(cls=Command)
    def one() -> None:
        act()

    @top.group(cls=Two)
    def sub() -> None:
        pass

    @sub.command()
    def two() -> None:
        act()

    @top.command(cls=TwoCmd)
    def alone() -> None:
        act()

    return top


def _run(what: str, *args: str) -> Result:
    return CliRunner().invoke(_program(what), list(args))


@pytest.mark.parametrize(("what", "status", "line"), [
    ("config", 1, "Error: bad key\n"),
    ("storage", 1, "Error: disk full\n"),
    ("execution", 1, "Error: the cluster is gone; the finished games are saved in out\n"),
    ("sigint", 130, "Error: interrupted; the finished games are saved in out: run the same "
                    "command again to resume\n"),
    ("sigterm", 143, "Error: terminated; the finished games are saved in out: run the same "
                     "command again to resume\n"),
])
def test_every_error_ends_with_one_line_and_its_status(what: str, status: int,
                                                        line: str) -> None:
    r = _run(what, "one")
    assert (r.exit_code, r.stderr) == (status, line)


def test_a_group_or_command_sets_the_status_of_its_mistakes() -> None:
    """The league and match keep the status 2 they documented; an execution error or
    an interruption keeps its own status wherever it happens."""
    assert (_run("config", "sub", "two").exit_code, _run("config", "alone").exit_code) == (2, 2)
    assert _run("execution", "sub", "two").exit_code == 1
    assert _run("sigint", "alone").exit_code == 130


def test_running_puts_back_the_sigterm_handler() -> None:
    before = signal.getsignal(signal.SIGTERM)
    _run("config", "one")
    assert signal.getsignal(signal.SIGTERM) is before


def test_choose_executor() -> None:
    ex = choose_executor(None, None, 3)
    assert isinstance(ex, ProcessExecutor) and ex.jobs == 3
    d = choose_executor(None, "tcp://10.0.0.1:8786", 2, ship=False)  # a scheduler: dask
    assert isinstance(d, DaskExecutor)
    assert (d.scheduler, d.workers, d.ship) == ("tcp://10.0.0.1:8786", 2, False)
    d = choose_executor(None, None, None, default="dask", default_scheduler="h:1")
    assert isinstance(d, DaskExecutor) and d.scheduler == "tcp://h:1"
    with pytest.raises(TournamentConfigError, match="--scheduler is for the Dask executor"):
        choose_executor("process", "tcp://h:1")
    ex = choose_executor("process", None, 2, concurrency=8)
    assert isinstance(ex, ProcessExecutor) and ex.concurrency == 8
    with pytest.raises(TournamentConfigError, match="--concurrency is for the process"):
        choose_executor("dask", None, 2, concurrency=8)


def test_the_three_commands_offer_the_same_executor_options() -> None:
    """tournament run, match and league run: --executor (default: the configuration's),
    --scheduler and --concurrency, the same words."""
    helps = [invoke(*cmd, "--help").stdout for cmd in
             (["tournament", "run"], ["match"], ["league", "run"])]
    for h in helps:
        assert "--executor [process|dask]" in h and "--scheduler tcp://HOST:8786" in h
        assert "-c, --concurrency INTEGER RANGE" in h
        assert "implies --executor dask" in " ".join(h.split())


@pytest.mark.slow
def test_a_league_command_that_fails_ends_with_one_line(tmp_path: Path) -> None:
    r = invoke("league", "standings", str(tmp_path))
    assert r.exit_code == 1 and r.stderr.startswith("Error: ") and r.stderr.count("\n") == 1


def test_every_group_ends_a_message_on_one_line_with_status_1() -> None:
    """One rule for every command (README, "Exit status"): a mistake the referee
    finds is one ``Error: ...`` line and exit status 1, also in a group (the league's
    refused configuration changes were once kept on lines of their own, status 2)."""

    @click.group(cls=Main)
    def top() -> None:
        pass

    @top.group(cls=Group)
    def kept() -> None:
        pass

    @kept.command()
    def a() -> None:
        raise ConfigError("it changes them:\nrules.turn_limit: was 1000, now 300\n")

    @top.command()
    def b() -> None:
        raise ConfigError("it changes them:\nrules.turn_limit: was 1000, now 300\n")

    for args in (["kept", "a"], ["b"]):
        r = CliRunner().invoke(top, args)
        assert (r.exit_code, r.stderr) == (
            1, "Error: it changes them: rules.turn_limit: was 1000, now 300\n")
