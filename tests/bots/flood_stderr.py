"""Writes 1 MB to stderr before each answer (far more than the log keeps)."""
import sys

from _lib import answer, hello, requests

hello("chatty")
junk = ("x" * 1023 + "\n") * 1024
for req in requests():
    sys.stderr.write(junk)
    sys.stderr.flush()
    answer(req, 0)
