"""Answers every request with a line that is not JSON."""
import sys

from _lib import hello, requests

hello("garbage")
for _ in requests():
    sys.stdout.write("play the seven please\n")
    sys.stdout.flush()
