"""A recorded game as the replay viewer shows it: one frame per decision, each
drawn from every view (omniscient, and each seat's as RULES §6 defines it).

Owns the viewer's data.  The game is re-run through the rules engine
(``replay.rerun``'s way); a seat's table at every frame is the engine's own
observation (``Game.observation``), and its events are the engine's filtered ones
(``filter_event``): nothing here decides what a seat may know.  The omniscient table
is read from the engine's state.  Everything here is plain text, as the bots and the
record wrote it (names, decisions, fault details): never HTML.  The page's template
escapes it and the page's script places it as text (``textContent``), so no text can
become markup.

Frame ``k`` is the table after the record's first ``k`` decisions: frame 0 is the
deal, frame ``k`` also says which decision led to it (seat, text, milliseconds,
substituted), the events it caused, the faults behind it, and who decides next with
which legal decisions.  Must not import the CLI or the tournament package.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..game import ConfigError, Game, IllegalDecision
from ..game.cards import TEXT, CardError, parse_deck
from ..game.events import Event, filter_event
from ..play.replay import HOW_WORDS, Record, RecordError, describe, match_faults
from ..play.runner import stop_if_stopped

#: The view names: "omni", then "0", "1", ... (a seat).
OMNI = "omni"


#: A card in an event line while it is described: the record separators around its text
#: (names have their control characters replaced, so no name holds one).
_CARD = re.compile("\x1e([^\x1f]*)\x1f")
_NO_CONTROLS = {c: "\ufffd" for c in range(32) if c not in (9, 10)}


def _card_mark(card: int) -> str:
    return "\x1e" + TEXT[card] + "\x1f"


_HIDDEN_MARK = "\x1e?\x1f"


def segments(line: str) -> list[str]:
    """An event line as the viewer draws it: text and cards taking turns
    (``["A [0] plays ", "7r", " on ", "5g", ""]``: every odd item is a card's text,
    ``"?"`` for a card the view may not see)."""
    return _CARD.split(line)


def plain(text: object) -> str:
    """A name or a text from a bot as the page shows it: control characters (which have
    no business in a page) replaced."""
    return str(text).translate(_NO_CONTROLS)


@dataclass
class Frames:
    """The viewer's data for one game (``to_json`` is what the page embeds)."""

    game_id: str
    names: list[str]
    players: int
    header: str
    views: list[str]
    frames: list[dict[str, Any]] = field(default_factory=list)
    #: view -> one table per frame
    tables: dict[str, list[list[list[Any]]]] = field(default_factory=dict)
    #: view -> one list of event lines (``segments``: text and cards taking turns) per
    #: frame; in a seat's view, ``None`` for a line that reads as in the omniscient view
    events: dict[str, list[list[list[str] | None]]] = field(default_factory=dict)
    result: str = ""
    error: str = ""
    others: list[dict[str, Any]] = field(default_factory=list)
    #: where the page opens when its address does not say (a view, a turn)
    start_view: str = OMNI
    start_turn: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "start": {"view": self.start_view, "turn": self.start_turn},
            "game_id": self.game_id, "names": self.names, "players": self.players,
            "header": self.header, "views": self.views, "frames": self.frames,
            "tables": self.tables, "events": self.events, "result": self.result,
            "error": self.error, "others": self.others,
        }


def public(game: Game) -> dict[str, Any]:
    """What every seat sees alike (RULES §6): the pile, the draw pile's and the
    cleared cards' counts, direction, turn, phase, who moves, extra actions."""
    return {
        "pile": [TEXT[c] for c in game.pile], "draw": len(game.draw_pile),
        "cleared": len(game.out), "dir": game.direction, "turn": game.turn,
        "phase": ("setup", "play", "swap", "over")[game.phase],
        "to_move": game.to_move if game.to_move >= 0 else None,
        "extra": game.in_extra, "pending": game.pending,
    }


#: A table is one list per seat: [hand, 3UP, 3DOWN, place] and, in a seat's own
#: entry during set-up, its 3UP choice once made.  hand: card texts, or a count for
#: a hand the view may not see; 3UP: null before the reveal; 3DOWN: per slot a card
#: text, "?" (a card this view may not see) or null (empty).


def omni_table(game: Game) -> list[list[Any]]:
    """Every card: hands (in set-up the six dealt cards), 3UP, 3DOWN slot by slot."""
    setup = game.phase == 0
    return [[
        [TEXT[c] for c in (game.dealt[s] if setup else game.hand(s))],
        None if setup else [TEXT[c] for c in game.up[s]],
        [TEXT[c] if c is not None else None for c in game.down[s]],
        game.place[s],
    ] for s in range(game.n)]


def seat_table(game: Game, seat: int) -> list[list[Any]]:
    """The seat's own observation (the engine's, RULES §6) as a table: other seats'
    hands are counts, 3DOWN slots are ``"?"`` while they hold a card."""
    obs = game.observation(seat)
    setup = obs["phase"] == "setup"
    out: list[list[Any]] = []
    for o in obs["seats"]:
        s = o["seat"]
        hand: list[str] | int
        if s == seat:
            hand = list(obs["dealt"] if setup else obs["hand"])
        else:
            # In set-up every seat holds the six cards dealt to it (RULES §2): as many
            # as this seat's own, though the observation's hand counts are still 0.
            hand = len(obs["dealt"]) if setup else int(o["hand"])
        row = [hand, o["up"], ["?" if i in o["down"] else None for i in range(3)], o["finished"]]
        if s == seat and setup and obs.get("choice"):
            row.append(obs["choice"])
        out.append(row)
    return out


def build_frames(rec: Record) -> Frames:
    """Re-run ``rec`` and draw every frame from every view.  A record whose decisions
    stop being legal is drawn up to there, with ``error`` saying why."""
    cfg = rec.config
    n = cfg.players
    names = rec.bots if len(rec.bots) == n else [f"seat {s}" for s in range(n)]
    try:
        game = Game(cfg, rec.head.seed, deck=parse_deck(list(rec.head.deck)),
                    first_player=rec.head.first_player)
    except (ConfigError, CardError, ValueError, TypeError) as e:
        raise RecordError(f"the record's game cannot be set up: {e}") from None
    views = [OMNI] + [str(s) for s in range(n)]
    names = [plain(nm) for nm in names]
    labels = [f"{nm} [{s}]" for s, nm in enumerate(names)]
    header = (f"{n} players, seed {rec.head.seed}, deck {cfg.deck}"
              + (f" ({cfg.colours} colours)" if cfg.colours else "")
              + (f", variants {', '.join(sorted(cfg.variants))}" if cfg.variants else ""))
    fr = Frames(game_id=rec.game_id, names=names, players=n,
                header=header, views=views)
    fr.tables = {v: [] for v in views}
    fr.events = {v: [] for v in views}

    def lines(evs: Sequence[Event]) -> list[list[str]]:
        return [segments(describe(e, labels, _card_mark, _HIDDEN_MARK)) for e in evs]

    def seat_lines(evs: Sequence[Event], seat: int) -> list[list[str] | None]:
        # a line the seat sees as the omniscient view does is sent once: null
        out: list[list[str] | None] = []
        for e in evs:
            f = filter_event(e, seat)
            out.append(None if f == e else
                       segments(describe(f, labels, _card_mark, _HIDDEN_MARK)))
        return out

    def snapshot(k: int, evs: Sequence[Event], step: dict[str, Any]) -> None:
        nxt = rec.decisions[k] if k < len(rec.decisions) and not game.over else None
        if nxt is not None:
            seat = nxt.seat
            step["next"] = seat
            step["legal"] = [d.text for d in game.legal(seat)]
        step.update(public(game))
        fr.frames.append(step)
        fr.tables[OMNI].append(omni_table(game))
        omni = lines(evs)
        fr.events[OMNI].append(list(omni))
        for s in range(n):
            fr.tables[str(s)].append(seat_table(game, s))
            fr.events[str(s)].append(seat_lines(evs, s))

    # The turn at which each decision is taken, for matching faults to decisions.
    turns: list[int] = []
    snapshot(0, list(game.events), {"turn": game.turn})
    for k, d in enumerate(rec.decisions, 1):
        before = len(game.events)
        turns.append(game.turn)
        try:
            game.apply(d.seat, d.decision)
        except (IllegalDecision, ValueError) as e:
            fr.error = plain(f"decision {k} ({d.decision!r} of seat {d.seat}) is "
                             f"illegal: {e}; the game is shown up to there")
            break
        snapshot(k, game.events[before:], {
            "turn": game.turn, "seat": d.seat, "decision": plain(d.decision),
            "ms": d.ms, "sub": d.substituted,
        })
    else:
        # A game the referee stopped (RULES §5.4) ends after its last decision: its
        # end is told on the last frame.
        before = len(game.events)
        stop_if_stopped(game, rec.result.how if rec.result else None)
        extra = game.events[before:]
        if extra:
            fr.events[OMNI][-1].extend(lines(extra))
            for s in range(n):
                fr.events[str(s)][-1].extend(seat_lines(extra, s))
    faults = match_faults(rec, turns)
    last = len(fr.frames) - 1
    for k, frame in enumerate(fr.frames):
        # faults after the last decision shown go on the last frame
        here = [f for at, fs in faults.items() if at == k or (k == last and at > k) for f in fs]
        frame["faults"] = [{
            "seat": f.seat, "kind": plain(f.kind), "detail": plain(f.detail),
            "action": plain(f.action), "turn": f.turn,
        } for f in here]
    res = rec.result
    if res is not None:
        fr.result = plain(f"{HOW_WORDS.get(res.how, res.how)}: places "
                        + ", ".join(f"{names[s]} {p}" for s, p in enumerate(res.places))
                        + "; penalty points "
                        + ", ".join(f"{names[s]} {p}" for s, p in enumerate(res.points))
                        + (f"; forfeits: {', '.join(names[s] for s in res.forfeits)}"
                           if res.forfeits else ""))
    return fr



def seat_view(fr: Frames, seats: Sequence[int]) -> Frames:
    """``fr`` with only what ``seats`` could see (RULES §6): their views' tables and
    events and nothing of the omniscient view; no other seat's decision text, time,
    legal decisions or fault detail; no seed (the deck follows from it).  What an
    author gets of their own game (``submit --status --game ID --html``): the page's
    data holds no card their seats did not see, not merely hides it."""
    keep = [str(s) for s in seats]
    own = set(seats)
    frames = []
    for f in fr.frames:
        g = dict(f)
        if g.get("seat") is not None and g["seat"] not in own:
            for k in ("decision", "ms", "sub"):
                g.pop(k, None)
        if g.get("next") is not None and g["next"] not in own:
            g.pop("legal", None)
        g["faults"] = [x if x["seat"] in own else {k: v for k, v in x.items() if k != "detail"}
                       for x in f["faults"]]
        frames.append(g)
    events = {v: [[fr.events[OMNI][k][j] if line is None else line
                   for j, line in enumerate(lines)]
                  for k, lines in enumerate(fr.events[v])] for v in keep}
    header = re.sub(r", seed \d+", "", fr.header)
    return Frames(game_id=fr.game_id, names=fr.names, players=fr.players, header=header,
                  views=keep, frames=frames, tables={v: fr.tables[v] for v in keep},
                  events=events, result=fr.result, error=fr.error, start_view=keep[0],
                  start_turn=fr.start_turn)
