"""updown_bot: a tiny helper for writing 3UP 3DOWN bots in Python (protocol version 1).

Standard library only; copy this one file next to your bot.  It speaks the protocol
(protocol/PROTOCOL.md) so that a bot is just a ``decide`` function:

    import updown_bot

    def decide(observation, legal):
        return 0              # an index into ``legal``, or one of its texts

    updown_bot.run(decide, name="mybot", version="0.1")

or, for a bot that wants to hear about games, rejections and its own state, a
subclass of ``updown_bot.Bot`` (see heuristic_bot.py).

Transports: JSON lines over stdin/stdout (the default), or -- when the referee starts
the bot with ``UPDOWN_TRANSPORT=zmq`` -- msgpack frames over a ZeroMQ DEALER socket
connected to ``UPDOWN_ENDPOINT`` (this needs ``pip install pyzmq msgpack``; CURVE
keys, for remote bots, come from ``UPDOWN_SERVER_KEY``, ``UPDOWN_PUBLIC_KEY`` and
``UPDOWN_SECRET_KEY``).

The hello names the bot by its own name, or by ``UPDOWN_NAME`` when that is set: a
remote seat (``remote:alice``, or ``remote = true`` in a tournament) is taken by the
bot whose hello carries the seat's name, so any bot can take it without an edit.

Logging goes to stderr (``updown_bot.log``): stdout carries the protocol, so while
``run`` drives a stdio bot, ``print`` is redirected to stderr too.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from collections.abc import Callable
from typing import Any, NamedTuple

PROTOCOL_VERSIONS = [1]
SPECIAL_KINDS = ("C", "C+1", "C+2")

Message = dict[str, Any]


def log(*parts: object) -> None:
    """Write a line to stderr (the referee keeps it in the bot's log)."""
    print(*parts, file=sys.stderr, flush=True)


# --- reading cards and decisions ---------------------------------------------------


def card_kind(card: str) -> str:
    """``"10r"`` -> ``"10"``, ``"C+1o"`` -> ``"C+1"`` (the colour letter dropped)."""
    return card[:-1]


def card_value(card_or_kind: str) -> int:
    """A card's strength: numbers by their face, specials above every number
    (``C`` 11, ``C+1`` 12, ``C+2`` 13).  Accepts ``"7g"`` or a bare kind ``"7"``."""
    k = card_or_kind if card_or_kind in SPECIAL_KINDS or card_or_kind.isdigit() else card_kind(card_or_kind)
    return 11 + SPECIAL_KINDS.index(k) if k in SPECIAL_KINDS else int(k)


class Move(NamedTuple):
    """A legal decision's text, read.  ``action`` is the first word: ``3up``, ``play``,
    ``down``, ``pickup``, ``draw``, ``decline``, ``swap`` or ``keep``."""

    text: str
    action: str
    source: str | None = None  # play: "hand" or "3up"
    kind: str | None = None  # play: "7", "C+1", ...
    count: int = 0  # play: how many cards
    cards: tuple[str, ...] = ()  # 3up, swap, and plays that name their cards
    slot: int | None = None  # down

    @property
    def special(self) -> bool:
        return self.kind in SPECIAL_KINDS

    @property
    def number(self) -> int:
        """A play's strength (``card_value`` of its kind); 0 for anything else."""
        return card_value(self.kind) if self.kind else 0


def read_move(text: str) -> Move:
    """Read one of the referee's legal decision texts (see PROTOCOL.md)."""
    t = text.split()
    action = t[0] if t else ""
    if action == "play" and len(t) >= 3:
        body = t[2:]
        if len(body) == 1 and body[0] in SPECIAL_KINDS:
            return Move(text, action, t[1], body[0], 1)
        if len(body) == 1 and "x" in body[0]:
            kind, _, count = body[0].partition("x")
            return Move(text, action, t[1], kind, int(count))
        # four_of_a_colour: the cards are named, the last one goes on top.
        return Move(text, action, t[1], card_kind(body[0]), len(body), tuple(body))
    if action == "down" and len(t) == 2:
        return Move(text, action, slot=int(t[1]))
    if action in ("3up", "swap"):
        return Move(text, action, cards=tuple(t[1:]))
    return Move(text, action)


# --- bots --------------------------------------------------------------------------


class Bot:
    """Subclass and override ``decide``; the ``on_*`` hooks are optional.
    ``self.request`` holds the request being answered (``events``, ``time_left``)."""

    name = "bot"
    version = "0.1"

    def __init__(self) -> None:
        self.request: Message = {}

    def decide(self, observation: Message, legal: list[str]) -> int | str:
        """One of ``legal``: its index, or its text."""
        raise NotImplementedError

    def on_welcome(self, message: Message) -> None:
        """The referee accepted the hello (``time`` holds the time control)."""

    def on_new_game(self, message: Message) -> None:
        """A game begins: ``game_id``, ``seat``, ``players``, ``config``, ``bots``."""

    def on_game_over(self, message: Message) -> None:
        """A game ended (places, points, how it ended)."""

    def on_rejected(self, message: Message) -> None:
        """The referee did not accept a reply; the game goes on."""
        log(f"{self.name}: rejected: {message.get('code')}: {message.get('message')} "
            f"[{message.get('action')}; substitute {message.get('substitute')!r}]")

    def on_bye(self, message: Message) -> None:
        """The referee is done with us; ``run`` returns after this."""


class FunctionBot(Bot):
    def __init__(self, decide: Callable[[Message, list[str]], int | str], name: str,
                 version: str) -> None:
        super().__init__()
        self._decide = decide
        self.name = name
        self.version = version

    def decide(self, observation: Message, legal: list[str]) -> int | str:
        return self._decide(observation, legal)


# --- transports --------------------------------------------------------------------


class StdioTransport:
    """JSON lines over stdin/stdout."""

    def __init__(self) -> None:
        self._in = sys.stdin.buffer
        self._out = sys.stdout.buffer
        # stdout carries the protocol: a stray print() must not corrupt it.
        sys.stdout = sys.stderr

    def send(self, message: Message) -> None:
        self._out.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        self._out.flush()

    def recv(self) -> Message | None:
        """The next message, or None when the referee closed the pipe."""
        while True:
            line = self._in.readline()
            if not line:
                return None
            if not line.strip():
                continue
            try:
                msg = json.loads(line)
            except ValueError as e:
                log(f"updown_bot: ignoring a line that is not JSON ({e}): {line[:200]!r}")
                continue
            if isinstance(msg, dict):
                return msg
            log(f"updown_bot: ignoring a message that is not an object: {line[:200]!r}")

    def close(self) -> None:
        pass


class ZmqTransport:
    """msgpack frames over a ZeroMQ DEALER socket (needs pyzmq and msgpack)."""

    def __init__(self, endpoint: str) -> None:
        import msgpack
        import zmq

        self._msgpack = msgpack
        self._ctx = zmq.Context()
        self._sock = self._ctx.socket(zmq.DEALER)
        self._sock.setsockopt(zmq.LINGER, 1000)
        server_key = os.environ.get("UPDOWN_SERVER_KEY")
        if server_key:
            self._sock.curve_serverkey = server_key.encode()
            self._sock.curve_publickey = os.environ["UPDOWN_PUBLIC_KEY"].encode()
            self._sock.curve_secretkey = os.environ["UPDOWN_SECRET_KEY"].encode()
        self._sock.connect(endpoint)

    def send(self, message: Message) -> None:
        self._sock.send(self._msgpack.packb(message, use_bin_type=True))

    def recv(self) -> Message | None:
        while True:
            frame = self._sock.recv()
            try:
                msg = self._msgpack.unpackb(frame, raw=False)
            except Exception as e:  # a bad frame: say so and wait for the next one
                log(f"updown_bot: ignoring a frame that is not msgpack ({e})")
                continue
            if isinstance(msg, dict):
                return msg

    def close(self) -> None:
        self._sock.close()
        self._ctx.term()


def open_transport() -> StdioTransport | ZmqTransport:
    if os.environ.get("UPDOWN_TRANSPORT", "stdio") == "zmq":
        endpoint = os.environ.get("UPDOWN_ENDPOINT")
        if not endpoint:
            raise SystemExit("updown_bot: UPDOWN_TRANSPORT=zmq needs UPDOWN_ENDPOINT")
        return ZmqTransport(endpoint)
    return StdioTransport()


# --- the message loop --------------------------------------------------------------


def _answer(bot: Bot, msg: Message) -> int | str:
    legal = msg.get("legal") or []
    try:
        choice = bot.decide(msg.get("observation") or {}, legal)
    except Exception:
        log(f"{bot.name}: decide() raised; answering the first legal decision\n"
            + traceback.format_exc())
        return 0
    if isinstance(choice, bool) or not isinstance(choice, (int, str)):
        log(f"{bot.name}: decide() returned {choice!r}, not an index or a text; "
            "answering the first legal decision")
        return 0
    return choice


def run(bot: Bot | Callable[[Message, list[str]], int | str], *, name: str = "bot",
        version: str = "0.1") -> int:
    """Play until the referee says bye (or closes the connection); returns the exit
    status (0, or 1 when the referee refused us).  Use ``sys.exit(run(...))``."""
    if not isinstance(bot, Bot):
        bot = FunctionBot(bot, name, version)
    transport = open_transport()
    try:
        bot.name = os.environ.get("UPDOWN_NAME") or bot.name
        hello = {"type": "hello", "protocol": PROTOCOL_VERSIONS, "name": bot.name,
                 "version": bot.version}
        if os.environ.get("UPDOWN_TOKEN"):  # a launched ZeroMQ bot proves it is the one
            hello["token"] = os.environ["UPDOWN_TOKEN"]
        transport.send(hello)
        while True:
            msg = transport.recv()
            if msg is None:
                return 0  # the referee is gone: nothing more to do
            kind = msg.get("type")
            if kind == "request":
                bot.request = msg
                transport.send({"type": "decision", "id": msg.get("id"),
                                "decision": _answer(bot, msg)})
            elif kind == "new_game":
                bot.on_new_game(msg)
            elif kind == "game_over":
                bot.on_game_over(msg)
            elif kind == "rejected":
                bot.on_rejected(msg)
            elif kind == "welcome":
                bot.on_welcome(msg)
            elif kind == "bye":
                bot.on_bye(msg)
                return 0
            elif kind == "error":
                log(f"{bot.name}: referee error: {msg.get('code')}: {msg.get('message')}")
                if msg.get("action") == "disconnect":
                    return 1
            # Anything else is from a newer protocol: ignore it (forward compatibility).
    finally:
        transport.close()
