"""The sandbox's settings and what it says: modes, warnings for limits this machine
cannot enforce, errors naming what is missing, check-bot under the sandbox, and the
example bots in it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

import referee.players.sandbox as sandbox_module
from referee.players.process import BotStartError, start_bot
from referee.players.sandbox import SandboxConfig, SandboxError, explain, resolve
from referee.tournament.config import TournamentConfigError, parse_config
from tests.players.sandbox.conftest import BOTS, need_sandbox
from tests.procs import scaled

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[3]


def _referee() -> str:
    found = shutil.which("referee", path=str(Path(sys.executable).parent))
    assert found is not None
    return found


def test_on_without_bubblewrap_is_refused_naming_the_fix(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    monkeypatch.setattr(sandbox_module, "probe", lambda: sandbox_module.Machine(
        None, sandbox_module._bwrap_problem(None), {}, {}))
    with pytest.raises(SandboxError, match=r"required \(--sandbox on\) but cannot be used: "
                       r"bubblewrap is not installed \(Debian/Ubuntu: apt-get install "
                       r"bubblewrap"):
        resolve(SandboxConfig(mode="on"))
    auto = resolve(SandboxConfig(mode="auto"))
    assert not auto.active
    assert len(auto.warnings) == 1
    assert "bots run WITHOUT a sandbox: bubblewrap is not installed" in auto.warnings[0]
    assert resolve(SandboxConfig(mode="off")).warnings == ()


def test_a_bubblewrap_that_cannot_start_is_named_with_its_error(tmp_path: Path) -> None:
    fake = tmp_path / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\n"
                    "exit 1\n")
    fake.chmod(0o755)
    why = sandbox_module._bwrap_problem(str(fake))
    assert why is not None and "No permissions to creating new namespace" in why


def test_limits_this_machine_cannot_enforce_are_named(monkeypatch: pytest.MonkeyPatch
                                                     ) -> None:
    real = sandbox_module.probe()
    if real.problem is not None:
        pytest.skip(real.problem)
    monkeypatch.setattr(sandbox_module, "probe", lambda: replace(
        real, cgroups={}, cgroup_problems={"memory": "not writable here",
                                            "pids": "not writable here",
                                            "cpuset": "not writable here"}))
    sb = resolve(SandboxConfig(mode="on"))
    assert sb.active
    text = "\n".join(sb.warnings)
    assert "the memory limit holds per process, not for a bot's whole tree" in text
    assert "the number of processes of a bot is NOT limited" in text
    assert "a bot can widen its CPU affinity" in text
    assert sb.limits["memory"] == "rlimit (per process)"


def test_sandbox_settings_in_a_tournament_file(tmp_path: Path) -> None:
    (tmp_path / "model.bin").write_bytes(b"x")
    raw = {"sandbox": {"mode": "on", "memory_mb": 512, "processes": 16, "scratch_mb": 8,
                       "read_only": ["model.bin"]},
           "tournament": {"seed": 1},
           "bots": [{"name": "a", "command": "python3 a.py", "sandbox": "off"},
                    {"name": "b", "builtin": "random"}]}
    cfg = parse_config(raw, base_dir=str(tmp_path))
    assert cfg.sandbox == SandboxConfig("on", 512, 16, 8, (str(tmp_path / "model.bin"),))
    assert cfg.bot("a").sandboxed is False
    assert cfg.to_dict()["sandbox"]["memory_mb"] == 512
    for bad, message in ((({"mode": "maybe"}), "sandbox.mode: must be one of auto, on, off"),
                         ({"scratch": 3}, "did you mean 'scratch_mb'"),
                         ({"read_only": ["nope"]}, "'nope' does not exist")):
        with pytest.raises(TournamentConfigError, match=message):
            parse_config({**raw, "sandbox": bad}, base_dir=str(tmp_path))


def test_an_interpreter_outside_usr_is_found_from_path(tmp_path: Path) -> None:
    """``python3`` as the organiser's PATH finds it (here a pyenv shim or a venv's)."""
    sb = need_sandbox(SandboxConfig(mode="on"))
    log = tmp_path / "err.log"
    proc = start_bot(["python3", "-c", "import sys; print(sys.version, file=sys.stderr)"],
                     cwd=str(tmp_path), sandbox=sb, stderr_path=str(log))
    try:
        assert proc.wait(scaled(20)) == 0, log.read_text()
    finally:
        proc.end()
    assert "3." in log.read_text()


def test_check_bot_says_in_words_what_the_sandbox_stopped(tmp_path: Path) -> None:
    need_sandbox(SandboxConfig(mode="on"))
    model = tmp_path / "models" / "net.bin"
    model.parent.mkdir()
    model.write_bytes(b"weights")
    done = subprocess.run([_referee(), "check-bot", "--sandbox", "on", "--startup", "10", "--",
                           sys.executable, str(BOTS / "needs_model.py"), str(model)],
                          capture_output=True, text=True, timeout=scaled(120))
    assert done.returncode == 1
    assert "sandbox: bubblewrap; memory 1024 MB (cgroup)" in done.stdout
    assert (f"sandbox: the bot tried to use {model}, which the sandbox does not show (add it "
            f"to [sandbox] read_only, or --allow-read") in done.stdout
    # With the file listed as readable, it passes.
    (tmp_path / "league.toml").write_text(
        '[sandbox]\nread_only = ["models/net.bin"]\n[[bots]]\nname = "a"\nbuiltin = "random"\n'
        '[[bots]]\nname = "b"\nbuiltin = "random"\n')
    done = subprocess.run([_referee(), "check-bot", "--config", str(tmp_path / "league.toml"),
                           "--sandbox", "on", "--", sys.executable,
                           str(BOTS / "needs_model.py"), str(model)],
                          capture_output=True, text=True, timeout=scaled(180))
    assert done.returncode == 0, done.stdout[-3000:]


def test_explain_names_each_cause_once() -> None:
    cfg = SandboxConfig(memory_mb=512, scratch_mb=8, processes=16)
    lines = ["OSError: [Errno 30] Read-only file system: 'out.txt'",
             "OSError: [Errno 28] No space left on device",
             "MemoryError", "MemoryError",
             "BlockingIOError: [Errno 11] Resource temporarily unavailable (fork)",
             f"Error: ENOENT: no such file or directory, open '{__file__}'",
             "FileNotFoundError: [Errno 2] No such file or directory: '/nonexistent/x'"]
    said = explain(lines, cfg)
    assert said == [
        "tried to write outside its scratch: only /tmp (and $HOME, /tmp/home) is writable "
        "in the sandbox; its folder and the system are read-only",
        "filled its scratch: /tmp holds at most 8 MB ([sandbox] scratch_mb)",
        "ran out of memory under the 512 MB limit ([sandbox] memory_mb, --memory-mb)",
        "could not start another process or thread: the limit is 16 ([sandbox] processes)",
        f"tried to use {__file__}, which the sandbox does not show (add it to "
        "[sandbox] read_only, or --allow-read, if the bot needs it, or keep it in the bot's "
        "folder)"]


@pytest.mark.parametrize("bot", [["example:python-heuristic"], ["example:js"],
                                 ["--transport", "zmq", "--",
                                  sys.executable, str(REPO / "example_bots" / "python" /
                                                      "random_bot.py")]])
def test_the_example_bots_pass_check_bot_in_the_sandbox(bot: list[str]) -> None:
    need_sandbox(SandboxConfig(mode="on"))
    if bot == ["example:js"] and shutil.which("node") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI needs Node.js for the JavaScript example bot")
        pytest.skip("no Node.js")
    args = bot if bot[0].startswith("-") else ["--", *_example(bot[0])]
    done = subprocess.run([_referee(), "check-bot", "--sandbox", "on", *args],
                          capture_output=True, text=True, timeout=scaled(240))
    assert done.returncode == 0, done.stdout[-3000:]
    assert "PASSED" in done.stdout and "sandbox: bubblewrap" in done.stdout


def _example(name: str) -> list[str]:
    if name == "example:js":
        return ["node", str(REPO / "example_bots" / "js" / "bot.js")]
    return [sys.executable, str(REPO / "example_bots" / "python" / "heuristic_bot.py")]


def test_a_bots_cgroup_is_removed_when_it_ends(tmp_path: Path) -> None:
    sb = need_sandbox(SandboxConfig(mode="on"))
    proc = start_bot([sys.executable, "-c", "import os; os.fork(); import time; time.sleep(30)"],
                     cwd=str(tmp_path), sandbox=sb)
    assert proc.cgroup is not None
    dirs = [d for _, d in proc.cgroup.dirs.values()]
    assert all(os.path.isdir(d) for d in dirs)
    deadline = time.monotonic() + scaled(10)
    while len(proc.cgroup.pids()) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)  # the sandbox's init (bwrap), the bot and its child
    assert len(proc.cgroup.pids()) >= 3
    proc.end()
    assert not any(os.path.exists(d) for d in dirs)


def _alive_with(marker: str) -> list[int]:
    """Processes whose command line holds ``marker``."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    out.append(int(pid))
        except OSError:
            continue
    return out


def test_a_bot_whose_cgroup_cannot_be_joined_never_runs(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # bubblewrap holds the sandbox until the referee has put it in its cgroup; if that
    # fails, the sandbox is killed there and then -- never let go without its limits.
    sb = need_sandbox(SandboxConfig(mode="on"))
    marker = f"never-let-go-{os.getpid()}"
    monkeypatch.setattr(sandbox_module.Cgroup, "procs_files",
                        property(lambda self: [str(tmp_path / "gone" / "cgroup.procs")]))
    with pytest.raises(BotStartError, match=r"cannot put the bot in its cgroup .*gone"):
        start_bot([sys.executable, "-c", "import time; time.sleep(60)", marker],
                  cwd=str(tmp_path), sandbox=sb)
    deadline = time.monotonic() + scaled(10)
    while _alive_with(marker) and time.monotonic() < deadline:
        time.sleep(0.01)  # SIGKILLed: gone once reaped
    assert _alive_with(marker) == []
