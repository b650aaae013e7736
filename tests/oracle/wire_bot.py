"""A bot for tests/oracle/test_wire.py, over stdio (JSON lines) or, when
UPDOWN_TRANSPORT is `zmq`, msgpack over ZeroMQ (a DEALER to UPDOWN_ENDPOINT): logs
every message it receives, as one JSON line each, to the file named by argv[1], and
answers each request with the random legal index of tests/oracle/wire.py's
`random_answer(argv[2], request)` (the same formula, written out here: the bot runs
as a plain script)."""

from __future__ import annotations

import json
import os
import random
import sys
from collections.abc import Callable, Iterator
from typing import Any


def answer(seed: int, msg: dict[str, Any]) -> dict[str, Any]:
    rng = random.Random(f"{seed}:{msg['game_id']}:{msg['id']}")
    return {"type": "decision", "id": msg["id"], "decision": rng.randrange(len(msg["legal"]))}


def run(receive: Iterator[dict[str, Any]], send: Callable[[dict[str, Any]], None],
        log_path: str, seed: int) -> None:
    hello: dict[str, Any] = {"type": "hello", "protocol": [1], "name": "oracle-wire"}
    if os.environ.get("UPDOWN_TOKEN"):
        hello["token"] = os.environ["UPDOWN_TOKEN"]
    send(hello)
    with open(log_path, "w", encoding="utf-8") as log:
        for msg in receive:
            log.write(json.dumps(msg) + "\n")
            log.flush()
            if msg["type"] == "request":
                send(answer(seed, msg))
            elif msg["type"] in ("bye", "error"):
                return


def main() -> None:
    log_path, seed = sys.argv[1], int(sys.argv[2])
    if os.environ.get("UPDOWN_TRANSPORT") == "zmq":
        import msgpack
        import zmq

        ctx = zmq.Context()
        sock = ctx.socket(zmq.DEALER)
        sock.setsockopt(zmq.LINGER, 1000)
        sock.connect(os.environ["UPDOWN_ENDPOINT"])

        def zmq_messages() -> Iterator[dict[str, Any]]:
            while True:
                yield msgpack.unpackb(sock.recv(), raw=False)

        try:
            run(zmq_messages(), lambda m: sock.send(msgpack.packb(m)), log_path, seed)
        finally:
            sock.close()
            ctx.term()
        return

    def stdio_messages() -> Iterator[dict[str, Any]]:
        for line in sys.stdin:
            yield json.loads(line)

    def send(m: dict[str, Any]) -> None:
        sys.stdout.write(json.dumps(m) + "\n")
        sys.stdout.flush()

    run(stdio_messages(), send, log_path, seed)


if __name__ == "__main__":
    main()
