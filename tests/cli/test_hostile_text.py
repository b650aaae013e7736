"""Issue 21 item 5: nothing a bot or an author wrote reaches the organiser's terminal,
or a log, unescaped.  One bot (``tests/bots/attack_escapes.py``) puts terminal
control sequences -- a window title (ESC ] 0 ; ... BEL), a screen clear (ESC [ 2 J),
a colour (ESC [ 31 m), a carriage return and a fake line, a bidirectional override,
a C1 CSI, DEL -- in its hello's name and version, its stderr and a decision (a
fault); the organiser's files carry them in bot names, commands and a tournament's
or league's name.  Every command that shows any of it is run for real, its output
read as bytes: no control character but a newline or a tab comes out."""

from __future__ import annotations

import os
import pty
import re
import select
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.league.conftest import env_for_subprocess, need_sandbox, referee_command
from tests.league.leaguehelpers import games_stored, wait_for
from tests.league.servehelpers import Served
from tests.procs import scaled

pytestmark = pytest.mark.slow
__all__ = ["need_sandbox"]  # a fixture of the league tests, used here

ATTACK = Path(__file__).resolve().parents[1] / "bots" / "attack_escapes.py"
ESC = "\x1b"
#: The attack's text, in a TOML basic string and as the organiser's files hold it.
HOSTILE = (f"{ESC}]0;pwned\x07{ESC}[2J{ESC}[31mFAKE: accepted alice version 9\r"
           "\u202eevil\x9b1m\x7f\u2066")
TOML_HOSTILE = "".join(c if c.isprintable() and c not in '"\\' else f"\\u{ord(c):04x}"
                       for c in HOSTILE)
#: What every escaped copy of the attack shows (printable's form of its start).
SHOWN = "\\x1b]0;pwned\\x07\\x1b[2J\\x1b[31mFAKE"


def raw_controls(text: str) -> str:
    """The characters of ``text`` a terminal would act on rather than show."""
    return "".join(c for c in text if not (c.isprintable() or c in "\n\t"))


class Run:
    """The installed command, run in one folder; each run's stdout and stderr are
    checked for raw control characters, and kept."""

    def __init__(self, where: Path) -> None:
        self.where = where
        self.exe = referee_command()
        self.seen: list[str] = []

    def __call__(self, *args: str | Path, ok: bool = True, colour: bool = False,
                 timeout: float = 300) -> subprocess.CompletedProcess[bytes]:
        r = subprocess.run([self.exe, *map(str, args)], capture_output=True,
                           env=env_for_subprocess(), timeout=timeout, cwd=self.where)
        out, err = (s.decode("utf-8", "replace") for s in (r.stdout, r.stderr))
        what = " ".join(map(str, args))[:80]
        if ok:
            assert r.returncode == 0, f"{what}: {out}{err}"
        for name, text in (("stdout", out), ("stderr", err)):
            if colour:  # the referee's own colours, and nothing else
                text = re.sub(r"\x1b\[[0-9;]*m", "", text)
            assert not raw_controls(text), \
                f"{what}: raw {raw_controls(text)[:20]!r} on {name}: {text[-3000:]}"
        self.seen.append(out + err)
        return r


def write_tournament(where: Path) -> None:
    """``t.toml``: a tournament whose name, bot name and bot command carry the attack."""
    (where / "t.toml").write_text(f"""
[tournament]
name = "t{TOML_HOSTILE}"
seats = 2
deals = 1
seed = 5
jobs = 1
output = "out"
[[bots]]
name = "heuristic"
builtin = "heuristic"
[[bots]]
name = "attacker{TOML_HOSTILE}"
command = "python3 attack.py '{TOML_HOSTILE}'"
cwd = "bot"
""")


def test_every_command_shows_a_bots_and_an_organisers_text_escaped(tmp_path: Path) -> None:
    run = Run(tmp_path)
    (tmp_path / "bot").mkdir()
    shutil.copy(ATTACK, tmp_path / "bot" / "attack.py")
    # The command's argument is the attacker's text too (the bot echoes it on stderr).
    command = f"python3 attack.py '{HOSTILE}'"
    logs = tmp_path / "logs"

    r = run("play", f"python3 bot/attack.py '{HOSTILE}'", "heuristic", "--seed", "3",
            "--transcript", "--verbose", "--record", "g.jsonl", "--bot-log-dir", logs,
            "--colour", colour=True)
    assert SHOWN in r.stdout.decode()  # the hello name, stderr and fault, shown
    run("play", f"python3 bot/attack.py '{HOSTILE}'", "heuristic", "--seed", "3", "--json")
    run("play", f"python3 bot/attack.py '{HOSTILE}'", "heuristic", "--games", "2",
        "--seed", "4")
    run("replay", "g.jsonl")
    run("replay", "g.jsonl", "--check")
    run("check-bot", command, "--cwd", "bot", ok=False)

    # The stderr logs are written escaped: cat, tail -f and pagers show, never obey.
    stderr_logs = list(logs.glob("*.stderr.log"))
    assert stderr_logs
    for log in stderr_logs:
        text = log.read_bytes().decode()
        assert not raw_controls(text), log
        assert "thinking" + SHOWN in text

    write_tournament(tmp_path)
    run("tournament", "schedule", "t.toml")
    r = run("tournament", "run", "t.toml")
    assert SHOWN in r.stderr.decode()  # the fault lines
    for fmt in ("plain", "markdown", "csv", "json"):
        run("tournament", "standings", "out", "--format", fmt)
    run("tournament", "verify", "out")
    r = run("tournament", "quick", "heuristic", f"python3 bot/attack.py '{HOSTILE}'",
            "--deals", "1", "--seed", "2")
    assert SHOWN in r.stdout.decode() + r.stderr.decode()
    run("report", "out")
    for log in (tmp_path / "out").rglob("*.stderr.log"):
        assert not raw_controls(log.read_bytes().decode()), log
    run("match", command.replace("attack.py", "bot/attack.py"), "heuristic",
        "--max-sets", "1", ok=False)


def on_terminal(where: Path, *args: str) -> str:
    """The installed command run on a pseudo-terminal: what it showed there."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([referee_command(), *args], stdin=subprocess.DEVNULL,
                            stdout=slave, stderr=slave, env=env_for_subprocess(),
                            cwd=where, close_fds=True)
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + scaled(120)  # a bound for a hung child, not a wait
    try:
        while time.monotonic() < deadline:
            if not select.select([master], [], [], 1.0)[0]:
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        assert proc.wait(timeout=scaled(60)) == 0, seen[-2000:]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    return seen.decode().replace("\r\n", "\n")  # the terminal's own line ends


def test_on_a_terminal_too(tmp_path: Path) -> None:
    """On a terminal (a pseudo-terminal here) click leaves colour sequences alone:
    the Guard alone stands between a bot or an organiser's file and the screen."""
    (tmp_path / "bot").mkdir()
    shutil.copy(ATTACK, tmp_path / "bot" / "attack.py")
    write_tournament(tmp_path)
    text = on_terminal(tmp_path, "tournament", "schedule", "t.toml")
    assert not raw_controls(text), raw_controls(text)[:20]
    assert "attacker" + SHOWN in text  # the bot's name, every sequence shown
    text = on_terminal(tmp_path, "play", f"python3 bot/attack.py '{HOSTILE}'", "heuristic",
                       "--seed", "3", "--transcript", "--no-colour")
    assert not raw_controls(text), raw_controls(text)[:20]
    assert "\\x1b[2J\\x1b[31mFAKE" in text


@pytest.fixture
def served_league(tmp_path: Path, league_server: Callable[..., Served],
                  need_sandbox: None) -> tuple[Path, Path, Run, Served]:
    run = Run(tmp_path)
    k = tmp_path / "keys"
    (k / "bots").mkdir(parents=True)
    run("keys", "server", "--out", k)
    run("keys", "new", "alice", "--out", k / "authors")
    (k / "bots" / "alice.key").write_bytes((k / "authors" / "alice.key").read_bytes())
    cfg = tmp_path / "league.toml"
    cfg.write_text(f'[league]\nname = "l{TOML_HOSTILE}"\nseats = [2]\ndeals = 1\nseed = 5\n'
                   f"\n[time]\nper_decision = {scaled(2.0)}\n")
    league = tmp_path / "league"
    run("league", "new", league, "--config", cfg)
    return league, k, run, league_server(league, "--play", "--jobs", "1", keys=k)


def test_a_league_shows_its_authors_text_escaped(
        tmp_path: Path, served_league: tuple[Path, Path, Run, Served]) -> None:
    league, keys, run, server = served_league
    endpoint = server.endpoint
    bot = tmp_path / "entry"
    bot.mkdir()
    shutil.copy(ATTACK, bot / "attack.py")
    secret, server_key = keys / "authors" / "alice.key_secret", keys / "referee.key"
    # A local entry (the organiser's own submit) and a remote one (an author's).
    run("league", "submit", league, "local", bot, "--command",
        f"python3 attack.py --legal '{HOSTILE}'")
    r = run("submit", "--to", endpoint, "--key", secret, "--server-key", server_key, bot,
            "--command", f"python3 attack.py --legal '{HOSTILE}'")
    wait_for("a game", lambda: games_stored(league) >= 1)
    r = run("submit", "--to", endpoint, "--key", secret, "--server-key", server_key,
            "--status")
    games = re.findall(r"^  (g[0-9a-f]{12})  ", r.stdout.decode(), re.M)  # alice's own ids
    assert games
    for game in games[:2]:
        r = run("submit", "--to", endpoint, "--key", secret, "--server-key", server_key,
                "--status", "--game", game)
        assert SHOWN in r.stdout.decode()  # the bot's stderr, shown
    run("league", "standings", league)
    listed = run("league", "games", league)
    run("league", "games", league, "--faults")
    for entry in ("alice", "local"):
        run("league", "show", league, entry, ok=False)
    run("league", "show", league)
    league_games = re.findall(r"\b(g\d{6})\b", listed.stdout.decode())  # the league's ids
    assert league_games
    for game in league_games[:2]:
        r = run("league", "game", league, game, "--lines", "0")
        assert SHOWN in r.stdout.decode()  # every seat's stderr, shown
    run("league", "verify", league, ok=False)
    run("report", league, ok=False)
    for log in league.rglob("*.stderr.log"):
        text = log.read_bytes().decode()
        assert not raw_controls(text), log
    # The server's own log: everything it said while the submissions came in.
    err = server.stop(60)
    assert not raw_controls(err), repr(raw_controls(err))
    assert "alice" in err
    # the command, escaped and each word quoted as a shell would (text/quoting's
    # command_line: no word can end the line); through a pipe click drops ESC [ ... m
    # sequences itself; on a terminal the Guard shows them: test_on_a_terminal_too
    assert "command python3 attack.py --legal '\\x1b]0;pwned\\x07" in err
