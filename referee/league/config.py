"""A league's configuration: the ``league.toml`` file, read and checked.

Owns ``LeagueConfig`` (table sizes, deals per lineup, seed, seating, the submission
limits) and the comparison that tells an organiser, one line per setting, what an
edited file would change.  The rules, time, faults and sandbox tables are the
tournament's own (``referee.tournament.config``): they are checked by the same code,
so a mistake is named the same way in both.

File layout (all sections optional)::

    [league]       name, seats (a number or a list: [2, 4]), deals, seed, seating, jobs,
                   separate_authors, fault_alert, records, scores, schedule, top,
                   min_share, batch
    [rules]        variants, colours, deck, turn_limit      (as for tournaments)
    [time]         startup, per_decision, bank, game
    [faults]       policy, strike_limit
    [sandbox]      mode, memory_mb, processes, scratch_mb, read_only, interpreters,
                   freeze_between_turns (default true in a league)
    [limits]       max_bytes, max_files, max_file_bytes, max_depth  (each submission)
    [server]       in_flight, submissions_per_hour, requests_per_hour, queue,
                   check_seconds, upload_seconds, connections,
                   connections_per_ip, connections_per_author, handshakes,
                   handshakes_per_ip, handshake_rate_per_ip, idle_seconds, checkers
                   (``league serve``)
"""

from __future__ import annotations

import json
import secrets
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, Literal, cast

from ..errors import ConfigError
from ..game import GameConfig
from ..game.seeds import MAX_SEED
from ..play.luck import LuckSetting
from ..play.runner import FaultPolicy, TimeControl
from ..players.sandbox import SandboxConfig
from ..stats.sprt import Json
from ..tournament.config import (
    _SCORES_KEYS,
    SEATINGS,
    TournamentConfigError,
    _Reader,
    parse_config,
    parse_luck,
    read_config_text,
)
from ..tournament.kinds import Fields, JsonObject, decode, read_sandbox, wrong_kind

_SECTIONS = ("league", "rules", "time", "faults", "sandbox", "limits", "server", "scores")
_LEAGUE_KEYS = ("name", "seats", "deals", "seed", "seating", "jobs", "separate_authors",
                "fault_alert", "records", "scores", "schedule", "top", "min_share", "batch")
#: What ``submit --status --game ID --html`` gives an author of their own game: the
#: game as their seat saw it ("seat", the default), or every card ("full": the league
#: publishes full records, ``--record`` too).
RECORDS = ("seat", "full")
#: How a league chooses its games: every lineup ``deals`` times, or where its ranking
#: is least certain (``league.adaptive``).
SCHEDULES = ("round-robin", "adaptive")
DEFAULT_TOP = 3
DEFAULT_MIN_SHARE = 0.25
DEFAULT_FAULT_ALERT = 10.0  # percent of an entry's games
_LIMIT_KEYS = ("max_bytes", "max_files", "max_file_bytes", "max_depth")
_SERVER_KEYS = ("in_flight", "submissions_per_hour", "requests_per_hour", "queue",
                "check_seconds", "upload_seconds", "connections", "connections_per_ip",
                "connections_per_author", "handshakes", "handshakes_per_ip",
                "handshake_rate_per_ip", "idle_seconds", "checkers")


class LeagueConfigError(ConfigError, ValueError):
    """A mistake in a league file, or a change an existing league cannot take."""


@dataclass(frozen=True)
class Limits:
    """What one submission may hold (its unpacked size, its files, folders and links,
    its largest file, how deep its folders go).  An archive is stopped when it reaches
    a limit, not after (``archive.py``)."""

    max_bytes: int = 50 << 20
    max_files: int = 2000
    max_file_bytes: int = 20 << 20
    max_depth: int = 32

    def to_dict(self) -> JsonObject:
        return {"max_bytes": self.max_bytes, "max_files": self.max_files,
                "max_file_bytes": self.max_file_bytes, "max_depth": self.max_depth}


@dataclass(frozen=True)
class ServerLimits:
    """What ``league serve`` lets one author (one key) cost: submissions queued or
    under check at once, submissions and requests per hour, submissions queued in
    all, the wall-clock budget of one submission's check, how long an upload may
    sit idle before it is dropped, the connections past their handshake open at once
    (in all, from one IP address, of one key), the connections still in their
    handshake (in all, from one address), the new connections a second from one
    address, how long a connection may go without a
    request, and how many checks run at once."""

    in_flight: int = 2
    submissions_per_hour: int = 20
    requests_per_hour: int = 1200
    queue: int = 50
    check_seconds: int = 600
    upload_seconds: int = 60
    connections: int = 200
    connections_per_ip: int = 32
    connections_per_author: int = 8
    handshakes: int = 64
    handshakes_per_ip: int = 8
    handshake_rate_per_ip: int = 10
    idle_seconds: int = 30
    checkers: int = 1

    def to_dict(self) -> JsonObject:
        return {"in_flight": self.in_flight, "submissions_per_hour": self.submissions_per_hour,
                "requests_per_hour": self.requests_per_hour, "queue": self.queue,
                "check_seconds": self.check_seconds, "upload_seconds": self.upload_seconds,
                "connections": self.connections,
                "connections_per_ip": self.connections_per_ip,
                "connections_per_author": self.connections_per_author,
                "handshakes": self.handshakes, "handshakes_per_ip": self.handshakes_per_ip,
                "handshake_rate_per_ip": self.handshake_rate_per_ip,
                "idle_seconds": self.idle_seconds, "checkers": self.checkers}


@dataclass(frozen=True)
class LeagueConfig:
    name: str = "league"
    seats: tuple[int, ...] = (2,)
    deals: int = 10  # per lineup and table size
    seed: int = 0
    seating: str = "rotate"
    jobs: int | None = None
    #: Two entries of one author never sit at one table.
    separate_authors: bool = True
    #: ``league show`` flags an entry that faults in more than this % of its games.
    fault_alert: float = DEFAULT_FAULT_ALERT
    #: What an author gets of their own game (``RECORDS``).
    records: str = "seat"
    #: The scores an adaptive schedule and the separation of the top are judged by
    #: (``standings.SCORE_KINDS``: luck-adjusted or raw).
    scores: str = "adjusted"
    #: ``round-robin`` (every lineup, ``deals`` deals each) or ``adaptive``.
    schedule: str = "round-robin"
    #: The top entries whose separation an adaptive schedule works for (0: the whole
    #: order); ``league standings`` says whether they are separated at 95 %.
    top: int = DEFAULT_TOP
    #: An adaptive schedule still gives each entry this share of the games a
    #: round-robin would give it.
    min_share: float = DEFAULT_MIN_SHARE
    #: Duplicate sets per batch of an adaptive schedule (None: one per k entries).
    batch: int | None = None
    game: GameConfig = field(default_factory=lambda: GameConfig(variants=frozenset({"play_out"})))
    time: TimeControl = field(default_factory=TimeControl)
    faults: FaultPolicy = field(default_factory=FaultPolicy)
    sandbox: SandboxConfig = field(default_factory=SandboxConfig)
    limits: Limits = field(default_factory=Limits)
    server: ServerLimits = field(default_factory=ServerLimits)
    #: The value function of the luck-adjusted scores (``[scores]``): it changes no
    #: game, so it may change; the games played are then scored again.
    luck: LuckSetting = field(default_factory=LuckSetting)

    def game_for(self, seats: int) -> GameConfig:
        return replace(self.game, players=seats)

    def fixed(self) -> JsonObject:
        """The settings a league keeps for life: changing any would change the games
        already played (``changes`` names them)."""
        rules = cast(JsonObject, self.game.to_dict())
        return {
            "seed": self.seed,
            "seating": self.seating,
            "separate_authors": self.separate_authors,
            "rules": {k: v for k, v in rules.items() if k != "players"},
            "time": {"startup": self.time.startup, "per_decision": self.time.per_decision,
                     "bank": self.time.bank,
                     # Each seat's game clock, only when set: older leagues read unchanged.
                     **({} if self.time.game is None else {"game": self.time.game})},
            "faults": {"policy": self.faults.mode, "strike_limit": self.faults.strike_limit},
            "sandbox": self.sandbox.to_dict(),
        }

    #: The kind of configuration a league's store keeps (``tournament.kinds``).
    kind: ClassVar[Literal["league"]] = "league"

    def to_json(self) -> JsonObject:
        """What the league's store keeps (``read_league_config`` reads it back)."""
        return {"name": self.name, "seats": list(self.seats), "deals": self.deals,
                "jobs": self.jobs, "fault_alert": self.fault_alert, "records": self.records,
                "schedule": self.schedule, "scores": self.scores, "top": self.top,
                "min_share": self.min_share, "batch": self.batch,
                "limits": self.limits.to_dict(), "server": self.server.to_dict(),
                "luck_value": self.luck.describe(), **self.fixed()}

    @classmethod
    def from_json(cls, body: Mapping[str, Json], where: Path | str) -> LeagueConfig:
        f = Fields(body, where)
        seats = f.wholes("seats")
        r = f.sub("rules")
        game = f.check("rules", lambda: GameConfig(
            players=seats[0], variants=frozenset(r.texts("variants")),
            colours=r.opt_whole("colours"), deck=r.text("deck", "standard"),
            turn_limit=r.whole("turn_limit", 1000)))
        t, fs = f.sub("time"), f.sub("faults")
        lim, srv = f.sub("limits"), f.sub("server", {})
        dl, ds = Limits(), ServerLimits()
        return f.check("", lambda: cls(
            name=f.text("name"), seats=seats, deals=f.whole("deals"), seed=f.whole("seed"),
            seating=f.text("seating"), jobs=f.opt_whole("jobs"),
            # A league made before the setting had no such rule.
            separate_authors=f.flag("separate_authors", False),
            fault_alert=f.number("fault_alert", DEFAULT_FAULT_ALERT),
            records=f.choice("records", RECORDS, "seat"),
            # A league made before adaptive schedules: a round-robin, judged as the
            # standings rank (luck-adjusted).
            scores=f.choice("scores", ("adjusted", "raw"), "adjusted"),
            schedule=f.choice("schedule", SCHEDULES, "round-robin"),
            top=f.whole("top", DEFAULT_TOP), min_share=f.number("min_share", DEFAULT_MIN_SHARE),
            batch=f.opt_whole("batch"), game=game,
            # A league made before the setting: the linear V.
            luck=LuckSetting.parse(f.text("luck_value", "linear")),
            time=TimeControl(startup=t.number("startup"), per_decision=t.number("per_decision"),
                             bank=t.number("bank"), game=t.opt_number("game")),
            faults=fs.check("policy", lambda: FaultPolicy(
                mode=fs.text("policy"), strike_limit=fs.whole("strike_limit"))),
            sandbox=read_sandbox(f),
            limits=Limits(**{k: lim.whole(k, getattr(dl, k)) for k in _LIMIT_KEYS}),
            server=ServerLimits(**{k: srv.whole(k, getattr(ds, k)) for k in _SERVER_KEYS})))


def changes(old: LeagueConfig, new: LeagueConfig) -> tuple[list[str], list[str]]:
    """What ``new`` changes in a league whose configuration was ``old``: (refused,
    accepted), one line each.  Refused: any fixed setting, fewer deals, a table size
    dropped.  Accepted: more deals, a new table size, the name, jobs, the limits."""
    refused: list[str] = []
    accepted: list[str] = []
    if old.schedule != new.schedule:  # (a league made before the setting: round-robin)
        refused.append(f"schedule: was {json.dumps(old.schedule)}, now "
                       f"{json.dumps(new.schedule)} (the games played were chosen by it)")
    fixed_old = old.fixed()
    for section, value in new.fixed().items():
        _diff(section, fixed_old.get(section), value, refused)
    if new.deals < old.deals:
        refused.append(f"deals: was {old.deals}, now {new.deals} (deals can only be raised: "
                       "the games played stay played)")
    elif new.deals > old.deals:
        accepted.append(f"deals: {old.deals} -> {new.deals} (only the new deals are played)")
    dropped = [k for k in old.seats if k not in new.seats]
    if dropped:
        refused.append(f"seats: was {list(old.seats)}, now {list(new.seats)} (a table size "
                       f"cannot be dropped: {', '.join(map(str, dropped))})")
    elif new.seats != old.seats:
        accepted.append(f"seats: {list(old.seats)} -> {list(new.seats)}")
    # (a league made before a setting reads with its default: read_league_config)
    od, nd = old.to_json(), new.to_json()
    for key in ("name", "jobs", "fault_alert", "records", "limits", "server", "scores", "top",
                "min_share", "batch"):
        if od.get(key) != nd[key]:
            accepted.append(f"{key}: {json.dumps(od.get(key))} -> {json.dumps(nd[key])}")
    if old.luck != new.luck:
        accepted.append(f"scores.value: {old.luck.describe()} -> {new.luck.describe()} (the "
                        "games played are scored again)")
    return refused, accepted


def _diff(path: str, old: Json, new: Json, out: list[str]) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        for k in sorted(set(old) | set(new)):
            _diff(f"{path}.{k}", old.get(k), new.get(k), out)
    elif old != new:
        out.append(f"{path}: was {json.dumps(old)}, now {json.dumps(new)}")


def is_league_file(path: str | Path) -> bool:
    """Whether the TOML file at ``path`` is a league's (it has a ``[league]`` table)."""
    try:
        return "league" in tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return False


def load_league_config(path: str | Path, *, draw_seed: bool = True) -> LeagueConfig:
    """Read and check a league file; raises LeagueConfigError (one line).  Without a
    ``seed`` one is drawn at random (63 bits), to be kept by the league."""
    p = Path(path)
    text = read_config_text(p, LeagueConfigError)
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise LeagueConfigError(f"{p}: not valid TOML: {e}") from None
    return parse_league_config(raw, base_dir=str(p.parent.resolve()), source=str(p),
                               draw_seed=draw_seed)


def parse_league_config(raw: dict[str, Any], *, base_dir: str = ".", source: str = "league",
                        draw_seed: bool = True) -> LeagueConfig:
    try:
        _Reader(source, "", raw, _SECTIONS)
        lg = _Reader(source, "league", raw.get("league", {}), _LEAGUE_KEYS)
        lim = _Reader(source, "limits", raw.get("limits", {}), _LIMIT_KEYS)
        srv = _Reader(source, "server", raw.get("server", {}), _SERVER_KEYS)
        luck = parse_luck(_Reader(source, "scores", raw.get("scores", {}), _SCORES_KEYS))
        seats_raw = lg.table.get("seats", 2)
        seats_list = seats_raw if isinstance(seats_raw, list) else [seats_raw]
        if (not seats_list or any(isinstance(s, bool) or not isinstance(s, int) or not 2 <= s <= 6
                                  for s in seats_list) or len(set(seats_list)) != len(seats_list)):
            lg.fail("league.seats", f"must be a table size from 2 to 6 or a list of different "
                    f"sizes, like [2, 4], not {seats_raw!r}")
        seats = tuple(sorted(seats_list))
        deals = lg.whole("deals", 10, 1)
        seed = lg.whole("seed", None, 0, MAX_SEED)
        seating = lg.text("seating", "rotate", SEATINGS)
        records = lg.text("records", "seat", RECORDS)
        jobs = lg.whole("jobs", None, 1)
        name = lg.text("name", "league")
        separate = lg.table.get("separate_authors", True)
        if not isinstance(separate, bool):
            lg.fail("league.separate_authors", f"must be true or false, not {separate!r}")
        alert = lg.table.get("fault_alert", DEFAULT_FAULT_ALERT)
        if isinstance(alert, bool) or not isinstance(alert, (int, float)) \
                or not 0 <= alert <= 100:
            lg.fail("league.fault_alert", f"must be a percentage from 0 to 100, not {alert!r}")
        scores = lg.text("scores", "adjusted", ("adjusted", "raw"))
        schedule = lg.text("schedule", "round-robin", SCHEDULES)
        top = lg.whole("top", DEFAULT_TOP, 0)
        share = lg.table.get("min_share", DEFAULT_MIN_SHARE)
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0 <= share <= 1:
            lg.fail("league.min_share", f"must be a share of the round-robin's games from 0 "
                    f"to 1 (0.25: a quarter), not {share!r}")
        batch = lg.whole("batch", None, 1)
        d = Limits()
        limits = Limits(max_bytes=lim.whole("max_bytes", d.max_bytes, 1),
                        max_files=lim.whole("max_files", d.max_files, 1),
                        max_file_bytes=lim.whole("max_file_bytes", d.max_file_bytes, 1),
                        max_depth=lim.whole("max_depth", d.max_depth, 1))
        ds = ServerLimits()
        server = ServerLimits(
            in_flight=srv.whole("in_flight", ds.in_flight, 1),
            submissions_per_hour=srv.whole("submissions_per_hour", ds.submissions_per_hour, 1),
            requests_per_hour=srv.whole("requests_per_hour", ds.requests_per_hour, 1),
            queue=srv.whole("queue", ds.queue, 1),
            check_seconds=srv.whole("check_seconds", ds.check_seconds, 1),
            upload_seconds=srv.whole("upload_seconds", ds.upload_seconds, 1),
            connections=srv.whole("connections", ds.connections, 1),
            connections_per_ip=srv.whole("connections_per_ip", ds.connections_per_ip, 1),
            connections_per_author=srv.whole("connections_per_author",
                                             ds.connections_per_author, 1),
            handshakes=srv.whole("handshakes", ds.handshakes, 1),
            handshakes_per_ip=srv.whole("handshakes_per_ip", ds.handshakes_per_ip, 1),
            handshake_rate_per_ip=srv.whole("handshake_rate_per_ip",
                                            ds.handshake_rate_per_ip, 1),
            idle_seconds=srv.whole("idle_seconds", ds.idle_seconds, 1),
            checkers=srv.whole("checkers", ds.checkers, 1))
        # The shared tables, checked by the tournament's own reader (with a stand-in
        # field: a league's bots arrive later).
        stand_in = {k: v for k, v in raw.items() if k in ("rules", "time", "faults", "sandbox")}
        stand_in["tournament"] = {"seats": seats[0], "seating": seating}
        stand_in["bots"] = [{"name": f"b{i}", "builtin": "heuristic"} for i in range(seats[0])]
        t = parse_config(stand_in, base_dir=base_dir, source=source)
    except TournamentConfigError as e:
        raise LeagueConfigError(str(e)) from None
    if seed is None and draw_seed:
        seed = secrets.randbelow(1 << 63)
    return LeagueConfig(name=name, seats=seats, deals=deals, seed=seed or 0, seating=seating,
                        jobs=jobs, separate_authors=separate, fault_alert=float(alert),
                        records=records, scores=scores, schedule=schedule, top=top,
                        min_share=float(share), batch=batch, game=t.game, time=t.time,
                        faults=t.faults, sandbox=t.sandbox,
                        limits=limits, server=server, luck=luck)


def read_league_config(text: str, where: Path | str) -> LeagueConfig:
    """The configuration a league's store keeps (``LeagueConfig.to_json``), checked;
    StoredConfigError if it is not a league's or cannot be read.  A league made
    before a setting existed reads with the rule it was played by: no
    ``separate_authors`` (then none), no ``schedule`` (a round-robin), no
    ``fault_alert``, ``records``, ``scores``, ``top``, ``min_share``, ``batch`` or
    ``server`` (the defaults)."""
    kind, body = decode(text, where, "league")
    if kind != "league":
        raise wrong_kind(where, kind, "a league")
    return LeagueConfig.from_json(body, where)
