"""Speaks ZeroMQ's wire (ZMTP 3.0, NULL) by hand on a launched bot's ipc:// socket, or
as a remote bot on a tcp:// one (UPDOWN_ENDPOINT; its hello's name: UPDOWN_NAME, else
"zmtp") -- no libzmq, so nothing is buffered on its side -- and, on its first request,
sends what the referee must never hold (argv: MODE MB [PART]):
  span   one message whose parts (PART bytes each, default 8192, every one flagged
         MORE) never end: MB megabytes of them;
  cmdbig one PING command frame of MB megabytes;
  pings  on every request, 9-byte PING commands as fast as it can for MB seconds
         (reading the PONGs), then its answer: thinking while the referee reads;
  conns  before its hello, MB more connections to the referee's endpoint, kept open;
  honest nothing (the baseline).
It succeeds if the referee read all of it without dropping the connection (conns: if
every connection was let in and its hello answered).  Then it answers as an honest
bot would (its first legal decision), if it still can."""

import contextlib
import os
import socket
import struct
import sys
import time

import msgpack

MODE, MB = sys.argv[1], float(sys.argv[2])
PART = int(sys.argv[3]) if len(sys.argv) > 3 else 8192


def report(succeeded, detail):
    print(f"attack_zmtp: {MODE} {MB} MB: {'SUCCEEDED' if succeeded else 'failed'}: {detail}",
          file=sys.stderr, flush=True)


def frame(body, more=False, cmd=False):
    flags = (1 if more else 0) | (4 if cmd else 0)
    if len(body) > 255:
        return bytes([flags | 2]) + struct.pack(">Q", len(body)) + body
    return bytes([flags, len(body)]) + body


ENDPOINT = os.environ["UPDOWN_ENDPOINT"]


def connect():
    if ENDPOINT.startswith("tcp://"):
        host, _, port = ENDPOINT[len("tcp://"):].rpartition(":")
        return socket.create_connection((host, int(port)))
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.connect(ENDPOINT[len("ipc://"):])
    return c


extra = []
if MODE == "conns":
    try:
        for _ in range(int(MB)):
            extra.append(connect())
    except OSError as e:
        report(False, f"connection {len(extra) + 1} refused ({e})")
        sys.exit(0)
try:
    s = connect()
except OSError as e:
    report(False, f"its own connection refused after {len(extra)} others ({e})")
    sys.exit(0)
s.sendall(b"\xff" + b"\x00" * 8 + b"\x7f\x03\x00" + b"NULL".ljust(20, b"\x00") + b"\x00" * 32)
s.sendall(frame(b"\x05READY\x0bSocket-Type" + struct.pack(">I", 6) + b"DEALER", cmd=True))
buf = b""


def take(n):
    global buf
    while len(buf) < n:
        data = s.recv(1 << 16)
        if not data:
            sys.exit(0)
        buf += data
    out, buf = buf[:n], buf[n:]
    return out


def message():
    while True:
        flags = take(1)[0]
        body = take(struct.unpack(">Q", take(8))[0] if flags & 2 else take(1)[0])
        if not flags & 4:  # commands (READY, PONG) are skipped
            return msgpack.unpackb(body, raw=False)


take(64)  # its greeting
token = os.environ.get("UPDOWN_TOKEN")
s.sendall(frame(msgpack.packb({"type": "hello", "protocol": [1],
                               "name": os.environ.get("UPDOWN_NAME", "zmtp"),
                               **({"token": token} if token else {})})))
attacked = False
while True:
    msg = message()
    if msg["type"] == "welcome" and MODE == "conns":
        report(True, f"welcomed with {len(extra)} more connections open")
    if msg["type"] == "request" and MODE == "pings":
        ping = bytes([4, 7]) + b"\x04PING\x00\x00"
        block = ping * (65536 // len(ping))
        s.setblocking(False)
        end, sent, pending = time.monotonic() + MB, 0, memoryview(block)
        try:
            while time.monotonic() < end:
                with contextlib.suppress(BlockingIOError):
                    n = s.send(pending)
                    sent += n
                    pending = pending[n:] if n < len(pending) else memoryview(block)
                with contextlib.suppress(BlockingIOError):
                    while True:  # the PONGs (whole frames of 7 bytes: kept in step)
                        data = s.recv(1 << 16)
                        if not data:
                            raise ConnectionResetError("end of stream")
                        buf += data
            s.setblocking(True)
            s.sendall(pending[: len(pending) % len(ping)])  # the PING it was in
        except OSError as e:
            report(False, f"the referee dropped the connection after {sent} bytes ({e})")
            sys.exit(0)
        report(True, f"request {msg['id']}: {sent} bytes of PINGs in {MB} s, the "
                     f"connection still open")
        s.sendall(frame(msgpack.packb({"type": "decision", "id": msg["id"], "decision": 0})))
        continue
    if msg["type"] == "request":
        if not attacked and MODE != "honest":
            attacked = True
            total = int(MB * 1e6)
            if MODE == "cmdbig":
                chunks = [bytes([6]) + struct.pack(">Q", 7 + total) + b"\x04PING\x00\x0a"]
                chunks += [b"c" * (1 << 20)] * (total >> 20)
            else:
                one = frame(b"a" * PART, more=True)
                chunks = [one * max(1, (1 << 18) // len(one))] * (total // (1 << 18))
            sent = 0
            try:
                for chunk in chunks:
                    s.sendall(chunk)
                    sent += len(chunk)
            except OSError as e:
                report(False, f"the referee dropped the connection after {sent} bytes ({e})")
                sys.exit(0)
            report(True, f"{sent} bytes sent, the connection still open")
        s.sendall(frame(msgpack.packb({"type": "decision", "id": msg["id"], "decision": 0})))
    elif msg["type"] in ("bye", "error"):
        break
