"""Writes 256 KB to stderr before each answer: four times what a pipe holds
(64 KB), more than twice what the test's log keeps (100 KB)."""
import sys

from _lib import answer, hello, requests

hello("chatty")
junk = ("x" * 1023 + "\n") * 256
for req in requests():
    sys.stderr.write(junk)
    sys.stderr.flush()
    answer(req, 0)
