"""Fills its scratch (/tmp), then writes into its own folder and the system."""
import os

from _attack import play, report


def attack():
    written = 0
    chunk = b"x" * (1 << 20)
    try:
        with open("/tmp/fill", "wb") as f:
            for _ in range(200):
                f.write(chunk)
                f.flush()
                written += len(chunk)
        report("fill /tmp", True, f"{written >> 20} MB")
    except OSError as e:
        report("fill /tmp", False, f"{e.strerror} after {written >> 20} MB")
    os.remove("/tmp/fill")
    for path in (os.path.join(os.getcwd(), "planted.txt"), "/usr/planted.txt",
                 "/etc/planted.txt"):
        try:
            with open(path, "w") as f:
                f.write("planted")
            report(f"write {path}", True)
        except OSError as e:
            report(f"write {path}", False, e.strerror)


play(on_start=attack)
