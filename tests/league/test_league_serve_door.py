"""The rest of the front door (issue 21), against a real ``league serve`` on loopback
with real CURVE keys: a flood of fresh unknown keys is a few log lines, not a line
each; an author's ticket and game numbers are their own and tell nothing of the
others' submissions and games."""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import zmq

from referee.league.remote import author_game_id, status_text
from referee.league.run import play_pending, submit
from referee.league.store import LeagueStore
from tests.league.conftest import Referee
from tests.league.leaguehelpers import EXAMPLE_BOTS, make_league
from tests.league.servehelpers import Served, dealer, keys_of, next_event, serve
from tests.procs import Children

pytestmark = pytest.mark.slow

WINDOW = 5.0  # seconds: the server's refusal window in these tests (a minute by default)


@pytest.fixture
def served(tmp_path: Path, referee: Referee, keys: Path,
           children: Children) -> Iterator[Served]:
    yield from serve(tmp_path, referee, keys, children,
                     "[server]\nin_flight = 1\nrequests_per_hour = 100\ncheck_seconds = 30\n",
                     "--refusal-window", str(WINDOW))


def refusal_lines(served: Served) -> tuple[list[str], list[tuple[int, int]]]:
    with served.seen:
        lines = list(served.lines)
    each = [x for x in lines if re.search(r"refused a connection: key \S+ is no author's", x)]
    sums = [(int(m.group(1)), int(m.group(2))) for x in lines
            if (m := re.search(r"refused (\d+) handshakes from (\d+) unknown keys", x))]
    return each, sums


def test_a_flood_of_unknown_keys_is_a_few_log_lines(served: Served) -> None:
    """100 fresh keys (and one of them 20 times more): a handful of lines a window and
    one summary that counts them all, not a line per key."""
    server_key, _ = keys_of(served.keys / "referee.key")
    ctx: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    socks = []
    started = time.monotonic()
    try:
        _, again = zmq.curve_keypair()
        for i in range(120):
            sock, mon = dealer(ctx, served.endpoint, server_key, again if i >= 100 else None)
            socks.append((sock, mon))
        for _, mon in socks:
            assert next_event(mon, past_door=True) == zmq.EVENT_HANDSHAKE_FAILED_AUTH
        refused_by = time.monotonic()
        # Every refusal accounted for: by the summaries, and by the lines of a window
        # that ended with no more refusals than it logged one by one.
        served.wait_line(r"refused \d+ handshakes from \d+ unknown keys", timeout=120)
        deadline = time.monotonic() + 120 + 2 * WINDOW
        while True:
            each, sums = refusal_lines(served)
            if sum(n for n, _ in sums) >= 120 - 5 or time.monotonic() > deadline:
                break
            served.wait_line(r"refused \d+ handshakes", count=len(sums) + 1,
                             timeout=2 * WINDOW + 60)
    finally:
        for sock, mon in socks:
            sock.disable_monitor()
            mon.close(0)
            sock.close(0)
        ctx.term()
    each, sums = refusal_lines(served)
    windows = math.ceil((refused_by - started) / WINDOW) + 1
    assert len(each) <= 5 * windows, (windows, each)
    assert len(sums) <= windows
    assert 120 - 5 <= sum(n for n, _ in sums) <= 120, sums
    assert sum(k for _, k in sums) <= 101, sums  # keys are counted once per window
    assert len(each) + len(sums) < 40  # 120 refusals: a few lines, not one each
    assert served.ask("alice", {"op": "status"})["ok"]  # the door is still open


NOT_A_BOT = {"op": "submit", "command": ["python3", "bot.py"], "transport": "stdio"}


def test_ticket_numbers_are_each_authors_own(served: Served) -> None:
    """alice's first submission is her #1, bob's first his #1, however many came
    before; the organiser's log keeps the league's numbers beside them."""
    first = served.ask("alice", NOT_A_BOT, b"not an archive")
    assert first["ok"] and first["text"].startswith("queued as #1"), first
    served.wait_line(r"#1 \(alice's #1\) refused")
    second = served.ask("alice", NOT_A_BOT, b"not an archive either")
    assert second["ok"] and second["text"].startswith("queued as #2"), second
    bobs = served.ask("bob", NOT_A_BOT, b"nor this")
    assert bobs["ok"] and bobs["text"].startswith("queued as #1"), bobs  # his own #1
    assert bobs["ticket"]["number"] == 1
    served.wait_line(r"#2 \(alice's #2\) refused")
    served.wait_line(r"#3 \(bob's #1\) refused")
    mine = served.ask("bob", {"op": "status", "ticket": 1})
    assert mine["ticket"]["number"] == 1 and mine["text"].startswith("#1 refused")
    assert not served.ask("bob", {"op": "status", "ticket": 2})["ok"]  # alice's #2: not his
    status = served.ask("bob", {"op": "status"})
    assert re.search(r"submissions: #1 refused", status["text"]), status
    assert "#2" not in status["text"] and "#3" not in status["text"]


def no_check(*args: object) -> tuple[bool, str]:
    return True, "(the check is not what this test is about)"


def test_game_ids_are_each_authors_own(tmp_path: Path, need_sandbox: None) -> None:
    """alice and bob see their common games under ids of their own, none the league's;
    one author's id is no id to the other; an author's ids do not move when others
    play more games."""
    league = make_league(tmp_path / "l", seats=[2], deals=1, seed=3)
    for who in ("alice", "bob"):
        assert submit(league, who, EXAMPLE_BOTS, ["python3", "random_bot.py"],
                      checker=no_check).accepted
    play_pending(league, jobs=1, progress=False)

    def ids(name: str) -> list[str]:
        return re.findall(r"^  (\S+)  ", status_text(league, name), flags=re.M)

    alices, bobs = ids("alice"), ids("bob")
    store = LeagueStore.open(league)
    try:
        real = [o.game_id for o in store.outcomes()]
        secret = store.secret()
    finally:
        store.close()
    assert len(alices) == len(bobs) == len(real) == 2
    assert all(re.fullmatch(r"g[0-9a-f]{12}", g) for g in alices + bobs)
    assert not set(alices) & set(bobs) and not set(alices + bobs) & set(real)
    assert sorted(alices) == sorted(author_game_id(secret, "alice", g) for g in real)
    assert "alice@1 (seat" in status_text(league, "alice", alices[0])
    assert "no game of alice has this id" in status_text(league, "alice", bobs[0])
    assert "no game of alice has this id" in status_text(league, "alice", real[0])
    # carol and dave come; bob plays them, alice plays them: alice's old ids stay
    for who in ("carol", "dave"):
        assert submit(league, who, EXAMPLE_BOTS, ["python3", "random_bot.py"],
                      checker=no_check).accepted
    play_pending(league, jobs=1, progress=False)
    later = ids("alice")
    assert set(alices) <= set(later) and len(later) == 6
    text = status_text(league, "alice")
    store = LeagueStore.open(league)
    try:
        assert not any(o.game_id in text for o in store.outcomes())
    finally:
        store.close()
