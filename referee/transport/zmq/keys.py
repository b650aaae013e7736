"""CURVE keys for remote ZeroMQ bots: making, writing and reading them.

Owns the key files that ``referee keys`` (``referee.cli.keys``) writes.  A keypair is
two files in ZeroMQ's certificate format (ZPL, as czmq's ``zcert`` and pyzmq's
``zmq.auth.load_certificate`` read them): ``NAME.key`` holds the public key and may
be handed around; ``NAME.key_secret`` holds both keys, is written mode 0600, and
stays with its owner.  Keys inside are z85 text (40 characters for 32 bytes).

* The referee's server keypair (``referee keys server``): the referee keeps
  ``referee.key_secret``; every remote bot author gets ``referee.key``.
* One keypair per remote bot (``referee keys new NAME``): the author keeps
  ``NAME.key_secret``; the tournament organiser keeps ``NAME.key`` in the
  directory of allowed bots (``load_allowed_keys``) -- the file's stem is the name
  the bot must give in its hello.

protocol/ZEROMQ.md walks bot authors through it.  Must not import: the game engine,
the runner, the players, the command line.
"""

from __future__ import annotations

import datetime
import os
import re
from pathlib import Path

import zmq
import zmq.auth
from zmq.utils import z85

from ...errors import InputError

SERVER_NAME = "referee"
NAME_RE = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*\Z")


class KeyFileError(InputError, ValueError):
    """A key or key file that cannot be used; the message says why."""


def check_key(key: bytes | str, what: str = "key") -> bytes:
    """A z85 CURVE key (40 characters) as bytes; KeyFileError if it is not one."""
    raw = key.encode("ascii", "replace") if isinstance(key, str) else key
    raw = raw.strip()
    try:
        ok = len(raw) == 40 and len(z85.decode(raw)) == 32
    except (ValueError, KeyError, TypeError):
        ok = False
    if not ok:
        raise KeyFileError(f"{what} is not a z85 CURVE key (40 characters of ZeroMQ's z85 "
                        f"alphabet): {raw[:50]!r}")
    return raw


def _write(path: Path, banner: str, public: bytes, secret: bytes | None, mode: int) -> None:
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    lines = [f"#   ****  Generated on {now} by updown-referee  ****", banner, "",
             "metadata", "curve", f'    public-key = "{public.decode()}"']
    if secret is not None:
        lines.append(f'    secret-key = "{secret.decode()}"')
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write("\n".join(lines) + "\n")
    os.chmod(path, mode)  # O_CREAT's mode does not apply to an existing file


def new_keypair(directory: str | os.PathLike[str], name: str, *,
                force: bool = False) -> tuple[Path, Path]:
    """Write ``NAME.key`` (public, 0644) and ``NAME.key_secret`` (0600) in
    ``directory`` (created if need be).  Refuses to overwrite unless ``force``."""
    if not NAME_RE.match(name):
        raise KeyFileError(f"{name!r} is not a usable name: letters, digits, '_', '.', '-', "
                        f"starting with a letter")
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    public_path, secret_path = out / f"{name}.key", out / f"{name}.key_secret"
    if not force:
        for p in (public_path, secret_path):
            if p.exists():
                raise KeyFileError(f"{p} exists already (use --force to replace the keypair; "
                                f"bots holding the old one will be refused)")
    public, secret = zmq.curve_keypair()
    _write(secret_path, "#   ZeroMQ CURVE **Secret** Certificate: keep it, share it with "
           "nobody.", public, secret, 0o600)
    _write(public_path, "#   ZeroMQ CURVE Public Certificate: hand it to the other side.",
           public, None, 0o644)
    return public_path, secret_path


def read_key_file(path: str | os.PathLike[str]) -> tuple[bytes, bytes | None]:
    try:
        public, secret = zmq.auth.load_certificate(path)
    except OSError as e:
        raise KeyFileError(f"cannot read key file {os.fspath(path)!r}: {e}") from None
    except ValueError as e:
        raise KeyFileError(f"{os.fspath(path)!r} is not a key file: {e}") from None
    return (check_key(public, f"the public key in {os.fspath(path)!r}"),
            None if secret is None else check_key(secret, f"the secret key in {path}"))


def load_public_key(source: str | os.PathLike[str]) -> bytes:
    """A public key from a key file (``.key`` or ``.key_secret``) or z85 text."""
    if isinstance(source, str) and not os.path.exists(source):
        return check_key(source, "the public key")
    return read_key_file(source)[0]


def load_secret_key(path: str | os.PathLike[str]) -> bytes:
    """The secret key of a ``.key_secret`` file."""
    _, secret = read_key_file(path)
    if secret is None:
        raise KeyFileError(f"{os.fspath(path)!r} holds no secret key (it is a public "
                        f"certificate; the secret one is NAME.key_secret)")
    return secret


def load_allowed_keys(directory: str | os.PathLike[str]) -> dict[str, bytes]:
    """The allowed bots: every ``NAME.key`` in ``directory`` (but the referee's own),
    as {NAME: public key}."""
    d = Path(directory)
    if not d.is_dir():
        raise KeyFileError(f"{d} is not a directory of bots' public keys (NAME.key files)")
    keys = {p.stem: read_key_file(p)[0] for p in sorted(d.glob("*.key")) if p.stem != SERVER_NAME}
    by_key: dict[bytes, str] = {}
    for name, key in keys.items():
        if key in by_key:
            raise KeyFileError(f"{name}.key and {by_key[key]}.key hold the same public key: "
                            f"the referee could not tell the two bots apart")
        by_key[key] = name
    return keys
