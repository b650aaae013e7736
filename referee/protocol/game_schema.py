"""JSON Schema of the game's parts that messages carry: the configuration (RULES §9,
PROTOCOL ``new_game``), the observation (RULES §12) and the events (RULES §11).

Owns these three sub-schemas, written out by hand from the rules document (the
message table in ``messages.py`` points to them; ``schema.py`` puts them in the
files).  They are only for the schema files: the referee builds these objects
itself, so it never validates them against a schema.

Every schema object is written so that ajv's strict mode accepts it: a ``type`` next
to every keyword that needs one, ``anyOf`` instead of a list of types, and every
``required`` name listed in the same object's ``properties``.

Must not import: the game engine (the protocol layer does not depend on it; a test
checks that these lists agree with the engine's), anything doing I/O.
"""

from __future__ import annotations

from typing import Any

#: A card's text form (RULES §1).
CARD_PATTERN = r"^(10|[1-9]|C\+1|C\+2|C)[grbyopk]$"
VARIANT_NAMES = ("play_out", "may_decline", "ones_reverse", "match_scoring", "swap_piles",
                 "four_of_a_colour", "choose_for_others", "draw_once_per_clear")
MAX_PLAYERS = 6

INTEGER_NOTE = ("written as a JSON integer (3, never 3.0 or 3e0: JSON Schema counts 3.0 as "
                "an integer, the referee does not)")


def _int(doc: str, minimum: int | None = None, maximum: int | None = None) -> dict[str, Any]:
    s: dict[str, Any] = {"description": doc, "type": "integer"}
    if minimum is not None:
        s["minimum"] = minimum
    if maximum is not None:
        s["maximum"] = maximum
    return s


def _card(doc: str) -> dict[str, Any]:
    return {"description": doc, "type": "string", "pattern": CARD_PATTERN}


def _cards(doc: str, *, exactly: int | None = None) -> dict[str, Any]:
    s: dict[str, Any] = {"description": doc, "type": "array",
                         "items": {"type": "string", "pattern": CARD_PATTERN}}
    if exactly is not None:
        s["minItems"] = s["maxItems"] = exactly
    return s


def _nullable(schema: dict[str, Any], when: str) -> dict[str, Any]:
    """``schema`` or null: the value is hidden (RULES §11) or does not apply."""
    doc = schema.pop("description")
    return {"description": f"{doc}; null {when}", "anyOf": [schema, {"type": "null"}]}


def _seat(doc: str = "a seat") -> dict[str, Any]:
    return _int(doc, 0, MAX_PLAYERS - 1)


def _object(doc: str, props: dict[str, Any], optional: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"description": doc, "type": "object",
            "required": [k for k in props if k not in optional], "properties": props}


_SOURCE = {"description": "where the cards came from", "type": "string",
           "enum": ["hand", "3up", "3down"]}
_HOW = {"type": "string", "enum": ["winner", "played_out", "turn_limit", "forfeits", "time_limit"]}

CONFIG: dict[str, Any] = _object(
    "the game's configuration (RULES §9)", {
        "players": _int("number of seats", 2, MAX_PLAYERS),
        "variants": {"description": "the variants on, sorted by name (RULES §9)",
                     "type": "array", "uniqueItems": True,
                     "items": {"type": "string", "enum": list(VARIANT_NAMES)}},
        "colours": _nullable(_int("colours of the deck (RULES §2)", 1, 7),
                             "for the deck's default"),
        "deck": {"description": "the deck (RULES §2)", "type": "string",
                 "enum": ["standard", "alternative"]},
        "turn_limit": _int("the game ends after this turn (RULES §5.3)", 1),
    })

_SEAT_VIEW = _object(
    "one seat as the observing seat sees it", {
        "seat": _seat("the seat"),
        "hand": _int("number of cards in its hand", 0),
        "up": _nullable(_cards("its 3UP cards"), "during set-up"),
        "down": {"description": "the 3DOWN slots that still hold a card", "type": "array",
                 "items": {"type": "integer", "minimum": 0, "maximum": 2}, "maxItems": 3},
        "finished": _nullable(_int("its place, once it has finished", 1, MAX_PLAYERS),
                              "while it has not finished"),
        "chosen": {"description": "set-up only: it has made its 3UP choice",
                   "type": "boolean"},
    }, optional=("chosen",))

OBSERVATION: dict[str, Any] = _object(
    "everything the seat may know now (RULES §12)", {
        "seat": _seat("your seat"),
        "players": _int("number of seats", 2, MAX_PLAYERS),
        "variants": {"description": "the variants on, sorted by name", "type": "array",
                     "items": {"type": "string", "enum": list(VARIANT_NAMES)}},
        "phase": {"description": "setup, play, swap (a four_of_a_colour swap is offered) "
                  "or over", "type": "string", "enum": ["setup", "play", "swap", "over"]},
        "turn": _int("the current turn number (0 during set-up)", 0),
        "to_move": _nullable(_seat("the seat to decide"),
                             "during set-up and when the game is over"),
        "direction": {"description": "1 clockwise, -1 counter-clockwise (ones_reverse)",
                      "type": "integer", "enum": [1, -1]},
        "extra_action": {"description": "the current action is an extra action (RULES §4.7)",
                         "type": "boolean"},
        "pending_extra": _int("extra actions still to come after the current one", 0),
        "drawn": {"description": "a card has been drawn before the current extra action",
                  "type": "boolean"},
        "hand": _cards("your hand, sorted by kind (RULES §12)"),
        "pile": _cards("the pile, bottom to top"),
        "pile_run": _int("numbered cards of the top number in a row at the top", 0, 2),
        "draw_pile": _int("cards left in the draw pile", 0),
        "cleared": _cards("every card that has left the game by a clear, display order"),
        "dealt": _cards("set-up only: your six dealt cards, display order", exactly=6),
        "chosen": {"description": "set-up only: you have made your 3UP choice",
                   "type": "boolean"},
        "choice": _cards("set-up only, once you have chosen: your three 3UP cards",
                         exactly=3),
        "piles": {"description": "swap_piles only, after the reveal: seat i has seat "
                  "piles[i]'s table piles", "type": "array",
                  "items": {"type": "integer", "minimum": 0, "maximum": MAX_PLAYERS - 1}},
        "seats": {"description": "one per seat, in seat order (yours included)",
                  "type": "array", "items": _SEAT_VIEW, "minItems": 2,
                  "maxItems": MAX_PLAYERS},
    }, optional=("dealt", "chosen", "choice", "piles"))


def _event(kind: str, doc: str, props: dict[str, Any],
           optional: tuple[str, ...] = ()) -> dict[str, Any]:
    return _object(f"'{kind}': {doc}", {"type": {"type": "string", "const": kind}, **props},
                   optional)


_HIDDEN = "when another seat's private part is hidden from you"
EVENTS: list[dict[str, Any]] = [
    _event("deal", "a seat's six cards were dealt", {
        "seat": _seat(),
        "cards": _nullable(_cards("the six dealt cards, display order", exactly=6), _HIDDEN)}),
    _event("chosen", "a seat made its 3UP choice (not shown)", {"seat": _seat()}),
    _event("reveal", "a seat's 3UP cards are shown", {
        "seat": _seat(), "cards": _cards("its 3UP cards")}),
    _event("piles", "swap_piles: the table piles were permuted", {
        "perm": {"description": "seat i now has seat perm[i]'s piles", "type": "array",
                 "items": {"type": "integer", "minimum": 0, "maximum": MAX_PLAYERS - 1},
                 "minItems": 2, "maxItems": MAX_PLAYERS}}),
    _event("turn", "a turn begins", {
        "turn": _int("the turn number", 1), "seat": _seat("the seat to play")}),
    _event("extra", "an extra action begins", {
        "seat": _seat(), "left": _int("extra actions still pending after this one", 0)}),
    _event("play", "cards went on the pile", {
        "seat": _seat(), "source": _SOURCE,
        "cards": _cards("the cards, in pile order (last on top)"),
        "slot": _int("the 3DOWN slot (only for source 3down)", 0, 2)}, optional=("slot",)),
    _event("fail", "a turned 3DOWN card could not be played", {
        "seat": _seat(), "slot": _int("the slot", 0, 2),
        "card": _nullable(_card("the failed 3DOWN card"), _HIDDEN),
        "pile": _cards("the cards picked up, bottom to top")}),
    _event("pickup", "a seat picked up the pile", {
        "seat": _seat(), "cards": _cards("the pile picked up, bottom to top")}),
    _event("clear", "the pile left the game", {
        "seat": _seat(), "how": {"description": "by a special card or three in a row",
                                 "type": "string", "enum": ["C", "C+1", "C+2", "three"]},
        "count": _int("cards that left the game", 1)}),
    _event("reverse", "ones_reverse: the direction changed", {
        "direction": {"description": "the new direction", "type": "integer",
                      "enum": [1, -1]}}),
    _event("draw", "a seat drew from the draw pile", {
        "seat": _seat(), "count": _int("cards drawn", 1),
        "why": {"description": "refill (end of turn), extra (before an extra action) or "
                "decline", "type": "string", "enum": ["refill", "extra", "decline"]},
        "cards": _nullable(_cards("the cards, in draw order"), _HIDDEN)}),
    _event("colour", "four_of_a_colour: the seat may now swap", {"seat": _seat()}),
    _event("swap", "four_of_a_colour: a 3UP card and a hand card changed places", {
        "seat": _seat(), "up_card": _card("left the 3UP cards"),
        "hand_card": _card("joined the 3UP cards")}),
    _event("keep", "four_of_a_colour: the seat declined the swap", {"seat": _seat()}),
    _event("finish", "a seat finished", {
        "seat": _seat(), "place": _int("its place", 1, MAX_PLAYERS)}),
    _event("end", "the game is over", {
        "how": {"description": "how it ended", **_HOW},
        "places": {"description": "the game's places, by seat", "type": "array",
                   "items": {"type": "integer", "minimum": 1, "maximum": MAX_PLAYERS}},
        "points": {"description": "penalty points, by seat", "type": "array",
                   "items": {"type": "integer", "minimum": 0}}}),
]

#: The schema of one item of an ``events`` array: exactly one of the event schemas
#: (their ``type`` consts make them exclusive).
EVENT: dict[str, Any] = {"description": "one event as the seat may see it (RULES §11)",
                         "type": "object", "oneOf": EVENTS}
EVENT_TYPES = tuple(e["properties"]["type"]["const"] for e in EVENTS)
