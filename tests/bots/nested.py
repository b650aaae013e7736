"""Answers with JSON nested 2000 deep (past the 1024 levels allowed, within the
size limit)."""
import sys

from _lib import answer, hello, requests

hello("nested")
for n, req in enumerate(requests()):
    if n == 0:
        deep = "[" * 2000 + "]" * 2000
        sys.stdout.write(f'{{"type":"decision","id":{req["id"]},"decision":{deep}}}\n')
        sys.stdout.flush()
    else:
        answer(req, 0)
