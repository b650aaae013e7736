"""Answers with well-formed JSON that is wrong for the protocol, one fault per request:
a missing field, a mistyped field, an unknown message type, an out-of-range index,
an illegal text; then correct answers."""
from _lib import answer, hello, requests, send

hello("wrong")
for n, req in enumerate(requests()):
    if n == 0:
        send({"type": "decision", "id": req["id"]})
    elif n == 1:
        send({"type": "decision", "id": req["id"], "decision": 1.5})
    elif n == 2:
        send({"type": "move", "id": req["id"], "decision": 0})
    elif n == 3:
        answer(req, 99)
    elif n == 4:
        answer(req, "play hand 99x9")
    else:
        answer(req, 0)
