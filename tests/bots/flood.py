"""Answers its first request with replies to request 0 (never sent), as fast as it can
for 15 s, reading nothing meanwhile; then exits."""
import sys
import time

from _lib import hello, requests

hello("flood")
stale = b'{"type":"decision","id":0,"decision":0}\n' * 100
for _ in requests():
    end = time.monotonic() + 15
    while time.monotonic() < end:
        sys.stdout.buffer.write(stale)
        sys.stdout.flush()
    sys.exit(0)
