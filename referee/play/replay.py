"""Showing games to people: events in words, and recorded games re-run and verified.

Owns: ``describe`` (one event as a sentence, as a given seat may see it), the live
``Narrator`` the ``referee play`` command prints with, and the reading, re-running
and showing of game records (``referee replay``).  A record stores omniscient event
texts; to show one seat's view we re-run the record's decisions through the engine,
which gives the events themselves, and filter them with ``filter_event`` (RULES §6).
Must not import the CLI.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO, TypeGuard

from ..bots import BUILTIN_BOTS
from ..errors import InputError
from ..game import ConfigError, Game, GameConfig, IllegalDecision
from ..game.cards import CardError, card_text, parse_deck
from ..game.events import Event, EventSyntaxError, event_text, filter_event, parse_event
from .runner import (
    Fault,
    GameResult,
    final_places,
    final_points,
    replay_check,
    stop_if_stopped,
)
from .table import draw_table, omniscient_lines

SOURCE_WORDS = {0: "from the hand", 1: "from the 3UP cards", 2: "from 3DOWN"}


def _cards_of(cards: Sequence[int] | None, hidden: str = "?",
           fmt: Callable[[int], str] = card_text) -> str:
    if cards is None:
        return hidden
    return " ".join(fmt(c) for c in cards) if cards else "(nothing)"


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def describe(ev: Event, names: Sequence[str], fmt: Callable[[int], str] = card_text,
             hidden: str = "?") -> str:
    """One (already filtered) event in words.  ``names[seat]`` labels the seats;
    ``fmt`` writes a card and ``hidden`` a card the seat may not see (the HTML
    report marks cards up with them)."""

    def _cards(cards: Sequence[int] | None) -> str:
        return _cards_of(cards, hidden, fmt)

    def card_text(card: int) -> str:
        return fmt(card)

    def who(s: int) -> str:
        return names[s] if 0 <= s < len(names) else f"seat {s}"

    kind = ev[0]
    if kind == "deal":
        if ev[2] is None:
            return f"{who(ev[1])} is dealt six cards"
        return f"{who(ev[1])} is dealt {_cards(ev[2])}"
    if kind == "chosen":
        return f"{who(ev[1])} has chosen their 3UP cards"
    if kind == "reveal":
        return f"{who(ev[1])} lays face up: {_cards(ev[2])}"
    if kind == "piles":
        moves = ", ".join(f"{who(i)} keeps its own" if i == p else
                          f"{who(i)} gets the table pile of {who(p)}" for i, p in enumerate(ev[1]))
        return f"table piles swapped (RULES §9.5): {moves}"
    if kind == "turn":
        return f"turn {ev[1]}: {who(ev[2])}"
    if kind == "extra":
        return f"{who(ev[1])} takes an extra action ({ev[2]} more to come after it)"
    if kind == "play":
        _, s, src, cards, slot = ev
        if src == 2:
            return f"{who(s)} turns 3DOWN slot {slot}: {_cards(cards)}, and plays it"
        return f"{who(s)} plays {_cards(cards)} {SOURCE_WORDS[src]}"
    if kind == "fail":
        _, s, slot, card, pile = ev
        c = "a card that" if card is None else card_text(card) + ", which"
        tail = f" and the pile ({_cards(pile)})" if pile else ""
        return f"{who(s)} turns 3DOWN slot {slot}: {c} cannot be played; takes it{tail} into the hand"
    if kind == "pickup":
        return f"{who(ev[1])} cannot play and picks up the pile: {_cards(ev[2])}"
    if kind == "clear":
        how = "three of a kind in a row" if ev[2] == "three" else ev[2]
        leave = "leaves" if ev[3] == 1 else "leave"
        return f"the pile is cleared by {how} ({_count(ev[3], 'card')} {leave} the game)"
    if kind == "reverse":
        return "play now goes " + ("clockwise" if ev[1] == 1 else "counter-clockwise")
    if kind == "draw":
        _, s, n, cards, why = ev
        reason = {"refill": "to refill the hand", "extra": "before the extra action",
                  "decline": "instead of playing"}.get(why, why)
        seen = "" if cards is None else f": {_cards(cards)}"
        return f"{who(s)} draws {_count(n, 'card')} {reason}{seen}"
    if kind == "colour":
        return f"four cards of one colour on top: {who(ev[1])} may swap a 3UP card with a hand card"
    if kind == "swap":
        return f"{who(ev[1])} swaps 3UP {card_text(ev[2])} with hand card {card_text(ev[3])}"
    if kind == "keep":
        return f"{who(ev[1])} keeps their 3UP cards"
    if kind == "finish":
        return f"{who(ev[1])} has no cards left: place {ev[2]}"
    if kind == "end":
        _, how, places, points = ev
        return (f"game over ({HOW_WORDS.get(how, how)}): places "
                + ", ".join(f"{who(s)} {p}" for s, p in enumerate(places))
                + "; penalty points " + ", ".join(f"{who(s)} {p}" for s, p in enumerate(points)))
    return event_text(ev)


HOW_WORDS = {
    "winner": "a player went out",
    "played_out": "played out to the last player",
    "turn_limit": "stopped at the turn limit",
    "forfeits": "stopped: every other seat still playing had forfeited (RULES §5.4)",
    "time_limit": "stopped at the game's wall-clock limit, as games were before the game "
                  "clocks (RULES §5.4)",
}


class Narrator:
    """Prints a game as it goes, from one seat's view (``seat=None``: omniscient).
    Give ``on_event`` to ``run_game``; events arrive as omniscient texts."""

    def __init__(self, names: Sequence[str], out: Callable[[str], None],
                 seat: int | None = None, *, show_setup_deals: bool = True) -> None:
        self.names = list(names)
        self.out = out
        self.seat = seat
        self.show_setup_deals = show_setup_deals
        #: Seats that forfeited this game, in order: the game-over line gives the
        #: places and points after them (the cards alone would say otherwise).
        self.forfeits: list[int] = []
        self.held: list[int] = []  # what each held when it forfeited

    def forfeit(self, seat: int, held: int | None = None) -> None:
        """``seat`` forfeited (holding ``held`` penalty points): say so at once, and
        count it at the end."""
        if seat not in self.forfeits:
            self.forfeits.append(seat)
            self.held.append(held or 0)
            self.out(f"   {self.names[seat]} forfeits the game: it will be placed last; the "
                     f"referee plays its first legal decision from now on")

    def event(self, text: str) -> None:
        try:
            ev = parse_event(text)
        except EventSyntaxError:
            self.out(f"  {text}")
            return
        self.show(ev)

    def show(self, ev: Event) -> None:
        ev = filter_event(ev, self.seat)
        if ev[0] == "turn":
            self.out(f"-- {describe(ev, self.names)}")
        elif ev[0] == "end" and self.forfeits:
            _, how, places, points = ev
            forfeits, self.forfeits = self.forfeits, []
            held, self.held = self.held, []
            final = ("end", how, tuple(final_places(places, forfeits)),
                     tuple(final_points(points, forfeits, held)))
            self.out(f"   {describe(final, self.names)} (after forfeits: "
                     + ", ".join(self.names[s] for s in forfeits) + " placed last)")
        else:
            self.out(f"   {describe(ev, self.names)}")


# --- records -----------------------------------------------------------------------


class RecordError(InputError, ValueError):
    """A file that is not a readable game record; the message says why."""


@dataclass(frozen=True)
class RecordHead:
    """A record's header line, read as types: the mirror of what ``GameRecord.to_lines``
    writes first (``game_id`` None when a hand-written record has none)."""

    config: GameConfig
    seed: int
    deck: tuple[str, ...]
    first_player: int
    bots: tuple[str, ...] = ()
    game_id: str | None = None
    format: str | None = None
    bot_game_id: str | None = None
    sandbox: dict[str, Any] | None = None
    tournament_seed: int | None = None

    @classmethod
    def from_json(cls, row: dict[str, Any], where: str = "the record") -> RecordHead:
        """The header line ``row``; RecordError saying what is wrong when it is not one."""
        for key in ("config", "seed", "deck", "first_player"):
            if key not in row:
                raise RecordError(f"{where}: the game header has no {key!r}")
        seed, first, deck, bots = row["seed"], row["first_player"], row["deck"], row.get("bots", [])
        if not (_is_int(seed) and _is_int(first)):
            raise RecordError(f"{where}: the game header's seed and first player must be numbers")
        if not (isinstance(deck, list) and all(isinstance(c, str) for c in deck)):
            raise RecordError(f"{where}: the game header's deck must be a list of card texts")
        if not (isinstance(bots, list) and all(isinstance(b, str) for b in bots)):
            raise RecordError(f"{where}: the game header's bots must be a list of names")
        optional: dict[str, Any] = {}
        for key, kind in (("game_id", str), ("format", str), ("bot_game_id", str),
                          ("sandbox", dict), ("tournament_seed", int)):
            value = row.get(key)
            if value is not None and (not isinstance(value, kind) or isinstance(value, bool)):
                raise RecordError(f"{where}: the game header's {key} has the wrong type")
            optional[key] = value
        try:
            config = GameConfig.from_dict(row["config"])
        except (ConfigError, TypeError, ValueError, AttributeError) as e:
            raise RecordError(f"{where}: bad configuration in the header: {e}") from None
        return cls(config=config, seed=seed, deck=tuple(deck), first_player=first,
                   bots=tuple(bots), **optional)


@dataclass(frozen=True)
class RecordedDecision:
    """A record's decision line: the seat, the decision's text, the time the bot took
    and whether the referee chose it (a substitute)."""

    seat: int
    decision: str
    ms: float = 0.0
    substituted: bool = False

    @classmethod
    def from_json(cls, row: dict[str, Any], where: str) -> RecordedDecision:
        seat, decision, ms = row.get("seat"), row.get("decision"), row.get("ms", 0.0)
        if not (_is_int(seat) and isinstance(decision, str)
                and isinstance(ms, int | float) and not isinstance(ms, bool)):
            raise RecordError(f"{where} is not a decision line (a seat, a decision's text, "
                              "its time in ms)")
        return cls(seat, decision, float(ms), bool(row.get("substituted", False)))


def _is_int(x: object) -> TypeGuard[int]:
    return isinstance(x, int) and not isinstance(x, bool)


@dataclass
class Record:
    """A game record read back as types: the mirror of ``GameRecord`` (the writer,
    ``runner.py``), used by replay, verify and the report.  ``result`` holds the
    record's faults too; ``result_has_finals``: its result line gives the engine's
    places and points apart from the final ones (``game_places``), as records have
    since forfeits were scored."""

    lines: list[str]
    head: RecordHead
    decisions: list[RecordedDecision] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    faults: list[Fault] = field(default_factory=list)
    result: GameResult | None = None
    wall_time: float | None = None
    result_has_finals: bool = False

    @property
    def bots(self) -> list[str]:
        return list(self.head.bots)

    @property
    def config(self) -> GameConfig:
        return self.head.config

    @property
    def game_id(self) -> str:
        """The game's id, "?" when the record has none."""
        return self.head.game_id if self.head.game_id is not None else "?"


def read_record(path: str) -> Record:
    """Read a record file; RecordError (one line) when it cannot be."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        raise RecordError(f"no such file: {path}; give the path of a game record "
                          "(written by 'referee play --record FILE')") from None
    except IsADirectoryError:
        raise RecordError(f"{path} is a directory; give one game record file in it") from None
    except (OSError, UnicodeDecodeError) as e:
        raise RecordError(f"cannot read {path}: {e}") from None
    return parse_record(text.splitlines(), path, complete=text.endswith("\n"))


def _truncated(where: str, why: str) -> RecordError:
    return RecordError(f"{where} is truncated: {why} (was its writing interrupted, or the "
                       "disk full?); a tournament plays such a game again when resumed")


def parse_record(lines: Sequence[str], where: str = "the record", *,
                 complete: bool = True) -> Record:
    """``complete``: the text ended with a newline, as the referee writes records."""
    rows: list[dict[str, Any]] = []
    kept: list[str] = []
    last = max((i for i, line in enumerate(lines, 1) if line.strip()), default=0)
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as e:
            if i == last and i > 1 and not complete:
                raise _truncated(where, f"it ends in the middle of line {i}") from None
            raise RecordError(f"{where} line {i} is not JSON ({e.msg}): is this a game record?") from None
        if not isinstance(row, dict) or "type" not in row:
            raise RecordError(f"{where} line {i} is not a record line (no 'type')")
        rows.append(row)
        kept.append(line)
    if not rows or rows[0]["type"] != "game":
        raise RecordError(f"{where} does not start with a game header: is this a game record?")
    head = RecordHead.from_json(rows[0], where)
    rec = Record(kept, head)
    result: dict[str, Any] | None = None
    for i, row in enumerate(rows[1:], 2):
        t = row["type"]
        if t == "decision":
            rec.decisions.append(RecordedDecision.from_json(row, f"{where} line {i}"))
        elif t == "event":
            rec.events.append(str(row.get("event", "")))
        elif t == "fault":
            try:
                rec.faults.append(Fault.from_dict(row))
            except ValueError as e:
                raise RecordError(f"{where} line {i}: {e}") from None
        elif t == "result":
            result = row
        elif t == "game":
            raise RecordError(f"{where} holds more than one game; split it, one game per file")
    if result is None and rows[-1]["type"] in ("decision", "event", "fault"):
        raise _truncated(where, f"it ends at line {last} without the game's result line")
    if result is not None:
        try:
            rec.result = GameResult.from_json(result, rec.faults)
            wall = result.get("wall_time")
            rec.wall_time = float(wall) if wall is not None else None
        except (KeyError, TypeError, ValueError) as e:
            raise RecordError(f"{where}: the result line is not one ({e!r} is wrong or "
                              "missing)") from None
        rec.result_has_finals = "game_places" in result
    return rec


@dataclass
class Step:
    """One applied decision and the events it caused (omniscient); ``seat`` -1: the
    referee's stop of the game (RULES §5.4)."""

    seat: int
    decision: str
    ms: float
    substituted: bool
    events: list[Event]


def rerun(rec: Record) -> tuple[Game, list[Event], list[Step], str]:
    """Re-run the record's decisions through the engine: (game, events before the
    first decision, steps, error).  ``error`` is "" when every decision was legal."""
    game = _new_game(rec)
    start = list(game.events)
    steps: list[Step] = []
    for row in rec.decisions:
        before = len(game.events)
        try:
            game.apply(row.seat, row.decision)
        except (IllegalDecision, ValueError) as e:
            return game, start, steps, (f"decision {len(steps) + 1} ({row.decision!r} of "
                                        f"seat {row.seat}) is illegal: {e}")
        steps.append(Step(row.seat, row.decision, row.ms, row.substituted,
                          game.events[before:]))
    before = len(game.events)
    stop_if_stopped(game, rec.result.how if rec.result else None)
    if len(game.events) > before:
        steps.append(Step(-1, "", 0.0, False, game.events[before:]))
    return game, start, steps, ""


def held_at_forfeits(rec: Record, forfeits: Sequence[int], at: Sequence[int]) -> list[int]:
    """What each forfeiting seat held (penalty points) when it forfeited: the game
    re-run to the number of decisions the result gives for it (RULES §5.4), in the
    order of ``forfeits``.  A record written before the result said so: none."""
    if not at:
        return []
    if len(at) != len(forfeits) or list(at) != sorted(at):
        raise ValueError("it must give, for each forfeit in order, the decisions played")
    game = _new_game(rec)
    held: list[int] = []
    done = 0
    for seat, k in zip(forfeits, at, strict=True):
        for row in rec.decisions[done:int(k)]:
            game.apply(row.seat, row.decision)
        done = max(done, int(k))
        held.append(game.points(seat))
    return held


def verify(rec: Record) -> tuple[bool, str]:
    """The record re-runs identically (events and result)?  (ok, why not)."""
    try:
        ok, why = replay_check(rec.lines)
    except (ConfigError, CardError, KeyError, ValueError, TypeError) as e:
        return False, f"the record cannot be re-run: {e}"
    if not ok:
        return ok, why
    game, _, _, err = rerun(rec)
    if err:
        return False, err
    res = game.result()
    if res is None:
        return False, "the record's decisions do not finish the game"
    r = rec.result
    if r is None:
        return False, "the record has no result line to check the game's end against"
    # Records before game_points: points were the engine's own (read as such).
    if list(r.game_points) != list(res.points):
        return False, (f"the result's penalty points {list(r.game_points)} differ from "
                       f"the engine's {list(res.points)}")
    forfeits = list(r.forfeits)
    if rec.result_has_finals and list(r.places) != final_places(res.places, forfeits):
        return False, (f"the result's places {list(r.places)} are not the "
                       f"engine's {list(res.places)} after forfeits {forfeits}")
    try:
        held = held_at_forfeits(rec, forfeits, r.forfeit_at)
    except (IllegalDecision, RecordError, IndexError, ValueError, TypeError) as e:
        return False, f"the result's forfeit_at {list(r.forfeit_at)} is wrong: {e}"
    if rec.result_has_finals and list(r.points) != final_points(res.points, forfeits, held):
        return False, (f"the result's final penalty points {list(r.points)} are "
                       f"not the engine's {list(res.points)} after forfeits {forfeits}")
    if r.how != res.how:
        return False, f"the result says the game ended by {r.how!r}, the engine {res.how!r}"
    return True, ""


def match_faults(rec: Record, turns: Sequence[int]) -> dict[int, list[Fault]]:
    """Each fault at the decision the referee played because of it: the seat's first
    substituted decision at or after the fault's turn, as a 1-based decision number
    (``turns[i]``: the turn at decision i).  A fault the game did not answer with a
    decision (``recorded``, at the end) goes after the last decision (number
    ``len(rec.decisions) + 1``)."""
    taken: set[int] = set()
    out: dict[int, list[Fault]] = {}
    last = len(rec.decisions) + 1
    for f in rec.faults:
        seat = f.seat
        at = last
        if f.action != "recorded":
            for i, d in enumerate(rec.decisions):
                if (i not in taken and d.seat == seat and d.substituted
                        and i < len(turns) and turns[i] >= f.turn):
                    taken.add(i)
                    at = i + 1
                    break
        out.setdefault(at, []).append(f)
    return out


def fault_line(f: Fault, seat: int | None) -> str:
    """A fault as a replay shows it; another seat's view gets its kind and what the
    referee did, not what the bot sent (which may name its cards)."""
    if seat is None or f.seat == seat:
        return f"FAULT {f.bot} (seat {f.seat}) turn {f.turn}: {f.kind}: {f.detail} [{f.action}]"
    return f"FAULT {f.bot} (seat {f.seat}) turn {f.turn}: {f.kind} [{f.action}]"


def _new_game(rec: Record) -> Game:
    try:
        return Game(rec.config, rec.head.seed, deck=parse_deck(list(rec.head.deck)),
                    first_player=rec.head.first_player)
    except (ConfigError, CardError, ValueError, TypeError) as e:
        raise RecordError(f"the record's game cannot be set up: {e}") from None


def show_record(rec: Record, out: TextIO | Callable[[str], None], seat: int | None = None,
                *, decisions: bool = True, pause: Callable[[], bool] | None = None,
                turn: int | None = None) -> str:
    """Print the game turn by turn from ``seat``'s view (None: omniscient).  ``pause``
    is called before each turn (return False to stop).  With ``turn``, start there:
    the table at that turn, then the game on from it.  In a seat's view, each of its
    decisions comes with its hand and its legal decisions; each fault is shown at the
    decision the referee played for it.  Returns the re-run error, if a decision was
    illegal."""
    emit_all: Callable[[str], None] = out if callable(out) else (lambda s: print(s, file=out))
    n = rec.config.players
    if seat is not None and not 0 <= seat < n:
        raise RecordError(f"there is no seat {seat} in this {n}-player game: choose 0 to {n - 1}")
    names = rec.bots if len(rec.bots) == n else [f"seat {s}" for s in range(n)]
    labels = [f"{nm} [{s}]" for s, nm in enumerate(names)]
    game, start, steps, err = rerun(rec)
    last_turn = game.turn
    if turn is not None and not 0 <= turn <= last_turn:
        raise RecordError(f"the game has no turn {turn}: it ended at turn {last_turn}; "
                          f"choose 0 to {last_turn}")
    cfg = rec.config
    emit_all(f"game {rec.game_id}: {n} players, seed {rec.head.seed}, "
             f"deck {cfg.deck}" + (f" ({cfg.colours} colours)" if cfg.colours else "")
             + (f", variants {', '.join(sorted(cfg.variants))}" if cfg.variants else "")
             + f", first player {labels[rec.head.first_player]}")
    emit_all("view: " + ("omniscient (every card)" if seat is None
                         else f"{labels[seat]} (what this seat knows)"))
    # Before ``turn``, nothing is shown; the table is drawn when it is reached.
    showing = turn is None or turn == 0

    def emit(line: str) -> None:
        if showing:
            emit_all(line)

    game = _new_game(rec)
    if seat is None:
        for s in range(n):
            emit(f"   {labels[s]} 3DOWN: " + " ".join(
                card_text(c) if c is not None else "-" for c in game.down[s]))
    narr = Narrator(labels, emit, seat)
    turns = []
    for step in steps:
        turns.append(game.turn)
        if step.seat >= 0:  # a step of seat -1: the referee stopped the game (RULES §5.4)
            game.apply(step.seat, step.decision)
    faults = match_faults(rec, turns)
    game = _new_game(rec)
    # Each forfeit is told at the decision that caused it: the first decision the
    # referee played for the seat at or after the fault's turn.
    forfeit_turn = {f.seat: f.turn for f in rec.faults if f.action == "forfeit"}
    for ev in start:
        narr.show(ev)

    def draw() -> None:
        emit_all("")
        if seat is None:
            lines = omniscient_lines(game, labels)
        else:
            lines = draw_table(game.observation(seat), names, seat)
        for line in lines:
            emit_all(line)
        emit_all("")

    if turn == 0 and turn is not None:
        draw()
    current = 0
    for i, step in enumerate(steps, 1):
        if step.seat < 0:  # the referee stopped the game (RULES §5.4)
            for ev in step.events:
                narr.show(ev)
            continue
        is_turn = any(e[0] == "turn" for e in step.events)
        if decisions and seat == step.seat and showing:
            obs = game.observation(seat)  # what the seat was shown (RULES §6)
            mine = obs["seats"][seat]
            held = (f"dealt {' '.join(obs['dealt'])}" if obs["phase"] == "setup" else
                    f"hand {' '.join(obs['hand']) or '(empty)'}; 3UP "
                    f"{' '.join(mine['up'] or []) or '(none)'}; 3DOWN {len(mine['down'])}")
            emit(f"   {labels[seat]} to decide: {held}")
            legal = [d.text for d in game.legal(seat)]
            shown = legal if len(legal) <= 12 else [*legal[:10], f"... ({len(legal)} in all)"]
            emit(f"     legal: {' | '.join(shown)}")
        for f in faults.get(i, []):
            emit(f"   {fault_line(f, seat)}")
        if (step.seat in forfeit_turn and step.seat not in narr.forfeits
                and step.substituted and current >= forfeit_turn[step.seat]):
            narr.forfeit(step.seat, game.points(step.seat))
        if decisions and (seat is None or seat == step.seat):
            note = " (substituted by the referee)" if step.substituted else ""
            emit(f"   > {labels[step.seat]} decides '{step.decision}' in {step.ms:.1f} ms{note}")
        elif decisions and step.substituted:
            emit(f"   > {labels[step.seat]}'s decision was substituted by the referee")
        game.apply(step.seat, step.decision)
        for ev in step.events:
            if ev[0] == "turn":
                current = int(ev[1])
                if not showing and turn is not None and current >= turn:
                    showing = True
                    draw()
                if is_turn and pause is not None and showing and not pause():
                    return err
            narr.show(ev)
    for at in sorted(faults):
        if at > len(steps):
            for f in faults[at]:
                emit(f"   {fault_line(f, seat)}")
    return err


def play_again_command(rec: Record, deck_file: str = "FILE") -> str:
    """The ``referee play`` command that plays the record's deal again, from the deck
    file ``deck_file``: the first player, the seed and every rule of the game.  The
    bots are the record's when they are all built-in ones, else ``BOT...``."""
    cfg = rec.config
    bots = rec.bots if rec.bots and all(b in BUILTIN_BOTS for b in rec.bots) else ["BOT..."]
    opts = [*bots, "--deck-file", deck_file, "--first-player", str(rec.head.first_player),
            "--seed", str(rec.head.seed)]
    if cfg.variants:
        opts += ["-V", ",".join(sorted(cfg.variants))]
    if cfg.deck != "standard":
        opts += ["--deck", cfg.deck]
    if cfg.colours:
        opts += ["--colours", str(cfg.colours)]
    if cfg.turn_limit != 1000:
        opts += ["--turn-limit", str(cfg.turn_limit)]
    return "referee play " + " ".join(o if o == "BOT..." else shlex.quote(o) for o in opts)


def deck_file_text(rec: Record) -> str:
    """The record's deal as a deck file for ``referee play --deck-file`` (RULES §2:
    three rounds of 3DOWN cards, six rounds of the six cards, then the draw pile),
    with comments saying how to play it again."""
    n = rec.config.players
    deck = list(rec.head.deck)
    lines = [
        f"# The deal of game {rec.game_id}: {n} players "
        + (f"({', '.join(rec.bots)})" if rec.bots else ""),
        "# Play it again with: " + play_again_command(rec),
        "# (the same seed gives built-in bots the same randomness; under swap_piles the",
        "# permutation of the piles is drawn afresh)",
    ]
    i = 0
    for r in range(3):
        lines.append(f"# 3DOWN slot {r}, seats 0..{n - 1}")
        lines.append(" ".join(deck[i:i + n]))
        i += n
    lines.append(f"# the six cards, one round per line, seats 0..{n - 1}")
    for _ in range(6):
        lines.append(" ".join(deck[i:i + n]))
        i += n
    rest = deck[i:]
    lines.append(f"# the draw pile ({len(rest)} cards), top first")
    for k in range(0, len(rest), 12):
        lines.append(" ".join(rest[k:k + 12]))
    return "\n".join(lines) + "\n"
