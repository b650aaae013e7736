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
