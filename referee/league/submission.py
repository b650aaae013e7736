"""Taking a submitted bot into a league: an untrusted folder or archive (``.tar``,
``.tar.gz``, ``.tgz``, ``.zip``) copied into a staging folder inside the league,
checked entry by entry, and identified by its content hash.

The unpacking, and what it refuses, is ``archive.py``'s (every byte charged against
the league's ``[limits]`` before it is read).  Nothing is written outside the
staging folder, and a refused or interrupted submission removes it (``stage`` cleans
up on any exception, KeyboardInterrupt included).

The bot's command is checked against its staged copy (``check_entry_command``):
every path it names stays inside the submission or is an interpreter the league
allows (``referee.players.sandbox.check_fence``).

Owns no database and runs no bot.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import secrets
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path

from ..errors import InputError
from ..players.sandbox import FenceError, SandboxConfig, check_fence
from .archive import ARCHIVES, ArchiveError, is_archive, unpack
from .config import Limits

CHUNK = 1 << 16


class SubmissionError(InputError):
    """A submission that cannot be taken: one line saying what and why."""


@contextlib.contextmanager
def stage(source: Path, staging_parent: Path, limits: Limits) -> Iterator[Path]:
    """A checked copy of ``source`` in a new folder under ``staging_parent``, removed
    when the block ends unless the caller moved it away (``os.replace``).  The
    unpacking is ``archive.unpack``'s: every byte charged before it is read."""
    if not source.exists():
        raise SubmissionError(f"{source} does not exist: give the bot's folder, or an "
                              f"archive ({', '.join(ARCHIVES)})")
    if not (source.is_dir() or is_archive(source)):
        raise SubmissionError(f"{source} is neither a folder nor an archive "
                              f"({', '.join(ARCHIVES)})")
    staging_parent.mkdir(parents=True, exist_ok=True)
    sweep_staging(staging_parent)
    # The staging folder's lock, held while it is in use: a submission killed with
    # SIGKILL cannot clean up, and the next one sweeps what its dead lock left.
    name = STAGING_PREFIX + secrets.token_hex(8)
    lock = staging_parent / (name + ".lock")
    while True:  # a sweep may remove a lock file between its creation and its flock
        fd = os.open(lock, os.O_CREAT | os.O_RDWR | os.O_CLOEXEC, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        with contextlib.suppress(FileNotFoundError):
            if os.stat(lock).st_ino == os.fstat(fd).st_ino:
                break
        os.close(fd)
    root = staging_parent / name
    try:
        root.mkdir(mode=0o700)
        try:
            unpack(source, root, limits)
        except ArchiveError as e:
            raise SubmissionError(str(e)) from None
        yield root
    finally:
        if root.exists():
            make_writable(root)
            shutil.rmtree(root, ignore_errors=True)
        with contextlib.suppress(OSError):
            lock.unlink()
        os.close(fd)


#: Staging folders (and their ``.lock`` files) in a league's ``entries/``.
STAGING_PREFIX = ".incoming-"


def sweep_staging(parent: Path) -> list[str]:
    """Remove the staging folders under ``parent`` that no live submission holds
    (their lock is free: the process that made them died, SIGKILL included); returns
    their names.  A folder whose lock is held is another submission at work: kept."""
    gone: list[str] = []
    try:
        names = sorted(os.listdir(parent))
    except OSError:
        return gone
    for n in names:
        if not n.startswith(STAGING_PREFIX) or n.endswith(".lock"):
            continue
        lock = parent / (n + ".lock")
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CLOEXEC)
        except FileNotFoundError:
            fd = -1  # no lock: made by a version without one, or half cleaned up
        except OSError:
            continue
        try:
            if fd >= 0:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue  # held: a submission at work
            folder = parent / n
            make_writable(folder)
            shutil.rmtree(folder, ignore_errors=True)
            with contextlib.suppress(OSError):
                lock.unlink()
            gone.append(n)
        finally:
            if fd >= 0:
                os.close(fd)
    for n in names:  # a lock whose folder is gone (killed between the two removals)
        if n.startswith(STAGING_PREFIX) and n.endswith(".lock") and \
                not (parent / n[:-len(".lock")]).exists():
            with contextlib.suppress(OSError):
                fd = os.open(parent / n, os.O_RDWR | os.O_CLOEXEC)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    (parent / n).unlink()
                except BlockingIOError:
                    pass
                finally:
                    os.close(fd)
    return gone


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


def check_entry_command(command: Sequence[str], staged: Path, sandbox: SandboxConfig) -> None:
    """Refuse (SubmissionError, one line naming the argument) a command that names a
    path outside the staged submission and the interpreters and read-only paths the
    league allows: the fence of a league bot is its entry, never its command."""
    try:
        check_fence(command, str(staged), sandbox.interpreters, sandbox.read_only)
    except FenceError as e:
        raise SubmissionError(str(e)) from None
