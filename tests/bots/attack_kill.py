"""Kills its worker (its parent), every process it can see, and the pids it was
given (ATTACK_PIDS: the referee, an opponent), whenever it is asked to decide; and
stops them with SIGSTOP."""
import os
import signal

from _attack import play, report, targets


def attack(msg=None):
    pids = [int(p) for p in targets("ATTACK_PIDS")]
    for sig in (signal.SIGSTOP, signal.SIGKILL):
        for pid in [os.getppid(), *pids]:
            if pid in (0, os.getpid()):
                continue
            try:
                os.kill(pid, sig)
                report(f"kill({pid}, {sig.name})", pid != 1, "sent")
            except OSError as e:
                report(f"kill({pid}, {sig.name})", False, e.strerror)
    seen = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != os.getpid()]
    report("see other processes", any(p > 1 for p in seen), f"pids {seen}")


play(on_start=attack, on_request=attack)
