"""The chaos bot: at each request, a misbehaviour drawn at random from a mix, for the
end-to-end robustness tests (tests/tournament/test_tournament_chaos.py).

    chaos.py [--seed N] [--mix SPEC] [--startup SPEC] [--name NAME]

or the environment: CHAOS_SEED, CHAOS_MIX, CHAOS_STARTUP, CHAOS_NAME, and
CHAOS_PIDDIR, a folder in which the bot leaves a file named after its pid and after
the pid of every process it starts (so a test can check that none is left running),
and counts its starts (``starts-NAME``).

The mix is ``kind=weight,...`` (kinds not named weigh 0), or ``default``, or
``default,kind=weight,...`` to change the default weights.  Kinds (KINDS below):
valid replies (``index``, ``text``), bad decisions (``illegal``, ``syntax``,
``range``), replies the referee discards (``wrong_id``, ``duplicate``, ``flood``),
undecodable lines (``json``, ``utf8``, ``nonobject``, ``nested``, ``fields``,
``huge``, ``longtext``, ``protocol``), harmless noise (``blank``, ``stderr``,
``split``, ``trailing``), time (``slow``, ``silent``), and the end of the bot
(``exit``, ``orphan``, ``close``, ``close_stdin``, ``reply_exit``, ``freeze``), and
children left running while it plays on (``spawn``).  The startup mix (default
``hello``: a plain hello) draws from STARTUP the same way, once per start: a banner
line first, an exit before the hello, a wrong first message, no common protocol
version, the hello twice, an exit right after it.

Each request's draw comes from Random("SEED/GAME_ID/SEAT/N") (N: the bot's Nth
request of that game), so a game goes the same way whichever process or worker plays
it; each start's from Random("SEED/start/K") (K: how many starts before it, counted
in CHAOS_PIDDIR: with two workers, which start gets which draw may vary).  Each
choice is written to stderr ("chaos SEED game G request ID: KIND ...").
"""

import json
import os
import random
import resource
import signal
import subprocess
import sys
import time

from _chaos import NAME, PIDDIR, SEED, log, mixes, note_pid
from _lib import send

KINDS = {
    "index": 30, "text": 10, "illegal": 2, "syntax": 2, "range": 2, "wrong_id": 2,
    "duplicate": 2, "flood": 0.5, "json": 1, "utf8": 1, "nonobject": 1, "nested": 1,
    "fields": 1, "huge": 0.5, "longtext": 0.5, "protocol": 1, "blank": 2, "stderr": 2,
    "split": 1, "trailing": 1, "slow": 1, "silent": 1, "exit": 0.4, "orphan": 0.4,
    "close": 0.3, "close_stdin": 0.3, "reply_exit": 0.4, "freeze": 0.2, "spawn": 0.3,
}
STARTUP = {"hello": 10, "banner": 1, "gone": 1, "bad": 1, "version": 1, "twice": 1,
           "after": 1}


MIX, STARTUP_MIX = mixes(KINDS, STARTUP)


def raw(data):
    """Write bytes to stdout as they are (a line, or anything else)."""
    sys.stdout.buffer.write(data)
    sys.stdout.flush()


def reply(rid, decision):
    send({"type": "decision", "id": rid, "decision": decision})


def valid(rng, req):
    return rng.randrange(len(req["legal"]))


# -- the misbehaviours: each gets the request's random stream and the request ----------

def do_index(rng, req):
    reply(req["id"], valid(rng, req))


def do_text(rng, req):
    text = rng.choice(req["legal"])
    words = text.split()
    if words[0] == "3up" and rng.random() < 0.5:  # the three cards in another order
        cards = words[1:]
        rng.shuffle(cards)
        words = ["3up", *cards]
    sep = rng.choice([" ", "  ", " \t "])
    reply(req["id"], rng.choice(["", " "]) + sep.join(words) + rng.choice(["", "  "]))


ILLEGAL = ["pickup", "draw", "decline", "keep", "down 0", "down 1", "down 2",
           "play hand 7x1", "play hand 10x3", "play 3up 5x1", "play hand C+2", "play 3up C",
           "3up 1g 2g 3g", "swap 7g 8g", "play hand 7g 7r"]


def do_illegal(rng, req):
    choices = [t for t in ILLEGAL if t not in req["legal"]]
    reply(req["id"], rng.choice(choices))


SYNTAX = ["banana", "", "   ", "play", "play hand", "play hand 7x0", "play hand 7x99",
          "down 3", "down x", "3up 7g", "PICKUP", "play hand 7g7r", "draw draw", "éè ü",
          "x" * 300, "play hand 1x1 extra", "\u0000", "play floor 7x1", "1", "play hand C+1r",
          "3up 7g 7g 7g", "swap", "pickup please"]


def do_syntax(rng, req):
    reply(req["id"], rng.choice(SYNTAX))


def do_range(rng, req):
    n = len(req["legal"])
    reply(req["id"], rng.choice([n, n + 7, -1, -(2 ** 63), 2 ** 63 - 1, 2 ** 64 - 1, 10 ** 9]))


def do_wrong_id(rng, req):
    rid = req["id"]
    wrong = rng.choice([rid + 1, rid - 1, 0, -5, 10 ** 12, rid + 1000])
    reply(wrong, 0)
    reply(rid, valid(rng, req))


def do_duplicate(rng, req):
    d = valid(rng, req)
    reply(req["id"], d)
    reply(req["id"], rng.choice([d, 0, req["legal"][0]]))


def do_flood(rng, req):
    """Many replies to requests that are not pending, in one go, then the reply."""
    rid = req["id"]
    line = json.dumps({"type": "decision", "id": rid - 1, "decision": 0}) + "\n"
    raw(line.encode() * rng.choice([50, 500, 3000]))
    reply(rid, valid(rng, req))


def do_json(rng, req):
    line = rng.choice([
        "{", '{"type":"decision","id":@,"decision":0', '{"type":"decision","id":@,"decision":0}}',
        "{'type':'decision'}", '{"type":"decision","id":@,"decision":NaN}',
        '{"type":"decision","id":@,"decision":Infinity}', '{"type":"decision" "id":@}',
        '{"type":"decision","id":@,"decision":0} trailing', "// a comment",
        '{"type":"decision","id":@,"decision":"\\ud800"}', '{"a":1e400}',
        "play the seven please", '{"type":"decision","id":@,"decision":0,}',
    ])
    raw(line.replace("@", str(req["id"])).encode() + b"\n")


def do_utf8(rng, req):
    rid = req["id"]
    raw(rng.choice([
        b'{"type":"decision","id":%d,"decision":"\xff\xfe"}' % rid, b"\xc3\x28",
        b'{"type":"decision","id":%d,"decision":"\xed\xa0\x80"}' % rid,
        b'{"type":"decision","id":%d,"decision":"\xc0\xaf"}' % rid, b"\xff" * 40,
    ]) + b"\n")


def do_nonobject(rng, req):
    line = rng.choice([
        "[1,2]", '"decision"', "42", "null", "true", "[]", "-0.5",
        '[{"type":"decision","id":@,"decision":0}]',
    ])
    raw(line.replace("@", str(req["id"])).encode() + b"\n")


def do_nested(rng, req):
    depth = rng.choice([1025, 5000, 100000])
    deep = "[" * depth + "]" * depth
    if rng.random() < 0.5:
        raw(b'{"type":"decision","id":%d,"decision":%s}\n' % (req["id"], deep.encode()))
    else:
        raw(deep.encode() + b"\n")


def do_fields(rng, req):
    rid = req["id"]
    send(rng.choice([
        {"type": "decision", "id": rid}, {"type": "decision", "decision": 0},
        {"type": "decision", "id": str(rid), "decision": 0},
        {"type": "decision", "id": float(rid), "decision": 0},
        {"type": "decision", "id": rid, "decision": 1.0},
        {"type": "decision", "id": rid, "decision": True},
        {"type": "decision", "id": rid, "decision": None},
        {"type": "decision", "id": rid, "decision": [0]},
        {"type": 5, "id": rid, "decision": 0}, {"id": rid, "decision": 0},
        {"type": "decision", "id": None, "decision": 0},
    ]))


#: The size limit on what this bot sends: the welcome's ``max_message_bytes``.
LIMIT = 1 << 20


def do_huge(rng, req):
    """A line of a few times the limit, or of exactly the limit (the welcome's), or
    one byte over it."""
    head = b'{"type":"decision","id":%d,"decision":"' % req["id"]
    size = rng.choice([2 * LIMIT, 3 * LIMIT, LIMIT, LIMIT + 1])
    if rng.random() < 0.5:
        raw(head + b"x" * (size - len(head) - 2) + b'"}\n')
    else:
        raw(b"z" * size + b"\n")


def do_longtext(rng, req):
    """A decision text just within the size limit."""
    reply(req["id"], rng.choice([
        "play hand " + "7g " * (LIMIT // 4), "x" * (LIMIT * 7 // 8),
        "3up " + "7g " * (LIMIT // 4), "down " + "1" * (LIMIT * 7 // 8),
        "pickup" + " " * (LIMIT * 7 // 8),
    ]))


def do_protocol(rng, req):
    rid = req["id"]
    send(rng.choice([
        {"type": "hello", "protocol": [1], "name": NAME},
        {"type": "move", "id": rid, "decision": 0},
        {"type": "request", "id": rid, "decision": 0},
        {"type": "bye"},
    ]))


def do_blank(rng, req):
    raw(rng.choice([b"\n", b"\n\n\n", b"\r\n", b"   \n", b"\t\n\n"]))
    line = json.dumps({"type": "decision", "id": req["id"], "decision": valid(rng, req)})
    raw(line.encode() + rng.choice([b"\n", b"\r\n"]))


def do_stderr(rng, req):
    noise = rng.choice([
        b"thinking...\n" * 50, b"\xff\xfe invalid utf-8 \xc3\x28\n", b"y" * 100000 + b"\n",
        b"no newline at the end", b"\x1b[31mred\x1b[0m\n", b"\n" * 200,
    ])
    sys.stderr.buffer.write(noise)
    sys.stderr.flush()
    reply(req["id"], valid(rng, req))


def do_split(rng, req):
    line = json.dumps({"type": "decision", "id": req["id"], "decision": valid(rng, req)})
    data = (line + "\n").encode()
    cuts = sorted(rng.sample(range(1, len(data)), 2))
    for a, b in ((0, cuts[0]), (cuts[0], cuts[1]), (cuts[1], len(data))):
        raw(data[a:b])
        time.sleep(0.003)


def do_trailing(rng, req):
    """The reply, then a stray line: the referee reads it as the reply to the next
    request (PROTOCOL.md, "When the referee reads what you send")."""
    line = json.dumps({"type": "decision", "id": req["id"], "decision": valid(rng, req)})
    stray = rng.choice([
        "a log line on stdout",
        json.dumps({"type": "decision", "id": req["id"] - 3, "decision": 0}),
        json.dumps({"type": "hello", "protocol": [1], "name": NAME}),
        json.dumps({"type": "decision", "id": req["id"] + 1, "decision": 0}),
    ])
    raw((line + "\n" + stray + "\n").encode())


def do_slow(rng, req):
    """The reply, after the time allowed."""
    time.sleep(max(0.0, req["time_left"] + rng.uniform(-0.02, 0.1)))
    reply(req["id"], valid(rng, req))


def do_silent(rng, req):
    pass


def die(rng):
    """Exit with a status, or by a signal sent to ourselves."""
    how = rng.choice(["code", "code", "signal", "half"])
    if how == "half":  # half a reply, then gone
        raw(b'{"type":"deci')
        how = "code"
    if how == "code":
        code = rng.choice([0, 1, 2, 3, 42, 127, 255])
        log(f"exiting with code {code}")
        os._exit(code)
    sig = rng.choice([signal.SIGKILL, signal.SIGTERM, signal.SIGSEGV, signal.SIGABRT])
    log(f"killing itself with {sig.name}")
    os.kill(os.getpid(), sig)
    time.sleep(5)
    os._exit(99)


def do_exit(rng, req):
    die(rng)


def start_child(rng):
    """A child inheriting stdin and stdout (sometimes in a process group of its own,
    sometimes leaving a grandchild orphaned inside the session)."""
    piddir = PIDDIR or "/tmp"
    child = rng.choice([
        ["sleep", "600"],
        ["sh", "-c", 'echo > "$0/$$"; sleep 600 & echo > "$0/$!"; wait', piddir],
        ["sh", "-c", 'echo > "$0/$$"; while :; do echo junk; sleep 0.01; done', piddir],
        ["sh", "-c", '(sleep 600 & echo > "$0/$!")', piddir],  # a double fork
    ])
    p = subprocess.Popen(child, process_group=0 if rng.random() < 0.3 else None)
    note_pid(p.pid)
    log(f"started {child[0]} (pid {p.pid}) holding the pipes")
    return p


def do_orphan(rng, req):
    """Start a child that holds the pipes open, then exit."""
    start_child(rng)
    time.sleep(0.02)
    die(rng)


def do_spawn(rng, req):
    """Start children (which hold the pipes), and play on."""
    for _ in range(rng.randint(1, 3)):
        start_child(rng)
    reply(req["id"], valid(rng, req))


def do_reply_exit(rng, req):
    """A valid reply, then gone (seen at the next message the referee sends)."""
    reply(req["id"], valid(rng, req))
    if rng.random() < 0.3:
        start_child(rng)
    time.sleep(0.005)
    die(rng)


def do_close_stdin(rng, req):
    """Close stdin, reply, and stay alive (until ended)."""
    os.close(0)
    reply(req["id"], valid(rng, req))
    time.sleep(600)


def do_freeze(rng, req):
    """Stop ourselves (SIGSTOP): neither reading nor writing, until killed."""
    log("stopping itself")
    os.kill(os.getpid(), signal.SIGSTOP)
    reply(req["id"], valid(rng, req))  # if ever continued


def do_close(rng, req):
    """Close stdout and stay alive (until ended)."""
    sys.stdout.flush()
    os.close(1)
    if rng.random() < 0.5:
        time.sleep(600)
    for _ in sys.stdin.buffer:  # reads on, answering nothing
        pass
    time.sleep(600)


ACTIONS = {name[3:]: fn for name, fn in globals().items() if name.startswith("do_")}
assert set(ACTIONS) == set(KINDS), set(ACTIONS) ^ set(KINDS)


def start_number():
    """How many times this bot was started before (counted in CHAOS_PIDDIR)."""
    if not PIDDIR:
        return 0
    fd = os.open(os.path.join(PIDDIR, f"starts-{NAME}"), os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, b"x")
        return os.fstat(fd).st_size - 1
    finally:
        os.close(fd)


def say_hello():
    """The handshake, or a misbehaviour in its place (STARTUP)."""
    hello = {"type": "hello", "protocol": [1], "name": NAME, "version": f"seed {SEED}"}
    k = start_number()
    rng = random.Random(f"{SEED}/start/{k}")
    kinds = sorted(STARTUP_MIX)
    kind = rng.choices(kinds, [STARTUP_MIX[x] for x in kinds])[0]
    log(f"start {k}: {kind}")
    if kind == "banner":
        raw(b"MyLib 2.1 -- loading tables\n")
    elif kind == "gone":
        if rng.random() < 0.5:
            raw(b'{"type":"hel')
        os._exit(rng.choice([0, 1, 127]))
    elif kind == "bad":
        send(rng.choice([
            {"type": "hello", "protocol": [1]}, {"type": "hello", "protocol": 1, "name": NAME},
            {"type": "hello", "protocol": [], "name": NAME},
            {"type": "hello", "protocol": [1], "name": "n" * 500},
            {"type": "decision", "id": 1, "decision": 0}, {"type": "howdy"}, [1],
        ]))
        time.sleep(600)  # until ended
    elif kind == "version":
        hello["protocol"] = rng.choice([[2], [0, 7]])
    send(hello)
    if kind == "twice":  # read as the reply to the first request: a protocol fault
        send(hello)
    elif kind == "after":  # gone before reading the welcome
        os._exit(0)


def main():
    global LIMIT
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # SIGSEGV/SIGABRT: no core file
    note_pid(os.getpid())
    say_hello()
    kinds = sorted(MIX)
    weights = [MIX[k] for k in kinds]
    game, seat, n = "?", 0, 0
    for line in sys.stdin.buffer:
        msg = json.loads(line)
        t = msg.get("type")
        if t in ("bye", "error"):
            return
        if t == "welcome":
            LIMIT = msg.get("max_message_bytes", LIMIT)
        if t == "new_game":
            game, seat, n = msg["game_id"], msg["seat"], 0
        if t != "request":
            continue
        n += 1
        rng = random.Random(f"{SEED}/{game}/{seat}/{n}")
        kind = rng.choices(kinds, weights)[0]
        log(f"game {game} request {msg['id']} (#{n}): {kind}")
        ACTIONS[kind](rng, msg)


if __name__ == "__main__":
    main()
