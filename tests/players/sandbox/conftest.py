"""Fixtures of the sandbox tests: a sandbox that must be real (bubblewrap and this
machine's cgroups), and attacking bots started in it."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from referee.game import GameConfig
from referee.play.runner import GameRecord, TimeControl, run_game
from referee.players.external import ExternalPlayer, external_player
from referee.players.sandbox import Sandbox, SandboxConfig, SandboxError, resolve

BOTS = Path(__file__).resolve().parents[1] / "bots"
TC = TimeControl(startup=20.0, per_decision=5.0, bank=20.0)


def need_sandbox(config: SandboxConfig) -> Sandbox:
    """The sandbox ``config`` gives here, every limit enforced; outside CI a machine
    without bubblewrap or cgroups skips the test, in CI (CI=true) it fails."""
    try:
        sb = resolve(config)
    except SandboxError as e:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI needs the sandbox: {e}")
        pytest.skip(str(e))
    if sb.warnings:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI needs every sandbox limit: {sb.warnings}")
        pytest.skip("; ".join(sb.warnings))
    return sb


@pytest.fixture
def sandbox(tmp_path: Path) -> Sandbox:
    """The default sandbox, hiding the test's ``secret`` folder."""
    secret = tmp_path / "secret"
    secret.mkdir()
    return need_sandbox(SandboxConfig(mode="on")).hide(str(secret))


class Attack:
    """Runs attacking bots in a sandbox and reads what they said."""

    def __init__(self, tmp_path: Path, sandbox: Sandbox) -> None:
        self.tmp = tmp_path
        self.sandbox = sandbox
        self.logs = tmp_path / "logs"
        self.players: list[ExternalPlayer] = []

    def bot(self, script: str, env: dict[str, str] | None = None, *, name: str | None = None,
            memory_mb: int | None = None, sandbox: Sandbox | None = None) -> ExternalPlayer:
        sb = sandbox or self.sandbox
        p = external_player(name or script.removesuffix(".py"),
                            [sys.executable, str(BOTS / script)], None, env, TC,
                            memory_mb or sb.config.memory_mb, str(self.logs), sandbox=sb)
        self.players.append(p)
        return p

    def play(self, players: list[Any], seed: int = 1, **kw: Any) -> GameRecord:
        return run_game(GameConfig(players=len(players)), seed, players, time_control=TC, **kw)

    def said(self, name: str) -> list[str]:
        """The ATTACK lines of a bot's stderr log."""
        path = self.logs / f"{name}.stderr.log"
        text = path.read_text(errors="replace") if path.exists() else ""
        return [line for line in text.splitlines() if line.startswith("ATTACK ")]

    def close(self) -> None:
        for p in self.players:
            p.close()


@pytest.fixture
def attack(tmp_path: Path, sandbox: Sandbox) -> Iterator[Attack]:
    a = Attack(tmp_path, sandbox)
    try:
        yield a
    finally:
        a.close()
