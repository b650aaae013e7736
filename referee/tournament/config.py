"""A tournament's configuration: the TOML file, read and checked.

Owns ``TournamentConfig`` and the reading of ``tournaments/*.toml``; each entrant
becomes a ``referee.players.botspec.BotSpec``, as a bot of ``referee play`` does.
Every mistake is reported as one ``TournamentConfigError`` line naming the file, the
key and what would be right.  Imports no I/O beyond reading the file; knows nothing
of schedules, workers or the store.

File layout (all sections but ``[[bots]]`` optional)::

    [tournament]   name, format, seats, deals | games, seed, seating, challengers,
                   jobs, output
    [rules]        variants, colours, deck, turn_limit      (RULES §1, §4, §9)
    [time]         startup, per_decision, bank, game        (seconds)
    [faults]       policy, strike_limit, stop_after
    [remote]       listen, keys, server_key, wait, rewait   (remote bots only)
    [sandbox]      mode, memory_mb, processes, scratch_mb, read_only, interpreters,
                   freeze_between_turns
    [[bots]]       name, and one of: builtin = "heuristic" | python = "file.py:Class"
                   | command = "..." (with transport, cwd, env, memory_mb, sandbox)
                   | remote = true (a bot its author runs, connecting over ZeroMQ)
"""

from __future__ import annotations

import difflib
import json
import math
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import errors
from ..bots import BUILTIN_BOTS
from ..game import VARIANTS, GameConfig
from ..game.cards import DECKS
from ..game.errors import ConfigError
from ..game.seeds import MAX_SEED
from ..play.luck import DEFAULT_ROLLOUTS, VALUES, LuckSetting
from ..play.runner import FaultPolicy, TimeControl
from ..players.botspec import DEFAULT_LISTEN, TRANSPORTS, BotSpec, BotSpecError, parse_spec
from ..players.sandbox import MODES as SANDBOX_MODES
from ..players.sandbox import SandboxConfig, SandboxError

FORMATS = ("round-robin", "gauntlet", "balanced")
#: How each deal is seated: every rotation of a lineup (duplicate deals), a Williams
#: design (k seatings, 2k for odd k, balancing seat and predecessor), every
#: permutation (k! seatings), or one random seating per deal (independent deals).
SEATINGS = ("rotate", "williams", "all", "random")
#: Where the games are played: this machine's process pool, or a Dask cluster.
EXECUTORS = ("process", "dask")

_SECTIONS = ("tournament", "rules", "time", "faults", "remote", "sandbox", "scores", "bots")
_TOURNAMENT_KEYS = ("name", "format", "seats", "deals", "games", "seed", "seating",
                    "challengers", "jobs", "output", "executor", "scheduler", "ship_bots")
_RULES_KEYS = ("variants", "colours", "deck", "turn_limit")
_TIME_KEYS = ("startup", "per_decision", "bank", "game")
_FAULT_KEYS = ("policy", "strike_limit", "stop_after")
_SCORES_KEYS = ("value", "rollouts")

#: A bot that fails (crashes, cannot start) in each of its first this many games is
#: stopped: its remaining games are forfeited without starting it.
DEFAULT_STOP_AFTER = 3
_REMOTE_KEYS = ("listen", "keys", "server_key", "wait", "rewait")
_SANDBOX_KEYS = ("mode", "memory_mb", "processes", "scratch_mb", "read_only", "interpreters",
                 "freeze_between_turns")
_BOT_KEYS = ("name", "builtin", "python", "command", "remote", "transport", "cwd", "env",
             "memory_mb", "sandbox")

_TABLE_KEYS = {"tournament": _TOURNAMENT_KEYS, "rules": _RULES_KEYS, "time": _TIME_KEYS,
               "faults": _FAULT_KEYS, "remote": _REMOTE_KEYS, "scores": _SCORES_KEYS}


class TournamentConfigError(errors.ConfigError, ValueError):
    """A mistake in a tournament configuration: one line, naming the key."""


@dataclass(frozen=True)
class RemoteSettings:
    """Where and how a tournament waits for its remote bots (``[remote]``).  Paths as
    written (relative to the configuration's folder).  ``wait``: how long the
    tournament waits, before its first game with a remote bot, for every remote bot
    to connect; ``rewait``: how long a game waits for a remote bot that lost its
    connection to connect again.  A bot that did not come within either is absent:
    its games are forfeited without waiting, until it connects again."""

    listen: str = DEFAULT_LISTEN
    keys: str | None = None  # the allowed bots' public keys, NAME.key
    server_key: str | None = None  # the referee's secret key
    wait: float = 300.0
    rewait: float = 30.0


@dataclass(frozen=True)
class TournamentConfig:
    bots: tuple[BotSpec, ...]
    name: str = "tournament"
    format: str = "round-robin"
    seats: int = 2
    deals: int = 10  # per lineup (round-robin, gauntlet)
    games: int | None = None  # balanced: games in all
    #: None: drawn at random when the tournament first runs (and kept in its store).
    seed: int | None = None
    seating: str = "rotate"
    challengers: tuple[str, ...] = ()
    game: GameConfig = field(default_factory=lambda: GameConfig(variants=frozenset({"play_out"})))
    time: TimeControl = field(default_factory=TimeControl)
    faults: FaultPolicy = field(default_factory=FaultPolicy)
    jobs: int | None = None  # None: one per CPU
    executor: str = "process"  # or "dask" (referee.tournament.dask_executor)
    scheduler: str | None = None  # a Dask scheduler's address; None: a LocalCluster
    ship_bots: bool = True  # False: the Dask workers see the bots at these paths
    output: str = "runs/tournament"  # as written; relative to base_dir
    base_dir: str = "."  # the configuration file's folder
    remote: RemoteSettings = field(default_factory=RemoteSettings)
    sandbox: SandboxConfig = field(default_factory=SandboxConfig)
    stop_after: int = DEFAULT_STOP_AFTER  # 0: never stop a bot
    #: The value function of the luck-adjusted scores (``[scores]``).  Not part of
    #: ``to_dict``: it changes no game, and ``referee luck rescore`` changes it later.
    luck: LuckSetting = field(default_factory=LuckSetting)
    #: What the organiser should know about the file, though it is valid (printed as
    #: warnings): e.g. a ``variants`` list that drops the default ``play_out``.
    warnings: tuple[str, ...] = field(default=(), compare=False)

    @property
    def bot_names(self) -> list[str]:
        return [b.name for b in self.bots]

    @property
    def remote_bots(self) -> list[BotSpec]:
        return [b for b in self.bots if b.remote]

    def bot(self, name: str) -> BotSpec:
        for b in self.bots:
            if b.name == name:
                return b
        raise KeyError(name)

    @property
    def output_dir(self) -> Path:
        return (Path(self.base_dir) / self.output).resolve()

    def resolve(self, path: str | None) -> str | None:
        """A path from the file, relative to the file's folder."""
        return None if path is None else str((Path(self.base_dir) / path).resolve())

    def to_dict(self) -> dict[str, Any]:
        """What decides the games and their results: the store refuses to resume a
        tournament whose ``to_dict`` changed.  (``jobs``, ``output``, ``executor``,
        ``scheduler`` and ``[remote]`` do not change a result, so they are left out.)"""
        return {
            "name": self.name,
            "format": self.format,
            "seats": self.seats,
            "deals": self.deals if self.format != "balanced" else None,
            "games": self.games if self.format == "balanced" else None,
            "seed": self.seed,
            "seating": self.seating,
            "challengers": list(self.challengers),
            "rules": self.game.to_dict(),
            "time": {"startup": self.time.startup, "per_decision": self.time.per_decision,
                     "bank": self.time.bank,
                     # Only when set: tournaments made before it resume unchanged.
                     **({"game": self.time.game} if self.time.game is not None else {})},
            "faults": {"policy": self.faults.mode, "strike_limit": self.faults.strike_limit,
                       # (left out at its default, so that older tournaments resume)
                       **({"stop_after": self.stop_after}
                          if self.stop_after != DEFAULT_STOP_AFTER else {})},
            "sandbox": self.sandbox.to_dict(),
            "bots": [b.to_dict() for b in self.bots],
        }

    def fingerprint(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)


def read_config_text(p: Path, error: type[Exception]) -> str:
    """The text of the configuration file ``p``; ``error`` (one line) if it cannot be
    read or is not UTF-8 (TOML files are)."""
    try:
        return p.read_text(encoding="utf-8")
    except OSError as e:
        raise error(f"{p}: cannot read the file: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise error(f"{p}: not a UTF-8 text file (byte {e.start + 1} is "
                    f"0x{e.object[e.start]:02x}); TOML files are UTF-8") from None


def load_config(path: str | os.PathLike[str]) -> TournamentConfig:
    """Read and check a tournament file; raises TournamentConfigError (one line)."""
    p = Path(path)
    text = read_config_text(p, TournamentConfigError)
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise TournamentConfigError(f"{p}: not valid TOML: {e}") from None
    return parse_config(raw, base_dir=str(p.parent.resolve()), source=str(p))


class _Reader:
    """Typed access to one table of the file, naming ``section.key`` in errors."""

    def __init__(self, source: str, section: str, table: Any, allowed: tuple[str, ...]) -> None:
        self.source = source
        self.section = section
        if not isinstance(table, dict):
            self.fail(section, "must be a table, like [" + section + "]")
        self.table: dict[str, Any] = table
        for key in table:
            if key not in allowed:
                close = difflib.get_close_matches(key, allowed, n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                home = next((t for t, keys in _TABLE_KEYS.items() if key in keys), None)
                if not section and home:
                    # 'name = ...' above every table: it belongs in one.
                    hint = f"it belongs in a table: write it under [{home}]; "
                self.fail(self.path(key), f"unknown key; {hint}expected one of {', '.join(allowed)}")

    def path(self, key: str) -> str:
        return f"{self.section}.{key}" if self.section else key

    def fail(self, key: str, message: str) -> Any:
        raise TournamentConfigError(f"{self.source}: {key}: {message}")

    def has(self, key: str) -> bool:
        return key in self.table

    def text(self, key: str, default: str | None = None, choices: tuple[str, ...] = ()) -> Any:
        if key not in self.table:
            return default
        v = self.table[key]
        if not isinstance(v, str) or not v:
            self.fail(self.path(key), f"must be a non-empty string, not {v!r}")
        if choices and v not in choices:
            close = difflib.get_close_matches(v, choices, n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            self.fail(self.path(key), f"must be one of {', '.join(choices)}, not {v!r}{hint}")
        return v

    def whole(self, key: str, default: int | None, lo: int, hi: int | None = None) -> Any:
        if key not in self.table:
            return default
        v = self.table[key]
        if isinstance(v, bool) or not isinstance(v, int) or v < lo or (hi is not None and v > hi):
            span = f"from {lo} to {hi}" if hi is not None else f"of {lo} or more"
            self.fail(self.path(key), f"must be a whole number {span}, not {v!r}")
        return v

    def flag(self, key: str) -> bool | None:
        """A true/false setting; None when it is not given."""
        if key not in self.table:
            return None
        v = self.table[key]
        if not isinstance(v, bool):
            self.fail(self.path(key), f"must be true or false, not {v!r}")
        return bool(v)

    def seconds(self, key: str, default: float) -> float:
        if key not in self.table:
            return default
        v = self.table[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
            self.fail(self.path(key), f"must be a number of seconds, 0 or more, not {v!r}")
        return float(v)

    def str_list(self, key: str) -> list[str] | None:
        if key not in self.table:
            return None
        v = self.table[key]
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            self.fail(self.path(key), f'must be a list of strings, like ["a", "b"], not {v!r}')
        return list(v)


def parse_config(raw: dict[str, Any], *, base_dir: str = ".", source: str = "config") -> TournamentConfig:
    """Check a parsed TOML document; raises TournamentConfigError."""
    top = _Reader(source, "", raw, _SECTIONS)
    t = _Reader(source, "tournament", raw.get("tournament", {}), _TOURNAMENT_KEYS)
    r = _Reader(source, "rules", raw.get("rules", {}), _RULES_KEYS)
    tm = _Reader(source, "time", raw.get("time", {}), _TIME_KEYS)
    fr = _Reader(source, "faults", raw.get("faults", {}), _FAULT_KEYS)
    rm = _Reader(source, "remote", raw.get("remote", {}), _REMOTE_KEYS)
    sb = _Reader(source, "sandbox", raw.get("sandbox", {}), _SANDBOX_KEYS)
    sc = _Reader(source, "scores", raw.get("scores", {}), _SCORES_KEYS)
    luck = parse_luck(sc)

    bots = _parse_bots(source, raw.get("bots"))
    names = [b.name for b in bots]

    fmt = t.text("format", "round-robin", FORMATS)
    seats = t.whole("seats", 2, 2, 6)
    seating = t.text("seating", "rotate", SEATINGS)
    seed = t.whole("seed", None, 0, MAX_SEED)
    if len(bots) < 2:
        top.fail("bots", f"a tournament needs at least 2 bots, {len(bots)} given ([[bots]] tables)")

    deals, games = 10, None
    if fmt == "balanced":
        if t.has("deals"):
            t.fail("tournament.deals", 'the balanced format is sized in games: use "games = N"')
        if not t.has("games"):
            t.fail("tournament.games", "the balanced format needs the number of games, e.g. games = 1000")
        games = t.whole("games", None, 1)
        per_deal = seatings_per_deal(seating, seats)
        if games % per_deal:
            t.fail("tournament.games", f"must be a multiple of {per_deal} (each deal is played "
                   f"{per_deal} times with seating = {seating!r}), not {games}")
        if len(bots) < seats:
            top.fail("bots", f"{seats} seats need at least {seats} bots, {len(bots)} given")
    else:
        if t.has("games"):
            t.fail("tournament.games", f'the {fmt} format is sized in deals per lineup: use "deals = N"')
        deals = t.whole("deals", 10, 1)

    challengers = tuple(t.str_list("challengers") or ())
    if fmt == "gauntlet":
        if not challengers:
            t.fail("tournament.challengers", 'a gauntlet needs its challengers, e.g. challengers = ["mybot"]')
        for c in challengers:
            if c not in names:
                t.fail("tournament.challengers", f"{c!r} is not a bot of [[bots]]: choose from {', '.join(names)}")
        if len(set(challengers)) != len(challengers):
            t.fail("tournament.challengers", "lists the same bot twice")
        field_size = len(bots) - len(challengers)
        if field_size < seats - 1:
            t.fail("tournament.challengers", f"leaves {field_size} bots in the field; {seats} seats "
                   f"need at least {seats - 1} besides the challenger")
    else:
        if challengers:
            t.fail("tournament.challengers", 'only a gauntlet has challengers (format = "gauntlet")')
        if fmt == "round-robin" and len(bots) < seats:
            top.fail("bots", f"{seats} seats need at least {seats} bots, {len(bots)} given")

    jobs = t.whole("jobs", None, 1)
    executor = t.text("executor", "process", EXECUTORS)
    scheduler = t.text("scheduler")
    if scheduler is not None and executor != "dask":
        t.fail("tournament.scheduler", 'a scheduler is for the Dask executor: add executor = "dask"')
    ship_bots = t.table.get("ship_bots", True)
    if not isinstance(ship_bots, bool):
        t.fail("tournament.ship_bots", f"must be true (the bots' folders are shipped to the Dask "
               f"workers) or false (a shared file system shows them there), not {ship_bots!r}")
    name = t.text("name", "tournament")
    output = t.text("output", f"runs/{name}")

    variants = r.str_list("variants")
    warnings: list[str] = []
    if variants is None:
        variants = ["play_out"]  # RULES §4: tournaments use full placings by default
    elif "play_out" not in variants:
        warnings.append(
            f"{source}: rules.variants leaves out play_out, which tournaments use by "
            f"default: each game ends when the first player goes out, and the others are "
            f"placed by their penalty points (RULES §5, §9.1); add \"play_out\" to the list to "
            f"play every place out")
    for v in variants:
        if v not in VARIANTS:
            r.fail("rules.variants", f"unknown variant {v!r}: choose from {', '.join(VARIANTS)}")
    try:
        game = GameConfig(
            players=seats,
            variants=frozenset(variants),
            colours=r.whole("colours", None, 1, 7),
            deck=r.text("deck", "standard", tuple(DECKS)),
            turn_limit=r.whole("turn_limit", 1000, 1),
        )
    except ConfigError as e:
        raise TournamentConfigError(f"{source}: rules: {e}") from None

    time = TimeControl(
        startup=tm.seconds("startup", 10.0),
        per_decision=tm.seconds("per_decision", 1.0),
        bank=tm.seconds("bank", 10.0),
        game=tm.seconds("game", 0.0) or None if "game" in tm.table else None,
    )
    faults = FaultPolicy(
        mode=fr.text("policy", "substitute", ("substitute", "forfeit")),
        strike_limit=fr.whole("strike_limit", 3, 0),
    )
    remote = RemoteSettings(
        listen=rm.text("listen", DEFAULT_LISTEN),
        keys=rm.text("keys"),
        server_key=rm.text("server_key"),
        wait=rm.seconds("wait", 300.0),
        rewait=rm.seconds("rewait", 30.0),
    )
    read_only = []
    for p in sb.str_list("read_only") or []:
        full = (Path(base_dir) / p).resolve()
        if not full.exists():
            sb.fail("sandbox.read_only", f"{p!r} does not exist (as {full}); a path a bot may "
                    f"read must exist, relative to the configuration's folder")
        read_only.append(str(full))
    interpreters = []
    for p in sb.str_list("interpreters") or []:
        full = (Path(base_dir) / p).resolve()
        if not full.exists():
            sb.fail("sandbox.interpreters", f"{p!r} does not exist (as {full}); an "
                    f"interpreter a league's bots may name (a folder such as a PyPy's or a "
                    f"virtual environment's, or a file) must exist")
        interpreters.append(str(full))
    try:
        sandbox = SandboxConfig(
            mode=sb.text("mode", "auto", SANDBOX_MODES),
            memory_mb=sb.whole("memory_mb", SandboxConfig.memory_mb, 16),
            processes=sb.whole("processes", SandboxConfig.processes, 1),
            scratch_mb=sb.whole("scratch_mb", SandboxConfig.scratch_mb, 1),
            read_only=tuple(read_only), interpreters=tuple(interpreters),
            freeze_between_turns=sb.flag("freeze_between_turns"))
    except SandboxError as e:
        raise TournamentConfigError(f"{source}: sandbox: {e}") from None
    if rm.table and not any(b.remote for b in bots):
        rm.fail("remote", "no bot is remote: [remote] is for bots with remote = true")
    if (remote.keys is None) != (remote.server_key is None):
        rm.fail("remote.keys" if remote.keys is None else "remote.server_key",
                "CURVE needs both keys (the allowed bots' public keys, NAME.key) and "
                "server_key (the referee's secret key, from 'referee keys server'), or "
                "neither (on a loopback endpoint)")
    return TournamentConfig(
        bots=tuple(bots), name=name, format=fmt, seats=seats, deals=deals, games=games,
        seed=seed, seating=seating, challengers=challengers, game=game, time=time,
        faults=faults, jobs=jobs, executor=executor, scheduler=scheduler,
        ship_bots=ship_bots, output=output,
        base_dir=base_dir, remote=remote,
        sandbox=sandbox,
        stop_after=fr.whole("stop_after", DEFAULT_STOP_AFTER, 0), warnings=tuple(warnings),
        luck=luck,
    )


def parse_luck(sc: Any) -> LuckSetting:
    """``[scores]``: ``value = "linear" | "rollout"``, ``rollouts = N`` (1 to 1024)."""
    value = sc.text("value", "linear", VALUES)
    rollouts = sc.whole("rollouts", DEFAULT_ROLLOUTS, 1, 1024)
    if sc.has("rollouts") and value != "rollout":
        sc.fail(sc.path("rollouts"), 'counts only with value = "rollout"')
    return LuckSetting(value, rollouts)


def seatings_per_deal(seating: str, seats: int) -> int:
    """How many games one deal gives."""
    return {"rotate": seats, "williams": seats if seats % 2 == 0 else 2 * seats,
            "all": math.factorial(seats), "random": 1}[seating]


def _parse_bots(source: str, raw: Any) -> list[BotSpec]:
    if raw is None:
        raise TournamentConfigError(
            f'{source}: bots: no bots; add [[bots]] tables, e.g. [[bots]] name = "h" builtin = "heuristic"')
    if not isinstance(raw, list):
        raise TournamentConfigError(f"{source}: bots: must be an array of tables ([[bots]]), not a single table")
    out: list[BotSpec] = []
    seen: set[str] = set()
    remotes: set[str] = set()
    for i, entry in enumerate(raw):
        b = _Reader(source, f"bots[{i}]", entry, _BOT_KEYS)
        name = b.text("name")
        if name is None:
            b.fail(f"bots[{i}].name", "every bot needs a name")
        b.section = f"bots[{i}] ({name})"
        if name in seen:
            b.fail(b.path("name"), f"{name!r} is used by two bots; names must be unique")
        seen.add(name)
        kinds = [k for k in ("builtin", "python", "command", "remote") if b.has(k)]
        if len(kinds) != 1:
            b.fail(b.section, "give exactly one of builtin = \"heuristic\", python = "
                   "\"file.py:Class\", command = \"...\" or remote = true"
                   + (f" (got {', '.join(kinds)})" if kinds else ""))
        remote: str | None = None
        if b.has("remote"):
            rv = b.table["remote"]
            if rv is True:
                remote = name
            elif isinstance(rv, str) and rv:
                remote = rv
            else:
                b.fail(b.path("remote"), "must be true (the bot's hello and key file carry "
                       f"its name) or the name they carry, not {rv!r}")
            assert remote is not None
            if remote in remotes:
                b.fail(b.path("remote"), f"{remote!r} is the remote name of two bots; each "
                       "remote bot connects with its own name and key")
            remotes.add(remote)
        builtin = b.text("builtin", None, tuple(BUILTIN_BOTS))
        python = b.text("python")
        if python is not None and ":" not in python:
            b.fail(b.path("python"), f'must be "path/to/file.py:Class" or "module:attr", not {python!r}')
        command: tuple[str, ...] | None = None
        spec_transport: str | None = None  # what a zmq: or stdio: prefix says
        if b.has("command"):
            c = b.table["command"]
            if isinstance(c, str) and c.strip():
                # The bot specs of 'referee play': a command line, stdio:COMMAND,
                # zmq:COMMAND, example:NAME, zmq:example:NAME.
                try:
                    spec = parse_spec(c, check=False)
                except BotSpecError as e:
                    b.fail(b.path("command"), str(e))
                if spec.kind not in TRANSPORTS:
                    key = {"builtin": f'builtin = "{spec.builtin}"',
                           "remote": "remote = true"}.get(spec.kind, "builtin = ...")
                    b.fail(b.path("command"), f"{c!r} is a {spec.kind} bot, not a command: "
                           f"write {key} instead")
                command = spec.command
                if c.strip().startswith(("zmq:", "stdio:")):
                    spec_transport = spec.transport
            elif isinstance(c, list) and all(isinstance(x, str) for x in c):
                command = tuple(c)
            if not command:
                b.fail(b.path("command"), f'must be a command line or a list of words, not {c!r}')
        else:
            for k in ("transport", "cwd", "env", "memory_mb", "sandbox"):
                if b.has(k):
                    b.fail(b.path(k), "only applies to an external bot (one with a command)")
        transport = b.text("transport", spec_transport or "stdio", TRANSPORTS)
        if spec_transport is not None and transport != spec_transport:
            b.fail(b.path("transport"), f"is {transport!r}, but the command says "
                   f"{spec_transport}: drop one of them")
        cwd = b.text("cwd")
        env_raw = b.table.get("env", {})
        if not isinstance(env_raw, dict) or not all(isinstance(v, str) for v in env_raw.values()):
            b.fail(b.path("env"), f'must be a table of strings, like {{ LEVEL = "3" }}, not {env_raw!r}')
        memory_mb = b.whole("memory_mb", None, 16)
        bot_sandbox = b.text("sandbox", "on", ("on", "off"))
        out.append(BotSpec(name=name, builtin=builtin, python=python, command=command,
                           transport=transport, cwd=cwd, env=tuple(sorted(env_raw.items())),
                           memory_mb=memory_mb, remote=remote,
                           sandboxed=bot_sandbox != "off"))
    return out
