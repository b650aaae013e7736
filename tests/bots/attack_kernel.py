"""Keeps working inside the kernel, where a freezer cannot stop it, while the other
seats are on the clock: a child loops on madvise(MADV_POPULATE_READ) over a large
read-only mapping (the zero page everywhere: only page tables are charged; each call
runs up to seconds in the kernel, and a task is frozen only as it leaves the kernel).
The bot itself answers its first legal decision at once.  The child counts its
calls in /tmp/kernel (its scratch), for the test to see it did work; stdlib only."""

import ctypes
import json
import os
import sys

MADV_POPULATE_READ = 22  # Linux 5.14
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                      ctypes.c_int, ctypes.c_long]
libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]


def churn():
    fd = os.open("/tmp/kernel", os.O_WRONLY | os.O_CREAT, 0o644)
    size, calls, parent = 4 << 30, 0, os.getppid()
    while True:
        p = libc.mmap(None, size, 1, 0x22 | 0x4000, -1, 0)  # PROT_READ, PRIVATE|ANON|NORESERVE
        if p in (None, ctypes.c_void_p(-1).value):
            size //= 2  # over the address-space limit: smaller
            if size < 1 << 20:
                os._exit(1)
            continue
        if libc.madvise(p, size, MADV_POPULATE_READ) != 0:
            print("madvise failed, errno", ctypes.get_errno(), file=sys.stderr, flush=True)
        libc.munmap(p, size)
        calls += 1
        os.pwrite(fd, b"%20d" % calls, 0)
        if os.getppid() != parent:
            os._exit(0)  # the bot is gone


if os.fork() == 0:
    churn()


def send(msg):
    sys.stdout.write(json.dumps(msg) + "\n")
    sys.stdout.flush()


send({"type": "hello", "protocol": [1], "name": "kernel", "version": "1"})
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "request":
        send({"type": "decision", "id": msg["id"], "decision": 0})
    elif msg["type"] in ("bye", "error"):
        break
