"""``referee keys``: keypair files, their permissions, and loading them back."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
import zmq
import zmq.auth
from click.testing import CliRunner
from referee.cli.keys import keys

from referee.transport.zmq.keys import (
    KeyFileError,
    check_key,
    load_allowed_keys,
    load_public_key,
    load_secret_key,
    new_keypair,
)

pytestmark = pytest.mark.slow


def test_new_keypair_files(tmp_path: Path) -> None:
    public_path, secret_path = new_keypair(tmp_path / "k", "alice")
    assert stat.S_IMODE(secret_path.stat().st_mode) == 0o600
    public = load_public_key(public_path)
    secret = load_secret_key(secret_path)
    assert zmq.curve_public(secret) == public
    # Readable by pyzmq's own certificate loader (the czmq format).
    assert zmq.auth.load_certificate(secret_path) == (public, secret)
    assert "secret" not in public_path.read_text().replace("Secret", "")
    with pytest.raises(KeyFileError, match="exists already"):
        new_keypair(tmp_path / "k", "alice")
    new_keypair(tmp_path / "k", "alice", force=True)
    assert load_public_key(public_path) != public
    with pytest.raises(KeyFileError, match="not a usable name"):
        new_keypair(tmp_path, "../x")
    with pytest.raises(KeyFileError, match="holds no secret key"):
        load_secret_key(public_path)


def test_allowed_keys_directory(tmp_path: Path) -> None:
    for name in ("alice", "bob", "referee"):
        new_keypair(tmp_path, name)
    allowed = load_allowed_keys(tmp_path)
    assert sorted(allowed) == ["alice", "bob"]  # the referee's own key is not a bot
    (tmp_path / "carol.key").write_text((tmp_path / "alice.key").read_text())
    with pytest.raises(KeyFileError, match="same public key"):
        load_allowed_keys(tmp_path)


def test_check_key() -> None:
    public, _ = zmq.curve_keypair()
    assert check_key(public.decode()) == public
    assert load_public_key(public.decode()) == public
    with pytest.raises(KeyFileError, match="not a z85 CURVE key"):
        check_key("too short")


def test_cli(tmp_path: Path) -> None:
    runner = CliRunner()
    out = str(tmp_path)
    r = runner.invoke(keys, ["new", "alice", "--out", out])
    assert r.exit_code == 0, r.output
    assert "public key:" in r.output and "alice.key_secret" in r.output
    r = runner.invoke(keys, ["server", "--out", out])
    assert r.exit_code == 0, r.output
    r = runner.invoke(keys, ["new", "alice", "--out", out])
    assert r.exit_code != 0 and "exists already" in r.output
    r = runner.invoke(keys, ["show", str(tmp_path / "alice.key")])
    assert r.output.strip() == load_public_key(tmp_path / "alice.key").decode()
    r = runner.invoke(keys, ["env", str(tmp_path / "alice.key_secret"), "--server",
                             str(tmp_path / "referee.key"), "--endpoint", "tcp://h:5555"])
    assert r.exit_code == 0, r.output
    lines = dict(line.removeprefix("export ").split("=", 1) for line in r.output.splitlines())
    assert lines["UPDOWN_ENDPOINT"] == "'tcp://h:5555'"
    assert lines["UPDOWN_NAME"] == "'alice'"  # the key's name: the hello must carry it
    assert lines["UPDOWN_SECRET_KEY"].strip("'").encode() == \
        load_secret_key(tmp_path / "alice.key_secret")
