"""The progress display: a redrawn bar on a terminal, plain lines otherwise."""

from __future__ import annotations

import io

from referee.tournament.driver import Progress


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_terminal_bar_shows_done_rate_and_time_left() -> None:
    out, clock = io.StringIO(), Clock()
    p = Progress(100, 20, stream=out, tty=True, clock=clock)
    for _ in range(10):
        clock.t += 0.2
        p.advance()
    text = out.getvalue()
    assert text.startswith("\r\x1b[K[")
    assert "30/100 games  5.0 games/s  0:14 left" in text  # 10 games in 2 s, 70 to go
    assert "\n" not in text and text.count("\r") == 10  # redrawn in place
    p.message("fault: g000007: x (seat 1) turn 3: timeout: took 2s [substituted]")
    text = out.getvalue()
    assert "\r\x1b[Kfault: g000007: x (seat 1)" in text and text.endswith("left")
    p.close()
    assert out.getvalue().endswith("\n")


def test_plain_lines_every_tenth_when_not_a_terminal() -> None:
    out, clock = io.StringIO(), Clock()
    p = Progress(50, 0, stream=out, clock=clock)
    assert not p.tty  # a StringIO is not a terminal
    for _ in range(50):
        clock.t += 0.1
        p.advance()
    lines = out.getvalue().splitlines()
    assert len(lines) == 11  # the first game, then each tenth
    assert lines[-1] == "50/50 games  10.0 games/s  done"
    assert "\r" not in out.getvalue() and "\x1b" not in out.getvalue()


def test_a_fault_that_only_repeats_one_shown_is_counted_not_shown() -> None:
    out = io.StringIO()
    p = Progress(10, 0, stream=out, tty=False)
    absent = "crash: alice did not connect: remote bot alice is absent [forfeit]"
    p.fault("g1", f"alice (seat 0) turn 0: {absent}")
    p.fault("g2", f"alice (seat 1) turn 0: {absent}")
    p.fault("g3", f"alice (seat 0) turn 0: {absent}")
    p.fault("g3", "bob (seat 1) turn 4: timeout: bob sent no decision for request 9 [substituted]")
    p.fault("g4", "bob (seat 1) turn 7: timeout: bob sent no decision for request 12 [substituted]")
    p.close()
    assert out.getvalue().splitlines() == [
        f"fault: g1: alice (seat 0) turn 0: {absent}",
        "fault: g3: bob (seat 1) turn 4: timeout: bob sent no decision for request 9 [substituted]",
        "fault: g4: bob (seat 1) turn 7: timeout: bob sent no decision for request 12 "
        "[substituted]",
        "2 more faults not shown (the standings count every fault; each game's record lists "
        "its own)"]


def test_a_bot_shows_a_few_faults_of_each_kind_then_they_are_counted() -> None:
    out = io.StringIO()
    p = Progress(10, 0, stream=out, tty=False)
    for i in range(6):
        p.fault(f"g{i}", f"junk (seat 1) turn {i}: malformed: junk replied to request {i} "
                f"with a line that is not JSON [substituted]")
    p.fault("g7", "junk (seat 1) turn 9: timeout: junk sent no decision [substituted]")
    p.close()
    lines = out.getvalue().splitlines()
    assert [x.split(":")[0] for x in lines] == ["fault"] * 3 + [
        "(more malformed faults of junk are counted, not shown)", "fault",
        "3 more faults not shown (the standings count every fault; each game's record lists "
        "its own)"]
    assert "timeout" in lines[4]
