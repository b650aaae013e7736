"""Bot specs: the one description of a bot, and how one is named on the command line.

Owns ``BotSpec`` -- one seat's or one entrant's bot, for ``referee play``,
``check-bot``, matches and tournaments alike (a tournament's ``[[bots]]`` tables
become BotSpecs too, ``referee.tournament.config``) -- and the bot-spec syntax of
the command line with its parsing.  Parsing does no I/O beyond looking a command up
on PATH; a spec becomes a player in ``referee.players.factory.make_player``.

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

Remote bots connect to a listening endpoint, ``referee.players.remote_seats.RemoteSeats``.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import re
import shlex
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from ..bots import BUILTIN_BOTS
from ..errors import UsageError

Kind = Literal["builtin", "python", "human", "stdio", "zmq", "remote"]
Transport = Literal["stdio", "zmq"]
KINDS: tuple[Kind, ...] = get_args(Kind)
#: How the referee talks to a bot it starts: JSON lines on stdio, or msgpack over ZeroMQ.
TRANSPORTS: tuple[Transport, ...] = get_args(Transport)

#: The repository's ``example_bots`` directory (the package is installed editable, or
#: run from a checkout).
EXAMPLE_DIR = Path(__file__).resolve().parents[2] / "example_bots"

#: Example bots by short name: (path under example_bots/, interpreter).
EXAMPLES: dict[str, tuple[str, str]] = {
    "python-random": ("python/random_bot.py", "python"),
    "python-heuristic": ("python/heuristic_bot.py", "python"),
    "js": ("js/bot.js", "node"),
}

_NAME = re.compile(r"^([A-Za-z][A-Za-z0-9_.\-]*)=(.+)$", re.S)
_BOT_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.\-]*\Z")

#: Where ``referee play`` and tournaments listen for remote bots unless told otherwise.
DEFAULT_LISTEN = "tcp://127.0.0.1:5555"

#: The words a spec may be, for "did you mean" (a misspelt one is taken for a program).
_WORDS = (*BUILTIN_BOTS, "human", *(f"example:{k}" for k in EXAMPLES))

SYNTAX_HELP = (
    "a bot is 'random', 'lowest', 'heuristic', 'human', "
    f"'example:{'|'.join(EXAMPLES)}', 'stdio:COMMAND', 'zmq:COMMAND', 'remote:NAME' "
    "or a command line "
    "such as 'python3 mybot.py', optionally named with NAME=..."
)


class BotSpecError(UsageError, ValueError):
    """A bot spec that cannot be used; the message says what would be right."""


def as_transport(text: str) -> Transport:
    """``text`` as a transport's name (one of ``TRANSPORTS``), else ValueError."""
    for t in TRANSPORTS:
        if t == text:
            return t
    raise ValueError(f"transport must be one of {', '.join(TRANSPORTS)}, not {text!r}")


@dataclass(frozen=True)
class BotSpec:
    """One bot: a seat's, as given on the command line, or a tournament's entrant.
    Exactly one of ``builtin`` (a bot of ``referee.bots``), ``python``
    (``path/to/file.py:Class`` or ``module:attr``, an in-process bot class taking a
    seed; tournaments only), ``command`` (an external program the referee starts,
    speaking ``transport``), ``remote`` (the name a remote bot's key file and hello
    carry: a program its author starts, which connects over ZeroMQ) or ``human`` (a
    person at this terminal) is set."""

    name: str
    builtin: str | None = None
    python: str | None = None
    command: tuple[str, ...] | None = None
    transport: Transport = "stdio"
    #: The bot's working directory; in a tournament as written, relative to the
    #: configuration's folder (``make_player``'s ``base_dir``).
    cwd: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    memory_mb: int | None = None
    remote: str | None = None
    human: bool = False
    #: False: a bot the organiser trusts, run without the sandbox (``sandbox = "off"``).
    sandboxed: bool = True
    #: The name an in-process bot's random stream is drawn under, from the game's
    #: seed and not from its seat (a tournament's bots have none: they draw from the
    #: deal and the seat, ``play.runner.SEAT_STREAM``).  A match gives
    #: NEW and OLD the same one: the same cards and the same random numbers in the
    #: same seat (``referee.tournament.match``).  None: drawn from the seat.
    stream: str | None = None
    text: str = field(default="", compare=False)  # the spec as given on the command line
    named: bool = field(default=False, compare=False)  # NAME= given

    def __post_init__(self) -> None:
        given = [k for k in ("builtin", "python", "command", "remote", "human")
                 if getattr(self, k)]
        if len(given) != 1:
            raise ValueError(f"bot {self.name!r}: give exactly one of builtin, python, "
                             f"command, remote or human, not {given or 'none'}")
        if self.transport not in TRANSPORTS:
            raise ValueError(f"bot {self.name!r}: transport must be one of "
                             f"{', '.join(TRANSPORTS)}, not {self.transport!r}")

    @property
    def kind(self) -> Kind:
        if self.builtin:
            return "builtin"
        if self.python:
            return "python"
        if self.remote:
            return "remote"
        if self.human:
            return "human"
        return self.transport

    @property
    def external(self) -> bool:
        """A program the referee starts (over stdio or ZeroMQ)."""
        return self.command is not None

    def to_dict(self) -> dict[str, Any]:
        """What decides a tournament's games (its store compares them on resume): the
        one writer of a bot as a store keeps it (read back by ``tournament.kinds.read_bot``)."""
        d: dict[str, Any] = {"name": self.name}
        if self.builtin:
            d["builtin"] = self.builtin
        if self.python:
            d["python"] = self.python
        if self.remote:
            d["remote"] = self.remote
        if self.stream:
            d["stream"] = self.stream
        if self.command:
            d.update(command=list(self.command), transport=self.transport, cwd=self.cwd,
                     env=dict(self.env), memory_mb=self.memory_mb)
            if not self.sandboxed:
                d["sandbox"] = "off"
        return d


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


#: Interpreters by file name ending, for a script without a ``#!`` line.
_BY_SUFFIX = {".py": "python3", ".js": "node", ".mjs": "node", ".rb": "ruby", ".pl": "perl",
              ".sh": "sh", ".jar": "java -jar", ".php": "php", ".lua": "lua"}


def _not_executable_hint(path: Path, prog: str) -> str:
    """What to do about a program file without its executable bit: a compiled program
    (ELF) or a script with a ``#!`` line only needs the bit; a script without one
    needs its interpreter, named from its ending when it says."""
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except OSError:
        head = b""
    if head == b"\x7fELF" or head.startswith(b"#!"):
        return f"run 'chmod +x {prog}'"
    run = _BY_SUFFIX.get(path.suffix.lower())
    if run:
        return f"run 'chmod +x {prog}' or give its interpreter: '{run} {prog}'"
    return f"run 'chmod +x {prog}' or give its interpreter, e.g. 'python3 {prog}'"


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
            raise BotSpecError(f"bot {spec!r}: {prog!r} is not executable; "
                               f"{_not_executable_hint(path, prog)}")
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
        return BotSpec(name or low, builtin=low, text=text, named=bool(name))
    if low == "human":
        return BotSpec(name or "human", human=True, text=text, named=bool(name))
    scheme, sep, rest = spec.partition(":")
    if sep and scheme in TRANSPORTS and rest.strip().startswith("example:"):
        # An example bot over a chosen transport: zmq:example:python-random.
        ex_spec = parse_spec(rest.strip(), check=check, cwd=cwd)
        default = ex_spec.name if scheme == "stdio" else f"{ex_spec.name}-{scheme}"
        return BotSpec(name or default, command=ex_spec.command, transport=scheme, text=text,
                       named=bool(name))
    if sep and scheme == "remote":
        remote = rest.strip()
        if not _BOT_NAME.match(remote):
            raise BotSpecError(
                f"bot {text!r}: {remote!r} is not a remote bot's name: write remote:NAME, "
                f"NAME being letters, digits, '_', '.', '-', starting with a letter (the "
                f"name of its key file NAME.key and of its hello)")
        return BotSpec(name or remote, remote=remote, text=text, named=bool(name))
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
        return BotSpec(name or f"example-{rest.strip()}", command=command, text=text,
                       named=bool(name))
    transport: Transport = "stdio"
    if sep and scheme in TRANSPORTS:
        transport, spec = scheme, rest
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
    return BotSpec(name or _program_name(command), command=command, transport=transport,
                   text=text, named=bool(name))


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


#: The longest seat name taken from a bot's hello (``referee play --names hello``).
HELLO_NAME_MAX = 32
#: How a seat is named: "spec", from the bot spec (NAME=, else the program's name:
#: today's rule), or "hello", from the name the bot gives in its hello.
NAMING = ("spec", "hello")


def hello_seat_name(text: str) -> str:
    """A seat's name from what a bot said in its hello (hostile text: up to 200
    characters of anything): letters, digits and ``_.+@-`` kept, every other run of
    characters one ``_``, at most ``HELLO_NAME_MAX`` characters; "" when nothing is
    left."""
    name = re.sub(r"[^A-Za-z0-9_.+@-]+", "_", text).strip("_.-")
    return name[:HELLO_NAME_MAX].rstrip("_.-")


def names_from_hellos(names: Sequence[str], hellos: Sequence[str | None]) -> list[str]:
    """The seats' names with ``--names hello``: a seat whose bot said hello takes the
    name it gave (``hello_seat_name``); a seat without one (a built-in or remote bot,
    a NAME= given, a bot that did not start) keeps ``names[i]``.  A hello name that
    another seat has already, or had before, gets a suffix (``-2``, ``-3``...): the
    first seat keeps it."""
    kept = {n.lower() for n, h in zip(names, hellos, strict=True) if h is None}
    used: set[str] = set()
    out: list[str] = []
    for n, h in zip(names, hellos, strict=True):
        base = n if h is None else (hello_seat_name(h) or n)
        name, k = base, 2
        while h is not None and (name.lower() in used or name.lower() in kept):
            suffix = f"-{k}"
            name, k = base[:HELLO_NAME_MAX - len(suffix)] + suffix, k + 1
        used.add(name.lower())
        out.append(name)
    return out
