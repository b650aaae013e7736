"""Answers two requests, then exits with code 3 (or kills itself: 'kill')."""
import os
import signal
import sys

from _lib import answer, hello, requests

hello("crash")
for n, req in enumerate(requests()):
    if n == 2:
        if "kill" in sys.argv:
            os.kill(os.getpid(), signal.SIGKILL)
        sys.stderr.write("crash.py: giving up\n")
        sys.exit(3)
    answer(req, 0)
