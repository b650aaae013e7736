"""Answers its first request too late (after 'delay' seconds), then every later
request at once: the late reply must be discarded, not applied to a newer request."""
import sys
import time

from _lib import answer, hello, requests

delay = float(sys.argv[1])
hello("late")
for n, req in enumerate(requests()):
    if n == 0:
        time.sleep(delay)
        answer(req, len(req["legal"]) - 1)  # not the substitute: a wrong one if applied
    else:
        answer(req, 0)
