"""Bot specs: how a bot is named on the command line, and the Player it becomes.

Owns the bot-spec syntax of ``referee play`` (and of anything else that takes bots on
the command line) and its parsing into a ``BotSpec``, plus ``make_player`` that
turns a spec into a runner ``Player``.  Parsing does no I/O beyond looking a
command up on PATH; starting external bots is ``referee.players.external``'s job (stdio) and
``referee.transport.zmq.transport``'s (ZeroMQ), imported only when such a bot is asked for.

Syntax (one spec = one seat)::

    [NAME=]SPEC

    random | lowest | heuristic      a built-in bot, run inside the referee
    human                            a person at this terminal (``--human``)
    example:python-random            an example bot (see ``EXAMPLES``), over stdio
    zmq:example:python-random        an example bot over ZeroMQ
    stdio:COMMAND                    an external bot over stdio (JSON lines)
    zmq:COMMAND                      an external bot over ZeroMQ (msgpack)
    remote:NAME                      a bot started elsewhere that connects to the
                                     referee over ZeroMQ (``RemoteSeats``)
    COMMAND                          same as stdio:COMMAND (when it is not one of
                                     the words above), e.g. "python3 mybot.py"

COMMAND is split like a shell would (``shlex``), but no shell runs it.  ``NAME=``
names the seat (default: the built-in's name, the program's file name, or the remote
bot's name); NAME is letters, digits, ``_ . -``, starting with a letter.

Remote bots.  ``RemoteSeats`` is the listening endpoint of one session's
``remote:NAME`` seats: it reads the keys (``referee.transport.zmq.keys``), binds a
``referee.transport.zmq.listener.RemoteListener``, makes each seat's ``ExternalPlayer`` and
waits, under one deadline, for every remote bot to connect and say hello.  The bot
remote:NAME is admitted by the CURVE key in ``NAME.key`` of the keys directory; on a
loopback endpoint without keys (no CURVE), by the name in its hello alone.
"""

from __future__ import annotations

import dataclasses
import difflib
import errno
import logging
import os
import re
import shlex
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..bots import BUILTIN_BOTS
from .process import DEFAULT_MEMORY_MB
from .sandbox import Sandbox

if TYPE_CHECKING:  # pragma: no cover
    from ..transport.zmq.listener import RemoteListener
    from .external import ExternalPlayer

KINDS = ("builtin", "human", "stdio", "zmq", "remote")
TRANSPORTS = ("stdio", "zmq")

#: The repository's ``example_bots`` directory (the package is installed editable, or
#: run from a checkout).
EXAMPLE_DIR = Path(__file__).resolve().parent.parent / "example_bots"

#: Example bots by short name: (path under example_bots/, interpreter).
EXAMPLES: dict[str, tuple[str, str]] = {
    "python-random": ("python/random_bot.py", "python"),
    "python-heuristic": ("python/heuristic_bot.py", "python"),
    "js": ("js/bot.js", "node"),
}

_NAME = re.compile(r"^([A-Za-z][A-Za-z0-9_.\-]*)=(.+)$", re.S)
_BOT_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.\-]*\Z")

#: Where ``referee play`` listens for remote bots unless told otherwise.
DEFAULT_LISTEN = "tcp://127.0.0.1:5555"

#: The words a spec may be, for "did you mean" (a misspelt one is taken for a program).
_WORDS = (*BUILTIN_BOTS, "human", *(f"example:{k}" for k in EXAMPLES))

SYNTAX_HELP = (
    "a bot is 'random', 'lowest', 'heuristic', 'human', "
    f"'example:{'|'.join(EXAMPLES)}', 'stdio:COMMAND', 'zmq:COMMAND', 'remote:NAME' "
    "or a command line "
    "such as 'python3 mybot.py', optionally named with NAME=..."
)


class BotSpecError(ValueError):
    """A bot spec that cannot be used; the message says what would be right."""


@dataclass(frozen=True)
class BotSpec:
    """One seat's bot, as given on the command line."""

    kind: str  # one of KINDS
    name: str
    builtin: str = ""  # kind "builtin": the built-in bot's name
    command: tuple[str, ...] = ()  # kinds "stdio", "zmq"
    remote: str = ""  # kind "remote": the name its key file and its hello carry
    cwd: str | None = None
    text: str = ""  # the spec as given
    named: bool = field(default=False, compare=False)  # NAME= given

    @property
    def external(self) -> bool:
        return self.kind in TRANSPORTS


INTERPRETERS = {"python", "node", "ruby", "perl", "sh", "bash", "php", "Rscript", "julia",
                "lua", "deno", "bun", "java", "env", "uv"}
#: File endings of scripts we check exist before starting their interpreter.
SCRIPT_SUFFIXES = {".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".sh", ".php", ".R",
                   ".jl", ".lua", ".jar"}


def _is_interpreter(program: str) -> bool:
    prog = Path(program).name
    return re.sub(r"[\d.]+$", "", prog) in INTERPRETERS or prog == Path(sys.executable).name


def _script(command: Sequence[str]) -> str | None:
    """The script an interpreter is asked to run (``python3 -u bot.py`` -> bot.py), or
    None (``python3 -m pkg``, ``sh -c '...'``, not an interpreter)."""
    if not _is_interpreter(command[0]):
        return None
    for i, w in enumerate(command[1:], 1):
        if w in ("-m", "-c", "-e", "--eval", "-jar") and i + 1 < len(command):
            return command[i + 1] if w == "-jar" else None
        if w.startswith("-") or "=" in w or Path(w).name in INTERPRETERS:
            continue  # an option, an env assignment, or the program 'env' runs
        return w
    return None


def _program_name(command: Sequence[str]) -> str:
    """A readable default name: the script after an interpreter, else the program."""
    if _is_interpreter(command[0]):
        for i, w in enumerate(command[1:], 1):
            if w == "-m" and i + 1 < len(command):
                return command[i + 1].rsplit(".", 1)[-1]
            if w in ("-c", "-e", "--eval"):
                break
            if w.startswith("-") or "=" in w or Path(w).name in INTERPRETERS:
                continue
            return Path(w).stem or w
    return Path(command[0]).stem or command[0]


def _split(command: str, spec: str) -> tuple[str, ...]:
    try:
        words = tuple(shlex.split(command))
    except ValueError as e:
        raise BotSpecError(f"bot {spec!r}: cannot split the command line ({e}); check its quotes") from None
    if not words:
        raise BotSpecError(f"bot {spec!r}: the command is empty; {SYNTAX_HELP}")
    return words


def check_command(command: Sequence[str], spec: str, cwd: str | None = None) -> None:
    """The program of ``command`` exists (on PATH, or as a path); else BotSpecError."""
    prog = command[0]
    if os.sep in prog or (os.altsep and os.altsep in prog):
        path = Path(cwd or ".") / prog
        if not path.exists():
            raise BotSpecError(
                f"bot {spec!r}: no such file {prog!r}; check the path (relative to "
                f"{'the bot directory' if cwd else 'the current directory'})"
            )
        if not os.access(path, os.X_OK):
            raise BotSpecError(
                f"bot {spec!r}: {prog!r} is not executable; run 'chmod +x {prog}' or give its "
                f"interpreter, e.g. 'python3 {prog}'"
            )
    elif shutil.which(prog) is None:
        hint = ""
        if Path(cwd or ".", prog).exists():
            hint = f" (there is a file {prog!r} here: write './{prog}')"
        elif len(command) == 1:
            close = difflib.get_close_matches(prog.lower(), _WORDS, n=1, cutoff=0.75)
            if close:
                hint = f" (did you mean {close[0]!r}?)"
        raise BotSpecError(
            f"unknown bot command {prog!r} in bot {spec!r}: it is not on PATH{hint}; "
            f"{SYNTAX_HELP}"
        )
    script = _script(command)
    if script is not None and Path(script).suffix in SCRIPT_SUFFIXES:
        if not (Path(cwd or ".") / script).exists():
            raise BotSpecError(
                f"bot {spec!r}: no such file {script!r}; check the path (relative to "
                f"{'the bot directory' if cwd else 'the current directory'})"
            )


def parse_spec(text: str, *, check: bool = True, cwd: str | None = None) -> BotSpec:
    """Read one bot spec (see the module docstring).  ``check`` looks the external
    program up (relative paths from ``cwd``, the bot's working directory), so that a
    typo is reported before any game starts."""
    spec = text.strip()
    if not spec:
        raise BotSpecError(f"an empty bot spec: {SYNTAX_HELP}")
    name = ""
    m = _NAME.match(spec)
    if m and not m.group(2).startswith("="):
        name, spec = m.group(1), m.group(2).strip()
    low = spec.lower()
    if low in BUILTIN_BOTS:
        return BotSpec("builtin", name or low, builtin=low, text=text, named=bool(name))
    if low == "human":
        return BotSpec("human", name or "human", text=text, named=bool(name))
    scheme, sep, rest = spec.partition(":")
    if sep and scheme in TRANSPORTS and rest.strip().startswith("example:"):
        # An example bot over a chosen transport: zmq:example:python-random.
        ex_spec = parse_spec(rest.strip(), check=check, cwd=cwd)
        default = ex_spec.name if scheme == "stdio" else f"{ex_spec.name}-{scheme}"
        return BotSpec(scheme, name or default, command=ex_spec.command, text=text,
                       named=bool(name))
    if sep and scheme == "remote":
        remote = rest.strip()
        if not _BOT_NAME.match(remote):
            raise BotSpecError(
                f"bot {text!r}: {remote!r} is not a remote bot's name: write remote:NAME, "
                f"NAME being letters, digits, '_', '.', '-', starting with a letter (the "
                f"name of its key file NAME.key and of its hello)")
        return BotSpec("remote", name or remote, remote=remote, text=text, named=bool(name))
    if sep and scheme == "example":
        ex = EXAMPLES.get(rest.strip())
        if ex is None:
            close = difflib.get_close_matches(rest.strip(), EXAMPLES, n=1)
            raise BotSpecError(
                f"unknown example bot {rest.strip()!r}: "
                + (f"did you mean 'example:{close[0]}'? " if close else "")
                + "choose from " + ", ".join(f"example:{k}" for k in EXAMPLES)
            )
        rel, interp = ex
        path = EXAMPLE_DIR / rel
        if check and not path.exists():
            raise BotSpecError(
                f"example bot {spec!r} is not in this installation ({path} is missing); "
                "run the referee from a checkout of the repository"
            )
        program = sys.executable if interp == "python" else interp
        command: tuple[str, ...] = (program, str(path))
        if check:
            check_command(command, spec)
        return BotSpec("stdio", name or f"example-{rest.strip()}", command=command, text=text,
                       named=bool(name))
    kind = "stdio"
    if sep and scheme in TRANSPORTS:
        kind, spec = scheme, rest
    elif sep and re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", scheme):
        # "tcp:...", "exmaple:js": a prefix we do not know, not a program.
        close = difflib.get_close_matches(scheme, (*TRANSPORTS, "remote", "example"), n=1)
        raise BotSpecError(
            f"bot {text!r}: unknown prefix {scheme + ':'!r}; "
            + (f"did you mean {close[0] + ':'!r}? " if close else "")
            + f"use stdio:, zmq:, remote: or example: ({SYNTAX_HELP})"
        )
    command = _split(spec, text)
    if check:
        check_command(command, text, cwd)
    return BotSpec(kind, name or _program_name(command), command=command, text=text,
                   named=bool(name))


def _split_command_hint(texts: Sequence[str], i: int) -> int | None:
    """When spec ``i`` failed and the specs before it, from the one returned, are a
    command's first words (``zmq:node`` then ``bot.js``: the shell split an unquoted
    command), the index of that first word."""
    for j in range(i - 1, -1, -1):
        head = texts[j]
        scheme, sep, rest = head.partition(":")
        words = (rest if sep and scheme in TRANSPORTS else head).split()
        if len(words) == 1 and _is_interpreter(words[0]):
            return j
        if len(words) != 1 or head.lower() in BUILTIN_BOTS or head.lower() == "human" \
                or ":" in head:
            return None
    return None


def parse_specs(texts: Sequence[str], *, check: bool = True) -> list[BotSpec]:
    """Several specs, the seats' names made unique (``random``, ``random-2``, ...)."""
    specs = []
    for i, t in enumerate(texts):
        try:
            specs.append(parse_spec(t, check=check))
        except BotSpecError:
            j = _split_command_hint(texts, i)
            if j is None:
                raise
            quoted = '"' + " ".join(texts[j: i + 1]) + '"'
            raise BotSpecError(
                f"{' '.join(texts[j: i + 1])!r} looks like one bot's command line split "
                f"into {i + 1 - j} bots by the shell: quote the whole command, as in "
                f"{quoted}") from None
    names = [s.name for s in specs]
    out: list[BotSpec] = []
    for i, s in enumerate(specs):
        if names.count(s.name) > 1:
            k = names[: i + 1].count(s.name)
            if s.named:
                raise BotSpecError(f"two seats are named {s.name!r}: give each seat its own name")
            s = dataclasses.replace(s, name=f"{s.name}-{k}" if k > 1 else s.name, named=False)
        out.append(s)
    # A generated name must not collide with a given one ("random-2" and random random).
    final = [s.name for s in out]
    if len(set(final)) != len(final):
        dup = next(n for n in final if final.count(n) > 1)
        raise BotSpecError(f"two seats are named {dup!r}: give each seat its own name")
    remotes = [s.remote for s in out if s.kind == "remote"]
    for r in remotes:
        if remotes.count(r) > 1:
            raise BotSpecError(f"remote bot {r!r} is given twice: one connection plays one "
                               f"seat (give the second seat a bot of its own, e.g. "
                               f"'referee keys new {r}2' and remote:{r}2)")
    return out


OnMessage = Callable[[str, str, Any, float], None]


def make_player(
    spec: BotSpec,
    *,
    time_control: Any = None,
    on_message: OnMessage | None = None,
    log_dir: str | None = None,
    memory_mb: int | None = None,
    human_io: tuple[Any, Any] | None = None,
    seed: int = 0,
    remote_seats: RemoteSeats | None = None,
    sandbox: Sandbox | None = None,
) -> Any:
    """The runner ``Player`` for ``spec``.  External bots are started by their
    transport's factory (``referee.players.external.stdio_player``,
    ``referee.players.external.zmq_player``) with the one launcher, in ``sandbox`` when
    it is active; a remote bot is a seat of ``remote_seats``."""
    from ..bots import make_bot
    from ..play.runner import InProcessPlayer

    if spec.kind == "remote":
        if remote_seats is None:
            raise BotSpecError(f"bot {spec.text!r}: a remote bot needs a listening endpoint "
                               f"(RemoteSeats), and none was opened")
        return remote_seats.player(spec, time_control=time_control, on_message=on_message)
    if spec.kind == "builtin":
        return InProcessPlayer(make_bot(spec.builtin, seed), name=spec.name)
    if spec.kind == "human":
        from .human import HumanPlayer

        inp, out = human_io if human_io is not None else (sys.stdin, sys.stdout)
        return HumanPlayer(inp, out, name=spec.name)
    from .external import external_player

    return external_player(spec.name, list(spec.command), spec.cwd, None, time_control,
                           memory_mb if memory_mb is not None else DEFAULT_MEMORY_MB, log_dir,
                           transport="zmq" if spec.kind == "zmq" else "stdio",
                           on_message=on_message, sandbox=sandbox)


# --- remote bots -------------------------------------------------------------------------


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
    from ..transport.zmq import keys
    from ..transport.zmq import transport as zmq_transport

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
    if not zmq_transport.is_loopback(endpoint):
        raise RemoteBotError(
            f"listening on {endpoint} (not loopback) needs CURVE: give {keys_opt} DIR (the "
            f"allowed bots' public keys) and {server_key_opt} FILE (the referee's secret key, "
            f"from 'referee keys server'), or listen on loopback, e.g. {DEFAULT_LISTEN}")
    return {n: b"" for n in names}, None  # no CURVE: the names alone


def _listen_error(endpoint: str, e: Any, listen_opt: str) -> str:
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
    import zmq

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

    ``on_warning`` gets each refused connection as the transport logs it;
    ``on_status`` a line whenever a bot that lost its connection is waited for
    again (the next game of a match), when it is back, and when it is found absent."""

    def __init__(self, names: Sequence[str], endpoint: str = DEFAULT_LISTEN, *,
                 keys_dir: str | None = None, server_key: str | None = None,
                 wait: float = 300.0, rewait: float | None = None, give_up: bool = False,
                 on_warning: Callable[[str], None] | None = None,
                 on_status: Callable[[str], None] | None = None,
                 listen_opt: str = "--listen") -> None:
        try:
            import zmq

            from ..transport.zmq import transport as zmq_transport
        except ImportError as e:
            raise RemoteBotError(f"remote bots need the ZeroMQ transport, which is not "
                                 f"available here ({e}): pip install pyzmq msgpack") from None
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
        # The transport logs every refused connection (a refused bot reconnects, and it
        # throttles those lines): kept for the "did not connect" error, and passed on.
        self._log = _RefusalLog(on_warning)
        logging.getLogger("referee.zmq").addHandler(self._log)
        try:
            self.listener: RemoteListener = zmq_transport.RemoteListener(endpoint, allowed,
                                                                         secret)
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

    def player(self, spec: BotSpec, *, time_control: Any = None,
               on_message: OnMessage | None = None) -> ExternalPlayer:
        """The ``ExternalPlayer`` of a ``remote:NAME`` seat.  Its connection is the next
        one admitted as NAME: within what is left of ``connect``'s deadline, and
        within ``rewait`` seconds when it has to come again (after a lost connection,
        for the next game of a match)."""
        return self.player_named(spec.remote, spec.name, time_control=time_control,
                                 on_message=on_message)

    def player_named(self, name: str, seat_name: str, *, time_control: Any = None,
                     on_message: OnMessage | None = None) -> ExternalPlayer:
        """``player`` by names: the remote bot ``name`` (its key file's and hello's),
        playing as ``seat_name``."""
        from ..transport.base import TransportTimeout
        from .external import Connection, ExternalPlayer
        from .process import BotStartError

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
        from ..play.runner import BotFault

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
        import socket

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
        reasons = self._log.reasons
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


class _RefusalLog(logging.Handler):
    """Collects the transport's warnings (refused connections), each reason once,
    and passes each line on to ``on_warning``.  Called from the transport's
    authenticator thread too: it only appends and calls."""

    def __init__(self, on_warning: Callable[[str], None] | None) -> None:
        super().__init__(logging.WARNING)
        self.on_warning = on_warning
        self.reasons: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
        except Exception:  # a malformed log call must not stop the referee
            return
        # "refused a connection on ENDPOINT: WHY (N times so far)" -> WHY
        why = re.sub(r" \(\d+ times so far\)$", "", text.split(": ", 1)[-1])
        if text.startswith("refused") and why not in self.reasons:
            self.reasons.append(why)
        if self.on_warning is not None:
            try:
                self.on_warning(text)
            except Exception:  # printing a warning must not stop the referee
                self.on_warning = None
