#!/usr/bin/env python3
"""``league serve`` under load (issue 21): the front door's answer times and memory.

1. A real league served on loopback with CURVE keys, ``--play`` (its games played as
   they become pending), with two accepted entries, and a slow bot (one second per
   decision) whose check is running: N concurrent authors (default 20) each ask for
   a status in a loop for ``--seconds`` (every other one an accepted entry's, with
   its standings and games), and each submits once; printed:
   requests/s, p50/p99/max answer time of the status requests (target: p99 <= 1 s
   with 20 clients and a check running), and whether the check was still running
   at the end (the figures count only if it was).
2. A flood of 100 x 50 MB frames from 100 fresh (unknown) keys: the server's RSS
   idle, under the flood (every handshake refused) and its peak (VmHWM); target:
   RSS under the flood <= 1.2 x idle.
3. A known author's many connections (``--attack N``, default 150): N connections
   with one allowed key, through the attacker's own relay that passes everything but
   a message's last bytes.  (a) each holds one frame of the largest size the server
   takes (64 KB), unfinished; (b) each sends a message of 64 such frames that never
   ends.  Against the server as it is (its door) and, side by side in the same run,
   the same server with the door's budget off (libzmq alone): RSS before, while held,
   after; how long another author's status took meanwhile.  (``--attack 0`` skips it.)
4. The lock-outs (skipped with ``--no-lockout``; ``--only-lockout``), against a server
   with the default ``[server]`` door settings (and, case by case in the same run,
   ``--baseline REFEREE``: another referee executable, e.g. one before this door):
   alice (an admitted author) asks for her status ``--asks`` times (at most 5 a
   second: the door lets an address open 10 connections a second), each on a new
   connection as ``referee submit`` does, (a) with no attack, (b) while a stranger
   (no key) keeps 224 TCP connections from 7 loopback addresses that never go past
   the greeting, each opened again as soon as it is closed, (c) the same from 24
   addresses x 10, (d) the same from 200 addresses x 1, (e) while a known author
   (mallory) holds 210 idle connections from 10 addresses (ZeroMQ connects each
   again when it is closed), (f) while a stranger's connections from ``--advanced``
   addresses (default 300, 200 and 120) each send a real greeting and CURVE HELLO at
   once and stall after the server's WELCOME, reopened as soon as closed, 9 a second
   an address (under the door's rate: none turned away), (g) the same with HELLOs of
   random bytes (the server closes each).  Printed: answered of asked, p50/p99/max
   answer time.  ``--only-advanced``: part 4's cases (f) and (g) only.
5. Handshake churn (``--churn S``, 0 skips it; ``--only-churn``), with the default
   ``[server]`` settings, against this server and ``--baseline`` case by case:
   complete CURVE handshakes as fast as 4 threads can, each connection closed at its
   handshake's end, (a) with fresh unknown keys from one address, (b) from 200
   addresses, (c) with a known key from one address.  Printed: handshakes a second,
   how they ended, and the server's CPU meanwhile.

``[server] requests_per_hour`` is raised for the run (the default, 1,200 an hour
per author, would refuse this load by design).

    .venv/bin/python bench/serve.py [--clients 20] [--seconds 15] [--flood 100]
                                    [--attack 150] [--only-attack]
                                    [--asks 40] [--only-lockout] [--baseline REFEREE]
                                    [--advanced 300 200 120] [--only-advanced]
                                    [--churn 10] [--only-churn]
"""

from __future__ import annotations

import argparse
import io
import math
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import zmq
import zmq.auth
from zmq.utils.monitor import recv_monitor_message

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from referee.league.remote import CHUNK, RemoteError, request, upload  # noqa: E402
from tests.league.attackers import Relay, Stranger, advanced, churn  # noqa: E402

BOTS = REPO / "example_bots" / "python"
SLOW_BOT = '''\
import sys
import time

import updown_bot
from heuristic_bot import HeuristicBot


class Slow(HeuristicBot):
    def decide(self, observation, legal):
        time.sleep(1.0)
        return super().decide(observation, legal)


if __name__ == "__main__":
    sys.exit(updown_bot.run(Slow()))
'''


def referee(*args: str | Path) -> subprocess.CompletedProcess[str]:
    exe = Path(sys.executable).parent / "referee"
    return subprocess.run([str(exe), *map(str, args)], capture_output=True, text=True,
                          check=True)


def rss_kb(pid: int, field: str = "VmRSS") -> int:
    m = re.search(rf"{field}:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())
    assert m
    return int(m.group(1))


def tgz(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--clients", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=15.0)
    ap.add_argument("--flood", type=int, default=100)
    ap.add_argument("--frame-mb", type=int, default=50)
    ap.add_argument("--attack", type=int, default=150)
    ap.add_argument("--only-attack", action="store_true", help="Only part 3.")
    ap.add_argument("--asks", type=int, default=40, help="alice's requests per case (part 4)")
    ap.add_argument("--no-lockout", action="store_true", help="Skip part 4.")
    ap.add_argument("--only-lockout", action="store_true", help="Only part 4.")
    ap.add_argument("--advanced", type=int, nargs="*", default=[300, 200, 120],
                    help="addresses of the stalling HELLO floods (part 4)")
    ap.add_argument("--only-advanced", action="store_true",
                    help="Only part 4's stalling HELLO floods.")
    ap.add_argument("--baseline", help="Part 4 also against this referee executable "
                    "(e.g. an older checkout's .venv/bin/referee), case by case")
    ap.add_argument("--connect-timeout", type=float, default=10.0,
                    help="alice's connect timeout (part 4)")
    ap.add_argument("--churn", type=float, default=10.0,
                    help="Seconds of each case of part 5 (0: skip it)")
    ap.add_argument("--only-churn", action="store_true", help="Only part 5.")
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-serve-"))
    try:
        print(f"load: {os.getloadavg()[0]:.1f} (1 min), {os.cpu_count()} CPUs")
        a.only_lockout = a.only_lockout or a.only_advanced
        only = a.only_attack or a.only_lockout or a.only_churn
        if not only:
            run(work / "serve", a)
        if a.attack and (a.only_attack or not only):
            attack(work / "attack", a)
        if not a.no_lockout and (a.only_lockout or not only):
            lockout(work / "lockout", a)
        if a.churn and (a.only_churn or not only):
            churning(work / "churn", a)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(work: Path, a: argparse.Namespace) -> None:
    work.mkdir()
    keys = work / "keys"
    names = [f"a{i:02d}" for i in range(a.clients)] + ["honest1", "honest2", "slow"]
    referee("keys", "server", "--out", keys)
    for n in names:
        referee("keys", "new", n, "--out", keys / "authors")
    (keys / "bots").mkdir()
    for n in names:
        (keys / "bots" / f"{n}.key").write_bytes((keys / "authors" / f"{n}.key").read_bytes())
    cfg = work / "league.toml"
    cfg.write_text('[league]\nname = "bench"\nseats = [2]\ndeals = 20\nseed = 1\n\n'
                   "[server]\nrequests_per_hour = 1000000\ncheck_seconds = 3600\n"
                   "connections = 1000\nconnections_per_ip = 1000\nhandshakes = 1000\n"
                   "handshakes_per_ip = 1000\nconnections_per_author = 1000\n"
                   "handshake_rate_per_ip = 1000000\n")
    league = work / "league"
    referee("league", "new", league, "--config", cfg)
    exe = Path(sys.executable).parent / "referee"
    proc = subprocess.Popen([str(exe), "league", "serve", str(league), "--listen",
                             "tcp://127.0.0.1:*", "--keys", str(keys / "bots"), "--server-key",
                             str(keys / "referee.key_secret"), "--play", "--jobs", "1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)
    try:
        assert proc.stderr is not None
        m = re.search(r"accepting submissions on (tcp://\S+)", proc.stderr.readline())
        assert m
        endpoint = m.group(1)
        threading.Thread(target=lambda: [None for _ in proc.stderr or []], daemon=True).start()

        def ask(who: str, header: dict[str, object], payload: bytes = b"") -> dict[str, object]:
            key, server_key = str(keys / "authors" / f"{who}.key_secret"), str(keys / "referee.key")
            if header.get("op") == "submit":
                return upload(endpoint, who, list(header["command"]),  # type: ignore[call-overload]
                              str(header["transport"]), payload, key=key,
                              server_key=server_key, timeout=120)
            return request(endpoint, {"name": who, **header}, payload, key=key,
                           server_key=server_key, timeout=120)

        def follow(who: str, number: int) -> dict[str, object]:
            while True:
                r = ask(who, {"op": "status", "ticket": number})
                t = r["ticket"]
                assert isinstance(t, dict)
                if t["state"] not in ("queued", "checking"):
                    return t
                time.sleep(0.5)

        random_bot = tgz({f: (BOTS / f).read_bytes() for f in ("random_bot.py", "updown_bot.py")})
        for who in ("honest1", "honest2"):
            r = ask(who, {"op": "submit", "command": ["python3", "random_bot.py"],
                          "transport": "stdio"}, random_bot)
            t = follow(who, r["ticket"]["number"])  # type: ignore[index]
            assert t["state"] == "accepted", t
        print(f"2 entries accepted; the league is playing their {2 * 20} games")
        slow = tgz({**{f: (BOTS / f).read_bytes() for f in ("heuristic_bot.py", "updown_bot.py")},
                    "slow_bot.py": SLOW_BOT.encode()})
        r = ask("slow", {"op": "submit", "command": ["python3", "slow_bot.py"],
                         "transport": "stdio"}, slow)
        slow_ticket = r["ticket"]["number"]  # type: ignore[index]
        while ask("slow", {"op": "status", "ticket": slow_ticket})["ticket"]["state"] \
                == "queued":  # type: ignore[index]
            time.sleep(0.1)
        print("a slow bot's check is running (1 s per decision)")

        times: list[float] = []
        errors: list[str] = []
        lock = threading.Lock()
        stop_at = time.monotonic() + a.seconds

        def client(who: str) -> None:
            sent = False
            while time.monotonic() < stop_at:
                t0 = time.monotonic()
                try:
                    if not sent:
                        ask(who, {"op": "submit", "command": ["python3", "random_bot.py"],
                                  "transport": "stdio"}, random_bot)
                        sent = True
                        continue
                    # every other request: an author with entries (standings, games)
                    asker = who if len(times) % 2 else "honest1"
                    r = ask(asker, {"op": "status"})
                except Exception as e:  # noqa: BLE001 (counted, printed)
                    with lock:
                        errors.append(str(e))
                    continue
                with lock:
                    (times if r.get("ok") else errors).append(time.monotonic() - t0)

        threads = [threading.Thread(target=client, args=(f"a{i:02d}",))
                   for i in range(a.clients)]
        start = time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.monotonic() - start
        still = ask("slow", {"op": "status", "ticket": slow_ticket})["ticket"]["state"]  # type: ignore[index]
        times.sort()
        p99 = times[min(len(times) - 1, int(0.99 * len(times)))]
        print(f"{a.clients} clients, {wall:.1f} s: {len(times)} status answers, "
              f"{len(times) / wall:.1f} requests/s; answer time p50 "
              f"{statistics.median(times) * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms, "
              f"max {times[-1] * 1000:.0f} ms; {len(errors)} errors; the slow check "
              f"{'was still running' if still == 'checking' else 'had ended: ' + str(still)}"
              f" (target p99 <= 1000 ms: {'met' if p99 <= 1.0 else 'NOT met'})")

        # The flood: fresh keys, 50 MB frames, every handshake refused.
        idle = rss_kb(proc.pid)
        server_key = zmq.auth.load_certificate(keys / "referee.key")[0]
        frame = b"\x01" * (a.frame_mb << 20)
        ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
        socks = []
        t0 = time.monotonic()
        for _ in range(a.flood):
            public, secret = zmq.curve_keypair()
            s = ctx.socket(zmq.DEALER)
            s.setsockopt(zmq.LINGER, 0)
            s.setsockopt(zmq.CURVE_SECRETKEY, secret)
            s.setsockopt(zmq.CURVE_PUBLICKEY, public)
            s.setsockopt(zmq.CURVE_SERVERKEY, server_key)
            mon = s.get_monitor_socket(zmq.EVENT_HANDSHAKE_FAILED_AUTH
                                       | zmq.EVENT_HANDSHAKE_SUCCEEDED)
            s.connect(endpoint)
            s.send(frame, copy=False)
            socks.append((s, mon))
        refused = 0
        for _, mon in socks:
            if mon.poll(60000) and recv_monitor_message(mon)["event"] == \
                    zmq.EVENT_HANDSHAKE_FAILED_AUTH:
                refused += 1
        flooded = rss_kb(proc.pid)
        r = ask("a00", {"op": "status"})
        for s, mon in socks:
            s.disable_monitor()
            mon.close(0)
            s.close(0)
        ctx.term()
        print(f"flood: {a.flood} x {a.frame_mb} MB frames from unknown keys, {refused} "
              f"refused at the handshake in {time.monotonic() - t0:.1f} s; server RSS idle "
              f"{idle / 1024:.1f} MB, under the flood {flooded / 1024:.1f} MB "
              f"({flooded / idle:.2f} x idle; target <= 1.2 x: "
              f"{'met' if flooded <= 1.2 * idle else 'NOT met'}), peak (VmHWM) "
              f"{rss_kb(proc.pid, 'VmHWM') / 1024:.1f} MB; an author answered after: "
              f"{bool(r.get('ok'))}")
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()


def settled_rss_kb(pid: int, limit: float = 20.0) -> int:
    """The RSS once it has stopped moving (what is in flight has arrived): no change of
    more than 256 KB over half a second, or after ``limit`` seconds."""
    last = rss_kb(pid)
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        time.sleep(0.5)
        now = rss_kb(pid)
        if abs(now - last) <= 256:
            return now
        last = now
    return last


#: The server with the door's budget off (its bytes and frames): what libzmq alone
#: would keep.
NO_DOOR = ("import sys, referee.league.remote as r, referee.league.door as d; "
           "r.UNANSWERED = d.FRAMES = 1 << 62; "
           "from referee.cli.main import main; sys.exit(main())")


def attack(work: Path, a: argparse.Namespace) -> None:
    """Part 3: a known author's N stalled connections, against the server and, side
    by side, the server without its door's budget."""
    work.mkdir()
    keys = work / "keys"
    referee("keys", "server", "--out", keys)
    (keys / "bots").mkdir()
    for n in ("alice", "bob"):
        referee("keys", "new", n, "--out", keys / "authors")
        (keys / "bots" / f"{n}.key").write_bytes((keys / "authors" / f"{n}.key").read_bytes())
    servers = {}
    for label, cmd in (("door", [str(Path(sys.executable).parent / "referee")]),
                       ("libzmq alone", [sys.executable, "-c", NO_DOOR])):
        cfg = work / f"{label[0]}.toml"
        cfg.write_text('[league]\nname = "attack"\nseats = [2]\ndeals = 2\nseed = 1\n\n'
                       "[server]\nrequests_per_hour = 1000000\nconnections = 1000\n"
                       "connections_per_ip = 1000\nhandshakes = 1000\nhandshakes_per_ip = 1000\n"
                       "connections_per_author = 1000\nhandshake_rate_per_ip = 1000000\n")
        league = work / f"league-{label[0]}"
        referee("league", "new", league, "--config", cfg)
        proc = subprocess.Popen([*cmd, "league", "serve", str(league), "--listen",
                                 "tcp://127.0.0.1:*", "--keys", str(keys / "bots"),
                                 "--server-key", str(keys / "referee.key_secret")],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        assert proc.stderr is not None
        m = re.search(r"accepting submissions on (tcp://\S+)", proc.stderr.readline())
        assert m, proc.stderr.read()
        threading.Thread(target=lambda p=proc: [None for _ in p.stderr or []],
                         daemon=True).start()
        servers[label] = (proc, m.group(1))
    server_key = zmq.auth.load_certificate(keys / "referee.key")[0]
    secret = zmq.auth.load_certificate(keys / "authors" / "alice.key_secret")[1]
    assert secret is not None
    frame = b"\x03" * CHUNK

    def bob(endpoint: str) -> float:
        t0 = time.monotonic()
        r = request(endpoint, {"op": "status", "name": "bob"},
                    key=str(keys / "authors" / "bob.key_secret"),
                    server_key=str(keys / "referee.key"), timeout=120)
        assert r.get("ok"), r
        return time.monotonic() - t0

    try:
        for _, endpoint in servers.values():
            bob(endpoint)
        for label, (proc, endpoint) in servers.items():  # one after the other, same run
            idle = rss_kb(proc.pid)
            ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
            stall = Relay(endpoint)
            socks = []
            t0 = time.monotonic()
            for _ in range(a.attack):
                s = ctx.socket(zmq.DEALER)
                s.setsockopt(zmq.LINGER, 0)
                s.setsockopt(zmq.SNDHWM, 0)
                s.setsockopt(zmq.CURVE_SECRETKEY, secret)
                s.setsockopt(zmq.CURVE_PUBLICKEY, zmq.curve_public(secret))
                s.setsockopt(zmq.CURVE_SERVERKEY, server_key)
                mon = s.get_monitor_socket(zmq.EVENT_HANDSHAKE_SUCCEEDED | zmq.EVENT_DISCONNECTED)
                s.connect(stall.endpoint)
                socks.append((s, mon))
            for _, mon in socks:
                assert mon.poll(120000) and recv_monitor_message(mon)["event"] == \
                    zmq.EVENT_HANDSHAKE_SUCCEEDED
            stall.hold()
            for s, _ in socks:
                s.send_multipart([b'{"op": "status", "name": "alice", "v": 2}', frame])
            waited = bob(endpoint)
            held = settled_rss_kb(proc.pid)
            for s, _ in socks:
                for _ in range(64):
                    s.send(frame, zmq.SNDMORE)
                s.send(b"")
            # the door cuts them; libzmq alone keeps them: wait for either, a while
            deadline = time.monotonic() + 30
            cut = 0
            for _, mon in socks:
                if mon.poll(max(0, int((deadline - time.monotonic()) * 1000))):
                    cut += recv_monitor_message(mon)["event"] == zmq.EVENT_DISCONNECTED
            after = settled_rss_kb(proc.pid)
            waited2 = bob(endpoint)
            peak = rss_kb(proc.pid, "VmHWM")
            print(f"{label}: {a.attack} connections of one known key: RSS idle "
                  f"{idle / 1024:.1f} MB; each holding a {CHUNK // 1024} KB frame "
                  f"{held / 1024:.1f} MB ({(held - idle) / a.attack:.0f} KB a connection), "
                  f"another author answered in {waited * 1000:.0f} ms; then a never-ending "
                  f"message of 64 x {CHUNK // 1024} KB each: {cut} of {a.attack} cut, RSS "
                  f"{after / 1024:.1f} MB, peak {peak / 1024:.1f} MB, another author "
                  f"answered in {waited2 * 1000:.0f} ms ({time.monotonic() - t0:.1f} s)")
            for s, mon in socks:
                s.disable_monitor()
                mon.close(0)
                s.close(0)
            ctx.term()
            stall.close()
    finally:
        stop(servers)


Servers = dict[str, tuple[subprocess.Popen[str], str]]


def side_by_side(work: Path, a: argparse.Namespace, server: str) -> Servers:
    """Keys (the server's, alice's and mallory's, both admitted) in ``work``/keys, and
    a league served with them (``server``: its ``[server]`` table) by this referee and
    by ``--baseline``: label -> (process, endpoint)."""
    work.mkdir()
    keys = work / "keys"
    referee("keys", "server", "--out", keys)
    (keys / "bots").mkdir()
    for n in ("alice", "mallory"):
        referee("keys", "new", n, "--out", keys / "authors")
        (keys / "bots" / f"{n}.key").write_bytes((keys / "authors" / f"{n}.key").read_bytes())
    cfg = work / "league.toml"
    cfg.write_text('[league]\nname = "door"\nseats = [2]\ndeals = 2\nseed = 1\n\n' + server)
    servers: Servers = {}
    runs = [("this door", str(Path(sys.executable).parent / "referee"))]
    if a.baseline:
        runs.append(("baseline", a.baseline))
    for label, exe in runs:
        league = work / f"league-{len(servers)}"
        subprocess.run([exe, "league", "new", str(league), "--config", str(cfg)], check=True,
                       capture_output=True, text=True)
        proc = subprocess.Popen([exe, "league", "serve", str(league), "--listen",
                                 "tcp://127.0.0.1:*", "--keys", str(keys / "bots"),
                                 "--server-key", str(keys / "referee.key_secret")],
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        assert proc.stderr is not None
        m = re.search(r"accepting submissions on (tcp://\S+)", proc.stderr.readline())
        assert m, proc.stderr.read()
        threading.Thread(target=lambda p=proc: [None for _ in p.stderr or []],
                         daemon=True).start()
        servers[label] = (proc, m.group(1))
    return servers


def stop(servers: Servers) -> None:
    for proc, _ in servers.values():
        os.killpg(proc.pid, signal.SIGINT)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)


def cpu_seconds(pid: int) -> float:
    """The CPU time process ``pid`` (all its threads) has used."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def churning(work: Path, a: argparse.Namespace) -> None:
    """Part 5: complete CURVE handshakes as fast as 4 threads can, each closed at its
    end, with the default ``[server]`` settings: fresh (unknown) keys from one
    address, from 200 addresses, and a known key (mallory's) from one address;
    printed, per case and server (this one, and ``--baseline`` case by case): the
    handshakes a second and how they ended, and the server's CPU meanwhile."""
    servers = side_by_side(work, a, "[server]\n")
    keys = work / "keys"
    server_key = zmq.auth.load_certificate(keys / "referee.key")[0]
    mallory = zmq.auth.load_certificate(keys / "authors" / "mallory.key_secret")[1]
    cases: list[tuple[str, bytes | None, Callable[[int], str]]] = [
        ("fresh keys from 1 address", None, lambda i: "127.0.6.1"),
        ("fresh keys from 200 addresses", None, lambda i: f"127.0.7.{1 + i % 200}"),
        ("a known key from 1 address", mallory, lambda i: "127.0.8.1")]
    try:
        print(f"handshake churn ({a.churn:g} s a case, 4 threads), load "
              f"{os.getloadavg()[0]:.1f}:")
        for label, secret, source in cases:
            for name, (proc, endpoint) in servers.items():
                before = cpu_seconds(proc.pid)
                counts = churn(endpoint, server_key, a.churn, 4, secret, source)
                used = cpu_seconds(proc.pid) - before
                total = sum(counts.values())
                print(f"  {name}, {label}: {total / a.churn:.0f} handshakes/s ({counts}); "
                      f"server CPU {used:.1f} s in {a.churn:g} s "
                      f"({used / a.churn:.2f} CPUs)", flush=True)
    finally:
        stop(servers)


#: alice's requests in part 4 are at least this far apart (s): the door lets one address
#: open 10 connections a second ([server] handshake_rate_per_ip).
PACE = 0.2


def lockout(work: Path, a: argparse.Namespace) -> None:
    """Part 4: alice's status answers with no attack, under a stranger's flood of
    unfinished handshakes, and under a known author's idle connections; against this
    server and, case by case in the same run, ``--baseline`` (another referee, e.g.
    the one before this door)."""
    keys = work / "keys"
    servers = side_by_side(work, a, "[server]\nrequests_per_hour = 1000000\n")

    last = [0.0]

    def asks(endpoint: str, label: str) -> None:
        times, failed = [], []
        for _ in range(a.asks):
            t0 = time.monotonic()
            time.sleep(max(0.0, last[0] + PACE - t0))  # an honest pace
            t0 = last[0] = time.monotonic()
            try:
                r = request(endpoint, {"op": "status", "name": "alice"},
                            key=str(keys / "authors" / "alice.key_secret"),
                            server_key=str(keys / "referee.key"), timeout=30,
                            connect_timeout=a.connect_timeout)
                assert r.get("ok"), r
                times.append(time.monotonic() - t0)
            except RemoteError as e:
                failed.append(str(e)[:90])
        times.sort()  # nearest-rank percentiles
        p50 = times[max(0, math.ceil(0.50 * len(times)) - 1)] if times else 0.0
        p99 = times[max(0, math.ceil(0.99 * len(times)) - 1)] if times else 0.0
        print(f"  {label}: alice answered {len(times)} of {a.asks}"
              + (f", p50 {p50 * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms, max "
                 f"{max(times) * 1000:.0f} ms" if times else "")
              + (f"; failed: {failed[0]}" if failed else ""), flush=True)

    def idle_author(endpoint: str) -> tuple[zmq.Context[zmq.Socket[bytes]],
                                            list[zmq.Socket[bytes]]]:
        pub, sec = zmq.auth.load_certificate(keys / "authors" / "mallory.key_secret")
        server_key = zmq.auth.load_certificate(keys / "referee.key")[0]
        assert sec is not None
        ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
        held = []
        for i in range(210):
            s = ctx.socket(zmq.DEALER)
            s.setsockopt(zmq.LINGER, 0)
            s.setsockopt(zmq.CURVE_SECRETKEY, sec)
            s.setsockopt(zmq.CURVE_PUBLICKEY, pub)
            s.setsockopt(zmq.CURVE_SERVERKEY, server_key)
            s.connect(endpoint.replace("tcp://", f"tcp://127.0.2.{2 + i % 10}:0;"))
            held.append(s)
        return ctx, held

    try:
        print(f"lock-outs (the door's default settings), load {os.getloadavg()[0]:.1f}, "
              f"{a.asks} requests of alice's each, connect timeout {a.connect_timeout:g} s:")
        for label, (_, endpoint) in servers.items():
            asks(endpoint, f"{label}, no attack")
        server_key = zmq.auth.load_certificate(keys / "referee.key")[0]
        for n_addr in a.advanced:
            for real in (True, False):
                first = advanced(server_key, real)
                for label, (proc, endpoint) in servers.items():
                    flood = Stranger(endpoint, [f"127.3.{i // 250}.{1 + i % 250}"
                                                for i in range(n_addr)], first=first, rate=9)
                    try:
                        flood.wait_reopened(2 * n_addr, 60)  # the flood at full strength
                        before, cpu = flood.opened, cpu_seconds(proc.pid)
                        began = time.monotonic()
                        asks(endpoint, f"{label}, {n_addr} addresses each sending a "
                             f"greeting and a {'real' if real else 'random'} HELLO "
                             "and stalling")
                        print(f"    (the stranger opened {flood.opened - before} "
                              f"connections meanwhile; server CPU "
                              f"{cpu_seconds(proc.pid) - cpu:.1f} s in "
                              f"{time.monotonic() - began:.1f} s)", flush=True)
                    finally:
                        flood.stop()
        if a.only_advanced:
            return
        for n_addr, per in ((7, 32), (24, 10), (200, 1)):
            for label, (_, endpoint) in servers.items():
                flood = Stranger(endpoint, [f"127.1.{i // 250}.{1 + i % 250}"
                                            for i in range(n_addr)], per)
                try:
                    time.sleep(1)  # the flood at full strength
                    before = flood.opened
                    asks(endpoint, f"{label}, a stranger's {n_addr * per} unfinished "
                         f"handshakes from {n_addr} addresses")
                    print(f"    (the stranger opened {flood.opened - before} connections "
                          "meanwhile)")
                finally:
                    flood.stop()
        for label, (_, endpoint) in servers.items():
            ctx, held = idle_author(endpoint)
            try:
                time.sleep(2)  # mallory's connections are in
                asks(endpoint, f"{label}, a known author's 210 idle connections from 10 "
                     "addresses")
            finally:
                for s in held:
                    s.close(0)
                ctx.term()
    finally:
        stop(servers)


if __name__ == "__main__":
    main()
