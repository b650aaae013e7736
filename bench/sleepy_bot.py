"""A bot that thinks: it answers every request with index 0 after sleeping ``SLEEP``
seconds (argv[1], default 0.05), for bench/concurrency.py.

It notes when it read each request and when it wrote each reply (CLOCK_MONOTONIC,
one clock for every process of the machine) and, at each game's end, writes them to
its stderr as one line ``T <game id> <read>,<wrote> ...``: between one bot's reply
and the next request of the same game (to either bot), the time is all the
referee's.  Only the standard library: it runs in the sandbox as it is.
"""

import json
import sys
import time

sleep = float(sys.argv[1]) if len(sys.argv) > 1 else 0.05
out = sys.stdout
clock = time.monotonic
out.write('{"type":"hello","protocol":[1],"name":"sleepy"}\n')
out.flush()
game = "?"
times = []
for line in sys.stdin:
    read = clock()
    msg = json.loads(line)
    kind = msg["type"]
    if kind == "request":
        time.sleep(sleep)
        wrote = clock()
        out.write(f'{{"type":"decision","id":{msg["id"]},"decision":0}}\n')
        out.flush()
        times.append(f"{read:.6f},{wrote:.6f}")
    elif kind == "new_game":
        game = msg.get("game_id", "?")
        times = []
    elif kind == "game_over":
        sys.stderr.write(f"T {game} {' '.join(times)}\n")
        sys.stderr.flush()
    elif kind in ("bye", "error"):
        break
