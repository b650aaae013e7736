"""Grabs memory without bound at its first request."""
from _lib import hello, requests

hello("hog")
hoard = []
for _ in requests():
    while True:
        hoard.append(bytearray(16 << 20))
