"""Remote bots' seats: where ``remote:NAME`` bots connect, with which keys, and
their players.

``RemoteSeats`` is the listening endpoint of one session's (a ``play`` match's, a
tournament worker's) remote bots: it reads the keys (``referee.transport.zmq.keys``), binds a
``referee.transport.zmq.listener.RemoteListener``, makes each seat's ``ExternalPlayer`` and
waits, under one deadline, for every remote bot to connect and say hello.  The bot
remote:NAME is admitted by the CURVE key in ``NAME.key`` of the keys directory; on a
loopback endpoint without keys (no CURVE), by the name in its hello alone.  The
listener tells it of every refused connection as a ``Refusal``: the reasons are
named when a bot does not come.

``remote_credentials`` and ``probe_listen`` check the keys and the endpoint without
listening for long: a tournament checks them before its first game.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import socket
import time
from collections.abc import Callable, Sequence

import zmq

from ..play.runner import BotFault, TimeControl
from ..transport.base import TransportTimeout
from ..transport.zmq import keys
from ..transport.zmq.listener import RemoteListener
from ..transport.zmq.router import Refusal, is_loopback
from .botspec import DEFAULT_LISTEN, BotSpec, BotSpecError
from .external import ExternalPlayer, TranscriptHook
from .launcher import Connection
from .process import BotStartError


class RemoteBotError(BotSpecError):
    """Remote bots that cannot be listened for or did not come: keys, endpoint, a bot
    that never connected.  The message is one line saying what would be right."""


def remote_credentials(names: Sequence[str], endpoint: str, keys_dir: str | None,
                       server_key: str | None, *, keys_opt: str = "--keys",
                       server_key_opt: str = "--server-key",
                       ) -> tuple[dict[str, bytes], bytes | None]:
    """Check where remote bots ``names`` are to connect and with which keys, without
    listening: the bots' allowed public keys by name (empty keys: no CURVE) and the
    referee's secret key (None: no CURVE).  RemoteBotError says what is wrong, naming
    the options (``keys_opt``, ``server_key_opt``) that would put it right."""
    if (keys_dir is None) != (server_key is None):
        given, missing = ((keys_opt, f"{server_key_opt} FILE (the referee's secret key, from "
                           "'referee keys server')") if server_key is None else
                          (server_key_opt, f"{keys_opt} DIR (the allowed bots' public keys, "
                           "NAME.key)"))
        raise RemoteBotError(f"{given} needs {missing} too: CURVE takes both (or neither, "
                             f"on a loopback endpoint)")
    scheme, sep, rest = endpoint.partition("://")
    if not sep or scheme not in ("tcp", "ipc") or not rest:
        raise RemoteBotError(f"{endpoint!r} is not an endpoint remote bots can connect to: "
                             f"write tcp://ADDRESS:PORT (e.g. {DEFAULT_LISTEN}, or "
                             f"tcp://0.0.0.0:5555 with CURVE keys) or ipc://PATH")
    if keys_dir is not None and server_key is not None:
        try:
            listed = keys.load_allowed_keys(keys_dir)
            secret = keys.load_secret_key(server_key)
        except keys.KeyFileError as e:
            raise RemoteBotError(str(e)) from None
        missing_keys = [n for n in names if n not in listed]
        if missing_keys:
            n = missing_keys[0]
            raise RemoteBotError(
                f"no public key for remote bot {n!r}: {os.path.join(keys_dir, n + '.key')} "
                f"does not exist (the bot's author makes it with 'referee keys new {n}')")
        # Only these bots: another listed bot would be admitted and then wait for a
        # seat that does not exist.
        return {n: listed[n] for n in names}, secret
    if not is_loopback(endpoint):
        raise RemoteBotError(
            f"listening on {endpoint} (not loopback) needs CURVE: give {keys_opt} DIR (the "
            f"allowed bots' public keys) and {server_key_opt} FILE (the referee's secret key, "
            f"from 'referee keys server'), or listen on loopback, e.g. {DEFAULT_LISTEN}")
    return {n: b"" for n in names}, None  # no CURVE: the names alone


def _listen_error(endpoint: str, e: zmq.ZMQError, listen_opt: str) -> str:
    """What a failed bind (a ``zmq.ZMQError``) means, and what to do about it."""
    hint = ""
    why = re.sub(r" \(addr=.*\)$", "", e.strerror)  # we name the endpoint ourselves
    if e.errno == errno.EADDRINUSE:
        hint = (f": another program (another referee?) listens there; choose another port "
                f"with {listen_opt}")
    elif e.errno in (errno.EINVAL, errno.EPROTONOSUPPORT, errno.ENODEV):
        hint = ": write tcp://ADDRESS:PORT (e.g. tcp://0.0.0.0:5555) or ipc://PATH"
    elif e.errno == errno.ENOENT:
        hint = ": the directory of an ipc:// socket must exist"
    return f"cannot listen on {endpoint}: {why}{hint}"


def probe_listen(endpoint: str, listen_opt: str = "--listen") -> None:
    """Bind ``endpoint`` for a moment and let it go: RemoteBotError now, naming the
    problem, rather than once a game needs the endpoint (a tournament checks this
    before its first game).  A port taken in between is still reported then."""
    ctx = zmq.Context()
    sock = ctx.socket(zmq.ROUTER)
    try:
        sock.bind(endpoint)
    except zmq.ZMQError as e:
        raise RemoteBotError(_listen_error(endpoint, e, listen_opt)) from None
    finally:
        sock.close(linger=0)
        ctx.term()


class RemoteSeats:
    """The listening endpoint of one session's remote bots, and their players.

    ``names`` are the remote bots (``BotSpec.remote``).  With ``keys_dir`` (the
    allowed bots' public keys, ``NAME.key``) and ``server_key`` (the referee's
    ``referee.key_secret``) the endpoint uses CURVE and admits only these bots, each
    by its own key; without them (loopback endpoints only: the transport refuses
    anything else) a bot is admitted by the name in its hello alone, so any local
    program may take a remote seat.  Raises RemoteBotError; nothing is left open
    when it does.  ``close`` when the session is over (after the players).

    ``wait`` bounds ``connect`` (every bot's first connection); ``rewait`` (default:
    ``wait``) how long a game waits for a bot that lost its connection to come
    again.  With ``give_up`` (tournaments), a bot that did not come within that time
    is *absent*: later games do not wait for it at all (each only takes a connection
    that came meanwhile), so its games are forfeited quickly, until it connects again.

    ``on_warning`` gets each warning line of the transport (refused connections:
    each reason the first time, then at 10, 100... times), as it logs them;
    ``on_status`` a line whenever a bot that lost its connection is waited for
    again (the next game of a match), when it is back, and when it is found absent."""

    def __init__(self, names: Sequence[str], endpoint: str = DEFAULT_LISTEN, *,
                 keys_dir: str | None = None, server_key: str | None = None,
                 wait: float = 300.0, rewait: float | None = None, give_up: bool = False,
                 on_warning: Callable[[str], None] | None = None,
                 on_status: Callable[[str], None] | None = None,
                 listen_opt: str = "--listen") -> None:
        self.names = list(names)
        self.wait = wait
        self.rewait = wait if rewait is None else rewait
        self.give_up = give_up
        self.absent: set[str] = set()  # (give_up) not come when last waited for
        self._seen: set[str] = set()  # connected at least once
        self.on_status = on_status
        self.server_public: bytes | None = None
        self._deadline: float | None = None  # while ``connect`` waits for every bot
        self._timed_out: set[str] = set()
        allowed, secret = remote_credentials(self.names, endpoint, keys_dir, server_key)
        if secret is not None:
            self.server_public = zmq.curve_public(secret)
        # Why connections were refused, each reason once, in order: for the "did not
        # connect" error.  (Appended by the listener's authenticator thread too.)
        self._reasons: list[str] = []
        # The transport's warning lines, as it logs them, for the organiser.
        self._log = _WarningRelay(on_warning)
        logging.getLogger("referee.zmq").addHandler(self._log)
        try:
            self.listener = RemoteListener(endpoint, allowed, secret,
                                           on_refusal=self._refused)
        except ValueError as e:
            self._unhook()
            raise RemoteBotError(str(e)) from None
        except zmq.ZMQError as e:
            self._unhook()
            raise RemoteBotError(_listen_error(endpoint, e, listen_opt)) from None

    @property
    def endpoint(self) -> str:
        """Where the bots connect (the port resolved, when ``*`` was given)."""
        return self.listener.endpoint

    @property
    def curve(self) -> bool:
        return self.server_public is not None

    def _refused(self, refusal: Refusal) -> None:
        if refusal.why not in self._reasons:
            self._reasons.append(refusal.why)

    def player(self, spec: BotSpec, *, time_control: TimeControl | None = None,
               on_message: TranscriptHook | None = None) -> ExternalPlayer:
        """The ``ExternalPlayer`` of a ``remote:NAME`` seat.  Its connection is the next
        one admitted as NAME: within what is left of ``connect``'s deadline, and
        within ``rewait`` seconds when it has to come again (after a lost connection,
        for the next game of a match)."""
        assert spec.remote is not None, spec
        return self.player_named(spec.remote, spec.name, time_control=time_control,
                                 on_message=on_message)

    def player_named(self, name: str, seat_name: str, *,
                     time_control: TimeControl | None = None,
                     on_message: TranscriptHook | None = None) -> ExternalPlayer:
        """``player`` by names: the remote bot ``name`` (its key file's and hello's),
        playing as ``seat_name``."""
        if name not in self.names:
            raise RemoteBotError(f"remote bot {name!r} is not one this endpoint listens for "
                                 f"({', '.join(self.names)})")

        def launch() -> Connection:
            deadline = self._deadline
            again = deadline is None  # not the first connection: ``connect`` is over
            absent = name in self.absent
            timeout = (max(0.0, deadline - time.monotonic()) if deadline is not None
                       else 0.0 if absent else self.rewait)
            if again and not absent:
                # A game waits on it: say so, or the referee would seem to hang.
                self._status(f"waiting up to {timeout:g}s for remote bot {name} to connect "
                             f"again to {self.connect_to}")
            try:
                _, transport = self.listener.accept(timeout, name)
            except TransportTimeout as e:
                self._timed_out.add(name)
                if self.give_up and not absent:
                    self.absent.add(name)
                    if again:  # (``connect`` reports the first wait itself)
                        self._status(f"remote bot {name} did not connect again within "
                                     f"{timeout:g}s: it is absent, its games are forfeited "
                                     f"until it connects to {self.connect_to}")
                # Reported by ExternalPlayer as "NAME did not connect: ...".
                raise BotStartError(
                    f"{e}{self._refusals_text()}" if not absent else
                    f"remote bot {name} is absent: it has not connected to {self.connect_to}"
                    + (" again" if name in self._seen else ""), remote=True) from None
            self._seen.add(name)
            if absent:
                self.absent.discard(name)
                self._status(f"remote bot {name} is back")
            elif again:
                self._status(f"remote bot {name} connected again")
            return Connection(transport, None)

        return ExternalPlayer(seat_name, launch, time_control=time_control,
                            max_message_bytes=self.listener.max_message_bytes,
                            on_message=on_message)

    def connect(self, players: Sequence[tuple[str, ExternalPlayer]],
                on_connected: Callable[[str, ExternalPlayer], None] | None = None) -> None:
        """Wait for every remote bot (``(name, player)`` pairs) to connect and say
        hello, all within ``wait`` seconds from now, in whatever order they come.
        Raises RemoteBotError naming every bot that did not come, or that connected
        but did not start properly -- at once, or (``give_up``: a tournament, where
        the others must still be waited for) after the wait, naming them all."""
        self._deadline = time.monotonic() + self.wait
        missing: list[str] = []
        broken: list[str] = []
        try:
            for name, player in players:
                self._timed_out.discard(name)
                try:
                    player.connect()
                except BotFault as e:
                    if name not in self._timed_out:
                        problem = (f"remote bot {name!r} connected but did not start "
                                   f"properly: {e.detail}")
                        if not self.give_up:
                            raise RemoteBotError(problem) from None
                        broken.append(problem)
                        continue
                    missing.append(name)
                    continue
                if on_connected is not None:
                    on_connected(name, player)
        finally:
            self._deadline = None
        problems = list(broken)
        if missing:
            who = (f"remote bot {missing[0]!r} did not" if len(missing) == 1 else
                   "remote bots " + ", ".join(map(repr, missing)) + " did not")
            problems.append(
                f"{who} connect to {self.connect_to} within {self.wait:g}s"
                + (self._refusals_text() or
                   " (nothing tried to connect: is the bot started, with UPDOWN_ENDPOINT="
                   f"{self.connect_to}{' and its CURVE keys' if self.curve else ''}?)"))
        if problems:
            if self.give_up:
                problems.append("the games of a bot that is not there are forfeited "
                                "until it connects")
            raise RemoteBotError("; ".join(problems))

    @property
    def connect_to(self) -> str:
        """The endpoint as a bot connects to it: a wildcard address (``0.0.0.0``,
        ``*``, ``::``) is shown as this machine's name."""
        ep = self.endpoint
        m = re.fullmatch(r"tcp://(0\.0\.0\.0|\*|\[::\]|::):(\d+)", ep)
        if m is None:
            return ep
        return f"tcp://{socket.gethostname() or 'THIS-HOST'}:{m.group(2)}"

    def waiting_line(self, wait: float | None = None) -> str:
        """What the organiser is told while the referee waits for the bots: where
        they connect, and with which key."""
        names = self.names
        who = ("remote bot " if len(names) == 1 else "remote bots ") + ", ".join(names)
        where = self.connect_to
        if where != self.endpoint:
            where += f" (or another address of this machine; listening on {self.endpoint})"
        security = (f"CURVE, the referee's public key {self.server_public.decode()}"
                    if self.server_public is not None else
                    "no CURVE: admitted by the name in the hello")
        return (f"waiting up to {self.wait if wait is None else wait:g}s for {who}: "
                f"connect to {where} ({security})")

    def _status(self, text: str) -> None:
        if self.on_status is not None:
            self.on_status(text)

    def _refusals_text(self) -> str:
        reasons = list(self._reasons)
        if not reasons:
            return ""
        # The first reasons: usually the cause (an unknown key), the rest its echoes.
        more = f" (and {len(reasons) - 3} more)" if len(reasons) > 3 else ""
        return "; connections refused meanwhile: " + "; ".join(reasons[:3]) + more

    def _unhook(self) -> None:
        logging.getLogger("referee.zmq").removeHandler(self._log)

    def close(self) -> None:
        """Close the listener and every connection on it (idempotent)."""
        try:
            self.listener.close()
        finally:
            self._unhook()


class _WarningRelay(logging.Handler):
    """Passes each warning line of the transport on to ``on_warning``, as logged.
    Called from the transport's authenticator thread too: it only calls."""

    def __init__(self, on_warning: Callable[[str], None] | None) -> None:
        super().__init__(logging.WARNING)
        self.on_warning = on_warning

    def emit(self, record: logging.LogRecord) -> None:
        if self.on_warning is None:
            return
        try:
            text = record.getMessage()
        except Exception:  # a malformed log call must not stop the referee
            return
        try:
            self.on_warning(text)
        except Exception:  # printing a warning must not stop the referee
            self.on_warning = None
