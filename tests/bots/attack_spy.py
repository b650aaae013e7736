"""Reads what the referee keeps: the database, the records, the keys, other bots'
files (ATTACK_FILES), and whatever /proc shows of other processes' open files."""
import contextlib
import glob
import os

from _attack import play, report, targets


def spy():
    for path in targets("ATTACK_FILES"):
        try:
            with open(path, "rb") as f:
                data = f.read(64)
            report(f"read {path}", True, f"{len(data)} bytes")
        except OSError as e:
            report(f"read {path}", False, e.strerror)
    others = [p for p in glob.glob("/proc/[0-9]*/fd/*")
              if not p.startswith((f"/proc/{os.getpid()}/", "/proc/self/"))]
    found = []
    for p in others:
        with contextlib.suppress(OSError):
            found.append(os.readlink(p))
    leaks = [t for t in found if any(t.startswith(x) for x in targets("ATTACK_FILES"))]
    report("/proc/*/fd", bool(leaks), f"{len(found)} links, {len(leaks)} to targets")


play(on_start=spy)
