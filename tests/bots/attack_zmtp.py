"""Speaks ZeroMQ's wire (ZMTP 3.0, NULL) by hand on a launched bot's ipc:// socket, or
as a remote bot on a tcp:// one (UPDOWN_ENDPOINT; its hello's name: UPDOWN_NAME, else
"zmtp") -- no libzmq, so nothing is buffered on its side -- and, on its first request,
sends what the referee must never hold (argv: MODE MB [PART]):
  span   one message whose parts (PART bytes each, default 8192, every one flagged
         MORE) never end: MB megabytes of them;
  cmdbig one PING command frame of MB megabytes;
  honest nothing (the baseline).
It succeeds if the referee read all of it without dropping the connection.  Then it
answers as an honest bot would (its first legal decision), if it still can."""

import os
import socket
import struct
import sys

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
if ENDPOINT.startswith("tcp://"):
    host, _, port = ENDPOINT[len("tcp://"):].rpartition(":")
    s = socket.create_connection((host, int(port)))
else:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(ENDPOINT[len("ipc://"):])
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
