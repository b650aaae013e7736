"""Remote bots in tournaments (``remote = true``): a bot its author starts, which
connects to the tournament over ZeroMQ -- real sockets, real bot processes
(tests/transport/zmq/zmq_bot.py, started as its author would), real worker processes.

Worker 0 listens and plays every game with a remote bot; a bot that does not come,
or does not come back, is absent and its games are forfeited without waiting."""

from __future__ import annotations

import random
import socket
import sqlite3
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import msgpack
import pytest
import zmq

from referee.play.runner import BotFault
from referee.players.remote_seats import RemoteBotError, RemoteSeats
from referee.tournament.config import TournamentConfigError, load_config, parse_config
from referee.tournament.executor import Notice, SerialExecutor
from referee.tournament.players import check_bots
from referee.tournament.run import run_tournament
from referee.transport.zmq.keys import load_public_key, load_secret_key, new_keypair
from tests.procs import scaled

pytestmark = pytest.mark.slow

StartBot = Callable[..., subprocess.Popen[bytes]]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wildcard_port() -> int:
    """A port to listen on at every address (0.0.0.0): one below the kernel's
    ephemeral range, free at every address now.  A port found free by binding port 0
    is from the ephemeral range, so any connection made meanwhile (a busy machine
    makes thousands) may take it as its local port, at any address, and listening at
    0.0.0.0 then fails with "Address already in use"; below the range only an
    explicit bind can take it."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            low = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    pick = random.Random()
    for _ in range(200):
        port = pick.randrange(max(1024, low // 2), low)
        with socket.socket() as s:
            try:
                s.bind(("0.0.0.0", port))
            except OSError:
                continue
            return port
    raise AssertionError("no free port below the ephemeral range")


@pytest.fixture
def start_bot(remote_bot: StartBot) -> StartBot:
    """The test bot, started as its author would (it connects, and retries, until the
    referee listens); killed at the end of the test."""
    return remote_bot


def rows(out: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(out / "tournament.sqlite")
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def config_text(listen: str, *, wait: float = 30, rewait: float = 5, deals: int = 2,
                keys: str = "") -> str:
    return f"""
[tournament]
name = "remote"
deals = {deals}
output = "out"
[remote]
listen = "{listen}"
wait = {wait}
rewait = {rewait}
{keys}
[[bots]]
name = "alice"
remote = true
[[bots]]
name = "heuristic"
builtin = "heuristic"
[[bots]]
name = "random"
builtin = "random"
"""


# --- configuration --------------------------------------------------------------------------

def test_remote_bots_in_the_configuration() -> None:
    cfg = parse_config({
        "remote": {"listen": "tcp://127.0.0.1:6000", "wait": 5, "rewait": 1.5},
        "bots": [{"name": "alice", "remote": True}, {"name": "b", "remote": "bob-key"},
                 {"name": "h", "builtin": "heuristic"}]})
    assert [b.remote for b in cfg.bots] == ["alice", "bob-key", None]
    assert [b.kind for b in cfg.bots] == ["remote", "remote", "builtin"]
    assert (cfg.remote.listen, cfg.remote.wait, cfg.remote.rewait) == (
        "tcp://127.0.0.1:6000", 5.0, 1.5)
    assert cfg.to_dict()["bots"][1] == {"name": "b", "remote": "bob-key"}
    # Where the bots connect does not change a result: a resumed tournament may move.
    moved = parse_config({"remote": {"listen": "tcp://127.0.0.1:7000"},
                          "bots": [{"name": "alice", "remote": True},
                                   {"name": "b", "remote": "bob-key"},
                                   {"name": "h", "builtin": "heuristic"}]})
    assert moved.fingerprint() == cfg.fingerprint()


@pytest.mark.parametrize("raw, words", [
    ({"bots": [{"name": "a", "remote": True, "command": "x"}, {"name": "b", "builtin": "random"}]},
     r"bots\[0\] \(a\): give exactly one of .* or remote = true \(got command, remote\)"),
    ({"bots": [{"name": "a", "remote": 3}, {"name": "b", "builtin": "random"}]},
     r"bots\[0\] \(a\)\.remote: must be true .* not 3"),
    ({"bots": [{"name": "a", "remote": "k"}, {"name": "b", "remote": "k"}]},
     r"bots\[1\] \(b\)\.remote: 'k' is the remote name of two bots"),
    ({"bots": [{"name": "a", "remote": True, "transport": "zmq"},
               {"name": "b", "builtin": "random"}]},
     r"bots\[0\] \(a\)\.transport: only applies to an external bot"),
    ({"remote": {"wait": 3}, "bots": [{"name": "a", "builtin": "random"},
                                      {"name": "b", "builtin": "random"}]},
     r"remote: no bot is remote"),
    ({"remote": {"keys": "k"}, "bots": [{"name": "a", "remote": True},
                                        {"name": "b", "builtin": "random"}]},
     r"remote\.server_key: CURVE needs both keys"),
    ({"remote": {"listen_on": "x"}, "bots": [{"name": "a", "remote": True},
                                             {"name": "b", "builtin": "random"}]},
     r"remote\.listen_on: unknown key; did you mean 'listen'\?"),
    ({"remote": {"rewait": -1}, "bots": [{"name": "a", "remote": True},
                                         {"name": "b", "builtin": "random"}]},
     r"remote\.rewait: must be a number of seconds"),
])
def test_remote_configuration_mistakes(raw: dict[str, object], words: str) -> None:
    with pytest.raises(TournamentConfigError, match=words):
        parse_config(raw, source="t.toml")


def test_listening_beyond_loopback_needs_keys_and_every_key_file(tmp_path: Path) -> None:
    bots = [{"name": "alice", "remote": True}, {"name": "h", "builtin": "heuristic"}]
    listen = f"tcp://0.0.0.0:{wildcard_port()}"
    open_cfg = parse_config({"remote": {"listen": listen}, "bots": bots})
    with pytest.raises(TournamentConfigError, match=rf"^remote: listening on {listen} "
                       r"\(not loopback\) needs CURVE: give keys DIR .* and server_key FILE"):
        check_bots(open_cfg)
    new_keypair(tmp_path / "keys", "referee")
    (tmp_path / "keys" / "bots").mkdir()
    keyed = parse_config({"remote": {"listen": listen, "keys": "keys/bots",
                                     "server_key": "keys/referee.key_secret"}, "bots": bots},
                         base_dir=str(tmp_path))
    with pytest.raises(TournamentConfigError, match=r"no public key for remote bot 'alice': "
                       r".*keys/bots/alice\.key does not exist"):
        check_bots(keyed)
    new_keypair(tmp_path / "keys" / "bots", "alice")
    check_bots(keyed)  # the paths are relative to the configuration's folder


# --- playing --------------------------------------------------------------------------------

def test_a_remote_bot_with_its_keys_plays_its_games_in_worker_0(
        tmp_path: Path, start_bot: StartBot) -> None:
    keys = tmp_path / "keys"
    new_keypair(keys, "referee")
    new_keypair(keys / "bots", "alice")
    secret = load_secret_key(keys / "bots" / "alice.key_secret")
    (keys / "bots" / "alice.key_secret").unlink()  # the author's, not the referee's
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    path = tmp_path / "t.toml"
    path.write_text(config_text(endpoint, keys='keys = "keys/bots"\n'
                                'server_key = "keys/referee.key_secret"'))
    bot = start_bot(endpoint, "alice", {
        "UPDOWN_SERVER_KEY": load_public_key(keys / "referee.key").decode(),
        "UPDOWN_PUBLIC_KEY": zmq.curve_public(secret).decode(),
        "UPDOWN_SECRET_KEY": secret.decode()})
    cfg = load_config(path)
    summary = run_tournament(cfg, jobs=2, quiet=True)
    assert summary.errors == [] and summary.played == 12
    out = tmp_path / "out"
    played = rows(out, "SELECT g.worker, g.faults FROM games g JOIN seats s ON s.idx = g.idx "
                       "WHERE s.bot = 'alice'")
    assert len(played) == 8  # 2 deals x 2 seatings x 2 opponents
    assert {w for w, _ in played} == {0}
    assert all(f == "[]" for _, f in played)
    assert bot.wait(scaled(10)) == 0  # told bye at the end, it exited


def test_an_absent_remote_bot_forfeits_its_games_without_stopping_the_others(
        tmp_path: Path) -> None:
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    path = tmp_path / "t.toml"
    # A later game's wait (rewait) is long, so that waiting once per game (12 x 30 s)
    # could never pass for waiting once (0.3 s), whatever the machine's load: the
    # bound below is no race with the referee's own speed (9.6 s seen at load 24).
    path.write_text(config_text(endpoint, wait=0.3, rewait=30, deals=3))
    notices: list[str] = []
    t0 = time.monotonic()
    summary = run_tournament(load_config(path), quiet=True, executor=_Collecting(notices))
    took = time.monotonic() - t0
    assert summary.errors == [] and summary.played == 18
    assert took < scaled(90)  # waited once (0.3 s), not once per game (12 x 30 s)
    out = tmp_path / "out"
    faults = rows(out, "SELECT g.faults, g.forfeits FROM games g JOIN seats s "
                       "ON s.idx = g.idx WHERE s.bot = 'alice'")
    assert len(faults) == 12
    assert all('"crash"' in f and "alice did not connect: " in f and fo != "[]"
               for f, fo in faults)
    assert sum("remote bot alice is absent: it has not connected to" in f
               for f, _ in faults) == 12  # the wait came before the first game
    assert notices[0].startswith(f"waiting up to 0.3s for remote bot alice: connect to "
                                 f"{endpoint} (no CURVE")
    assert notices[1:] == [
        f"remote bot 'alice' did not connect to {endpoint} within 0.3s (nothing tried to "
        f"connect: is the bot started, with UPDOWN_ENDPOINT={endpoint}?); the games of a bot "
        f"that is not there are forfeited until it connects"]  # said once, not per game
    others = rows(out, "SELECT faults FROM games WHERE idx NOT IN "
                       "(SELECT idx FROM seats WHERE bot = 'alice')")
    assert len(others) == 6 and all(f == "[]" for (f,) in others)


class _Collecting(SerialExecutor):
    """The serial executor, keeping the notices it reports."""

    def __init__(self, notices: list[str]) -> None:
        super().__init__()
        self.notices = notices

    def run(self, job, games, report):  # type: ignore[no-untyped-def]
        def keep(r):  # type: ignore[no-untyped-def]
            if isinstance(r, Notice):
                self.notices.append(r.text)
            report(r)
        super().run(job, games, keep)


def test_an_absent_bot_is_not_waited_for_and_comes_back_when_it_connects(
        start_bot: StartBot) -> None:
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    status: list[str] = []
    seats = RemoteSeats(["alice"], endpoint, wait=0.2, rewait=0.2, give_up=True,
                        on_status=status.append)
    try:
        player = seats.player_named("alice", "alice")
        with pytest.raises(Exception, match="did not connect"):
            seats.connect([("alice", player)])
        assert seats.absent == {"alice"}
        from referee.game import GameConfig
        t0 = time.monotonic()
        with pytest.raises(BotFault, match="remote bot alice is absent"):
            player.start_game("g1", 0, GameConfig(), 1)
        assert time.monotonic() - t0 < scaled(0.15)  # no wait for an absent bot
        bot = start_bot(endpoint, "alice")
        deadline = time.monotonic() + scaled(20)
        while True:  # each game looks once for it, without waiting
            try:
                player.start_game("g2", 0, GameConfig(), 1)
                break
            except BotFault:
                assert time.monotonic() < deadline, status
                time.sleep(0.05)
        assert seats.absent == set()
        assert status[-1] == "remote bot alice is back"
        player.close()
        assert bot.wait(scaled(10)) == 0
    finally:
        seats.close()


def test_an_endpoint_in_use_is_refused_before_the_first_game(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        endpoint = f"tcp://127.0.0.1:{taken.getsockname()[1]}"
        path = tmp_path / "t.toml"
        path.write_text(config_text(endpoint))
        with pytest.raises(TournamentConfigError, match=rf"^remote: cannot listen on {endpoint}: "
                           r"Address already in use: .* choose another port with \[remote\] "
                           r"listen$"):
            run_tournament(load_config(path), quiet=True)
    assert not (tmp_path / "out").exists()  # nothing was started, nothing written
    check_bots(load_config(path))  # free again: fine


def test_a_bot_that_starts_badly_does_not_stop_the_wait_for_the_others(
        start_bot: StartBot) -> None:
    # In a tournament (give_up) every bot is waited for: bob's bad hello is reported
    # with the rest, after alice has connected.
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    seats = RemoteSeats(["bob", "alice"], endpoint, wait=10, give_up=True)
    ctx = zmq.Context()
    bob = ctx.socket(zmq.DEALER)
    try:
        bob.connect(endpoint)
        bob.send(msgpack.packb({"type": "hello", "protocol": [2], "name": "bob"}))
        start_bot(endpoint, "alice")
        players = [(n, seats.player_named(n, n)) for n in ("bob", "alice")]
        connected: list[str] = []
        with pytest.raises(RemoteBotError, match=r"^remote bot 'bob' connected but did not "
                           r"start properly: .*protocol.*; the games of a bot that is not "
                           r"there are forfeited until it connects$"):
            seats.connect(players, on_connected=lambda name, p: connected.append(name))
        assert connected == ["alice"]
        assert not players[1][1].dead
        players[1][1].close()
    finally:
        bob.close(linger=0)
        ctx.term()
        seats.close()


def test_a_wildcard_endpoint_is_shown_as_this_machine(tmp_path: Path) -> None:
    new_keypair(tmp_path, "referee")
    new_keypair(tmp_path / "bots", "alice")
    port = wildcard_port()
    seats = RemoteSeats(["alice"], f"tcp://0.0.0.0:{port}", keys_dir=str(tmp_path / "bots"),
                        server_key=str(tmp_path / "referee.key_secret"), wait=7)
    try:
        host = socket.gethostname()
        assert seats.connect_to == f"tcp://{host}:{port}"
        public = load_public_key(tmp_path / "referee.key").decode()
        assert seats.waiting_line() == (
            f"waiting up to 7s for remote bot alice: connect to tcp://{host}:{port} (or another "
            f"address of this machine; listening on tcp://0.0.0.0:{port}) (CURVE, the "
            f"referee's public key {public})")
    finally:
        seats.close()
