"""Closes its stdout at its first request, and stays alive."""
import os
import time

from _lib import hello, requests

hello("shut")
for _ in requests():
    os.close(1)
    time.sleep(600)
