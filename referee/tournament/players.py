"""A tournament's players, inside a worker: its remote bots' seats, and the checks
made before the first game that each bot can be started.

Players themselves come from ``referee.players.factory.make_player``, as in ``referee
play``.  Knows nothing of schedules or the store.
"""

from __future__ import annotations

import contextlib
import shlex
from collections.abc import Callable
from pathlib import Path

from ..play.runner import Player
from ..players.botspec import BotSpec, BotSpecError, check_command
from ..players.external import ExternalPlayer
from ..players.factory import load_python_object
from ..players.remote_seats import RemoteBotError, RemoteSeats, probe_listen, remote_credentials
from .config import TournamentConfig, TournamentConfigError


class RemoteBots:
    """A worker's remote bots (``remote = true``): the listening endpoint
    (``referee.players.remote_seats.RemoteSeats``), opened when a game first needs a remote bot,
    and every remote bot's player.  On opening, it waits up to ``[remote] wait``
    seconds for all of them to connect; a bot that does not come, or that loses its
    connection and does not come again within ``rewait``, is absent: its games go on
    without waiting for it (its seat forfeits) until it connects again.  ``notify``
    gets a line for each of these events, and for each refused connection."""

    def __init__(self, config: TournamentConfig, notify: Callable[[str], None]) -> None:
        self.config = config
        self.notify = notify
        self.seats: RemoteSeats | None = None  # once open
        self.players: dict[str, ExternalPlayer] = {}

    def player(self, spec: BotSpec) -> Player:
        if self.seats is None:
            self._open()
        return self.players[spec.name]

    def _open(self) -> None:
        config, r = self.config, self.config.remote
        bots = config.remote_bots
        # RemoteBotError (the port is taken, a key file is unreadable) propagates: the
        # game is reported as not played, and played again on resume.
        seats = RemoteSeats([b.remote or b.name for b in bots], r.listen,
                            keys_dir=config.resolve(r.keys),
                            server_key=config.resolve(r.server_key), wait=r.wait,
                            rewait=r.rewait, give_up=True, on_warning=self.notify,
                            on_status=self.notify, listen_opt="[remote] listen")
        self.seats = seats
        self.players = {b.name: seats.player_named(b.remote or b.name, b.name,
                                                   time_control=config.time) for b in bots}
        self.notify(seats.waiting_line())
        try:
            seats.connect([(b.remote or b.name, self.players[b.name]) for b in bots],
                          on_connected=lambda name, p: self.notify(
                              f"remote bot {name} connected"
                              + (f" (version {p.hello.version})"
                                 if p.hello and p.hello.version else "")))
        except RemoteBotError as e:
            self.notify(str(e))

    def close(self) -> None:
        try:
            for p in self.players.values():
                with contextlib.suppress(Exception):
                    close_player(p)
        finally:
            self.players.clear()
            if self.seats is not None:
                self.seats.close()
                self.seats = None


def close_player(player: Player) -> None:
    close = getattr(player, "close", None)
    if callable(close):
        close()


def check_bots(config: TournamentConfig) -> None:
    """Fail early, naming the bot, if a bot cannot possibly be started: a Python bot
    that does not load, an external program that is not there, or no
    ``referee.players.external`` to run external programs with."""
    remote = config.remote_bots
    if remote:
        r = config.remote
        try:
            remote_credentials([b.remote or b.name for b in remote], r.listen,
                               config.resolve(r.keys), config.resolve(r.server_key),
                               keys_opt="keys", server_key_opt="server_key")
            probe_listen(r.listen, "[remote] listen")
        except RemoteBotError as e:
            raise TournamentConfigError(f"remote: {e}") from None
    for i, spec in enumerate(config.bots):
        where = f"bots[{i}] ({spec.name})"
        if spec.python:
            try:
                load_python_object(spec.python, config.base_dir)
            except Exception as e:
                raise TournamentConfigError(f"{where}.python: cannot load {spec.python!r}: {e}") from None
        elif spec.command:
            cwd = config.resolve(spec.cwd or ".")
            assert cwd is not None
            if not Path(cwd).is_dir():
                raise TournamentConfigError(f"{where}.cwd: no folder {cwd}")
            # The checks (and messages) of 'referee play': a program not on PATH, a
            # missing or non-executable file, a script that is not there.
            try:
                check_command(spec.command, shlex.join(spec.command), cwd)
            except BotSpecError as e:
                raise TournamentConfigError(f"{where}.command: {e}") from None
