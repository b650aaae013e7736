"""Real bot processes over stdio, well-behaved and misbehaving (tests/bots/): each
fault is recorded with the right kind, the referee neither hangs nor crashes, and
no process a bot started is left running (the ``pidfile`` fixture checks)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from referee.game import GameConfig
from referee.play.runner import FaultPolicy, GameRecord, TimeControl, run_game
from referee.players.external import ExternalPlayer, stdio_player
from tests.players.conftest import bot_command, wait_gone
from tests.procs import scaled

pytestmark = pytest.mark.slow

# Generous enough that a well-behaved Python bot on a loaded 2-core machine answers in
# time; tests of silent bots use SHORT and count only the silent bot's faults.  Both
# scaled by REFEREE_TEST_TIME_FACTOR (tests/procs.py) on a machine busier still.
FAST = TimeControl(startup=scaled(5.0), per_decision=scaled(1.0), bank=0.0)
SHORT = TimeControl(startup=scaled(5.0), per_decision=scaled(0.3), bank=0.0)
S_SHORT = f"{SHORT.per_decision:.3f}s"
Pids = Callable[[], list[int]]


def bot(name: str, script: str, *args: str, tc: TimeControl = FAST, **kw: Any) -> ExternalPlayer:
    return stdio_player(name, bot_command(script, *args), time_control=tc, **kw)


def play(players: list[ExternalPlayer], seed: int = 1, tc: TimeControl = FAST,
         **kw: Any) -> GameRecord:
    """One game (under the time control ``tc``), then every player closed."""
    try:
        return run_game(GameConfig(players=len(players)), seed, players, time_control=tc, **kw)
    finally:
        for p in players:
            p.close()


def test_two_stdio_bots_play_several_games_in_one_session(pidfile: Pids) -> None:
    a, b = bot("a", "first.py"), bot("b", "first.py", "--text")
    try:
        records = [run_game(GameConfig(), s, [a, b], game_id=f"g{s}", time_control=FAST)
                   for s in range(3)]
    finally:
        a.close()
        b.close()
    for rec in records:
        assert rec.faults == [] and sorted(rec.places) == [1, 2]
    assert a.starts == 1 and b.starts == 1  # one process for the whole session
    assert len(pidfile()) == 2


def test_stdio_game_equals_the_same_game_in_process(pidfile: Pids) -> None:
    from referee.play.runner import InProcessPlayer

    class First:
        name = "first"

        def new_game(self, seed: int) -> None:
            pass

        def decide(self, observation: dict[str, Any], legal: list[Any]) -> Any:
            return legal[0]

    rec = play([bot("a", "first.py"), bot("b", "first.py")], seed=7)
    same = run_game(GameConfig(), 7, [InProcessPlayer(First(), "a"),
                                      InProcessPlayer(First(), "b")])
    assert rec.events == same.events and len(rec.events) > 20


def test_never_answers(pidfile: Pids) -> None:
    rec = play([bot("silent", "silent.sh", tc=SHORT), bot("ok", "first.py", tc=SHORT)],
               policy=FaultPolicy(strike_limit=1), tc=SHORT)
    assert [(f.kind, f.action) for f in rec.faults if f.seat == 0] == [
        ("timeout", "substituted"), ("timeout", "forfeit")]
    assert f"no decision for request 1 within {S_SHORT}" in rec.faults[0].detail
    assert rec.places == [2, 1]


def test_never_says_hello(pidfile: Pids) -> None:
    tc = TimeControl(startup=0.3, per_decision=scaled(0.3), bank=0.0)  # mute: never on time
    rec = play([bot("mute", "mute.sh", tc=tc), bot("ok", "first.py")], tc=tc)
    assert [(f.kind, f.action) for f in rec.faults] == [("timeout", "forfeit")]
    assert "no hello within the startup limit of 0.300s" in rec.faults[0].detail


def test_garbage_answers_are_malformed(pidfile: Pids) -> None:
    rec = play([bot("ok", "first.py"), bot("junk", "garbage.py")])
    assert [(f.seat, f.kind) for f in rec.faults] == [(1, "malformed")] * 3 + [(1, "malformed")]
    assert rec.faults[-1].action == "forfeit"
    assert 'with a line that is not JSON' in rec.faults[0].detail
    assert '"play the seven please"' in rec.faults[0].detail  # quoted, not b'...'


def test_a_banner_before_the_hello_spoils_the_handshake(pidfile: Pids) -> None:
    # PROTOCOL.md, checklist: the referee answers 'error' (code 'protocol'), ends the
    # bot, and records a fatal fault of kind 'malformed': the seat forfeits the game.
    sent: list[dict[str, Any]] = []
    rec = play([bot("banner", "banner.py",
                    on_message=lambda d, n, x, ts: sent.append(x) if d == "send" else None),
                bot("ok", "first.py")])
    assert [(f.seat, f.kind, f.action) for f in rec.faults] == [(0, "malformed", "forfeit")]
    assert rec.faults[0].detail.startswith(
        'banner did not say hello properly: a line that is not JSON (')
    assert '"MyLib 2.1 -- loading tables"' in rec.faults[0].detail
    [error] = sent  # nothing else: no welcome, no game
    assert error["type"] == "error" and error["code"] == "protocol"
    assert error["action"] == "disconnect"
    assert error["message"].startswith("expected a hello, received a line that is not JSON (")
    assert rec.places == [2, 1]


def test_late_answer_is_discarded_and_the_next_request_answered(pidfile: Pids) -> None:
    notes: list[str] = []
    tc = TimeControl(startup=scaled(5.0), per_decision=scaled(0.5), bank=0.0)
    late = bot("late", "late.py", str(scaled(0.9)), tc=tc,
               on_message=lambda d, n, x, ts: notes.append(x) if d == "note" else None)
    rec = play([late, bot("ok", "first.py", tc=tc)], tc=tc)
    assert [(f.kind, f.detail) for f in rec.faults if f.seat == 0] == [
        ("timeout", f"late sent no decision for request 1 within {scaled(0.5):.3f}s")]
    first_decision = [d for d in rec.decisions if d["seat"] == 0][0]
    assert first_decision.get("substituted")  # the late (last-index) answer was not applied
    assert sum("ignored: reply to request 1, which is no longer pending" in n
               for n in notes) == 1


def test_answers_twice(pidfile: Pids) -> None:
    notes: list[str] = []
    rec = play([bot("twice", "twice.py",
                    on_message=lambda d, n, x, ts: notes.append(x) if d == "note" else None),
                bot("ok", "first.py")])
    # Each second answer is a message nobody asked for: discarded, no fault, up to
    # the tenth in the game, which forfeits it (PROTOCOL.md, Request ids).
    [fault] = rec.faults
    assert (fault.seat, fault.kind, fault.action) == (0, "protocol", "forfeit")
    assert fault.detail.startswith("twice sent 10 messages nobody asked for in this game")
    assert sum(n.startswith("ignored:") for n in notes) == 10
    assert rec.result is not None and list(rec.result.forfeits) == [0]


def test_crash_mid_game_forfeits_with_the_exit_status(pidfile: Pids) -> None:
    rec = play([bot("ok", "first.py"), bot("crash", "crash.py")])
    assert [(f.seat, f.kind, f.action) for f in rec.faults] == [(1, "crash", "forfeit")]
    assert "exited with code 3" in rec.faults[0].detail
    assert "crash.py: giving up" in rec.faults[0].detail  # the tail of its stderr
    assert rec.places == [1, 2]


def test_exit_code_127_after_the_hello_is_not_taken_for_command_not_found(pidfile: Pids
                                                                          ) -> None:
    rec = play([bot("ok", "first.py"), bot("crash", "crash.py", "127")])
    assert [(f.seat, f.kind, f.action) for f in rec.faults] == [(1, "crash", "forfeit")]
    assert "the bot process exited with code 127; last stderr: crash.py: giving up" in \
        rec.faults[0].detail


def test_killed_bot_is_restarted_for_the_next_game(pidfile: Pids) -> None:
    p, ok = bot("crash", "crash.py", "kill"), bot("ok", "first.py")
    try:
        r1 = run_game(GameConfig(), 1, [p, ok], time_control=FAST)
        r2 = run_game(GameConfig(), 2, [p, ok], time_control=FAST)
    finally:
        p.close()
        ok.close()
    assert "the bot process was killed by signal 9 (SIGKILL)" in r1.faults[0].detail
    assert r2.faults[0].kind == "crash" and p.starts == 2
    assert len(pidfile()) == 3  # crash twice, ok once


def test_exit_with_children_holding_the_pipes_is_seen_at_once(pidfile: Pids) -> None:
    slow = TimeControl(startup=scaled(5.0), per_decision=scaled(30.0), bank=0.0)
    t0 = time.monotonic()
    rec = play([bot("orphans", "orphans.sh", tc=slow), bot("ok", "first.py")], tc=slow)
    assert time.monotonic() - t0 < scaled(10)  # not the 30 s decision limit: the exit was noticed
    assert [(f.kind, f.action) for f in rec.faults] == [("crash", "forfeit")]
    assert "exited with code 5" in rec.faults[0].detail
    assert len(pidfile()) == 5  # the bot, a child, a subshell and its child; ok


def test_closing_stdout_while_alive_is_a_crash_that_says_so(pidfile: Pids) -> None:
    rec = play([bot("shut", "shut.py"), bot("ok", "first.py")])
    assert [(f.seat, f.kind, f.action) for f in rec.faults] == [(0, "crash", "forfeit")]
    assert rec.faults[0].detail == ("shut: the bot closed its stdout while deciding request "
                                    "1; its process was still running, and is ended")


def test_a_flood_of_stale_replies_does_not_hold_the_referee(pidfile: Pids) -> None:
    # Replies to a request never sent are discarded, but do not extend the wait: before,
    # the referee read them for as long as they came (here 15 s; for ever, a hang).
    t0 = time.monotonic()
    rec = play([bot("flood", "flood.py", tc=SHORT), bot("ok", "first.py", tc=SHORT)],
               tc=SHORT)
    assert time.monotonic() - t0 < scaled(12)
    # Since a tenth message nobody asked for in a game forfeits it, the flood is
    # read no further: the bot forfeits at once.
    faults = [f for f in rec.faults if f.seat == 0]
    assert [(f.kind, f.action) for f in faults] == [("protocol", "forfeit")]
    assert faults[0].detail.startswith("flood sent 10 messages nobody asked for in this game")


def test_child_that_left_the_session_is_ended_too(pidfile: Pids) -> None:
    rec = play([bot("escape", "escape.py"), bot("ok", "first.py")])
    assert rec.faults == []
    assert len(pidfile()) == 3  # the bot, its escaped child; ok


def test_bot_ignoring_sigterm_and_bye_is_killed(pidfile: Pids) -> None:
    p = bot("stubborn", "stubborn.sh", bye_grace=0.2, kill_grace=0.2)
    rec = play([p, bot("ok", "first.py")])
    assert rec.faults == []
    assert p.conn is None and wait_gone(pidfile()) == []


def test_stderr_flood_on_its_own_turn_never_blocks_the_bot_and_the_log_is_capped(
        pidfile: Pids, tmp_path: Path) -> None:
    """The bot writes four pipefuls to stderr before each answer, on its own turn:
    the reader keeps draining past the cap while a decision is asked (else the bot
    would block and time out; between its turns a bot past the cap blocks instead:
    tests/players/test_turn_gate.py).  The log's last
    line, the count of what was dropped, is written by the reader when the pipe
    closes: the test waits for that (the reader's end), not for the 0.5 s the bot's
    end gives it, which a loaded machine can outlast."""
    lines: list[str] = []
    p = bot("chatty", "flood_stderr.py", log_dir=str(tmp_path), stderr_cap=100_000,
            on_message=lambda d, n, x, ts: lines.append(x) if d == "stderr" else None)
    ok = bot("ok", "first.py")
    try:
        rec = run_game(GameConfig(players=2), 1, [p, ok], time_control=FAST)
        assert p.conn is not None and p.conn.process is not None
        reader = p.conn.process.stderr
    finally:
        p.close()
        ok.close()
    assert rec.faults == []
    reader.join(scaled(60.0))  # a safety net: returns when the pipe's end is read
    assert not reader.thread.is_alive(), "the stderr reader never saw the pipe close"
    log = (tmp_path / "chatty.stderr.log").read_bytes()
    assert 100_000 < len(log) < 100_300
    assert b"[referee: truncated: this log is capped at 100000 bytes]" in log
    assert log.rstrip().endswith(b"more bytes of output dropped in this start]")
    assert 90 < len(lines) <= 100  # the transcript sees lines within the same cap


def test_line_of_300_mb_is_oversized(pidfile: Pids) -> None:
    tc = TimeControl(startup=5.0, per_decision=2.0, bank=0.0)
    rec = play([bot("huge", "huge_line.py", tc=tc), bot("ok", "first.py")], tc=tc)
    assert rec.faults[0].kind == "oversized"
    assert "a message may have at most 8192 bytes" in rec.faults[0].detail
    assert all(f.kind in ("oversized", "timeout") for f in rec.faults)


def test_deeply_nested_json_is_malformed(pidfile: Pids) -> None:
    rec = play([bot("nested", "nested.py"), bot("ok", "first.py")])
    assert [f.kind for f in rec.faults] == ["malformed"]
    assert "depth" in rec.faults[0].detail


def test_invalid_utf8_is_malformed(pidfile: Pids) -> None:
    rec = play([bot("bad", "bad_utf8.py"), bot("ok", "first.py")])
    assert [f.kind for f in rec.faults] == ["malformed"]
    assert "UTF-8" in rec.faults[0].detail


def test_protocol_mistakes_each_get_their_kind(pidfile: Pids) -> None:
    rec = play([bot("wrong", "wrong_type.py"), bot("ok", "first.py")],
               policy=FaultPolicy(strike_limit=10))
    assert [f.kind for f in rec.faults] == ["malformed", "malformed", "protocol", "illegal",
                                            "illegal"]
    details = [f.detail for f in rec.faults]
    assert "lacks field 'decision'" in details[0]
    assert "must be integer or string, not number 1.5" in details[1]
    assert '"move" is not a message type' in details[2]
    assert "index 99" in details[3]
    assert "play hand 99x9" in details[4]


def test_unsupported_version(pidfile: Pids) -> None:
    rec = play([bot("future", "old_version.py"), bot("ok", "first.py")])
    assert [(f.kind, f.action) for f in rec.faults] == [("protocol", "forfeit")]
    assert "speaks protocol 2; this referee speaks 1" in rec.faults[0].detail


def test_memory_hog_is_stopped_by_the_limit(pidfile: Pids) -> None:
    tc = TimeControl(startup=5.0, per_decision=10.0, bank=0.0)  # touching pages is slow
    rec = play([bot("hog", "hog.py", memory_mb=200, tc=tc), bot("ok", "first.py")], tc=tc)
    assert [(f.kind, f.action) for f in rec.faults] == [("crash", "forfeit")]
    assert "MemoryError" in rec.faults[0].detail


def test_command_that_does_not_exist(pidfile: Pids) -> None:
    rec = play([stdio_player("ghost", ["/nonexistent/bot"]), bot("ok", "first.py")])
    assert [(f.kind, f.action) for f in rec.faults] == [("crash", "forfeit")]
    assert "'/nonexistent/bot' is not an executable file" in rec.faults[0].detail


def test_bot_that_stops_reading_its_stdin_is_ended(pidfile: Pids) -> None:
    p = bot("deaf", "deaf.py", write_timeout=0.2, tc=SHORT)
    rec = play([p, bot("ok", "first.py", tc=SHORT)], policy=FaultPolicy(strike_limit=100),
               tc=SHORT)
    faults = [f for f in rec.faults if f.seat == 0]
    assert (faults[-1].kind, faults[-1].action) == ("timeout", "forfeit")
    assert "stopped reading its stdin" in faults[-1].detail
    assert all(f.kind == "timeout" for f in faults)
    assert p.dead and p.conn is None  # ended at once, not at close


def test_a_bot_that_forfeits_by_running_out_of_time_is_started_afresh(pidfile: Pids) -> None:
    # silent.sh never answers: stuck.  Kept as it is, it would spend its whole time in
    # each game; it is ended after the forfeit and started again for the next game.
    stuck, other = bot("stuck", "silent.sh", tc=SHORT), bot("other", "first.py", tc=SHORT)
    forfeit = FaultPolicy(mode="forfeit")
    try:
        first = run_game(GameConfig(), 1, [stuck, other], game_id="g1", time_control=SHORT,
                         policy=forfeit)
        assert [f.kind for f in first.faults] == ["timeout"] and first.forfeits == [0]
        old = pidfile()
        assert len(old) == 2 and stuck.starts == 1
        second = run_game(GameConfig(), 2, [stuck, other], game_id="g2", time_control=SHORT,
                          policy=forfeit)
        assert [f.kind for f in second.faults] == ["timeout"]
        assert stuck.starts == 2 and other.starts == 1
        assert len(pidfile()) == 3
        assert wait_gone(old[:1]) == []  # the stuck one (it said hello first) was ended
    finally:
        stuck.close()
        other.close()


def test_other_forfeits_keep_the_process(pidfile: Pids) -> None:
    garbage, other = bot("garbage", "garbage.py"), bot("other", "first.py")
    forfeit = FaultPolicy(mode="forfeit")
    try:
        for s in (1, 2):
            rec = run_game(GameConfig(), s, [garbage, other], game_id=f"g{s}",
                           time_control=FAST, policy=forfeit)
            assert [f.kind for f in rec.faults] == ["malformed"] and rec.forfeits == [0]
        assert garbage.starts == 1
    finally:
        garbage.close()
        other.close()


@pytest.mark.parametrize("twice", [False, True])
def test_late_replies_to_timed_out_requests_are_no_strays(pidfile: Pids, twice: bool) -> None:
    """A slow but honest bot: every fourth request times out (a strike each; the
    organiser allows 40), and its one late reply to each comes afterwards.  A late
    reply to a request the referee did ask is no message "nobody asked for": the bot
    plays the game out on its strikes.  A second reply to the same request answers
    nothing: the tenth such forfeits it, as any stray does."""
    notes: list[str] = []
    extra = ("twice",) if twice else ()
    tc = TimeControl(startup=scaled(5.0), per_decision=scaled(0.15), bank=0.0)
    slow = bot("slow", "slow_honest.py", *extra, tc=tc,
               on_message=lambda d, n, x, ts: notes.append(x) if d == "note" else None)
    rec = play([slow, bot("ok", "first.py", tc=tc)], seed=7, tc=tc,
               policy=FaultPolicy("substitute", 40))
    mine = [f for f in rec.faults if f.seat == 0]
    timeouts = [f for f in mine if f.kind == "timeout"]
    late = sum(n.startswith("ignored: reply to request") for n in notes)
    assert rec.result is not None
    if twice:
        assert mine[-1].kind == "protocol" and mine[-1].action == "forfeit"
        assert mine[-1].detail.startswith("slow sent 10 messages nobody asked for in this game")
        assert list(rec.result.forfeits) == [0]
        assert len(timeouts) >= 10  # one late reply each, not counted; 10 second ones were
    else:
        assert not any("nobody asked for" in f.detail for f in mine), mine
        assert list(rec.result.forfeits) == [] and len(timeouts) >= 10, mine
        assert late >= 10  # its late replies did come, and were discarded
    assert all(f.kind == "timeout" for f in mine[:-1])
