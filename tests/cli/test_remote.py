"""``referee play ... remote:NAME``: a bot started by its author that connects to the
referee, admitted by its CURVE key (or, on loopback without keys, by its name).

The remote bot is tests/transport/zmq/zmq_bot.py, started by the test as its author would
start it: the endpoint on its command line, its keys in its environment (what
``referee keys env`` prints).  The referee is the installed command (it prints the
endpoint, the test starts the bot) or CliRunner (the bot started first, on an
endpoint known in advance)."""

from __future__ import annotations

import json
import logging
import re
import socket
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
import zmq

from referee.players.botspec import BotSpecError, parse_spec, parse_specs
from referee.transport.zmq.keys import new_keypair
from tests.cli.cli_helpers import env_for_subprocess, invoke, referee_command
from tests.procs import Children, scaled

pytestmark = pytest.mark.slow

StartBot = Callable[..., subprocess.Popen[bytes]]

#: Generous bounds for bots that do connect and play (scaled: tests/procs.py).
WAIT = f"{scaled(30):g}"
MOVE_TIME = f"{scaled(20):g}"


@pytest.fixture
def keys(tmp_path: Path) -> Path:
    """keys/referee.key{,_secret}; keys/bots/alice.key (allowed), keys/alice.key_secret
    (its author's); keys/mallory/alice.key{,_secret} (a keypair nobody allowed)."""
    k = tmp_path / "keys"
    new_keypair(k, "referee")
    new_keypair(k / "bots", "alice")
    (k / "bots" / "alice.key_secret").rename(k / "alice.key_secret")
    new_keypair(k / "mallory", "alice")
    return k


@pytest.fixture
def start_bot(remote_bot: StartBot) -> StartBot:
    """Start the test bot as a remote author would; killed at the end of the test."""

    def start(endpoint: str, name: str = "alice", keys: dict[str, str] | None = None,
              *extra: str) -> subprocess.Popen[bytes]:
        return remote_bot(endpoint, name, keys, *extra)

    return start


def keys_env(secret_file: Path, server_key: Path) -> dict[str, str]:
    """The bot's key variables: what 'referee keys env SECRET --server referee.key'
    prints (read before the referee starts waiting, to keep the wait short)."""
    out = subprocess.run([referee_command(), "keys", "env", str(secret_file),
                          "--server", str(server_key)], capture_output=True,
                         text=True, check=True).stdout
    return dict(re.findall(r"export (\w+)='?([^'\n]*)'?", out))


def referee_waiting(children: Children, *args: str) -> tuple[subprocess.Popen[str], str]:
    """Start ``referee play ARGS --json`` (owned by ``children``) and read, from its
    stderr, the line saying where the remote bots connect: the process and that
    endpoint."""
    p = children.popen([referee_command(), "play", *args, "--json"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, env=env_for_subprocess())
    assert p.stderr is not None
    line = p.stderr.readline()
    m = re.search(r"^waiting up to \S+ for remote bots? .*: connect to (\S+) \(", line)
    if m is None:
        p.kill()
        out, err = p.communicate()
        pytest.fail(f"no 'waiting' line: {line!r} {err!r}")
    return p, m.group(1)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def can_bind(endpoint: str) -> bool:
    ctx = zmq.Context()
    sock = ctx.socket(zmq.ROUTER)
    try:
        sock.bind(endpoint)
        return True
    except zmq.ZMQError:
        return False
    finally:
        sock.close(linger=0)
        ctx.term()


def one_error_line(stderr: str) -> str:
    """The last line of stderr: 'Error: ...' with no traceback before it."""
    assert "Traceback" not in stderr, stderr
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("Error: "), stderr
    return last


# --- a remote bot plays --------------------------------------------------------------------


def test_remote_bot_with_its_keys_plays_a_game(keys: Path, start_bot: StartBot,
                                               children: Children) -> None:
    alice_env = keys_env(keys / "alice.key_secret", keys / "referee.key")
    ref, endpoint = referee_waiting(
        children, "heuristic", "remote:alice", "random", "--seed", "5", "--listen",
        "tcp://127.0.0.1:*",
        "--keys", str(keys / "bots"), "--server-key", str(keys / "referee.key_secret"),
        "--wait", WAIT, "--move-time", MOVE_TIME)
    assert re.fullmatch(r"tcp://127\.0\.0\.1:\d+", endpoint)
    bot = start_bot(endpoint, "alice", alice_env)
    out, err = ref.communicate(timeout=scaled(60))
    assert ref.returncode == 0, err
    assert "remote bot alice connected" in err and "refused" not in err
    game = json.loads(out)["games"][0]
    assert game["bots"] == ["heuristic", "alice", "random"]
    assert game["faults"] == [] and game["forfeits"] == []
    assert bot.wait(scaled(10)) == 0  # it was told bye


def test_loopback_without_keys_admits_by_name(tmp_path: Path, start_bot: StartBot) -> None:
    endpoint = f"ipc://{tmp_path}/referee"
    start_bot(endpoint, "alice")  # a DEALER may connect before the referee binds
    r = invoke("play", "remote:alice", "lowest", "--listen", endpoint, "--wait", WAIT,
               "--move-time", MOVE_TIME, "--seed", "2")
    assert r.exit_code == 0, r.output
    assert (f"waiting up to {WAIT}s for remote bot alice: connect to {endpoint} "
            "(no CURVE: admitted by the name in the hello)") in r.output
    assert "remote bot alice connected" in r.output
    assert "alice [0]" in r.output and "faults: none" in r.output


def test_two_remote_bots_connect_in_any_order(tmp_path: Path, start_bot: StartBot) -> None:
    endpoint = f"ipc://{tmp_path}/referee"
    start_bot(endpoint, "bob")
    start_bot(endpoint, "alice")
    r = invoke("play", "remote:alice", "remote:bob", "--listen", endpoint, "--wait", WAIT,
               "--move-time", MOVE_TIME, "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["games"][0]["faults"] == []
    assert "for remote bots alice, bob:" in r.stderr


def test_in_a_match_a_lost_bot_connects_again(tmp_path: Path, start_bot: StartBot) -> None:
    endpoint = f"ipc://{tmp_path}/referee"
    first = start_bot(endpoint, "alice", None, "--die-after", "3")

    def author_restarts_it() -> None:
        first.wait(scaled(60))
        start_bot(endpoint, "alice")

    restart = threading.Thread(target=author_restarts_it)
    restart.start()
    try:
        r = invoke("play", "heuristic", "remote:alice", "--games", "2", "--listen", endpoint,
                   "--wait", WAIT, "--move-time", MOVE_TIME, "--json")
    finally:
        restart.join()
    assert r.exit_code == 0, r.output
    g1, g2 = json.loads(r.stdout)["games"]
    assert g1["forfeits"] == [1] and g1["faults"][0]["kind"] == "crash"
    assert g2["faults"] == [] and g2["forfeits"] == []
    assert (f"waiting up to {WAIT}s for remote bot alice to connect again to {endpoint}\n"
            "remote bot alice connected again") in r.stderr


def test_remote_spec() -> None:
    a = parse_spec("remote:alice")
    assert (a.kind, a.name, a.remote, a.command) == ("remote", "alice", "alice", None)
    b = parse_spec("seat1=remote:alice")
    assert (b.kind, b.name, b.remote) == ("remote", "seat1", "alice")
    with pytest.raises(BotSpecError, match="two seats are named 'alice'"):
        parse_specs(["remote:alice", "alice=random"])
    with pytest.raises(BotSpecError, match=r"unknown prefix 'remot:'; did you mean 'remote:'\? use stdio:, zmq:, remote:"):
        parse_spec("remot:alice")


# --- refused bots ----------------------------------------------------------------------------


@pytest.mark.parametrize(("case", "reason"), [
    ("unknown key", r"CURVE key \S+ is not allowed \(it is no listed bot's public key\)"),
    ("hello names another bot", r'its hello names "bob", but its CURVE key is "alice"\'s'),
])
def test_refused_bot_is_reported_after_wait(keys: Path, start_bot: StartBot, case: str,
                                            reason: str, children: Children) -> None:
    secret = keys / ("mallory" if case == "unknown key" else "") / "alice.key_secret"
    bot_env = keys_env(secret, keys / "referee.key")
    ref, endpoint = referee_waiting(
        children, "heuristic", "remote:alice", "--listen", f"tcp://127.0.0.1:{free_port()}",
        "--keys", str(keys / "bots"), "--server-key", str(keys / "referee.key_secret"),
        "--wait", f"{scaled(3):g}")
    start_bot(endpoint, "alice" if case == "unknown key" else "bob", bot_env)
    out, err = ref.communicate(timeout=scaled(30))
    assert ref.returncode == 1 and out == ""
    line = one_error_line(err)
    assert line.startswith(f"Error: remote bot 'alice' did not connect to {endpoint} within {scaled(3):g}s; "
                           "connections refused meanwhile: "), line
    assert re.search(reason, line), line
    assert re.search(r"^referee: refused .*" + reason, err, re.M)  # said at once, too
    assert can_bind(endpoint)  # the listener is gone


def test_bot_that_never_connects(tmp_path: Path) -> None:
    endpoint = f"tcp://127.0.0.1:{free_port()}"
    threads = threading.active_count()
    handlers = list(logging.getLogger("referee.zmq").handlers)
    r = invoke("play", "heuristic", "remote:alice", "remote:bob", "--listen", endpoint,
               "--wait", "0.5")
    assert r.exit_code == 1
    assert one_error_line(r.stderr) == (
        f"Error: remote bots 'alice', 'bob' did not connect to {endpoint} within 0.5s "
        f"(nothing tried to connect: is the bot started, with UPDOWN_ENDPOINT={endpoint}?)")
    assert can_bind(endpoint)
    assert threading.active_count() == threads
    assert logging.getLogger("referee.zmq").handlers == handlers


# --- mistakes: one line, exit 1, nothing left open --------------------------------------------


def _curve(keys: Path) -> list[str]:
    return ["--keys", str(keys / "bots"), "--server-key", str(keys / "referee.key_secret")]


@pytest.mark.parametrize(("make_args", "expected"), [
    (lambda k: ["remote:bob", *_curve(k)],
     r"no public key for remote bot 'bob': \S+/bots/bob\.key does not exist \(the bot's "
     r"author makes it with 'referee keys new bob'\)"),
    (lambda k: ["remote:alice", "--keys", str(k / "bots"), "--server-key", str(k / "nope")],
     r"cannot read key file '\S+/nope'"),
    (lambda k: ["remote:alice", "--keys", str(k / "bots"),
                "--server-key", str(k / "referee.key")],
     r"'\S+/referee\.key' holds no secret key"),
    (lambda k: ["remote:alice", "--keys", str(k / "nodir"),
                "--server-key", str(k / "referee.key_secret")],
     r"\S+/nodir is not a directory of bots' public keys"),
    (lambda k: ["remote:alice", "--keys", str(k / "bots")],
     r"--keys needs --server-key FILE .* too"),
    (lambda k: ["remote:alice", "--server-key", str(k / "referee.key_secret")],
     r"--server-key needs --keys DIR .* too"),
    (lambda k: ["remote:alice", "--listen", "tcp://0.0.0.0:5555"],
     r"listening on tcp://0\.0\.0\.0:5555 \(not loopback\) needs CURVE: give --keys DIR"),
    (lambda k: ["remote:alice", "--listen", "localhost:5555"],
     r"'localhost:5555' is not an endpoint remote bots can connect to: write tcp://"),
    (lambda k: ["remote:alice", "--listen", "ipc:///no/such/dir/sock"],
     r"cannot listen on ipc:///no/such/dir/sock: No such file or directory"),
    (lambda k: ["random", *_curve(k)],
     r"--keys and --server-key are for remote bots"),
    (lambda k: ["remote:alice", "remote:alice"],
     r"remote bot 'alice' is given twice"),
    (lambda k: ["remote:", "random"],
     r"bot 'remote:': '' is not a remote bot's name: write remote:NAME"),
])
def test_mistakes(keys: Path, make_args: Callable[[Path], list[str]], expected: str) -> None:
    r = invoke("play", "heuristic", *make_args(keys), "--wait", "0")
    assert r.exit_code == 1
    line = one_error_line(r.stderr)
    assert re.fullmatch("Error: " + expected + ".*", line), line
    assert "waiting" not in r.output


def test_bad_key_file(keys: Path) -> None:
    (keys / "bots" / "alice.key").write_text("not a certificate\n")
    r = invoke("play", "heuristic", "remote:alice", *_curve(keys), "--wait", "0")
    assert r.exit_code == 1
    assert re.fullmatch(r"Error: '\S+/alice\.key' is not a key file: .*",
                        one_error_line(r.stderr))


def test_endpoint_in_use() -> None:
    ctx = zmq.Context()
    sock = ctx.socket(zmq.ROUTER)
    try:
        sock.bind("tcp://127.0.0.1:*")
        endpoint = sock.getsockopt_string(zmq.LAST_ENDPOINT)
        r = invoke("play", "heuristic", "remote:alice", "--listen", endpoint, "--wait", "5")
    finally:
        sock.close(linger=0)
        ctx.term()
    assert r.exit_code == 1
    assert one_error_line(r.stderr) == (
        f"Error: cannot listen on {endpoint}: Address already in use: another program "
        "(another referee?) listens there; choose another port with --listen")


def test_help_documents_remote_bots() -> None:
    r = invoke("play", "--help")
    for word in ("remote:NAME", "--listen", "--keys", "--server-key", "--wait",
                 "referee keys new NAME", "tcp://127.0.0.1:5555"):
        assert word in r.output, word
