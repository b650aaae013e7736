"""Prints what a bot can learn of the host from inside: its pid 1's environment and
command line, its own mounts, command line and working directory."""

import os
import sys

for path in ("/proc/1/environ", "/proc/1/cmdline", "/proc/self/cmdline",
             "/proc/self/mountinfo", "/proc/self/environ"):
    with open(path, "rb") as f:
        data = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
    for line in data.splitlines():
        print(f"HOST {path}: {line}", file=sys.stderr)
print(f"HOST cwd: {os.getcwd()}", file=sys.stderr)
