"""A launched ZeroMQ bot flooding both its stdout and its stderr (both only logs
there; 64 KiB blocks, as fast as it can) during the other seats' turns only; plays
its first legal decision."""

import os
import threading

import msgpack
import zmq

go = threading.Event()


def flood(fd):
    junk = b"A" * 65536
    while True:
        go.wait()
        os.write(fd, junk)


for fd in (1, 2):
    threading.Thread(target=flood, args=(fd,), daemon=True).start()
ctx = zmq.Context()
sock = ctx.socket(zmq.DEALER)
sock.setsockopt(zmq.LINGER, 1000)
sock.connect(os.environ["UPDOWN_ENDPOINT"])
sock.send(msgpack.packb({"type": "hello", "protocol": [1], "name": "zflood",
                         "token": os.environ.get("UPDOWN_TOKEN")}))
while True:
    msg = msgpack.unpackb(sock.recv(), raw=False)
    kind = msg["type"]
    if kind == "request":
        go.clear()
        sock.send(msgpack.packb({"type": "decision", "id": msg["id"], "decision": 0}))
        go.set()
    elif kind == "new_game":
        go.set()
    elif kind == "game_over":
        go.clear()
    elif kind in ("bye", "error"):
        break
sock.close(linger=0)
os._exit(0)
