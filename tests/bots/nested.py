"""Answers with JSON nested 100000 deep."""
import sys

from _lib import answer, hello, requests

hello("nested")
for n, req in enumerate(requests()):
    if n == 0:
        deep = "[" * 100000 + "]" * 100000
        sys.stdout.write(f'{{"type":"decision","id":{req["id"]},"decision":{deep}}}\n')
        sys.stdout.flush()
    else:
        answer(req, 0)
