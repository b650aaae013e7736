"""Writes to stderr everything it can read of where it runs: its own and its pid 1's
mounts, environment, command line and cgroup, where its links in /proc point, and
its folder's listing, one 'SPY <what>: <text>' line each."""

import os
import sys


def say(what, text):
    for line in text.splitlines() or [""]:
        print(f"SPY {what}: {line}", file=sys.stderr)


for pid in ("self", "1"):
    for name in ("mountinfo", "mounts", "environ", "cmdline", "cgroup", "status"):
        path = f"/proc/{pid}/{name}"
        try:
            with open(path, "rb") as f:
                data = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
        except OSError as e:
            data = f"({e.strerror})"
        say(path, data)
    for name in ("cwd", "exe", "root"):
        path = f"/proc/{pid}/{name}"
        try:
            say(path, os.readlink(path))
        except OSError as e:
            say(path, f"({e.strerror})")
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError as e:
        say(f"/proc/{pid}/fd", f"({e.strerror})")
        continue
    for fd in fds:
        try:
            say(f"/proc/{pid}/fd/{fd}", os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError as e:
            say(f"/proc/{pid}/fd/{fd}", f"({e.strerror})")
for here, dirs, files in os.walk("/bot"):
    for n in dirs + files:
        p = os.path.join(here, n)
        say("listing", f"{p} {oct(os.lstat(p).st_mode)}")
say("cwd", os.getcwd())
try:
    with open("/bot/written", "w") as f:
        f.write("x")
    say("write", "written")
except OSError as e:
    say("write", f"({e.strerror})")
