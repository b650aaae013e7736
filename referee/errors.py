"""Every error the referee raises on purpose, as one tree (see httpx's ``_exceptions``).

A ``RefereeError``'s message is one readable line saying what is wrong and, where
the user can act, what would be right; the command line prints it as ``Error: ...``
(``referee.cli.kit``, the one place that maps errors to exit statuses) and never
shows a traceback for one.  Anything else that escapes is a bug of the referee.

::

    RefereeError
    ├── MistakeError             the user's mistake: fix the input, run again
    │   ├── ConfigError          a configuration: a file or its options
    │   │   ├── TournamentConfigError       tournament/config.py
    │   │   ├── LeagueConfigError           league/config.py
    │   │   └── game.errors.ConfigError     rules, table size, deck the rules refuse
    │   ├── UsageError           a command's arguments, as the library checks them
    │   │   ├── BotSpecError                players/botspec.py (a bot spec)
    │   │   │   └── RemoteBotError          players/remote_seats.py
    │   │   ├── FenceError                  players/sandbox.py (an entry's command path)
    │   │   ├── LeagueError                 league/results.py (a name, a table size...)
    │   │   └── DoorError                   league/door.py (an endpoint to listen on)
    │   └── InputError           a file or text given to be read
    │       ├── RecordError                 play/replay.py (a game record)
    │       ├── DeckFileError               play/series.py
    │       ├── KeyFileError                transport/zmq/keys.py (CURVE keys)
    │       ├── SubmissionError             league/submission.py (a submitted bot)
    │       ├── ArchiveError                league/archive.py (its archive)
    │       └── CardError, DecisionSyntaxError, EventSyntaxError
    │                                       game/ (a card, decision, event as text)
    ├── StorageError             results cannot be kept or read where they must go:
    │   │                        the store (SQLite), a game record, the output folder
    │   ├── StoredConfigError               tournament/kinds.py (a store's configuration:
    │   │                                   damaged, or of a kind this referee does not know)
    │   └── ReportError                     report/site.py (the HTML report)
    ├── ExecutionError           games cannot be played here: the executor (a worker
    │   │                        that dies before its first game, a Dask cluster out
    │   │                        of reach), the sandbox, the network
    │   ├── SandboxError                    players/sandbox.py
    │   ├── MatchError                      tournament/match.py (no set can be played)
    │   └── RemoteError                     league/remote.py (a remote submission)
    ├── BotError                 a bot's fault: recorded against the bot, the games go on
    │   ├── BotFault                        play/runner.py (kind, detail: the fault)
    │   ├── BotStartError                   players/process.py (cannot be started)
    │   ├── BotProtocolError                protocol/errors.py (sent something wrong)
    │   │   └── UnsupportedVersion
    │   ├── TransportError                  transport/base.py (the peer's connection)
    │   │   └── TransportTimeout, TransportClosed, MessageTooLarge, MalformedMessage
    │   └── IllegalDecision                 game/errors.py (a decision the rules forbid)
    │       └── NotYourTurn
    ├── GameError                the rules engine's base (game/errors.py)
    └── ProtocolError            the protocol layer's base (protocol/errors.py)
        └── RefereeProtocolError            the referee misused a session: a bug here

The branches are here; each leaf lives beside the code that raises it.  Errors
that are also ``ValueError`` stay so (``TournamentConfigError``, ``BotSpecError``,
...): callers that catch ``ValueError`` keep working.  Records of what happened to
a game (a fault, a game not played) are not exceptions: they are the executor's
reports (``tournament.executor.Report``).

This module is the bottom layer: every layer may import it, it imports nothing.
"""

from __future__ import annotations


class RefereeError(Exception):
    """Base of every error the referee raises on purpose: one readable line."""


class MistakeError(RefereeError):
    """The user's mistake (a configuration, a command's arguments, an input file):
    the message says what would be right."""


class ConfigError(MistakeError):
    """A configuration that cannot be used: a file or the options standing for it."""


class UsageError(MistakeError):
    """Arguments a command cannot use, as the library checks them."""


class InputError(MistakeError):
    """A file or text given to be read that cannot be used (a record, a deck file, a
    key, a submitted bot, a card typed): the message says where and why."""


class StorageError(RefereeError):
    """Results cannot be kept or read where they must go: the output folder, its
    SQLite store, a game record (a full disk, a folder that is not writable, a
    database that cannot be read or holds something else)."""


class ExecutionError(RefereeError):
    """Games cannot be played here at all: the executor (a worker that dies before
    its first game, a cluster out of reach), the sandbox, the network."""


class BotError(RefereeError):
    """A bot's fault: what it did (or could not do) is recorded against it."""
