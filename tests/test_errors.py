"""The one exception tree (``referee.errors``, issue 22 item 3): every error the
referee raises on purpose is a ``RefereeError``, on the branch its docstring draws,
and the old synonyms are gone."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import pytest

import referee
from referee import errors
from referee.errors import (
    BotError,
    ConfigError,
    ExecutionError,
    InputError,
    MistakeError,
    RefereeError,
    StorageError,
    UsageError,
)

#: (module, class, branch): the leaves the tree in ``referee/errors.py`` draws.
LEAVES = [
    ("referee.tournament.config", "TournamentConfigError", ConfigError),
    ("referee.league.config", "LeagueConfigError", ConfigError),
    ("referee.game.errors", "ConfigError", ConfigError),
    ("referee.players.botspec", "BotSpecError", UsageError),
    ("referee.players.remote_seats", "RemoteBotError", UsageError),
    ("referee.players.sandbox", "FenceError", UsageError),
    ("referee.league.results", "LeagueError", UsageError),
    ("referee.league.door", "DoorError", UsageError),
    ("referee.play.replay", "RecordError", InputError),
    ("referee.play.series", "DeckFileError", InputError),
    ("referee.transport.zmq.keys", "KeyFileError", InputError),
    ("referee.league.submission", "SubmissionError", InputError),
    ("referee.league.archive", "ArchiveError", InputError),
    ("referee.game.cards", "CardError", InputError),
    ("referee.game.decisions", "DecisionSyntaxError", InputError),
    ("referee.game.events", "EventSyntaxError", InputError),
    ("referee.report.site", "ReportError", StorageError),
    ("referee.tournament.kinds", "StoredConfigError", StorageError),
    ("referee.players.sandbox", "SandboxError", ExecutionError),
    ("referee.tournament.match", "MatchError", ExecutionError),
    ("referee.league.remote", "RemoteError", ExecutionError),
    ("referee.play.runner", "BotFault", BotError),
    ("referee.players.process", "BotStartError", BotError),
    ("referee.protocol.errors", "BotProtocolError", BotError),
    ("referee.protocol.errors", "UnsupportedVersion", BotError),
    ("referee.transport.base", "TransportError", BotError),
    ("referee.transport.base", "TransportTimeout", BotError),
    ("referee.transport.base", "MalformedMessage", BotError),
    ("referee.game.errors", "IllegalDecision", BotError),
    ("referee.game.errors", "GameError", RefereeError),
    ("referee.protocol.errors", "RefereeProtocolError", RefereeError),
]


@pytest.mark.parametrize(("module", "name", "branch"), LEAVES,
                         ids=[f"{m.rsplit('.', 1)[1]}.{n}" for m, n, _ in LEAVES])
def test_each_error_sits_on_its_branch_and_is_drawn(module: str, name: str,
                                                    branch: type[Exception]) -> None:
    cls = getattr(importlib.import_module(module), name)
    assert issubclass(cls, branch) and issubclass(cls, RefereeError)
    assert name in (errors.__doc__ or "")  # the drawing names it


def test_the_users_mistakes_are_one_branch() -> None:
    for branch in (ConfigError, UsageError, InputError):
        assert issubclass(branch, MistakeError)
    for other in (StorageError, ExecutionError, BotError):
        assert not issubclass(other, MistakeError)


def test_errors_that_were_value_errors_still_are() -> None:
    """Callers that catch ValueError (parsers, click callbacks) keep working."""
    from referee.play.replay import RecordError
    from referee.players.botspec import BotSpecError
    from referee.tournament.config import TournamentConfigError

    for cls in (BotSpecError, RecordError, TournamentConfigError):
        assert issubclass(cls, ValueError)


def _public_exceptions() -> list[type[BaseException]]:
    found = []
    for info in pkgutil.walk_packages(referee.__path__, "referee."):
        if info.name.startswith("referee.cli"):
            continue  # click's exceptions, the command line's own
        mod = importlib.import_module(info.name)
        for name, obj in vars(mod).items():
            if (inspect.isclass(obj) and issubclass(obj, BaseException)
                    and obj.__module__ == mod.__name__ and not name.startswith("_")):
                found.append(obj)
    return found


def test_every_public_exception_of_the_referee_is_a_referee_error() -> None:
    """Besides ``UnknownEventKind`` (a KeyError meaning a bug in the referee's own
    tables, never the user's nor a bot's), every exception class the package defines
    is in the tree: the command line catches the base once."""
    outside = {c.__name__ for c in _public_exceptions() if not issubclass(c, RefereeError)}
    assert outside == {"UnknownEventKind"}


def test_the_synonyms_are_merged() -> None:
    """One storage error (was StoreError and StorageError), one execution error (was
    ExecutorError); a game not played is one report (was WorkerError and
    StorageFailure), not an exception."""
    from referee.tournament import executor, store

    for gone in ("StorageFailure", "WorkerError", "ExecutorError"):
        assert not hasattr(executor, gone)
    assert not hasattr(store, "StoreError")
    assert not issubclass(executor.NotPlayed, BaseException)
    names = [c.__name__ for c in _public_exceptions()]
    assert sorted(n for n in set(names) if names.count(n) > 1) == ["ConfigError"]
