"""The raw network clients that attack ``league serve``'s door, shared by its tests
(tests/league/test_league_serve_*.py) and by ``bench/serve.py`` (which imports this
module): no pytest here, and every socket they open is closed by their ``stop`` /
``close``.

* :class:`Stranger`: TCP connections from given loopback addresses that stall (no
  key, never past the greeting; or, with :func:`advanced`, a real greeting and
  CURVE HELLO sent at once and nothing after the server's WELCOME), each opened
  again as soon as the door closes it (at most ``rate`` a second an address);
* :class:`Relay`: the attacker's own relay between a ZeroMQ client and the server,
  byte for byte, which can withhold the last bytes a client sends (a message that
  never ends) and counts the frames a client sent past its handshake (its messages'
  and its heartbeats');
* :func:`churn`: complete CURVE handshakes, as fast as a few threads can, each
  with a fresh (unknown) key or a given one.
"""

from __future__ import annotations

import contextlib
import heapq
import os
import selectors
import socket
import threading
import time
from collections.abc import Callable

import zmq
from zmq.utils.monitor import recv_monitor_message


def host_port(endpoint: str) -> tuple[str, int]:
    host, port = endpoint.removeprefix("tcp://").rsplit(":", 1)
    return host, int(port)


#: A ZMTP 3.0 greeting of a CURVE client, and of a server.
GREETING = b"\xff" + bytes(7) + b"\x01\x7f\x03\x00" + b"CURVE".ljust(20, b"\0") + bytes(32)
SERVER_GREETING = GREETING[:32] + b"\x01" + bytes(31)


def advanced(server_key: bytes, real: bool = True) -> bytes:
    """What an advanced stalling stranger sends at once: a ZMTP greeting and a CURVE
    HELLO (266 bytes), taken from libzmq's own client (a fresh transient key, boxed
    for ``server_key``: the server can open it, and answers with its WELCOME, every
    time it is sent), or with ``real`` False a HELLO of random bytes after its name
    (the server cannot open it).  The same bytes do for every connection."""
    listener = socket.create_server(("127.0.0.1", 0))
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    client = ctx.socket(zmq.DEALER)
    try:
        client.setsockopt(zmq.LINGER, 0)
        public, secret = zmq.curve_keypair()
        client.setsockopt(zmq.CURVE_SECRETKEY, secret)
        client.setsockopt(zmq.CURVE_PUBLICKEY, public)
        client.setsockopt(zmq.CURVE_SERVERKEY, server_key)
        client.connect(f"tcp://127.0.0.1:{listener.getsockname()[1]}")
        listener.settimeout(30)
        conn, _ = listener.accept()
        with conn:
            conn.settimeout(30)
            conn.sendall(SERVER_GREETING)
            sent = b""
            while len(sent) < 64 + 2 + 200:
                data = conn.recv(4096)
                assert data, sent
                sent += data
    finally:
        client.close(0)
        ctx.term()
        listener.close()
    assert sent[64:72] == b"\x04\xc8\x05HELLO", sent[64:72]
    return sent if real else sent[:72] + os.urandom(len(sent) - 72)


class Stranger:
    """No key: ``per_address`` TCP connections from each of ``addresses``, each
    sending ``first`` (nothing by default) and then nothing more (a handshake that
    never goes on; what the server sends is read, never answered), each opened again
    as soon as it is closed -- with ``rate``, an address at most ``rate`` times a
    second (under the door's rate, none is turned away) -- until ``stop``.
    ``opened`` counts the connections opened, ``reopened`` those opened again."""

    #: The first byte of a ZMTP greeting: a handshake begun, then stalled.
    BEGUN = b"\xff"

    def __init__(self, endpoint: str, addresses: list[str], per_address: int = 1,
                 first: bytes = b"", rate: float = 0.0) -> None:
        self.target = host_port(endpoint)
        self.first = first
        self.pause = 1 / rate if rate else 0.0
        self.free: dict[str, float] = {}  # when an address may open its next
        self.due: list[tuple[float, str]] = []  # reopened when due (a heap)
        self.sel = selectors.DefaultSelector()
        self.opened = self.reopened = 0
        self.changed = threading.Condition()
        self.stopping = threading.Event()
        for a in addresses:
            for _ in range(per_address):
                self._open(a)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _open(self, address: str) -> None:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((address, 0))
            if self.first:
                s.settimeout(60)
                s.connect(self.target)
                s.sendall(self.first)
                s.setblocking(False)
            else:
                s.setblocking(False)
                s.connect_ex(self.target)
            self.sel.register(s, selectors.EVENT_READ, address)
        except OSError:
            s.close()
            raise
        self.opened += 1

    def _run(self) -> None:
        while not self.stopping.is_set():
            now = time.monotonic()
            while self.due and self.due[0][0] <= now:
                self._reopen(heapq.heappop(self.due)[1])
            wait = min(0.1, max(0.0, self.due[0][0] - now)) if self.due else 0.1
            for key, _ in self.sel.select(wait):
                s = key.fileobj
                assert isinstance(s, socket.socket)
                try:
                    data = s.recv(4096)
                except OSError:
                    data = b""
                if not data:
                    self.sel.unregister(s)
                    s.close()
                    address, now = str(key.data), time.monotonic()
                    when = max(now, self.free.get(address, 0.0))
                    self.free[address] = when + self.pause
                    if when > now:
                        heapq.heappush(self.due, (when, address))
                    else:
                        self._reopen(address)

    def _reopen(self, address: str) -> None:
        if not self.stopping.is_set():
            with contextlib.suppress(OSError):  # out of ports: one less
                self._open(address)
                with self.changed:
                    self.reopened += 1
                    self.changed.notify_all()

    def wait_reopened(self, count: int, timeout: float) -> None:
        """Until ``count`` connections were opened again (the door closed them)."""
        with self.changed:
            assert self.changed.wait_for(lambda: self.reopened >= count, timeout), \
                f"{self.reopened} connections of {count} opened again"

    def stop(self) -> None:
        self.stopping.set()
        self.thread.join(30)
        for key in list(self.sel.get_map().values()):
            with contextlib.suppress(OSError):
                key.fileobj.close()  # type: ignore[union-attr]
        self.sel.close()


def _name(body: bytes) -> bytes:
    """The name of a ZMTP command frame's body (its first byte is the name's size)."""
    return body[1:1 + body[0]] if body else b""


class Relay:
    """The attacker's own relay between its ZeroMQ client and the server: it passes
    everything both ways; once ``hold()`` is called, all but the last bytes the
    client sends (so that the server holds a message that never ends, as an attacker
    speaking ZMTP by hand would).  It counts the connections the server closed
    (``cut``) and the frames each client sent past its handshake (``frames``: under
    CURVE a message's frame and a heartbeat's PING look alike), and ``wait_frames``
    waits for a count."""

    HELD = 16  # bytes withheld: the message's end

    def __init__(self, server: str) -> None:
        self.server = host_port(server)
        self.listener = socket.create_server(("127.0.0.1", 0), backlog=1024)
        self.endpoint = f"tcp://127.0.0.1:{self.listener.getsockname()[1]}"
        self.holding = threading.Event()
        self.socks: list[socket.socket] = []
        self.cut = 0
        self.frames = 0
        self.changed = threading.Condition()
        threading.Thread(target=self._accept, daemon=True).start()

    def hold(self) -> None:
        self.holding.set()

    def wait_frames(self, count: int, timeout: float) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: self.frames >= count, timeout), \
                f"{self.frames} frames of {count} came through the relay"

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                client, _ = self.listener.accept()
                up = socket.create_connection(self.server)
                with self.changed:
                    self.socks += [client, up]
                threading.Thread(target=self._pump, args=(client, up, True), daemon=True).start()
                threading.Thread(target=self._pump, args=(up, client, False),
                                 daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, outward: bool) -> None:
        kept = b""
        parse = bytearray()
        greeting = 64
        with contextlib.suppress(OSError):
            while data := src.recv(65536):
                if outward:
                    parse += data
                    greeting = self._count(parse, greeting)
                if outward and self.holding.is_set():
                    kept += data
                    data, kept = kept[:-self.HELD], kept[-self.HELD:]
                dst.sendall(data)
            if not outward:
                with self.changed:
                    self.cut += 1
                    self.changed.notify_all()
        with contextlib.suppress(OSError):
            dst.shutdown(socket.SHUT_RDWR)

    def _count(self, buf: bytearray, greeting: int) -> int:
        """Count the whole frames in ``buf`` (consumed) but the handshake's commands;
        return what is left of the greeting."""
        if greeting:
            n = min(greeting, len(buf))
            del buf[:n]
            greeting -= n
        while len(buf) >= 2:
            need = 9 if buf[0] & 0x02 else 2
            if len(buf) < need:
                break
            size = int.from_bytes(buf[1:need], "big")
            if len(buf) < need + size:
                break
            body = bytes(buf[need:need + min(size, 16)])
            if _name(body) not in (b"HELLO", b"INITIATE"):
                with self.changed:
                    self.frames += 1
                    self.changed.notify_all()
            del buf[:need + size]
        return greeting

    def close(self) -> None:
        self.listener.close()
        with self.changed:
            for s in self.socks:
                with contextlib.suppress(OSError):
                    s.close()


def churn(endpoint: str, server_key: bytes, seconds: float, threads: int = 4,
          secret: bytes | None = None, source: Callable[[int], str] | None = None
          ) -> dict[str, int]:
    """Complete CURVE handshakes with the server for ``seconds``, ``threads`` at a
    time, each with a fresh key pair (or ``secret``'s), from ``source(i)`` (a
    loopback address for the i-th; None: the default route): each socket is
    closed as soon as its handshake ends, admitted or refused.  The count of each
    ending: ``ready`` (admitted), ``refused`` (ZAP said no), ``turned_away`` (the
    door's BUSY, or the connection closed in its handshake), ``none`` (no ending
    within 10 s)."""
    counts = {"ready": 0, "refused": 0, "turned_away": 0, "none": 0}
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    endings = {zmq.EVENT_HANDSHAKE_SUCCEEDED: "ready", zmq.EVENT_HANDSHAKE_FAILED_AUTH: "refused",
               zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL: "turned_away",
               zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL: "turned_away"}

    def run(k: int) -> None:
        i = k
        while time.monotonic() < stop_at:
            key = secret if secret is not None else zmq.curve_keypair()[1]
            s = ctx.socket(zmq.DEALER)
            s.setsockopt(zmq.LINGER, 0)
            s.setsockopt(zmq.RECONNECT_IVL, -1)
            s.setsockopt(zmq.CURVE_SECRETKEY, key)
            s.setsockopt(zmq.CURVE_PUBLICKEY, zmq.curve_public(key))
            s.setsockopt(zmq.CURVE_SERVERKEY, server_key)
            mon = s.get_monitor_socket(sum(endings))
            where = endpoint if source is None else \
                endpoint.replace("tcp://", f"tcp://{source(i)}:0;")
            s.connect(where)
            ending = "none"
            if mon.poll(10000):
                ending = endings.get(int(recv_monitor_message(mon)["event"]), "none")
            s.disable_monitor()
            mon.close(0)
            s.close(0)
            with lock:
                counts[ending] += 1
            i += threads

    workers = [threading.Thread(target=run, args=(k,)) for k in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    ctx.term()
    return counts
