"""Seeds derived from seeds: one random stream per purpose, from one seed.

``derive_seed(seed, *labels)`` is a pure function, stable across processes and
Python versions: a tournament's deals and seatings (``referee.tournament.schedule``)
and an in-process bot's stream (``referee.play.runner.InProcessPlayer``) are drawn with it.
"""

from __future__ import annotations

import hashlib

#: The largest seed the referee takes: every seed is a whole number from 0 to
#: 2**63 - 1, a signed 64-bit integer, as SQLite, msgpack and every JSON library
#: store it (a bigger one could be played but not recorded).  ``referee play``'s
#: games use SEED, SEED+1, ...: the last of them must fit too.
MAX_SEED = 2**63 - 1


def derive_seed(seed: int, *parts: object) -> int:
    """A 63-bit seed from the tournament seed and a path of labels; stable across
    processes and Python versions (no ``hash()``)."""
    text = ":".join([str(seed), *map(str, parts)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1
