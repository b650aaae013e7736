"""Floods its stderr (64 KiB blocks, as fast as it can) during the other seats' turns
only, to make the referee drain it on their time; plays its first legal decision.
Pins its stderr pipe at 64 KiB (the default) for the test's bound.  stdlib only."""

import fcntl
import json
import os
import sys
import threading

BLOCK = 65536
fcntl.fcntl(2, fcntl.F_SETPIPE_SZ, BLOCK)
go = threading.Event()


def flood():
    junk = b"A" * BLOCK
    while True:
        go.wait()
        os.write(2, junk)


def send(msg):
    os.write(1, (json.dumps(msg) + "\n").encode())


threading.Thread(target=flood, daemon=True).start()
send({"type": "hello", "protocol": [1], "name": "flood"})
for line in sys.stdin:
    msg = json.loads(line)
    kind = msg["type"]
    if kind == "request":
        go.clear()
        send({"type": "decision", "id": msg["id"], "decision": 0})
        go.set()
    elif kind == "new_game":
        go.set()
    elif kind == "game_over":
        go.clear()
    elif kind in ("bye", "error"):
        break
