"""Slow but honest: answers every fourth request late -- only once the next request
has come (so surely after its timeout), just before answering that one at once.
Each late reply answers a request the referee did ask: none is a stray.  With
argument 'twice', each late reply is sent twice: the second answers nothing."""
import sys

from _lib import hello, messages, send

twice = sys.argv[1:] == ["twice"]
hello("slow")
held = None
n = 0
for msg in messages():
    if msg["type"] != "request":
        continue
    if held is not None:
        for _ in range(2 if twice else 1):
            send({"type": "decision", "id": held, "decision": 0})
        held = None
    n += 1
    if n % 4 == 0:
        held = msg["id"]  # answered late
    else:
        send({"type": "decision", "id": msg["id"], "decision": 0})
