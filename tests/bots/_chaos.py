"""What the two chaos bots (chaos.py over stdio, chaos_zmq.py over ZeroMQ) share:
their options, their mixes of misbehaviours, and where they note their pids and log.
Standard library only; imported from the bots' own folder."""

import os
import sys


def option(flag, env, default):
    """``flag VALUE`` on the command line, else the environment variable, else default."""
    if flag in sys.argv[1:-1]:
        return sys.argv[sys.argv.index(flag) + 1]
    return os.environ.get(env, default)


SEED = option("--seed", "CHAOS_SEED", "0")
NAME = option("--name", "CHAOS_NAME", "chaos")
PIDDIR = os.environ.get("CHAOS_PIDDIR")


def parse_mix(spec, table, fallback):
    """``kind=weight,...`` (or ``default``, or ``default,kind=weight``) as weights over
    ``table``'s kinds; ``fallback`` alone when nothing weighs."""
    weights = {}
    for part in spec.replace(" ", "").split(","):
        if not part:
            continue
        if part == "default":
            weights.update(table)
            continue
        kind, _, w = part.partition("=")
        if kind not in table:
            script = os.path.basename(sys.argv[0])
            sys.exit(f"{script}: unknown kind {kind!r} (kinds: {', '.join(table)})")
        weights[kind] = float(w or 1)
    return {k: w for k, w in weights.items() if w > 0} or {fallback: 1.0}


def mixes(kinds, startup):
    """The per-request mix and the start-up mix, from --mix and --startup."""
    return (parse_mix(option("--mix", "CHAOS_MIX", "default"), kinds, "index"),
            parse_mix(option("--startup", "CHAOS_STARTUP", "hello"), startup, "hello"))


def note_pid(pid):
    """Leave a file named after ``pid`` in CHAOS_PIDDIR (the tests check none lives on)."""
    if PIDDIR:
        with open(os.path.join(PIDDIR, str(pid)), "w") as f:
            f.write(NAME)


def log(text):
    sys.stderr.write(f"chaos {SEED} {text}\n")
    sys.stderr.flush()
