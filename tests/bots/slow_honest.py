"""Slow but honest: answers every fourth request late -- only once the next request
has come (so surely after its timeout), just before answering that one at once.
Each late reply answers a request the referee did ask: none is a stray.  With
argument 'twice', each late reply is sent twice: the second answers nothing.
Over stdio or, launched as a ZeroMQ bot, over ZeroMQ."""
import sys

from _attack import Channel
from _lib import note_pid

twice = sys.argv[1:] == ["twice"]
note_pid()
bot = Channel("slow")
held = None
n = 0
for msg in bot.messages():
    if msg["type"] != "request":
        continue
    if held is not None:
        for _ in range(2 if twice else 1):
            bot.send({"type": "decision", "id": held, "decision": 0})
        held = None
    n += 1
    if n % 4 == 0:
        held = msg["id"]  # answered late
    else:
        bot.send({"type": "decision", "id": msg["id"], "decision": 0})
bot.end()
