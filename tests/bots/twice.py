"""Answers every request twice."""
from _lib import answer, hello, requests

hello("twice")
for req in requests():
    answer(req, 0)
    answer(req, 0)
