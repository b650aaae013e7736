"""A library banner on stdout before the hello (PROTOCOL.md checklist), then a
correct bot."""
import sys

from _lib import answer, hello, note_pid, requests

note_pid()
sys.stdout.write("MyLib 2.1 -- loading tables\n")
sys.stdout.flush()
hello("banner")
for req in requests():
    answer(req)
