"""Attaches ptrace to the referee (ATTACK_PIDS), reads its memory through
/proc/PID/mem and its environment."""
import ctypes
import os

from _attack import play, report, targets

PTRACE_ATTACH = 16


def attack():
    libc = ctypes.CDLL(None, use_errno=True)
    for pid in [int(p) for p in targets("ATTACK_PIDS")] + [os.getppid()]:
        rc = libc.ptrace(PTRACE_ATTACH, pid, None, None)
        report(f"ptrace({pid})", rc == 0 and pid not in (0, 1),
               os.strerror(ctypes.get_errno()) if rc else "attached")
        for what in ("environ", "mem", "cmdline"):
            try:
                with open(f"/proc/{pid}/{what}", "rb") as f:
                    data = f.read(4096)
                # Given reversed: the text itself is then in no command line of ours.
                secret = os.environ.get("ATTACK_SECRET", "-")[::-1]
                report(f"/proc/{pid}/{what}", secret.encode() in data, f"{len(data)} bytes")
            except OSError as e:
                report(f"/proc/{pid}/{what}", False, e.strerror)


play(on_start=attack)
