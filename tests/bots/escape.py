"""Starts a child that leaves the bot's session (setsid) and holds its pipes, then
plays well: ending the bot must end the escaped child too."""
import subprocess

from _lib import answer, hello, note_pid, requests

child = subprocess.Popen(["sleep", "600"], start_new_session=True)
note_pid(child.pid)
hello("escape")
for req in requests():
    answer(req, 0)
