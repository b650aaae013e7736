"""Remote submission: authors send their bots to a league from their own machines,
over ZeroMQ with CURVE and the same keys as remote bots (``referee keys``).

Server (``referee league serve``): a ROUTER socket, CURVE server with the referee's
secret key.  Strangers are refused before they cost anything:

* the handshake is authenticated by a ZAP handler (pyzmq's ``zmq.auth``
  ThreadAuthenticator) that admits only the keys of the league's keys folder
  (``NAME.key``); an unknown key never gets to send a message, and the handler
  gives each admitted connection its author's NAME as ZeroMQ's User-Id;
* ``ZMQ_MAXMSGSIZE`` is the largest submission the league takes (``upload_limit``):
  libzmq drops a connection sending a bigger frame, from its header, before
  buffering it; ``RCVHWM`` keeps what one connection may have queued small;
* a request's author is known from the User-Id before anything of it is decoded;
  the header is decoded only if it is small, and an author over ``[server]``
  ``requests_per_hour``, ``submissions_per_hour`` or ``in_flight`` is refused
  before the payload is looked at.

Checks never block the door: a submission is written to the league's incoming
folder and queued; the answer is a ticket at once.  ``[server] checkers`` threads
(default 1) take the queue in turns by author, never two checks of one author at
once, each check in a process of its own (``referee.league.checkjob``) killed when
it exceeds ``[server] check_seconds``.
Status requests are answered by the request loop itself while checks and games
run.  Tickets live as long as the server.

Without keys (loopback endpoints only) any name may be used (and is limited per
name).

Client (``referee submit``): a DEALER socket; its monitor tells a key the league
does not know, and a wrong server key, from a server that does not answer.

Messages: ``[header JSON, payload]`` one way, ``[reply JSON]`` back::

    {"op": "submit", "name", "command": [...], "transport"} + the bot as .tar.gz
    {"op": "status", "name", "game": "g000012" | null, "ticket": 12 | null} + b""
    reply: {"ok": bool, "error"?, "text"?, "ticket"?: {"number", "state", "text",
            "accepted"?, "version"?}}

An author's status shows only their own tickets, entries' standings lines, games,
faults and stderr: never another bot's stderr (``browse.stderr_of`` reads only the
logs of the asking name's entries).  No reply holds a path of the organiser's
machine (``Server.public``).
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import io
import itertools
import json
import os
import re
import resource
import secrets
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import zmq
import zmq.auth
import zmq.auth.thread
from zmq.utils import z85
from zmq.utils.monitor import recv_monitor_message

from ..errors import ExecutionError
from ..text.quoting import command_line, printable, show
from ..tournament.outcome import GameOutcome as Outcome
from ..tournament.standings import Standings
from ..transport.zmq.keys import KeyFileError, load_allowed_keys, load_public_key, load_secret_key
from ..transport.zmq.router import is_loopback
from .browse import games as list_games
from .browse import stderr_of
from .config import Limits, ServerLimits
from .door import REPLY_MIN, Door, DoorError, loopback_sources, tcp_address
from .door import Limits as DoorLimits
from .results import config_of, standings
from .schedule import keyed, name_of
from .store import LeagueStore

#: The host's pid in a stderr log's start line: not an author's business.
_HOST_PID = re.compile(r"bot started \(pid \d+\)")


def author_view(log: str) -> str:
    """A bot's stderr log as its author is shown it: without the process ids of the
    organiser's machine (the log's "bot started (pid N)" lines)."""
    return _HOST_PID.sub("bot started", log)

#: Replies queued for one connection that does not read them; past it they are dropped.
REPLIES_QUEUED = 4
#: The most of one bot's stderr in one game a status reply shows (its end).
STDERR_SHOWN = 64 * 1024

#: An absolute path in a reply's text: a "/" not inside a word, a URL or a relative
#: path, and what follows it up to a space or a quote; the sandbox's /bot is kept.
_ABSOLUTE_PATH = re.compile(r"(?<![\w.~:/-])/(?!bot(?:/|\b))[^\s'\"`,;)\]]+")

ZAP_DOMAIN = "updown-league"
DEFAULT_SUBMIT_LISTEN = "tcp://127.0.0.1:5556"
#: The version of the remote submission protocol this module speaks (leagues/README.md,
#: "The remote protocol"): 2 uploads a bot in chunks; 1 sent it in one frame.
PROTOCOL = 2
#: The biggest request header (JSON) decoded.
MAX_HEADER = 16 << 10
#: The most of an upload one request carries.
CHUNK = 64 << 10
#: The biggest frame the server takes (ZMQ_MAXMSGSIZE): a header or a chunk.
MAX_FRAME = CHUNK + 1024
#: What a connection may send that the server has not answered yet (the door cuts it
#: past this): two requests of the largest kind, with their envelopes.
UNANSWERED = 2 * (MAX_HEADER + MAX_FRAME + 1024)
#: Unanswered complete messages libzmq keeps per connection.
RCVHWM = 2
#: How long a connection may take over its handshake (ms).
HANDSHAKE_MS = 3000
HOUR = 3600.0
DONE = ("accepted", "refused", "failed")


class RemoteError(ExecutionError):
    """A remote submission that could not be made (one line)."""


def upload_limit(limits: Limits) -> int:
    """The biggest message the server takes: the largest submission the league
    accepts (its unpacked bytes, incompressible at worst, and 128 bytes of
    compressed tar header per file) plus the request header."""
    return limits.max_bytes + 128 * limits.max_files + MAX_HEADER + (64 << 10)


#: The ZAP status of a known key's handshake the door refused (``Door.admit``): its
#: connections all held, or its handshakes of the hour all made.  (libzmq tells a
#: client 400 or 500 only: a 300 closes the connection without a word.)
ZAP_STATUS = {"full": b"500", "hour": b"500"}
#: A key's handshakes an hour, per request of ``requests_per_hour``: an author asking
#: one request per connection meets the limit on requests first (whose refusal says
#: when to try again); one reconnecting without asking meets this one.
HANDSHAKES_PER_REQUEST = 2
#: Connections whose client has sent nothing yet the door holds, per handshake of
#: ``[server] handshakes``: they cost the server nothing (the door has not connected
#: them to it), and the more of them, the longer a client that has just connected
#: has to send its first bytes under a flood of silent connections.
QUIET_PER_HANDSHAKE = 16


class _Allowed(zmq.auth.thread.ThreadAuthenticator):
    """Admit at the handshake only the authors' keys; the connection's User-Id is
    the author's NAME.  With ``admit`` (the door's), a known key is admitted only if
    the door says so: the ZAP request's address is the door's own loopback address
    for that connection (measured: libzmq gives the peer's IP, without its port, on
    tcp://; on ipc:// it gives ``localhost:UID:GID:PID``, the same for every
    connection of the door), so the door counts a key's connections.  A key over its
    share is refused with ZAP status 500 (the client sees HANDSHAKE_FAILED_AUTH with
    500, not an unknown key's 400), and so is a key over its handshakes of the hour."""

    def __init__(self, ctx: zmq.Context[Any], owners: dict[bytes, str],
                 on_refused: Callable[[bytes], None]) -> None:
        super().__init__(ctx)
        self.owners = owners
        self.on_refused = on_refused
        self.admit: Callable[[str, str], str | None] | None = None
        self._address = ""
        self._status = b"400"

    async def handle_zap_message(self, msg: list[bytes]) -> None:
        # One request at a time (the authenticator's thread awaits each in turn).
        self._address = msg[3].decode("utf-8", "replace") if len(msg) > 3 else ""
        self._status = b"400"
        await super().handle_zap_message(msg)

    def callback(self, domain: str, key: bytes) -> bool:
        name = self.owners.get(key)
        if name is None:
            self.on_refused(key)
            return False
        why = None if self.admit is None else self.admit(self._address, name)
        if why in ZAP_STATUS:
            self._status = ZAP_STATUS[why]
        return why is None

    def curve_user_id(self, client_public_key: bytes) -> str:
        return self.owners[z85.encode(client_public_key)]

    def _send_zap_reply(self, request_id: bytes, status_code: bytes, status_text: bytes,
                        user_id: str = "anonymous") -> None:
        if status_code == b"400":
            status_code = self._status
        super()._send_zap_reply(request_id, status_code, status_text, user_id)


class RefusalLog:
    """The log lines of handshakes refused for unknown keys, bounded: in each
    ``window`` (a minute), the first ``shown`` fresh keys a line each, then one
    summary when the window ends ("refused N handshakes from M unknown keys in the
    last minute"); a flood of fresh keys is a few lines a minute, never a log flood.
    Thread-safe: the ZAP handler's thread refuses, the request loop ticks."""

    SHOWN = 5
    KEYS_COUNTED = 100_000  # distinct keys remembered per window; past it, "at least"

    def __init__(self, on_line: Callable[[str], None], window: float = 60.0) -> None:
        self.on_line = on_line
        self.window = window
        self._lock = threading.Lock()
        self._start: float | None = None
        self._handshakes = 0
        self._keys: set[bytes] = set()
        self._shown = 0

    def refused(self, key: bytes, now: float | None = None) -> None:
        now = time.monotonic() if now is None else now
        self.tick(now)
        with self._lock:
            if self._start is None:
                self._start = now
            self._handshakes += 1
            fresh = key not in self._keys
            if fresh and len(self._keys) < self.KEYS_COUNTED:
                self._keys.add(key)
            show = fresh and self._shown < self.SHOWN
            if show:
                self._shown += 1
        if show:
            said = printable(key.decode("ascii", "replace")[:40])
            self.on_line(f"refused a connection: key {said} is no author's"
                         + (" (more this minute are counted, not each logged)"
                            if self._shown == self.SHOWN else ""))

    def tick(self, now: float | None = None) -> None:
        """At the end of a window: its summary, if it refused more than it logged."""
        now = time.monotonic() if now is None else now
        with self._lock:
            if self._start is None or now - self._start < self.window:
                return
            handshakes, keys, shown = self._handshakes, len(self._keys), self._shown
            self._start, self._handshakes, self._keys, self._shown = None, 0, set(), 0
        if handshakes > shown:
            many = "at least " if keys >= self.KEYS_COUNTED else ""
            span = "minute" if self.window == 60 else f"{self.window:g} s"
            self.on_line(f"refused {handshakes} handshakes from {many}{keys} unknown keys "
                         f"in the last {span} (the first {shown} logged above)")


@dataclass
class Ticket:
    number: int  # the author's own: their 1st, 2nd... submission to this server
    serial: int  # the league's (the organiser's log and files): never shown to authors
    name: str
    command: list[str]
    transport: str
    upload: Path
    size: int
    state: str = "queued"  # checking, accepted, refused, failed
    queued: float = field(default_factory=time.monotonic)
    started: float | None = None
    text: str = ""
    version: int | None = None

    @property
    def label(self) -> str:
        """How the organiser's log names it: the league's number and the author's."""
        return f"#{self.serial} ({self.name}'s #{self.number})"

    def line(self, ahead: int | None = None) -> str:
        if self.state == "queued":
            return (f"#{self.number} queued"
                    + (f" ({ahead} of yours ahead of it)" if ahead else "")
                    + f", {self.size} bytes, command {command_line(self.command)}")
        if self.state == "checking":
            assert self.started is not None
            return f"#{self.number} being checked ({time.monotonic() - self.started:.0f} s so far)"
        return f"#{self.number} {self.state}" + (f": {self.name} version {self.version}"
                                                 if self.version else "")

    def to_dict(self) -> dict[str, Any]:
        return {"number": self.number, "state": self.state, "text": self.text,
                "accepted": self.state == "accepted" if self.state in DONE else None,
                "version": self.version}


def _last_serial(folder: Path, saved: Path) -> int:
    """The last submission number a server of this league gave: the one it saved,
    or the highest of the files it left in ``folder`` (if that file was lost)."""
    last = 0
    with contextlib.suppress(OSError, ValueError):
        last = int(saved.read_text(encoding="ascii").strip())
    with contextlib.suppress(OSError):
        for p in folder.iterdir():
            head = p.name.split("-", 1)[0].split(".", 1)[0]
            if head.isdigit() and len(head) < 19:
                last = max(last, int(head))
    return last


def _own_ahead(ticket: Ticket, queue: list[Ticket]) -> int | None:
    """How many of its author's own tickets wait before ``ticket`` (None: not
    queued).  Never the whole queue's length: that would tell an author how busy
    the league is with other authors' submissions."""
    if ticket not in queue:
        return None
    return sum(t.name == ticket.name for t in queue[:queue.index(ticket)])


@dataclass
class _Upload:
    """A bot being uploaded in chunks, straight to a file in the league's staging
    folder (never held in memory)."""

    token: str
    path: Path
    file: BinaryIO
    size: int
    sha256: str
    command: list[str]
    transport: str
    received: int = 0
    hasher: Any = field(default_factory=hashlib.sha256)
    touched: float = field(default_factory=time.monotonic)
    began: float = field(default_factory=time.monotonic)

    @property
    def chunks(self) -> int:
        """How many chunks it takes: every one but the last is a whole ``CHUNK``."""
        return -(-self.size // CHUNK)

    def drop(self) -> None:
        with contextlib.suppress(OSError):
            self.file.close()
        with contextlib.suppress(OSError):
            self.path.unlink()


@dataclass
class _Author:
    upload: _Upload | None = None
    expired: bool = False  # their last upload was dropped for sitting idle
    numbers: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    requests: collections.deque[float] = field(default_factory=collections.deque)
    submissions: collections.deque[float] = field(default_factory=collections.deque)
    tickets: list[Ticket] = field(default_factory=list)

    def in_flight(self) -> int:
        return sum(t.state in ("queued", "checking") for t in self.tickets)


def _within_hour(times: collections.deque[float], now: float) -> int:
    while times and times[0] <= now - HOUR:
        times.popleft()
    return len(times)


@dataclass
class Server:
    league_dir: Path
    listen: str = DEFAULT_SUBMIT_LISTEN
    keys_dir: str | None = None
    server_secret: str | None = None
    on_line: Callable[[str], None] = lambda text: None
    #: How often the refused handshakes of unknown keys are summed up in the log.
    refusal_window: float = 60.0
    #: Draws an author's game as a page (``submit --status --game ID --html``):
    #: (record, the seats whose view to show or None for every card, scrub) -> HTML.
    #: Given by the command line (``referee.report``); None: no pages.
    replay: Replay | None = None

    def __post_init__(self) -> None:
        if (self.keys_dir is None) != (self.server_secret is None):
            raise RemoteError("CURVE needs both --keys (the authors' public keys, NAME.key) "
                              "and --server-key (the referee's secret key), or neither (on a "
                              "loopback endpoint)")
        if self.keys_dir is None and not is_loopback(self.listen):
            raise RemoteError(f"listening on {self.listen} (not loopback) needs CURVE keys: "
                              "give --keys DIR and --server-key referee.key_secret, or listen "
                              f"on loopback, e.g. {DEFAULT_SUBMIT_LISTEN}")
        try:
            self.owners: dict[bytes, str] | None = None
            secret: bytes | None = None
            if self.keys_dir is not None:
                assert self.server_secret is not None
                self.owners = {k: n for n, k in load_allowed_keys(self.keys_dir).items()}
                secret = load_secret_key(self.server_secret)
        except KeyFileError as e:
            raise RemoteError(str(e)) from None
        store = LeagueStore.open(self.league_dir)  # the league must exist
        try:
            config = config_of(store)
        finally:
            store.close()
        self.limits: ServerLimits = config.server
        self.max_message = upload_limit(config.limits)
        self.max_bytes = config.limits.max_bytes
        self.incoming = self.league_dir / "entries"
        self.incoming.mkdir(parents=True, exist_ok=True)
        for stale in self.incoming.glob(".upload-*"):  # a server killed mid-upload left it
            with contextlib.suppress(OSError):
                stale.unlink()
        self.log_dir = self.league_dir / "checks"
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.authors: dict[str, _Author] = {}
        # The league's submission numbers go on from the last server's: its files in
        # checks/ (a refused check's report) are never overwritten by a later one.
        self._serial_file = self.log_dir / "last-number"
        self.serials = itertools.count(_last_serial(self.log_dir, self._serial_file) + 1)
        self._lock = threading.Condition()
        self._queue: list[Ticket] = []
        self._last_served: dict[str, float] = {}
        self.refusals = RefusalLog(self.on_line, self.refusal_window)
        self._standings = StandingsCache()
        self._checks: set[subprocess.Popen[bytes]] = set()
        self._checking: set[str] = set()  # the authors whose check is running
        self.ctx = zmq.Context()
        self.auth: _Allowed | None = None
        self.sock = self.ctx.socket(zmq.ROUTER)
        self.sock.setsockopt(zmq.LINGER, 1000)
        # A frame is a header or a chunk of an upload, never a whole bot: what one
        # connection may hold in the server is small (the door bounds its frames).
        self.sock.setsockopt(zmq.MAXMSGSIZE, MAX_FRAME)
        self.sock.setsockopt(zmq.RCVHWM, RCVHWM)
        # Replies an author does not read are dropped past a few per connection:
        # never queued without bound in the server's memory.
        self.sock.setsockopt(zmq.SNDHWM, REPLIES_QUEUED)
        self.sock.setsockopt(zmq.HANDSHAKE_IVL, HANDSHAKE_MS)
        self.sock.setsockopt(zmq.ROUTER_MANDATORY, 0)
        if secret is not None:
            assert self.owners is not None
            self.auth = _Allowed(self.ctx, self.owners, self.refusals.refused)
            self.auth.start()
            self.auth.configure_curve_callback(ZAP_DOMAIN, self.auth)
            self.sock.setsockopt(zmq.CURVE_SERVER, 1)
            self.sock.setsockopt(zmq.CURVE_SECRETKEY, secret)
            self.sock.setsockopt(zmq.CURVE_PUBLICKEY, zmq.curve_public(secret))
            self.sock.setsockopt(zmq.ZAP_DOMAIN, ZAP_DOMAIN.encode())
        self.door: Door | None = None
        self._private: str | None = None
        self._stop = threading.Event()  # before anything close() may be called after
        self._checkers: list[threading.Thread] = []
        try:
            if tcp_address(self.listen) is None:  # ipc://, inproc://: local already
                self.sock.bind(self.listen)
                self.endpoint = self.sock.getsockopt_string(zmq.LAST_ENDPOINT)
            else:
                self.door = self._door()
                self.endpoint = self.door.endpoint
        except (zmq.ZMQError, OSError, DoorError) as e:
            self.close()
            raise RemoteError(f"cannot listen on {self.listen}: {e}") from None
        if self.door is not None:
            self.door.start()
        self._checkers = [threading.Thread(target=self._check_loop, name=f"league-checks-{i}",
                                           daemon=True) for i in range(self.limits.checkers)]
        for checker in self._checkers:
            checker.start()

    def _door(self) -> Door:
        """TCP goes through the door; the socket listens where only it reaches.  With
        keys, that is a loopback TCP port which the door connects to from an address
        of its own for each connection, so that the ZAP handler knows whose
        connection a handshake is (``Door.admit``: a key's share, and no handshake
        but the door's); without keys (loopback only) or where the door cannot take
        such addresses, a private ipc:// endpoint."""
        limits = self.limits
        # a connection that has sent nothing yet takes one descriptor, the door's
        want = limits.connections + limits.handshakes + \
            QUIET_PER_HANDSHAKE * limits.handshakes // FDS_PER_CONNECTION
        share = _enough_descriptors(want, self.on_line) / want
        handshakes = max(1, int(limits.handshakes * share))
        connections = max(1, int(limits.connections * share))
        quiet = QUIET_PER_HANDSHAKE * handshakes
        upstream: str | tuple[str, int]
        if self.auth is not None and loopback_sources():
            self.sock.setsockopt(zmq.BACKLOG, 1024)
            self.sock.bind("tcp://127.0.0.1:*")
            upstream = ("127.0.0.1", int(self.sock.getsockopt_string(zmq.LAST_ENDPOINT)
                                         .rsplit(":", 1)[1]))
        else:
            if self.auth is not None:
                self.on_line("this machine does not let the door connect from addresses of "
                             "its own (127.0.0.0/8): [server] connections_per_author is not "
                             "enforced")
            self._private = tempfile.mkdtemp(prefix="referee-door-")
            upstream = os.path.join(self._private, "door")
            self.sock.bind(f"ipc://{upstream}")
        door = Door(self.listen, upstream, limits=DoorLimits(
            connections=connections, per_ip=limits.connections_per_ip,
            handshakes=handshakes, handshakes_per_ip=limits.handshakes_per_ip,
            per_author=limits.connections_per_author, handshake_seconds=HANDSHAKE_MS / 1000,
            idle_seconds=limits.idle_seconds, budget=UNANSWERED,
            rate_per_ip=limits.handshake_rate_per_ip,
            per_hour=HANDSHAKES_PER_REQUEST * limits.requests_per_hour, quiet=quiet),
            on_line=self.on_line, window=self.refusal_window)
        if self.auth is not None:
            self.auth.admit = door.admit
        return door

    def close(self) -> None:
        self._stop.set()
        if getattr(self, "door", None) is not None:
            assert self.door is not None
            self.door.close()
        with self._lock:
            self._lock.notify_all()
            checks = list(self._checks)
        for check in checks:
            _kill(check)
        for checker in getattr(self, "_checkers", []):
            checker.join(10)
        self.sock.close(0)
        if self.auth is not None:
            self.auth.stop()
        self.ctx.term()
        for t in self._queue:
            with contextlib.suppress(OSError):
                t.upload.unlink()
        for a in self.authors.values():
            if a.upload is not None:
                a.upload.drop()
        if getattr(self, "_private", None):
            assert self._private is not None
            shutil.rmtree(self._private, ignore_errors=True)

    def stop(self) -> None:
        self._stop.set()
        with self._lock:
            self._lock.notify_all()

    def public(self, text: str) -> str:
        """``text`` as a reply shows it: without a path of the organiser's machine
        (every absolute path shown as ``<path>``, but the sandbox's own ``/bot``, the
        same on every machine), and with every character that is not printable
        escaped (``printable``: newlines and tabs kept), whatever the author sent that
        it echoes (a ticket, a game id, a name) and whatever their bot wrote: an
        author's own client need not escape it (the network attacker's ticket
        number of escape codes came back raw).  Paths by their shape, never by
        comparing them with the server's own paths: a reply that changed only the
        server's paths would tell an author which of the paths they sent are real
        (an oracle, one guess per path sent)."""
        return printable(_ABSOLUTE_PATH.sub("<path>", text), keep_tabs=True,
                         keep_newlines=True)

    # --- the request loop ---------------------------------------------------------

    def serve(self) -> None:
        """Answer requests until ``stop()`` (or KeyboardInterrupt)."""
        poller = zmq.Poller()
        poller.register(self.sock, zmq.POLLIN)
        while not self._stop.is_set():
            ready = poller.poll(200)
            self.refusals.tick()
            self._expire_uploads()
            if not ready:
                continue  # look at _stop again
            frames = self.sock.recv_multipart(copy=False)
            ident = frames[0].bytes
            try:
                reply = self.handle(frames[1:])
            except Exception as e:  # a bug must not take the server down, nor say where
                self.on_line(f"the server failed on a request: {type(e).__name__}: {e}")
                reply = {"ok": False, "error": "the server failed on this request (the "
                                               "organiser's log says why)"}
            if not reply.get("ok"):
                reply["error"] = self.public(str(reply.get("error")))
            if "text" in reply:
                reply["text"] = self.public(str(reply["text"]))
            if isinstance(reply.get("ticket"), dict) and "text" in reply["ticket"]:
                reply["ticket"]["text"] = self.public(str(reply["ticket"]["text"]))
            reply["v"] = PROTOCOL
            # Every reply is at least REPLY_MIN bytes: the door tells replies from the
            # server's other frames by their size (door.py).
            self.sock.send_multipart([ident, json.dumps(reply).encode().ljust(REPLY_MIN)])

    def handle(self, frames: list[zmq.Frame]) -> dict[str, Any]:
        # Who is asking, before anything of the request is decoded.
        owner: str | None = None
        if self.owners is not None:
            with contextlib.suppress(zmq.ZMQError, IndexError, KeyError):
                owner = str(frames[0].get("User-Id"))
            if owner not in self.owners.values():
                return {"ok": False, "error": "your key is not one of this league's authors' "
                                              "keys: send your public key (NAME.key) to the "
                                              "organiser"}
        if not 1 <= len(frames) <= 2 or len(frames[0]) > MAX_HEADER:
            return {"ok": False, "error": "not a submission request (a JSON header, then "
                                          "the bot): use 'referee submit'"}
        now = time.monotonic()
        author = None if owner is None else self.authors.setdefault(owner, _Author())
        if author is not None and author.upload is None and self._over_requests(author, now):
            return self._over(str(owner), author.requests, now, "requests",
                              self.limits.requests_per_hour, "requests_per_hour")
        try:
            header = json.loads(frames[0].bytes)  # at most MAX_HEADER bytes
            assert isinstance(header, dict)
        except (ValueError, AssertionError):
            return {"ok": False, "error": "not a submission request (a JSON header, then "
                                          "the bot): use 'referee submit'"}
        name = header.get("name")
        if not isinstance(name, str) or len(name) > 200:
            return {"ok": False, "error": "the request names no bot"}
        if owner is not None and owner != name:
            self.on_line(f"refused {owner}'s request to act as {name!r}")
            return {"ok": False, "error": f"your key is {owner}'s: it submits and reads "
                    f"only as {owner!r}, not {name!r}"}
        if author is None:  # no keys (loopback): limited per name
            author = self.authors.setdefault(name, _Author())
            if author.upload is None and self._over_requests(author, now):
                return self._over(name, author.requests, now, "requests",
                                  self.limits.requests_per_hour, "requests_per_hour")
        op = header.get("op")
        version = header.get("v", 1)
        if version != PROTOCOL and not (version == 1 and op == "status"):
            author.requests.append(now)
            if isinstance(version, int) and not isinstance(version, bool):
                said = f"speaks version {str(version)[:20]}"
            else:  # shown as JSON writes it (the reply is escaped where it is sent)
                said = f'sends "v": {json.dumps(version)[:40]}, which is no version number'
            return {"ok": False, "error": (
                f"this league speaks version {PROTOCOL} of the remote submission protocol "
                f"(bots uploaded in chunks); your client {said}: update "
                "updown-referee ('referee submit' of version 2 of the protocol or later)")}
        data = frames[1] if len(frames) > 1 else None
        if op == "chunk":
            reply = self.do_chunk(name, author, header, data, now)
            if not reply.get("ok"):  # a chunk that is taken costs no request; others do
                author.requests.append(now)
            return reply
        if author.upload is not None and self._over_requests(author, now):
            return self._over(name, author.requests, now, "requests",
                              self.limits.requests_per_hour, "requests_per_hour")
        author.requests.append(now)
        if op == "begin":
            return self.do_begin(name, author, header, now)
        if op == "commit":
            return self.do_commit(name, author, header)
        if op == "status":
            return self.do_status(name, author, header)
        if op == "replay":
            return self.do_replay(name, header)
        return {"ok": False, "error": f"unknown request {str(op)[:40]!r}: begin, chunk, "
                                      "commit, status or replay"}

    def _over_requests(self, author: _Author, now: float) -> bool:
        return _within_hour(author.requests, now) >= self.limits.requests_per_hour

    def _over(self, name: str, times: collections.deque[float], now: float, what: str,
              limit: int, key: str) -> dict[str, Any]:
        wait = max(1, int(times[0] + HOUR - now) + 1)
        return {"ok": False, "error": f"{name} has sent {limit} {what} in the last hour, the "
                f"league's limit ([server] {key}): try again in {wait} s"}

    def _room(self, name: str, author: _Author, now: float) -> dict[str, Any] | None:
        """Why ``name`` may not submit now (an error reply), or None."""
        with self._lock:
            if author.in_flight() >= self.limits.in_flight:
                return {"ok": False, "error": f"{name} has {author.in_flight()} submissions "
                        f"queued or being checked, the league's limit ([server] in_flight): "
                        "follow them with 'referee submit --status'"}
            if _within_hour(author.submissions, now) >= self.limits.submissions_per_hour:
                return self._over(name, author.submissions, now, "submissions",
                                  self.limits.submissions_per_hour, "submissions_per_hour")
            if len(self._queue) >= self.limits.queue:
                return {"ok": False, "error": f"the league's queue is full ({self.limits.queue} "
                        "submissions waiting, [server] queue): try again later"}
        return None

    def do_begin(self, name: str, author: _Author, header: dict[str, Any],
                 now: float) -> dict[str, Any]:
        """An upload, granted within the author's limits: it counts as a submission
        (of the hour's) from now on; the author's unfinished one, if any, is dropped
        (one upload per author at a time)."""
        command = header.get("command")
        transport = header.get("transport", "stdio")
        size = header.get("size")
        digest = header.get("sha256")
        if not (isinstance(command, list) and command and len(command) <= 1000
                and all(isinstance(w, str) for w in command)):
            return {"ok": False, "error": "the request has no command (a list of words)"}
        if transport not in ("stdio", "zmq"):
            return {"ok": False, "error": f"transport must be stdio or zmq, not "
                                          f"{str(transport)[:40]!r}"}
        if isinstance(size, bool) or not isinstance(size, int) or size < 1:
            return {"ok": False, "error": "the request declares no size (bytes, at least 1)"}
        if size > self.max_message:
            return {"ok": False, "error": f"the bot is {size} bytes packed, more than this "
                    f"league takes ({self.max_message} bytes for [limits] max_bytes = "
                    f"{self.max_bytes} unpacked)"}
        if not (isinstance(digest, str) and re.fullmatch(r"[0-9a-f]{64}", digest)):
            return {"ok": False, "error": "the request declares no sha256 (64 hex digits)"}
        refused = self._room(name, author, now)
        if refused is not None:
            return refused
        if author.upload is not None:
            self.on_line(f"{name} began a new upload: the unfinished one "
                         f"({author.upload.received} of {author.upload.size} bytes) is dropped")
            author.upload.drop()
            author.upload = None
        fd, tmp = tempfile.mkstemp(prefix=".upload-", suffix=".tar.gz", dir=self.incoming)
        author.upload = _Upload(secrets.token_hex(8), Path(tmp), os.fdopen(fd, "wb"), size,
                                digest, list(command), str(transport))
        author.submissions.append(now)
        return {"ok": True, "upload": author.upload.token, "chunk": CHUNK,
                "text": f"send {size} bytes in chunks of at most {CHUNK}"}

    def _no_upload(self, name: str, author: _Author, header: dict[str, Any]) -> str | None:
        up = author.upload
        if up is not None and header.get("upload") == up.token:
            return None
        why = (f" (the last one was dropped after {self.limits.upload_seconds} s without "
               "a chunk, or not done in that much a chunk: [server] upload_seconds)"
               if author.expired else "")
        return f"{name} has no such upload in progress{why}: begin again"

    def do_chunk(self, name: str, author: _Author, header: dict[str, Any],
                 data: zmq.Frame | None, now: float) -> dict[str, Any]:
        missing = self._no_upload(name, author, header)
        if missing is not None:
            return {"ok": False, "error": missing}
        up = author.upload
        assert up is not None
        offset = header.get("offset")
        if offset != up.received:
            return {"ok": False, "error": f"a chunk at {str(offset)[:20]}, where {up.received} "
                                          "was expected (the bytes received so far)"}
        # Every chunk but the last is a whole CHUNK: an upload is at most
        # ceil(size / CHUNK) chunks (each renewing its expiry), never a flood of
        # 1-byte ones (found by an attacker: 3,700 uncounted requests a second).
        expected = min(CHUNK, up.size - up.received)
        if data is None or len(data) != expected:
            return {"ok": False, "error": f"a chunk at {up.received} of this upload holds "
                                          f"{expected} bytes (every chunk {CHUNK} bytes, "
                                          "but the last: the rest)"}
        try:
            up.file.write(data.buffer)
        except OSError as e:
            self.on_line(f"{name}'s upload could not be written: {e}")
            self._drop_upload(author)
            return {"ok": False, "error": "the league could not store the upload (the "
                                          "organiser's log says why)"}
        up.hasher.update(data.buffer)
        up.received += len(data)
        up.touched = now
        return {"ok": True, "received": up.received}

    def _drop_upload(self, author: _Author) -> None:
        if author.upload is not None:
            author.upload.drop()
            author.upload = None

    def _expire_uploads(self) -> None:
        now = time.monotonic()
        for name, author in list(self.authors.items()):
            up = author.upload
            if up is None:
                continue
            idle = now - up.touched > self.limits.upload_seconds
            # and however it is fed, an upload ends: upload_seconds a chunk at most
            late = now - up.began > self.limits.upload_seconds * up.chunks
            if idle or late:
                self._drop_upload(author)
                author.expired = True
                why = (f"no chunk for {self.limits.upload_seconds} s" if idle else
                       f"not done in {self.limits.upload_seconds} s a chunk")
                self.on_line(f"{name}'s upload expired: {up.received} of {up.size} bytes, "
                             f"{why} ([server] upload_seconds); its file is removed")

    def do_commit(self, name: str, author: _Author, header: dict[str, Any]) -> dict[str, Any]:
        missing = self._no_upload(name, author, header)
        if missing is not None:
            return {"ok": False, "error": missing}
        up = author.upload
        assert up is not None
        if up.received != up.size:
            return {"ok": False, "error": f"{up.received} of the {up.size} bytes declared have "
                                          "come: send the rest"}
        if up.hasher.hexdigest() != up.sha256:
            self._drop_upload(author)
            return {"ok": False, "error": f"the bytes received have the sha256 "
                    f"{up.hasher.hexdigest()}, not the {up.sha256} declared: the upload is "
                    "dropped; begin again"}
        try:
            up.file.close()
        except OSError as e:
            self.on_line(f"{name}'s upload could not be written: {e}")
            self._drop_upload(author)
            return {"ok": False, "error": "the league could not store the upload (the "
                                          "organiser's log says why)"}
        author.upload = None
        author.expired = False
        with self._lock:
            if len(self._queue) >= self.limits.queue:
                up.drop()
                return {"ok": False, "error": f"the league's queue is full ({self.limits.queue} "
                        "submissions waiting, [server] queue): try again later"}
            ticket = Ticket(next(author.numbers), next(self.serials), name, up.command,
                            up.transport, up.path, up.size)
            with contextlib.suppress(OSError):
                self._serial_file.write_text(f"{ticket.serial}\n", encoding="ascii")
            author.tickets.append(ticket)
            del author.tickets[:-20]
            # Only the author's own tickets: the shared queue's length is other
            # authors' business (how many submit, and when).
            ahead = sum(t.name == name for t in self._queue)
            self._queue.append(ticket)
            self._lock.notify_all()
        self.on_line(f"submission from {name}: {ticket.size} bytes, command "
                     f"{command_line(ticket.command)}, queued as {ticket.label}")
        return {"ok": True, "ticket": ticket.to_dict(),
                "text": f"queued as #{ticket.number}"
                        + (f" ({ahead} of yours ahead of it)" if ahead else "")
                        + "; 'referee submit --status' to follow it"}

    def do_status(self, name: str, author: _Author, header: dict[str, Any]) -> dict[str, Any]:
        number = header.get("ticket")
        with self._lock:
            mine = list(author.tickets)
            queue = list(self._queue)
        if number is not None:
            if not isinstance(number, int) or isinstance(number, bool):
                return {"ok": False, "error": f"a ticket is a number ('submit --status "
                        f"--ticket N'), not {show(number, 20)}"}
            found = [t for t in mine if t.number == number]
            if not found:
                return {"ok": False, "error": f"{name} has no ticket #{str(number)[:20]}"}
            t = found[0]
            return {"ok": True, "ticket": t.to_dict(),
                    "text": t.text if t.state in DONE else t.line(_own_ahead(t, queue))}
        lines = []
        if mine:
            lines.append("submissions: " + "; ".join(
                t.line(_own_ahead(t, queue)) for t in mine[-5:]))
        lines.append(status_text(self.league_dir, name, header.get("game"),
                                 cache=self._standings))
        return {"ok": True, "text": "\n".join(lines)}

    def do_replay(self, name: str, header: dict[str, Any]) -> dict[str, Any]:
        """An author's own game (``{"op": "replay", "name", "game", "format": "html"
        | "record"}``): the page shows only what the author's seats could see unless
        the league publishes full records (``[league] records = "full"``); the record
        itself (every card) is given only then."""
        fmt = header.get("format", "html")
        if fmt not in ("html", "record"):
            return {"ok": False, "error": f"format must be html or record, not {str(fmt)[:20]!r}"}
        found = author_game(self.league_dir, name, header.get("game"))
        if isinstance(found, str):
            return {"ok": False, "error": found}
        record, seats, full, own_id = found  # own_id: the league's id shown as the author's
        if fmt == "record":
            if not full:
                return {"ok": False, "error": "this league shows an author only what their "
                        "seat saw of a game ([league] records = \"seat\"): use --html"}
            return {"ok": True,
                    "record": own_id(self.public(record.read_text(encoding="utf-8"))),
                    "text": f"{header.get('game')}: the whole record"}
        if self.replay is None:
            return {"ok": False, "error": "this server draws no game pages"}
        try:
            page = own_id(self.replay(record, None if full else seats, self.public))
        except (OSError, ValueError) as e:
            self.on_line(f"cannot draw {header.get('game')} for {name}: {e}")
            return {"ok": False, "error": f"the record of {header.get('game')} cannot be drawn"}
        return {"ok": True, "html": page,
                "text": f"{header.get('game')}: " + ("every card (the league publishes full "
                                                     "records)" if full else
                                                     f"as seat {', '.join(map(str, seats))} "
                                                     "saw it")}

    # --- the checker --------------------------------------------------------------

    def _next(self) -> Ticket | None:
        """The next ticket, in turns by author (the one served longest ago first), of
        an author none of whose checks is running (with several checkers, one
        author's submissions never hold more than one)."""
        with self._lock:
            while not self._stop.is_set():
                free = [t for t in self._queue if t.name not in self._checking]
                if free:
                    break
                self._lock.wait(1.0)
            if self._stop.is_set():
                return None
            t = min(free, key=lambda t: (self._last_served.get(t.name, 0.0), t.serial))
            self._queue.remove(t)
            t.state, t.started = "checking", time.monotonic()
            self._last_served[t.name] = t.started
            self._checking.add(t.name)
            return t

    def _check_loop(self) -> None:
        while (t := self._next()) is not None:
            try:
                self._run_check(t)
            except Exception as e:  # the checker must go on
                t.state, t.text = "failed", ("the check failed on the league's side (the "
                                             "organiser's log says why)")
                self.on_line(f"{t.label}: the checker failed: {type(e).__name__}: {e}")
            finally:
                with contextlib.suppress(OSError):
                    t.upload.unlink()
                with self._lock:
                    self._checking.discard(t.name)
                    self._lock.notify_all()

    def _run_check(self, t: Ticket) -> None:
        request = self.log_dir / f"{t.serial}.json"
        request.write_text(json.dumps({"league": str(self.league_dir), "name": t.name,
                                       "upload": str(t.upload), "command": t.command,
                                       "transport": t.transport}), encoding="utf-8")
        result = request.with_name(request.name + ".result")
        log = request.with_suffix(".log")
        with open(log, "wb") as err:
            proc = subprocess.Popen([sys.executable, "-m", "referee.league.checkjob",
                                     str(request)], stdin=subprocess.DEVNULL,
                                    stdout=err, stderr=err, start_new_session=True)
        with self._lock:
            self._checks.add(proc)
        try:
            proc.wait(self.limits.check_seconds)
            timed_out = False
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill(proc)
        finally:
            with self._lock:
                self._checks.discard(proc)
        out: dict[str, Any] | None = None
        with contextlib.suppress(OSError, ValueError):
            out = json.loads(result.read_text(encoding="utf-8"))
        if timed_out:
            t.state = "refused"
            t.text = (f"#{t.number} refused: the check took more than "
                      f"{self.limits.check_seconds} s ([server] check_seconds)")
        elif out is None or not isinstance(out, dict):
            t.state = "failed"
            t.text = (f"#{t.number} failed: the check failed on the league's side (the "
                      "organiser's log says why)")
            self.on_line(f"{t.label}: the check of {t.name}'s submission failed "
                         f"(exit {proc.returncode}); see {log}")
        elif not out.get("ok"):
            t.state, t.text = "refused", f"#{t.number} refused: {out.get('error')}"
        else:
            t.state = "accepted" if out.get("accepted") else "refused"
            t.version = out.get("version")
            t.text = ((str(out.get("report")) + "\n" if out.get("report") else "")
                      + str(out.get("summary")))
        t.text = self.public(t.text)
        if t.state != "failed":
            kept = ""
            if t.state == "refused" and t.text:
                # The organiser sees why too: the whole report, kept in the league.
                saved = self.log_dir / f"{t.serial}-refused.txt"
                with contextlib.suppress(OSError):
                    if saved.exists():  # never another's: the number is the league's own
                        saved = saved.with_name(
                            f"{t.serial}-{secrets.token_hex(4)}-refused.txt")
                    with open(saved, "x", encoding="utf-8") as f:
                        f.write(t.text + "\n")
                    kept = f" (the check's report: {saved})"
            last = t.text.splitlines()[-1] if t.text else ""
            self.on_line(f"{t.label} {t.state}: "
                         + last.removeprefix(f"#{t.number} {t.state}: ") + kept)
            for p in (request, result, log):
                with contextlib.suppress(OSError):
                    p.unlink()


#: File descriptors a connection takes: the door's two, libzmq's one.
FDS_PER_CONNECTION = 3
#: File descriptors kept for the rest of the server (its league, checks, games).
FDS_KEPT = 256


def _enough_descriptors(connections: int, on_line: Callable[[str], None]) -> int:
    """How many connections the door may hold: ``connections``, the soft limit on
    open files raised (up to the hard one) to fit them; fewer if it cannot be, and
    said.  Running out of descriptors would stall libzmq's listener (it retries the
    accept at once, forever), so the door never lets it come to that."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = FDS_KEPT + FDS_PER_CONNECTION * connections
    if soft != resource.RLIM_INFINITY and soft < need:
        target = need if hard == resource.RLIM_INFINITY else min(need, hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
    if soft != resource.RLIM_INFINITY and soft < need:
        fit = max(1, (soft - FDS_KEPT) // FDS_PER_CONNECTION)
        on_line(f"open files are limited to {soft} (ulimit -n): the door holds "
                f"{fit * 100 // connections}% of the connections [server] connections and "
                "handshakes ask for")
        return fit
    return connections


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """Stop a check and everything it started (its process group): asked, then told."""
    for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 30.0)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(grace)
            break
        except subprocess.TimeoutExpired:
            continue
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # what the check left behind


class StandingsCache:
    """The league's standings, worked out again only when a game or an entry has
    been added (or retired) or the configuration changed since: every author's
    status reads the same tables, and working them out is most of its cost."""

    def __init__(self) -> None:
        self.key: tuple[object, ...] | None = None
        self.tables: list[Standings] = []

    def get(self, league_dir: Path, store: LeagueStore) -> list[Standings]:
        key = (*store.conn.execute("SELECT COUNT(*), MAX(rowid) FROM games").fetchone(),
               *store.conn.execute("SELECT COUNT(*), MAX(submitted), COUNT(retired) "
                                   "FROM entries").fetchone(), store.meta("config"))
        if key != self.key:
            self.tables, self.key = standings(league_dir), key
        return self.tables


def status_text(league_dir: Path, name: str, game: object = None, *,
                cache: StandingsCache | None = None) -> str:
    """What ``submit --status`` shows ``name``: their standings lines, latest games,
    and for ``game``, their own bot's record and stderr in it."""
    store = LeagueStore.open(league_dir)
    try:
        entries = store.entries(name)
        if not entries:
            return f"{name} has no entries in this league"
        lines = [f"{name}: " + ", ".join(f"v{e.version} {'active' if e.active else 'retired'}"
                                         for e in entries)]
        for st in (cache or StandingsCache()).get(league_dir, store):
            for r in st.rows:
                if name_of(r.bot) == name:
                    lines.append(f"{st.name}, {st.seats} seats: {r.bot} rank {r.rank} of {len(st.rows)}, "
                                 f"{r.games} games, {r.wins} wins, avg place "
                                 f"{'-' if r.avg_place is None else format(r.avg_place, '.2f')}, "
                                 f"rating {r.rating:+.0f} [{r.rating_low:+.0f}, "
                                 f"{r.rating_high:+.0f}], "
                                 f"{r.timeouts + r.crashes + r.illegal + r.malformed + r.oversized + r.protocol} faults")
        rows = list_games(store, bot=name)
        secret = store.secret()
        lines.append(f"latest games ({min(10, len(rows))} of {len(rows)}):")
        for row in rows[-10:]:
            o = row.outcome
            mine = [s for s, b in enumerate(o.seats) if name_of(b) == name]
            own_faults = [f for f in o.faults if f.seat in mine]
            places = "  ".join(f"{b}:{p}" for b, p in zip(o.seats, o.places, strict=True))
            lines.append(f"  {author_game_id(secret, name, o.game_id)}  {places}  {o.how}"
                         + (f"  your faults: {len(own_faults)}" if own_faults else ""))
        if game is not None:
            lines += _game_text(store, league_dir, name, str(game))
        return "\n".join(lines)
    finally:
        store.close()


def author_game_id(secret: bytes, name: str, game_id: str) -> str:
    """The id author ``name`` knows league game ``game_id`` by: opaque, their own
    (another author's id of the same game differs), and telling nothing of how many
    games the league has played."""
    return f"g{keyed(secret, 'author-game', name, game_id):016x}"[:13]


def _own_game(store: LeagueStore, name: str, asked: object) -> Outcome | None:
    """The game author ``name`` knows as ``asked`` (their own id of it), or None."""
    if not isinstance(asked, str) or not re.fullmatch(r"g[0-9a-f]{12}", asked):
        return None
    secret = store.secret()
    for o in store.outcomes():
        if any(name_of(b) == name for b in o.seats) and \
                author_game_id(secret, name, o.game_id) == asked:
            return o
    return None


#: What draws an author's game (``Server.replay``).
Replay = Callable[[Path, "list[int] | None", Callable[[str], str]], str]


def author_game(league_dir: Path, name: str, game: object
                ) -> tuple[Path, list[int], bool, Callable[[str], str]] | str:
    """``name``'s game ``game`` (their own id of it): its record, ``name``'s seats in
    it, whether the league publishes full records, and what shows the league's id of
    the game as the author's; or why not, in words (a game of others is "no game of
    NAME", exactly as a game that does not exist)."""
    if not isinstance(game, str) or not re.fullmatch(r"g[0-9a-f]{12}", game):
        return ("give the game's id, e.g. --game g3f09a1c27e4b (submit --status lists "
                "yours)")
    store = LeagueStore.open(league_dir)
    try:
        found = _own_game(store, name, game)
        records = config_of(store).records
    finally:
        store.close()
    if found is None:
        return f"{game}: no game of {name} has this id"
    seats = [s for s, b in enumerate(found.seats) if name_of(b) == name]
    path = league_dir / found.record
    if not path.is_file():
        return f"{game}: its record is not kept"
    league_id = re.compile(rf"\b{re.escape(found.game_id)}\b")
    return path, seats, records == "full", lambda text: league_id.sub(game, text)


def _game_text(store: LeagueStore, league_dir: Path, name: str, asked: str) -> list[str]:
    found = _own_game(store, name, asked)
    if found is None:
        return [f"\n{printable(asked[:40])}: no game of {name} has this id"]
    o = found
    game_id = asked  # the author's id; the league's own (o.game_id) is never shown
    # The deal's number is this lineup's own (its decks are dealt to it only).
    lines = [f"\n{game_id}: this lineup's deal {o.deal}, {o.how} after {o.turns} turns"]
    for s, b in enumerate(o.seats):
        lines.append(f"  seat {s}  {b}  place {o.places[s]}  penalty {o.points[s]}")
    for s, b in enumerate(o.seats):
        if name_of(b) != name:
            continue
        for f in o.faults:
            if f.seat == s:
                lines.append(f"  your fault, turn {f.turn}: {f.kind}: {f.detail}")
        text = author_view((stderr_of(league_dir, b, o.game_id) or "").rstrip("\n"))
        cut = len(text) > STDERR_SHOWN
        lines.append(f"--- {b} (seat {s}) stderr in {game_id}"
                     + (f": its last {STDERR_SHOWN // 1024} KB ---" if cut else " ---"))
        lines.append(text[-STDERR_SHOWN:] if cut else (text or "(nothing)"))
    return lines


# --- the client ------------------------------------------------------------------------


def pack(folder: Path) -> bytes:
    """The bot's folder as a .tar.gz (links kept as links: the server judges them)."""
    if not folder.is_dir():
        raise RemoteError(f"{folder} is not a folder: give the bot's folder")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for p in sorted(folder.rglob("*")):
            rel = p.relative_to(folder).as_posix()
            if "__pycache__" in p.parts or rel.startswith(".git/"):
                continue
            tar.add(p, arcname=rel, recursive=False)
    return buf.getvalue()


class Connection:
    """One connection to a league's server (``with connect(...) as c: c.ask(...)``):
    requests one at a time, each answered before the next is sent."""

    def __init__(self, endpoint: str, sock: zmq.Socket[bytes], mon: zmq.Socket[bytes]) -> None:
        self.endpoint = endpoint
        self.sock = sock
        self.mon = mon

    def ask(self, header: dict[str, Any], payload: bytes | memoryview = b"",
            timeout: float = 600.0) -> dict[str, Any]:
        """Send one request (``header`` with this protocol's version), return the
        reply; RemoteError (why, in words) otherwise."""
        self.sock.send_multipart([json.dumps({"v": PROTOCOL, **header}).encode(), payload],
                                 copy=False)
        poller = zmq.Poller()
        poller.register(self.sock, zmq.POLLIN)
        poller.register(self.mon, zmq.POLLIN)
        ready = dict(poller.poll(int(timeout * 1000)))
        if self.sock not in ready:
            if self.mon in ready:  # the server (its door) dropped us
                raise RemoteError(
                    f"{self.endpoint} closed the connection without answering (it closes a "
                    "connection that sends more than its requests may hold: is this "
                    "client of an older version than the league's?)")
            raise RemoteError(f"no answer from {self.endpoint} within {timeout:g}s")
        try:
            reply = json.loads(self.sock.recv())
        except ValueError:
            reply = None
        if not isinstance(reply, dict):
            raise RemoteError(f"{self.endpoint} answered something else than a league's reply")
        if "v" not in reply and "unknown request" in str(reply.get("error")):
            raise RemoteError(
                f"{self.endpoint} speaks version 1 of the remote submission protocol; this "
                f"referee speaks version {PROTOCOL}: the league's organiser should update "
                "updown-referee")
        return reply


@contextlib.contextmanager
def connect(endpoint: str, *, key: str | None = None, server_key: str | None = None,
            connect_timeout: float = 10.0) -> Iterator[Connection]:
    """A connection whose handshake succeeded; RemoteError (why, in words) otherwise."""
    if (key is None) != (server_key is None):
        raise RemoteError("CURVE needs both --key (your NAME.key_secret) and --server-key "
                          "(the league's referee.key), or neither (on a loopback endpoint)")
    if key is None and not is_loopback(endpoint):
        raise RemoteError(f"{endpoint} is not loopback: keys are required; give --key "
                          "NAME.key_secret and --server-key referee.key")
    curve: tuple[bytes, bytes] | None = None
    if key is not None:
        assert server_key is not None
        try:
            curve = load_secret_key(key), load_public_key(server_key)
        except KeyFileError as e:
            raise RemoteError(str(e)) from None
    ctx = zmq.Context()

    def dial() -> tuple[zmq.Socket[bytes], zmq.Socket[bytes]]:
        """A new DEALER (and its monitor) connecting: each try its own socket, so
        that no event of an earlier try is taken for this one's."""
        s = ctx.socket(zmq.DEALER)
        s.setsockopt(zmq.LINGER, 0)
        if curve is not None:
            s.setsockopt(zmq.CURVE_SECRETKEY, curve[0])
            s.setsockopt(zmq.CURVE_PUBLICKEY, zmq.curve_public(curve[0]))
            s.setsockopt(zmq.CURVE_SERVERKEY, curve[1])
        m = s.get_monitor_socket(zmq.EVENT_HANDSHAKE_SUCCEEDED | zmq.EVENT_DISCONNECTED
                                 | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL
                                 | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
                                 | zmq.EVENT_HANDSHAKE_FAILED_AUTH)
        s.connect(endpoint)
        return s, m

    def hang_up(s: zmq.Socket[bytes], m: zmq.Socket[bytes]) -> None:
        s.disable_monitor()
        m.close(0)
        s.close(0)

    sock, mon = dial()
    try:
        ok = turned_away = crowded = closed = False
        deadline = time.monotonic() + connect_timeout
        again: float | None = None  # when to try again, on a new socket
        pause = 0.05
        while not ok:
            now = time.monotonic()
            if now >= deadline:
                break
            if again is not None:
                time.sleep(max(0.0, min(again, deadline) - now))
                if time.monotonic() >= deadline:
                    break
                again = None
                sock, mon = dial()
                continue
            if not mon.poll(max(1, int((deadline - now) * 1000))):
                continue
            message = recv_monitor_message(mon)
            event = message["event"]
            ok = event == zmq.EVENT_HANDSHAKE_SUCCEEDED
            busy = (event == zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
                    and message["value"] == zmq.PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH)
            if busy and key is None:
                raise RemoteError(
                    f"{endpoint} refused the connection's security handshake: the server "
                    "requires CURVE keys (give --key NAME.key_secret and --server-key "
                    "referee.key), or it holds as many connections as it takes (try again "
                    "later)")
            if event == zmq.EVENT_HANDSHAKE_FAILED_AUTH and message["value"] == 500:
                # the key holds its share of connections ([server]
                # connections_per_author), or made its handshakes of the hour
                crowded = True
            elif event == zmq.EVENT_HANDSHAKE_FAILED_AUTH and key is not None:
                raise RemoteError(
                    f"{endpoint} does not know your key: your key is not one of this "
                    "league's authors' keys; send your public key (NAME.key) to the organiser")
            elif busy:
                turned_away = True  # the door's BUSY_GREETING
            elif event == zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL and key is None:
                raise RemoteError(
                    f"{endpoint} refused the connection's security handshake: the server "
                    "requires CURVE keys; give --key NAME.key_secret and --server-key "
                    "referee.key")
            elif event == zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL:
                # The connection closed in its handshake: the door closed it (a flood
                # of handshakes, or over its time) -- or the server could not read it
                # (a wrong --server-key): the client cannot tell which.
                closed = True
            elif not ok:
                if event != zmq.EVENT_DISCONNECTED:
                    raise RemoteError(f"{endpoint} refused the connection's security "
                                      "handshake (a ZeroMQ protocol error)")
                continue  # closed before any handshake: ZeroMQ connects again by itself
            if not ok:
                # Measured (libzmq 4.3.5): after a protocol error (the door's BUSY) or
                # ZAP's 500 ZeroMQ does not connect again, and after a closed handshake
                # it does at once, with no pause: try again here, on a new socket, a
                # little later each time, until the connect timeout.
                hang_up(sock, mon)
                again, pause = time.monotonic() + pause, min(2 * pause, 1.0)
        if not ok and crowded:
            raise RemoteError(f"{endpoint} holds as many connections of your key as it "
                              f"takes ([server] connections_per_author), for "
                              f"{connect_timeout:g}s: close some (each 'referee submit' "
                              "holds one while it runs) and try again; or your key opened "
                              "twice its [server] requests_per_hour connections in the "
                              "last hour: try again later")
        if not ok and closed:
            raise RemoteError(
                f"{endpoint} closed every handshake before it ended, for "
                f"{connect_timeout:g}s: is --server-key the league's referee.key? (Or the "
                "server is closing handshakes under a flood of them: try again later.)")
        if not ok and turned_away:
            raise RemoteError(f"{endpoint} turned every connection away for "
                              f"{connect_timeout:g}s: it holds as many connections as it "
                              "takes (from your address or in all), or your address opened "
                              "more than it takes a second; try again later")
        if not ok:
            raise RemoteError(
                f"no handshake with {endpoint} within {connect_timeout:g}s: is "
                "'referee league serve' running there"
                + ("" if key is None else ", and is --server-key its referee.key") + "?")
        yield Connection(endpoint, sock, mon)
    finally:
        if not sock.closed:
            hang_up(sock, mon)
        ctx.term()


def request(endpoint: str, header: dict[str, Any], payload: bytes = b"", *,
            key: str | None = None, server_key: str | None = None,
            timeout: float = 600.0, connect_timeout: float = 10.0) -> dict[str, Any]:
    """Send one request, return the reply; RemoteError (why, in words) otherwise."""
    with connect(endpoint, key=key, server_key=server_key,
                 connect_timeout=connect_timeout) as c:
        return c.ask(header, payload, timeout)


def upload(endpoint: str, name: str, command: list[str], transport: str, archive: bytes, *,
           key: str | None = None, server_key: str | None = None, timeout: float = 600.0,
           connect_timeout: float = 10.0) -> dict[str, Any]:
    """Submit ``archive`` (the bot, a .tar.gz) in chunks: begin (its size and sha256),
    each chunk answered before the next, commit; the commit's reply (a ticket), or
    the first refusal."""
    with connect(endpoint, key=key, server_key=server_key,
                 connect_timeout=connect_timeout) as c:
        reply = c.ask({"op": "begin", "name": name, "command": command,
                       "transport": transport, "size": len(archive),
                       "sha256": hashlib.sha256(archive).hexdigest()}, b"", timeout)
        if not reply.get("ok"):
            return reply
        token = reply.get("upload")
        step = min(CHUNK, int(reply.get("chunk") or CHUNK))
        view = memoryview(archive)
        for offset in range(0, len(archive), step):
            reply = c.ask({"op": "chunk", "name": name, "upload": token, "offset": offset},
                          view[offset:offset + step], timeout)
            if not reply.get("ok"):
                return reply
        return c.ask({"op": "commit", "name": name, "upload": token}, b"", timeout)
