"""What the attacking bots share (tests/players/sandbox/): a stdio bot that always plays its
first legal decision, and ``report``, which says on stderr whether an attack worked.

Each attack bot is a few lines: what it tries, at its start or at each request.
Targets come in ATTACK_* variables (the configuration's ``env``: a bot may be given
those).  stdlib only: the bot runs inside the sandbox.
"""

import json
import os
import sys


def report(attack, succeeded, detail=""):
    """One line the test reads from the bot's stderr log."""
    word = "SUCCEEDED" if succeeded else "blocked"
    sys.stderr.write(f"ATTACK {attack}: {word}: {detail}\n")
    sys.stderr.flush()


def targets(name):
    value = os.environ.get(name, "")
    return [t for t in value.split(os.pathsep) if t]


def play(on_request=None, on_start=None, on_over=None, name="attacker"):
    """Speak the protocol over stdio until bye; ``on_*`` hooks get the messages."""
    out = sys.stdout
    out.write(json.dumps({"type": "hello", "protocol": [1], "name": name}) + "\n")
    out.flush()
    started = False
    for line in sys.stdin:
        msg = json.loads(line)
        kind = msg.get("type")
        if kind == "welcome" and on_start and not started:
            started = True
            on_start()
        elif kind == "request":
            choice = on_request(msg) if on_request else None
            out.write(json.dumps({"type": "decision", "id": msg["id"],
                                  "decision": 0 if choice is None else choice}) + "\n")
            out.flush()
        elif kind == "game_over" and on_over:
            on_over(msg)
        elif kind in ("bye", "error"):
            return 0
    return 0


class Channel:
    """The protocol over this bot's own transport (``UPDOWN_TRANSPORT``): JSON lines
    on stdin/stdout, or, launched as a ZeroMQ bot, msgpack frames on a DEALER
    connected to ``UPDOWN_ENDPOINT`` (its hello carries ``UPDOWN_TOKEN``).  For the
    attacks that go through either (msgpack and pyzmq: the referee's own Python)."""

    def __init__(self, name):
        self.zmq = os.environ.get("UPDOWN_TRANSPORT") == "zmq"
        hello = {"type": "hello", "protocol": [1], "name": name}
        if self.zmq:
            import msgpack
            import zmq

            self._msgpack = msgpack
            self.sock = zmq.Context().socket(zmq.DEALER)
            self.sock.setsockopt(zmq.LINGER, 1000)
            self.sock.connect(os.environ["UPDOWN_ENDPOINT"])
            hello["token"] = os.environ.get("UPDOWN_TOKEN")
        self.send(hello)

    def encode(self, msg):
        """One message as this transport sends it (a frame, or a line)."""
        if self.zmq:
            return self._msgpack.packb(msg)
        return (json.dumps(msg, separators=(",", ":")) + "\n").encode()

    def send_raw(self, data):
        if self.zmq:
            self.sock.send(data)
        else:
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()

    def send(self, msg):
        self.send_raw(self.encode(msg))

    def messages(self):
        """The referee's messages, up to ``bye`` or ``error`` (then the bot ends)."""
        while True:
            if self.zmq:
                msg = self._msgpack.unpackb(self.sock.recv(), raw=False)
            else:
                line = sys.stdin.readline()
                if not line:
                    return
                msg = json.loads(line)
            if msg.get("type") in ("bye", "error"):
                return
            yield msg

    def end(self):
        if self.zmq:
            self.sock.close(linger=0)
        sys.stdout.flush()
        os._exit(0)  # its threads (a flood) end with it
