"""Speaks only protocol version 2."""
from _lib import hello, messages

hello("future", protocol=(2,))
for _ in messages():
    pass
