"""The one way a ``BotSpec`` becomes a runner ``Player``: for ``referee play``,
matches and tournaments alike.

=========  ==============================================================
kind       player
=========  ==============================================================
builtin    ``referee.play.runner.InProcessPlayer`` around a bot of ``referee.bots``
python     the same around a tournament's Python bot class (or that object,
           when it is a Player already)
human      ``referee.players.human.HumanPlayer`` at this terminal
stdio/zmq  ``referee.players.external.external_player``: the program started by the one
           launcher (``referee.players.launcher.launch_bot``), in the sandbox when active
remote     a seat of ``referee.players.remote_seats.RemoteSeats``
=========  ==============================================================

Knows nothing of schedules, stores or the command line.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from ..bots import make_bot
from ..play.runner import SEAT_STREAM, BotFault, InProcessPlayer, Player, TimeControl
from .botspec import BotSpec, BotSpecError, names_from_hellos
from .external import ExternalPlayer, TranscriptHook, external_player
from .human import HumanPlayer
from .remote_seats import RemoteSeats
from .sandbox import Sandbox, unsandboxed


def make_player(
    spec: BotSpec,
    *,
    time_control: TimeControl | None = None,
    on_message: TranscriptHook | None = None,
    log_dir: str | None = None,
    log_name: str | None = None,
    sandbox: Sandbox | None = None,
    base_dir: str | None = None,
    seed: int = 0,
    streams: bool = False,
    human_io: tuple[TextIO, TextIO] | None = None,
    remote_seats: RemoteSeats | None = None,
) -> Player:
    """The ``Player`` for ``spec``.

    An external bot is started by its first game (its log files in ``log_dir``,
    named ``log_name``, default its name), in ``sandbox`` when that is active and
    the spec is ``sandboxed``, under ``spec.memory_mb`` or else the sandbox's memory
    limit.  ``base_dir``: the folder ``spec.cwd`` and a Python bot's file are
    relative to (a tournament's configuration folder); None: the current directory.
    An in-process bot is made with ``seed`` and draws each game's numbers from its
    seat -- or, with ``streams`` (duplicate deals), from the deal and the seat
    (``SEAT_STREAM``: identical bots in identical positions choose identically), or
    from its ``spec.stream`` when it has one, the same wherever it sits.  A remote bot is a seat of
    ``remote_seats``; a human reads ``human_io`` (default: this terminal)."""
    stream = spec.stream or (SEAT_STREAM if streams else None)
    if spec.builtin:
        return InProcessPlayer(make_bot(spec.builtin, seed), spec.name, stream=stream)
    if spec.python:
        obj = load_python_object(spec.python, base_dir or ".")
        bot = obj(seed) if callable(obj) else obj
        if hasattr(bot, "start_game"):  # already a Player
            bot.name = spec.name
            return bot  # type: ignore[no-any-return]
        return InProcessPlayer(bot, spec.name, stream=stream)
    if spec.human:
        inp, out = human_io if human_io is not None else (sys.stdin, sys.stdout)
        return HumanPlayer(inp, out, name=spec.name)
    if spec.remote:
        if remote_seats is None:
            raise BotSpecError(f"bot {spec.text or spec.name!r}: a remote bot needs a "
                               f"listening endpoint (RemoteSeats), and none was opened")
        return remote_seats.player(spec, time_control=time_control, on_message=on_message)
    assert spec.command is not None, spec
    sb = sandbox if sandbox is not None else unsandboxed()
    if not spec.sandboxed:
        sb = sb.off()
    cwd = spec.cwd if base_dir is None else str((Path(base_dir) / (spec.cwd or ".")).resolve())
    return external_player(spec.name, list(spec.command), cwd, dict(spec.env) or None,
                           time_control, spec.memory_mb or sb.config.memory_mb, log_dir,
                           transport=spec.transport, on_message=on_message, sandbox=sb,
                           log_name=log_name)


def hello_names(specs: Sequence[BotSpec], *, time_control: TimeControl | None = None,
                sandbox: Sandbox | None = None, base_dir: str | None = None) -> list[str]:
    """The bots' names as ``--names hello`` gives them (``names_from_hellos``): each
    external bot not given a NAME= is started once, in ``sandbox``, for its hello,
    and ended; the others, and a bot that does not start, keep their names."""
    hellos: list[str | None] = []
    for spec in specs:
        if spec.named or spec.command is None:
            hellos.append(None)
            continue
        p = make_player(spec, time_control=time_control, sandbox=sandbox, base_dir=base_dir)
        assert isinstance(p, ExternalPlayer)
        try:
            p.connect()
            hellos.append(p.hello.name if p.hello is not None else None)
        except BotFault:
            hellos.append(None)
        finally:
            p.close()
    return names_from_hellos([s.name for s in specs], hellos)


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
