"""External bots as players: the protocol session driven over a transport, with timeouts.

Owns ``ExternalPlayer`` -- the runner's ``Player`` for a bot in another process or on
another machine -- and the ``stdio_player`` factory.  The three layers meet here and
nowhere else: a transport moves messages (``referee.transport``), the session says
what they mean (``referee.protocol``), and this module applies the time limits and
turns every failure into a ``BotFault`` of the right kind with a message naming the
bot, what it did and what was expected:

=============================================  ==========  ======
what happened                                  kind        fatal
=============================================  ==========  ======
no hello within the startup limit              timeout     yes
cannot start / exits / closes its stdout       crash       yes
no decision within ``time_left``               timeout     no
a line over the size limit                     oversized   no
not JSON, not an object, a field wrong         malformed   no
a message it may not send now                  protocol    no
an index outside the legal list                illegal     no
stops reading its stdin (a write times out)    timeout     yes
ZeroMQ: more connections than a launch allows  protocol    yes
=============================================  ==========  ======

A decision given as text is returned as text: the runner checks it through the
engine, and an illegal one comes back to us through ``rejected``.  A bot that
crashed is started again for its next game.

Transcript: ``on_message(direction, bot_name, payload, timestamp)`` with direction
``send``/``recv`` (payload: the message dict), ``stderr`` (a line of text; called
from the stderr reader thread) or ``note`` (text: latencies, ignored replies,
restarts, how the bot ended).  ``timestamp`` is ``time.time()``.

Must not import: the CLI, the tournament layer.
"""

from __future__ import annotations

import contextlib
import operator
import os
import sys
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .. import __version__
from ..game import Decision, GameConfig
from ..game.events import event_dict
from ..game.explain import legal_now
from ..play.runner import BotFault, DecisionRequest, GameResult, TimeControl, run_game
from ..protocol import (
    MAX_MESSAGE_BYTES,
    BotProtocolError,
    BotSession,
    DecisionReply,
    Hello,
    IgnoredReply,
    UnsupportedVersion,
)
from ..protocol.messages import FaultKind
from ..transport.base import (
    ConnectionCut,
    MalformedMessage,
    MessageTooLarge,
    TransportClosed,
    TransportError,
    TransportTimeout,
)
from ..transport.zmq.listener import RemoteListener
from .launcher import Connection, Launcher, launch_bot, launch_zmq_bot
from .process import DEFAULT_MEMORY_MB, DEFAULT_STDERR_CAP, BotProcess, BotStartError, TurnGate
from .sandbox import Sandbox

TranscriptHook = Callable[[str, str, Any, float], None]

REFEREE_NAME = f"updown-referee {__version__}"

# The JSON-ready form of each (filtered) event, shared by every seat and game that
# sees the same event: most events are public, so each is converted once, not once
# per seat.  The dicts are only ever serialised: never modify one.
_EVENT_DICTS: dict[tuple[Any, ...], dict[str, Any]] = {}


def _event_dicts(events: Sequence[tuple[Any, ...]]) -> list[dict[str, Any]]:
    cache = _EVENT_DICTS
    if len(cache) > 50_000:
        cache.clear()
    try:
        out: list[Any] = list(map(cache.get, events))
    except TypeError:  # an event holding a list: not hashable, convert it each time
        return [event_dict(e) for e in events]
    if None in out:
        for i, e in enumerate(events):
            if out[i] is None:
                out[i] = cache[e] = event_dict(e)
    return out


# The same events already encoded, by the transport's ``fragment`` function (stdio's:
# JSON bytes to embed as they are): a public event is encoded once for every seat and
# game that sees it, not once per request.  Fragments are immutable.
_EVENT_FRAGMENTS: dict[Callable[[Any], Any], dict[tuple[Any, ...], Any]] = {}


def _event_fragments(events: Sequence[tuple[Any, ...]],
                     fragment: Callable[[Any], Any]) -> list[Any]:
    """``_event_dicts(events)``, each encoded by ``fragment`` (cached)."""
    cache = _EVENT_FRAGMENTS.get(fragment)
    if cache is None or len(cache) > 50_000:
        cache = _EVENT_FRAGMENTS[fragment] = {}
    try:
        out: list[Any] = list(map(cache.get, events))
    except TypeError:  # an event holding a list: not hashable, encode it each time
        return [fragment(event_dict(e)) for e in events]
    if None in out:
        for i, e in enumerate(events):
            if out[i] is None:
                out[i] = cache[e] = fragment(event_dict(e))
    return out


_decision_texts = operator.attrgetter("text")


def _allowance(request: DecisionRequest | None) -> str:
    return request.allowance() if request is not None else "its time"

#: How many replies the referee discards while one request is pending that it tells
#: the bot about (``rejected``, code ``unknown_id``); any more are discarded silently.
#: A bot flooding stdout with stale replies is usually not reading its stdin: answering
#: each one would fill that pipe and block the referee (PROTOCOL.md, Request ids).
MAX_IGNORED_TOLD = 5

#: How many messages nobody asked for (strays: replies to no pending request) a bot
#: may send in one game.  Each is read and decoded to know it is one (at most
#: ``max_message_bytes``: a fraction of a millisecond), so a bot sending them by the
#: thousand would cost the referee's CPU -- shared, under ``--concurrency``, with
#: other games' bots on the clock -- without a fault.  The ``MAX_STRAYS``-th is a
#: ``protocol`` fault that forfeits the game: nothing more of the bot is read in it.
#: An honest bot sends one stray per reply that came too late (a timeout, itself a
#: fault: a few a game at most).
MAX_STRAYS = 10

#: How much CPU a bot frozen after its turn may use, in seconds, before it is frozen
#: (every process of it stopped), or it is a fault that ends it.  A bot waiting for
#: its next request stops in microseconds once it runs -- on a busy machine only
#: when the scheduler gives it a CPU, which may take hundreds of milliseconds of
#: wall time, using none: it is waited for, never faulted for the machine's load.
#: One whose process is kept busy inside the kernel (a huge ``madvise`` or
#: ``read``: a freezer stops a task only as it leaves the kernel) goes on using
#: CPU, which the kernel counts (its cgroup's, ``Cgroup.cpu_ns``).  The next request
#: (to any seat of the game) waits for the freeze; the wait is the bot's own time
#: (the tail of its reply).
FREEZE_LIMIT = 0.25

#: The last resort: how long (wall seconds) a freeze may take, however little CPU
#: the bot uses, before it is the same fault (a kernel that counts no CPU for the
#: cgroup; threads that escape v1's count by exiting).  A bot merely waiting for a
#: CPU is frozen long before, even at a load of 25 on 2 CPUs.
FREEZE_WALL_LIMIT = 5.0

#: How long a bot that was sent ``error`` may take to read it and exit by itself
#: before it is ended: ended at once, it would usually be gone before reading the line
#: (PROTOCOL.md, ``error``).  It returns as soon as the bot exits.
ERROR_GRACE = 0.5




class ExternalPlayer:
    """A bot behind a transport, for ``run_game``.  ``launch`` starts the bot (or
    accepts its connection) and returns the Connection; it is called for the first
    game and again after a crash.  Call ``close`` (or use ``with``) when the session
    is over: it says bye and ends the bot's process tree."""

    def __init__(
        self,
        name: str,
        launch: Launcher,
        *,
        time_control: TimeControl | None = None,
        max_message_bytes: int = MAX_MESSAGE_BYTES,
        on_message: TranscriptHook | None = None,
        bye_grace: float = 1.0,
        kill_grace: float = 0.5,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.name = name
        self.launch = launch
        self.time_control = time_control or TimeControl()
        self.max_message_bytes = max_message_bytes
        self.on_message = on_message
        self.bye_grace = bye_grace
        self.kill_grace = kill_grace
        self.clock = clock
        self.conn: Connection | None = None
        self.session: BotSession | None = None
        self.hello: Hello | None = None
        self.dead = False  # the current connection is unusable (crash, lost, stuck)
        self.starts = 0  # how many times the bot was launched
        self._bots: list[str] = []
        self._ids: dict[int, int] = {}  # runner request id -> session request id
        #: Why the bot was ended where no fault could be raised (while being told of a
        #: fault): raised by the next ``decide`` instead of a bare "not running".
        self._unreported: BotFault | None = None
        self._legal: Sequence[Decision] = ()
        # Why the bot's process is to be started afresh before its next game, if it is.
        self._restart: str | None = None
        self._log_label: str | None = None  # for the next game's line in its stderr log
        self._error_sent = False  # 'error' sent during the handshake
        # The decision asked for (``ask``): its request id and time, when it was sent,
        # its deadline (infinite when the waiter keeps it), replies told of as ignored.
        self._asked: tuple[int, DecisionRequest | None] = (0, None)
        self._start = 0.0
        self._deadline = 0.0
        self._told = 0
        self._strays = 0  # messages nobody asked for in this game (MAX_STRAYS)
        #: Requests of this game that timed out, whose one late reply is still to come:
        #: that reply answers a request the referee did ask, and is no stray.
        self._late: set[int] = set()
        self._start_fault: BotFault | None = None  # ``prepare`` could not start the bot
        #: The transport's encoder of values to embed in later messages (stdio's
        #: ``fragment``), if it has one: the events sent are encoded once, not per request.
        self._fragment: Callable[[Any], Any] | None = None
        #: The gate of the bot's capped logs (``TurnGate``), if we started it: open
        #: while a decision is asked, closed between its turns.
        self._gate: TurnGate | None = None
        #: The bot's process when it is frozen between its turns (a sandbox that
        #: freezes): thawed for its decisions, while game_over is written, and to
        #: end; frozen from its first new_game on otherwise.
        self._frozen: BotProcess | None = None
        #: The referee's own seconds in the last ``decide`` (thawing and freezing the
        #: bot): ``ask_now`` charges the bot its ``decide`` less this.
        self.overhead = 0.0
        #: Seconds of the last ``_hold`` spent waiting for the bot to be frozen: the
        #: bot's own time (a waiter that charges replies as they arrive adds it).
        self.freeze_wait = 0.0

    # -- transcript ------------------------------------------------------------------

    def _tell(self, direction: str, payload: Any) -> None:
        """Call the transcript hook.  A hook that fails is a bug on our side, not the
        bot's: it is switched off with a warning, and the game goes on."""
        hook = self.on_message
        if hook is None:
            return
        try:
            hook(direction, self.name, payload, time.time())
        except Exception as e:
            self.on_message = None
            warnings.warn(f"the transcript hook of {self.name} failed and is switched off: "
                          f"{type(e).__name__}: {e}", RuntimeWarning, stacklevel=2)

    def _note(self, text: str) -> None:
        if self.on_message is not None:
            self._tell("note", text)

    def _send(self, msg: dict[str, Any]) -> None:
        assert self.conn is not None
        if self.on_message is not None:
            self._tell("send", msg)
        self.conn.transport.send(msg)

    def _recv(self, timeout: float) -> dict[str, Any]:
        assert self.conn is not None
        msg = self.conn.transport.recv(timeout)
        if self.on_message is not None:
            self._tell("recv", msg)
        return msg

    def _lost(self, verb: str, when: str, cause: TransportError | None = None) -> BotFault:
        """The bot is gone: a fatal crash fault saying how it ended ("NAME ``verb``
        ``when``: the bot process exited with code 3").  What is left of it (children
        holding its pipes) is ended now, not at ``close``.  A bot whose process still
        runs closed a pipe (``cause`` says which): that is what the fault says.  A
        connection the referee closed (``ConnectionCut``: it sent more than it may
        without ending a message) is an ``oversized`` fault saying so."""
        self.dead = True
        conn = self.conn
        if isinstance(cause, ConnectionCut):
            detail = f"{self.name} {cause} ({when})"
            self._note(f"lost: {detail}")
            self._end_connection()
            return BotFault("protocol" if cause.kind == "protocol" else "oversized", detail,
                            fatal=True)
        how = conn.describe_loss(ran=self.session is not None) if conn is not None else \
            "no connection"
        if conn is not None and conn.process is not None and cause is not None and \
                conn.process.returncode is None:
            detail = (f"{self.name}: {cause} {when}; its process was still running, and "
                      f"is ended")
        else:
            detail = f"{self.name} {verb} {when}: {how}"
        self._note(f"lost: {detail}")
        self._end_connection()
        return BotFault("crash", detail, fatal=True)

    def _stuck(self, e: TransportTimeout) -> BotFault:
        """The bot stopped reading: it is ended (and started again for its next game)."""
        self.dead = True
        self._note(f"stuck: {e}")
        self._end_connection()
        return BotFault("timeout", f"{self.name} {e}", fatal=True)

    # -- the session -----------------------------------------------------------------

    def _end_connection(self) -> None:
        if self.conn is not None:
            conn, self.conn = self.conn, None
            conn.close(self.kill_grace)

    def connect(self) -> None:
        """Start the bot and shake hands within the startup limit.  Raises a fatal
        BotFault (the bot is ended) when that fails."""
        self._end_connection()
        self.dead = False
        self.session = None
        self._unreported = None
        self.starts += 1
        self._error_sent = False
        tc = self.time_control
        if self.starts > 1:
            self._note(f"restarting (start {self.starts})")
        t0 = self.clock()
        self._fragment = None
        self._gate = None
        self._frozen = None
        try:
            self.conn = self.launch()
        except BotStartError as e:
            self.dead = True
            what = "did not connect" if e.remote else "cannot be started"
            raise BotFault("crash", f"{self.name} {what}: {e}", fatal=True) from None
        session = BotSession(
            referee=REFEREE_NAME,
            time={"startup": tc.startup, "per_decision": tc.per_decision, "bank": tc.bank,
                  **({} if tc.game is None else {"game": tc.game})},
            max_message_bytes=self.max_message_bytes)
        try:
            try:
                msg = self._recv(max(0.0, tc.startup - (self.clock() - t0)))
                hello = session.receive(msg)
                assert isinstance(hello, Hello)
            except TransportTimeout as e:
                why = str(e).partition("s (")[2]
                raise BotFault("timeout", f"{self.name} sent no hello within the startup limit "
                               f"of {tc.startup:.3f}s" + (f" ({why}" if why else "")
                               + self._silence_hint(),
                               fatal=True) from None
            except TransportClosed as e:
                raise self._lost("ended", "before its hello", e) from None
            except UnsupportedVersion as e:
                self._try_send(e.reply)
                self._error_sent = True
                raise BotFault("protocol", f"{self.name}: {e}", fatal=True) from None
            except (MalformedMessage, MessageTooLarge, BotProtocolError) as e:
                # The transport's errors name what arrived ("a line that is not JSON
                # ..."); the protocol's say what was wrong with it.
                got = f": {e}" if isinstance(e, BotProtocolError) else f", received {e}"
                self._try_send(session.error("protocol", f"expected a hello{got}"))
                self._error_sent = True
                kind: FaultKind = "oversized" if isinstance(e, MessageTooLarge) else (
                    e.kind if isinstance(e, BotProtocolError) else "malformed")
                raise BotFault(kind, f"{self.name} did not say hello properly: {e} "
                               f"(expected {{\"type\":\"hello\",\"protocol\":[1],"
                               f"\"name\":...}})", fatal=True) from None
            self.hello = hello
            self.session = session
            self._fragment = getattr(self.conn.transport, "fragment", None)
            try:
                self._send(session.welcome())
            except TransportTimeout as e:
                raise self._stuck(e) from None
            except TransportClosed as e:
                raise self._lost("ended", "after its hello", e) from None
            self._note(f"hello: {hello.name} {hello.version or ''} protocol {session.version}, "
                       f"after {self.clock() - t0:.3f}s")
            if self.conn.process is not None:
                # From now on its capped logs are read on its turns only (``ask``).
                self._gate = self.conn.process.gate
                self._gate.close()
                if self.conn.process.freezes:
                    self._frozen = self.conn.process
                    # Its start-up ends with its hello: frozen from its welcome (read
                    # on its first turn) on, it takes no CPU while it waits for its
                    # first game -- other games' seats may be on the clock.
                    self._frozen.freeze(True)
                    fault = self._frozen_in_time("after its hello")
                    if fault is not None:
                        raise fault
        except BotFault:
            self.dead = True
            if self._error_sent and self.conn is not None and self.conn.process is not None:
                # Give it a moment to read the 'error' line (and exit by itself).
                self.conn.process.wait(ERROR_GRACE)
            self._end_connection()
            raise

    def _silence_hint(self) -> str:
        """Why a bot may seem silent: over stdio, output that never left its buffer."""
        transport = self.conn.transport if self.conn is not None else None
        got = getattr(transport, "received_bytes", None)
        if got is None:
            got = getattr(getattr(transport, "inner", None), "received_bytes", None)
        if got == 0:
            return ("; nothing at all arrived on its stdout: is stdout flushed? most "
                    "languages buffer a pipe (Python: print(..., flush=True); C: fflush; "
                    "Perl: $| = 1; Java: System.out.flush())")
        if got:
            return f"; {got} bytes arrived, but no complete line: end each message with a newline"
        return ""

    def _try_send(self, msg: dict[str, Any]) -> None:
        with contextlib.suppress(TransportError):
            self._send(msg)

    # -- Player ----------------------------------------------------------------------

    def on_seating(self, bots: Sequence[str]) -> None:
        """Optional Player hook: the names of the game's bots by seat."""
        self._bots = list(bots)

    def mark_log(self, text: str) -> None:
        """Optional Player hook: the line that marks the next game in the bot's
        stderr log (written once the bot is running)."""
        self._log_label = text

    def needs_start(self) -> bool:
        """Would the next ``start_game`` start the bot (first game, after a crash, or
        to start it afresh)?"""
        return (self._restart is not None or self.conn is None or self.dead
                or self.session is None)

    def prepare(self) -> None:
        """Start the bot now if its next ``start_game`` would (so that a loop of many
        games can start many bots at once, in threads); that ``start_game`` raises
        the fault if the start failed."""
        try:
            self._started()
        except BotFault as e:
            self._start_fault = e

    def _started(self) -> None:
        if self._restart is not None and not self.dead and self.conn is not None:
            self._note(f"ending the bot to start it afresh: {self._restart}")
            self._end_connection()
        self._restart = None
        if self.conn is None or self.dead or self.session is None:
            self.connect()

    def start_game(self, game_id: str, seat: int, config: GameConfig, seed: int) -> None:
        fault, self._start_fault = self._start_fault, None
        if fault is not None:  # ``prepare`` failed to start it
            raise fault
        self._started()
        assert self.session is not None
        if self.conn is not None and self.conn.process is not None:
            label, self._log_label = self._log_label, None
            self.conn.process.stderr.mark(label or f"game {game_id}, seat {seat}")
        self._ids.clear()
        self._strays = 0
        self._late.clear()
        bots = self._bots if len(self._bots) == config.players else [
            self.name if s == seat else f"seat{s}" for s in range(config.players)]
        try:
            self._send(self.session.new_game(game_id, seat, config.to_dict(), bots))
        except TransportTimeout as e:
            raise self._stuck(e) from None
        except TransportClosed as e:
            raise self._lost("was gone", "at the start of the game", e) from None
        if self._frozen is not None:
            self._frozen.freeze(True)  # until its first request (it reads new_game then)
            fault = self._frozen_in_time("before its first turn")
            if fault is not None:
                raise fault

    def decide(self, request: DecisionRequest) -> Decision | str:
        """Ask for a decision and wait for it (``ask``, then ``take`` until it comes)."""
        self.ask(request)
        while True:
            got = self.take(None)
            if got is not None:
                return got

    # The same decision in two steps, for a loop that waits for many bots at once
    # (``referee.players.concurrent``): ``ask`` sends the request, ``take`` reads
    # what has arrived, ``expire`` gives up.  ``decide`` is ``ask`` then ``take``.

    def ask(self, request: DecisionRequest, *, timed: bool = True) -> None:
        """Send ``request``.  ``timed``: this player keeps the deadline (``take``
        raises the timeout); else whoever waits keeps it and calls ``expire``."""
        session = self.session
        conn = self.conn
        if self.dead or session is None or conn is None:
            fault, self._unreported = self._unreported, None
            raise fault or BotFault("crash", f"{self.name} is not running", fatal=True)
        legal = request.legal
        self._legal = legal
        fragment = self._fragment
        msg = session.request(request.seat, request.observation,
                              list(map(_decision_texts, legal)),
                              _event_dicts(request.events) if fragment is None
                              or self.on_message is not None  # the transcript reads dicts
                              else _event_fragments(request.events, fragment),
                              request.time_left)
        rid = msg["id"]
        self._ids[request.request_id] = rid
        self._asked = (rid, request)  # its allowance in words only if it times out
        self._told = 0  # replies discarded and told of (MAX_IGNORED_TOLD)
        frozen = self._frozen
        if frozen is not None:  # its turn: thawed before its time starts
            t = self.clock()
            frozen.freeze(False)
            start = self._start = self.clock()
            self.overhead = start - t
        else:
            start = self._start = self.clock()
        self._deadline = start + request.time_left if timed else float("inf")
        gate = self._gate
        if gate is not None:
            gate.open()  # its turn: a bot blocked on a full stderr is drained now
        try:
            if self.on_message is None:
                conn.transport.send(msg)
            else:
                self._send(msg)
        except TransportTimeout as e:
            raise self._stuck(e) from None
        except TransportClosed as e:
            raise self._lost("was gone", f"when asked request {rid}", e) from None

    def wait_handles(self) -> list[Any]:
        """What to wait on for the asked decision (file descriptors, ZeroMQ sockets:
        ``referee.transport.waiting``); ``take`` reads them."""
        if self.conn is None:
            return []
        handles = getattr(self.conn.transport, "wait_handles", None)
        return list(handles()) if handles is not None else []

    def expire(self) -> BotFault:
        """The asked decision did not come in time (the waiter's deadline)."""
        assert self.session is not None
        rid, request = self._asked
        self._late.add(rid)  # its one late reply is no stray
        fault = self._hold()
        if self.session is not None:
            self.session.abandon()
        return fault or BotFault("timeout", f"{self.name} sent no decision for request {rid} "
                                 f"within {_allowance(request)}")

    def _hold(self) -> BotFault | None:
        """Its turn is over: its capped logs wait for the next one (``TurnGate``), and
        a bot frozen between its turns is frozen (writing the freezer is the referee's
        time: ``overhead``; waiting until every process of it is frozen is the bot's:
        ``freeze_wait``).  A bot that uses more than ``FREEZE_LIMIT`` of CPU before it
        is frozen (or is not frozen within ``FREEZE_WALL_LIMIT``) is ended: the
        fault, fatal, is returned."""
        gate = self._gate
        if gate is not None:
            gate.close()
        frozen = self._frozen
        self.freeze_wait = 0.0
        if frozen is not None:
            t = self.clock()
            frozen.freeze(True)
            t2 = self.clock()
            self.overhead += t2 - t
            fault = self._frozen_in_time("after its turn")
            self.freeze_wait = self.clock() - t2
            return fault
        return None

    def _frozen_in_time(self, when: str) -> BotFault | None:
        """Wait until the bot, just asked to freeze, is frozen (while it uses at most
        ``FREEZE_LIMIT`` of CPU, and at most ``FREEZE_WALL_LIMIT``); if it is not,
        end it: the fatal fault naming it."""
        frozen = self._frozen
        if frozen is None:
            return None
        used = frozen.wait_frozen(FREEZE_LIMIT, FREEZE_WALL_LIMIT)
        if used is None:
            return None
        self.dead = True
        within = (f"{FREEZE_LIMIT * 1000:.0f} ms of its CPU" if used > FREEZE_LIMIT
                  else f"{FREEZE_WALL_LIMIT:g} s")
        detail = (f"{self.name} kept running {when}: could not be frozen within {within} "
                  f"(it used {used * 1000:.0f} ms of CPU after its freeze was asked: a "
                  f"process of it stayed busy inside the kernel, where a freezer cannot "
                  f"stop it, or left it unseen; RULES §5.4); its process is ended")
        self._note(f"not frozen: {detail}")
        self._end_connection()
        return BotFault("timeout", detail, fatal=True)

    def take(self, timeout: float | None) -> Decision | str | None:
        """The asked decision, if it arrives within ``timeout`` seconds (None: until
        the deadline of a ``timed`` ask); None if it has not (and that deadline has
        not passed).  Raises BotFault."""
        try:
            got = self._take(timeout)
        except BaseException:
            fault = self._hold()
            if fault is not None:
                raise fault from None
            raise
        if got is not None:
            fault = self._hold()
            if fault is not None:
                raise fault
        return got

    def _take(self, timeout: float | None) -> Decision | str | None:
        session = self.session
        conn = self.conn
        if session is None or conn is None:
            raise self._unreported or BotFault("crash", f"{self.name} is not running",
                                               fatal=True)
        transport = conn.transport
        legal = self._legal
        rid, request = self._asked
        deadline = self._deadline
        until = deadline if timeout is None else self.clock() + timeout
        while True:
            try:
                wait = (until if until < deadline else deadline) - self.clock()
                if self.on_message is None:
                    reply = transport.recv(wait if wait > 0.0 else 0.0)
                else:
                    reply = self._recv(wait if wait > 0.0 else 0.0)
                d = session.take_decision(reply)  # the common case, without a record
                if d is None:
                    event = session.receive(reply)
            except TransportTimeout:
                if self.clock() < deadline:
                    return None  # not yet
                raise self.expire() from None
            except TransportClosed as e:
                raise self._lost("ended", f"while deciding request {rid}", e) from None
            except MessageTooLarge as e:
                session.abandon()
                raise BotFault("oversized", f"{self.name} replied to request {rid} with {e}"
                               ) from None
            except MalformedMessage as e:
                session.abandon()
                raise BotFault("malformed", f"{self.name} replied to request {rid} with {e}"
                               ) from None
            except BotProtocolError as e:
                session.abandon()
                raise BotFault(e.kind, f"{self.name} replied to request {rid}: {e}") from None
            if d is None:
                if isinstance(event, IgnoredReply):
                    self._note(f"ignored: {event.reason}")
                    if type(event.id) is int and event.id in self._late:
                        self._late.discard(event.id)  # late, but asked for: once
                    else:
                        self._strays += 1
                        if self._strays >= MAX_STRAYS:
                            raise self._strayed(event) from None
                    if self._told < MAX_IGNORED_TOLD:
                        self._told += 1
                        try:
                            self._send(event.reply)
                        except TransportTimeout as e:
                            raise self._stuck(e) from None
                        except TransportClosed:
                            pass  # seen when its reply is read, or the next message sent
                    # Replies that are not the awaited one do not extend the wait: the
                    # deadline holds even while they keep coming.
                    if self.clock() >= deadline:
                        session.abandon()
                        self._late.add(rid)
                        raise BotFault("timeout", f"{self.name} sent no decision for request "
                                       f"{rid} within {_allowance(request)} (only replies "
                                       f"to other requests)") from None
                    continue
                assert isinstance(event, DecisionReply)
                d = event.decision
            if self.on_message is not None:
                self._note(f"latency request {rid}: {(self.clock() - self._start) * 1000:.3f} ms")
            if isinstance(d, int):
                if 0 <= d < len(legal):
                    return legal[d]
                raise BotFault("illegal", f"{self.name} chose index {d} for request {rid}, but "
                               f"the legal list has indices 0 to {len(legal) - 1}; "
                               f"{legal_now(legal)}")
            return d
    def _strayed(self, last: IgnoredReply) -> BotFault:
        """The bot sent ``MAX_STRAYS`` messages nobody asked for in this game: a fault
        that forfeits it (``MAX_STRAYS``).  Its process (its connection, for a remote
        bot, which could not tell why it was cut) is kept: what else it queued is
        read in its next game, and counts there."""
        assert self.session is not None
        self.session.abandon()
        detail = (f"{self.name} sent {self._strays} messages nobody asked for in this game "
                  f"(replies to no pending request; the last: {last.reason}): at most "
                  f"{MAX_STRAYS - 1} are discarded in a game")
        self._note(f"forfeit: {detail}")
        return BotFault("protocol", detail, fatal=True)

    def rejected(self, request_id: int, code: str, message: str, action: str,
                 substitute: str | None) -> None:
        """Optional Player hook: tell the bot its reply to ``request_id`` (the
        runner's id) was rejected or a fault recorded."""
        if (code == "timeout" and action == "forfeit" and self.conn is not None
                and self.conn.process is not None):
            # A bot that forfeits by running out of time is likely stuck (an endless
            # loop, a deadlock): kept as it is, it would spend its whole time in each
            # of its next games.  Ours to start, it is started afresh for the next one.
            self._restart = "it forfeited its last game by running out of time"
        rid = self._ids.get(request_id)
        if rid is None or self.dead or self.session is None or self.conn is None:
            return
        try:
            self._send(self.session.rejected(rid, code, message, action, substitute))
        except TransportTimeout as e:
            self._unreported = self._stuck(e)
        except TransportError as e:
            self._unreported = self._lost("was gone", "when told of a fault", e)

    def end_game(self, game_id: str, result: GameResult,
                 events: Sequence[dict[str, Any]]) -> None:
        frozen = self._frozen
        if frozen is not None:
            # Thawed while game_over is written (it may be larger than a pipe holds),
            # then frozen again: between games it takes no CPU either (other games'
            # bots may be on the clock), and reads game_over on its next turn.
            frozen.freeze(False)
        if self.conn is not None and self.conn.process is not None:
            self.conn.process.remember_tree(min_interval=1.0)  # at most 1 /proc scan a second
        if self.dead or self.session is None or self.conn is None:
            return
        msg = self.session.game_over(
            how=result.how, places=result.places, points=result.points,
            forfeits=result.forfeits, faults=[f.to_dict() for f in result.faults],
            events=events)
        try:
            self._send(msg)
        except TransportTimeout as e:
            raise self._stuck(e) from None
        except TransportClosed as e:
            raise self._lost("was gone", "at the end of the game", e) from None
        if frozen is not None:
            frozen.freeze(True)
            # Between games too: the next game's seats may be on the clock.
            self._unreported = self._frozen_in_time("after its game") or self._unreported

    # -- ending ----------------------------------------------------------------------

    def close(self) -> None:
        """Say bye, give the bot ``bye_grace`` seconds to exit, then end its tree."""
        if self.conn is None:
            return
        if not self.dead and self.session is not None:
            proc = self.conn.process
            if proc is not None:
                proc.gate.open(final=True)  # a bot blocked on its full stderr can exit
                proc.freeze(False)  # and a frozen one can read its bye
                proc.remember_tree()
            self._try_send(self.session.bye())
            if proc is not None:
                rc = proc.wait(self.bye_grace)
                self._note("exited after bye" if rc == 0 else
                           f"after bye: {proc.exit_description(ran=True)}")
        self._end_connection()

    def __enter__(self) -> ExternalPlayer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _log_paths(log_dir: str | None, name: str, transport: str) -> tuple[str | None, str | None]:
    if log_dir is None:
        return None, None
    os.makedirs(log_dir, exist_ok=True)
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
    return (os.path.join(log_dir, f"{safe}.stderr.log"),
            os.path.join(log_dir, f"{safe}.stdout.log") if transport == "zmq" else None)


def external_player(
    name: str,
    command: Sequence[str],
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    time_control: TimeControl | None = None,
    memory_mb: int | None = DEFAULT_MEMORY_MB,
    log_dir: str | None = None,
    *,
    transport: str = "stdio",
    max_message_bytes: int = MAX_MESSAGE_BYTES,
    stderr_cap: int = DEFAULT_STDERR_CAP,
    on_message: TranscriptHook | None = None,
    bye_grace: float = 1.0,
    kill_grace: float = 0.5,
    write_timeout: float | None = None,
    sandbox: Sandbox | None = None,
    zmq_transport: str = "ipc",
    log_name: str | None = None,
) -> ExternalPlayer:
    """A bot started as ``command`` (``launch_bot``: in ``sandbox`` when it is
    active) speaking JSON lines on its stdin/stdout (``transport="stdio"``) or
    msgpack over ZeroMQ (``"zmq"``, on ``zmq_transport`` ipc or tcp loopback).
    ``env`` is the bot's own variables; its stderr goes to
    ``log_dir/<name>.stderr.log`` (capped at ``stderr_cap`` bytes per file, across
    restarts, with a line marking each start and game), a ZeroMQ bot's stdout to
    ``<name>.stdout.log``.  A stdio bot that does not read a message within
    ``write_timeout`` seconds (default: the per-decision limit, at least 2 s) is
    ended as stuck."""
    tc = time_control or TimeControl()
    stderr_path, stdout_path = _log_paths(log_dir, log_name or name, transport)
    player: ExternalPlayer

    def on_stderr(line: str) -> None:
        if player.on_message is not None:
            player.on_message("stderr", name, line, time.time())

    def launch() -> Connection:
        return launch_bot(command, transport=transport, name=name, cwd=cwd, env=env,
                          sandbox=sandbox, memory_mb=memory_mb, stderr_path=stderr_path,
                          stdout_path=stdout_path, stderr_cap=stderr_cap, on_stderr=on_stderr,
                          max_message_bytes=max_message_bytes, zmq_transport=zmq_transport,
                          write_timeout=write_timeout if write_timeout is not None
                          else max(2.0, tc.per_decision))

    player = ExternalPlayer(name, launch, time_control=tc, max_message_bytes=max_message_bytes,
                          on_message=on_message, bye_grace=bye_grace, kill_grace=kill_grace)
    return player


def stdio_player(name: str, command: Sequence[str], cwd: str | None = None,
                 env: Mapping[str, str] | None = None,
                 time_control: TimeControl | None = None,
                 memory_mb: int | None = DEFAULT_MEMORY_MB, log_dir: str | None = None,
                 **options: Any) -> ExternalPlayer:
    """``external_player`` over stdio (JSON lines)."""
    return external_player(name, command, cwd, env, time_control, memory_mb, log_dir,
                           transport="stdio", **options)


# --- ZeroMQ players -----------------------------------------------------------------------------


def zmq_player(
    name: str,
    command: Sequence[str],
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    time_control: TimeControl | None = None,
    memory_mb: int | None = DEFAULT_MEMORY_MB,
    log_dir: str | None = None,
    *,
    transport: str = "ipc",
    **options: Any,
) -> ExternalPlayer:
    """A bot started as ``command`` speaking msgpack over ZeroMQ, as a runner
    ``Player``: ``referee.players.external.external_player`` with ``transport="zmq"`` (the same
    launcher and sandbox as stdio bots); ``transport`` here is ``ipc`` or ``tcp``
    (loopback)."""
    return external_player(name, command, cwd, env, time_control, memory_mb, log_dir,
                           transport="zmq", zmq_transport=transport, **options)


def remote_player(
    name: str,
    listener: RemoteListener,
    *,
    wait: float = 300.0,
    time_control: TimeControl | None = None,
    on_message: TranscriptHook | None = None,
    bye_grace: float = 1.0,
) -> ExternalPlayer:
    """A bot started by its author elsewhere, admitted by ``listener`` with its own
    CURVE key, as a runner ``Player``.  Each (re)connection waits up to ``wait``
    seconds for the bot to connect and say hello; the startup limit then applies to
    nothing more.  After a lost connection the bot must connect again (a new
    DEALER, a new hello) for its next game."""
    def launch() -> Connection:
        _, transport = listener.accept(wait, name)
        return Connection(transport, None)

    return ExternalPlayer(name, launch, time_control=time_control,
                        max_message_bytes=listener.max_message_bytes, on_message=on_message,
                        bye_grace=bye_grace)


@dataclass(frozen=True)
class BenchResult:
    games: int
    decisions: int
    seconds: float  # wall time of the games, bot start-up excluded
    cpu: float = 0.0  # the referee's CPU seconds in the games, bot start-up excluded

    @property
    def decisions_per_second(self) -> float:
        return self.decisions / self.seconds if self.seconds > 0 else 0.0


def bench_game_zmq(n_games: int, *, players: int = 2, seed: int = 1,
                   transport: str = "ipc", direct: bool = True) -> BenchResult:
    """Play ``n_games`` games between ``players`` trivial launched ZeroMQ bots
    (``python -m referee.transport.zmq.trivial_bot``; each bot started once and kept across the
    games) and time them.  For ``bench/protocol.py``, beside the stdio figure.
    ``direct=False``: through a libzmq ROUTER (``launch_zmq_bot``), to compare."""
    command = [sys.executable, "-m", "referee.transport.zmq.trivial_bot"]
    tc = TimeControl(startup=30.0, per_decision=10.0, bank=0.0)

    def launcher(i: int) -> Launcher:
        def launch() -> Connection:
            bot = launch_zmq_bot(command, name=f"zmq{i}", transport=transport, direct=direct,
                                 memory_mb=None)
            return Connection(bot.transport, bot.process)
        return launch

    seats = [ExternalPlayer(f"zmq{i}", launcher(i), time_control=tc) for i in range(players)]
    try:
        config = GameConfig(players=players)
        for p in seats:  # start-up and handshake outside the timing
            p.connect()
        decisions = 0
        cpu0 = time.process_time()
        t0 = time.perf_counter()
        for g in range(n_games):
            record = run_game(config, seed + g, seats, game_id=f"bench-{g}",
                              time_control=tc)
            if record.faults:
                raise RuntimeError(f"bench game {g}: {record.faults[0]}")
            decisions += len(record.decisions)
        return BenchResult(n_games, decisions, time.perf_counter() - t0,
                           time.process_time() - cpu0)
    finally:
        for p in seats:
            p.close()
