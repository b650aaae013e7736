"""Reads each path it is given as an argument (and in ATTACK_FILES), and says on
stderr what it got: 'READ path: <first line>' or 'BLOCKED path: <error>'."""

import os
import sys

paths = [a for a in sys.argv[1:]] + [p for p in os.environ.get("ATTACK_FILES", "").split(":") if p]
for p in paths:
    try:
        with open(p, encoding="utf-8", errors="replace") as f:
            print(f"READ {p}: {f.readline().strip()}", file=sys.stderr)
    except OSError as e:
        print(f"BLOCKED {p}: {e.strerror}", file=sys.stderr)
