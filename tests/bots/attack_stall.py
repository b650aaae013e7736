"""Attack (issue 21): stalling while ahead, so that a game time limit stops the game
while it leads (under the old wall-clock limit a stopped game was ranked by the
points held: this won 14 of 16 games against heuristic, 7 of 16 played normally).

Plays index 0 always; while it holds fewer cards than every other seat still
playing, it first sleeps STALL seconds (argv[2]).  MODE (argv[1]):

* ``over``: sleeps whatever its clock says (it stalls past its game clock);
* ``within``: sleeps only while more than three quarters of its game clock
  (``welcome``'s ``time.game``) would be left after the sleep, by the request's
  ``time_left`` (the rest is ample for its quick decisions);
* ``calm``: never sleeps -- the same bot playing on.

It prints ``stalled N`` on stderr after each stall."""

import sys
import time

from _lib import answer, hello, messages

mode, stall = sys.argv[1], float(sys.argv[2])
hello("staller")
clock = None


def held(seat):
    up, down = seat["up"] or [], seat["down"] or []
    return seat["hand"] + len(up) + len(down)


stalls = 0
for msg in messages():
    if msg["type"] == "welcome":
        clock = msg["time"].get("game")
        continue
    if msg["type"] != "request":
        continue
    obs = msg["observation"]
    me = obs["seat"]
    mine = len(obs["hand"]) + held({**obs["seats"][me], "hand": 0})
    others = [held(s) for s in obs["seats"] if s["seat"] != me and s["finished"] is None]
    ahead = obs["phase"] == "play" and others and mine < min(others)
    if ahead and (mode == "over" or (mode == "within" and clock is not None
                                     and msg["time_left"] - stall > clock * 0.75)):
        time.sleep(stall)
        stalls += 1
        sys.stderr.write(f"stalled {stalls}\n")
        sys.stderr.flush()
    answer(msg, 0)
