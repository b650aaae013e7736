"""Remote submission: authors send their bots to a league from their own machines,
over ZeroMQ with CURVE and the same keys as remote bots (``referee keys``).

Server (``referee league serve``): a ROUTER socket, CURVE server with the referee's
secret key.  Every CURVE client completes the handshake (the ZAP callback admits
any key) so that a refused author can be *told why*; each request is then
authorised by the key it came with: a key of the league's keys folder
(``NAME.key``) acts as ``NAME`` only.  Without keys (loopback endpoints only) any
name may be used.

Client (``referee submit``): a DEALER socket; its monitor tells a handshake refused
for want of keys or for the wrong server key from a server that does not answer.

Messages: ``[header JSON, payload]`` one way, ``[reply JSON]`` back::

    {"op": "submit", "name", "command": [...], "transport"} + the bot as .tar.gz
    {"op": "status", "name", "game": "g000012" | null}       + b""
    reply: {"ok": bool, "error"?, "text"?, "accepted"?, "version"?}

An author's status shows only their own entries' standings lines, games, faults
and stderr: never another bot's stderr (``browse.stderr_of`` reads only the logs of
the asking name's entries).
"""

from __future__ import annotations

import io
import json
import os
import tarfile
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import zmq
import zmq.auth
import zmq.auth.thread
from zmq.utils.monitor import recv_monitor_message

from ..errors import ExecutionError
from ..transport.zmq.keys import KeyFileError, load_allowed_keys, load_public_key, load_secret_key
from ..transport.zmq.router import is_loopback
from .browse import games as list_games
from .browse import stderr_of
from .run import LeagueError, config_of, standings, submit
from .schedule import name_of
from .store import LeagueStore
from .submission import SubmissionError

ZAP_DOMAIN = "updown-league"
DEFAULT_SUBMIT_LISTEN = "tcp://127.0.0.1:5556"


class RemoteError(ExecutionError):
    """A remote submission that could not be made (one line)."""


class _AnyKey:
    """Admit every CURVE key at the handshake; requests are authorised by key."""

    def callback(self, domain: str, key: bytes) -> bool:
        return True


@dataclass
class Server:
    league_dir: Path
    listen: str = DEFAULT_SUBMIT_LISTEN
    keys_dir: str | None = None
    server_secret: str | None = None
    on_line: Callable[[str], None] = lambda text: None

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
            self.owners: dict[str, str] | None = None
            secret: bytes | None = None
            if self.keys_dir is not None:
                assert self.server_secret is not None
                self.owners = {k.decode(): n for n, k in load_allowed_keys(self.keys_dir).items()}
                secret = load_secret_key(self.server_secret)
        except KeyFileError as e:
            raise RemoteError(str(e)) from None
        store = LeagueStore.open(self.league_dir)  # the league must exist
        try:
            limits = config_of(store).limits
        finally:
            store.close()
        self.ctx = zmq.Context()
        self.auth: zmq.auth.thread.ThreadAuthenticator | None = None
        self.sock = self.ctx.socket(zmq.ROUTER)
        self.sock.setsockopt(zmq.LINGER, 1000)
        self.sock.setsockopt(zmq.MAXMSGSIZE, limits.max_bytes + (1 << 20))
        if secret is not None:
            self.auth = zmq.auth.thread.ThreadAuthenticator(self.ctx)
            self.auth.start()
            self.auth.configure_curve_callback(ZAP_DOMAIN, _AnyKey())
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

    def close(self) -> None:
        self.sock.close(0)
        if self.auth is not None:
            self.auth.stop()
        self.ctx.term()

    def stop(self) -> None:
        self._stop.set()

    def serve(self) -> None:
        """Answer requests until ``stop()`` (or KeyboardInterrupt)."""
        poller = zmq.Poller()
        poller.register(self.sock, zmq.POLLIN)
        while not self._stop.is_set():
            if not poller.poll(200):
                continue  # look at _stop again
            frames = self.sock.recv_multipart(copy=False)
            ident = frames[0].bytes
            key: str | None = None
            if self.owners is not None:
                try:
                    key = str(frames[1].get("User-Id"))
                except (zmq.ZMQError, IndexError):
                    key = None
            try:
                reply = self.handle(key, [f.bytes for f in frames[1:]])
            except Exception as e:  # a bug must not take the server down
                reply = {"ok": False, "error": f"the server failed: {type(e).__name__}: {e}"}
            self.sock.send_multipart([ident, json.dumps(reply).encode()])

    def handle(self, key: str | None, frames: list[bytes]) -> dict[str, Any]:
        try:
            header = json.loads(frames[0])
            assert isinstance(header, dict)
        except (ValueError, IndexError, AssertionError):
            return {"ok": False, "error": "not a submission request (a JSON header, then "
                                          "the bot): use 'referee submit'"}
        name = header.get("name")
        if not isinstance(name, str):
            return {"ok": False, "error": "the request names no bot"}
        if self.owners is not None:
            owner = self.owners.get(key or "")
            if owner is None:
                self.on_line(f"refused a request for {name!r}: key {key} is no author's")
                return {"ok": False, "error": f"your key ({key}) is not one of this league's "
                        "authors' keys: send your public key (NAME.key) to the organiser"}
            if owner != name:
                self.on_line(f"refused {owner}'s request to act as {name!r}")
                return {"ok": False, "error": f"your key is {owner}'s: it submits and reads "
                        f"only as {owner!r}, not {name!r}"}
        op = header.get("op")
        if op == "submit":
            return self.do_submit(name, header, frames[1] if len(frames) > 1 else b"")
        if op == "status":
            return {"ok": True, "text": status_text(self.league_dir, name, header.get("game"))}
        return {"ok": False, "error": f"unknown request {op!r}: submit or status"}

    def do_submit(self, name: str, header: dict[str, Any], payload: bytes) -> dict[str, Any]:
        command = header.get("command")
        transport = header.get("transport", "stdio")
        if not (isinstance(command, list) and command and all(isinstance(w, str) for w in command)):
            return {"ok": False, "error": "the request has no command (a list of words)"}
        if transport not in ("stdio", "zmq"):
            return {"ok": False, "error": f"transport must be stdio or zmq, not {transport!r}"}
        self.on_line(f"submission from {name}: {len(payload)} bytes, command {' '.join(command)}")
        incoming = self.league_dir / "entries"
        fd, tmp = tempfile.mkstemp(prefix=".upload-", suffix=".tar.gz", dir=incoming)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(payload)
            result = submit(self.league_dir, name, Path(tmp), command, transport=transport,
                            author=name)
        except (SubmissionError, LeagueError) as e:
            self.on_line(f"refused {name}'s submission: {e}")
            return {"ok": False, "error": str(e)}
        finally:
            os.unlink(tmp)
        self.on_line(result.summary())
        return {"ok": True, "accepted": result.accepted, "version": result.version,
                "text": (result.report + "\n" if result.report else "") + result.summary()}


def status_text(league_dir: Path, name: str, game: object = None) -> str:
    """What ``submit --status`` shows ``name``: their standings lines, latest games,
    and for ``game``, their own bot's record and stderr in it."""
    store = LeagueStore.open(league_dir)
    try:
        entries = store.entries(name)
        if not entries:
            return f"{name} has no entries in this league"
        lines = [f"{name}: " + ", ".join(f"v{e.version} {'active' if e.active else 'retired'}"
                                         for e in entries)]
        for st in standings(league_dir):
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
            own_faults = [f for f in o.faults if f["seat"] in mine]
            places = "  ".join(f"{b}:{p}" for b, p in zip(o.seats, o.places, strict=True))
            lines.append(f"  {o.game_id}  {places}  {o.how}"
                         + (f"  your faults: {len(own_faults)}" if own_faults else ""))
        if game is not None:
            lines += _game_text(store, league_dir, name, str(game))
        return "\n".join(lines)
    finally:
        store.close()


def _game_text(store: LeagueStore, league_dir: Path, name: str, game_id: str) -> list[str]:
    found = [o for o in store.outcomes() if o.game_id == game_id]
    if not found or not any(name_of(b) == name for b in found[0].seats):
        return [f"\n{game_id}: no game of {name} has this id"]
    o = found[0]
    lines = [f"\n{game_id}: deal {o.deal}, {o.how} after {o.turns} turns"]
    for s, b in enumerate(o.seats):
        lines.append(f"  seat {s}  {b}  place {o.places[s]}  penalty {o.points[s]}")
    for s, b in enumerate(o.seats):
        if name_of(b) != name:
            continue
        for f in o.faults:
            if f["seat"] == s:
                lines.append(f"  your fault, turn {f.get('turn')}: {f['kind']}: {f.get('detail', '')}")
        text = stderr_of(league_dir, b, game_id)
        lines.append(f"--- {b} (seat {s}) stderr in {game_id} ---")
        lines.append(text.rstrip("\n") if text else "(nothing)")
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
                    "bigger than the league's [limits] max_bytes?")
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
