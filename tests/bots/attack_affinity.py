"""Widens its CPU affinity to every CPU of the machine."""
import os

from _attack import play, report


def attack():
    before = os.sched_getaffinity(0)
    try:
        os.sched_setaffinity(0, set(range(os.cpu_count() or 1)))
    except OSError as e:
        report("sched_setaffinity", False, e.strerror)
    after = os.sched_getaffinity(0)
    report("widen affinity", after != before, f"before {sorted(before)} after {sorted(after)}")


play(on_start=attack)
