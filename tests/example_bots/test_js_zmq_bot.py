"""The Node.js ZeroMQ example bot (example_bots/js/zmq_bot.js, zeromq.js v6 and
@msgpack/msgpack) plays through the real referee path: launched by ``run_game``'s
``zmq_player`` and by the installed ``referee play zmq:...``, and as a remote bot with
CURVE keys, started as its author would start it (the variables ``referee keys env``
prints).  Its npm packages are installed from its package.json into a temporary
directory (``NODE_PATH`` points there), so the source tree is left as it is.

Without Node.js and npm the tests skip, except under CI=true, where they fail."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from referee.bots import make_bot
from referee.game import GameConfig
from referee.play.runner import InProcessPlayer, TimeControl, replay_check, run_game
from referee.players.external import ExternalPlayer, zmq_player
from referee.transport.zmq.keys import new_keypair
from tests.procs import Children, scaled

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
BOT = ROOT / "example_bots" / "js" / "zmq_bot.js"
TC = TimeControl(startup=scaled(10.0), per_decision=scaled(2.0), bank=scaled(10.0))


def _referee() -> str:
    found = shutil.which("referee", path=str(Path(sys.executable).parent))
    assert found, "the referee command is not installed next to this Python (make test)"
    return found


@pytest.fixture(scope="module")
def node_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment the bot runs in: NODE_PATH at its packages, installed with npm
    from example_bots/js/package.json."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        if os.environ.get("CI") == "true":
            pytest.fail("Node.js and npm are needed for the JavaScript ZeroMQ example bot "
                        "(apt-get install nodejs npm)")
        pytest.skip("Node.js/npm not installed")
    where = tmp_path_factory.mktemp("js-zmq")
    shutil.copy(BOT.parent / "package.json", where / "package.json")
    done = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--silent"], cwd=where,
                          capture_output=True, text=True, timeout=scaled(600))
    assert done.returncode == 0, done.stderr
    env = {k: v for k, v in os.environ.items() if not k.startswith("UPDOWN_")}
    env["NODE_PATH"] = str(where / "node_modules")
    return env


@pytest.fixture
def opened() -> Iterator[list[ExternalPlayer]]:
    players: list[ExternalPlayer] = []
    yield players
    for p in players:
        p.close()


def test_launched_bot_plays_two_games(node_env: dict[str, str],
                                      opened: list[ExternalPlayer]) -> None:
    bot = zmq_player("js-zmq", ["node", str(BOT)], env=node_env, time_control=TC)
    opened.append(bot)
    other = InProcessPlayer(make_bot("heuristic", 3))
    for seed, config, seats in (
            (11, GameConfig(players=2), [bot, other]),
            (12, GameConfig(players=3, variants=frozenset({"four_of_a_colour"})),
             [other, bot, InProcessPlayer(make_bot("random", 1))])):
        rec = run_game(config, seed, seats, time_control=TC)
        assert rec.faults == [], [str(f) for f in rec.faults]
        ok, why = replay_check(rec.to_lines())
        assert ok, why
    assert bot.starts == 1  # one process and one connection for both games


def test_launched_through_the_cli(node_env: dict[str, str]) -> None:
    # In the sandbox the bot gets only the variables its command sets, and sees its
    # packages (installed outside its folder here) only when they are allowed.
    modules = node_env["NODE_PATH"]
    done = subprocess.run([_referee(), "play", "heuristic",
                           f"zmq:env NODE_PATH={modules} node {BOT}", "--allow-read", modules,
                           "--seed", "3", "--json"], capture_output=True, text=True,
                          env=node_env, timeout=scaled(120))
    assert done.returncode == 0, done.stderr
    game = json.loads(done.stdout)["games"][0]
    assert game["faults"] == [] and game["forfeits"] == []


@pytest.fixture
def keys(tmp_path: Path) -> Path:
    k = tmp_path / "keys"
    new_keypair(k, "referee")
    new_keypair(k / "bots", "alice")
    return k


def _keys_env(secret: Path, server: Path, endpoint: str) -> dict[str, str]:
    out = subprocess.run([_referee(), "keys", "env", str(secret), "--server", str(server),
                          "--endpoint", endpoint], capture_output=True, text=True,
                         check=True).stdout
    return dict(re.findall(r"export (\w+)='?([^'\n]*)'?", out))


def _listen(children: Children, keys: Path, *extra: str) -> tuple[subprocess.Popen[str], str]:
    """``referee play heuristic remote:alice`` with CURVE, and the endpoint it prints."""
    p = children.popen([_referee(), "play", "heuristic", "remote:alice", "--listen",
                        "tcp://127.0.0.1:*", "--keys", str(keys / "bots"), "--server-key",
                        str(keys / "referee.key_secret"), "--move-time", str(scaled(20)), "--json",
                        *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert p.stderr is not None
    line = p.stderr.readline()
    m = re.search(r"connect to (tcp://\S+) \(", line)
    if m is None:
        p.kill()
        pytest.fail(f"no 'waiting' line from the referee: {line!r} {p.communicate()}")
    return p, m.group(1)


def test_remote_bot_with_curve_plays(node_env: dict[str, str], keys: Path,
                                     children: Children) -> None:
    ref, endpoint = _listen(children, keys, "--wait", str(scaled(60)), "--seed", "5")
    env = {**node_env, **_keys_env(keys / "bots" / "alice.key_secret",
                                   keys / "referee.key", endpoint)}
    assert env["UPDOWN_NAME"] == "alice" and env["UPDOWN_SERVER_KEY"]
    bot = children.popen(["node", str(BOT)], env=env, stderr=subprocess.PIPE, text=True)
    try:
        out, err = ref.communicate(timeout=scaled(120))
        assert ref.returncode == 0, err
        assert "remote bot alice connected" in err and "refused" not in err
        game = json.loads(out)["games"][0]
        assert game["bots"] == ["heuristic", "alice"]
        assert game["faults"] == [] and game["forfeits"] == []
        assert bot.wait(scaled(20)) == 0  # told bye, it exits with 0
        assert bot.stderr is not None and "alice: welcome from" in bot.stderr.read()
    finally:
        bot.kill()
        ref.kill()


def test_remote_bot_with_the_wrong_server_key_says_so_and_exits(
        node_env: dict[str, str], keys: Path, tmp_path: Path, children: Children) -> None:
    ref, endpoint = _listen(children, keys, "--wait", str(scaled(30)))
    new_keypair(tmp_path / "other", "referee")  # not the key the referee listens with
    env = {**node_env, **_keys_env(keys / "bots" / "alice.key_secret",
                                   tmp_path / "other" / "referee.key", endpoint)}
    bot = subprocess.run(["node", str(BOT), "--welcome-timeout", "3"], env=env,
                         capture_output=True, text=True, timeout=scaled(60))
    try:
        assert bot.returncode == 1
        assert f"no welcome from {endpoint} within 3s" in bot.stderr
    finally:
        ref.kill()
        _, err = ref.communicate(timeout=scaled(30))
    assert "wrong server key" in err
