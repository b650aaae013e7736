"""Floods its logs (64 KiB blocks, as fast as it can) during the other seats' turns
only, to make the referee drain them on their time; plays its first legal decision.
Over stdio it floods its stderr, pinned at 64 KiB (the default) for the test's
bound; launched as a ZeroMQ bot, its stdout and its stderr (both only logs there)."""

import fcntl
import os
import threading

from _attack import Channel

BLOCK = 65536
fcntl.fcntl(2, fcntl.F_SETPIPE_SZ, BLOCK)
go = threading.Event()


def flood(fd):
    junk = b"A" * BLOCK
    while True:
        go.wait()
        os.write(fd, junk)


bot = Channel("flood")
for fd in (1, 2) if bot.zmq else (2,):
    threading.Thread(target=flood, args=(fd,), daemon=True).start()
for msg in bot.messages():
    kind = msg["type"]
    if kind == "request":
        go.clear()
        bot.send({"type": "decision", "id": msg["id"], "decision": 0})
        go.set()
    elif kind == "new_game":
        go.set()
    elif kind == "game_over":
        go.clear()
bot.end()
