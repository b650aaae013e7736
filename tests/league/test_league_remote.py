"""Remote submission over real sockets (ZeroMQ + CURVE): a good key is accepted; a
wrong key, no key and a name that is not its key's are refused with the author told
why; ``submit --status`` shows an author their own standings, games and stderr, and
never another bot's stderr.  ``league serve --play`` also plays the games."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from referee.league.remote import author_view
from tests.league.conftest import Referee
from tests.league.leaguehelpers import games_stored, league_toml, talker_bot, wait_for
from tests.league.servehelpers import Served

pytestmark = pytest.mark.slow


@pytest.fixture
def served(tmp_path: Path, referee: Referee, keys: Path,
           league_server: Callable[..., Served]) -> tuple[Path, str]:
    league = tmp_path / "league"
    cfg = league_toml(tmp_path / "league.toml", seats=[2], deals=2,
                      extra="[limits]\nmax_bytes = 300000\n")
    assert referee("league", "new", league, "--config", cfg).returncode == 0
    return league, league_server(league, "--play", "--jobs", "1", keys=keys).endpoint


def test_remote_submissions_and_an_authors_own_status(tmp_path: Path, referee: Referee,
                                                      keys: Path, served: tuple[Path, str],
                                                      need_sandbox: None) -> None:
    league, endpoint = served
    bot = talker_bot(tmp_path / "mybot")
    authors = keys / "authors"

    def send(who: str, *extra: str, key: str | None = None) -> subprocess.CompletedProcess[str]:
        secret = authors / f"{key or who}.key_secret"
        return referee("submit", "--to", endpoint, "--key", secret, "--server-key",
                       keys / "referee.key", bot, "--command", f"python3 talk_bot.py {who}",
                       "--wait", *extra)

    r = send("alice")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "PASSED" in r.stdout and "accepted: alice version 1" in r.stdout
    r = send("bob")
    assert r.returncode == 0 and "accepted: bob version 1" in r.stdout, r.stdout + r.stderr

    r = send("mallory")
    assert r.returncode == 1
    assert "not one of this league's authors' keys" in r.stderr
    r = send("bob", "--name", "alice", key="bob")  # bob's key, alice's name
    assert r.returncode == 1
    assert "your key is bob's: it submits and reads only as 'bob', not 'alice'" in r.stderr
    r = referee("submit", "--to", endpoint, "--name", "alice", bot, "--command", "python3 x.py")
    assert r.returncode == 1 and "the server requires CURVE keys" in r.stderr
    r = referee("submit", "--to", "tcp://192.0.2.1:5556", "--name", "alice", bot,
                "--command", "python3 x.py")
    assert r.returncode == 1 and "keys are required" in r.stderr
    r = referee("submit", "--to", endpoint, "--key", authors / "alice.key_secret",
                "--server-key", authors / "bob.key", bot, "--command", "python3 x.py",
                "--connect-timeout", "1")
    assert r.returncode == 1 and "is --server-key the league's referee.key?" in r.stderr

    big = talker_bot(tmp_path / "big")
    (big / "weights.bin").write_bytes(os.urandom(1_500_000))  # over max_bytes + 1 MB
    r = referee("submit", "--to", endpoint, "--key", authors / "alice.key_secret",
                "--server-key", keys / "referee.key", big, "--command", "python3 x.py")
    assert r.returncode == 1
    # refused before a byte of it is sent: its size is declared when the upload begins
    assert re.search(r"the bot is \d+ bytes packed, more than this league takes \(\d+ "
                     r"bytes for \[limits\] max_bytes = 300000 unpacked\)", r.stderr), r.stderr
    mid = talker_bot(tmp_path / "mid")
    (mid / "weights.bin").write_bytes(os.urandom(400_000))  # over max_bytes unpacked
    r = referee("submit", "--to", endpoint, "--key", authors / "alice.key_secret",
                "--server-key", keys / "referee.key", mid, "--command", "python3 x.py",
                "--wait")
    assert r.returncode == 1, r.stdout + r.stderr
    assert re.search(r"^queued as #\d+", r.stdout, re.M), r.stdout
    assert re.search(r"#\d+ refused: the submission is bigger than 300000 bytes", r.stdout)
    assert str(league) not in r.stdout + r.stderr

    # serve --play plays the pair's 2 deals x 2 seatings
    wait_for("the 4 games", lambda: games_stored(league) == 4)
    r = referee("submit", "--to", endpoint, "--key", authors / "alice.key_secret",
                "--server-key", keys / "referee.key", "--status")
    assert r.returncode == 0, r.stderr
    assert "alice: v1 active" in r.stdout
    assert re.search(r"test, 2 seats: alice@1 rank \d of 2, 4 games", r.stdout)
    game = re.findall(r"^  (g[0-9a-f]{12})  ", r.stdout, re.M)  # alice's own game ids
    assert len(game) == 4
    r = referee("submit", "--to", endpoint, "--key", authors / "alice.key_secret",
                "--server-key", keys / "referee.key", "--status", "--game", game[-1])
    assert r.returncode == 0, r.stderr
    assert "--- alice@1 (seat" in r.stdout
    assert "STDERR-OF-alice in t" in r.stdout
    assert "STDERR-OF-bob" not in r.stdout
    assert r.stdout.count("STDERR-OF-alice") == 1  # this game's section only
    assert "(pid " not in r.stdout  # no process id of the organiser's machine
    # bob knows the same games by ids of his own: alice's are none of his
    r = referee("submit", "--to", endpoint, "--key", authors / "bob.key_secret",
                "--server-key", keys / "referee.key", "--status", "--game", game[-1])
    assert f"{game[-1]}: no game of bob has this id" in r.stdout
    bobs = re.findall(r"^  (g[0-9a-f]{12})  ", r.stdout, re.M)
    assert len(bobs) == 4 and not set(bobs) & set(game)
    # bob's own view of a game shows bob's stderr only
    r = referee("submit", "--to", endpoint, "--key", authors / "bob.key_secret",
                "--server-key", keys / "referee.key", "--status", "--game", bobs[-1])
    assert "STDERR-OF-bob in t" in r.stdout and "STDERR-OF-alice" not in r.stdout


def test_serving_beyond_loopback_needs_keys(tmp_path: Path, referee: Referee) -> None:
    league = tmp_path / "league"
    cfg = league_toml(tmp_path / "league.toml")
    assert referee("league", "new", league, "--config", cfg).returncode == 0
    r = referee("league", "serve", league, "--listen", "tcp://0.0.0.0:5556")
    assert r.returncode == 1
    assert r.stderr.startswith("Error: listening on tcp://0.0.0.0:5556 (not loopback) needs "
                               "CURVE keys")


def test_an_authors_view_of_a_log_names_no_process_of_the_server() -> None:
    log = ("==== [referee 00:25:09.854] bot started (pid 13093): python3 bot.py ====\n"
           "hello from the bot\n")
    shown = author_view(log)
    assert "13093" not in shown and "(pid" not in shown
    assert "bot started: python3 bot.py" in shown and "hello from the bot" in shown
