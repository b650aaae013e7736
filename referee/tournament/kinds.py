"""The configurations a results store keeps, as types: one frozen dataclass per
kind, each with one reader (``from_json``, checked) and one writer (``to_json``).

A store's ``meta.config`` row holds one JSON object, whose ``kind`` says which:

* ``tournament`` -- ``TournamentSettings``: what decides a tournament's games
  (``TournamentConfig.to_dict``), in ``tournament.sqlite``;
* ``match`` -- ``MatchSettings``: the same settings less the schedule's, plus the
  ``match`` object (NEW, OLD, the field, the SPRT or the number of games, the cap,
  the scores), in a match folder's ``tournament.sqlite``;
* ``league`` -- ``league.config.LeagueConfig`` (``to_json``/``from_json``, in the
  league layer: this module cannot import it), in ``league.sqlite``.

Stores made before the kinds were written have no ``kind``: ``decode`` infers it
(a ``match`` object: a match; else what the file is: ``default``), so those stores
read, resume and report as they did.  Anything else -- not JSON, not an object, an
unknown kind, a setting missing or of the wrong type -- is a ``StoredConfigError``
naming the store and the setting, never a KeyError or TypeError from deep inside a
reader.  The JSON written is what ``TournamentConfig.to_dict`` (``MatchConfig.to_dict``)
gives, plus the ``kind``: a resumed run compares it, key by key, with what the store
holds (``Store.create_or_resume``).  A bot and the sandbox are written by their own
types (``BotSpec.to_dict``, ``SandboxConfig.to_dict``: one writer each) and read back
here (``read_bot``, ``read_sandbox``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, Literal, TypeAlias, TypeVar, cast

from ..errors import StorageError
from ..game import GameConfig
from ..game.errors import ConfigError as GameConfigError
from ..play.runner import FaultPolicy, TimeControl
from ..players.botspec import TRANSPORTS, BotSpec, Transport
from ..players.sandbox import SandboxConfig, SandboxError
from ..stats.sprt import Json, Scores, Sprt
from .config import DEFAULT_STOP_AFTER, TournamentConfig, seatings_per_deal

Kind: TypeAlias = Literal["tournament", "match", "league"]
#: Every kind a store's configuration may be, in the order they came.
KINDS: tuple[Kind, ...] = ("tournament", "match", "league")
JsonObject: TypeAlias = dict[str, Json]
_T = TypeVar("_T")


class StoredConfigError(StorageError):
    """A store's configuration cannot be read as its kind (damaged, edited by hand,
    or written by a newer referee): one line naming the store and the setting."""


def decode(text: str, where: Path | str, default: Kind) -> tuple[Kind, JsonObject]:
    """The stored configuration ``text`` as (kind, JSON object without ``kind``).
    A store made before the kinds has none: a ``match`` object makes it a match's,
    else it is ``default`` (what the file is: a tournament's or a league's)."""
    try:
        raw = json.loads(text)
    except ValueError as e:
        raise StoredConfigError(f"{where}: the stored configuration is not JSON ({e}); "
                                "the store is damaged") from None
    if not isinstance(raw, dict):
        raise StoredConfigError(f"{where}: the stored configuration is not a JSON object "
                                f"but {_what(raw)}; the store is damaged")
    body: JsonObject = dict(raw)
    kind = body.pop("kind", None)
    if kind is None:
        return ("match" if "match" in body else default), body
    if kind not in KINDS:
        raise StoredConfigError(
            f"{where}: the stored configuration is of an unknown kind {kind!r} (this referee "
            f"knows {', '.join(KINDS)}): it was made by a newer referee, or damaged")
    return kind, body


def encode(kind: Kind, body: Mapping[str, Json]) -> str:
    """The text of the ``meta.config`` row: the kind first, then the settings."""
    return json.dumps({"kind": kind, **body}, sort_keys=True)


def wrong_kind(where: Path | str, found: Kind, wanted: str) -> StoredConfigError:
    what = {"tournament": "a tournament", "match": "a match", "league": "a league"}[found]
    return StoredConfigError(f"{where} holds {what}, not {wanted}")


class Fields:
    """Checked, typed access to one JSON object of a stored configuration; errors
    name the store and the setting (``faults.strike_limit``)."""

    def __init__(self, obj: Mapping[str, Json], where: Path | str, path: str = "") -> None:
        self.obj, self.where, self.path = obj, where, path

    def _name(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path and key else self.path or key

    def _bad(self, key: str, value: Json, wanted: str) -> StoredConfigError:
        name = self._name(key)
        if key not in self.obj:
            return StoredConfigError(f"{self.where}: the stored configuration has no {name} "
                                     f"({wanted}); the store is damaged")
        return StoredConfigError(f"{self.where}: the stored configuration's {name} is "
                                 f"{_what(value)}, not {wanted}; the store is damaged")

    def has(self, key: str) -> bool:
        return key in self.obj

    def text(self, key: str, default: str | None = None) -> str:
        v = self.obj.get(key, default)
        if not isinstance(v, str):
            raise self._bad(key, v, "a string")
        return v

    def opt_text(self, key: str) -> str | None:
        v = self.obj.get(key)
        if v is not None and not isinstance(v, str):
            raise self._bad(key, v, "a string or null")
        return v

    def whole(self, key: str, default: int | None = None) -> int:
        v = self.obj.get(key, default)
        if not isinstance(v, int) or isinstance(v, bool):
            raise self._bad(key, v, "a whole number")
        return v

    def choice(self, key: str, choices: tuple[str, ...], default: str | None = None) -> str:
        v = self.text(key, default)
        if v not in choices:
            raise self._bad(key, v, " or ".join(choices))
        return v

    def opt_whole(self, key: str) -> int | None:
        v = self.obj.get(key)
        if v is not None and (not isinstance(v, int) or isinstance(v, bool)):
            raise self._bad(key, v, "a whole number or null")
        return v

    def number(self, key: str, default: float | None = None) -> float:
        v = self.obj.get(key, default)
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
            raise self._bad(key, v, "a number")
        return float(v)

    def opt_number(self, key: str) -> float | None:
        return None if self.obj.get(key) is None else self.number(key)

    def flag(self, key: str, default: bool | None = None) -> bool:
        v = self.obj.get(key, default)
        if not isinstance(v, bool):
            raise self._bad(key, v, "true or false")
        return v

    def texts(self, key: str, default: tuple[str, ...] | None = None) -> tuple[str, ...]:
        if key not in self.obj and default is not None:
            return default
        v = self.obj.get(key)
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise self._bad(key, v, "a list of strings")
        return tuple(cast(list[str], v))

    def wholes(self, key: str) -> tuple[int, ...]:
        v = self.obj.get(key)
        if not isinstance(v, list) or not v or not all(
                isinstance(x, int) and not isinstance(x, bool) for x in v):
            raise self._bad(key, v, "a list of whole numbers")
        return tuple(cast(list[int], v))

    def sub(self, key: str, default: JsonObject | None = None) -> Fields:
        v = self.obj.get(key, default)
        if not isinstance(v, dict):
            raise self._bad(key, v, "an object")
        return Fields(v, self.where, self._name(key))

    def objects(self, key: str) -> list[Fields]:
        v = self.obj.get(key)
        if not isinstance(v, list) or not all(isinstance(x, dict) for x in v):
            raise self._bad(key, v, "a list of objects")
        name = self._name(key)
        return [Fields(cast(JsonObject, x), self.where, f"{name}[{i}]")
                for i, x in enumerate(v)]

    def check(self, key: str, make: Callable[[], _T]) -> _T:
        """``make()`` (a constructor that checks its values), its ValueError (or a
        rules/sandbox error) as a StoredConfigError naming ``key``."""
        try:
            return make()
        except (ValueError, TypeError, GameConfigError, SandboxError) as e:
            raise StoredConfigError(f"{self.where}: the stored configuration's {self._name(key)} cannot "
                                    f"be used ({e}); the store is damaged") from None


def _what(v: object) -> str:
    if v is None:
        return "null (or missing)"
    text = json.dumps(v)
    return text if len(text) <= 40 else text[:37] + "..."


# --- the parts a tournament and a match share -----------------------------------------


def read_rules(f: Fields) -> GameConfig:
    r = f.sub("rules")
    return f.check("rules", lambda: GameConfig(
        players=r.whole("players"), variants=frozenset(r.texts("variants")),
        colours=r.opt_whole("colours"), deck=r.text("deck", "standard"),
        turn_limit=r.whole("turn_limit", 1000)))


def read_time(f: Fields) -> TimeControl:
    t = f.sub("time")
    return TimeControl(startup=t.number("startup"), per_decision=t.number("per_decision"),
                       bank=t.number("bank"), game=t.opt_number("game"))


def time_json(t: TimeControl) -> JsonObject:
    out: JsonObject = {"startup": t.startup, "per_decision": t.per_decision, "bank": t.bank}
    if t.game is not None:  # only when set: tournaments made before it resume unchanged
        out["game"] = t.game
    return out


def read_sandbox(f: Fields) -> SandboxConfig:
    s = f.sub("sandbox")
    return f.check("sandbox", lambda: SandboxConfig(
        mode=s.text("mode"), memory_mb=s.whole("memory_mb"), processes=s.whole("processes"),
        scratch_mb=s.whole("scratch_mb"), read_only=s.texts("read_only", ()),
        interpreters=s.texts("interpreters", ()),
        freeze_between_turns=s.flag("freeze_between_turns") if s.has("freeze_between_turns")
        else None))


def read_bot(b: Fields) -> BotSpec:
    env = b.sub("env", {})
    pairs = tuple((k, v) for k, v in env.obj.items() if isinstance(v, str))
    if len(pairs) != len(env.obj):
        raise env._bad("", None, "an object of strings")
    command = b.texts("command") if b.has("command") else None
    return b.check("", lambda: BotSpec(
        name=b.text("name"), builtin=b.opt_text("builtin"), python=b.opt_text("python"),
        command=command,
        transport=_transport(b),
        cwd=b.opt_text("cwd"), env=pairs, memory_mb=b.opt_whole("memory_mb"),
        remote=b.opt_text("remote"), sandboxed=b.text("sandbox", "on") != "off",
        stream=b.opt_text("stream")))


def _transport(b: Fields) -> Transport:
    t = b.text("transport", "stdio")
    if t not in TRANSPORTS:
        raise b._bad("transport", t, " or ".join(TRANSPORTS))
    return t


def read_faults(f: Fields) -> tuple[FaultPolicy, int]:
    fs = f.sub("faults")
    policy = fs.check("policy", lambda: FaultPolicy(mode=fs.text("policy"),
                                                    strike_limit=fs.whole("strike_limit")))
    return policy, fs.whole("stop_after", DEFAULT_STOP_AFTER)


def faults_json(p: FaultPolicy, stop_after: int) -> JsonObject:
    out: JsonObject = {"policy": p.mode, "strike_limit": p.strike_limit}
    if stop_after != DEFAULT_STOP_AFTER:  # (left out at its default: older stores resume)
        out["stop_after"] = stop_after
    return out


@dataclass(frozen=True)
class _Common:
    """What decides the games of a tournament and of a match alike."""

    name: str
    seats: int
    seed: int | None
    seating: str
    rules: GameConfig
    time: TimeControl
    faults: FaultPolicy
    stop_after: int
    sandbox: SandboxConfig
    bots: tuple[BotSpec, ...]

    @property
    def bot_names(self) -> list[str]:
        return [b.name for b in self.bots]


def _common(f: Fields) -> _Common:
    policy, stop_after = read_faults(f)
    return _Common(name=f.text("name"), seats=f.whole("seats"), seed=f.opt_whole("seed"),
                   seating=f.text("seating"), rules=read_rules(f), time=read_time(f),
                   faults=policy, stop_after=stop_after, sandbox=read_sandbox(f),
                   bots=tuple(read_bot(b) for b in f.objects("bots")))


def _common_json(s: _Common) -> JsonObject:
    return {"name": s.name, "seats": s.seats, "seed": s.seed, "seating": s.seating,
            "rules": cast(JsonObject, s.rules.to_dict()), "time": time_json(s.time),
            "faults": faults_json(s.faults, s.stop_after), "sandbox": s.sandbox.to_dict(),
            "bots": [b.to_dict() for b in s.bots]}


@dataclass(frozen=True)
class TournamentSettings(_Common):
    """A tournament's stored configuration (``kind``: ``tournament``)."""

    kind: ClassVar[Literal["tournament"]] = "tournament"
    format: str = "round-robin"
    deals: int | None = None
    games: int | None = None
    challengers: tuple[str, ...] = ()

    @classmethod
    def of(cls, config: TournamentConfig) -> TournamentSettings:
        """What ``config`` stores: the settings that decide its games."""
        return cls.from_json(config.to_dict(), "the tournament's configuration")

    @classmethod
    def from_json(cls, body: Mapping[str, Json], where: Path | str) -> TournamentSettings:
        f = Fields(body, where)
        c = _common(f)
        return cls(name=c.name, seats=c.seats, seed=c.seed, seating=c.seating, rules=c.rules,
                   time=c.time, faults=c.faults, stop_after=c.stop_after, sandbox=c.sandbox,
                   bots=c.bots, format=f.text("format"), deals=f.opt_whole("deals"),
                   games=f.opt_whole("games"), challengers=f.texts("challengers", ()))

    def to_json(self) -> JsonObject:
        c = _common_json(self)
        return {"name": c["name"], "format": self.format, "seats": c["seats"],
                "deals": self.deals, "games": self.games, "seed": c["seed"],
                "seating": c["seating"], "challengers": list(self.challengers),
                "rules": c["rules"], "time": c["time"], "faults": c["faults"],
                "sandbox": c["sandbox"], "bots": c["bots"]}


@dataclass(frozen=True)
class MatchSettings(_Common):
    """A match's stored configuration (``kind``: ``match``): NEW against OLD (and
    the ``field``), stopped by ``sprt`` or after ``games`` games, at most ``max_sets``
    sets, the test reading ``scores``."""

    kind: ClassVar[Literal["match"]] = "match"
    new: str = ""
    old: str = ""
    field: tuple[str, ...] = ()
    sprt: Sprt | None = None
    games: int | None = None
    max_sets: int = 0
    scores: Scores = "adjusted"

    @property
    def head_to_head(self) -> bool:
        return not self.field

    @property
    def per_set(self) -> int:
        """Games in a duplicate set (``MatchConfig.per_set``)."""
        per = seatings_per_deal(self.seating, self.seats)
        return per if self.head_to_head else 2 * per

    @classmethod
    def from_json(cls, body: Mapping[str, Json], where: Path | str) -> MatchSettings:
        f = Fields(body, where)
        c = _common(f)
        m = f.sub("match")
        sprt: Sprt | None = None
        if m.obj.get("sprt") is not None:
            t = m.sub("sprt")
            sprt = m.check("sprt", lambda: Sprt(elo0=t.number("elo0"), elo1=t.number("elo1"),
                                                alpha=t.number("alpha"), beta=t.number("beta")))
        scores = m.text("scores", "adjusted")
        if scores not in ("adjusted", "raw"):
            raise m._bad("scores", scores, "adjusted or raw")
        return cls(name=c.name, seats=c.seats, seed=c.seed, seating=c.seating, rules=c.rules,
                   time=c.time, faults=c.faults, stop_after=c.stop_after, sandbox=c.sandbox,
                   bots=c.bots, new=m.text("new"), old=m.text("old"), field=m.texts("field", ()),
                   sprt=sprt, games=m.opt_whole("games"), max_sets=m.whole("max_sets"),
                   scores="raw" if scores == "raw" else "adjusted")

    def to_json(self) -> JsonObject:
        c = _common_json(self)
        match: JsonObject = {
            "new": self.new, "old": self.old, "field": list(self.field),
            "sprt": cast(JsonObject, self.sprt.to_dict()) if self.sprt else None,
            "games": self.games, "max_sets": self.max_sets}
        if self.scores != "adjusted":  # a match made before adjusted scores: adjusted
            match["scores"] = self.scores
        return {**c, "match": match}


#: What a ``tournament.sqlite`` holds.
Settings: TypeAlias = TournamentSettings | MatchSettings


def read_settings(text: str, where: Path | str, default: Kind = "tournament") -> Settings:
    """The typed configuration of a ``tournament.sqlite`` (a tournament's or a
    match's); StoredConfigError if it is neither or cannot be read.  ``default``:
    the kind of a store made before the kinds were written (``decode``)."""
    kind, body = decode(text, where, default)
    if kind == "tournament":
        return TournamentSettings.from_json(body, where)
    if kind == "match":
        return MatchSettings.from_json(body, where)
    raise wrong_kind(where, kind, "a tournament or a match")
