"""Writes up to ATTACK_MB megabytes to each path given, and says on stderr how many
it wrote and why it stopped: 'WROTE path: <MB> MB, <error or done>'."""

import os
import sys

limit = int(os.environ.get("ATTACK_MB", "64"))
chunk = b"x" * (1 << 20)
for path in sys.argv[1:]:
    written, why = 0, "done"
    try:
        with open(path, "wb") as f:
            while written < limit:
                f.write(chunk)
                f.flush()
                written += 1
    except OSError as e:
        why = e.strerror
    print(f"WROTE {path}: {written} MB, {why}", file=sys.stderr)
