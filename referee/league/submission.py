"""Taking a submitted bot into a league: an untrusted folder or archive (``.tar``,
``.tar.gz``, ``.tgz``, ``.zip``) copied into a staging folder inside the league,
checked entry by entry, and identified by its content hash.

Refused, with one line naming the entry: a path that escapes (``../``, absolute), a
symbolic link pointing outside the submission, a hard link, a device, a FIFO or a
socket; more files, more bytes or a bigger file than the league's ``[limits]``.
Sizes are counted as bytes are written, so an archive bomb stops at the limit, not
after it is unpacked.  Nothing is written outside the staging folder, and a refused
or interrupted submission removes it (``stage`` cleans up on any exception,
KeyboardInterrupt included).

Owns no database and runs no bot.  Imports nothing of the referee but the limits.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import IO

from ..errors import InputError
from .config import Limits

CHUNK = 1 << 16
zlib_error = zlib.error
ARCHIVES = (".tar", ".tar.gz", ".tgz", ".zip")


class SubmissionError(InputError):
    """A submission that cannot be taken: one line saying what and why."""


class _Budget:
    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.bytes = 0
        self.files = 0

    def entry(self, name: str) -> None:
        self.files += 1
        if self.files > self.limits.max_files:
            raise SubmissionError(f"more than {self.limits.max_files} files and folders "
                                  f"(stopped at {name!r}; [limits] max_files)")

    def copy(self, src: IO[bytes], dest: Path, name: str) -> None:
        """Copy ``src`` to a new file ``dest``, stopping at a limit."""
        size = 0
        fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as out:
            while chunk := src.read(CHUNK):
                size += len(chunk)
                self.bytes += len(chunk)
                if size > self.limits.max_file_bytes:
                    raise SubmissionError(f"{name!r} is bigger than {self.limits.max_file_bytes} "
                                          "bytes ([limits] max_file_bytes)")
                if self.bytes > self.limits.max_bytes:
                    raise SubmissionError(f"the submission is bigger than "
                                          f"{self.limits.max_bytes} bytes unpacked (stopped in "
                                          f"{name!r}; [limits] max_bytes)")
                out.write(chunk)


def _clean(name: str) -> PurePosixPath:
    """A member's path, refused if it is absolute or climbs out."""
    p = PurePosixPath(name.replace("\\", "/"))
    if p.is_absolute() or name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        raise SubmissionError(f"{name!r} is an absolute path: every path in a submission must "
                              "be relative to its top folder")
    if ".." in p.parts:
        raise SubmissionError(f"{name!r} climbs out of the submission ('..'): every path "
                              "must stay inside it")
    parts = [x for x in p.parts if x not in ("", ".")]
    return PurePosixPath(*parts) if parts else PurePosixPath(".")


def _link_ok(link: PurePosixPath, target: str, name: str) -> None:
    """A symbolic link may point only inside the submission."""
    if target.startswith("/"):
        raise SubmissionError(f"{name!r} is a symbolic link to {target!r}, outside the "
                              "submission: links may point only inside it")
    depth = len(link.parent.parts) if str(link.parent) != "." else 0
    for part in PurePosixPath(target).parts:
        depth = depth - 1 if part == ".." else depth if part == "." else depth + 1
        if depth < 0:
            raise SubmissionError(f"{name!r} is a symbolic link to {target!r}, outside the "
                                  "submission: links may point only inside it")


def _target(root: Path, rel: PurePosixPath) -> Path:
    dest = root.joinpath(*rel.parts)
    # A parent that is a link would carry the write elsewhere.
    for parent in list(dest.parents)[::-1]:
        if len(parent.parts) > len(root.parts) and parent.is_symlink():
            raise SubmissionError(f"{str(rel)!r} lies under a symbolic link")
    return dest


def _from_folder(src: Path, root: Path, budget: _Budget) -> None:
    for dirpath, dirnames, filenames in os.walk(src, followlinks=False):
        here = Path(dirpath)
        for n in sorted(dirnames + filenames):
            path = here / n
            rel = PurePosixPath(path.relative_to(src).as_posix())
            name = str(rel)
            budget.entry(name)
            st = os.lstat(path)
            dest = root.joinpath(*rel.parts)
            if stat.S_ISLNK(st.st_mode):
                target = os.readlink(path)
                _link_ok(rel, target, name)
                os.symlink(target, dest)
                if n in dirnames:
                    dirnames.remove(n)
            elif stat.S_ISDIR(st.st_mode):
                dest.mkdir()
            elif stat.S_ISREG(st.st_mode):
                if st.st_nlink > 1:
                    raise SubmissionError(f"{name!r} is a hard link (it has {st.st_nlink} "
                                          "names): submit a copy of the file instead")
                with open(path, "rb") as f:
                    budget.copy(f, dest, name)
                if st.st_mode & 0o111:
                    dest.chmod(0o755)
            else:
                raise SubmissionError(f"{name!r} is {_kind(st.st_mode)}: a submission holds "
                                      "only files, folders and links inside it")


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _from_tar(src: Path, root: Path, budget: _Budget) -> None:
    try:
        tar = tarfile.open(src, "r:*")  # noqa: SIM115 (closed below)
    except (tarfile.TarError, OSError) as e:
        raise SubmissionError(f"{src.name} is not a readable tar archive: {e}") from None
    with tar:
        try:
            for m in tar:  # streamed: a bomb is stopped before its end is read
                _tar_member(tar, m, root, budget)
        except (tarfile.TarError, EOFError, zlib_error) as e:
            raise SubmissionError(f"{src.name} is not a readable tar archive: {e}") from None
        except FileExistsError as e:
            raise SubmissionError(f"{src.name} holds {e.filename!r} twice") from None


def _tar_member(tar: tarfile.TarFile, m: tarfile.TarInfo, root: Path, budget: _Budget) -> None:
    rel = _clean(m.name)
    name = m.name
    if str(rel) == ".":
        return
    budget.entry(name)
    dest = _target(root, rel)
    dest.parent.mkdir(parents=True, exist_ok=True)
    if m.isdir():
        dest.mkdir(exist_ok=True)
    elif m.issym():
        _link_ok(rel, m.linkname, name)
        os.symlink(m.linkname, dest)
    elif m.islnk():
        raise SubmissionError(f"{name!r} is a hard link (to {m.linkname!r}): "
                              "submit a copy of the file instead")
    elif m.isreg():
        f = tar.extractfile(m)
        assert f is not None
        budget.copy(f, dest, name)
        if m.mode & 0o111:
            dest.chmod(0o755)
    elif m.ischr() or m.isblk():
        raise SubmissionError(f"{name!r} is a device: a submission holds only "
                              "files, folders and links inside it")
    elif m.isfifo():
        raise SubmissionError(f"{name!r} is a FIFO (named pipe): a submission "
                              "holds only files, folders and links inside it")
    else:
        raise SubmissionError(f"{name!r} is not a file, folder or link")


def _from_zip(src: Path, root: Path, budget: _Budget) -> None:
    try:
        z = zipfile.ZipFile(src)
    except (zipfile.BadZipFile, OSError) as e:
        raise SubmissionError(f"{src.name} is not a readable zip archive: {e}") from None
    with z:
        for info in z.infolist():
            rel = _clean(info.filename)
            name = info.filename
            if str(rel) == ".":
                continue
            budget.entry(name)
            mode = info.external_attr >> 16
            dest = _target(root, rel)
            dest.parent.mkdir(parents=True, exist_ok=True)
            if info.is_dir():
                dest.mkdir(exist_ok=True)
            elif stat.S_ISLNK(mode):
                target = z.read(info)[:4096].decode("utf-8", "replace")
                _link_ok(rel, target, name)
                os.symlink(target, dest)
            elif stat.S_IFMT(mode) and not stat.S_ISREG(mode):
                raise SubmissionError(f"{name!r} is {_kind(mode)}: a submission holds only "
                                      "files, folders and links inside it")
            else:
                try:
                    with z.open(info) as f:
                        budget.copy(f, dest, name)
                except (zipfile.BadZipFile, NotImplementedError) as e:
                    raise SubmissionError(f"cannot unpack {name!r} from {src.name}: {e}") from None
                if mode & 0o111:
                    dest.chmod(0o755)


def is_archive(path: Path) -> bool:
    return path.is_file() and path.name.endswith(ARCHIVES)


@contextlib.contextmanager
def stage(source: Path, staging_parent: Path, limits: Limits) -> Iterator[Path]:
    """A checked copy of ``source`` in a new folder under ``staging_parent``, removed
    when the block ends unless the caller moved it away (``os.replace``)."""
    staging_parent.mkdir(parents=True, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix=".incoming-", dir=staging_parent))
    try:
        budget = _Budget(limits)
        if source.is_dir() and not source.is_symlink():
            _from_folder(source, root, budget)
        elif source.is_file() and source.name.endswith(".zip"):
            _from_zip(source, root, budget)
        elif source.is_file() and source.name.endswith((".tar", ".tar.gz", ".tgz")):
            _from_tar(source, root, budget)
        elif not source.exists():
            raise SubmissionError(f"{source} does not exist: give the bot's folder, or an "
                                  f"archive ({', '.join(ARCHIVES)})")
        else:
            raise SubmissionError(f"{source} is neither a folder nor an archive "
                                  f"({', '.join(ARCHIVES)})")
        _check_links(root)
        yield root
    finally:
        if root.exists():
            make_writable(root)
            shutil.rmtree(root, ignore_errors=True)


def _check_links(root: Path) -> None:
    """After unpacking: every link resolves inside the submission (a chain of links
    cannot step out either)."""
    real_root = os.path.realpath(root)
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            p = os.path.join(dirpath, n)
            if os.path.islink(p):
                real = os.path.realpath(p)
                if not (real == real_root or real.startswith(real_root + os.sep)):
                    rel = os.path.relpath(p, root)
                    raise SubmissionError(f"{rel!r} is a symbolic link that leads outside the "
                                          "submission: links may point only inside it")


def content_hash(root: Path) -> str:
    """sha256 over every path, kind, mode bit and content, in sorted order."""
    h = hashlib.sha256()
    for dirpath, dirnames, filenames in sorted(os.walk(root)):
        dirnames.sort()
        for n in sorted(dirnames + filenames):
            p = Path(dirpath) / n
            rel = p.relative_to(root).as_posix()
            if p.is_symlink():
                h.update(f"L {rel} -> {os.readlink(p)}\n".encode())
            elif p.is_dir():
                h.update(f"D {rel}\n".encode())
            else:
                x = "x" if os.stat(p).st_mode & 0o111 else "-"
                fh = hashlib.sha256()
                with open(p, "rb") as f:
                    while chunk := f.read(CHUNK):
                        fh.update(chunk)
                h.update(f"F {rel} {x} {fh.hexdigest()}\n".encode())
    return h.hexdigest()


def freeze(root: Path) -> None:
    """Read-only for everyone (the referee keeps the submission as it was checked)."""
    for dirpath, _, filenames in os.walk(root):
        for n in filenames:
            p = os.path.join(dirpath, n)
            if not os.path.islink(p):
                os.chmod(p, 0o555 if os.stat(p).st_mode & 0o111 else 0o444)
        os.chmod(dirpath, 0o555)


def make_writable(root: Path) -> None:
    for dirpath, _, _ in os.walk(root):
        with contextlib.suppress(OSError):
            os.chmod(dirpath, 0o755)
