"""The sans-I/O session with one bot: handshake, games, requests and their ids.

Owns the session's state machine -- everything that decides which message may be
sent or received when lives in this file (as in h11's ``_state.py``).  It never
touches a pipe, a socket or a clock: the caller feeds it decoded messages
(``receive``) and sends the dicts its methods return.  Transports (stdio, ZeroMQ,
in-memory) and timeouts are other layers.

States::

    AWAIT_HELLO --receive(hello)--> GREETED --welcome()--> IDLE
    IDLE --new_game()--> IN_GAME --request()--> AWAITING --receive(decision, id)--> IN_GAME
                                                AWAITING --abandon()--> IN_GAME
    IN_GAME --game_over()--> IDLE
    any --bye() / error() / unsupported hello--> CLOSED

Request ids are allocated here, increasing over the whole session, so a reply that
arrives after its request was abandoned (a timeout), or a second reply to one
request, can never be taken for the answer to a later request: it comes back from
``receive`` as an ``IgnoredReply``.

Bot faults raise ``BotProtocolError``; misuse by the referee raises
``RefereeProtocolError``.

Must not import: anything doing I/O, a clock, a transport or the game engine.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import BotProtocolError, RefereeProtocolError, UnsupportedVersion
from .messages import (
    MAX_MESSAGE_BYTES,
    PROTOCOL_VERSIONS,
    REJECT_ACTIONS,
    REJECT_CODES,
    DecisionReply,
    Hello,
    parse_bot_message,
)


class State(enum.Enum):
    AWAIT_HELLO = "await_hello"
    GREETED = "greeted"
    IDLE = "idle"
    IN_GAME = "in_game"
    AWAITING = "awaiting"
    CLOSED = "closed"


@dataclass(frozen=True)
class IgnoredReply:
    """A decision that answers no pending request: late (its request was abandoned),
    a second answer, or an id never sent.  It is discarded; ``reply`` is the
    ``rejected`` message (action ``ignored``) to tell the bot."""

    id: Any
    reason: str
    reply: dict[str, Any]


Event = Hello | DecisionReply | IgnoredReply


class BotSession:
    """The protocol state of one connection to one bot (possibly many games)."""

    def __init__(
        self,
        *,
        referee: str,
        time: Mapping[str, float],
        max_message_bytes: int = MAX_MESSAGE_BYTES,
        versions: Sequence[int] = PROTOCOL_VERSIONS,
    ) -> None:
        self.referee = referee
        self.time = dict(time)
        self.max_message_bytes = max_message_bytes
        self.versions = tuple(versions)
        self.state = State.AWAIT_HELLO
        self.hello: Hello | None = None
        self.version: int | None = None
        self.game_id: str | None = None
        self.pending: int | None = None  # id of the request awaiting its reply
        self.last_id = 0  # the highest request id sent
        # The last time_left rounded, and its rounding: the limit seldom changes from
        # one request to the next, and round(x, 3) of a float is costly (decimal
        # conversion).  NaN: equal to nothing, so nothing is cached at first.
        self._time_in = float("nan")
        self._time_out = 0.0

    # -- helpers ---------------------------------------------------------------------

    def _need(self, *states: State, doing: str) -> None:
        if self.state not in states:
            raise RefereeProtocolError(
                f"cannot {doing} in state {self.state.value} (needs "
                f"{' or '.join(s.value for s in states)})")

    # -- receiving -------------------------------------------------------------------

    def receive(self, msg: Any) -> Event:
        """Consume one decoded message from the bot.  Returns what it was; raises
        BotProtocolError (UnsupportedVersion for a hello we cannot serve) if the bot
        broke the protocol, RefereeProtocolError if the session is closed."""
        d = self.take_decision(msg)
        if d is not None:
            assert type(msg) is dict
            return DecisionReply(msg["id"], d)
        if self.state is State.CLOSED:
            raise RefereeProtocolError("the session is closed: nothing more is read")
        event = parse_bot_message(msg)
        if isinstance(event, Hello):
            if self.state is not State.AWAIT_HELLO:
                raise BotProtocolError("protocol", "a second 'hello': the handshake is over "
                                       "(expected 'decision' replies only)", field="type")
            common = [v for v in self.versions if v in event.protocol]
            if not common:
                self.state = State.CLOSED
                text = (f"the bot speaks protocol {', '.join(map(str, event.protocol))}; this "
                        f"referee speaks {', '.join(map(str, self.versions))}")
                raise UnsupportedVersion(text, {
                    "type": "error", "code": "unsupported_version", "message": text,
                    "action": "disconnect"})
            self.hello = event
            self.version = max(common)
            self.state = State.GREETED
            return event
        if self.state is State.AWAIT_HELLO:
            raise BotProtocolError("protocol", "the bot must speak first with 'hello', "
                                   "not 'decision'", field="type")
        if self.state is State.AWAITING and event.id == self.pending:
            self.pending = None
            self.state = State.IN_GAME
            return event
        if isinstance(event.id, int) and 0 < event.id <= self.last_id:
            reason = (f"reply to request {event.id}, which is no longer pending"
                      + (f" (request {self.pending} is)" if self.pending else ""))
        else:
            reason = (f"reply to request {event.id}, which was never sent"
                      + (f" (request {self.pending} is pending)" if self.pending else ""))
        return IgnoredReply(event.id, reason, self.rejected(
            event.id, "unknown_id", reason + ": discarded", "ignored"))

    def take_decision(self, msg: Any) -> int | str | None:
        """The fast path of ``receive``, for the common case: if ``msg`` is the
        awaited decision, well formed, consume it and return its ``decision`` (an
        index or a text).  Otherwise return None and change nothing: ``receive``
        then says what ``msg`` is, or what is wrong with it.  (The same checks as
        ``parse_bot_message`` and ``receive``, without building a record.)"""
        if self.state is State.AWAITING and type(msg) is dict and msg.get("type") == "decision":
            rid, d = msg.get("id"), msg.get("decision")
            if type(rid) is int and rid == self.pending and (type(d) is int or type(d) is str):
                self.pending = None
                self.state = State.IN_GAME
                return d
        return None

    # -- sending ---------------------------------------------------------------------

    def welcome(self) -> dict[str, Any]:
        self._need(State.GREETED, doing="welcome the bot")
        self.state = State.IDLE
        return {"type": "welcome", "protocol": self.version, "referee": self.referee,
                "time": self.time, "max_message_bytes": self.max_message_bytes}

    def error(self, code: str, message: str) -> dict[str, Any]:
        """An ``error`` message; the session is over."""
        self.state = State.CLOSED
        return {"type": "error", "code": code, "message": message, "action": "disconnect"}

    def new_game(self, game_id: str, seat: int, config: Mapping[str, Any],
                 bots: Sequence[str]) -> dict[str, Any]:
        self._need(State.IDLE, doing="start a game")
        self.state = State.IN_GAME
        self.game_id = game_id
        return {"type": "new_game", "game_id": game_id, "seat": seat,
                "players": len(bots), "config": dict(config), "bots": list(bots)}

    def request(self, seat: int, observation: Mapping[str, Any], legal: Sequence[str],
                events: Sequence[Mapping[str, Any]], time_left: float) -> dict[str, Any]:
        """A ``request`` with a fresh id; the session then awaits its reply.  A list
        given for ``legal`` or ``events`` is taken as it is, not copied: the caller
        hands over a fresh one (the referee builds both for each request)."""
        if self.state is not State.IN_GAME:
            self._need(State.IN_GAME, doing="send a request")
        if not legal:
            raise RefereeProtocolError("a request needs at least one legal decision")
        rid = self.pending = self.last_id = self.last_id + 1
        self.state = State.AWAITING
        if type(time_left) is float and time_left == self._time_in:
            left = self._time_out
        else:
            left = round(time_left, 3) if time_left > 0.0 else 0.0
            if type(time_left) is float:
                self._time_in, self._time_out = time_left, left
        return {"type": "request", "id": rid, "game_id": self.game_id, "seat": seat,
                "observation": observation,
                "legal": legal if type(legal) is list else list(legal),
                "events": events if type(events) is list else list(events),
                "time_left": left}

    def abandon(self) -> int:
        """Stop waiting for the pending request's reply (a timeout or a bad reply); a
        reply to it arriving later will be ignored.  Returns its id."""
        self._need(State.AWAITING, doing="abandon a request")
        assert self.pending is not None
        pending, self.pending = self.pending, None
        self.state = State.IN_GAME
        return pending

    def rejected(self, request_id: Any, code: str, message: str, action: str,
                 substitute: str | None = None) -> dict[str, Any]:
        """A ``rejected`` message: a reply was rejected or a fault recorded.  The
        ``substitute`` (the decision played for the seat) is given exactly when
        something was played: for every action but ``ignored`` (PROTOCOL.md)."""
        if code not in REJECT_CODES or action not in REJECT_ACTIONS:
            raise RefereeProtocolError(f"bad rejection code {code!r} or action {action!r}")
        if (substitute is None) != (action == "ignored"):
            raise RefereeProtocolError(
                f"a rejection with action {action!r} " + ("carries no substitute" if
                                                          action == "ignored" else
                                                          "names the substitute played"))
        if self.state in (State.AWAIT_HELLO, State.GREETED, State.CLOSED):
            raise RefereeProtocolError(f"cannot reject a reply in state {self.state.value}")
        msg: dict[str, Any] = {"type": "rejected", "id": request_id, "code": code,
                               "message": message, "action": action}
        if substitute is not None:
            msg["substitute"] = substitute
        return msg

    def game_over(self, *, how: str, places: Sequence[int], points: Sequence[int],
                  forfeits: Sequence[int], faults: Sequence[Mapping[str, Any]],
                  events: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        if self.state is State.AWAITING:  # the runner never ends a game mid-request
            self.abandon()
        self._need(State.IN_GAME, doing="end a game")
        self.state = State.IDLE
        game_id, self.game_id = self.game_id, None
        return {"type": "game_over", "game_id": game_id, "how": how, "places": list(places),
                "points": list(points), "forfeits": list(forfeits),
                "faults": [dict(f) for f in faults], "events": list(events)}

    def bye(self, reason: str = "session over") -> dict[str, Any]:
        self.state = State.CLOSED
        return {"type": "bye", "reason": reason}
