"""Writes terminal control sequences where the organiser will read them: its hello's
name and version, its stderr (a carriage return and a fake REJECTED line, a screen
clear, a window title) and an illegal decision text."""
import json
import sys

ESC = "\x1b"
FAKE = f"\rXX other-bot REJECTED illegal {ESC}[2J{ESC}]0;pwned\x07\u202eevil"
sys.stdout.write(json.dumps({"type": "hello", "protocol": [1], "name": "bad" + FAKE,
                             "version": "1" + FAKE}) + "\n")
sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "request":
        sys.stderr.write("thinking" + FAKE + "\n")
        sys.stderr.flush()
        sys.stdout.write(json.dumps({"type": "decision", "id": msg["id"],
                                     "decision": "play" + FAKE}) + "\n")
        sys.stdout.flush()
    elif msg["type"] in ("bye", "error"):
        break
