"""A bot that loads a model file from outside its folder before it says hello
(ATTACK_MODEL, or its first argument): in the sandbox it cannot, and check-bot says
why in words."""
import json
import sys

path = sys.argv[1] if len(sys.argv) > 1 else "/nonexistent/model.bin"
with open(path, "rb") as f:
    f.read(1)
sys.stdout.write(json.dumps({"type": "hello", "protocol": [1], "name": "model"}) + "\n")
sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "request":
        sys.stdout.write(json.dumps({"type": "decision", "id": msg["id"], "decision": 0}) + "\n")
        sys.stdout.flush()
    elif msg["type"] in ("bye", "error"):
        break
