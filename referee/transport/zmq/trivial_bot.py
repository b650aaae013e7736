"""The smallest correct ZeroMQ bot (``python -m referee.transport.zmq.trivial_bot``),
for ``referee.players.external.bench_game_zmq``: it answers every request with index 0,
and needs nothing beyond pyzmq and msgpack."""

from __future__ import annotations

import os
import sys
from typing import Any

import msgpack
import zmq
import zmq.auth.thread

from .transport import ENV_ENDPOINT, ENV_TOKEN


def trivial_bot(endpoint: str, name: str = "trivial") -> int:
    """A bot that answers every request with index 0 (for ``bench_game_zmq``): the
    smallest correct ZeroMQ bot, with no dependency beyond pyzmq and msgpack."""
    ctx = zmq.Context()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 1000)
    try:
        sock.connect(endpoint)
        hello: dict[str, Any] = {"type": "hello", "protocol": [1], "name": name}
        if os.environ.get(ENV_TOKEN):
            hello["token"] = os.environ[ENV_TOKEN]
        sock.send(msgpack.packb(hello))
        while True:
            msg = msgpack.unpackb(sock.recv(), raw=False)
            if msg.get("type") == "request":
                sock.send(msgpack.packb({"type": "decision", "id": msg["id"],
                                         "decision": 0}))
            elif msg.get("type") in ("bye", "error"):
                return 0
    finally:
        sock.close()
        ctx.term()


if __name__ == "__main__":
    sys.exit(trivial_bot(os.environ[ENV_ENDPOINT]))
