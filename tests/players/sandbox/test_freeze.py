"""A bot frozen between its turns (``[sandbox] freeze_between_turns``): a real
sandboxed bot that computes on the other seat's turns (tests/bots/attack_ponder.py)
takes no CPU there when frozen, and does when the setting is off; the game ends
normally either way.  The kernel says whether the bot is frozen (its cgroup's own
state) and how long its processes ran (their threads' ``schedstat``); the bot's own
count of its pondering loops, in its scratch, says whether it made progress."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from referee.bots import make_bot
from referee.game import Decision, GameConfig
from referee.play.runner import DecisionRequest, InProcessPlayer, run_game
from referee.players.external import FREEZE_LIMIT, ExternalPlayer, external_player
from referee.players.process import BotProcess
from referee.players.sandbox import Cgroup, Sandbox, SandboxConfig, probe
from tests.players.sandbox.conftest import BOTS, TC, need_sandbox
from tests.procs import scaled

pytestmark = pytest.mark.slow


def frozen_sandbox(freeze: bool) -> Sandbox:
    """The sandbox with the setting; on a machine without a freezer the test skips
    (outside CI: with CI=true it fails, as ``need_sandbox`` does)."""
    sb = need_sandbox(SandboxConfig(mode="on", freeze_between_turns=freeze))
    assert not freeze or sb.limits["freeze"] in ("cgroup.freeze", "freezer")
    return sb


def ran_ns(proc: BotProcess) -> int:
    """Nanoseconds every thread of the bot's processes has run so far."""
    total = 0
    for pid in proc.tree():
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    total += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                continue
    return total


def loops(proc: BotProcess) -> int:
    """How many loops the bot's pondering thread has made (it writes the count in its
    scratch every 1000: read through its root, /proc/PID/root/tmp/ponder)."""
    for pid in proc.tree():
        try:
            with open(f"/proc/{pid}/root/tmp/ponder", "rb") as f:
                return int(f.read() or b"0")
        except (OSError, ValueError):
            continue
    return 0


def wait_for(check: Callable[[], bool], timeout: float) -> bool:
    end = time.monotonic() + timeout
    while not check():
        if time.monotonic() > end:
            return False
        time.sleep(0.002)
    return True


def ponder(tmp_path: Path, sandbox: Sandbox) -> ExternalPlayer:
    return external_player("ponder", [sys.executable, str(BOTS / "attack_ponder.py")], None,
                           None, TC, sandbox.config.memory_mb, str(tmp_path / "logs"),
                           sandbox=sandbox)


def process(p: ExternalPlayer) -> BotProcess:
    assert p.conn is not None and p.conn.process is not None
    return p.conn.process


def test_a_frozen_bot_takes_no_cpu_on_the_opponents_turn(tmp_path: Path) -> None:
    """With the setting on, at each of the opponent's turns the bot's cgroup is frozen
    (the kernel says so) and its pondering thread makes not one loop in a window of
    that turn, though it spins whenever it can; after the game it is frozen too; the
    game ends normally, nobody faulted."""
    sandbox = frozen_sandbox(True)
    p = ponder(tmp_path, sandbox)
    windows = 0

    class Opponent(InProcessPlayer):
        def decide(self, request: DecisionRequest) -> Decision | str:
            nonlocal windows
            proc = process(p)
            assert proc.cgroup is not None
            assert wait_for(proc.cgroup.frozen_now, scaled(10)), "not frozen on its turn"
            # Frozen, no task of it returns to its own code: not one loop more in a
            # window of the opponent's turn (an absence is seen over a time; a busy
            # machine only gives the bot less CPU).  (Its threads' run time may still
            # grow by the kernel's last accounting as each parks: loops are exact.)
            before = loops(proc)
            end = time.monotonic() + 0.05
            while time.monotonic() < end:
                time.sleep(0.005)
            assert loops(proc) == before, "the frozen bot ran on the opponent's turn"
            windows += 1
            return super().decide(request)

    try:
        rec = run_game(GameConfig(players=2), 3, [p, Opponent(make_bot("lowest"))],
                       time_control=TC)
        cgroup = process(p).cgroup
        # Frozen between games too (thawed only while game_over was written).
        assert cgroup is not None and wait_for(cgroup.frozen_now, scaled(10))
    finally:
        p.close()
    assert rec.faults == [] and rec.result is not None
    assert windows == sum(1 for d in rec.decisions if d["seat"] == 1) > 0


def test_without_the_setting_the_bot_computes_on_the_opponents_turn(tmp_path: Path) -> None:
    """The control: the same bot, not frozen, runs during the opponent's turns (here
    waited for: 20 ms of its CPU in each of them), so the test above could fail."""
    sandbox = frozen_sandbox(False)
    p = ponder(tmp_path, sandbox)
    windows = 0

    class Opponent(InProcessPlayer):
        def decide(self, request: DecisionRequest) -> Decision | str:
            nonlocal windows
            proc = process(p)
            before = ran_ns(proc), loops(proc)
            assert wait_for(lambda: ran_ns(proc) > before[0] + 20_000_000 and
                            loops(proc) > before[1], scaled(30))
            windows += 1
            return super().decide(request)

    try:
        rec = run_game(GameConfig(players=2), 3, [p, Opponent(make_bot("lowest"))],
                       time_control=TC)
    finally:
        p.close()
    assert rec.faults == [] and rec.result is not None
    assert windows == sum(1 for d in rec.decisions if d["seat"] == 1) > 0


def test_the_freezer_is_found_where_the_sandbox_is() -> None:
    """Wherever the sandbox runs with every limit (CI: a Debian machine as root,
    cgroup v2), a freezer is found: cgroup v2's cgroup.freeze, else v1's freezer."""
    need_sandbox(SandboxConfig(mode="on"))
    machine = probe()
    if machine.freezer is None and os.environ.get("CI") != "true":
        pytest.skip(f"no freezer here: {machine.freezer_problem}")
    assert machine.freezer is not None, machine.freezer_problem


@pytest.mark.parametrize("transport", ["stdio", "zmq"])
def test_a_frozen_log_flooder_still_ends_its_game_with_its_logs_capped(
        tmp_path: Path, transport: str) -> None:
    """The log flooder (tests/bots/attack_flood.py) frozen between its turns: it can
    flood only in the moments between its reply and its freeze, and its capped logs
    are still read on its turns only (``TurnGate``): the game ends without a fault,
    each log within its cap, and the bot ends (thawed) at close."""
    cap = 32768
    sandbox = frozen_sandbox(True)
    flooder = external_player("flood", [sys.executable, str(BOTS / "attack_flood.py")], None,
                              None, TC, sandbox.config.memory_mb, str(tmp_path / "logs"),
                              sandbox=sandbox, stderr_cap=cap, transport=transport)
    try:
        rec = run_game(GameConfig(players=2), 3, [flooder, InProcessPlayer(make_bot("lowest"))],
                       time_control=TC)
        proc = process(flooder)
    finally:
        flooder.close()
    assert rec.faults == [] and rec.result is not None
    logs = [proc.stderr] + ([proc.stdout_log] if proc.stdout_log is not None else [])
    for log in logs:
        log.join(scaled(30))
        # What it writes in the moments before each freeze lands is read (or dropped
        # past the cap), never more than the cap kept.
        assert not log.thread.is_alive() and log.kept <= cap
        assert log.dropped == 0 or log.kept == cap
    assert proc.returncode is not None  # ended, though frozen between its turns


def test_the_v1_freezer_freezes_and_thaws_too(tmp_path: Path) -> None:
    """Where cgroup v2 cannot be written, the v1 freezer hierarchy is used: its
    freezer.state freezes a process and thaws it, and a cgroup frozen when the bot
    ends is thawed to be ended (a frozen v1 task dies only once thawed)."""
    mounts = [line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()
              if line.split()[2] == "cgroup" and "freezer" in line.split()[3].split(",")]
    if not mounts or not os.access(mounts[0], os.W_OK):
        pytest.skip("no writable cgroup v1 freezer hierarchy here (cgroup v2 machines use "
                    "cgroup.freeze: the tests above)")
    cg = Cgroup.create({"freezer": ("1", mounts[0])}, SandboxConfig())
    assert cg is not None and cg.freezes
    proc = subprocess.Popen(["sleep", "60"])
    try:
        Path(cg.procs_files[0]).write_text(str(proc.pid))
        cg.freeze(True)
        assert wait_for(cg.frozen_now, scaled(10))
        cg.freeze(False)
        assert wait_for(lambda: not cg.frozen_now(), scaled(10))
        cg.freeze(True)
        assert wait_for(cg.frozen_now, scaled(10))
        cg.kill_all()  # thaws first: the kill lands
        assert proc.wait(scaled(10)) == -9
    finally:
        proc.kill()
        proc.wait()
        cg.remove()
    assert not Path(cg.dirs["freezer"][1]).exists()


def kernel_calls(proc: BotProcess) -> int:
    """How many madvise calls tests/bots/attack_kernel.py's child has completed (its
    count in its scratch, read through its root)."""
    calls = 0
    for pid in proc.tree():
        try:
            with open(f"/proc/{pid}/root/tmp/kernel", "rb") as f:
                calls = max(calls, int(f.read() or b"0"))
        except (OSError, ValueError):
            continue
    return calls


def test_a_bot_busy_in_the_kernel_is_frozen_before_anyone_else_is_asked(tmp_path: Path) -> None:
    """tests/bots/attack_kernel.py: a child loops on madvise(MADV_POPULATE_READ), each
    call up to a second in the kernel, where a freezer cannot stop it.  Whenever the
    opponent is asked (its clock starts), the attacker is frozen already -- the kernel
    says so, no wait -- or it was faulted for using too much CPU before it froze and
    its process ended ("could not be frozen"); the attack was live: its child did
    work between turns, or, on a machine too busy for it to (its thawed turns are
    short), does once thawed after the game."""
    sandbox = frozen_sandbox(True)
    p = external_player("kernel", [sys.executable, str(BOTS / "attack_kernel.py")], None,
                        None, TC, sandbox.config.memory_mb, str(tmp_path / "logs"),
                        sandbox=sandbox)
    turns = running = calls = 0

    class Victim(InProcessPlayer):
        def decide(self, request: DecisionRequest) -> Decision | str:
            nonlocal turns, running, calls
            conn = p.conn
            if conn is not None and conn.process is not None and not p.dead:
                proc = conn.process
                assert proc.cgroup is not None
                running += not proc.cgroup.frozen_now()  # the victim's clock runs now
                calls = max(calls, kernel_calls(proc))
                turns += 1
            return super().decide(request)

    try:
        rec = run_game(GameConfig(players=2), 3, [p, Victim(make_bot("lowest"))],
                       time_control=TC)
        faults = [f for f in rec.faults if f.seat == 0]
        if not faults and calls == 0:  # the attack made no progress in the game: is it one?
            proc = process(p)
            proc.freeze(False)
            assert wait_for(lambda: kernel_calls(proc) > 0, scaled(30.0))
            calls = kernel_calls(proc)
    finally:
        p.close()
    assert rec.result is not None
    assert running == 0, f"the attacker still ran at {running} of the victim's {turns} turns"
    assert all("kept running" in f.detail and "could not be frozen within" in f.detail
               for f in faults), [f.detail for f in faults]
    assert all(f.seat == 0 for f in rec.faults)
    # The attack was live: either it was caught, or the child's calls ran.
    assert faults or calls > 0
    assert turns > 0 or faults


def test_a_bot_is_frozen_from_its_welcome_until_its_first_game(tmp_path: Path) -> None:
    """Its start-up ends with its hello: once started (``prepare``), before any game,
    the pondering bot is frozen -- the kernel says so, no wait -- and makes not one
    loop while it waits for its first game."""
    sandbox = frozen_sandbox(True)
    p = ponder(tmp_path, sandbox)
    try:
        p.prepare()
        proc = process(p)
        assert proc.cgroup is not None and proc.cgroup.frozen_now()
        before = loops(proc)
        end = time.monotonic() + 0.05
        while time.monotonic() < end:
            time.sleep(0.005)
        assert loops(proc) == before
    finally:
        p.close()


def _tasks(pids: Iterable[int]) -> list[str]:
    """Every thread of ``pids``, as /proc/PID/task/TID paths."""
    out = []
    for pid in pids:
        with contextlib.suppress(OSError):
            out += [f"/proc/{pid}/task/{tid}" for tid in os.listdir(f"/proc/{pid}/task")]
    return out


def _asleep_outside_the_freezer(task: str) -> bool:
    """The thread sleeps (state S), and not in the freezer's trap (cgroup v1's
    ``__refrigerator``, v2's ``do_freezer_trap``)."""
    try:
        with open(f"{task}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        with open(f"{task}/wchan") as f:
            wchan = f.read().strip()
    except OSError:
        return True  # gone: nothing left to freeze
    return state == "S" and wchan not in ("__refrigerator", "do_freezer_trap")


#: A real-time busy loop on one CPU for a while (the CPU is the first argument, the
#: seconds the second); it says "go" once it runs there.  The fair scheduler's tasks
#: on that CPU get little or nothing of it meanwhile.
RT_SPINNER = """
import os, sys, time
os.sched_setaffinity(0, {int(sys.argv[1])})
os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(1))
sys.stdout.write("go\\n")
sys.stdout.flush()
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    pass
"""


def test_an_honest_bot_slow_to_freeze_for_want_of_a_cpu_is_not_faulted(
        tmp_path: Path) -> None:
    """A busy machine, not the bot, makes a freeze slow: an honest bot waiting in
    read() for its next request is frozen only once its task runs to reach the
    freezer's trap.  Here its one CPU is taken by a real-time busy loop for 1 s (the
    referee runs on another): freezing it takes longer than ``FREEZE_LIMIT`` of wall
    time while it uses no CPU.  It is waited for and frozen -- no fault, not ended
    -- and the wait is its own time (``freeze_wait``); as before the limit was one
    of CPU, it would have been ended ("could not be frozen within 250 ms")."""
    sandbox = frozen_sandbox(True)
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        if os.environ.get("CI") == "true":
            pytest.fail("CI needs 2 CPUs for this test")
        pytest.skip("one CPU: the referee would starve with the bot")
    bot_cpu, own_cpu = cpus[-1], cpus[0]
    p = external_player("honest", [sys.executable, str(BOTS / "first.py")], None, None, TC,
                        sandbox.config.memory_mb, str(tmp_path / "logs"), sandbox=sandbox)
    spinner: subprocess.Popen[str] | None = None
    try:
        p.prepare()  # (its cpuset: the CPUs the referee may use)
        os.sched_setaffinity(0, {own_cpu})
        proc = process(p)
        assert proc.cgroup is not None and proc.cgroup.frozen_now()
        # The scenario is attempted up to 5 times: a starved fair task is not starved
        # for sure (Linux 6.12's fair server runs it 50 ms a second even under a
        # real-time loop, sometimes at once: CI saw a freeze of 0.9 ms, the soak one of
        # 22 us).  Every attempt must end without a fault; one must be slow to freeze.
        waits: list[float] = []
        for _ in range(5):
            proc.freeze(False)  # its turn: thawed; it waits in read() for a request
            assert wait_for(lambda: not proc.cgroup.frozen_now(), scaled(5.0))  # type: ignore[union-attr]
            # Thawed is the cgroup's state at once, but each task must run to leave
            # the freezer's trap (refreezing one still in it is instant): wait until
            # every task is asleep elsewhere (back in its read()).
            assert wait_for(lambda: all(_asleep_outside_the_freezer(tid)
                                        for tid in _tasks(proc.tree())), scaled(10.0))
            for pid in proc.tree():
                for tid in os.listdir(f"/proc/{pid}/task"):
                    os.sched_setaffinity(int(tid), {bot_cpu})
            spinner = subprocess.Popen([sys.executable, "-c", RT_SPINNER, str(bot_cpu), "1.0"],
                                       stdout=subprocess.PIPE, text=True)
            assert spinner.stdout is not None and spinner.stdout.readline() == "go\n"
            used = proc.cgroup.cpu_ns()  # type: ignore[union-attr]
            fault = p._hold()  # its turn is over: frozen, as after each of its decisions
            assert fault is None, fault.detail
            assert proc.cgroup.frozen_now()  # type: ignore[union-attr]
            assert not p.dead
            after = proc.cgroup.cpu_ns()  # type: ignore[union-attr]
            assert used is not None and after is not None and after - used < FREEZE_LIMIT * 1e9
            waits.append(p.freeze_wait)
            spinner.kill()
            spinner.wait()
            spinner = None
            if p.freeze_wait > FREEZE_LIMIT:
                break
        # The scenario held: a freeze took longer than the CPU limit, in wall time.
        assert max(waits) > FREEZE_LIMIT, waits
    finally:
        if spinner is not None:
            spinner.kill()
            spinner.wait()
        os.sched_setaffinity(0, cpus)
        p.close()
