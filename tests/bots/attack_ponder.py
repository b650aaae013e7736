"""Computes on the other seats' turns (pondering: a thread spinning from its reply to
its next request, as a bot that thinks ahead would), to take CPU from the seat on the
clock; plays its first legal decision.  At each request it writes on stderr how many
loop iterations it made since its last reply ("PONDER N"); its thread keeps the count
of all its loops in /tmp/ponder (its scratch), which the test reads from outside."""

import json
import os
import sys
import threading

go = threading.Event()
count = [0]


def spin():
    # Its progress, for the test to read from outside (its scratch), every 1000 loops.
    fd = os.open("/tmp/ponder", os.O_WRONLY | os.O_CREAT, 0o644)
    done = 0
    while True:
        go.wait()
        count[0] += 1
        done += 1
        if done % 1000 == 0:
            os.pwrite(fd, b"%20d" % done, 0)


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


threading.Thread(target=spin, daemon=True).start()
send({"type": "hello", "protocol": [1], "name": "ponder"})
for line in sys.stdin:
    msg = json.loads(line)
    kind = msg["type"]
    if kind == "request":
        go.clear()
        sys.stderr.write(f"PONDER {count[0]}\n")
        sys.stderr.flush()
        count[0] = 0
        send({"type": "decision", "id": msg["id"], "decision": 0})
        go.set()
    elif kind == "new_game":
        go.set()
    elif kind == "game_over":
        go.clear()
    elif kind in ("bye", "error"):
        break
