"""Writes the tournament's database and records (ATTACK_FILES): forged standings,
then junk over everything."""
from _attack import play, report, targets


def forge():
    for path in targets("ATTACK_FILES"):
        try:
            with open(path, "r+b") as f:
                f.write(b"junk" * 1024)
            report(f"write {path}", True)
        except OSError as e:
            report(f"write {path}", False, e.strerror)


play(on_start=forge, on_request=lambda msg: forge())
