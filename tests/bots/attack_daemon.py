"""Leaves a double-forked daemon behind (its command line carries ATTACK_MARK, so
that the test can look for it among the host's processes)."""
import os
import time

from _attack import play, report


def attack():
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv("/bin/sh", ["/bin/sh", "-c", "sleep 120", os.environ["ATTACK_MARK"]])
        os._exit(0)
    report("daemon", True, "started")


def slowly(msg):
    time.sleep(float(os.environ.get("ATTACK_SLOW", "0")))


play(on_start=attack, on_request=slowly)
