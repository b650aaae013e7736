"""Events: their per-seat filtering (RULES §6), text form and JSON-ready form.

Owns what each seat is shown of each event.  Filtering replaces what a seat may not
know with ``None`` -- it never has to remember which fields are secret elsewhere:
the three private events are listed here, and everything else is public.

Text forms (tokens separated by single spaces; ``?`` = hidden from this seat):

    deal 0 1g 4r 7b 9y Co C+1k   |  deal 0 ?
    chosen 0
    reveal 0 7g 10r Cy
    piles 2 0 1
    turn 12 0
    extra 0 1
    play 0 hand 7g 7r            |  play 0 3up 10r   |  play 0 3down 2 7g
    fail 0 2 4g pile 9r 9b       |  fail 0 2 ? pile 9r 9b
    pickup 0 9r 9b
    clear 0 C+1 5                |  clear 0 three 4
    reverse -1
    draw 0 2 refill 7g 3r        |  draw 0 2 refill ?
    colour 0
    swap 0 10r 7g
    keep 0
    finish 0 1
    end winner places 1 2 points 0 34
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..errors import InputError
from .cards import card_text, make_card, parse_kind_colour
from .decisions import SOURCE_NAMES

Event = tuple[Any, ...]

#: What a seat may see of each kind of event (RULES §6), listed kind by kind -- an
#: allow-list, as observations are built from what a seat may know: ``None``, the
#: whole event; an index, every field but that one, which only the event's own
#: seat (field 1) sees.  A kind missing here is an error, never shown as it is.
VISIBILITY: dict[str, int | None] = {
    "deal": 2,  # the six cards dealt to a seat: its own
    "chosen": None, "reveal": None, "piles": None, "turn": None, "extra": None,
    "play": None,
    "fail": 3,  # a failed 3DOWN card: its seat's until it goes on the pile
    "pickup": None, "clear": None, "reverse": None,
    "draw": 3,  # the cards drawn: the drawer's
    "colour": None, "swap": None, "keep": None, "finish": None, "end": None,
}


class UnknownEventKind(KeyError):
    """An event kind with no visibility rule (a referee bug: ``VISIBILITY``)."""


def _private_field(kind: str) -> int | None:
    try:
        return VISIBILITY[kind]
    except KeyError:
        raise UnknownEventKind(f"event kind {kind!r} has no visibility rule in "
                               f"referee.game.events.VISIBILITY: it would not be shown "
                               f"to any seat unchecked") from None


def filter_event(ev: Event, seat: int | None) -> Event:
    """``ev`` as ``seat`` may see it (RULES §6).  ``seat=None``: the omniscient view;
    ``seat=-1``: a spectator's (public) view.  UnknownEventKind for a kind
    ``VISIBILITY`` does not list."""
    i = _private_field(ev[0])
    if i is None or seat is None or ev[1] == seat or ev[i] is None:
        return ev
    return ev[:i] + (None,) + ev[i + 1 :]


def events_for(events: Iterable[Event], seat: int | None) -> list[Event]:
    """``filter_event`` over ``events`` (inlined: the runner calls this for every
    request)."""
    if seat is None:
        return list(events)
    vis = VISIBILITY
    try:
        return [e if vis[e[0]] is None or e[1] == seat else filter_event(e, seat)
                for e in events]
    except KeyError as e:
        _private_field(str(e.args[0]))  # raises, naming the kind
        raise


def _cards(cards: Iterable[int] | None) -> str:
    if cards is None:
        return "?"
    return " ".join(map(card_text, cards))


# Text forms already computed, by event: the same events recur from game to game
# (turns, plays of the same cards...), and every game's record writes all of its
# events.  Strings are immutable, so sharing them is safe; bounded like a cache.
_TEXT_CACHE: dict[Event, str] = {}
_TEXT_CACHE_MAX = 100_000


def event_text(ev: Event) -> str:
    """The text form of an (already filtered) event."""
    try:
        text = _TEXT_CACHE.get(ev)
    except TypeError:  # an event holding a list (not from the engine): no caching
        return _event_text(ev)
    if text is None:
        if len(_TEXT_CACHE) >= _TEXT_CACHE_MAX:
            _TEXT_CACHE.clear()
        text = _TEXT_CACHE[ev] = _event_text(ev)
    return text


def _event_text(ev: Event) -> str:
    kind = ev[0]
    if kind == "deal":
        return f"deal {ev[1]} {_cards(ev[2])}"
    if kind in ("chosen", "colour", "keep"):
        return f"{kind} {ev[1]}"
    if kind == "reveal":
        return f"reveal {ev[1]} {_cards(ev[2])}"
    if kind == "piles":
        return "piles " + " ".join(str(x) for x in ev[1])
    if kind == "turn":
        return f"turn {ev[1]} {ev[2]}"
    if kind == "extra":
        return f"extra {ev[1]} {ev[2]}"
    if kind == "play":
        _, s, src, cards, slot = ev
        where = SOURCE_NAMES[src] + (f" {slot}" if slot >= 0 else "")
        return f"play {s} {where} {_cards(cards)}"
    if kind == "fail":
        _, s, slot, card, pile = ev
        c = "?" if card is None else card_text(card)
        return f"fail {s} {slot} {c} pile" + ("" if not pile else " " + _cards(pile))
    if kind == "pickup":
        return f"pickup {ev[1]}" + ("" if not ev[2] else " " + _cards(ev[2]))
    if kind == "clear":
        return f"clear {ev[1]} {ev[2]} {ev[3]}"
    if kind == "reverse":
        return f"reverse {ev[1]}"
    if kind == "draw":
        _, s, n, cards, why = ev
        return f"draw {s} {n} {why} {_cards(cards)}"
    if kind == "swap":
        return f"swap {ev[1]} {card_text(ev[2])} {card_text(ev[3])}"
    if kind == "finish":
        return f"finish {ev[1]} {ev[2]}"
    if kind == "end":
        _, how, places, points = ev
        return (f"end {how} places " + " ".join(map(str, places))
                + " points " + " ".join(map(str, points)))
    raise ValueError(f"unknown event {ev!r}")


class EventSyntaxError(InputError, ValueError):
    """An event's text form could not be read."""


def _parse_cards(tokens: list[str]) -> tuple[int, ...] | None:
    if tokens == ["?"]:
        return None
    return tuple(make_card(*parse_kind_colour(t)) for t in tokens)


def parse_event(text: str) -> Event:
    """Read an event's text form (cards come back as their first copy's id)."""
    t = text.split()
    try:
        kind = t[0]
        if kind == "deal":
            return ("deal", int(t[1]), _parse_cards(t[2:]))
        if kind in ("chosen", "colour", "keep"):
            return (kind, int(t[1]))
        if kind == "reveal":
            return ("reveal", int(t[1]), _parse_cards(t[2:]))
        if kind == "piles":
            return ("piles", tuple(int(x) for x in t[1:]))
        if kind in ("turn", "extra", "finish"):
            return (kind, int(t[1]), int(t[2]))
        if kind == "play":
            src = SOURCE_NAMES.index(t[2])
            played = t[4:] if src == 2 else t[3:]
            if not played or played == ["?"]:
                raise EventSyntaxError(f"{text!r} is not an event: a play shows its cards")
            if src == 2:
                return ("play", int(t[1]), src, _parse_cards(played), int(t[3]))
            return ("play", int(t[1]), src, _parse_cards(played), -1)
        if kind == "fail":
            card = None if t[3] == "?" else make_card(*parse_kind_colour(t[3]))
            assert t[4] == "pile"
            return ("fail", int(t[1]), int(t[2]), card, _parse_cards(t[5:]) or ())
        if kind == "pickup":
            return ("pickup", int(t[1]), _parse_cards(t[2:]) or ())
        if kind == "clear":
            return ("clear", int(t[1]), t[2], int(t[3]))
        if kind == "reverse":
            return ("reverse", int(t[1]))
        if kind == "draw":
            return ("draw", int(t[1]), int(t[2]), _parse_cards(t[4:]), t[3])
        if kind == "swap":
            a, b = _parse_cards(t[2:4]) or ()
            return ("swap", int(t[1]), a, b)
        if kind == "end":
            i = t.index("points")
            return ("end", t[1], tuple(int(x) for x in t[3:i]), tuple(int(x) for x in t[i + 1 :]))
    except (IndexError, ValueError, AssertionError) as e:
        raise EventSyntaxError(f"{text!r} is not an event: {e}") from None
    raise EventSyntaxError(f"{text!r} is not an event")


def event_dict(ev: Event) -> dict[str, Any]:
    """A JSON-ready form of an (already filtered) event: ``type`` plus named fields,
    cards as text, hidden values as ``null``."""
    kind = ev[0]

    def cl(cards: Iterable[int] | None) -> list[str] | None:
        return None if cards is None else [card_text(c) for c in cards]

    if kind == "deal":
        return {"type": kind, "seat": ev[1], "cards": cl(ev[2])}
    if kind in ("chosen", "colour", "keep"):
        return {"type": kind, "seat": ev[1]}
    if kind == "reveal":
        return {"type": kind, "seat": ev[1], "cards": cl(ev[2])}
    if kind == "piles":
        return {"type": kind, "perm": list(ev[1])}
    if kind == "turn":
        return {"type": kind, "turn": ev[1], "seat": ev[2]}
    if kind == "extra":
        return {"type": kind, "seat": ev[1], "left": ev[2]}
    if kind == "play":
        d: dict[str, Any] = {"type": kind, "seat": ev[1], "source": SOURCE_NAMES[ev[2]],
                             "cards": cl(ev[3])}
        if ev[4] >= 0:
            d["slot"] = ev[4]
        return d
    if kind == "fail":
        return {"type": kind, "seat": ev[1], "slot": ev[2],
                "card": None if ev[3] is None else card_text(ev[3]), "pile": cl(ev[4])}
    if kind == "pickup":
        return {"type": kind, "seat": ev[1], "cards": cl(ev[2])}
    if kind == "clear":
        return {"type": kind, "seat": ev[1], "how": ev[2], "count": ev[3]}
    if kind == "reverse":
        return {"type": kind, "direction": ev[1]}
    if kind == "draw":
        return {"type": kind, "seat": ev[1], "count": ev[2], "why": ev[4], "cards": cl(ev[3])}
    if kind == "swap":
        return {"type": kind, "seat": ev[1], "up_card": card_text(ev[2]),
                "hand_card": card_text(ev[3])}
    if kind == "finish":
        return {"type": kind, "seat": ev[1], "place": ev[2]}
    if kind == "end":
        return {"type": kind, "how": ev[1], "places": list(ev[2]), "points": list(ev[3])}
    raise ValueError(f"unknown event {ev!r}")
