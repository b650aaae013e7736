"""Starts children until it cannot (ATTACK_COUNT of them at most)."""
import os
import time

from _attack import play, report


def attack():
    want = int(os.environ.get("ATTACK_COUNT", "300"))
    kids = []
    try:
        for _ in range(want):
            pid = os.fork()
            if pid == 0:
                time.sleep(30)
                os._exit(0)
            kids.append(pid)
        report("fork", True, f"{len(kids)} children")
    except OSError as e:
        report("fork", False, f"{e.strerror} after {len(kids)} children")
    for pid in kids:
        os.kill(pid, 9)
        os.waitpid(pid, 0)


play(on_start=attack)
