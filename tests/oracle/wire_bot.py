"""A stdio bot for tests/oracle/test_wire.py: logs every line it receives (raw, one
per line) to the file named by argv[1] and answers each request with the random
legal index `random_answer(argv[2], request)` (kept in step with tests/oracle/wire.py,
which it cannot import from the sandbox-free test's working directory: same formula)."""

from __future__ import annotations

import json
import random
import sys


def main() -> None:
    log_path, seed = sys.argv[1], int(sys.argv[2])
    out = sys.stdout
    out.write(json.dumps({"type": "hello", "protocol": [1], "name": "oracle-wire"}) + "\n")
    out.flush()
    with open(log_path, "w", encoding="utf-8") as log:
        for line in sys.stdin:
            log.write(line if line.endswith("\n") else line + "\n")
            log.flush()
            msg = json.loads(line)
            if msg["type"] == "request":
                rng = random.Random(f"{seed}:{msg['game_id']}:{msg['id']}")
                answer = rng.randrange(len(msg["legal"]))
                out.write(json.dumps({"type": "decision", "id": msg["id"], "decision": answer}))
                out.write("\n")
                out.flush()
            elif msg["type"] in ("bye", "error"):
                return


if __name__ == "__main__":
    main()
