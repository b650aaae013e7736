"""Answers the first request with 300 MB on one line (no newline), then behaves."""
import sys

from _lib import answer, hello, requests

hello("huge")
chunk = b"[" * (1 << 20)
for n, req in enumerate(requests()):
    if n == 0:
        for _ in range(300):
            sys.stdout.buffer.write(chunk)
        sys.stdout.buffer.write(b"\n")
        sys.stdout.flush()
    else:
        answer(req, 0)
