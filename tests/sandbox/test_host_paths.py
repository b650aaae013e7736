"""No host path for a league bot to read (issue 26, item 2): its entry is not bound
from the league's folder (the kernel names a bind mount's source in
/proc/self/mountinfo) but copied into a tmpfs of its own at /bot, read-only; bwrap
starts with nothing of the referee's.  A spying bot in the real sandbox writes what
it can read of its own and its pid 1's mounts, environment, command line, cgroup and
/proc links to stderr; none of it names the league's folder, the entry's, the
user's home or the user."""

from __future__ import annotations

import fcntl
import getpass
import os
import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from referee.league.remote import status_text
from referee.league.run import play_pending, submit
from referee.players import sandbox as sandbox_module
from referee.players.process import BotStartError
from referee.players.sandbox import Sandbox, SandboxConfig
from tests.league.leaguehelpers import EXAMPLE_BOTS, make_league
from tests.players.sandbox.conftest import need_sandbox
from tests.sandbox.conftest import BOTS, Ran, run_bot, system_python

#: A league folder's name no kernel or system file would hold by chance.
LEAGUE_NAME = "league-Quokka7Ledger"


def league_entry(tmp_path: Path) -> tuple[Path, Path]:
    """A league folder with a distinctive name, and in it an entry holding the spy,
    a folder with a file, an executable and a symbolic link."""
    league = tmp_path / LEAGUE_NAME
    entry = league / "entries" / "alice" / "3"
    (entry / "model").mkdir(parents=True)
    (entry / "spy.py").write_text((BOTS / "spy.py").read_text())
    (entry / "model" / "weights.txt").write_text("0.5 0.25\n")
    (entry / "model" / "weights.txt").chmod(0o640)
    (entry / "run.sh").write_text("#!/bin/sh\nexec python3 spy.py\n")
    (entry / "run.sh").chmod(0o755)
    (entry / "weights").symlink_to("model/weights.txt")
    return league, entry


def in_league(sandbox: Sandbox, league: Path) -> Sandbox:
    """The sandbox as a league runs its entries (``league_sandbox``)."""
    return replace(sandbox, config=replace(sandbox.config, entry_fence=True)).hide(str(league))


def secrets_of_the_host(league: Path, entry: Path) -> list[str]:
    home = os.path.expanduser("~")
    out = {str(league), str(entry), os.path.realpath(league), LEAGUE_NAME, home,
           os.path.realpath(home), os.getcwd()}
    return sorted(out - {"/", ""})


def bot_mount_lines(said: list[str]) -> list[str]:
    """The spy's lines of its mountinfo for /bot."""
    return [line for line in said if line.startswith("/proc/self/mountinfo: ")
            and " /bot " in line]


def assert_names_none(ran: Ran, secrets: list[str]) -> None:
    seen = ran.said("SPY")
    assert len(seen) > 20, ran.log
    user = re.compile(rf"(?<![\w-]){re.escape(getpass.getuser())}(?![\w-])")
    for line in seen:
        text = line.split(": ", 1)[1]  # what was read (not the label: "/proc/self/root")
        for s in secrets:
            assert s not in text, (s, line)
        assert not user.search(text), line


def test_a_league_entry_reads_no_host_path(sandbox: Sandbox, tmp_path: Path) -> None:
    league, entry = league_entry(tmp_path)
    ran = run_bot(in_league(sandbox, league), [system_python(), "spy.py"], entry)
    assert ran.code == 0, ran.log
    assert_names_none(ran, secrets_of_the_host(league, entry))
    said = ran.said("SPY")
    # The entry is there, file for file, with its modes, read-only.
    listing = {line.split(" ", 2)[1:][0]: line.split(" ")[2]
               for line in said if line.startswith("listing: ")}
    assert listing == {"/bot/model": "0o40755", "/bot/model/weights.txt": "0o100640",
                       "/bot/run.sh": "0o100755", "/bot/spy.py": "0o100644",
                       "/bot/weights": "0o120777"}, said
    assert "write: (Read-only file system)" in said
    assert "cwd: /bot" in said
    bot_mount = bot_mount_lines(said)
    assert len(bot_mount) == 1 and " / /bot ro," in bot_mount[0] and \
        " - tmpfs " in bot_mount[0], bot_mount
    # Its cgroup's name says nothing: not the referee's pid, not a count of starts
    # (which told a bot how much other authors' bots were playing).
    cgroups = [line.split(": ", 1)[1] for line in said
               if line.startswith("/proc/self/cgroup: ")]
    assert cgroups, said
    for line in cgroups:
        assert not re.search(r"updown-\d+-\d+", line), line
        assert not re.search(rf"(?<!\d){os.getpid()}(?!\d)", line), line
    # Its processes share one CPU weight, the same as any other bot's: a cgroup of
    # its own in the cpu hierarchy (where the machine has one to give).
    machine = sandbox.machine or sandbox_module.probe()
    if "cpu" in machine.cgroups:
        assert sandbox.limits["cpu share"] == "cgroup"
        own = [line for line in cgroups
               if re.fullmatch(r"\d+:([\w,]*,)?cpu(,[\w,]*)?:/updown-[0-9a-f]{16}", line)
               or (line.startswith("0::/updown-") and machine.cgroups["cpu"][0] == "2")]
        assert own, cgroups


def test_a_larger_entry_is_staged_at_a_neutral_path(sandbox: Sandbox, tmp_path: Path) -> None:
    """An entry over the copy-at-each-start sizes is copied once per process to a
    folder of a neutral name on a tmpfs and bound from there: its mountinfo line
    names that folder, not the league's; the next start binds the same copy."""
    league, entry = league_entry(tmp_path)
    for i in range(sandbox_module.COPY_MAX_ITEMS):
        (entry / "model" / f"part{i}").write_text(f"{i}\n")
    box = in_league(sandbox, league)
    ran = run_bot(box, [system_python(), "spy.py"], entry)
    assert ran.code == 0, ran.log
    assert_names_none(ran, secrets_of_the_host(league, entry))
    said = ran.said("SPY")
    bot_mount = bot_mount_lines(said)
    assert len(bot_mount) == 1, bot_mount
    shown = bot_mount[0].split()[4]  # the bound folder's path on its file system
    assert re.fullmatch(r"(/tmp|/var/tmp)?/updown-entries-\w+/\d+", shown), bot_mount
    assert "/bot/model/part3 0o100644" in [line.split(": ", 1)[1] for line in said
                                           if line.startswith("listing: ")], said
    assert "write: (Read-only file system)" in said
    again = run_bot(box, [system_python(), "spy.py"], entry)
    assert [line.split()[4] for line in bot_mount_lines(again.said("SPY"))] == [shown]


def test_without_room_to_stage_a_larger_entry_is_copied_or_refused(
        sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No neutral tmpfs with room: the entry is copied in at each start, up to the
    fallback's sizes; beyond them the bot is not started, with one line saying why
    (never bound from the league's folder)."""
    monkeypatch.setattr(sandbox_module, "STAGING_PLACES", ())
    monkeypatch.setattr(sandbox_module, "_STAGING", sandbox_module._Staging())
    league, entry = league_entry(tmp_path)
    for i in range(sandbox_module.COPY_MAX_ITEMS):
        (entry / "model" / f"part{i}").write_text(f"{i}\n")
    box = in_league(sandbox, league)
    ran = run_bot(box, [system_python(), "spy.py"], entry)
    assert ran.code == 0, ran.log
    assert_names_none(ran, secrets_of_the_host(league, entry))
    assert any(" / /bot ro," in line and " - tmpfs " in line for line in ran.said("SPY"))
    monkeypatch.setattr(sandbox_module, "FALLBACK_MAX_ITEMS", sandbox_module.COPY_MAX_ITEMS)
    with pytest.raises(BotStartError) as refused:
        run_bot(box, [system_python(), "spy.py"], entry)
    text = str(refused.value)
    assert "too large to copy" in text and "\n" not in text and str(tmp_path) not in text


def test_a_killed_referees_staged_entries_are_swept(tmp_path: Path) -> None:
    """A staging folder whose process is gone (its lock free) is removed by the next
    process to stage in that place; one whose process lives (locked) is kept."""
    gone = tmp_path / "updown-entries-gone"
    alive = tmp_path / "updown-entries-alive"
    for d in (gone, alive):
        (d / "1").mkdir(parents=True)
        (d / ".lock").write_text("")
    fd = os.open(alive / ".lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        sandbox_module._sweep_staging(str(tmp_path))
        assert not gone.exists() and (alive / "1").is_dir()
    finally:
        os.close(fd)


SPY_PLAYER = '''
import sys

import updown_bot


class Spy(updown_bot.Bot):
    told = False

    def decide(self, obs, legal):
        if not self.told:  # in a game: its stderr goes back to the author
            self.told = True
            exec(open("spy.py").read(), {})
        return 0


sys.exit(updown_bot.run(Spy()))
'''


@pytest.mark.slow
def test_an_author_reads_back_no_host_path_from_a_real_league(tmp_path: Path) -> None:
    """The whole channel, as an author would use it: an entry that writes what it
    can read of the host to its stderr, through the league's real check (its report
    goes back to the author) and a league game (its stderr goes back with
    ``submit --status --game``).  Neither names the league's folder, the user's
    home or the user."""
    need_sandbox(SandboxConfig(mode="on"))
    league = make_league(tmp_path / LEAGUE_NAME, seats=[2], deals=1, seed=4)
    entry = tmp_path / "src"
    entry.mkdir()
    shutil.copy(EXAMPLE_BOTS / "updown_bot.py", entry / "updown_bot.py")
    shutil.copy(BOTS / "spy.py", entry / "spy.py")
    (entry / "bot.py").write_text(SPY_PLAYER)
    assert submit(league, "bob", EXAMPLE_BOTS, ["python3", "random_bot.py", "--seed", "1"],
                  checker=lambda *a: (True, "")).accepted
    checked = submit(league, "spy", entry, ["python3", "bot.py"])
    assert checked.accepted, checked.report
    play_pending(league, jobs=1, progress=False)
    status = status_text(league, "spy")
    games = re.findall(r"^  (g[0-9a-f]{12}) ", status, flags=re.M)
    assert games, status
    said = [checked.report, status]
    for game in games:
        said.append(status_text(league, "spy", game))
    text = "\n".join(said)
    assert "SPY /proc/self/mountinfo" in text and "/bot " in text, text[:4000]
    home = os.path.expanduser("~")
    user = re.compile(rf"(?<![\w-]){re.escape(getpass.getuser())}(?![\w-])")
    for line in text.splitlines():
        if not line.startswith("SPY "):
            continue
        seen = line.split(": ", 1)[-1]
        for secret in (str(league), LEAGUE_NAME, str(tmp_path), home):
            assert secret not in seen, (secret, line)
        assert not user.search(seen), line


def test_a_full_staging_place_keeps_its_copies_and_the_next_is_taken(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Bots may be bound to a staged copy while another entry is staged: when the
    place fills up, its copies stay and the next place with room is taken; at
    exit every staging folder of the process goes."""
    places = [tmp_path / "shm", tmp_path / "tmp"]
    for p in places:
        p.mkdir()
    monkeypatch.setattr(sandbox_module, "STAGING_PLACES", tuple(map(str, places)))
    monkeypatch.setattr(sandbox_module, "NEUTRAL",
                        tuple(sandbox_module.mount_path(str(p)) for p in places))
    full: set[str] = set()
    monkeypatch.setattr(sandbox_module, "_room",
                        lambda place, size: not any(place.startswith(f) for f in full))
    entries = []
    for name in ("one", "two"):
        e = tmp_path / name
        (e / "sub").mkdir(parents=True)
        (e / "bot.py").write_text(f"# {name}\n")
        entries.append(e)
    staging = sandbox_module._Staging()
    first = staging.stage(str(entries[0]), ())
    assert first is not None and first.startswith(str(places[0]))
    full.add(str(places[0]))
    second = staging.stage(str(entries[1]), ())
    assert second is not None and second.startswith(str(places[1]))
    assert Path(first, "bot.py").read_text() == "# one\n"  # still there
    assert staging.stage(str(entries[0]), ()) == first
    staging.remove()
    assert [list(p.iterdir()) for p in places] == [[], []]
