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
folder and queued; the answer is a ticket at once.  One checker thread takes the
queue in turns by author, each check in a process of its own
(``referee.league.checkjob``) killed when it exceeds ``[server] check_seconds``.
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
import io
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zmq
import zmq.auth
import zmq.auth.thread
from zmq.utils import z85
from zmq.utils.monitor import recv_monitor_message

from ..errors import ExecutionError
from ..tournament.standings import Standings
from ..transport.zmq.keys import KeyFileError, load_allowed_keys, load_public_key, load_secret_key
from ..transport.zmq.router import is_loopback
from .browse import games as list_games
from .browse import stderr_of
from .config import Limits, ServerLimits
from .run import config_of, standings
from .schedule import name_of
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
#: The biggest request header (JSON) decoded.
MAX_HEADER = 16 << 10
HOUR = 3600.0
DONE = ("accepted", "refused", "failed")


class RemoteError(ExecutionError):
    """A remote submission that could not be made (one line)."""


def upload_limit(limits: Limits) -> int:
    """The biggest message the server takes: the largest submission the league
    accepts (its unpacked bytes, incompressible at worst, and 128 bytes of
    compressed tar header per file) plus the request header."""
    return limits.max_bytes + 128 * limits.max_files + MAX_HEADER + (64 << 10)


class _Allowed(zmq.auth.thread.ThreadAuthenticator):
    """Admit at the handshake only the authors' keys; the connection's User-Id is
    the author's NAME."""

    def __init__(self, ctx: zmq.Context[Any], owners: dict[bytes, str],
                 on_refused: Callable[[bytes], None]) -> None:
        super().__init__(ctx)
        self.owners = owners
        self.on_refused = on_refused

    def callback(self, domain: str, key: bytes) -> bool:
        if key in self.owners:
            return True
        self.on_refused(key)
        return False

    def curve_user_id(self, client_public_key: bytes) -> str:
        return self.owners[z85.encode(client_public_key)]


@dataclass
class Ticket:
    number: int
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

    def line(self, ahead: int | None = None) -> str:
        if self.state == "queued":
            return (f"#{self.number} queued" + (f" ({ahead} ahead of it)" if ahead else "")
                    + f", {self.size} bytes, command {' '.join(self.command)}")
        if self.state == "checking":
            assert self.started is not None
            return f"#{self.number} being checked ({time.monotonic() - self.started:.0f} s so far)"
        return f"#{self.number} {self.state}" + (f": {self.name} version {self.version}"
                                                 if self.version else "")

    def to_dict(self) -> dict[str, Any]:
        return {"number": self.number, "state": self.state, "text": self.text,
                "accepted": self.state == "accepted" if self.state in DONE else None,
                "version": self.version}


@dataclass
class _Author:
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
        self.incoming = self.league_dir / "entries"
        self.incoming.mkdir(parents=True, exist_ok=True)
        self.log_dir = self.league_dir / "checks"
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.authors: dict[str, _Author] = {}
        self.numbers = itertools.count(1)
        self._lock = threading.Condition()
        self._queue: list[Ticket] = []
        self._last_served: dict[str, float] = {}
        self._refused_keys: set[bytes] = set()
        self._standings = StandingsCache()
        self._check: subprocess.Popen[bytes] | None = None
        self.ctx = zmq.Context()
        self.auth: _Allowed | None = None
        self.sock = self.ctx.socket(zmq.ROUTER)
        self.sock.setsockopt(zmq.LINGER, 1000)
        self.sock.setsockopt(zmq.MAXMSGSIZE, self.max_message)
        self.sock.setsockopt(zmq.RCVHWM, 8)
        # Replies an author does not read are dropped past a few per connection:
        # never queued without bound in the server's memory.
        self.sock.setsockopt(zmq.SNDHWM, REPLIES_QUEUED)
        self.sock.setsockopt(zmq.HANDSHAKE_IVL, 5000)
        self.sock.setsockopt(zmq.ROUTER_MANDATORY, 0)
        if secret is not None:
            assert self.owners is not None
            self.auth = _Allowed(self.ctx, self.owners, self._refused_key)
            self.auth.start()
            self.auth.configure_curve_callback(ZAP_DOMAIN, self.auth)
            self.sock.setsockopt(zmq.CURVE_SERVER, 1)
            self.sock.setsockopt(zmq.CURVE_SECRETKEY, secret)
            self.sock.setsockopt(zmq.CURVE_PUBLICKEY, zmq.curve_public(secret))
            self.sock.setsockopt(zmq.ZAP_DOMAIN, ZAP_DOMAIN.encode())
        try:
            self.sock.bind(self.listen)
        except zmq.ZMQError as e:
            self.close()
            raise RemoteError(f"cannot listen on {self.listen}: {e}") from None
        self.endpoint = self.sock.getsockopt_string(zmq.LAST_ENDPOINT)
        self._stop = threading.Event()
        self._checker = threading.Thread(target=self._check_loop, name="league-checks",
                                         daemon=True)
        self._checker.start()

    def _refused_key(self, key: bytes) -> None:
        if key not in self._refused_keys and len(self._refused_keys) < 1000:
            self._refused_keys.add(key)  # said once per key: a flood is not a log flood
            self.on_line(f"refused a connection: key {key.decode('ascii', 'replace')} is no "
                         "author's")

    def close(self) -> None:
        self._stop.set()
        with self._lock:
            self._lock.notify_all()
            check = self._check
        if check is not None:
            _kill(check)
        if hasattr(self, "_checker"):
            self._checker.join(10)
        self.sock.close(0)
        if self.auth is not None:
            self.auth.stop()
        self.ctx.term()
        for t in self._queue:
            with contextlib.suppress(OSError):
                t.upload.unlink()

    def stop(self) -> None:
        self._stop.set()
        with self._lock:
            self._lock.notify_all()

    def public(self, text: str) -> str:
        """``text`` without a path of the organiser's machine: every absolute path
        shown as ``<path>`` (but the sandbox's own ``/bot``, the same on every
        machine).  By its shape, never by comparing it with the server's own paths:
        a reply that changed only the server's paths would tell an author which of
        the paths they sent are real (an oracle, one guess per path sent)."""
        return _ABSOLUTE_PATH.sub("<path>", text)

    # --- the request loop ---------------------------------------------------------

    def serve(self) -> None:
        """Answer requests until ``stop()`` (or KeyboardInterrupt)."""
        poller = zmq.Poller()
        poller.register(self.sock, zmq.POLLIN)
        while not self._stop.is_set():
            if not poller.poll(200):
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
            self.sock.send_multipart([ident, json.dumps(reply).encode()])

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
        if owner is not None:
            author = self.authors.setdefault(owner, _Author())
            if _within_hour(author.requests, now) >= self.limits.requests_per_hour:
                return self._over(owner, author.requests, now, "requests",
                                  self.limits.requests_per_hour, "requests_per_hour")
            author.requests.append(now)
        try:
            header = json.loads(frames[0].bytes)
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
        if owner is None:  # no keys (loopback): limited per name
            author = self.authors.setdefault(name, _Author())
            if _within_hour(author.requests, now) >= self.limits.requests_per_hour:
                return self._over(name, author.requests, now, "requests",
                                  self.limits.requests_per_hour, "requests_per_hour")
            author.requests.append(now)
        op = header.get("op")
        if op == "submit":
            return self.do_submit(name, author, header, frames[1] if len(frames) > 1 else None)
        if op == "status":
            return self.do_status(name, author, header)
        if op == "replay":
            return self.do_replay(name, header)
        return {"ok": False, "error": f"unknown request {str(op)[:40]!r}: submit, status "
                                     "or replay"}

    def _over(self, name: str, times: collections.deque[float], now: float, what: str,
              limit: int, key: str) -> dict[str, Any]:
        wait = max(1, int(times[0] + HOUR - now) + 1)
        return {"ok": False, "error": f"{name} has sent {limit} {what} in the last hour, the "
                f"league's limit ([server] {key}): try again in {wait} s"}

    def do_submit(self, name: str, author: _Author, header: dict[str, Any],
                  payload: zmq.Frame | None) -> dict[str, Any]:
        command = header.get("command")
        transport = header.get("transport", "stdio")
        if not (isinstance(command, list) and command and all(isinstance(w, str) for w in command)):
            return {"ok": False, "error": "the request has no command (a list of words)"}
        if transport not in ("stdio", "zmq"):
            return {"ok": False, "error": f"transport must be stdio or zmq, not {transport!r}"}
        if payload is None or not len(payload):
            return {"ok": False, "error": "the request holds no bot (a .tar.gz of its folder)"}
        now = time.monotonic()
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
        fd, tmp = tempfile.mkstemp(prefix=".upload-", suffix=".tar.gz", dir=self.incoming)
        with os.fdopen(fd, "wb") as f:
            f.write(payload.buffer)
        with self._lock:
            ticket = Ticket(next(self.numbers), name, list(command), transport, Path(tmp),
                            len(payload))
            author.submissions.append(now)
            author.tickets.append(ticket)
            del author.tickets[:-20]
            ahead = len(self._queue) + (self._check is not None)
            self._queue.append(ticket)
            self._lock.notify_all()
        self.on_line(f"submission from {name}: {ticket.size} bytes, command "
                     f"{' '.join(command)}, queued as #{ticket.number}")
        return {"ok": True, "ticket": ticket.to_dict(),
                "text": f"queued as #{ticket.number}"
                        + (f" ({ahead} ahead of it)" if ahead else "")
                        + "; 'referee submit --status' to follow it"}

    def do_status(self, name: str, author: _Author, header: dict[str, Any]) -> dict[str, Any]:
        number = header.get("ticket")
        with self._lock:
            mine = list(author.tickets)
            queue = list(self._queue)
        if number is not None:
            found = [t for t in mine if t.number == number]
            if not found:
                return {"ok": False, "error": f"{name} has no ticket #{str(number)[:20]}"}
            t = found[0]
            ahead = queue.index(t) + 1 if t in queue else None
            return {"ok": True, "ticket": t.to_dict(),
                    "text": t.text if t.state in DONE else t.line(ahead)}
        lines = []
        if mine:
            lines.append("submissions: " + "; ".join(
                t.line(queue.index(t) + 1 if t in queue else None) for t in mine[-5:]))
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
        record, seats, full = found
        if fmt == "record":
            if not full:
                return {"ok": False, "error": "this league shows an author only what their "
                        "seat saw of a game ([league] records = \"seat\"): use --html"}
            return {"ok": True, "record": self.public(record.read_text(encoding="utf-8")),
                    "text": f"{header.get('game')}: the whole record"}
        if self.replay is None:
            return {"ok": False, "error": "this server draws no game pages"}
        try:
            page = self.replay(record, None if full else seats, self.public)
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
        """The next ticket, in turns by author (the one served longest ago first)."""
        with self._lock:
            while not self._queue and not self._stop.is_set():
                self._lock.wait(1.0)
            if self._stop.is_set():
                return None
            t = min(self._queue, key=lambda t: (self._last_served.get(t.name, 0.0), t.number))
            self._queue.remove(t)
            t.state, t.started = "checking", time.monotonic()
            self._last_served[t.name] = t.started
            return t

    def _check_loop(self) -> None:
        while (t := self._next()) is not None:
            try:
                self._run_check(t)
            except Exception as e:  # the checker must go on
                t.state, t.text = "failed", ("the check failed on the league's side (the "
                                             "organiser's log says why)")
                self.on_line(f"#{t.number}: the checker failed: {type(e).__name__}: {e}")
            finally:
                with contextlib.suppress(OSError):
                    t.upload.unlink()

    def _run_check(self, t: Ticket) -> None:
        request = self.log_dir / f"{t.number}.json"
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
            self._check = proc
        try:
            proc.wait(self.limits.check_seconds)
            timed_out = False
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill(proc)
        finally:
            with self._lock:
                self._check = None
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
            self.on_line(f"#{t.number}: the check of {t.name}'s submission failed "
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
                saved = self.log_dir / f"{t.number}-refused.txt"
                with contextlib.suppress(OSError):
                    saved.write_text(t.text + "\n", encoding="utf-8")
                    kept = f" (the check's report: {saved})"
            self.on_line(f"#{t.number} {t.state}: {t.text.splitlines()[-1] if t.text else ''}"
                         + kept)
            for p in (request, result, log):
                with contextlib.suppress(OSError):
                    p.unlink()


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
        lines.append(f"latest games ({min(10, len(rows))} of {len(rows)}):")
        for row in rows[-10:]:
            o = row.outcome
            mine = [s for s, b in enumerate(o.seats) if name_of(b) == name]
            own_faults = [f for f in o.faults if f.seat in mine]
            places = "  ".join(f"{b}:{p}" for b, p in zip(o.seats, o.places, strict=True))
            lines.append(f"  {o.game_id}  {places}  {o.how}"
                         + (f"  your faults: {len(own_faults)}" if own_faults else ""))
        if game is not None:
            lines += _game_text(store, league_dir, name, str(game))
        return "\n".join(lines)
    finally:
        store.close()


#: What draws an author's game (``Server.replay``).
Replay = Callable[[Path, "list[int] | None", Callable[[str], str]], str]


def author_game(league_dir: Path, name: str, game: object) -> tuple[Path, list[int], bool] | str:
    """``name``'s game ``game``: its record, ``name``'s seats in it, and whether the
    league publishes full records; or why not, in words (a game of others is "no game
    of NAME", exactly as a game that does not exist)."""
    if not isinstance(game, str) or not re.fullmatch(r"g\d{1,12}", game):
        return "give the game's id, e.g. --game g000012 (submit --status lists yours)"
    store = LeagueStore.open(league_dir)
    try:
        found = [o for o in store.outcomes() if o.game_id == game]
        records = config_of(store).records
    finally:
        store.close()
    seats = [s for s, b in enumerate(found[0].seats) if name_of(b) == name] if found else []
    if not seats:
        return f"{game}: no game of {name} has this id"
    path = league_dir / found[0].record
    if not path.is_file():
        return f"{game}: its record is not kept"
    return path, seats, records == "full"


def _game_text(store: LeagueStore, league_dir: Path, name: str, game_id: str) -> list[str]:
    found = [o for o in store.outcomes() if o.game_id == game_id]
    if not found or not any(name_of(b) == name for b in found[0].seats):
        return [f"\n{game_id}: no game of {name} has this id"]
    o = found[0]
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
        text = author_view((stderr_of(league_dir, b, game_id) or "").rstrip("\n"))
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


def request(endpoint: str, header: dict[str, Any], payload: bytes = b"", *,
            key: str | None = None, server_key: str | None = None,
            timeout: float = 600.0, connect_timeout: float = 10.0) -> dict[str, Any]:
    """Send one request, return the reply; RemoteError (why, in words) otherwise."""
    if (key is None) != (server_key is None):
        raise RemoteError("CURVE needs both --key (your NAME.key_secret) and --server-key "
                          "(the league's referee.key), or neither (on a loopback endpoint)")
    if key is None and not is_loopback(endpoint):
        raise RemoteError(f"{endpoint} is not loopback: keys are required; give --key "
                          "NAME.key_secret and --server-key referee.key")
    ctx = zmq.Context()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    mon: zmq.Socket[bytes] | None = None
    try:
        if key is not None:
            assert server_key is not None
            try:
                secret = load_secret_key(key)
                sock.setsockopt(zmq.CURVE_SECRETKEY, secret)
                sock.setsockopt(zmq.CURVE_PUBLICKEY, zmq.curve_public(secret))
                sock.setsockopt(zmq.CURVE_SERVERKEY, load_public_key(server_key))
            except KeyFileError as e:
                raise RemoteError(str(e)) from None
        mon = sock.get_monitor_socket(zmq.EVENT_HANDSHAKE_SUCCEEDED
                                      | zmq.EVENT_DISCONNECTED
                                      | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL
                                      | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
                                      | zmq.EVENT_HANDSHAKE_FAILED_AUTH)
        sock.connect(endpoint)
        poller = zmq.Poller()
        poller.register(mon, zmq.POLLIN)
        ok = False
        if poller.poll(int(connect_timeout * 1000)):
            event = recv_monitor_message(mon)["event"]
            ok = event == zmq.EVENT_HANDSHAKE_SUCCEEDED
            if event == zmq.EVENT_HANDSHAKE_FAILED_AUTH and key is not None:
                raise RemoteError(
                    f"{endpoint} does not know your key: your key is not one of this "
                    "league's authors' keys; send your public key (NAME.key) to the organiser")
            if not ok:
                raise RemoteError(
                    f"{endpoint} refused the connection's security handshake: "
                    + ("the server requires CURVE keys; give --key NAME.key_secret and "
                       "--server-key referee.key" if key is None else
                       "is --server-key the league's referee.key?"))
        if not ok:
            raise RemoteError(
                f"no handshake with {endpoint} within {connect_timeout:g}s: is "
                "'referee league serve' running there"
                + ("" if key is None else ", and is --server-key its referee.key") + "?")
        sock.send_multipart([json.dumps(header).encode(), payload])
        poller.register(sock, zmq.POLLIN)
        ready = dict(poller.poll(int(timeout * 1000)))
        if sock not in ready:
            if mon in ready:  # the server dropped us: libzmq does so for a message
                raise RemoteError(  # over its MAXMSGSIZE
                    f"{endpoint} closed the connection without answering: is the bot "
                    "bigger than the league takes ([limits] max_bytes)?")
            raise RemoteError(f"no answer from {endpoint} within {timeout:g}s")
        reply = json.loads(sock.recv())
        if not isinstance(reply, dict):
            raise RemoteError(f"{endpoint} answered something else than a league's reply")
        return reply
    finally:
        if mon is not None:
            sock.disable_monitor()
            mon.close(0)
        sock.close(0)
        ctx.term()
