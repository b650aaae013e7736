"""Sends, before each of its answers, ATTACK_STRAYS messages nobody asked for
(default 5): 'decision's with ids never sent, each as costly to decode as the size
limit allows (a list of empty lists, just under the welcome's max_message_bytes), so
that the referee spends its CPU on them; then answers with its first legal decision.
Over stdio or, launched as a ZeroMQ bot, over ZeroMQ."""

import os

from _attack import Channel

STRAYS = int(os.environ.get("ATTACK_STRAYS", "5"))


def stray(bot, i, limit):
    """The costliest stray under ``limit`` bytes (without a line's newline)."""
    n = limit
    while True:
        data = bot.encode({"type": "decision", "id": -1 - i, "decision": 0, "x": [[]] * n})
        size = len(data) - (0 if bot.zmq else 1)
        if size <= limit:
            return data
        n -= (size - limit) // (1 if bot.zmq else 3) + 1


bot = Channel("strays")
bombs = []
for msg in bot.messages():
    kind = msg["type"]
    if kind == "welcome":
        bombs = [stray(bot, i, msg["max_message_bytes"]) for i in range(STRAYS)]
    elif kind == "request":
        for data in bombs:
            bot.send_raw(data)
        bot.send({"type": "decision", "id": msg["id"], "decision": 0})
bot.end()
