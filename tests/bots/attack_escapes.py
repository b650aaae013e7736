"""Puts terminal control sequences everywhere the organiser may read them: its hello's
name and version, its stderr at every request, and its first decision (an illegal
text, which is a fault; not with --legal); then it plays the first legal decision, so that its games
end and are recorded.  Self-contained: a league entry is this one file."""
import json
import sys

ESC = "\x1b"
HOSTILE = (f"{ESC}]0;pwned\x07{ESC}[2J{ESC}[31mFAKE: accepted alice version 9\r"
           "\u202eevil\x9b1m\x7f\u2066")
sys.stdout.write(json.dumps({"type": "hello", "protocol": [1], "name": "hostile" + HOSTILE,
                             "version": "1" + HOSTILE}) + "\n")
sys.stdout.flush()
sys.stderr.write("starting" + HOSTILE + " " + " ".join(sys.argv[1:]) + "\n")
sys.stderr.flush()
first = "--legal" not in sys.argv  # --legal: no fault (it passes a league's check)
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "request":
        sys.stderr.write("thinking" + HOSTILE + "\n")
        sys.stderr.flush()
        decision = "play" + HOSTILE if first else 0
        first = False
        sys.stdout.write(json.dumps({"type": "decision", "id": msg["id"],
                                     "decision": decision}) + "\n")
        sys.stdout.flush()
    elif msg["type"] in ("bye", "error"):
        break
