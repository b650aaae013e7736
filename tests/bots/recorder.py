"""Records every line it reads and writes, as a bot author's logging bot would, to
the file named by argv[1] (one JSON object a line, prefixed 'in ' or 'out ').  It
answers with the first legal decision, except on every 25th request, where it sends
an illegal text (the referee rejects it and substitutes) -- so that the recording
holds 'rejected' messages too."""
import json
import sys

log = open(sys.argv[1], "a", encoding="utf-8")  # noqa: SIM115


def send(msg):
    line = json.dumps(msg)
    log.write("out " + line + "\n")
    log.flush()
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


send({"type": "hello", "protocol": [1], "name": "recorder", "version": "1.0"})
n = 0
for line in sys.stdin:
    log.write("in " + line.rstrip("\n") + "\n")
    log.flush()
    msg = json.loads(line)
    if msg["type"] in ("bye", "error"):
        break
    if msg["type"] == "request":
        n += 1
        send({"type": "decision", "id": msg["id"],
              "decision": "play hand 11x1" if n % 25 == 0 else 0})
