"""Archives as hostile input (issue 26 item 3): each bomb and each case the old
unpacker did not handle, submitted through the installed ``referee league submit``,
is refused in one line naming the member and the limit, within the league's
``max_bytes`` + 64 MB of peak memory and 2 s of CPU (measured in a fresh process
whose only child is the referee: ``getrusage(RUSAGE_CHILDREN)``), with no traceback
and no path of this machine in what it prints."""

from __future__ import annotations

import io
import json
import stat
import subprocess
import sys
import tarfile
import time
import zipfile
import zlib
from pathlib import Path

import pytest

from referee.league.config import Limits
from referee.league.store import LeagueStore
from referee.league.submission import stage
from tests.league.conftest import env_for_subprocess, referee_command
from tests.league.leaguehelpers import make_league
from tests.procs import scaled

pytestmark = pytest.mark.slow

MAX_BYTES = 1 << 20
LIMITS = f"[limits]\nmax_bytes = {MAX_BYTES}\nmax_files = 2000\nmax_file_bytes = 600000\n"

MEASURE = """\
import json, resource, subprocess, sys
r = subprocess.run(sys.argv[1:], capture_output=True, text=True)
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({"rc": r.returncode, "out": r.stdout, "err": r.stderr,
                  "rss_kb": u.ru_maxrss, "cpu": u.ru_utime + u.ru_stime}))
"""


@pytest.fixture
def league(tmp_path: Path) -> Path:
    """A new league (made in-process: ``league new`` itself is tested in
    test_league_cli.py; these tests are about what ``league submit`` refuses)."""
    return make_league(tmp_path / "league", extra=LIMITS)


def refused(league: Path, source: Path, *words: str) -> str:
    """Submit ``source``; assert it was refused within the budget, in one line
    holding ``words``, leaving nothing behind; return the line."""
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, referee_command(), "league", "submit", str(league),
         "evil", str(source), "--command", "python3 bot.py"],
        capture_output=True, text=True, env=env_for_subprocess(), timeout=scaled(120),
        cwd=league.parent)
    r = json.loads(done.stdout)
    out = r["out"] + r["err"]
    assert r["rc"] == 1, out
    assert r["err"].startswith("Error: ") and len(r["err"].splitlines()) == 1, r["err"]
    assert r["out"] == ""
    assert "Traceback" not in out
    # the member is named, never a path of this machine (the archive's own path is
    # the organiser's word, given on the command line: not repeated either)
    assert str(league.parent) not in out and str(Path.home()) not in out, out
    for w in words:
        assert w in r["err"], r["err"]
    assert r["rss_kb"] * 1024 < MAX_BYTES + (64 << 20), f"peak RSS {r['rss_kb']} KB: {out}"
    assert r["cpu"] < 2.0, f"{r['cpu']:.2f} s of CPU: {out}"
    assert [p for p in (league / "entries").rglob("*")] == []
    store = LeagueStore.open(league)
    try:
        assert store.entries() == []
    finally:
        store.close()
    return str(r["err"])


def header(name: str, kind: bytes, size: int, link: str = "") -> bytes:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.size = size
    info.linkname = link
    return info.tobuf(format=tarfile.GNU_FORMAT)


def bot_member() -> bytes:
    body = b"print('hi')\n"
    return header("bot.py", tarfile.REGTYPE, len(body)) + body + bytes(512 - len(body))


def gzipped(path: Path, *parts: bytes, zeros: int = 0) -> Path:
    """A .tar.gz of ``parts``, then ``zeros`` zero bytes (compressed: a bomb's body)."""
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    out = [comp.compress(p) for p in parts]
    chunk = bytes(1 << 20)
    for _ in range(zeros >> 20):
        out.append(comp.compress(chunk))
    out.append(comp.flush())
    path.write_bytes(b"".join(out))
    return path


def test_a_gnu_long_name_bomb(tmp_path: Path, league: Path) -> None:
    """A long name declaring 1 GiB, 255 KB of it present: refused on its header."""
    src = gzipped(tmp_path / "long.tar.gz", bot_member(),
                  header("././@LongLink", tarfile.GNUTYPE_LONGNAME, 1 << 30),
                  b"a" * (255 << 10))
    refused(league, src, "member 2 is a GNU long name of 1073741824 bytes", "PATH_MAX")


def test_a_long_name_over_name_max(tmp_path: Path, league: Path) -> None:
    name = "x" * 3000
    data = name.encode() + b"\0"
    src = gzipped(tmp_path / "long.tar.gz", bot_member(),
                  header("././@LongLink", tarfile.GNUTYPE_LONGNAME, len(data)),
                  data + bytes(-len(data) % 512), header("short", tarfile.REGTYPE, 0))
    err = refused(league, src, "has a part longer than 255 bytes (NAME_MAX)")
    assert len(err) < 300  # the name is shortened, not carried back whole


def test_a_pax_header_bomb(tmp_path: Path, league: Path) -> None:
    src = gzipped(tmp_path / "pax.tar.gz", bot_member(),
                  header("././@PaxHeader", tarfile.XHDTYPE, 1 << 30), zeros=1 << 20)
    refused(league, src, "member 2 is a pax header of 1073741824 bytes")


def pax_record(key: str, value: bytes) -> bytes:
    body = f" {key}=".encode() + value + b"\n"
    n = len(body) + 1
    while len(str(n)) + len(body) != n:
        n += 1
    return str(n).encode() + body


def test_a_nul_in_a_pax_path(tmp_path: Path, league: Path) -> None:
    rec = pax_record("path", b"bot\0.py")
    src = gzipped(tmp_path / "nul.tar.gz",
                  header("././@PaxHeader", tarfile.XHDTYPE, len(rec)), rec,
                  bytes(-len(rec) % 512), header("x", tarfile.REGTYPE, 0))
    refused(league, src, "'bot\\x00.py' holds a NUL character")


def test_a_zip_link_bomb(tmp_path: Path, league: Path) -> None:
    """A symbolic link whose target inflates to 256 MB: read up to PATH_MAX only."""
    src = tmp_path / "link.zip"
    with zipfile.ZipFile(src, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("bot.py", "print('hi')\n")
        info = zipfile.ZipInfo("link")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        info.create_system = 3
        info.compress_type = zipfile.ZIP_DEFLATED
        with z.open(info, "w", force_zip64=True) as f:
            chunk = b"a" * (1 << 20)
            for _ in range(256):
                f.write(chunk)
    assert src.stat().st_size < 2 << 20
    refused(league, src, "'link' is a symbolic link to a name of 268435456 bytes, over 4096")


def test_a_zip_link_that_lies_about_its_size(tmp_path: Path, league: Path) -> None:
    src = tmp_path / "liar.zip"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("bot.py", "print('hi')\n")
        info = zipfile.ZipInfo("link")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        info.create_system = 3
        z.writestr(info, b"a" * (8 << 20), zipfile.ZIP_DEFLATED)
    data = buf.getvalue()
    # claim 10 bytes in the central directory and the local header
    data = data.replace((8 << 20).to_bytes(4, "little"), (10).to_bytes(4, "little"))
    src.write_bytes(data)
    out = refused(league, src, "'link'")
    assert "PATH_MAX" in out or "cannot unpack" in out


def test_a_deep_tree(tmp_path: Path, league: Path) -> None:
    """1,000 folders deep (a few KB): refused at the depth limit, not after a walk."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz", format=tarfile.GNU_FORMAT) as t:
        for i in range(1, 1001):
            info = tarfile.TarInfo("/".join(["d"] * i))
            info.type = tarfile.DIRTYPE
            t.addfile(info)
    src = tmp_path / "deep.tar.gz"
    src.write_bytes(buf.getvalue())
    refused(league, src, "is more than 32 folders deep ([limits] max_depth)")


def test_many_deep_members_are_linear(tmp_path: Path) -> None:
    """2,000 members 30 levels deep (under the limit): taken, in well under 2 s of
    CPU (the old unpacker walked every parent of every member on the disk)."""
    buf = io.BytesIO()
    deep = "/".join(["d"] * 30)
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        for i in range(1960):
            info = tarfile.TarInfo(f"{deep}/f{i}")
            t.addfile(info, io.BytesIO(b""))
        info = tarfile.TarInfo("bot.py")
        info.size = 3
        t.addfile(info, io.BytesIO(b"x=1"))
    src = tmp_path / "wide.tar.gz"
    src.write_bytes(buf.getvalue())
    start = time.process_time()
    with stage(src, tmp_path / "in", Limits(max_files=2000)) as staged:
        assert (staged / "bot.py").read_text() == "x=1"
        assert (staged / deep / "f1959").exists()
    assert time.process_time() - start < 2.0


def test_a_dot_member_with_huge_content(tmp_path: Path, league: Path) -> None:
    """A file named '.' declaring 2 GiB: refused on its header, nothing inflated."""
    src = gzipped(tmp_path / "dot.tar.gz", bot_member(),
                  header(".", tarfile.REGTYPE, 2 << 30), zeros=4 << 20)
    refused(league, src, "'.' is a file in place of the submission's top folder")


def test_a_dot_folder_with_data(tmp_path: Path, league: Path) -> None:
    src = gzipped(tmp_path / "dot.tar.gz", bot_member(),
                  header(".", tarfile.DIRTYPE, 2 << 30), zeros=4 << 20)
    refused(league, src, "'./' is a folder with 2147483648 bytes of data")


def test_a_zip_naming_a_file_twice(tmp_path: Path, league: Path) -> None:
    src = tmp_path / "twice.zip"
    with zipfile.ZipFile(src, "w") as z, pytest.warns(UserWarning, match="Duplicate"):
        z.writestr("bot.py", "print('hi')\n")
        z.writestr("bot.py", "print('again')\n")
    refused(league, src, "the submission holds 'bot.py' twice")


def test_a_tar_naming_a_file_twice(tmp_path: Path, league: Path) -> None:
    src = gzipped(tmp_path / "twice.tar.gz", bot_member(), bot_member())
    refused(league, src, "the submission holds 'bot.py' twice")


def test_a_nul_in_a_zip_name(tmp_path: Path, league: Path) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:  # zipfile cuts a name at a NUL: write it
        z.writestr("bot.py", "print('hi')\n")  # with an X, then make it a NUL
        z.writestr("runXme.py", "print('x')\n")
    src = tmp_path / "nul.zip"
    src.write_bytes(buf.getvalue().replace(b"runXme.py", b"run\0me.py"))
    refused(league, src, "'run\\x00me.py' holds a NUL character")


def test_links_to_nothing(tmp_path: Path, league: Path) -> None:
    src = gzipped(tmp_path / "empty.tar.gz", bot_member(), header("empty", tarfile.SYMTYPE, 0))
    refused(league, src, "'empty' is a symbolic link to nothing (an empty target)")
    z = tmp_path / "empty.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("bot.py", "print('hi')\n")
        info = zipfile.ZipInfo("empty")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        info.create_system = 3
        zf.writestr(info, b"")
    refused(league, z, "'empty' is a symbolic link to nothing (an empty target)")


def test_a_zip_directory_bigger_than_max_files_could_need(tmp_path: Path,
                                                          league: Path) -> None:
    src = tmp_path / "many.zip"
    with zipfile.ZipFile(src, "w") as z:
        z.writestr("bot.py", "print('hi')\n")
        for i in range(2100):
            z.writestr(f"f{i}", b"")
    refused(league, src, "lists 2101 members", "max_files")


def test_links_and_folders_are_charged(tmp_path: Path, league: Path) -> None:
    """2,001 links to one file: each counts against max_files."""
    parts = [bot_member()] + [header(f"l{i}", tarfile.SYMTYPE, 0, "bot.py")
                              for i in range(2001)]
    src = gzipped(tmp_path / "links.tar.gz", *parts)
    refused(league, src, "more than 2000 files, folders and links", "max_files")


def test_a_host_path_never_reaches_an_author(tmp_path: Path, league: Path) -> None:
    """A member under a file names the member, not the staging folder."""
    src = gzipped(tmp_path / "y.tar.gz", bot_member(), header("bot.py/inner", tarfile.REGTYPE, 0))
    refused(league, src, "'bot.py/inner' lies under a file ('bot.py')")
