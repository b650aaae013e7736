"""Turning a ``BotSpec`` into a ``Player`` (``referee.play.runner``), inside a worker.

Owns the in-process player used by tournaments and the choice of implementation
for each kind of bot: built-in bots, Python bot classes named in the configuration,
and external programs (``referee.players.external``, imported only when an external bot is
configured).  Knows nothing of schedules or the store.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..bots import make_bot
from ..game import GameConfig
from ..play.runner import DecisionRequest, Player
from ..players.botspec import BotSpecError, check_command
from ..players.external import external_player
from ..players.sandbox import Sandbox, unsandboxed
from .config import BotSpec, TournamentConfig
from .schedule import derive_seed

if TYPE_CHECKING:
    from ..players.botspec import RemoteSeats
    from ..players.external import ExternalPlayer


class SeededPlayer:
    """An in-process bot (``new_game(seed)`` / ``decide(observation, legal)``) whose
    randomness is tied to the deal and the bot, not to the seat: every replay of a
    duplicate deal gives the bot the same random stream, wherever it sits."""

    def __init__(self, bot: Any, name: str, stream: str | None = None) -> None:
        self.bot = bot
        self.name = name
        self.stream = stream or name  # two bots with one stream draw the same numbers

    def start_game(self, game_id: str, seat: int, config: GameConfig, seed: int) -> None:
        self.bot.new_game(derive_seed(seed, "bot", self.stream))

    def decide(self, request: DecisionRequest) -> Any:
        observe = getattr(self.bot, "observe", None)
        if observe is not None:
            observe(request.events)  # the seat's events since its last request
        return self.bot.decide(request.observation, request.legal)

    def end_game(self, game_id: str, result: dict[str, Any]) -> None:
        pass


def load_python_object(ref: str, base_dir: str) -> Any:
    """``path/to/file.py:Name`` (relative to ``base_dir``) or ``package.module:Name``."""
    where, _, attr = ref.rpartition(":")
    if where.endswith(".py"):
        path = (Path(base_dir) / where).resolve()
        if not path.is_file():
            raise FileNotFoundError(f"no file {path} (python = {ref!r})")
        modname = f"_tournament_bot_{abs(hash(str(path)))}"
        if modname in sys.modules:
            module = sys.modules[modname]
        else:
            spec = importlib.util.spec_from_file_location(modname, path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[modname] = module
            spec.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    try:
        return getattr(module, attr)
    except AttributeError:
        raise AttributeError(f"{where} has no {attr!r} (python = {ref!r})") from None


class RemoteBots:
    """A worker's remote bots (``remote = true``): the listening endpoint
    (``referee.players.botspec.RemoteSeats``), opened when a game first needs a remote bot,
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
        from ..players.botspec import RemoteBotError
        from ..players.botspec import RemoteSeats as Seats

        config, r = self.config, self.config.remote
        bots = config.remote_bots
        # RemoteBotError (the port is taken, a key file is unreadable) propagates: the
        # game is reported as not played, and played again on resume.
        seats = Seats([b.remote or b.name for b in bots], r.listen,
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


def make_player(spec: BotSpec, config: TournamentConfig, log_dir: str | None = None,
                sandbox: Sandbox | None = None, *, log_name: str | None = None) -> Player:
    """A Player for ``spec``; an external bot's process is started here (in
    ``sandbox``, unless the bot has ``sandbox = "off"``) and kept for the games the
    worker gives it.  ``log_name``: its log files' name (default: the bot's)."""
    if spec.builtin:
        return SeededPlayer(make_bot(spec.builtin), spec.name, spec.stream)
    if spec.remote:
        raise ValueError(f"{spec.name} is a remote bot: its player comes from RemoteBots")
    if spec.python:
        obj = load_python_object(spec.python, config.base_dir)
        bot = obj(0) if callable(obj) else obj
        if hasattr(bot, "start_game"):  # already a Player
            bot.name = spec.name
            return bot  # type: ignore[no-any-return]
        return SeededPlayer(bot, spec.name, spec.stream)
    assert spec.command is not None
    sb = sandbox if sandbox is not None else unsandboxed()
    if not spec.sandboxed:
        sb = sb.off()
    memory = spec.memory_mb or sb.config.memory_mb
    player: Player = external_player(
        spec.name, list(spec.command), config.resolve(spec.cwd or "."), dict(spec.env) or None,
        config.time, memory, log_dir, transport=spec.transport, sandbox=sb,
        log_name=log_name)
    return player


def close_player(player: Player) -> None:
    close = getattr(player, "close", None)
    if callable(close):
        close()


def check_bots(config: TournamentConfig) -> None:
    """Fail early, naming the bot, if a bot cannot possibly be started: a Python bot
    that does not load, an external program that is not there, or no
    ``referee.players.external`` to run external programs with."""
    from .config import TournamentConfigError

    remote = config.remote_bots
    if remote:
        from ..players.botspec import RemoteBotError, probe_listen, remote_credentials

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
