"""Shared by the fake bots: the protocol's bot side in a few lines (stdlib only).

Each fake bot records the pids it wants checked after the test in the file named
by $FAKEBOT_PIDFILE (one a line), so tests can verify nothing is left running.
"""

import json
import os
import sys


def note_pid(pid=None):
    path = os.environ.get("FAKEBOT_PIDFILE")
    if path:
        with open(path, "a") as f:
            f.write(f"{pid or os.getpid()}\n")


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


def hello(name="fake", protocol=(1,)):
    note_pid()
    send({"type": "hello", "protocol": list(protocol), "name": name, "version": "0"})


def messages():
    """Each message from the referee until bye (or end of input)."""
    for line in sys.stdin:
        msg = json.loads(line)
        if msg["type"] in ("bye", "error"):
            return
        yield msg


def requests():
    """Each request; other messages are skipped."""
    for msg in messages():
        if msg["type"] == "request":
            yield msg


def answer(req, decision=0):
    send({"type": "decision", "id": req["id"], "decision": decision})
