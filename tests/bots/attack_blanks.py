"""Writes ATTACK_BLANK_MB megabytes of blank lines (default 1) before each of its
answers, in 64 KiB blocks: blank lines are ignored, and no stray, so the referee
would read them line by line for as long as the bot wrote them (the bot attacker's
F4: 0.42 s of the referee's CPU a second).  Then it plays its first legal decision."""

import os
import sys

from _attack import play

BLOCK = "\n" * 65536
BLOCKS = int(float(os.environ.get("ATTACK_BLANK_MB", "1")) * 16)


def flood(_msg):
    for _ in range(BLOCKS):
        sys.stdout.write(BLOCK)
    return 0


sys.exit(play(on_request=flood, name="blanks"))
