"""Bot specs: how a bot is named on the command line, and the Player it becomes.

Owns the bot-spec syntax of ``referee play`` (and of anything else that takes bots on
the command line) and its parsing into a ``BotSpec``, plus ``make_player`` that
turns a spec into a runner ``Player``.  Parsing does no I/O beyond looking a
command up on PATH; starting external bots is ``referee.remote``'s job (stdio) and
``referee.transport.zmq``'s (ZeroMQ), imported only when such a bot is asked for.

Syntax (one spec = one seat)::

    [NAME=]SPEC

    random | lowest | heuristic      a built-in bot, run inside the referee
    human                            a person at this terminal (``--human``)
    example:python-random            an example bot (see ``EXAMPLES``), over stdio
    zmq:example:python-random        an example bot over ZeroMQ
    stdio:COMMAND                    an external bot over stdio (JSON lines)
    zmq:COMMAND                      an external bot over ZeroMQ (msgpack)
    COMMAND                          same as stdio:COMMAND (when it is not one of
                                     the words above), e.g. "python3 mybot.py"

COMMAND is split like a shell would (``shlex``), but no shell runs it.  ``NAME=``
names the seat (default: the built-in's name, or the program's file name); NAME is
letters, digits, ``_ . -``, starting with a letter.
"""

from __future__ import annotations

import inspect
import os
import re
import shlex
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .bots import BUILTIN_BOTS

KINDS = ("builtin", "human", "stdio", "zmq")
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

SYNTAX_HELP = (
    "a bot is 'random', 'lowest', 'heuristic', 'human', "
    f"'example:{'|'.join(EXAMPLES)}', 'stdio:COMMAND', 'zmq:COMMAND' or a command line "
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


def parse_spec(text: str, *, check: bool = True) -> BotSpec:
    """Read one bot spec (see the module docstring).  ``check`` looks the external
    program up, so that a typo is reported before any game starts."""
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
        ex_spec = parse_spec(rest.strip(), check=check)
        default = ex_spec.name if scheme == "stdio" else f"{ex_spec.name}-{scheme}"
        return BotSpec(scheme, name or default, command=ex_spec.command, text=text,
                       named=bool(name))
    if sep and scheme == "example":
        ex = EXAMPLES.get(rest.strip())
        if ex is None:
            raise BotSpecError(
                f"unknown example bot {rest.strip()!r}: choose from "
                + ", ".join(f"example:{k}" for k in EXAMPLES)
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
        raise BotSpecError(
            f"bot {text!r}: unknown prefix {scheme + ':'!r}; use stdio:, zmq: or example: "
            f"({SYNTAX_HELP})"
        )
    command = _split(spec, text)
    if check:
        check_command(command, text)
    return BotSpec(kind, name or _program_name(command), command=command, text=text,
                   named=bool(name))


def parse_specs(texts: Sequence[str], *, check: bool = True) -> list[BotSpec]:
    """Several specs, the seats' names made unique (``random``, ``random-2``, ...)."""
    specs = [parse_spec(t, check=check) for t in texts]
    names = [s.name for s in specs]
    out: list[BotSpec] = []
    for i, s in enumerate(specs):
        if names.count(s.name) > 1:
            k = names[: i + 1].count(s.name)
            if s.named:
                raise BotSpecError(f"two seats are named {s.name!r}: give each seat its own name")
            s = BotSpec(s.kind, f"{s.name}-{k}" if k > 1 else s.name, s.builtin,
                        s.command, s.cwd, s.text)
        out.append(s)
    # A generated name must not collide with a given one ("random-2" and random random).
    final = [s.name for s in out]
    if len(set(final)) != len(final):
        dup = next(n for n in final if final.count(n) > 1)
        raise BotSpecError(f"two seats are named {dup!r}: give each seat its own name")
    return out


OnMessage = Callable[[str, str, Any, float], None]


def _call_with_known_kwargs(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``fn`` with the keyword arguments it accepts (the transports' factories
    take a few optional hooks; an older or simpler one may lack some)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins
        return fn(*args, **kwargs)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return fn(*args, **kwargs)
    return fn(*args, **{k: v for k, v in kwargs.items() if k in params and v is not None})


def make_player(
    spec: BotSpec,
    *,
    time_control: Any = None,
    on_message: OnMessage | None = None,
    log_dir: str | None = None,
    memory_mb: int | None = None,
    human_io: tuple[Any, Any] | None = None,
    seed: int = 0,
) -> Any:
    """The runner ``Player`` for ``spec``.  External bots are started by their
    transport's factory (``referee.remote.stdio_player``,
    ``referee.transport.zmq.zmq_player``); raises BotSpecError when that transport is
    not available in this installation."""
    from .bots import make_bot
    from .runner import InProcessPlayer

    if spec.kind == "builtin":
        return InProcessPlayer(make_bot(spec.builtin, seed), name=spec.name)
    if spec.kind == "human":
        from .human import HumanPlayer

        inp, out = human_io if human_io is not None else (sys.stdin, sys.stdout)
        return HumanPlayer(inp, out, name=spec.name)
    if spec.kind == "stdio":
        try:
            from . import remote
        except ImportError as e:
            raise BotSpecError(f"bot {spec.text!r}: the stdio transport is not available ({e})") from None
        factory: Callable[..., Any] = remote.stdio_player
    else:
        try:
            from .transport import zmq as zmq_transport
        except ImportError as e:
            raise BotSpecError(f"bot {spec.text!r}: the ZeroMQ transport is not available ({e})") from None
        zmq_factory = getattr(zmq_transport, "zmq_player", None)
        if zmq_factory is None:
            raise BotSpecError(f"bot {spec.text!r}: the ZeroMQ transport is not available yet")
        factory = zmq_factory
    return _call_with_known_kwargs(
        factory, spec.name, list(spec.command), cwd=spec.cwd, time_control=time_control,
        on_message=on_message, log_dir=log_dir, memory_mb=memory_mb,
    )
