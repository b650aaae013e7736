"""The front door of ``league serve`` (issue 21 items 2 and 3), against a real server
on loopback with real CURVE keys: strangers are refused at the handshake and cost
no memory; a known key's oversized frames are dropped by libzmq; per-author limits;
a slow check runs off the request loop while another author's status is answered;
an archive bomb sent over the wire is refused without a host path in the reply."""

from __future__ import annotations

import contextlib
import io
import json
import re
import subprocess
import tarfile
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

import pytest
import zmq
import zmq.auth

from referee.league.remote import request
from tests.league.conftest import Referee
from tests.league.leaguehelpers import EXAMPLE_BOTS
from tests.league.servehelpers import Served, dealer, keys_of, next_event, serve
from tests.procs import Children, scaled

pytestmark = pytest.mark.slow

SLOW_BOT = '''\
"""The heuristic, one second per decision."""
import sys
import time

import updown_bot
from heuristic_bot import HeuristicBot


class Slow(HeuristicBot):
    def decide(self, observation, legal):
        time.sleep(1.0)
        return super().decide(observation, legal)


if __name__ == "__main__":
    sys.exit(updown_bot.run(Slow()))
'''


@pytest.fixture
def served(tmp_path: Path, referee: Referee, keys: Path,
           children: Children) -> Iterator[Served]:
    yield from serve(tmp_path, referee, keys, children,
                     "[server]\nin_flight = 1\nrequests_per_hour = 40\ncheck_seconds = 6\n"
                     "connections_per_ip = 1000\nhandshakes = 1000\nhandshakes_per_ip = 1000\n"
                     "connections_per_author = 1000\nhandshake_rate_per_ip = 1000\n")


def test_a_flood_from_unknown_keys_costs_no_memory(served: Served) -> None:
    """40 fresh keys each send a 50 MB frame: every one is refused at the handshake,
    the server's peak RSS does not move (its VmHWM, measured before and after), and
    an author is still answered."""
    reply = served.ask("alice", {"op": "status"})
    assert reply["ok"] and "alice has no entries" in str(reply["text"])
    idle = served.peak_rss_kb()
    server_key, _ = keys_of(served.keys / "referee.key")
    frame = b"\x01" * (50 << 20)
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    socks = []
    try:
        for _ in range(40):
            sock, mon = dealer(ctx, served.endpoint, server_key)
            # queued until a handshake that never succeeds; never blocking: a refusal
            # quicker than this send leaves the socket no peer, and a DEALER with no
            # peer blocks a send for ever (a hang seen in CI)
            with contextlib.suppress(zmq.Again):
                sock.send(frame, flags=zmq.NOBLOCK, copy=False)
            socks.append((sock, mon))
        for _, mon in socks:
            assert next_event(mon, past_door=True) == zmq.EVENT_HANDSHAKE_FAILED_AUTH
        served.wait_line(r"refused a connection: key \S+ is no author's", 5)
        reply = served.ask("alice", {"op": "status"})
        assert reply["ok"]
    finally:
        for sock, mon in socks:
            sock.disable_monitor()
            mon.close(0)
            sock.close(0)
        ctx.term()
    after = served.peak_rss_kb()
    assert after - idle < 16 << 10, f"peak RSS {idle} KB idle, {after} KB after the flood"
    # The issue asks for the figure: it is in the assertion's terms (VmHWM, KB).
    print(f"server peak RSS: idle {idle} KB, after 40 x 50 MB from unknown keys {after} KB")


def test_oversized_frames_from_a_known_key_are_dropped(served: Served) -> None:
    """alice's key, 20 frames of 50 MB: libzmq drops each connection on the frame's
    header (over ZMQ_MAXMSGSIZE); memory does not grow, alice is still answered."""
    served.ask("alice", {"op": "status"})
    idle = served.peak_rss_kb()
    server_key, _ = keys_of(served.keys / "referee.key")
    _, secret = keys_of(served.keys / "authors" / "alice.key_secret")
    frame = b"\x02" * (50 << 20)
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    try:
        for _ in range(20):
            sock, mon = dealer(ctx, served.endpoint, server_key, secret)
            try:
                assert next_event(mon) == zmq.EVENT_HANDSHAKE_SUCCEEDED
                sock.send_multipart([b'{"op": "status", "name": "alice"}', frame], copy=False)
                assert next_event(mon) == zmq.EVENT_DISCONNECTED
            finally:
                sock.disable_monitor()
                mon.close(0)
                sock.close(0)
    finally:
        ctx.term()
    reply = served.ask("alice", {"op": "status"})
    assert reply["ok"]
    after = served.peak_rss_kb()
    assert after - idle < 16 << 10, f"peak RSS {idle} KB idle, {after} KB after"
    # More frames than a request.  Three pass the door (a request's two and a PING
    # may be unanswered: under CURVE the door cannot tell a third part from a PING):
    # the server refuses the message, unread.  Four are more than a client may send
    # unanswered: the door cuts the connection at once, before the server sees them.
    ctx = zmq.Context()
    try:
        sock, mon = dealer(ctx, served.endpoint, server_key, secret)
        try:
            assert next_event(mon) == zmq.EVENT_HANDSHAKE_SUCCEEDED
            header = b'{"op": "status", "name": "alice"}'
            sock.send_multipart([header, b"", b"more"])
            assert sock.poll(int(scaled(60_000))), "no answer to three frames"
            reply = json.loads(sock.recv())
            assert not reply["ok"] and "not a submission request" in reply["error"], reply
            sock.send_multipart([header, b"", b"more", b"more"])
            cut = time.monotonic()
            assert next_event(mon) == zmq.EVENT_DISCONNECTED
            # the door's cut, not its idle_seconds (30 s) ending a quiet connection
            assert time.monotonic() - cut < scaled(10)
            assert not sock.poll(0)  # nothing answered the four frames
        finally:
            sock.disable_monitor()
            mon.close(0)
            sock.close(0)
    finally:
        ctx.term()


def slow_bot() -> bytes:
    bot = io.BytesIO()
    with tarfile.open(fileobj=bot, mode="w:gz") as t:
        for f in ("updown_bot.py", "heuristic_bot.py"):
            t.add(EXAMPLE_BOTS / f, f)
        data = SLOW_BOT.encode()
        info = tarfile.TarInfo("slow_bot.py")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    return bot.getvalue()


SLOW = {"op": "submit", "command": ["python3", "slow_bot.py"], "transport": "stdio"}


def test_per_author_limits(served: Served, need_sandbox: None) -> None:
    """in_flight = 1 and requests_per_hour = 40: while alice's first submission is
    queued or being checked (its bot takes a second per decision), her second is
    refused when it begins, before a byte of it is sent; after 40 requests in the
    hour, the 41st is refused with the wait; bob is not affected by alice's count,
    nor may he read as alice."""
    first = served.ask("alice", SLOW, slow_bot())
    assert first["ok"] and re.match(r"queued as #1; 'referee submit --status'",
                                    first["text"]), first
    second = served.ask("alice", SLOW, slow_bot())
    assert not second["ok"]
    assert "alice has 1 submissions queued or being checked" in second["error"]
    assert "[server] in_flight" in second["error"]
    # begin and commit, then the second begin: 3 requests (the chunk is not counted)
    for _ in range(37):
        assert served.ask("alice", {"op": "status"})["ok"]
    over = served.ask("alice", {"op": "status"})
    assert not over["ok"] and "[server] requests_per_hour" in str(over["error"]), over
    assert re.search(r"try again in \d+ s", str(over["error"]))
    assert served.ask("bob", {"op": "status"})["ok"]
    as_alice = request(served.endpoint, {"op": "status", "name": "alice"},
                       key=str(served.keys / "authors" / "bob.key_secret"),
                       server_key=str(served.keys / "referee.key"))
    assert not as_alice["ok"] and "your key is bob's" in str(as_alice["error"])


def test_a_slow_check_does_not_block_the_door(served: Served, need_sandbox: None) -> None:
    """alice's bot takes a second per decision: her check runs off the request loop.
    While it runs, bob's status is answered (and alice's ticket is still being
    checked after the answer came); the check's own budget (check_seconds = 6)
    stops it, and its processes and staging folder go with it."""
    reply = served.ask("alice", SLOW, slow_bot())
    assert reply["ok"], reply
    number = reply["ticket"]["number"]
    while True:  # the check has started (the checker has taken the ticket)
        state = served.ask("alice", {"op": "status", "ticket": number})
        if state["ticket"]["state"] != "queued":
            break
        time.sleep(0.05)
    assert state["ticket"]["state"] == "checking", state
    for _ in range(2):
        asked = time.monotonic()
        answer = served.ask("bob", {"op": "status"}, timeout=10)
        took = time.monotonic() - asked
        assert answer["ok"] and "bob has no entries" in str(answer["text"])
        still = served.ask("alice", {"op": "status", "ticket": number})
        assert still["ticket"]["state"] == "checking", (took, still)
    done = served.wait_line(rf"alice's #{number}\) refused")
    assert "the check took more than 6 s ([server] check_seconds)" in done[0]
    final = served.ask("alice", {"op": "status", "ticket": number})
    assert final["ticket"]["state"] == "refused"
    assert str(served.league) not in str(final)
    assert not list((served.league / "entries").glob(".incoming-*"))
    assert not list((served.league / "entries").glob(".upload-*"))
    leftover = subprocess.run(["pgrep", "-f", "slow_bot.py"], capture_output=True, text=True)
    assert leftover.stdout.strip() == "" or not any(
        str(served.league) in Path(f"/proc/{pid}/cmdline").read_text(errors="replace")
        for pid in leftover.stdout.split() if Path(f"/proc/{pid}").exists())


def test_an_archive_bomb_over_the_wire(served: Served) -> None:
    """A GNU long-name header declaring 1 GiB, sent as alice: her ticket is refused
    in one line naming the member and the limit; no path of this machine in it."""
    info = tarfile.TarInfo("././@LongLink")
    info.type = tarfile.GNUTYPE_LONGNAME
    info.size = 1 << 30
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    body = comp.compress(info.tobuf(format=tarfile.GNU_FORMAT) + b"a" * (200 << 10))
    body += comp.flush()
    reply = served.ask("alice", {"op": "submit", "command": ["python3", "bot.py"],
                                 "transport": "stdio"}, body)
    assert reply["ok"], reply
    number = reply["ticket"]["number"]
    line = served.wait_line(rf"alice's #{number}\) refused")[0]
    final = served.ask("alice", {"op": "status", "ticket": number})
    text = str(final["text"])
    assert final["ticket"]["state"] == "refused"
    assert text == (f"#{number} refused: member 1 is a GNU long name of 1073741824 bytes, "
                    "over the 4097 this league reads (PATH_MAX)"), text
    assert str(served.league.parent) not in text and "/tmp" not in text
    # the organiser sees why too (issue 23): the log names the report the league kept
    saved = served.league / "checks" / f"{number}-refused.txt"
    assert f"(the check's report: {saved})" in line, line
    assert saved.read_text() == text + "\n"


def test_a_reply_is_no_oracle_for_the_servers_paths(served: Served) -> None:
    """A reply hides every absolute path by its shape, so a path an author sends comes
    back alike whether or not it is the server's (found by an attacker: hiding only
    the server's own paths told which guesses were real)."""
    real = [str(served.league), str(served.league.parent), str(Path.home()), "/tmp"]
    made_up = ["/no/such/folder", "/srv/league-x", "/home/nobody", "/var/tmp"]
    errors = {served.ask("alice", {"op": p})["error"] for p in real + made_up}
    assert errors == {"unknown request '<path>': begin, chunk, commit, status or replay"}, errors


def test_replies_an_author_never_reads_are_not_kept(served: Served) -> None:
    """A known author firing requests and reading no answer: the server keeps a few
    replies per connection, then drops them (and the door cuts a client that sends a
    request before the last is answered), and goes on answering others."""
    ctx = zmq.Context()
    try:
        server_key, _ = keys_of(served.keys / "referee.key")
        _, secret = keys_of(served.keys / "authors" / "alice.key_secret")
        sock, mon = dealer(ctx, served.endpoint, server_key, secret)
        assert next_event(mon) == zmq.EVENT_HANDSHAKE_SUCCEEDED
        before = served.peak_rss_kb()
        header = json.dumps({"op": "status", "name": "alice", "game": "x" * 4000}).encode()
        for _ in range(30):  # within requests_per_hour = 40, and what the door lets wait
            sock.send_multipart([header, b""])
        # bob is answered after all of them: they were handled, not queued unread
        assert served.ask("bob", {"op": "status"})["ok"]
        assert served.peak_rss_kb() - before < 20_000
        sock.close(0)
        mon.close(0)
    finally:
        ctx.term()


def bomb() -> bytes:
    """An upload the check refuses at once, without running a bot."""
    info = tarfile.TarInfo("././@LongLink")
    info.type = tarfile.GNUTYPE_LONGNAME
    info.size = 1 << 30
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    return comp.compress(info.tobuf(format=tarfile.GNU_FORMAT) + b"a" * 1000) + comp.flush()


def test_refusals_are_kept_across_restarts_and_commands_forge_no_line(
        tmp_path: Path, referee: Referee, keys: Path, children: Children) -> None:
    """Found by an attacker: a CR/LF in a command word wrote a fake line into the
    server's log, and the league's numbers started again at 1 on each start, so a
    refused check's report (checks/N-refused.txt) overwrote the last server's.  Now
    the command is shown escaped and quoted, and numbers go on across restarts; and
    the answer tells an author only of their own tickets ahead, never the queue's
    length (bob's queued ticket is not counted in alice's answer)."""
    forged = ["python3", "bot.py", "\r\n#99 accepted: alice version 7"]
    reports = []
    for _ in range(2):
        for served in serve(tmp_path, referee, keys, children, "[server]\n"):
            assert served.ask("bob", {"op": "submit", "command": ["python3", "b.py"],
                                      "transport": "stdio"}, bomb())["ok"]
            reply = served.ask("alice", {"op": "submit", "command": forged,
                                         "transport": "stdio"}, bomb())
            assert reply["ok"], reply
            assert "ahead" not in reply["text"], reply
            number = reply["ticket"]["number"]
            line = served.wait_line(rf"alice's #{number}\) refused")[0]
            m = re.search(r"\(the check's report: (\S+)\)", line)
            assert m, line
            reports.append(Path(m.group(1)))
            assert reports[-1].read_text().startswith(f"#{number} refused: member 1")
            submitted = served.wait_line("submission from alice")[0]
            assert "python3 bot.py '\\x0d\\x0a#99 accepted: alice version 7'" in submitted
            assert not any(x.startswith("#99") or "\r" in x for x in served.lines), \
                served.lines
    assert reports[0] != reports[1] and all(p.exists() for p in reports), reports


HOSTILE = "\x1b]0;owned\x07\x1b[2J\x1b[31mFAKE: accepted\u202e\x9b1m\r\n#99"


def raw_controls(value: object) -> list[str]:
    """Every string in a reply (nested) that holds a character a terminal would obey
    (all but printable ones, newlines and tabs)."""
    if isinstance(value, dict):
        return [x for v in value.values() for x in raw_controls(v)]
    if isinstance(value, list):
        return [x for v in value for x in raw_controls(v)]
    if isinstance(value, str) and not value.replace("\n", " ").replace("\t", " ").isprintable():
        return [value]
    return []


def test_a_reply_echoes_nothing_an_author_sent_raw(served: Served) -> None:
    """Found by the network attacker: a ticket "number" of escape codes came back raw
    in the error of its own reply (an author's own client then printed it).  Every
    reply's texts are escaped where the server sends them: the ticket (a string, a
    list), a game id, an unknown request; the ticket is shown as JSON writes it."""
    replies = [served.ask("alice", {"op": "status", "ticket": HOSTILE}),
               served.ask("alice", {"op": "status", "ticket": [HOSTILE, 1]}),
               served.ask("alice", {"op": "status", "game": HOSTILE}),
               served.ask("alice", {"op": HOSTILE})]
    assert [r.get("ok") for r in replies] == [False, False, True, False], replies
    assert not raw_controls(replies), raw_controls(replies)
    assert replies[0]["error"].startswith(
        "a ticket is a number ('submit --status --ticket N'), not \"\\u001b]0;owned"), replies
    assert served.ask("alice", {"op": "status", "ticket": 7})["error"] == "alice has no ticket #7"
