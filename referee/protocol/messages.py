"""The messages of protocol version 1: their fields, their validation, their schema.

Owns: the one table (``MESSAGES``) that defines every message -- who sends it, each
field's name, JSON type, whether it is required and what it means.  From that table
come (1) the validation of what a bot sends, with errors naming the field and what
was expected, (2) the JSON Schema files under ``protocol/schema/`` and (3) the
field lists in protocol/PROTOCOL.md.  The typed records a bot's messages are read
into (``Hello``, ``DecisionReply``) live here too.

Messages are plain dicts (JSON objects; msgpack maps on ZeroMQ) with a ``"type"``.
Unknown fields are allowed and ignored, so that later versions may add optional
fields.

Must not import: anything doing I/O, a clock, a transport or the game engine.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from ..text.quoting import show
from .errors import BotProtocolError
from .game_schema import CONFIG, EVENT, MAX_PLAYERS, OBSERVATION

#: Protocol versions this referee speaks, newest first.
PROTOCOL_VERSIONS: tuple[int, ...] = (1,)

#: Default cap on one message a bot sends, encoded (a JSON line without its newline,
#: a msgpack frame).  A bot's messages are small: its longest decision at 6 seats is
#: about 70 bytes, the longest hello its fields allow (200 characters each, every one
#: escaped) 7.3 KB (``bench/message_sizes.py``).  The cap bounds what a message
#: nobody asked for (a stray: PROTOCOL.md, Request ids) costs the referee to read:
#: at most ~0.5 ms.  The referee's own messages are longer (a ``game_over`` at 6
#: seats: ~87 KB) and not bound by it.
MAX_MESSAGE_BYTES = 8 << 10

#: Codes of ``rejected`` messages (what was wrong with the bot's reply).
REJECT_CODES = ("illegal", "malformed", "unknown_id", "oversized", "timeout", "protocol")
#: Actions of ``rejected`` messages (what the referee did about it).
REJECT_ACTIONS = ("substituted", "forfeit", "ignored")
#: Codes of ``error`` messages.
ERROR_CODES = ("unsupported_version", "protocol")
#: Kinds of faults, in ``game_over``, the game record and the runner (the one list:
#: the runner and the reports import it): the rejection codes but ``unknown_id`` (no
#: fault), plus ``crash`` (never told in a ``rejected``: nobody is left to tell).
FaultKind = Literal["timeout", "crash", "malformed", "oversized", "protocol", "illegal"]
FAULT_KINDS: tuple[FaultKind, ...] = get_args(FaultKind)
#: What the referee did about a fault: ``substituted`` (it played the seat's first
#: legal decision; a strike), ``forfeit`` (the seat forfeited the game), ``recorded``
#: (nothing was left to do: a fault while the seat was told the game is over, kept in
#: the game record only, as it comes after ``game_over``).
FaultAction = Literal["substituted", "forfeit", "recorded"]
FAULT_ACTIONS: tuple[FaultAction, ...] = get_args(FaultAction)
#: The actions a ``game_over`` can list: ``recorded`` comes after it.
GAME_OVER_FAULT_ACTIONS: tuple[FaultAction, ...] = tuple(
    a for a in FAULT_ACTIONS if a != "recorded")

# JSON types, as JSON Schema names them.
INTEGER, NUMBER, STRING, BOOLEAN, OBJECT, ARRAY, NULL = (
    "integer", "number", "string", "boolean", "object", "array", "null")


@dataclass(frozen=True)
class Field:
    """One field of a message.  ``types`` are JSON Schema type names; ``items`` the
    type of an array's items; ``enum`` the allowed values, if restricted."""

    name: str
    types: tuple[str, ...]
    doc: str
    required: bool = True
    items: str | None = None
    enum: tuple[Any, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None
    min_items: int | None = None
    max_length: int | None = None
    #: The fields of an object (``types`` is object), or of each object of an array
    #: (``items`` is object): the schema lists them, and ``check_field`` checks them.
    fields: tuple[Field, ...] | None = None
    #: The JSON Schema of the value (of each item, for an array), written out in full
    #: (``game_schema``: the observation, an event, the configuration), for the
    #: schema files only: the
    #: referee builds these values itself and does not check them.
    schema: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class MessageSpec:
    type: str
    sender: str  # "bot" or "referee"
    doc: str
    fields: tuple[Field, ...]
    #: Rules between fields, as JSON Schema keywords for the message's schema (the
    #: session checks them itself where a bot sends the message).
    schema: Mapping[str, Any] | None = None

    def field(self, name: str) -> Field:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)


def _f(name: str, types: str | tuple[str, ...], doc: str, **kw: Any) -> Field:
    return Field(name, (types,) if isinstance(types, str) else types, doc, **kw)


_TIME = _f("time", OBJECT, "the time control in seconds", fields=(
    _f("startup", NUMBER, "seconds from the start of the bot's process to its hello (per "
       "start)"),
    _f("per_decision", NUMBER, "seconds for one decision"),
    _f("bank", NUMBER, "extra seconds per game: a decision may take longer than "
       "per_decision, the excess is taken from the bank; full again at each new game"),
    _f("game", NUMBER, "the seat's game clock: its thinking time for a whole game, charged "
       "as per_decision and bank are; a seat whose clock runs out loses on time (a "
       "forfeit). Absent: no game clock", required=False),
))

_FAULT = (
    _f("seat", INTEGER, "the seat at fault", minimum=0),
    _f("bot", STRING, "the name of the seat's bot"),
    _f("kind", STRING, "what was wrong, named as the codes of 'rejected' messages are; "
       "'crash': the bot could not be started, exited or lost its connection",
       enum=FAULT_KINDS),
    _f("detail", STRING, "a readable explanation (for a fault on a request: the message "
       "of the 'rejected' the seat was sent)"),
    _f("turn", INTEGER, "the turn of the game (0 during set-up)", minimum=0),
    _f("action", STRING, "what the referee did: 'substituted' (played the first legal "
       "decision; a strike) or 'forfeit' (the seat forfeited the game)",
       enum=GAME_OVER_FAULT_ACTIONS),
)

MESSAGES: dict[str, MessageSpec] = {m.type: m for m in (
    MessageSpec("hello", "bot", "The bot's first message: who it is and which protocol "
                "versions it speaks.", (
        _f("protocol", ARRAY, "protocol versions the bot speaks (this document: 1)",
           items=INTEGER, min_items=1),
        _f("name", STRING, "the bot's name, for logs (the referee names seats itself)",
           max_length=200),
        _f("version", STRING, "the bot's own version, for logs", required=False,
           max_length=200),
        _f("token", STRING, "ZeroMQ, a bot the referee started: the value of its "
           "UPDOWN_TOKEN variable (a connection whose hello lacks it is refused)",
           required=False, max_length=200),
    )),
    MessageSpec("welcome", "referee", "The referee accepts the hello.", (
        _f("protocol", INTEGER, "the protocol version of this session"),
        _f("referee", STRING, "the referee's name and version"),
        _TIME,
        _f("max_message_bytes", INTEGER, "the longest message the referee accepts, in bytes "
           "(a JSON line without its newline; a msgpack frame)", minimum=1),
    )),
    MessageSpec("error", "referee", "The session cannot go on; the bot should exit.", (
        _f("code", STRING, "what went wrong", enum=ERROR_CODES),
        _f("message", STRING, "a readable explanation"),
        _f("action", STRING, "what happens next", enum=("disconnect",)),
    )),
    MessageSpec("new_game", "referee", "A game begins (the bot stays alive across games).", (
        _f("game_id", STRING, "names the game in later messages"),
        _f("seat", INTEGER, "the bot's seat, 0-based", minimum=0, maximum=MAX_PLAYERS - 1),
        _f("players", INTEGER, "number of seats", minimum=2, maximum=MAX_PLAYERS),
        _f("config", OBJECT, "the game configuration: players, variants, colours, deck, "
           "turn_limit", schema=CONFIG),
        _f("bots", ARRAY, "the names of the bots, by seat", items=STRING),
    )),
    MessageSpec("request", "referee", "The bot must decide.", (
        _f("id", INTEGER, "the request id: the reply must carry it", minimum=1),
        _f("game_id", STRING, "the game"),
        _f("seat", INTEGER, "the deciding seat (the bot's own)", minimum=0,
           maximum=MAX_PLAYERS - 1),
        _f("observation", OBJECT, "everything the seat may know now (protocol/RULES.md "
           "§12)", schema=OBSERVATION),
        _f("legal", ARRAY, "every legal decision, as text, in the engine's order",
           items=STRING, min_items=1),
        _f("events", ARRAY, "what happened since the seat's previous request, as the seat "
           "may see it (protocol/RULES.md §11)", items=OBJECT, schema=EVENT),
        _f("time_left", NUMBER, "seconds the referee waits for this reply (per-decision "
           "limit plus what is left of the bank, or what is left of the game clock when "
           "that is less)"),
    )),
    MessageSpec("decision", "bot", "The bot's reply to a request.", (
        _f("id", INTEGER, "the id of the request answered"),
        _f("decision", (INTEGER, STRING), "an index into the request's legal list, or the "
           "text of a decision"),
    )),
    MessageSpec("rejected", "referee", "A reply was rejected or a fault recorded.", (
        _f("id", INTEGER, "the request concerned"),
        _f("code", STRING, "what was wrong", enum=REJECT_CODES),
        _f("message", STRING, "a readable explanation naming what was expected"),
        _f("action", STRING, "what the referee did", enum=REJECT_ACTIONS),
        _f("substitute", STRING, "the decision the referee played for the seat on this "
           "request (the first legal decision): present when action is 'substituted' or "
           "'forfeit', absent when it is 'ignored'", required=False),
    ), schema={
        "if": {"properties": {"action": {"enum": ["substituted", "forfeit"]}}},
        # ajv's strict mode wants a required name listed in the same object.
        "then": {"required": ["substitute"], "properties": {"substitute": True}},
    }),
    MessageSpec("game_over", "referee", "The game is over.", (
        _f("game_id", STRING, "the game"),
        _f("how", STRING, "how it ended", enum=("winner", "played_out", "turn_limit",
                                                          "forfeits", "time_limit")),
        _f("places", ARRAY, "final place of each seat (1 = best), forfeits counted",
           items=INTEGER),
        _f("points", ARRAY, "penalty points of each seat, forfeits counted (a forfeited "
           "seat scores one more than the game's highest score)", items=INTEGER),
        _f("forfeits", ARRAY, "seats that forfeited, in order", items=INTEGER),
        _f("faults", ARRAY, "every fault recorded in the game, of every seat, in order",
           items=OBJECT, fields=_FAULT),
        _f("events", ARRAY, "events since the seat's last request (protocol/RULES.md §11)",
           items=OBJECT, schema=EVENT),
    )),
    MessageSpec("bye", "referee", "The session is over: exit now.", (
        _f("reason", STRING, "why"),
    )),
)}

BOT_MESSAGES = tuple(t for t, m in MESSAGES.items() if m.sender == "bot")


# --- typed records of what a bot sends --------------------------------------------------


@dataclass(frozen=True)
class Hello:
    protocol: tuple[int, ...]
    name: str
    version: str | None


@dataclass(frozen=True)
class DecisionReply:
    id: int
    decision: int | str


# --- validation -------------------------------------------------------------------------

_PY_TYPE_NAMES = {bool: BOOLEAN, int: INTEGER, float: NUMBER, str: STRING, list: ARRAY,
                  dict: OBJECT, type(None): NULL}


def _is(value: Any, t: str) -> bool:
    vt = type(value)
    if t == INTEGER:
        return vt is int
    if t == NUMBER:
        return vt is int or vt is float
    if t == ARRAY:
        return vt is list or vt is tuple
    return _PY_TYPE_NAMES.get(vt) == t


def _typed(value: Any) -> str:
    """A bot's value with its JSON type: ``boolean true``, ``string "1"``, ``null``; a
    value JSON cannot hold (msgpack's binary data and extension values) as ``show``
    says it, which names what it is ("binary data of 6 bytes")."""
    if value is None:
        return "null"
    name = _PY_TYPE_NAMES.get(type(value))
    return show(value) if name is None else f"{name} {show(value)}"


def _not_integer(value: Any) -> str:
    """Why a JSON number with an integral value is no integer: JSON decoders (ours
    included) read ``1.0`` and ``1e0`` as fractions, and the bot's own spelling is gone
    by then, so say both."""
    if type(value) is float and value.is_integer():
        return (" (a number written with a fraction or an exponent, such as 1.0 or 1e0, "
                f"is not an integer: write {int(value)})")
    return ""


def check_field(spec: MessageSpec, f: Field, msg: Mapping[str, Any]) -> None:
    """Raise BotProtocolError('malformed') if ``msg``'s field ``f`` is missing or wrong."""
    _check(f, msg, f"{spec.type!r} message")


def _check(f: Field, msg: Mapping[str, Any], where: str) -> None:
    """``check_field`` for the field ``f`` of ``msg``, which ``where`` names."""
    if f.name not in msg:
        if f.required:
            raise BotProtocolError(
                "malformed", f"{where} lacks field {f.name!r} ({' or '.join(f.types)}: {f.doc})",
                field=f.name)
        return
    value = msg[f.name]
    if not any(_is(value, t) for t in f.types):
        hint = _not_integer(value) if INTEGER in f.types else ""
        raise BotProtocolError(
            "malformed", f"field {f.name!r} of the {where} must be {' or '.join(f.types)}, "
            f"not {_typed(value)}{hint}", field=f.name)
    if f.items is not None:
        for i, item in enumerate(value):
            if not _is(item, f.items):
                raise BotProtocolError(
                    "malformed", f"field {f.name!r} of the {where} must hold {f.items}s, "
                    f"but item {i} is {_typed(item)}"
                    f"{_not_integer(item) if f.items == INTEGER else ''}", field=f.name)
    if f.min_items is not None and len(value) < f.min_items:
        raise BotProtocolError(
            "malformed", f"field {f.name!r} of the {where} must hold at least {f.min_items} "
            f"item(s)", field=f.name)
    if f.max_length is not None and isinstance(value, str) and len(value) > f.max_length:
        raise BotProtocolError(
            "malformed", f"field {f.name!r} of the {where} must be at most {f.max_length} "
            f"characters, not {len(value)}", field=f.name)
    if f.enum is not None and value not in f.enum:
        raise BotProtocolError(
            "malformed", f"field {f.name!r} of the {where} must be one of "
            f"{', '.join(map(repr, f.enum))}, not {show(value)}", field=f.name)
    if f.maximum is not None and type(value) is int and value > f.maximum:
        raise BotProtocolError(
            "malformed", f"field {f.name!r} of the {where} must be {f.maximum} or less, "
            f"not {value}", field=f.name)
    if f.minimum is not None and type(value) is int and value < f.minimum:
        raise BotProtocolError(
            "malformed", f"field {f.name!r} of the {where} must be {f.minimum} or more, "
            f"not {value}", field=f.name)
    if f.fields is not None:
        objects = [(value, f"{f.name!r} object of the {where}")] if isinstance(value, Mapping) \
            else [(v, f"{f.name!r} object {i} of the {where}")
                  for i, v in enumerate(value)]
        for obj, inner in objects:
            for sub in f.fields:
                _check(sub, obj, inner)


def message_type(msg: Any) -> str:
    """The type of a message from a bot; BotProtocolError if it has none we know."""
    if not isinstance(msg, Mapping):
        raise BotProtocolError("malformed", f"a message must be one JSON object (a msgpack "
                               f"map on ZeroMQ), not {_typed(msg)}")
    if "type" not in msg:
        raise BotProtocolError("malformed", "the message has no 'type' field "
                               f"(expected one of {', '.join(map(repr, BOT_MESSAGES))})",
                               field="type")
    t = msg["type"]
    if not isinstance(t, str):
        raise BotProtocolError("malformed", f"field 'type' must be a string, not {_typed(t)}",
                               field="type")
    spec = MESSAGES.get(t)
    if spec is None or spec.sender != "bot":
        what = "a message only the referee sends" if spec else "not a message type"
        raise BotProtocolError("protocol", f"{show(t)} is {what}: a bot sends "
                               f"{' or '.join(map(repr, BOT_MESSAGES))}", field="type")
    return t


def parse_bot_message(msg: Any) -> Hello | DecisionReply:
    """Validate a decoded message from a bot and read it into its record.  Raises
    BotProtocolError naming the field at fault and what was expected."""
    # Fast path for the common case, a well-formed decision (the checks below, made
    # in one expression: an id that is an int, a decision that is an int or a str).
    if type(msg) is dict and msg.get("type") == "decision":
        rid, d = msg.get("id"), msg.get("decision")
        if type(rid) is int and (type(d) is int or type(d) is str):
            return DecisionReply(rid, d)
    t = message_type(msg)
    spec = MESSAGES[t]
    for f in spec.fields:
        check_field(spec, f, msg)
    if t == "hello":
        return Hello(tuple(msg["protocol"]), msg["name"], msg.get("version"))
    return DecisionReply(msg["id"], msg["decision"])


def check_referee_message(msg: Mapping[str, Any]) -> None:
    """Assert a message the referee built has every required field of the right type
    (used by the session in debug runs and by the tests)."""
    spec = MESSAGES[msg["type"]]
    assert spec.sender == "referee", msg["type"]
    for f in spec.fields:
        try:
            check_field(spec, f, msg)
        except BotProtocolError as e:  # the same checks, but here it is our bug
            raise AssertionError(f"referee message {msg['type']!r}: {e}") from None
