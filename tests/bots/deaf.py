"""Says hello, then never reads its stdin -- with the pipe shrunk to one page, so the
referee's writes soon block (a bot stuck in a long computation looks the same)."""
import fcntl
import time

from _lib import hello

F_SETPIPE_SZ = 1031
fcntl.fcntl(0, F_SETPIPE_SZ, 4096)
hello("deaf")
time.sleep(600)
