"""A well-behaved bot: the first legal decision, by index ('--text': by its text)."""
import sys

from _lib import answer, hello, requests

hello("first")
for req in requests():
    answer(req, req["legal"][0] if "--text" in sys.argv else 0)
