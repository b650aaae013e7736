"""Running one game among players: the referee loop, time control and fault handling.

Owns: the ``Player`` interface every kind of bot implements (in-process, stdio,
ZeroMQ, a human at the terminal), the fault types and policy, the clock, and the game
record.  The rules live in ``referee.game``; this module only asks players, checks
their answers through ``Game.apply`` and records what happened.

Fault semantics (documented for bot authors in protocol/PROTOCOL.md):

* A fault is a timeout, a crash, a malformed or oversized message, a protocol
  violation or an illegal decision.  Each is recorded with the bot, the game, the
  turn and a readable detail.
* Policy ``substitute`` (default): the referee plays a substitute decision for the
  seat -- the first decision of its legal list -- and counts a strike.  A seat over
  ``strike_limit`` strikes forfeits.  Policy ``forfeit``: the first fault forfeits.
* A crash or a lost connection forfeits at once (nobody is left to answer).
* A seat whose game clock (``TimeControl.game``) runs out has lost on time: a
  forfeit, whatever the policy.  Its clock is charged the time each of its
  decisions is charged (``Answer.elapsed``: never the referee's own time), and a
  decision may take no more than is left on it.  Nothing stops a game on the wall
  clock (RULES §5.4), so one seat's slowness never decides another seat's result.
* A fault while a seat is told that the game is over (``end_game``) changes nothing
  of the game: it is ``recorded`` (in the game record only, as it comes after the
  seat's ``game_over``).
* A forfeited seat finishes last; the game goes on for the others, and the forfeited
  seat plays on with the substitute policy (first legal decision) so that the other
  seats' game is not changed in kind, to its natural end (RULES §5.4: a forfeit
  never pays).  Several forfeits: the earlier forfeit ranks lower.  The others keep
  the order the game gives them.  A forfeited seat's points: one more than the
  highest of every seat's final points and of what each forfeiting seat held when
  it forfeited (``final_points``).
"""

from __future__ import annotations

import contextlib
import json
import math
import time
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple, Protocol, TypedDict, TypeGuard, cast

import orjson

from ..errors import BotError
from ..game import Decision, Game, GameConfig, GameEnd, How, IllegalDecision
from ..game.cards import card_text, parse_deck
from ..game.events import UnknownEventKind, event_dict, event_text, events_for
from ..game.seeds import derive_seed
from ..game.state import competition_ranks, is_stop
from ..protocol.errors import RefereeProtocolError
from ..protocol.messages import FAULT_ACTIONS, FAULT_KINDS, FaultAction, FaultKind

#: Errors that are the referee's own bugs, whichever player's call they come from:
#: they propagate (h11's local/remote split); only what a bot's own code raises is
#: recorded as that bot's crash.
REFEREE_BUGS = (RefereeProtocolError, UnknownEventKind)


def _dumps(obj: Any) -> str:
    return orjson.dumps(obj).decode()


class BotFault(BotError):
    """A bot did something wrong.  ``kind`` is one of ``protocol.messages.FAULT_KINDS``;
    ``fatal`` faults (the bot is gone) forfeit at once."""

    def __init__(self, kind: FaultKind, detail: str, *, fatal: bool = False) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail
        self.fatal = fatal


@dataclass(frozen=True)
class TimeControl:
    """Seconds.  A decision may take ``per_decision`` plus whatever is left of the
    ``bank``; time beyond ``per_decision`` is taken from the bank (as Kaggle and
    CodinGame do).  ``startup`` bounds the start of the bot and its handshake.
    ``game``: each seat's game clock (None: none), as in chess -- every decision's
    charged time is taken from it, a decision may take no more than is left on it,
    and a seat whose clock runs out has lost on time: a forfeit (RULES §5.4)."""

    startup: float = 10.0
    per_decision: float = 1.0
    bank: float = 10.0
    #: Each seat's thinking time for the whole game, in seconds (None: no game clock).
    game: float | None = None


@dataclass(frozen=True)
class FaultPolicy:
    mode: str = "substitute"  # or "forfeit"
    strike_limit: int = 3

    def __post_init__(self) -> None:
        if self.mode not in ("substitute", "forfeit"):
            raise ValueError(f"fault policy must be 'substitute' or 'forfeit', not {self.mode!r}")
        if self.strike_limit < 0:
            raise ValueError("strike_limit must be 0 or more")


@dataclass
class DecisionRequest:
    """What a player is asked: everything its seat may know, and nothing more."""

    game_id: str
    request_id: int
    seat: int
    observation: dict[str, Any]
    legal: Sequence[Decision]
    events: list[tuple[Any, ...]]  # filtered for the seat, since its previous request
    time_left: float  # seconds for this decision (per-decision limit + bank, or less)
    bank_left: float = 0.0  # the part of time_left that comes from the seat's bank
    #: What is left of the seat's game clock (infinite: the game has none).  When it
    #: is less than the per-decision limit and the bank, it is ``time_left``.
    clock_left: float = math.inf

    def allowance(self) -> str:
        """The time allowed, in words: "0.299s (0.2 s per decision + 0.099 s left of
        its bank)", or "0.120s (what was left of its game clock)", so that a timeout
        says where its limit came from."""
        text = f"{self.time_left:.3f}s"
        if self.clock_left <= self.time_left:
            text += " (what was left of its game clock)"
        elif self.bank_left > 0.0:
            text += (f" ({self.time_left - self.bank_left:g} s per decision + "
                     f"{self.bank_left:.3f} s left of its bank)")
        return text


class Player(Protocol):
    """One bot in one seat, as the runner sees it.  Implementations: in-process bots
    (``InProcessPlayer``), external bots over stdio or ZeroMQ, a human."""

    name: str

    def start_game(self, game_id: str, seat: int, config: GameConfig, seed: int) -> None:
        """A new game begins; raise BotFault if the bot cannot take part."""

    def decide(self, request: DecisionRequest) -> Decision | str:
        """One decision (a listed Decision or its text form); raise BotFault on a fault."""

    def end_game(self, game_id: str, result: GameResult,
                 events: Sequence[dict[str, Any]]) -> None:
        """The game is over: ``result`` as this seat may know it (another seat's fault
        without its detail: ``GameResult.seen_by``), ``events`` the seat's filtered
        events since its last request (JSON-ready ``event_dict`` form)."""

    # Optional hooks, called only when a player defines them (looked up with getattr,
    # so players without them need not change):
    #
    #   on_seating(bots: Sequence[str]) -> None
    #       before start_game: the names of the game's players, by seat.
    #   mark_log(text: str) -> None
    #       before start_game: a line for the bot's own logs ("game g000012"), naming
    #       the game as the referee's records do (the bot may be sent another id).
    #   rejected(request_id: int, code: str, message: str, action: str,
    #            substitute: str | None) -> None
    #       after a fault on one of its requests: code is the fault kind (REJECT
    #       codes of the protocol), action "substituted" or "forfeit" (never
    #       "recorded": that comes after the game), substitute the decision played for
    #       the seat.  Not called for crashes.


#: ``InProcessPlayer(stream=SEAT_STREAM)``: the bot's random numbers come from the deal
#: and the seat (duplicate deals: whoever sits in a seat of a deal draws that seat's numbers).
SEAT_STREAM = "@seat"


class InProcessPlayer:
    """A bot run inside the referee (``new_game(seed)`` / ``decide(observation,
    legal)``: ``referee.bots``, or a tournament's Python bot) behind the Player
    interface.  Each game's seed for the bot comes from the game's seed and its seat;
    with ``stream=SEAT_STREAM`` (tournaments: duplicate deals), from the deal's seed and
    the seat, hashed: every bot that sits in a seat of a deal draws that seat's numbers,
    so two copies of one bot in the same seat of the same deal play the same game (a
    mirror match comes out at exactly 0) and the seat's luck in the bots' own
    randomness cancels like the cards' luck; with another ``stream``, from the game's
    seed and that name instead: every replay of a duplicate deal then gives the bot the
    same random stream, wherever it sits (two bots with one stream draw the same
    numbers)."""

    def __init__(self, bot: Any, name: str | None = None, *,
                 stream: str | None = None) -> None:
        self.bot = bot
        self.name = name or bot.name
        self.stream = stream

    def start_game(self, game_id: str, seat: int, config: GameConfig, seed: int) -> None:
        if self.stream is None:
            self.bot.new_game(seed * 7919 + seat)
        elif self.stream == SEAT_STREAM:
            self.bot.new_game(derive_seed(seed, "bot", "seat", seat))
        else:
            self.bot.new_game(derive_seed(seed, "bot", self.stream))

    def decide(self, request: DecisionRequest) -> Decision | str:
        observe = getattr(self.bot, "observe", None)
        if observe is not None:
            observe(request.events)  # the seat's events since its last request
        result: Decision | str = self.bot.decide(request.observation, request.legal)
        return result

    def end_game(self, game_id: str, result: GameResult,
                 events: Sequence[dict[str, Any]]) -> None:
        pass


def _is_int(x: object) -> TypeGuard[int]:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_kind(x: object) -> TypeGuard[FaultKind]:
    return x in FAULT_KINDS


def _is_action(x: object) -> TypeGuard[FaultAction]:
    return x in FAULT_ACTIONS


class FaultJson(TypedDict):
    """A ``Fault`` as records, ``game_over`` and the tournament store write it."""

    seat: int
    bot: str
    kind: FaultKind
    detail: str
    turn: int
    action: FaultAction


@dataclass(frozen=True)
class Fault:
    """One fault of one seat's bot: what it did (``kind``, ``detail``), when (the
    game's ``turn``) and what the referee did about it (``action``: ``substituted``,
    ``forfeit`` or ``recorded``, as ``protocol.messages.FAULT_ACTIONS`` says)."""

    seat: int
    bot: str
    kind: FaultKind
    detail: str
    turn: int
    action: FaultAction
    #: A forfeit: the penalty points of every card the seat held at that moment
    #: (the result charges it more; not part of the record's fault line).
    held: int | None = field(default=None, compare=False)

    def to_dict(self) -> FaultJson:
        return {"seat": self.seat, "bot": self.bot, "kind": self.kind, "detail": self.detail,
                "turn": self.turn, "action": self.action}

    @classmethod
    def from_dict(cls, row: Mapping[str, Any]) -> Fault:
        """A fault as ``to_dict`` wrote it (a record's fault line, a store's row;
        extra keys such as ``type`` are ignored).  ValueError naming what is wrong
        when it is not one: a record is input like any other."""
        kind, action = row.get("kind"), row.get("action")
        if not _is_kind(kind):
            raise ValueError(f"a fault of unknown kind {kind!r}")
        if not _is_action(action):
            raise ValueError(f"a fault with unknown action {action!r}")
        seat, turn = row.get("seat"), row.get("turn", 0)
        bot, detail = row.get("bot", "?"), row.get("detail", "")
        if not (_is_int(seat) and _is_int(turn) and isinstance(bot, str)
                and isinstance(detail, str)):
            raise ValueError("a fault whose seat, turn, bot or detail has the wrong type")
        return cls(seat=seat, bot=bot, kind=kind, detail=detail, turn=turn, action=action)

    @classmethod
    def as_stored(cls, row: object) -> Fault:
        """A fault row as a store holds it, read even when it was damaged by hand (a
        seat that is not a number reads -1; a missing field, empty): ``tournament
        verify`` compares it with the game's record and reports the difference, so
        the row must be read as it is rather than refused."""
        if not isinstance(row, Mapping):
            row = {}
        seat, turn = row.get("seat"), row.get("turn", 0)
        return cls(seat=seat if _is_int(seat) else -1, bot=str(row.get("bot", "")),
                   kind=cast(FaultKind, str(row.get("kind", ""))),
                   detail=str(row.get("detail", "")), turn=turn if _is_int(turn) else 0,
                   action=cast(FaultAction, str(row.get("action", ""))))

    def __str__(self) -> str:
        return (f"{self.bot} (seat {self.seat}) turn {self.turn}: {self.kind}: {self.detail} "
                f"[{self.action}]")


@dataclass(frozen=True)
class GameResult:
    """How a game ended, as the referee records it: the rules' ending (``how``,
    ``game_places``, ``game_points``, ``finish_order``, ``turns``) with the seats'
    forfeits counted in ``places`` and ``points`` (``final_places``,
    ``final_points``), the forfeits (by seat, in order) and every fault.

    ``to_json`` gives the record's result line (without ``type`` and ``wall_time``,
    which are the record's); the faults are not in it, as the record lists them on
    lines of their own: ``from_json`` takes them apart."""

    how: How
    places: tuple[int, ...]
    points: tuple[int, ...]
    game_places: tuple[int, ...]
    game_points: tuple[int, ...]
    finish_order: tuple[int, ...]
    turns: int
    forfeits: tuple[int, ...] = ()
    faults: tuple[Fault, ...] = ()
    #: For each forfeit: how many decisions had been applied when it came (so a
    #: re-run knows what the seat held then: ``final_points``'s ``held``).
    forfeit_at: tuple[int, ...] = ()

    @classmethod
    def of(cls, end: GameEnd, forfeits: Sequence[int], faults: Sequence[Fault] = (),
           held: Sequence[int] = (), forfeit_at: Sequence[int] = ()) -> GameResult:
        """The result of a game the rules ended with ``end``, after ``forfeits``
        (``held``: what each forfeiting seat held when it forfeited)."""
        return cls(how=end.how, places=tuple(final_places(end.places, forfeits)),
                   points=tuple(final_points(end.points, forfeits, held)),
                   game_places=end.places, game_points=end.points,
                   finish_order=end.finish_order, turns=end.turns,
                   forfeits=tuple(forfeits), faults=tuple(faults),
                   forfeit_at=tuple(forfeit_at))

    def seen_by(self, seat: int) -> GameResult:
        """The result as ``seat`` may know it (``game_over``): its own faults in full,
        the other seats' by kind, turn and action only."""
        return replace(self, faults=tuple(
            f if f.seat == seat else replace(f, detail=OTHERS_FAULT_DETAIL)
            for f in self.faults))

    def to_json(self) -> dict[str, Any]:
        return {
            "how": self.how,
            "places": list(self.places),
            "points": list(self.points),
            "game_places": list(self.game_places),
            "game_points": list(self.game_points),
            "finish_order": list(self.finish_order),
            "turns": self.turns,
            "forfeits": list(self.forfeits),
            **({"forfeit_at": list(self.forfeit_at)} if self.forfeit_at else {}),
        }

    @classmethod
    def from_json(cls, row: dict[str, Any], faults: Sequence[Fault] = ()) -> GameResult:
        """A result line as ``to_json`` wrote it (extra keys, such as ``type`` and
        ``wall_time``, are ignored); ``faults`` from the record's fault lines.  A record
        written before ``game_places`` and ``game_points`` had the engine's own places
        and points."""
        return cls(how=row["how"], places=tuple(row["places"]), points=tuple(row["points"]),
                   game_places=tuple(row.get("game_places", row["places"])),
                   game_points=tuple(row.get("game_points", row["points"])),
                   finish_order=tuple(row["finish_order"]), turns=int(row["turns"]),
                   forfeits=tuple(row.get("forfeits", ())), faults=tuple(faults),
                   forfeit_at=tuple(row.get("forfeit_at", ())))


class Applied(NamedTuple):
    """A decision applied for a seat (``run_game``'s ``on_event("decision", ...)``):
    ``substituted`` when the referee chose it (after a fault, or for a forfeited
    seat), as the record's decision line says."""

    seat: int
    text: str
    elapsed: float
    substituted: bool


@dataclass
class GameRecord:
    """Everything needed to re-run a game exactly, with this project or any other
    implementation of the rules: configuration, deck order, first player, who sat
    where, every decision, every event, the result, faults and timings."""

    game_id: str
    config: GameConfig
    seed: int
    deck: list[str]
    first_player: int
    bots: list[str]
    decisions: list[dict[str, Any]] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    #: Set when the game is over (``run_game`` returns it so).
    result: GameResult | None = None
    wall_time: float = 0.0
    #: The id the bots were given, where it is not ``game_id`` (tournaments).
    bot_game_id: str | None = None
    #: The sandbox the external bots ran in, and its limits (``Sandbox.describe``).
    sandbox: dict[str, Any] | None = None
    #: A tournament's game: the tournament's seed (a drawn one is kept here too, so
    #: that the records alone can rebuild the tournament: ``tournament verify``).
    tournament_seed: int | None = None

    @property
    def ended(self) -> GameResult:
        """The result of the finished game."""
        if self.result is None:
            raise ValueError(f"game {self.game_id} is not over: it has no result")
        return self.result

    @property
    def places(self) -> list[int]:
        return list(self.ended.places)

    @property
    def points(self) -> list[int]:
        return list(self.ended.points)

    @property
    def forfeits(self) -> list[int]:
        return list(self.ended.forfeits)

    def to_lines(self) -> list[str]:
        """JSON lines: a header, then each decision and event in order, then the result."""
        head = {
            "type": "game",
            "format": "updown-record/1",
            "game_id": self.game_id,
            "config": self.config.to_dict(),
            "seed": self.seed,
            "deck": self.deck,
            "first_player": self.first_player,
            "bots": self.bots,
        }
        if self.bot_game_id is not None:
            head["bot_game_id"] = self.bot_game_id
        if self.sandbox is not None:
            head["sandbox"] = self.sandbox
        if self.tournament_seed is not None:
            head["tournament_seed"] = self.tournament_seed
        # orjson: a record has hundreds of lines, and tournaments write one per game.
        dumps = _dumps
        lines = [dumps(head)]
        lines += [dumps({"type": "decision", **d}) for d in self.decisions]
        lines += [dumps({"type": "event", "event": e}) for e in self.events]
        lines += [dumps({"type": "fault", **f.to_dict()}) for f in self.faults]
        lines.append(dumps({"type": "result", **self.ended.to_json(),
                            "wall_time": round(self.wall_time, 6)}))
        return lines

    def write(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(self.to_lines()) + "\n")


#: What a seat is told of another seat's fault in place of its detail: a detail can
#: name that seat's hidden cards ("legal now: play hand 3x1, ..." is its hand).
OTHERS_FAULT_DETAIL = "another seat's fault: only its kind and turn are told"


def final_places(engine_places: Sequence[int], forfeits: Sequence[int]) -> list[int]:
    """Places after forfeits: forfeited seats last (the earlier forfeit lower), the
    others in the game's order with its ties kept (competition ranking)."""
    n = len(engine_places)
    rest = [s for s in range(n) if s not in forfeits]
    ranks = competition_ranks([engine_places[s] for s in rest])
    out = [0] * n
    for s, r in zip(rest, ranks, strict=True):
        out[s] = r
    for i, s in enumerate(reversed(forfeits)):
        out[s] = len(rest) + 1 + i
    return out


def final_points(engine_points: Sequence[int], forfeits: Sequence[int],
                 held: Sequence[int] = ()) -> list[int]:
    """Penalty points after forfeits, to agree with ``final_places`` (RULES §5.4): a
    forfeited seat scores one more than the highest of the game's final points (its
    own included) and of what each forfeiting seat held when it forfeited
    (``held``, in the order of ``forfeits``), and one more again for each forfeit
    placed above it.  So a forfeit costs more than finishing last with every card it
    held, and more than the referee's substitute decisions made of its cards (a seat
    that forfeited could otherwise finish on them and win a match scored in points)."""
    out = list(engine_points)
    if forfeits:
        top = max([*engine_points, *held])
        for i, s in enumerate(reversed(forfeits)):  # the latest forfeit ranks highest
            out[s] = top + 1 + i
    return out


def seconds_text(x: float) -> str:
    """A time limit as a fault names it: ``30.0``, ``0.25``."""
    return f"{x:.1f}" if round(x, 1) == x else f"{x:g}"


def lost_on_time(name: str, game_clock: float, elapsed: float, left: float) -> str:
    """The detail of the fault of a seat whose game clock ran out (RULES §5.4)."""
    return (f"{name} used its {seconds_text(game_clock)} s game clock: lost on time (its "
            f"last decision took {elapsed:.3f}s, {left:.3f}s were left; RULES §5.4)")


class Ask(NamedTuple):
    """What a game in progress waits for (``game_steps`` yields it): ``player``'s
    decision on ``request``."""

    player: Player
    request: DecisionRequest


class Answer(NamedTuple):
    """A player's answer to an ``Ask``, as sent back into ``game_steps``: its
    decision, or what it raised (``error``: a ``BotFault``, or an in-process bot's
    exception), and the seconds of the bot's time it took (``elapsed``: the wait the
    referee attributes to the bot, never the referee's own delays)."""

    value: Any  # what the player returned (a Decision or its text): the engine checks it
    error: Exception | None
    elapsed: float


GameSteps = Generator[Ask, Answer, "GameRecord"]

#: ``Ask`` and ``Answer`` made from a tuple of their fields by C code, without a
#: NamedTuple's ``__new__`` (a Python function): they are made once per decision.
_new = tuple.__new__


def ask_now(ask: Ask, clock: Callable[[], float] = time.perf_counter) -> Answer:
    """Ask ``ask.player`` for its decision and wait for it (the blocking way, one
    game at a time); the bot's time is the wall time of its ``decide``, less the
    referee's own work in it that a player reports (``overhead``: seconds spent
    thawing and freezing its bot, which are never the bot's)."""
    player = ask.player
    start = clock()
    try:
        value = player.decide(ask.request)
    except Exception as e:  # a BotFault, or an in-process bot's bug: the game judges
        return Answer(None, e, clock() - start - getattr(player, "overhead", 0.0))
    return _new(Answer, (value, None, clock() - start - getattr(player, "overhead", 0.0)))


def drive(steps: GameSteps, clock: Callable[[], float] = time.perf_counter) -> GameRecord:
    """Play a game of ``game_steps`` to its end, asking each player in turn and
    waiting for it (``ask_now``).  ``referee.players.concurrent`` drives many at once."""
    try:
        ask = next(steps)
        while True:
            ask = steps.send(ask_now(ask, clock))
    except StopIteration as done:
        record: GameRecord = done.value
        return record


def run_game(
    config: GameConfig,
    seed: int,
    players: Sequence[Player],
    *,
    game_id: str = "game",
    bot_game_id: str | None = None,
    deck: Sequence[int] | None = None,
    first_player: int | None = None,
    time_control: TimeControl | None = None,
    policy: FaultPolicy | None = None,
    on_event: Callable[[str, Any], None] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> GameRecord:
    """Play one game; never raises because of a bot.  ``on_event(kind, payload)`` is
    told of events ("event", text), faults ("fault", Fault) and decisions
    ("decision", Applied).
    ``bot_game_id``: the id the players are given instead of ``game_id`` (a
    tournament's, which must not tell a bot which games share a deal); the record
    keeps both.  The game is ``game_steps``, driven here one decision at a time."""
    return drive(game_steps(config, seed, players, game_id=game_id, bot_game_id=bot_game_id,
                            deck=deck, first_player=first_player,
                            time_control=time_control, policy=policy, on_event=on_event,
                            clock=clock), clock)


def game_steps(
    config: GameConfig,
    seed: int,
    players: Sequence[Player],
    *,
    game_id: str = "game",
    bot_game_id: str | None = None,
    deck: Sequence[int] | None = None,
    first_player: int | None = None,
    time_control: TimeControl | None = None,
    policy: FaultPolicy | None = None,
    on_event: Callable[[str, Any], None] | None = None,
    clock: Callable[[], float] = time.perf_counter,
) -> GameSteps:
    """``run_game``'s game as a generator, the one code path of a game however it is
    driven: it yields an ``Ask`` for each decision of a seat not forfeited and is
    sent the ``Answer``; it returns the record.  Whoever drives it asks the player
    and measures the bot's time (``drive``: one game, waiting; a game loop: many
    games at once).  Starting and ending the game (``start_game``, ``end_game``)
    are called here.  ``clock`` measures the game's wall time."""
    sent_id = bot_game_id or game_id
    if len(players) != config.players:
        raise ValueError(f"{config.players} players are needed, {len(players)} were given")
    tc = time_control or TimeControl()
    policy = policy or FaultPolicy()
    t0 = clock()
    game = Game(config, seed, deck=deck, first_player=first_player)
    record = GameRecord(
        game_id=game_id,
        config=config,
        seed=seed,
        deck=[card_text(c) for c in game.deck],
        first_player=game.first_player,
        bots=[p.name for p in players],
        bot_game_id=bot_game_id,
    )
    n = config.players
    strikes = [0] * n
    forfeited: list[int] = []
    held: list[int] = []  # what each forfeiting seat held then (penalty points)
    forfeit_at: list[int] = []  # decisions applied by then
    bank = [tc.bank] * n
    # Each seat's game clock: what is left of it (without one: infinite, never out).
    game_clock = math.inf if tc.game is None else tc.game
    clocks = [game_clock] * n
    seen = [0] * n  # index of the first event a seat has not been sent yet
    request_id = 0

    def fault(seat: int, kind: FaultKind, detail: str, fatal: bool = False,
              request: int | None = None, substitute: str | None = None) -> None:
        strikes[seat] += 1
        forfeit = seat not in forfeited and (
            fatal or policy.mode == "forfeit" or strikes[seat] > policy.strike_limit
        )
        if forfeit:
            forfeited.append(seat)
            held.append(game.points(seat))
            forfeit_at.append(len(record.decisions))
        f = Fault(seat, players[seat].name, kind, detail, game.turn,
                  "forfeit" if forfeit else "substituted", held[-1] if forfeit else None)
        record.faults.append(f)
        if on_event:
            on_event("fault", f)
        tell = getattr(players[seat], "rejected", None)
        if tell is not None and request is not None and kind != "crash":
            # Telling is a courtesy: the fault is recorded already.
            with contextlib.suppress(Exception):
                tell(request, kind, detail, f.action, substitute)

    names = [p.name for p in players]
    for seat, p in enumerate(players):
        try:
            seating = getattr(p, "on_seating", None)
            if seating is not None:
                seating(names)
            mark = getattr(p, "mark_log", None)
            if mark is not None:
                mark(f"game {game_id}, seat {seat}")
            p.start_game(sent_id, seat, config, seed)
        except BotFault as e:
            fault(seat, e.kind, e.detail, fatal=True)
        except REFEREE_BUGS:
            raise  # ours, not the bot's: never recorded as its crash
        except Exception as e:  # a bug in an in-process bot must not stop the game
            fault(seat, "crash", f"start_game raised {type(e).__name__}: {e}", fatal=True)

    # The loop runs once per decision: what it uses is bound to locals once.
    emitted = 0
    decisions = record.decisions
    per_decision = tc.per_decision
    legal_of = game.legal
    apply = game.apply
    observe = game.observation
    while not game.over:
        for seat in game.to_decide():
            legal = legal_of(seat)
            chosen: Decision | None = None
            elapsed = 0.0
            if seat not in forfeited:
                request_id += 1
                all_events = game.events
                events = events_for(all_events[seen[seat]:], seat)
                seen[seat] = len(all_events)
                time_left = per_decision + bank[seat]
                left = clocks[seat]
                if left < time_left:
                    time_left = left  # no more than is left on its game clock
                req = DecisionRequest(sent_id, request_id, seat, observe(seat), legal, events,
                                      time_left, bank[seat], left)
                answer = yield _new(Ask, (players[seat], req))
                elapsed = answer.elapsed
                try:
                    clocks[seat] = left - elapsed
                    if elapsed >= left:  # its game clock ran out: lost on time (RULES §5.4)
                        raise BotFault("timeout", lost_on_time(
                            players[seat].name, game_clock, elapsed, left), fatal=True)
                    if answer.error is not None:
                        raise answer.error
                    if elapsed > time_left:
                        raise BotFault("timeout", f"{players[seat].name} took {elapsed:.3f}s "
                                       f"to decide, {req.allowance()} allowed")
                    chosen = apply(seat, answer.value)
                except BotFault as e:
                    fault(seat, e.kind, e.detail, e.fatal, request_id, legal[0].text)
                except IllegalDecision as e:
                    fault(seat, "illegal", str(e), False, request_id, legal[0].text)
                except REFEREE_BUGS:
                    raise  # ours, not the bot's: never recorded as its crash
                except Exception as e:  # in-process bot bug
                    fault(seat, "crash", f"raised {type(e).__name__}: {e}", fatal=True)
                if elapsed > per_decision:
                    bank[seat] = max(0.0, bank[seat] - (elapsed - per_decision))
            substituted = chosen is None
            if chosen is None:
                # Substitute policy (and forfeited seats): the first legal decision.
                chosen = apply(seat, legal[0])
                decisions.append({"seat": seat, "decision": chosen.text,
                                  "ms": round(elapsed * 1000, 3), "substituted": True})
            else:
                decisions.append({"seat": seat, "decision": chosen.text,
                                  "ms": round(elapsed * 1000, 3)})
            if on_event:
                on_event("decision", Applied(seat, chosen.text, elapsed, substituted))
        if on_event:
            for ev in game.events[emitted:]:
                on_event("event", event_text(ev))
            emitted = len(game.events)

    if on_event and emitted < len(game.events):
        for ev in game.events[emitted:]:
            on_event("event", event_text(ev))
        emitted = len(game.events)
    end = game.result()
    assert end is not None
    record.events = [event_text(e) for e in game.events]
    result = GameResult.of(end, forfeited, record.faults, held, forfeit_at)
    record.result = result
    record.wall_time = clock() - t0
    for seat, p in enumerate(players):
        try:
            p.end_game(sent_id, result.seen_by(seat),
                       [event_dict(e) for e in game.events_for(seat, seen[seat])])
        except BotFault as e:
            if seat not in forfeited:
                record.faults.append(Fault(seat, p.name, e.kind, e.detail, game.turn, "recorded"))
        except REFEREE_BUGS:
            raise
        except Exception as e:
            record.faults.append(Fault(seat, p.name, "crash", f"end_game raised {e}", game.turn,
                                       "recorded"))
    if len(record.faults) > len(result.faults):  # faults while telling the seats
        record.result = replace(result, faults=tuple(record.faults))
    return record


def replay_check(record_lines: Sequence[str]) -> tuple[bool, str]:
    """Re-run a record's decisions through the engine; (True, "") when every event is
    reproduced, else (False, where it first differs)."""
    rows = [json.loads(x) for x in record_lines if x.strip()]
    head = rows[0]
    config = GameConfig.from_dict(head["config"])
    game = Game(config, head["seed"], deck=parse_deck(head["deck"]),
                first_player=head["first_player"])
    for row in rows:
        if row["type"] == "decision":
            try:
                game.apply(row["seat"], row["decision"])
            except IllegalDecision as e:
                return False, f"decision {row['decision']!r} of seat {row['seat']} is illegal: {e}"
    result: dict[str, Any] = next((r for r in rows if r["type"] == "result"), {})
    stop_if_stopped(game, result.get("how"))
    want = [r["event"] for r in rows if r["type"] == "event"]
    got = [event_text(e) for e in game.events]
    for i, (a, b) in enumerate(zip(want, got, strict=False)):
        if a != b:
            return False, f"event {i} differs: record says {a!r}, engine says {b!r}"
    if len(want) != len(got):
        return False, f"the record has {len(want)} events, the engine {len(got)}"
    return True, ""


def stop_if_stopped(game: Game, how: object) -> None:
    """A record whose game was stopped (RULES §5.4: ``forfeits``, ``time_limit``: its
    result's ``how``; only records made before the rulings that ended both stops) is
    re-run to the same end: stopped after its last decision."""
    if not game.over and is_stop(how):
        game.stop(how)
