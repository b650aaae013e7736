"""Seeds derived from seeds: one random stream per purpose, from one seed.

``derive_seed(seed, *labels)`` is a pure function, stable across processes and
Python versions: a tournament's deals and seatings (``referee.tournament.schedule``)
and an in-process bot's stream (``referee.play.runner.InProcessPlayer``) are drawn with it.
"""

from __future__ import annotations

import hashlib


def derive_seed(seed: int, *parts: object) -> int:
    """A 63-bit seed from the tournament seed and a path of labels; stable across
    processes and Python versions (no ``hash()``)."""
    text = ":".join([str(seed), *map(str, parts)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1
