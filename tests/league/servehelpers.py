"""A real ``league serve`` on loopback (with real CURVE keys, or none), owned by the
test that starts it: :func:`league_server` (the ``league_server`` fixture of
tests/conftest.py) starts it as a child of the ``children`` fixture -- a session of
its own, SIGINT at its default (tests/procs.py), killed with its group when the test
ends, also when it failed -- reads its log line by line on a thread (so that a
chatty server never blocks on a full pipe), and stops it with a Ctrl-C.  Also the
server's peak RSS, and DEALER sockets with their monitors (the raw attackers are in
tests/league/attackers.py, shared with bench/serve.py)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zmq
import zmq.auth
from zmq.utils.monitor import recv_monitor_message

from referee.league.remote import request, upload
from tests.league.conftest import Referee, env_for_subprocess, referee_command
from tests.league.leaguehelpers import league_toml
from tests.procs import Children, scaled


@dataclass
class Served:
    """A running ``league serve``: its endpoint, its keys (None: a server without
    CURVE) and its log (``lines``, every line of its stderr so far; ``seen`` is
    notified at each)."""

    league: Path
    endpoint: str
    keys: Path
    proc: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)
    seen: threading.Condition = field(default_factory=threading.Condition)
    reader: threading.Thread | None = None

    def log(self) -> str:
        with self.seen:
            return "".join(self.lines)

    def stop(self, timeout: float = 30.0) -> str:
        """Ctrl-C (SIGINT to its group), as an organiser stops it; waits for it to
        exit and its log to end, and returns the whole log.  If it does not stop
        within ``timeout`` (scaled), the ``children`` fixture kills it."""
        interrupt(self.proc, timeout)
        if self.reader is not None and self.proc.poll() is not None:
            self.reader.join(scaled(timeout))  # the pipe ends with the server's group
        return self.log()

    def wait_line(self, pattern: str, count: int = 1, timeout: float = 120.0) -> list[str]:
        """The server's log lines matching ``pattern``, once there are ``count``."""
        deadline = time.monotonic() + scaled(timeout)
        with self.seen:
            while True:
                found = [x for x in self.lines if re.search(pattern, x)]
                if len(found) >= count:
                    return found
                left = deadline - time.monotonic()
                assert left > 0 and self.proc.poll() is None, \
                    f"no {count} lines {pattern!r}: " + "".join(self.lines)
                self.seen.wait(left)

    def ask(self, who: str, header: Mapping[str, object], payload: bytes = b"",
            timeout: float = 30.0) -> dict[str, Any]:
        """A request as ``who``; a ``submit`` is uploaded (begin, chunks, commit)."""
        key = str(self.keys / "authors" / f"{who}.key_secret")
        server_key = str(self.keys / "referee.key")
        if header.get("op") == "submit":
            command = header["command"]
            assert isinstance(command, list)
            return upload(self.endpoint, who, command, str(header.get("transport", "stdio")),
                          payload, key=key, server_key=server_key, timeout=scaled(timeout))
        return request(self.endpoint, {"name": who, **header}, payload, key=key,
                       server_key=server_key, timeout=scaled(timeout))

    def peak_rss_kb(self) -> int:
        status = Path(f"/proc/{self.proc.pid}/status").read_text()
        m = re.search(r"VmHWM:\s+(\d+) kB", status)
        assert m
        return int(m.group(1))


def interrupt(proc: subprocess.Popen[str], timeout: float = 30.0) -> None:
    """Ctrl-C to the server's group, and up to ``timeout`` (scaled) for it to exit
    (a clean stop); what is left, the ``children`` fixture kills."""
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGINT)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(scaled(timeout))


@contextlib.contextmanager
def league_server(children: Children, league: Path, *args: str | Path,
                  keys: Path | None = None) -> Iterator[Served]:
    """``referee league serve LEAGUE ARGS`` listening on a loopback port the kernel
    picks (with ``keys``: the league's authors' keys and the server's secret key);
    returns once it says where it listens.  Stopped with a Ctrl-C when the block
    ends; the ``children`` fixture kills what is left."""
    command = [referee_command(), "league", "serve", str(league), "--listen", "tcp://127.0.0.1:*"]
    if keys is not None:
        command += ["--keys", str(keys / "bots"), "--server-key", str(keys / "referee.key_secret")]
    proc = children.popen([*command, *map(str, args)], stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, env=env_for_subprocess())
    try:
        assert proc.stderr is not None
        first = proc.stderr.readline()
        m = re.search(r"accepting submissions on (tcp://\S+)", first)
        assert m, first + (proc.stderr.read() if proc.poll() is not None else "")
        served = Served(league, m.group(1), keys or Path("/no-keys"), proc, [first])

        def read() -> None:
            assert proc.stderr is not None
            for line in proc.stderr:
                with served.seen:
                    served.lines.append(line)
                    served.seen.notify_all()

        served.reader = threading.Thread(target=read, daemon=True)
        served.reader.start()
        yield served
    finally:
        interrupt(proc)


def serve(tmp_path: Path, referee: Referee, keys: Path, children: Children,
          server: str, *args: str) -> Iterator[Served]:
    """A small league (2 seats, 1 deal; ``server``: its ``[server]`` table) served with
    ``keys``; the league is made on the first call, served again on the next (a
    restart)."""
    league = tmp_path / "league"
    cfg = league_toml(tmp_path / "league.toml", seats=[2], deals=1,
                      extra="[limits]\nmax_bytes = 300000\nmax_files = 100\n" + server)
    if not league.exists():  # else: the same league served again (a restart)
        assert referee("league", "new", league, "--config", cfg).returncode == 0
    with league_server(children, league, *args, keys=keys) as served:
        yield served


def dealer(ctx: zmq.Context[zmq.Socket[bytes]], endpoint: str, server_key: bytes,
           secret: bytes | None = None, *, heartbeat_ms: int = 0
           ) -> tuple[zmq.Socket[bytes], zmq.Socket[bytes]]:
    """A CURVE DEALER (a fresh key pair unless ``secret``) and its monitor; with
    ``heartbeat_ms``, ZeroMQ's heartbeats on (a PING every so many ms; the client
    itself never gives up on a slow PONG)."""
    if secret is None:
        _, secret = zmq.curve_keypair()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    if heartbeat_ms:
        sock.setsockopt(zmq.HEARTBEAT_IVL, heartbeat_ms)
        sock.setsockopt(zmq.HEARTBEAT_TIMEOUT, 3_600_000)
    sock.setsockopt(zmq.CURVE_SECRETKEY, secret)
    sock.setsockopt(zmq.CURVE_PUBLICKEY, zmq.curve_public(secret))
    sock.setsockopt(zmq.CURVE_SERVERKEY, server_key)
    mon = sock.get_monitor_socket(zmq.EVENT_HANDSHAKE_SUCCEEDED | zmq.EVENT_DISCONNECTED
                                  | zmq.EVENT_HANDSHAKE_FAILED_AUTH)
    sock.connect(endpoint)
    return sock, mon


def next_event(mon: zmq.Socket[bytes], timeout_ms: int = 60000, *,
               past_door: bool = False) -> int:
    """The socket's next event; ``past_door``: the next but a connection the door
    turned away (a DISCONNECTED before any handshake: ZeroMQ connects again)."""
    while True:
        assert mon.poll(int(scaled(timeout_ms))), "no event from the server"
        event = int(recv_monitor_message(mon)["event"])
        if not (past_door and event == zmq.EVENT_DISCONNECTED):
            return event


def keys_of(path: Path) -> tuple[bytes, bytes]:
    public, secret = zmq.auth.load_certificate(path)
    return public, secret or b""
