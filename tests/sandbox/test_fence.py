"""The fence is the entry, never the command (issue 21, item 1) and scratch is all a
bot may write (item 6).  A command that names a path outside the bot's folder --
relative (``../../x``), absolute, through a ``#!`` line, through a symbolic link in
the folder -- is refused when a league takes the bot (one line naming the argument),
and outside leagues shows the bot nothing more: the file stays out of sight.  And
/dev/shm is part of the scratch, under its cap."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from referee.league.config import Limits
from referee.league.submission import SubmissionError, check_entry_command, stage
from referee.players.sandbox import FenceError, Sandbox, SandboxConfig, bot_folder, check_fence
from tests.league.conftest import env_for_subprocess, referee_command
from tests.league.leaguehelpers import league_toml
from tests.procs import scaled
from tests.sandbox.conftest import bot_folder as make_bot_folder
from tests.sandbox.conftest import run_bot, system_python

SECRET = "referee-secret-key-0123456789"


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """A bot folder, and beside it a secret folder holding a key and an
    'interpreter' that would print it."""
    bot = make_bot_folder(tmp_path, "read_paths.py")
    secret = tmp_path / "keys"
    secret.mkdir()
    (secret / "referee.key_secret").write_text(SECRET + "\n")
    interp = secret / "interp"
    interp.write_text(f"#!/bin/sh\ncat {secret / 'referee.key_secret'} >&2\n")
    interp.chmod(0o755)
    return bot, secret


def attacks(bot: Path, secret: Path) -> dict[str, list[str]]:
    """The commands that named the secret folder, by attack."""
    key = secret / "referee.key_secret"
    return {
        "relative": ["python3", "-c", "0", os.path.relpath(key, bot)],
        "absolute": ["python3", "read_paths.py", str(key)],
        "shebang": ["./bot"],
        "symlink": ["python3", "read_paths.py", "link"],
    }


def arm(bot: Path, secret: Path) -> None:
    """The entry's own files that point out: a ``#!`` line and a symbolic link."""
    (bot / "bot").write_text(f"#!{secret / 'interp'}\n")
    (bot / "bot").chmod(0o755)
    (bot / "link").symlink_to(secret / "referee.key_secret")


# --- outside leagues: the file is not visible -----------------------------------------------


def test_a_command_shows_its_bot_no_other_folder(sandbox: Sandbox,
                                                 layout: tuple[Path, Path]) -> None:
    bot, secret = layout
    arm(bot, secret)
    py = system_python()
    key = secret / "referee.key_secret"
    reader = "import sys\nfor p in sys.argv[1:]:\n  try: print('READ', p, open(p).read(), " \
             "file=sys.stderr)\n  except OSError as e: print('BLOCKED', p, e.strerror, " \
             "file=sys.stderr)\n"
    runs = {
        "relative": [py, "-c", reader, os.path.relpath(key, bot)],
        "absolute": [py, "-c", reader, str(key)],
        "absolute script arg": [py, "read_paths.py", str(key)],
        "shebang": ["./bot"],
        "symlink": [py, "read_paths.py", "link"],
    }
    for attack, command in runs.items():
        ran = run_bot(sandbox, command, bot)
        assert SECRET not in ran.log, (attack, ran.log)
        if attack == "shebang":  # its interpreter is not there: it cannot even start
            assert ran.code != 0, ran.log
        else:
            assert ran.code == 0 and ran.said("BLOCKED"), (attack, ran.log)
            assert not ran.said("READ"), (attack, ran.log)


def test_the_folder_is_the_program_or_script_never_another_argument(tmp_path: Path) -> None:
    base = str(tmp_path / "cwd")
    assert bot_folder(["python3", "-c", "CODE", "/some/file"], base) == base
    assert bot_folder(["python3", "-u", "bots/a/bot.py", "/etc/x"], base) == base + "/bots/a"
    assert bot_folder(["java", "-Xmx1g", "-jar", "/opt/b/bot.jar"], base) == "/opt/b"
    assert bot_folder(["./bot", "/secret/file"], base) == base
    assert bot_folder(["env", "A=1", "node", "x/bot.js"], base) == base + "/x"
    assert bot_folder(["python3", "-m", "pkg", "/secret/f"], base) == base
    assert bot_folder(["/usr/bin/python3"], base) == base


def test_scratch_is_all_a_bot_may_write(sandbox: Sandbox, tmp_path: Path) -> None:
    """/dev/shm is the scratch (16 MB here): 64 MB written there stop at the cap;
    the rest of /dev, the bot's folder and the system are read-only."""
    bot = make_bot_folder(tmp_path, "shm.py")
    ran = run_bot(sandbox, [system_python(), "shm.py", "/dev/shm/fill", "/dev/fill",
                            "/bot/fill", "/usr/fill"], bot, env={"ATTACK_MB": "64"})
    wrote = dict(line.split(": ", 1) for line in ran.said("WROTE"))
    assert ran.code == 0, ran.log
    mb, why = wrote["/dev/shm/fill"].split(" MB, ")
    assert int(mb) <= 16 and why == "No space left on device", ran.log
    for path in ("/dev/fill", "/bot/fill", "/usr/fill"):
        assert wrote[path] == "0 MB, Read-only file system", (path, ran.log)


# --- leagues: refused when submitted -------------------------------------------------------


def test_check_fence_refuses_each_path_outside_the_entry(layout: tuple[Path, Path]) -> None:
    bot, secret = layout
    arm(bot, secret)
    for attack, command in attacks(bot, secret).items():
        with pytest.raises(FenceError) as e:
            check_fence(command, str(bot))
        message = str(e.value)
        assert "\n" not in message and "outside the bot's folder" in message, message
        named = {"relative": os.path.relpath(secret / "referee.key_secret", bot),
                 "absolute": str(secret / "referee.key_secret"), "shebang": str(secret / "interp"),
                 "symlink": "link"}[attack]
        assert repr(named) in message, (attack, message)
    # What stays inside, or is the system's or the league's, is taken.
    check_fence(["python3", "read_paths.py", "data/x.bin", "--model=./m"], str(bot))
    check_fence(["/usr/bin/python3", "-c", "print(1/2)"], str(bot))
    check_fence(["java", "-jar", "read_paths.py"], str(bot)) if os.path.exists("/usr/bin/java") \
        else None
    check_fence(["python3", "read_paths.py", str(secret / "referee.key_secret")], str(bot),
                read_only=[str(secret)])
    check_fence(["./bot"], str(bot), interpreters=[str(secret)])
    with pytest.raises(FenceError, match="'nosuchinterp'"):
        check_fence(["nosuchinterp", "bot.py"], str(bot))


def test_a_staged_entry_with_a_command_pointing_out_is_refused(layout: tuple[Path, Path],
                                                               tmp_path: Path) -> None:
    bot, secret = layout
    (bot / "bot").write_text(f"#!{secret / 'interp'}\n")
    with stage(bot, tmp_path / "entries", Limits()) as staged:
        for command in (["python3", "-c", "0", "../../keys/referee.key_secret"],
                        ["python3", "read_paths.py", str(secret / "referee.key_secret")],
                        ["./bot"], ["../keys/interp"]):
            with pytest.raises(SubmissionError):
                check_entry_command(command, staged, SandboxConfig())
        check_entry_command(["python3", "read_paths.py"], staged, SandboxConfig())


@pytest.mark.slow
def test_league_submit_refuses_a_command_naming_the_servers_files(
        layout: tuple[Path, Path], tmp_path: Path) -> None:
    """Through the installed command: one line, naming the argument, nothing kept."""
    bot, secret = layout
    (bot / "bot").write_text(f"#!{secret / 'interp'}\n")
    league = tmp_path / "league"
    cfg = league_toml(tmp_path / "league.toml")
    exe = referee_command()

    def referee(*args: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run([exe, *map(str, args)], capture_output=True, text=True,
                              env=env_for_subprocess(), timeout=scaled(120), cwd=tmp_path)

    assert referee("league", "new", league, "--config", cfg).returncode == 0
    key = secret / "referee.key_secret"
    for command, named in ((f"python3 -c 0 {os.path.relpath(key, bot)}", None),
                           ("python3 -c 0 ../../../keys/referee.key_secret",
                            "../../../keys/referee.key_secret"),
                           (f"python3 read_paths.py {key}", str(key)),
                           ("./bot", str(secret / "interp"))):
        r = referee("league", "submit", league, "evil", bot, "--command", command)
        assert r.returncode == 1, r.stdout + r.stderr
        assert r.stderr.startswith("Error: ") and len(r.stderr.splitlines()) == 1, r.stderr
        assert "outside the bot's folder" in r.stderr, r.stderr
        if named:
            assert repr(named) in r.stderr, r.stderr
        assert SECRET not in r.stdout + r.stderr
        assert list((league / "entries").rglob("*")) == []
    # A symbolic link in the entry pointing out: refused as it is taken in.
    (bot / "link").symlink_to(key)
    r = referee("league", "submit", league, "evil", bot, "--command", "python3 read_paths.py link")
    assert r.returncode == 1 and len(r.stderr.splitlines()) == 1, r.stdout + r.stderr
    assert "'link'" in r.stderr and "outside" in r.stderr, r.stderr
