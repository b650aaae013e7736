"""Answers its first request with a line of invalid UTF-8."""
import sys

from _lib import answer, hello, requests

hello("bad-utf8")
for n, req in enumerate(requests()):
    if n == 0:
        sys.stdout.buffer.write(b'{"type":"decision","id":%d,"decision":"\xff\xfe"}\n' % req["id"])
        sys.stdout.flush()
    else:
        answer(req, 0)
