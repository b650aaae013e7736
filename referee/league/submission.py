"""Taking a submitted bot into a league: an untrusted folder or archive (``.tar``,
``.tar.gz``, ``.tgz``, ``.zip``) copied into a staging folder inside the league,
checked entry by entry, and identified by its content hash.

The unpacking, and what it refuses, is ``archive.py``'s (every byte charged against
the league's ``[limits]`` before it is read).  Nothing is written outside the
staging folder, and a refused or interrupted submission removes it (``stage`` cleans
up on any exception, KeyboardInterrupt included).

Owns no database and runs no bot.  Imports nothing of the referee but the limits.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ..errors import InputError
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
    root = Path(tempfile.mkdtemp(prefix=".incoming-", dir=staging_parent))
    try:
        try:
            unpack(source, root, limits)
        except ArchiveError as e:
            raise SubmissionError(str(e)) from None
        yield root
    finally:
        if root.exists():
            make_writable(root)
            shutil.rmtree(root, ignore_errors=True)


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
