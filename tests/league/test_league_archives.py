"""Untrusted submissions: every kind of malicious folder or archive is refused with a
message naming the entry, nothing is written outside the league, and nothing of the
submission is kept.  Through the installed command."""

from __future__ import annotations

import io
import os
import signal
import stat
import subprocess
import tarfile
import time
import zipfile
import zlib
from pathlib import Path
from typing import Any

import pytest

from referee.league import run as league_run
from referee.league.config import Limits, load_league_config
from referee.league.run import new_league, submit
from referee.league.store import LeagueStore
from referee.league.submission import SubmissionError, stage
from referee.players.sandbox import unsandboxed
from tests.league.conftest import Referee, env_for_subprocess, referee_command
from tests.league.leaguehelpers import EXAMPLE_BOTS, fake_bot, league_toml, make_league
from tests.procs import Children, scaled

pytestmark = pytest.mark.slow

LIMITS = "[limits]\nmax_bytes = 100000\nmax_files = 20\nmax_file_bytes = 60000\n"


@pytest.fixture
def league(tmp_path: Path) -> Path:
    """A new league (made in-process: ``league new`` itself is tested in
    test_league_cli.py; these tests are about what ``league submit`` refuses)."""
    return make_league(tmp_path / "league", extra=LIMITS)


def refused(referee: Referee, league: Path, source: Path, *words: str) -> str:
    r = referee("league", "submit", league, "evil", source, "--command", "python3 bot.py")
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stderr.startswith("Error: ") and len(r.stderr.splitlines()) == 1, r.stderr
    for w in words:
        assert w in r.stderr, r.stderr
    leftovers = [p for p in (league / "entries").rglob("*")]
    assert leftovers == [], leftovers
    store = LeagueStore.open(league)
    try:
        assert store.entries() == []
    finally:
        store.close()
    return r.stderr


def tar_with(path: Path, *members: tuple[tarfile.TarInfo, bytes | None]) -> Path:
    with tarfile.open(path, "w:gz") as t:
        bot = tarfile.TarInfo("bot.py")
        body = b"print('hi')\n"
        bot.size = len(body)
        t.addfile(bot, io.BytesIO(body))
        for info, data in members:
            if data is not None:
                info.size = len(data)
                t.addfile(info, io.BytesIO(data))
            else:
                t.addfile(info)
    return path


def member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = link
    return info


def test_tar_path_climbing_out(tmp_path: Path, referee: Referee, league: Path) -> None:
    src = tar_with(tmp_path / "a.tar.gz", (member("../../outside.txt"), b"gotcha"))
    refused(referee, league, src, "'../../outside.txt' climbs out")
    assert not (tmp_path / "outside.txt").exists()
    assert not (league / "outside.txt").exists()


def test_tar_absolute_path(tmp_path: Path, referee: Referee, league: Path) -> None:
    target = tmp_path / "abs.txt"
    src = tar_with(tmp_path / "a.tgz", (member(str(target)), b"gotcha"))
    refused(referee, league, src, "is an absolute path")
    assert not target.exists()


def test_zip_path_climbing_out(tmp_path: Path, referee: Referee, league: Path) -> None:
    src = tmp_path / "a.zip"
    with zipfile.ZipFile(src, "w") as z:
        z.writestr("bot.py", "print('hi')\n")
        z.writestr("../zipped.txt", "gotcha")
    refused(referee, league, src, "'../zipped.txt' climbs out")
    assert not (tmp_path / "zipped.txt").exists()


def test_symlink_out_of_a_folder(tmp_path: Path, referee: Referee, league: Path) -> None:
    src = tmp_path / "bot"
    src.mkdir()
    (src / "bot.py").write_text("print('hi')\n")
    (src / "key").symlink_to("/etc/passwd")
    refused(referee, league, src, "'key' is a symbolic link to '/etc/passwd'")


def test_relative_symlink_climbing_out_of_a_tar(tmp_path: Path, referee: Referee,
                                                league: Path) -> None:
    src = tar_with(tmp_path / "a.tar", (member("sub/up", tarfile.SYMTYPE, "../../x"), None))
    refused(referee, league, src, "'sub/up' is a symbolic link to '../../x'")


def test_write_through_a_symlink_inside(tmp_path: Path, referee: Referee, league: Path) -> None:
    # the link itself points inside (to "."), but a chain of them must not step out
    src = tar_with(tmp_path / "a.tar", (member("here", tarfile.SYMTYPE, "."), None),
                   (member("here/../../../escape.txt"), b"x"))
    refused(referee, league, src, "climbs out")
    assert not (tmp_path / "escape.txt").exists()


def test_symlink_out_of_a_zip(tmp_path: Path, referee: Referee, league: Path) -> None:
    src = tmp_path / "a.zip"
    with zipfile.ZipFile(src, "w") as z:
        z.writestr("bot.py", "print('hi')\n")
        info = zipfile.ZipInfo("shadow")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        z.writestr(info, "/etc/shadow")
    refused(referee, league, src, "'shadow' is a symbolic link to '/etc/shadow'")


def test_hard_link_in_a_tar(tmp_path: Path, referee: Referee, league: Path) -> None:
    src = tar_with(tmp_path / "a.tar", (member("pw", tarfile.LNKTYPE, "/etc/passwd"), None))
    refused(referee, league, src, "'pw' is a hard link")


def test_hard_link_in_a_folder(tmp_path: Path, referee: Referee, league: Path) -> None:
    src = tmp_path / "bot"
    src.mkdir()
    (src / "bot.py").write_text("print('hi')\n")
    os.link(src / "bot.py", src / "again.py")
    refused(referee, league, src, "is a hard link")


def test_device_in_a_tar(tmp_path: Path, referee: Referee, league: Path) -> None:
    dev = member("mem", tarfile.CHRTYPE)
    dev.devmajor, dev.devminor = 1, 1
    src = tar_with(tmp_path / "a.tar", (dev, None))
    refused(referee, league, src, "'mem' is a device")


def test_fifo_in_a_folder(tmp_path: Path, referee: Referee, league: Path) -> None:
    src = tmp_path / "bot"
    src.mkdir()
    (src / "bot.py").write_text("print('hi')\n")
    os.mkfifo(src / "pipe")
    refused(referee, league, src, "'pipe' is a FIFO")


def test_fifo_in_a_tar(tmp_path: Path, referee: Referee, league: Path) -> None:
    src = tar_with(tmp_path / "a.tar", (member("pipe", tarfile.FIFOTYPE), None))
    refused(referee, league, src, "'pipe' is a FIFO")


def test_too_many_files(tmp_path: Path, referee: Referee, league: Path) -> None:
    src = tmp_path / "bot"
    src.mkdir()
    for i in range(25):
        (src / f"f{i:02d}.py").write_text("x")
    refused(referee, league, src, "more than 20 files", "max_files")


def test_a_file_too_big(tmp_path: Path, referee: Referee, league: Path) -> None:
    src = tar_with(tmp_path / "a.tar", (member("weights.bin"), b"\0" * 70000))
    refused(referee, league, src, "'weights.bin' is bigger than 60000 bytes", "max_file_bytes")


def test_too_many_bytes_in_all(tmp_path: Path, referee: Referee, league: Path) -> None:
    src = tar_with(tmp_path / "a.tar", *[(member(f"w{i}.bin"), b"\0" * 50000) for i in range(3)])
    refused(referee, league, src, "bigger than 100000 bytes unpacked", "'w1.bin'")


def test_an_archive_bomb_is_stopped_at_the_limit(tmp_path: Path, referee: Referee,
                                                 league: Path) -> None:
    """A gzip stream that claims a 10 GB file: 2 MB of zeros, then garbage.  Read to
    its end, it would fail as corrupt; stopped at the limit, it is refused for its
    size -- so the message proves where the unpacking stopped."""
    header = member("bomb.bin")
    header.size = 10 << 30
    head = header.tobuf(format=tarfile.GNU_FORMAT)
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)  # gzip
    body = comp.compress(head) + comp.compress(b"\0" * (2 << 20)) + comp.flush(zlib.Z_SYNC_FLUSH)
    src = tmp_path / "bomb.tar.gz"
    src.write_bytes(body + os.urandom(4096))
    assert src.stat().st_size < 20000
    msg = refused(referee, league, src, "'bomb.bin' is bigger than 60000 bytes")
    assert "not a readable" not in msg


def test_an_interrupted_submission_leaves_nothing(tmp_path: Path, league: Path,
                                                  need_sandbox: None,
                                                  children: Children) -> None:
    """Ctrl-C while check-bot plays the bot: no entry, no copy, no staging folder."""
    proc = children.popen(
        [referee_command(), "league", "submit", str(league), "heur", str(EXAMPLE_BOTS),
         "--command", "python3 heuristic_bot.py"], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env=env_for_subprocess())
    staged: list[Path] = []
    while not staged and proc.poll() is None:  # the copy is made before the check
        staged = [p for p in (league / "entries").glob(".incoming-*")
                  if (p / "heuristic_bot.py").exists()]
        time.sleep(0.01)  # polling another process's progress, not waiting it out
    assert staged, "the submission ended before it could be interrupted"
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=scaled(60))  # else killed by children
    assert proc.returncode == 130, err
    assert "interrupted: nothing was submitted" in err
    assert list((league / "entries").iterdir()) == []
    store = LeagueStore.open(league)
    try:
        assert store.entries() == []
    finally:
        store.close()


def test_stage_removes_its_copy_on_any_exception(tmp_path: Path) -> None:
    src = tmp_path / "bot"
    src.mkdir()
    (src / "bot.py").write_text("x")
    with pytest.raises(KeyboardInterrupt), stage(src, tmp_path / "in", Limits()) as staged:
        assert (staged / "bot.py").read_text() == "x"
        raise KeyboardInterrupt
    assert list((tmp_path / "in").iterdir()) == []
    with pytest.raises(SubmissionError, match="does not exist"), \
            stage(tmp_path / "nothing", tmp_path / "in", Limits()):
        pass



@pytest.mark.parametrize("at", ["mkdir", "replace", "freeze"])
def test_an_interrupt_between_staging_and_the_check_leaves_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, at: str) -> None:
    """Ctrl-C right after each step between the staged copy and the check (the
    name's folder made, the copy moved into it, made read-only): no version folder
    and no name folder is left, nothing recorded (the background soak, run 1 at load
    ~4: `entries/heur` was left behind by a Ctrl-C that landed in this window)."""
    cfg = league_toml(tmp_path / "l.toml", seats=[2], deals=1, seed=3)
    league = tmp_path / "l"
    new_league(league, load_league_config(cfg), cfg.read_text())
    hits: list[str] = []
    real_mkdir, real_replace, real_freeze = Path.mkdir, os.replace, league_run.freeze

    def mkdir(self: Path, *args: Any, **kwargs: Any) -> None:
        real_mkdir(self, *args, **kwargs)
        if self.name == "bot":
            hits.append("mkdir")
            raise KeyboardInterrupt

    def replace(src: Any, dst: Any) -> None:
        real_replace(src, dst)
        if Path(dst).parent.name == "bot":
            hits.append("replace")
            raise KeyboardInterrupt

    def freeze(folder: Path) -> None:
        real_freeze(folder)
        if folder.parent.name == "bot":
            hits.append("freeze")
            raise KeyboardInterrupt

    if at == "mkdir":
        monkeypatch.setattr(Path, "mkdir", mkdir)
    elif at == "replace":
        monkeypatch.setattr(league_run.os, "replace", replace)
    else:
        monkeypatch.setattr(league_run, "freeze", freeze)
    with pytest.raises(KeyboardInterrupt):
        submit(league, "bot", fake_bot(tmp_path / "src", 1), ["python3", "b.py"],
               sandbox=unsandboxed(), checker=lambda *a: (True, ""))
    monkeypatch.undo()
    assert hits == [at]
    assert list((league / "entries").iterdir()) == []
    store = LeagueStore.open(league)
    try:
        assert store.entries("bot") == []
    finally:
        store.close()
