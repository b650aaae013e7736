"""Three children each take ATTACK_MB megabytes and hold them: together more than
the bot's limit, each alone under it.  Then it says how many still hold theirs."""
import os
import time

from _attack import play, report


def attack():
    mb = int(os.environ.get("ATTACK_MB", "200"))
    kids = []
    for _ in range(3):
        pid = os.fork()
        if pid == 0:
            block = bytearray(mb << 20)
            for j in range(0, len(block), 4096):
                block[j] = 1
            time.sleep(30)
            os._exit(0)
        kids.append(pid)
        time.sleep(0.5)
    time.sleep(1.0)
    alive = [pid for pid in kids if os.waitpid(pid, os.WNOHANG) == (0, 0)]
    report("hold memory together", len(alive) * mb > int(os.environ.get("ATTACK_LIMIT", "0")),
           f"{len(alive)} of 3 children hold {mb} MB each")
    for pid in alive:
        os.kill(pid, 9)


play(on_start=attack)
