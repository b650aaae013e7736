"""The ZeroMQ chaos bot: chaos.py's idea over the ZeroMQ transport -- at each request,
a misbehaviour drawn at random from a mix, for the end-to-end robustness tests
(tests/transport/zmq/test_zmq_chaos.py).

    chaos_zmq.py [--connect ENDPOINT] [--seed N] [--mix SPEC] [--startup SPEC] [--name NAME]
                 [--routing-id ID]

A DEALER connecting to ``--connect`` (a remote bot, started by the test) or else to
UPDOWN_ENDPOINT (a bot the referee launched), under the routing id ID if given (as
many ZeroMQ programs do), else libzmq's own.  A remote bot watches its connection:
when it drops, the bot connects again with a new socket and a new hello.  The
environment may give CHAOS_SEED, CHAOS_MIX, CHAOS_STARTUP, CHAOS_NAME,
CHAOS_ROUTING_ID, and CHAOS_PIDDIR: a folder in which the bot leaves a file named
after its pid and after the pid of every process it starts (so a test can check that
none is left running), and counts its starts (``starts-NAME``).

The mix is ``kind=weight,...`` (kinds not named weigh 0), or ``default``, or
``default,kind=weight,...``.  Kinds (KINDS below): valid replies (``index``,
``text``), bad decisions (``illegal``, ``syntax``, ``range``), replies the referee
discards (``wrong_id``, ``duplicate``, ``flood``), frames that are no message
(``notmsgpack``, ``nonmap``, ``fields``, ``multipart``, ``nested``, ``huge``,
``longtext``, ``protocol``: among them a second hello on the same socket), harmless
noise (``stdout``: the launched bot's stdout is no channel), time (``slow``,
``silent``), the end of the bot (``exit``, ``orphan``, ``reply_exit``, ``close``: the
socket closed while the process lives on, ``freeze``), ``reconnect`` (a new socket
and a new hello mid-game, sometimes under the same routing id), and children left
running while it plays on, holding nothing (``spawn``).  The startup mix (default
``hello``) draws from STARTUP once per start: no hello, a bad one, one that is not
msgpack or in two frames, no common protocol version, the hello twice, gone right
after it, a hello first sent on a socket closed at once.

Each request's draw comes from Random("SEED/GAME_ID/SEAT/N"), each start's from
Random("SEED/start/K") (K counted in CHAOS_PIDDIR), as in chaos.py.  Each choice is
written to stderr ("chaos SEED game G request ID: KIND").  On ``bye`` or ``error``
the bot exits (code 0).
"""

import datetime
import json
import os
import random
import resource
import signal
import subprocess
import sys
import time

import msgpack
import zmq
from _chaos import NAME, PIDDIR, SEED, log, mixes, note_pid, option

KINDS = {
    "index": 30, "text": 10, "illegal": 2, "syntax": 2, "range": 2, "wrong_id": 2,
    "duplicate": 2, "flood": 0.5, "notmsgpack": 1, "nonmap": 1, "fields": 1, "multipart": 1,
    "nested": 1, "huge": 0.5, "longtext": 0.3, "protocol": 1, "stdout": 1, "slow": 1,
    "silent": 1, "exit": 0.4, "orphan": 0.3, "reply_exit": 0.4, "close": 0.3, "freeze": 0.2,
    "reconnect": 0.5, "spawn": 0.3,
}
STARTUP = {"hello": 10, "gone": 1, "bad": 1, "notmsgpack": 1, "multipart": 1, "version": 1,
           "twice": 1, "after": 1, "retry": 1}


ENDPOINT = option("--connect", "UPDOWN_ENDPOINT", "")
#: A routing id of its own for every socket (as many ZeroMQ programs set one), or
#: libzmq's, new for each connection.
ROUTING_ID = option("--routing-id", "CHAOS_ROUTING_ID", "").encode() or None


MIX, STARTUP_MIX = mixes(KINDS, STARTUP)


# -- the socket -------------------------------------------------------------------------

CTX = zmq.Context()
SOCK = None
#: A remote bot (``--connect``) watches its connection, as a careful author's does:
#: ZeroMQ reconnects a dropped DEALER by itself, silently, and the referee takes a
#: new connection for a new session, which starts with a hello.
WATCH = "--connect" in sys.argv
MONITOR = None


def connect(routing_id=ROUTING_ID):
    """A new DEALER to the endpoint (the old one, if any, is left to the caller:
    ``drop``)."""
    global SOCK, MONITOR
    SOCK = CTX.socket(zmq.DEALER)
    SOCK.setsockopt(zmq.LINGER, 1000)
    SOCK.setsockopt(zmq.SNDTIMEO, 5000)  # never blocked for good by a referee gone
    if routing_id is not None:
        SOCK.setsockopt(zmq.ROUTING_ID, routing_id)
    if WATCH:
        MONITOR = SOCK.get_monitor_socket(zmq.EVENT_DISCONNECTED)
    SOCK.connect(ENDPOINT)


def drop(sock, monitor, linger):
    """Close a socket (its monitor first, if it has one)."""
    if monitor is not None:
        sock.disable_monitor()
        monitor.close(linger=0)
    sock.close(linger=linger)


def receive():
    """The referee's next message; a remote bot whose connection dropped connects
    again (a new socket, a new hello) and goes on waiting."""
    while WATCH:
        poller = zmq.Poller()
        poller.register(SOCK, zmq.POLLIN)
        poller.register(MONITOR, zmq.POLLIN)
        if SOCK in dict(poller.poll()):
            break
        log("connection dropped: connecting again")
        drop(SOCK, MONITOR, 0)
        connect()
        send(hello_msg())
    return msgpack.unpackb(SOCK.recv(), raw=False)


def frame(data):
    """Send one frame as it is (msgpack or not)."""
    try:
        SOCK.send(data)
    except zmq.Again:
        log("send timed out")


def send(msg):
    frame(msgpack.packb(msg, use_bin_type=True))


def reply(rid, decision):
    send({"type": "decision", "id": rid, "decision": decision})


TOKEN = os.environ.get("UPDOWN_TOKEN")  # a launched bot's proof that it is the one


def hello_msg(protocol=(1,)):
    return with_token({"type": "hello", "protocol": list(protocol), "name": NAME,
                       "version": f"seed {SEED}"})


def with_token(msg):
    if TOKEN is not None and isinstance(msg, dict) and msg.get("type") == "hello":
        msg = {**msg, "token": TOKEN}
    return msg


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
    reply(req["id"], rng.choice([t for t in ILLEGAL if t not in req["legal"]]))


SYNTAX = ["banana", "", "   ", "play", "play hand", "play hand 7x0", "play hand 7x99",
          "down 3", "3up 7g", "PICKUP", "play hand 7g7r", "éè ü", "x" * 300, "\u0000",
          "play floor 7x1", "1", "3up 7g 7g 7g", "swap", "pickup please"]


def do_syntax(rng, req):
    reply(req["id"], rng.choice(SYNTAX))


def do_range(rng, req):
    n = len(req["legal"])
    reply(req["id"], rng.choice([n, n + 7, -1, -(2 ** 63), 2 ** 63 - 1, 2 ** 64 - 1, 10 ** 9]))


def do_wrong_id(rng, req):
    rid = req["id"]
    reply(rng.choice([rid + 1, rid - 1, 0, -5, 10 ** 12, 2 ** 64 - 1, rid + 1000]), 0)
    reply(rid, valid(rng, req))


def do_duplicate(rng, req):
    d = valid(rng, req)
    reply(req["id"], d)
    reply(req["id"], rng.choice([d, 0, req["legal"][0]]))


def do_flood(rng, req):
    """Many replies to requests that are not pending, in one go, then the reply."""
    stale = msgpack.packb({"type": "decision", "id": req["id"] - 1, "decision": 0})
    for _ in range(rng.choice([50, 500, 3000])):
        frame(stale)
    reply(req["id"], valid(rng, req))


def do_notmsgpack(rng, req):
    rid = req["id"]
    good = msgpack.packb({"type": "decision", "id": rid, "decision": 0})
    frame(rng.choice([
        b"", b"\xc1", b"\xc1\xc1 not msgpack", b"\xff" * 40, good[:-1], good + b"xx",
        json.dumps({"type": "decision", "id": rid, "decision": 0}).encode(),
        b"\xd9\x03\xff\xfe\xfd",  # a str of invalid UTF-8
        b"\x81\xa4type" + b"\xd9\x03\xc3\x28\x00",
        b"\x82\x01\x02\xa4type\xa8decision",  # an integer key
    ]))


def do_nonmap(rng, req):
    rid = req["id"]
    send(rng.choice([
        [1, 2], "decision", 42, None, True, [], -0.5, b"\x00binary",
        msgpack.ExtType(7, b"ext"), [{"type": "decision", "id": rid, "decision": 0}],
        2 ** 64 - 1,
    ]))


def do_fields(rng, req):
    rid = req["id"]
    value = rng.choice([
        {"type": "decision", "id": rid}, {"type": "decision", "decision": 0},
        {"type": "decision", "id": str(rid), "decision": 0},
        {"type": "decision", "id": float(rid), "decision": 0},
        {"type": "decision", "id": rid, "decision": 1.0},
        {"type": "decision", "id": rid, "decision": True},
        {"type": "decision", "id": rid, "decision": None},
        {"type": "decision", "id": rid, "decision": [0]},
        {"type": "decision", "id": rid, "decision": {"index": 0}},
        {"type": "decision", "id": rid, "decision": b"pickup"},
        {"type": "decision", "id": rid, "decision": msgpack.ExtType(1, b"\x00")},
        {"type": "decision", "id": rid, "decision": float("nan")},
        {"type": "decision", "id": [rid], "decision": 0},
        {"type": b"decision", "id": rid, "decision": 0},
        {"type": 5, "id": rid, "decision": 0}, {"id": rid, "decision": 0},
        {"type": "decision", "id": None, "decision": 0},
        {"type": "decision", "id": rid, "decision": 0, "extra": "ignored?"},
    ])
    if rng.random() < 0.1:
        frame(msgpack.packb({"type": "decision", "id": rid,
                             "decision": datetime.datetime.now(datetime.UTC)},
                            datetime=True))
    else:
        send(value)


def do_multipart(rng, req):
    good = msgpack.packb({"type": "decision", "id": req["id"], "decision": valid(rng, req)})
    parts = rng.choice([[b"", good], [good, good], [good, b""], [b"", b"", good],
                        [good] * 20])
    try:
        SOCK.send_multipart(parts)
    except zmq.Again:
        log("send timed out")


def do_nested(rng, req):
    depth = rng.choice([1025, 5000, 100000])
    deep = b"\x91" * depth + b"\xc0"
    if rng.random() < 0.5:
        head = msgpack.packb({"type": "decision", "id": req["id"]})
        frame(b"\x83" + head[1:] + b"\xa8decision" + deep)  # a third field, nested
    else:
        frame(deep)


#: The size limit on what this bot sends: the welcome's ``max_message_bytes``.
LIMIT = 1 << 20


def do_huge(rng, req):
    """A frame of a few MB (over twice the limit: ZeroMQ drops the connection), or of
    exactly the limit (the welcome's), or one byte over it."""
    size = rng.choice([LIMIT, LIMIT + 1, 3 * LIMIT // 2, 3 * LIMIT // 2, 3 * LIMIT])
    if rng.random() < 0.5:
        head = msgpack.packb({"type": "decision", "id": req["id"], "decision": ""})[:-1]
        text = b"x" * (size - len(head) - 5)
        frame(head + b"\xdb" + len(text).to_bytes(4, "big") + text)
    else:
        frame(b"z" * size)


def do_longtext(rng, req):
    """A decision text just within the size limit."""
    reply(req["id"], rng.choice([
        "play hand " + "7g " * (LIMIT // 4), "x" * (LIMIT * 7 // 8),
        "3up " + "7g " * (LIMIT // 4), "pickup" + " " * (LIMIT * 7 // 8),
    ]))


def do_protocol(rng, req):
    rid = req["id"]
    send(rng.choice([
        hello_msg(),  # a second hello on the same socket
        {"type": "move", "id": rid, "decision": 0},
        {"type": "request", "id": rid, "decision": 0},
        {"type": "bye"}, {"type": "welcome"},
    ]))


def do_stdout(rng, req):
    """Noise on stdout and stderr (no channel of the protocol here), then the reply."""
    out = rng.choice([b"thinking...\n" * 50, b"\xff\xfe \xc3\x28\n", b"y" * 100000 + b"\n",
                      msgpack.packb({"type": "decision", "id": req["id"], "decision": 0})])
    os.write(1, out)
    sys.stderr.buffer.write(b"stderr noise \xff\n" * 20)
    sys.stderr.flush()
    reply(req["id"], valid(rng, req))


def do_slow(rng, req):
    """The reply, after the time allowed."""
    time.sleep(max(0.0, req["time_left"] + rng.uniform(-0.02, 0.1)))
    reply(req["id"], valid(rng, req))


def do_silent(rng, req):
    pass


def flush():
    """Close the socket and the context, delivering what was sent (LINGER), as a bot
    that exits properly does."""
    drop(SOCK, MONITOR, 1000)
    CTX.term()


def die(rng):
    """Exit with a status, or by a signal sent to ourselves; sometimes after closing
    the socket properly (what was sent is delivered), sometimes not (it may be lost)."""
    how = rng.choice(["code", "code", "signal"])
    if how == "code":
        code = rng.choice([0, 1, 2, 3, 42, 127, 255])
        log(f"exiting with code {code}")
        if rng.random() < 0.5:
            flush()
        os._exit(code)
    sig = rng.choice([signal.SIGKILL, signal.SIGTERM, signal.SIGSEGV, signal.SIGABRT])
    log(f"killing itself with {sig.name}")
    os.kill(os.getpid(), sig)
    time.sleep(5)
    os._exit(99)


def do_exit(rng, req):
    die(rng)


def start_child(rng):
    """A child holding nothing of ours but its place in the session (sometimes in a
    process group of its own, sometimes leaving a grandchild orphaned)."""
    piddir = PIDDIR or "/tmp"
    child = rng.choice([
        ["sleep", "600"],
        ["sh", "-c", 'echo > "$0/$$"; sleep 600 & echo > "$0/$!"; wait', piddir],
        ["sh", "-c", '(sleep 600 & echo > "$0/$!")', piddir],  # a double fork
    ])
    p = subprocess.Popen(child, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL,
                         process_group=0 if rng.random() < 0.3 else None)
    note_pid(p.pid)
    log(f"started {child[0]} (pid {p.pid})")
    return p


def do_orphan(rng, req):
    start_child(rng)
    time.sleep(0.02)
    die(rng)


def do_spawn(rng, req):
    for _ in range(rng.randint(1, 3)):
        start_child(rng)
    reply(req["id"], valid(rng, req))


def do_reply_exit(rng, req):
    """A valid reply, then gone (seen at the next message the referee sends)."""
    reply(req["id"], valid(rng, req))
    time.sleep(0.005)
    die(rng)


def do_close(rng, req):
    """Close the socket (after a reply, or not) and stay alive until ended."""
    if rng.random() < 0.5:
        reply(req["id"], valid(rng, req))
    drop(SOCK, MONITOR, rng.choice([0, 500]))
    time.sleep(600)


def do_freeze(rng, req):
    """Stop ourselves (SIGSTOP): neither reading nor writing, until killed."""
    log("stopping itself")
    os.kill(os.getpid(), signal.SIGSTOP)
    reply(req["id"], valid(rng, req))  # if ever continued


def do_reconnect(rng, req):
    """A new socket and a new hello mid-game (as a bot that restarts its connection
    does): after replying on the old one, or not; the old one closed first, or after;
    under a new routing id or (a bot that sets its own) the same one."""
    old, old_monitor = SOCK, MONITOR
    if rng.random() < 0.5:
        reply(req["id"], valid(rng, req))
    same = rng.random() < 0.3
    first = rng.random() < 0.7
    if first:
        drop(old, old_monitor, rng.choice([0, 300]))
    connect(routing_id=ROUTING_ID or f"chaos-{NAME}".encode() if same else ROUTING_ID)
    if not first:
        drop(old, old_monitor, 0)
    log(f"reconnected ({'same' if same else 'new'} routing id)")
    send(hello_msg())


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
    """Connect and shake hands, or misbehave in its place (STARTUP)."""
    k = start_number()
    rng = random.Random(f"{SEED}/start/{k}")
    kinds = sorted(STARTUP_MIX)
    kind = rng.choices(kinds, [STARTUP_MIX[x] for x in kinds])[0]
    log(f"start {k}: {kind}")
    connect()
    hello = hello_msg()
    if kind == "gone":
        if rng.random() < 0.5:
            frame(msgpack.packb(hello)[:7])
            flush()
        os._exit(rng.choice([0, 1, 127]))
    elif kind == "bad":
        send(with_token(rng.choice([
            {"type": "hello", "protocol": [1]}, {"type": "hello", "protocol": 1, "name": NAME},
            {"type": "hello", "protocol": [], "name": NAME},
            {"type": "hello", "protocol": [1], "name": "n" * 500},
            {"type": "decision", "id": 1, "decision": 0}, {"type": "howdy"}, [1],
        ])))
        return
    elif kind == "notmsgpack":
        frame(rng.choice([json.dumps(hello).encode(), b"", b"\xc1hello"]))
        return
    elif kind == "multipart":  # as a REQ socket would send it
        SOCK.send_multipart([b"", msgpack.packb(hello)])
        return
    elif kind == "version":
        hello["protocol"] = rng.choice([[2], [0, 7]])
    elif kind == "retry":  # a first socket closed at once, its hello maybe sent
        frame(msgpack.packb(hello))
        drop(SOCK, MONITOR, rng.choice([0, 100]))
        connect()
    send(hello)
    if kind == "twice":  # read as the reply to the first request: a protocol fault
        send(hello)
    elif kind == "after":  # gone before reading the welcome
        flush()
        os._exit(0)


def main():
    global LIMIT
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # SIGSEGV/SIGABRT: no core file
    if not ENDPOINT:
        sys.exit("chaos_zmq.py: no endpoint (UPDOWN_ENDPOINT or --connect)")
    note_pid(os.getpid())
    say_hello()
    kinds = sorted(MIX)
    weights = [MIX[k] for k in kinds]
    game, seat, n = "?", 0, 0
    while True:
        msg = receive()
        t = msg.get("type")
        if t in ("bye", "error"):
            log(f"{t}: {msg.get('reason') or msg.get('message')}")
            drop(SOCK, MONITOR, 0)
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
