"""A minimal ZeroMQ bot for the tests: DEALER to ``UPDOWN_ENDPOINT``, answers index 0.

CURVE keys come from ``UPDOWN_SERVER_KEY`` / ``UPDOWN_PUBLIC_KEY`` /
``UPDOWN_SECRET_KEY`` when set.  ``--connect ENDPOINT`` overrides the environment
(the convention protocol/ZEROMQ.md documents).  Misbehaviours for the fault tests:

    --name NAME        the name in the hello (default "zmqbot")
    --garbage          send bytes that are not msgpack instead of the first decision
    --not-a-map        send a msgpack list instead of the first decision
    --oversize N       send a frame of N bytes instead of the first decision
    --two-frames       send the first decision as a two-part message
    --silent           never answer a request
    --die-after K      exit (code 3) on receiving request number K, without replying
    --log FILE         append every message received, as a repr line
    --delay S          wait S seconds before connecting

Not part of the referee: test scaffolding that speaks only the protocol.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import msgpack
import zmq


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--connect", default=os.environ.get("UPDOWN_ENDPOINT"))
    ap.add_argument("--name", default="zmqbot")
    ap.add_argument("--garbage", action="store_true")
    ap.add_argument("--not-a-map", action="store_true")
    ap.add_argument("--oversize", type=int, default=0)
    ap.add_argument("--two-frames", action="store_true")
    ap.add_argument("--silent", action="store_true")
    ap.add_argument("--die-after", type=int, default=0)
    ap.add_argument("--log")
    ap.add_argument("--delay", type=float, default=0.0)
    args = ap.parse_args()
    time.sleep(args.delay)
    if not args.connect:
        print("zmq_bot: no endpoint (UPDOWN_ENDPOINT or --connect)", file=sys.stderr)
        return 2
    ctx = zmq.Context()
    sock = ctx.socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 1000)
    server_key = os.environ.get("UPDOWN_SERVER_KEY")
    if server_key:
        sock.setsockopt(zmq.CURVE_SERVERKEY, server_key.encode())
        sock.setsockopt(zmq.CURVE_PUBLICKEY, os.environ["UPDOWN_PUBLIC_KEY"].encode())
        sock.setsockopt(zmq.CURVE_SECRETKEY, os.environ["UPDOWN_SECRET_KEY"].encode())
    sock.connect(args.connect)
    log = open(args.log, "a") if args.log else None  # noqa: SIM115

    def send(msg: object) -> None:
        sock.send(msgpack.packb(msg, use_bin_type=True))

    hello = {"type": "hello", "protocol": [1], "name": args.name}
    if os.environ.get("UPDOWN_TOKEN"):
        hello["token"] = os.environ["UPDOWN_TOKEN"]
    send(hello)
    requests = 0
    try:
        while True:
            msg = msgpack.unpackb(sock.recv(), raw=False)
            if log:
                print(repr(msg), file=log, flush=True)
            kind = msg.get("type")
            if kind in ("bye", "error"):
                return 0
            if kind != "request":
                continue
            requests += 1
            if requests == args.die_after:
                return 3
            if args.silent:
                continue
            if requests == 1 and args.garbage:
                sock.send(b"\xc1\xc1 not msgpack")
            elif requests == 1 and args.not_a_map:
                send([1, 2, 3])
            elif requests == 1 and args.oversize:
                sock.send(b"\x00" * args.oversize)
            elif requests == 1 and args.two_frames:
                sock.send_multipart([b"", msgpack.packb({"type": "decision", "id": msg["id"],
                                                         "decision": 0})])
            else:
                send({"type": "decision", "id": msg["id"], "decision": 0})
    finally:
        sock.close()
        ctx.term()


if __name__ == "__main__":
    sys.exit(main())
