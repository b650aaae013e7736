"""Tries the system calls the kernel fence denies, with harmless arguments, and says
on stderr what each returned: 'CALL name: <errno name>' (or 'ok' if it ran), and
its seccomp mode ('SECCOMP 2': under a filter)."""

import ctypes
import errno
import platform
import sys

NUMBERS = {  # name: (x86_64, aarch64)
    "io_uring_setup": (425, 425),
    "bpf": (321, 280),
    "userfaultfd": (323, 282),
    "keyctl": (250, 219),
    "add_key": (248, 217),
    "request_key": (249, 218),
    "perf_event_open": (298, 241),
    "unshare": (272, 97),
}
arch = 0 if platform.machine() == "x86_64" else 1
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
for name, nrs in NUMBERS.items():
    ctypes.set_errno(0)
    r = libc.syscall(ctypes.c_long(nrs[arch]), ctypes.c_long(0), ctypes.c_long(0),
                     ctypes.c_long(0), ctypes.c_long(0), ctypes.c_long(0))
    e = ctypes.get_errno()
    print(f"CALL {name}: {'ok' if r >= 0 else errno.errorcode.get(e, e)}", file=sys.stderr)
with open("/proc/self/status") as f:
    for line in f:
        if line.startswith("Seccomp:"):
            print(f"SECCOMP {line.split()[1]}", file=sys.stderr)
