"""Answers its first request with a decision carrying an unknown field nested 1000
levels deep (within the 1024 levels a message may have: a legal message), then plays
its first legal decision with a marker field, so a transcript can be seen to go on."""
import sys

from _lib import hello, requests

hello("deep")
for n, req in enumerate(requests()):
    extra = "[" * 1000 + "]" * 1000 if n == 0 else '"still-here"'
    sys.stdout.write(f'{{"type":"decision","id":{req["id"]},"decision":0,"x":{extra}}}\n')
    sys.stdout.flush()
