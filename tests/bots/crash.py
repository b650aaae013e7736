"""Answers two requests, then exits with code 3 (or the code given, or kills itself:
'kill')."""
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
        sys.exit(int(next((a for a in sys.argv[1:] if a.isdigit()), 3)))
    answer(req, 0)
