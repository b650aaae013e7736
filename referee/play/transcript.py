"""The debugging transcript: every message to and from each bot, in order.

Owns the ``Transcript`` (a sink for the transports' ``on_message`` hook, the
runner's faults and decisions, and in-process bots' requests) and its line format.
Each line: wall-clock time, time since the game began, direction, bot, message.
A bot's answer shows its decision latency (time since the referee's last message to
it), the one latency line of a decision; its stderr lines are interleaved where they
arrived; a rejected answer is followed by the referee's reason, a bot that crashed
by what happened to it.  Colour only where the sink is a terminal.

    14:02:07.114  +0.412s  -> mybot       {"type": "request", ..., "observation": {...}, "legal": [3 legal], ...}
    14:02:07.161  +0.459s  <- mybot       {"type": "decision", ...}   [47.1 ms]
    14:02:07.161  +0.459s  !! mybot       stderr: thinking about 7g
    14:02:07.162  +0.460s  XX mybot       REJECTED illegal at turn 4: seat 0: ... [substituted]
    14:02:07.170  +0.468s  ~> heuristic   {"type": "request", ...}   (an in-process bot)
    14:02:08.001  +1.299s  XX mybot       CRASHED at turn 9: mybot exited with status 1 [forfeit]

A sink is *short* or *full*: a short one (the CLI's default on a terminal) shows a
request's observation as ``{...}``, its legal list and events by their counts; a
full one shows every message whole.  ``only`` keeps one bot's lines (and the
referee's legend).

An external bot's lines (``->``, ``<-``) are the messages on the wire.  A built-in
bot sends none: its lines (``~>``, ``<~``) show what the referee asked it and what
it answered, in the referee's own form (events as text, request ids counted per
game, no game_id) -- so that nobody learns the wire format from them, they have
their own arrows, and a legend line at the top of the transcript says so.

Must not import the CLI or a transport.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from ..game import Decision, GameConfig
from ..game.events import event_text
from ..text.quoting import control, printable
from .runner import BotFault, DecisionRequest, Fault, GameResult

ARROWS = {"send": "->", "recv": "<-", "stderr": "!!", "note": "..", "fault": "XX",
          "applied": "==", "in_send": "~>", "in_recv": "<~"}
#: ANSI SGR codes of each line kind's colour on a terminal (the styles click.style
#: would write: its colour names in the comments).
COLOURS: dict[str, str] = {
    "send": "\x1b[36m",  # cyan
    "recv": "\x1b[32m",  # green
    "in_send": "\x1b[36m\x1b[2m",  # cyan, dim
    "in_recv": "\x1b[32m\x1b[2m",  # green, dim
    "stderr": "\x1b[33m",  # yellow
    "note": "\x1b[90m",  # bright black
    "fault": "\x1b[31m\x1b[1m",  # red, bold
    "applied": "\x1b[34m",  # blue
}
_DIM, _RESET = "\x1b[2m", "\x1b[0m"


IN_PROCESS_LEGEND = (
    "~> <~ are a built-in bot's requests and answers in the referee's own form, NOT the "
    "wire format (events as text, ids counted per game, no game_id); -> <- are the "
    "messages an external bot gets and sends (protocol/PROTOCOL.md)")


@dataclass
class _Sink:
    stream: TextIO
    colour: bool
    short: bool = False


def shorten(payload: Any) -> Any:
    """A request's (or game_over's) observation as ``{...}``, its legal list and its
    events by their counts: the short form of a message (other payloads as they are)."""
    if not isinstance(payload, dict) or payload.get("type") not in ("request", "game_over"):
        return payload
    out: dict[str, Any] = {}
    for k, v in payload.items():
        if k == "observation" and isinstance(v, dict):
            out[k] = _Raw("{...}")
        elif k in ("legal", "events") and isinstance(v, list):
            out[k] = _Raw(f"[{len(v)} {'legal' if k == 'legal' else 'events'}]")
        else:
            out[k] = v
    return out


class _Raw(str):
    """Text written into a message's JSON form as it is (not as a JSON string)."""


#: How deep a message is shown: deeper lists and objects are shown as ``"..."``.  A bot
#: may nest 1024 levels (PROTOCOL.md), more than Python's own recursion allows the
#: encoder: a transcript shows what a bot sent as far as this, and goes on.
SHOWN_DEPTH = 64


def _clipped(value: Any, depth: int) -> Any:
    """``value`` with what lies deeper than ``depth`` levels as a note."""
    if isinstance(value, dict):
        if depth <= 0:
            return f"... (an object nested deeper than {SHOWN_DEPTH} levels)"
        return {k: _clipped(v, depth - 1) for k, v in value.items()}
    if isinstance(value, list):
        if depth <= 0:
            return f"... (a list nested deeper than {SHOWN_DEPTH} levels)"
        return [_clipped(v, depth - 1) for v in value]
    return value


def _json(value: Any) -> str:
    try:
        return json.dumps(value, separators=(", ", ": "), default=str)
    except RecursionError:
        return json.dumps(_clipped(value, SHOWN_DEPTH), separators=(", ", ": "), default=str)


def _text(payload: Any) -> str:
    if isinstance(payload, dict) and any(isinstance(v, _Raw) for v in payload.values()):
        return "{" + ", ".join(
            f"{json.dumps(k)}: " + (v if isinstance(v, _Raw) else _json(v))
            for k, v in payload.items()) + "}"
    if isinstance(payload, (bytes, bytearray)):
        try:
            return payload.decode("utf-8", "replace").rstrip("\n")
        except Exception:  # pragma: no cover
            return repr(payload)
    if isinstance(payload, str):
        return payload.rstrip("\n")
    try:
        return _json(payload)
    except (TypeError, ValueError):
        return repr(payload)


class Transcript:
    """Collects transcript lines and writes them to every sink at once, in the order
    they happen.  ``on_message`` has the transports' hook signature."""

    def __init__(self, *, clock: Callable[[], float] = time.time,
                 name_width: int = 12, only: str | None = None) -> None:
        self.sinks: list[_Sink] = []
        self.only = only  # show just this bot's lines
        self.clock = clock
        self.t0 = clock()
        self.name_width = name_width
        self._last_send: dict[str, float] = {}
        self.lines: list[str] = []  # plain lines, kept for tests and summaries
        self._explained = False  # the in-process legend has been written
        # stderr lines arrive from the transports' reader threads.
        self._lock = threading.Lock()

    def add_sink(self, stream: TextIO, colour: bool = False, short: bool = False) -> None:
        self.sinks.append(_Sink(stream, colour, short))

    def set_names(self, names: Sequence[str]) -> None:
        self.name_width = max([self.name_width, *(len(n) for n in names)])

    def on_message(self, direction: str, bot_name: str, payload: Any,
                   timestamp: float | None = None) -> None:
        """The transport hook: ``direction`` is "send", "recv", "stderr" or "note"
        (and, from ``TracedPlayer``, "in_send" and "in_recv")."""
        if direction == "note" and isinstance(payload, str) and \
                payload.startswith("latency request"):
            return  # the answer's line shows the latency: one line per decision
        now = self.clock()
        stamp = now if timestamp is None else timestamp
        extra = ""
        if direction in ("send", "in_send"):
            self._last_send[bot_name] = stamp
        elif direction in ("recv", "in_recv") and bot_name in self._last_send:
            extra = f"   [{(stamp - self._last_send.pop(bot_name)) * 1000:.1f} ms]"
        text = _text(payload)
        short = _text(shorten(payload))
        if direction == "stderr":
            text = short = "stderr: " + text
        self._write(direction, bot_name, text + extra, now, short + extra)

    def fault(self, f: Fault) -> None:
        """The referee rejected something a bot did (from ``run_game``'s on_event), or
        the bot crashed: its process exited, or its connection was lost."""
        what = "CRASHED" if f.kind == "crash" else f"REJECTED {f.kind}"
        self._write("fault", f.bot, f"{what} at turn {f.turn}: {f.detail} [{f.action}]",
                    self.clock())

    def applied(self, bot_name: str, decision: str, elapsed: float, *,
                substituted: bool = False) -> None:
        """The decision the referee applied for a seat (its own, or a substitute).  The
        bot's latency is on its answer's line, so it is not repeated here."""
        if substituted:
            text = f"referee plays the substitute '{decision}' (first legal decision)"
        else:
            text = f"referee applies '{decision}'"
        self._write("applied", bot_name, text, self.clock())

    def note(self, bot_name: str, text: str) -> None:
        self._write("note", bot_name, text, self.clock())

    def explain_in_process(self) -> None:
        """Write, once, the legend of the in-process bots' lines (at the top of the
        transcript: ``TracedPlayer`` calls it when it is made, before any game)."""
        if self._explained:
            return
        self._explained = True
        self._write("note", "referee", IN_PROCESS_LEGEND, self.clock())

    def _write(self, kind: str, bot: str, text: str, now: float,
               short: str | None = None) -> None:
        if self.only is not None and bot not in (self.only, "referee"):
            return
        # A bot's text (its stderr, its hello, what it sent) is shown, never obeyed:
        # a carriage return or an escape sequence would rewrite the transcript.
        text = printable(text)
        if short is not None:
            short = printable(short)
        wall = time.strftime("%H:%M:%S", time.localtime(now)) + f".{int(now * 1000) % 1000:03d}"
        head = f"{wall}  +{now - self.t0:8.3f}s  {ARROWS.get(kind, '  ')} {bot:<{self.name_width}} "
        with self._lock:
            self._emit(kind, head, text, text if short is None else short)

    def _emit(self, kind: str, head: str, text: str, short: str) -> None:
        self.lines.append(head + text)
        for sink in self.sinks:
            body = short if sink.short else text
            if sink.colour:
                # The colours go past the command line's Guard (``control``); the
                # text, escaped already, goes through it.
                control(sink.stream, _DIM)
                sink.stream.write(head)
                control(sink.stream, _RESET + COLOURS.get(kind, ""))
                sink.stream.write(body)
                control(sink.stream, _RESET)
                sink.stream.write("\n")
            else:
                sink.stream.write(head + body + "\n")
            sink.stream.flush()


class TracedPlayer:
    """Wraps an in-process Player (a built-in bot, no messages of its own) so that
    the transcript shows what it was asked and what it answered -- in a shape close
    to an external bot's messages, but marked (``~>``, ``<~`` and the legend) as not
    being the wire format."""

    def __init__(self, player: Any, transcript: Transcript) -> None:
        self.player = player
        self.transcript = transcript
        self.name = player.name
        transcript.explain_in_process()
        if hasattr(player, "clock"):
            self.clock = player.clock

    def start_game(self, game_id: str, seat: int, config: GameConfig, seed: int) -> None:
        self.transcript.on_message("note", self.name, f"in-process bot: start game {game_id}, "
                                   f"seat {seat}, seed {seed}", None)
        self.player.start_game(game_id, seat, config, seed)

    def decide(self, request: DecisionRequest) -> Decision | str:
        self.transcript.on_message("in_send", self.name, {
            "type": "request", "id": request.request_id, "seat": request.seat,
            "events": [event_text(e) for e in request.events],
            "observation": request.observation,
            "legal": [d.text for d in request.legal],
            "time_left": round(request.time_left, 3),
        }, None)
        try:
            answer: Decision | str = self.player.decide(request)
        except BotFault as e:
            self.transcript.on_message("note", self.name, f"fault: {e.kind}: {e.detail}", None)
            raise
        except Exception as e:
            self.transcript.on_message("note", self.name, f"raised {type(e).__name__}: {e}", None)
            raise
        text = answer.text if isinstance(answer, Decision) else answer
        self.transcript.on_message("in_recv", self.name,
                                   {"type": "decision", "id": request.request_id,
                                    "decision": text}, None)
        return answer

    def end_game(self, game_id: str, result: GameResult,
                 events: Sequence[dict[str, Any]]) -> None:
        self.player.end_game(game_id, result, events)
