"""The one launcher: how the referee starts a bot, in its sandbox, with the transport
to it.

Owns ``launch_bot``, the one way the referee starts a bot (``referee play``,
``check-bot``, tournaments, leagues, matches; stdio and ZeroMQ alike), and the
``Connection`` it returns (the transport, and the process).  For a ZeroMQ bot,
``launch_zmq_bot``: a ROUTER bound on loopback (an ``ipc://`` path in a private
directory, or ``tcp://127.0.0.1:<random port>``), the bot process started
(``referee.players.process.start_bot``) with the endpoint in ``UPDOWN_ENDPOINT`` (and
``UPDOWN_TRANSPORT=zmq``, and a fresh ``UPDOWN_TOKEN`` its hello must carry), and
``bot_env``, the protocol's variables (protocol/ZEROMQ.md).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import zmq

from ..transport.base import Transport
from ..transport.stdio import StdioTransport
from ..transport.zmq.codec import MAX_MESSAGE_BYTES
from ..transport.zmq.direct import DirectZmqTransport
from ..transport.zmq.router import bind_loopback
from ..transport.zmq.transport import (
    ENV_ENDPOINT,
    ENV_PUBLIC_KEY,
    ENV_SECRET_KEY,
    ENV_SERVER_KEY,
    ENV_TOKEN,
    ENV_TRANSPORT,
    ZmqTransport,
)
from .process import (
    DEFAULT_MEMORY_MB,
    DEFAULT_STDERR_CAP,
    BotProcess,
    BotStartError,
    StderrLog,
    TurnGate,
    start_bot,
)
from .sandbox import Sandbox


def bot_env(endpoint: str, *, server_key: bytes | None = None,
            keypair: tuple[bytes, bytes] | None = None,
            base: Mapping[str, str] | None = None,
            token: str | None = None) -> dict[str, str]:
    """The protocol's variables a ZeroMQ bot is started with (protocol/ZEROMQ.md),
    added to ``base`` (its configuration's).  Key variables in ``base`` are dropped:
    a launched bot gets keys only when given here."""
    env = {k: v for k, v in (base or {}).items()
           if k not in (ENV_SERVER_KEY, ENV_PUBLIC_KEY, ENV_SECRET_KEY, ENV_TOKEN)}
    env[ENV_ENDPOINT] = endpoint
    env[ENV_TRANSPORT] = "zmq"
    if token is not None:
        env[ENV_TOKEN] = token
    if server_key is not None:
        env[ENV_SERVER_KEY] = server_key.decode("ascii")
    if keypair is not None:
        env[ENV_PUBLIC_KEY] = keypair[0].decode("ascii")
        env[ENV_SECRET_KEY] = keypair[1].decode("ascii")
    return env


class LaunchedZmqBot:
    """A bot process the referee started, and its transport.  ``close`` ends both
    (idempotent): the process tree, the socket, its context and ipc directory."""

    def __init__(self, process: BotProcess, transport: ZmqTransport | DirectZmqTransport,
                 stdout: StderrLog) -> None:
        self.process = process
        self.transport = transport
        self.stdout = stdout  # drained like stderr (capped; past the cap, on its turns)
        process.stdout_log = stdout

    def close(self, grace: float = 0.5) -> None:
        try:
            self.process.end(grace)
        finally:
            self.transport.close()


def launch_zmq_bot(
    command: Sequence[str],
    *,
    name: str = "bot",
    cwd: str | None = None,
    transport: str = "ipc",
    max_message_bytes: int = MAX_MESSAGE_BYTES,
    env: Mapping[str, str] | None = None,
    stdout_path: str | None = None,
    direct: bool = True,
    **process_options: Any,
) -> LaunchedZmqBot:
    """Bind a loopback ROUTER, start ``command`` (``referee.players.process.start_bot``:
    sandbox, own session, memory limit, stderr log -- ``process_options`` go there)
    with ``UPDOWN_ENDPOINT`` pointing at it and a fresh ``UPDOWN_TOKEN``, and return
    the process with its transport.  The bot is expected to connect a DEALER and
    send ``hello`` with that token; reading it is the protocol's job.  In an active
    sandbox the bot has no network: ``transport`` must be ``ipc`` (the socket's
    private folder is made visible inside, read-only: connecting needs no more).
    Raises BotStartError when the command cannot be run."""
    sandbox = process_options.get("sandbox")
    if sandbox is not None and sandbox.active and transport != "ipc":
        raise BotStartError(f"a sandboxed ZeroMQ bot has no network: it must use the "
                            f"ipc transport, not {transport!r}")
    token = secrets.token_hex(16)
    if transport == "ipc" and direct and zmq.has("ipc"):
        # ZeroMQ's wire spoken by the game's own thread (no libzmq I/O thread to hop
        # through): the bot cannot tell, it connects a DEALER as to any ROUTER.
        own = DirectZmqTransport(max_message_bytes=max_message_bytes, name=name, token=token)
        try:
            process = start_bot(command, cwd=cwd,
                                env=bot_env(own.endpoint, base=env, token=token),
                                writable=[own.private_dir], **process_options)
        except BaseException:
            own.close()
            raise
        own.process = process
        os.close(process.stdin_fd)
        return LaunchedZmqBot(process, own, StderrLog(
            process.stdout_fd, stdout_path, process_options.get("stderr_cap", DEFAULT_STDERR_CAP),
            process_options.get("on_stderr"), gate=process.gate))
    router = bind_loopback(transport, max_message_bytes=max_message_bytes)
    try:
        writable = [router.private_dir] if router.private_dir else []
        process = start_bot(command, cwd=cwd,
                            env=bot_env(router.endpoint, base=env, token=token),
                            writable=writable, **process_options)
    except BaseException:
        router.close()
        raise
    # Its stdin and stdout are not the protocol's channel here: stdin reads EOF,
    # stdout is drained like stderr (to ``stdout_path``, capped; past the cap only on
    # the bot's own turns, as its stderr: ``TurnGate``).
    os.close(process.stdin_fd)
    stdout = StderrLog(process.stdout_fd, stdout_path,
                       process_options.get("stderr_cap", DEFAULT_STDERR_CAP),
                       process_options.get("on_stderr"), gate=process.gate)
    return LaunchedZmqBot(process, ZmqTransport(router, process=process, name=name,
                                                token=token), stdout)


@dataclass
class Connection:
    """A live link to a bot: its transport, and its process when we started it
    (``None`` for a remote bot that connected to us)."""

    transport: Transport
    process: BotProcess | None = None

    def describe_loss(self, ran: bool = False) -> str:
        """How the bot was lost; ``ran``: it had said hello (``describe_exit``)."""
        if self.process is None:
            return "the connection was lost"
        how = self.process.exit_description(wait=0.5, ran=ran)
        return "the bot process " + ("was " + how if how.startswith("killed") else how)

    def close(self, grace: float) -> None:
        try:
            if self.process is not None:
                self.process.end(grace)
        finally:
            self.transport.close()


Launcher = Callable[[], Connection]


def launch_bot(
    command: Sequence[str],
    *,
    transport: str = "stdio",
    name: str = "bot",
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    sandbox: Sandbox | None = None,
    memory_mb: int | None = DEFAULT_MEMORY_MB,
    stderr_path: str | None = None,
    stdout_path: str | None = None,
    stderr_cap: int = DEFAULT_STDERR_CAP,
    on_stderr: Callable[[str], None] | None = None,
    max_message_bytes: int = MAX_MESSAGE_BYTES,
    write_timeout: float = 2.0,
    zmq_transport: str = "ipc",
) -> Connection:
    """The one way the referee starts a bot (``referee play``, ``check-bot`` and
    tournaments, stdio and ZeroMQ alike): the process (``referee.players.process.start_bot``,
    inside ``sandbox`` when it is active) and the transport to it.  ``env``: the
    bot's own variables; the protocol's are added here.  Raises BotStartError."""
    if transport == "zmq":
        bot = launch_zmq_bot(command, name=name, cwd=cwd, env=env or {},
                             transport=zmq_transport, max_message_bytes=max_message_bytes,
                             memory_mb=memory_mb, stderr_path=stderr_path,
                             stderr_cap=stderr_cap, on_stderr=on_stderr,
                             stdout_path=stdout_path, sandbox=sandbox)
        return Connection(bot.transport, bot.process)
    if transport != "stdio":
        raise ValueError(f"transport must be 'stdio' or 'zmq', not {transport!r}")
    proc = start_bot(command, cwd=cwd, env={**(env or {}), "UPDOWN_TRANSPORT": "stdio"},
                     memory_mb=memory_mb, stderr_path=stderr_path, stderr_cap=stderr_cap,
                     on_stderr=on_stderr, sandbox=sandbox)
    stdio = StdioTransport(proc.stdin_fd, proc.stdout_fd, exit_fd=proc.exit_fd,
                           max_message_bytes=max_message_bytes, write_timeout=write_timeout)
    stdio.on_blocked = _drained_while_blocked(proc.gate)
    return Connection(stdio, proc)


def _drained_while_blocked(gate: TurnGate) -> Callable[[bool], None]:
    """For a send that waits for the bot to read its stdin (a long message between
    its turns): its capped logs are read meanwhile -- it may be blocked writing
    them -- and the gate is as it was once the send is over."""
    was_open = True

    def blocked(waiting: bool) -> None:
        nonlocal was_open
        if waiting:
            was_open = gate.is_open
            gate.open()
        elif not was_open:
            gate.close()

    return blocked
