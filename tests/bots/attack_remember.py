"""Fingerprints every deal it sees (all seats' 3UP cards, which every seating of a
deal shows alike when every bot chooses the same way) and says so when it sees one
twice -- remembered in its memory and in a file in /tmp that its other instances
would also see, if they shared a scratch."""
import json
import os

from _attack import play, report

seen = set()
SHARED = os.environ.get("ATTACK_SHARED", "/tmp/deals-seen.json")


def on_request(msg):
    obs = msg["observation"]
    if obs["phase"] != "play" or msg["game_id"] in seen:
        return None
    seen.add(msg["game_id"])
    fp = json.dumps(sorted(sorted(s["up"]) for s in obs["seats"]))
    try:
        with open(SHARED) as f:
            shared = set(json.load(f))
    except OSError:
        shared = set()
    mine = {x for x in seen if x.startswith("[")}
    if fp in mine or fp in shared:
        report("remember a deal", True, f"deal seen twice in game {msg['game_id']}: {fp}")
    else:
        report("remember a deal", False, f"a new deal in game {msg['game_id']}")
    seen.add(fp)
    with open(SHARED, "w") as f:
        json.dump(sorted(shared | {fp}), f)
    return None


play(on_request=on_request)
