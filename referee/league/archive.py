"""Archives as hostile input: unpacking a submitted folder, ``.tar``, ``.tar.gz``,
``.tgz`` or ``.zip`` into a staging folder, every byte charged against the league's
``[limits]`` *before* it is read.

* Tar: our own streaming reader of the tar format (POSIX ustar, pax ``x``/``g``
  records, GNU long names ``L``/``K``) over zlib's incremental gzip decompressor.
  A header is one 512-byte block of fixed fields; a long name or a pax record
  declares its size first, and a size over the filesystem's ``PATH_MAX`` (a name)
  or ``PAX_MAX`` (a pax record) is refused *without reading it*.  Why not
  ``tarfile``: it reads a long name or a pax record whole into memory before a
  caller can see its size (a 255 KB upload declaring a 1 GB name), skips the data of
  members it does not extract by decompressing it, and its errors carry the name
  whole.  Why not ``libarchive-c``: a C library's parser is another attack surface
  and another dependency, and it would need the same budget around it.  The
  reader stops at the first zero block (nothing after the end of an archive is
  read), and reads nothing it does not charge.
* Zip: ``zipfile``, behind a check of the end-of-central-directory record (the
  directory's size and member count, read as ``zipfile`` itself reads them) before
  ``zipfile`` parses it; a link target is read only up to ``PATH_MAX`` bytes.
* A folder (``league submit`` of a local folder): walked without recursion.

Every member is charged before anything is written: one of ``max_files`` for each
file, folder, link, and ``.``; its bytes (a file's content, a link's target) against
``max_bytes``; its depth against ``max_depth``.  Names are checked once each, in a
table of what the archive made so far (linear in the archive: no walk of the disk
per member).  A refusal is one line naming the member (quoted, shortened) and the
limit; it never holds a path of the organiser's machine.

Owns no database and runs no bot.  Imports nothing of the referee but the limits.
"""

from __future__ import annotations

import os
import stat
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import IO, Any, Protocol

from ..errors import InputError
from .config import Limits

CHUNK = 1 << 16
BLOCK = 512
#: The longest pax extended-header record set the reader takes (a path, a link
#: target, and a few numbers).
PAX_MAX = 3 * 4096
#: Extended-header records (``L``, ``K``, ``x``, ``g``) one member may carry.
MAX_EXTENDED = 4
ARCHIVES = (".tar", ".tar.gz", ".tgz", ".zip")


class Readable(Protocol):
    def read(self, n: int = ..., /) -> bytes: ...


class ArchiveError(InputError):
    """A submission that cannot be unpacked: one line naming the member and the limit."""


def shown(name: str | bytes, width: int = 80) -> str:
    """A member's name as a message may hold it: quoted (control characters
    escaped) and shortened."""
    if isinstance(name, bytes):
        name = name.decode("utf-8", "backslashreplace")
    if len(name) > width:
        return repr(name[:width]) + f"... ({len(name)} characters)"
    return repr(name)


def fs_limits(folder: Path) -> tuple[int, int]:
    """(NAME_MAX, PATH_MAX) of the filesystem holding ``folder``."""
    try:
        return os.pathconf(folder, "PC_NAME_MAX"), os.pathconf(folder, "PC_PATH_MAX")
    except (OSError, ValueError):
        return 255, 4096


class Sink:
    """The staging folder, and the budget: every member is charged, then made."""

    def __init__(self, root: Path, limits: Limits) -> None:
        self.root = root
        self.limits = limits
        self.name_max, self.path_max = fs_limits(root)
        self.bytes = 0
        self.files = 0
        self.kinds: dict[PurePosixPath, str] = {PurePosixPath("."): "dir"}

    # --- charging -----------------------------------------------------------------

    def entry(self, name: str) -> None:
        self.files += 1
        if self.files > self.limits.max_files:
            raise ArchiveError(f"more than {self.limits.max_files} files, folders and links "
                               f"(stopped at {shown(name)}; [limits] max_files)")

    def charge(self, n: int, name: str) -> None:
        """``n`` more bytes, before they are read."""
        self.bytes += n
        if self.bytes > self.limits.max_bytes:
            raise ArchiveError(f"the submission is bigger than {self.limits.max_bytes} bytes "
                               f"unpacked (stopped in {shown(name)}; [limits] max_bytes)")

    def charge_file(self, size: int, name: str) -> None:
        if size > self.limits.max_file_bytes:
            raise ArchiveError(f"{shown(name)} is bigger than {self.limits.max_file_bytes} "
                               "bytes ([limits] max_file_bytes)")
        self.charge(size, name)

    def clean(self, name: str) -> PurePosixPath:
        """A member's path, refused if it is too long, too deep, absolute, climbs
        out or holds a NUL."""
        if "\0" in name:
            raise ArchiveError(f"{shown(name)} holds a NUL character: not a file name")
        if len(name.encode("utf-8", "surrogateescape")) > self.path_max:
            raise ArchiveError(f"{shown(name)} is a name longer than {self.path_max} bytes "
                               "(PATH_MAX)")
        unix = name.replace("\\", "/")
        if unix.startswith("/") or (len(name) > 1 and name[1] == ":"):
            raise ArchiveError(f"{shown(name)} is an absolute path: every path in a submission "
                               "must be relative to its top folder")
        parts = [x for x in unix.split("/") if x not in ("", ".")]
        if ".." in parts:
            raise ArchiveError(f"{shown(name)} climbs out of the submission ('..'): every path "
                               "must stay inside it")
        for x in parts:
            if len(x.encode("utf-8", "surrogateescape")) > self.name_max:
                raise ArchiveError(f"{shown(name)} has a part longer than {self.name_max} bytes "
                                   "(NAME_MAX)")
        if len(parts) > self.limits.max_depth:
            raise ArchiveError(f"{shown(name)} is more than {self.limits.max_depth} folders "
                               "deep ([limits] max_depth)")
        return PurePosixPath(*parts) if parts else PurePosixPath(".")

    # --- making -------------------------------------------------------------------

    def _fresh(self, rel: PurePosixPath, name: str) -> Path:
        """The place of a new member: not made before, under folders only (made here
        if the archive did not list them; each at most once)."""
        if rel in self.kinds:
            raise ArchiveError(f"the submission holds {shown(name)} twice")
        missing = []
        p = rel.parent
        while p not in self.kinds:
            missing.append(p)
            p = p.parent
        if self.kinds[p] != "dir":
            raise ArchiveError(f"{shown(name)} lies under "
                               + ("a symbolic link" if self.kinds[p] == "link" else "a file")
                               + f" ({shown(str(p))})")
        for m in reversed(missing):
            self.entry(str(m))
            self._do(os.mkdir, self.root.joinpath(*m.parts), name)
            self.kinds[m] = "dir"
        return self.root.joinpath(*rel.parts)

    def _do(self, action: Callable[..., Any], *args: Any) -> Any:
        name = args[-1]
        try:
            return action(*args[:-1])
        except OSError as e:  # e's text would name the staging folder: not shown
            raise ArchiveError(f"cannot unpack {shown(name)}: {e.strerror or 'failed'}") from None

    def folder(self, name: str) -> None:
        rel = self.clean(name)
        self.entry(name)
        if self.kinds.get(rel) == "dir":
            return  # a folder listed twice (or '.'), charged again
        dest = self._fresh(rel, name)
        self._do(os.mkdir, dest, name)
        self.kinds[rel] = "dir"

    def link(self, name: str, target: str) -> None:
        rel = self.clean(name)
        self.entry(name)
        if str(rel) == ".":
            raise ArchiveError(f"{shown(name)} is a link in place of the submission's top "
                               "folder")
        if not target:
            raise ArchiveError(f"{shown(name)} is a symbolic link to nothing (an empty target)")
        if "\0" in target:
            raise ArchiveError(f"{shown(name)} is a symbolic link to a name holding a NUL "
                               "character")
        if len(target.encode("utf-8", "surrogateescape")) > self.path_max:
            raise ArchiveError(f"{shown(name)} is a symbolic link to a name longer than "
                               f"{self.path_max} bytes (PATH_MAX)")
        self.charge(len(target), name)
        _link_ok(rel, target, name)
        dest = self._fresh(rel, name)
        self._do(os.symlink, target, dest, name)
        self.kinds[rel] = "link"

    def file(self, name: str, size: int | None, src: Readable, executable: bool) -> None:
        """A file of ``size`` bytes (if the archive says; charged before it is read),
        copied from ``src`` and stopped at a limit whatever it said."""
        rel = self.clean(name)
        self.entry(name)
        if str(rel) == ".":
            raise ArchiveError(f"{shown(name)} is a file in place of the submission's top "
                               "folder")
        if size is not None:
            self.charge_file(size, name)
        dest = self._fresh(rel, name)
        fd = self._do(os.open, dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW,
                      0o755 if executable else 0o644, name)
        self.kinds[rel] = "file"
        written = 0
        with os.fdopen(fd, "wb") as out:
            while chunk := src.read(CHUNK):
                written += len(chunk)
                if size is None:
                    if written > self.limits.max_file_bytes:
                        self.charge_file(written, name)  # refused
                    self.charge(len(chunk), name)
                elif written > size:
                    raise ArchiveError(f"{shown(name)} holds more than the {size} bytes it "
                                       "declares")
                self._do(out.write, chunk, name)
        if executable:
            self._do(os.chmod, dest, 0o755, name)

    def check_links(self) -> None:
        """After unpacking: every link resolves inside the submission (a chain of
        links cannot step out either)."""
        real_root = os.path.realpath(self.root)
        for rel, kind in self.kinds.items():
            if kind != "link":
                continue
            real = os.path.realpath(self.root.joinpath(*rel.parts))
            if not (real == real_root or real.startswith(real_root + os.sep)):
                raise ArchiveError(f"{shown(str(rel))} is a symbolic link that leads outside "
                                   "the submission: links may point only inside it")


def _link_ok(link: PurePosixPath, target: str, name: str) -> None:
    """A symbolic link may point only inside the submission (by its words; chains of
    links are checked on the disk, ``Sink.check_links``)."""
    depth = len(link.parent.parts) if str(link.parent) != "." else 0
    outside = target.startswith("/")
    for part in PurePosixPath(target).parts:
        depth = depth - 1 if part == ".." else depth if part == "." else depth + 1
        outside = outside or depth < 0
    if outside:
        raise ArchiveError(f"{shown(name)} is a symbolic link to {shown(target)}, outside the "
                           "submission: links may point only inside it")


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


# --- folders -----------------------------------------------------------------------


def from_folder(src: Path, sink: Sink) -> None:
    """A local folder, walked without recursion (links are not followed)."""
    stack = [(src, PurePosixPath("."))]
    while stack:
        here, rel_here = stack.pop()
        try:
            names = sorted(os.listdir(here))
        except OSError as e:
            raise ArchiveError(f"cannot read the folder {shown(str(rel_here))}: {e.strerror}"
                               ) from None
        for n in names:
            path = here / n
            rel = rel_here / n
            name = str(rel)
            st = os.lstat(path)
            if stat.S_ISLNK(st.st_mode):
                sink.link(name, os.readlink(path))
            elif stat.S_ISDIR(st.st_mode):
                sink.folder(name)
                stack.append((path, rel))
            elif stat.S_ISREG(st.st_mode):
                if st.st_nlink > 1:
                    raise ArchiveError(f"{shown(name)} is a hard link (it has {st.st_nlink} "
                                       "names): submit a copy of the file instead")
                with open(path, "rb") as f:
                    sink.file(name, st.st_size, f, bool(st.st_mode & 0o111))
            else:
                raise ArchiveError(f"{shown(name)} is {_kind(st.st_mode)}: a submission holds "
                                   "only files, folders and links inside it")


# --- tar ---------------------------------------------------------------------------


class _Inflated:
    """The bytes of a plain or gzip-compressed file, decompressed a bounded piece at
    a time (never more than asked for)."""

    def __init__(self, f: IO[bytes]) -> None:
        self.f = f
        magic = f.read(2)
        f.seek(0)
        self.z: Any = zlib.decompressobj(31) if magic == b"\x1f\x8b" else None
        self.pending = b""

    def more(self, want: int) -> bytes:
        """Up to ``want`` bytes; b"" at the end."""
        if self.z is None:
            return self.f.read(want)
        while True:
            if self.z.unconsumed_tail:
                data = self.z.unconsumed_tail
            elif self.z.eof:
                data = self.z.unused_data or self.f.read(CHUNK)
                if not data:
                    return b""
                self.z = zlib.decompressobj(31)  # the next gzip member
            else:
                data = self.f.read(CHUNK)
                if not data:
                    return b""
            try:
                out: bytes = self.z.decompress(data, want)
            except zlib.error as e:
                raise ArchiveError(f"the archive is not a readable gzip stream ({e})") from None
            if out:
                return out

    def exact(self, n: int, what: str) -> bytes:
        """``n`` bytes (small: a header), or ArchiveError if the archive ends first."""
        parts = []
        while n > 0:
            got = self.more(min(n, CHUNK))
            if not got:
                raise ArchiveError(f"the archive ends in the middle of {what}")
            parts.append(got)
            n -= len(got)
        return b"".join(parts)


class _Data:
    """A reader of one member's ``size`` bytes, then its padding."""

    def __init__(self, stream: _Inflated, size: int, name: str) -> None:
        self.stream, self.left, self.name = stream, size, name

    def read(self, n: int = CHUNK) -> bytes:
        if self.left <= 0:
            return b""
        got = self.stream.more(min(n, self.left))
        if not got:
            raise ArchiveError(f"the archive ends in the middle of {shown(self.name)}")
        self.left -= len(got)
        return got


def _number(field: bytes, what: str) -> int:
    if field[:1] and field[0] & 0x80:  # base-256 (GNU): big or negative
        if field[0] != 0x80:
            raise ArchiveError(f"a tar header with a negative or huge {what}")
        return int.from_bytes(field[1:], "big")
    text = field.split(b"\0", 1)[0].strip(b" ")
    try:
        return int(text, 8) if text else 0
    except ValueError:
        raise ArchiveError(f"not a tar archive (a header's {what} is not a number)") from None


def _text(field: bytes) -> str:
    return field.split(b"\0", 1)[0].decode("utf-8", "surrogateescape")


def _padded(size: int) -> int:
    return -size % BLOCK


def _pax(data: bytes) -> dict[str, str]:
    """The records of a pax extended header (``LEN key=value\\n`` each)."""
    out: dict[str, str] = {}
    pos = 0
    while pos < len(data) and data[pos] != 0:
        space = data.find(b" ", pos, pos + 12)
        try:
            length = int(data[pos:space]) if space > pos else 0
        except ValueError:
            length = 0
        end = pos + length
        if length <= 0 or end > len(data) or data[end - 1:end] != b"\n":
            raise ArchiveError("not a tar archive (a pax header record is malformed)")
        key, eq, value = data[space + 1:end - 1].partition(b"=")
        if not eq:
            raise ArchiveError("not a tar archive (a pax header record has no '=')")
        out[key.decode("utf-8", "surrogateescape")] = value.decode("utf-8", "surrogateescape")
        pos = end
    return out


def from_tar(src: Path, sink: Sink) -> None:
    with open(src, "rb") as f:
        stream = _Inflated(f)
        extended: dict[str, str] = {}
        records = 0
        index = 0
        while True:
            block = stream.more(BLOCK)
            if not block and not extended:
                return  # ended without its end marker: as tar itself, take it
            if len(block) < BLOCK:
                block += stream.exact(BLOCK - len(block), "a header")
            if block == bytes(BLOCK):
                return  # the end: nothing after it is read
            index += 1
            _checksum(block, index)
            kind = block[156:157]
            size = _number(block[124:136], "size")
            where = f"member {index}"
            if kind in (b"L", b"K", b"x", b"g"):
                records += 1
                if records > MAX_EXTENDED:
                    raise ArchiveError(f"{where} follows more than {MAX_EXTENDED} extended "
                                       "header records in a row")
                bound = sink.path_max + 1 if kind in (b"L", b"K") else PAX_MAX
                if size > bound:
                    what = "a GNU long name" if kind in (b"L", b"K") else "a pax header"
                    raise ArchiveError(f"{where} is {what} of {size} bytes, over the "
                                       f"{bound} this league reads "
                                       + ("(PATH_MAX)" if kind in (b"L", b"K") else ""))
                data = stream.exact(size + _padded(size), f"{where}'s header")[:size]
                if kind == b"L":
                    extended["path"] = _long(data)
                elif kind == b"K":
                    extended["linkpath"] = _long(data)
                elif kind == b"x":
                    extended.update(_pax(data))
                continue  # a global header ('g') changes nothing this reader uses
            records = 0
            name = extended.get("path") or _ustar_name(block)
            target = extended.get("linkpath") or _text(block[157:257])
            if "size" in extended:
                try:
                    size = int(extended["size"])
                except ValueError:
                    raise ArchiveError(f"{shown(name)} has a pax size that is no number"
                                       ) from None
            if any(k.startswith("GNU.sparse") for k in extended):
                kind = b"S"
            extended = {}
            mode = _number(block[100:108], "mode")
            _tar_member(stream, sink, kind, name, target, size, mode)


def _long(data: bytes) -> str:
    text = data.split(b"\0", 1)[0]
    if b"\0" in data.rstrip(b"\0"):
        raise ArchiveError("a GNU long name holds a NUL character: not a file name")
    return text.decode("utf-8", "surrogateescape")


def _ustar_name(block: bytes) -> str:
    name = _text(block[0:100])
    if block[257:263] == b"ustar\0":  # POSIX: a prefix (GNU's magic has other fields)
        prefix = _text(block[345:500])
        if prefix:
            name = prefix + "/" + name
    return name


def _checksum(block: bytes, index: int) -> None:
    want = _number(block[148:156], "checksum")
    unsigned = sum(block[:148]) + 8 * 32 + sum(block[156:])
    signed = unsigned - 2 * sum(b for b in block[:148] + block[156:] if b > 127)
    if want not in (unsigned, signed):
        raise ArchiveError(f"not a tar archive (member {index}'s header checksum is wrong)")


def _tar_member(stream: _Inflated, sink: Sink, kind: bytes, name: str, target: str,
                size: int, mode: int) -> None:
    if kind in (b"0", b"\0", b"7"):
        sink.file(name, size, _Data(stream, size, name), bool(mode & 0o111))
        stream.exact(_padded(size), f"{shown(name)}'s padding")
        return
    if size and kind != b"1":  # only a regular file (or a hard link's zero) has data
        raise ArchiveError(f"{shown(name)} is a {'folder' if kind == b'5' else 'member'} "
                           f"with {size} bytes of data: a submission holds only files, "
                           "folders and links")
    if kind == b"5":
        sink.folder(name)
    elif kind == b"2":
        sink.link(name, target)
    elif kind == b"1":
        raise ArchiveError(f"{shown(name)} is a hard link (to {shown(target)}): submit a "
                           "copy of the file instead")
    elif kind in (b"3", b"4"):
        raise ArchiveError(f"{shown(name)} is a device: a submission holds only files, "
                           "folders and links inside it")
    elif kind == b"6":
        raise ArchiveError(f"{shown(name)} is a FIFO (named pipe): a submission holds only "
                           "files, folders and links inside it")
    elif kind == b"S":
        raise ArchiveError(f"{shown(name)} is a sparse file: submit it as a plain file")
    else:
        raise ArchiveError(f"{shown(name)} is not a file, folder or link (tar type "
                           f"{kind!r})")


# --- zip ---------------------------------------------------------------------------


def _zip_directory(src: Path, sink: Sink) -> None:
    """Refuse a central directory bigger than ``max_files`` members could need,
    before ``zipfile`` reads it (as ``zipfile`` finds it: its own record reader)."""
    end_record: Callable[[IO[bytes]], Any] | None = getattr(zipfile, "_EndRecData", None)
    if end_record is None:
        return
    with open(src, "rb") as f:
        rec = end_record(f)
    if not rec:
        raise ArchiveError("not a readable zip archive (no end of central directory)")
    count, size = rec[4], rec[5]  # _ECD_ENTRIES_TOTAL, _ECD_SIZE
    most = sink.limits.max_files * (46 + 2 * sink.name_max) + 4096
    if count > sink.limits.max_files or size > most:
        raise ArchiveError(f"the zip archive lists {count} members in {size} bytes: more than "
                           f"{sink.limits.max_files} members could need ([limits] max_files)")


def from_zip(src: Path, sink: Sink) -> None:
    _zip_directory(src, sink)
    try:
        z = zipfile.ZipFile(src)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as e:
        raise ArchiveError(f"not a readable zip archive ({e})") from None
    with z:
        infos = z.infolist()
        if len(infos) > sink.limits.max_files:
            raise ArchiveError(f"the zip archive lists {len(infos)} members: more than "
                               f"{sink.limits.max_files} ([limits] max_files)")
        for info in infos:
            name = info.orig_filename
            mode = info.external_attr >> 16 if info.create_system == 3 else 0
            try:
                if info.is_dir():
                    sink.folder(name)
                elif stat.S_ISLNK(mode):
                    if info.file_size > sink.path_max:
                        raise ArchiveError(f"{shown(name)} is a symbolic link to a name of "
                                           f"{info.file_size} bytes, over {sink.path_max} "
                                           "(PATH_MAX)")
                    with z.open(info) as f:
                        raw = f.read(sink.path_max + 1)
                    if len(raw) > sink.path_max:
                        raise ArchiveError(f"{shown(name)} is a symbolic link to a name longer "
                                           f"than {sink.path_max} bytes (PATH_MAX)")
                    sink.link(name, raw.decode("utf-8", "surrogateescape"))
                elif stat.S_IFMT(mode) and not stat.S_ISREG(mode):
                    raise ArchiveError(f"{shown(name)} is {_kind(mode)}: a submission holds "
                                       "only files, folders and links inside it")
                else:
                    if info.file_size > sink.limits.max_file_bytes:
                        sink.charge_file(info.file_size, name)
                    with z.open(info) as f:
                        sink.file(name, None, f, bool(mode & 0o111))
            except ArchiveError:
                raise
            except (zipfile.BadZipFile, NotImplementedError, RuntimeError, ValueError,
                    EOFError, zlib.error, OSError) as e:
                raise ArchiveError(f"cannot unpack {shown(name)}: "
                                   f"{type(e).__name__}: {str(e)[:200]}") from None


# --- all ---------------------------------------------------------------------------


def is_archive(path: Path) -> bool:
    return path.is_file() and path.name.endswith(ARCHIVES)


def unpack(source: Path, root: Path, limits: Limits) -> None:
    """``source`` (a folder or an archive) into the empty folder ``root``, checked
    and charged member by member; ArchiveError (one line) on the first refusal."""
    sink = Sink(root, limits)
    if source.is_dir() and not source.is_symlink():
        from_folder(source, sink)
    elif source.is_file() and source.name.endswith(".zip"):
        from_zip(source, sink)
    elif source.is_file() and source.name.endswith((".tar", ".tar.gz", ".tgz")):
        try:
            from_tar(source, sink)
        except OSError as e:
            raise ArchiveError(f"cannot read the archive: {e.strerror}") from None
    else:
        raise ArchiveError(f"neither a folder nor an archive ({', '.join(ARCHIVES)})")
    sink.check_links()
