"""Per-seat game clocks (RULES §5.4; issue 21: stalling never pays).

``TimeControl.game`` (``[time] game``, ``--game-time``) is each seat's own thinking
time for the game: charged what its decisions are charged, never the referee's own
time; a seat whose clock runs out loses on time (a forfeit, whatever the fault
policy); nothing stops a game on the wall clock any more.

* The rules, with made-up charges (a driver that charges each answer a chosen time:
  the game knows no other clock): a seat out of its clock loses on time, and one
  seat's slowness changes the other seats' game only as a forfeit at that moment
  would -- over many games, 2 to 6 seats, every built-in bot.
* The attack, for real: ``tests/bots/attack_stall.py`` (a stdio bot in a subprocess)
  sleeps while it is ahead.  Past its clock it loses on time and its opponent's
  result is no worse than against the same bot playing on; within its clock the game
  is exactly the game played without stalling.
* The referee's own delays are not charged: games whose referee is slow (and busy
  with another game while the bot thinks) run far longer than the clock, and no seat
  loses on time.
* Records of the old wall-clock stop (``tests/play/records/time_limit.jsonl``, made
  by the referee before the game clocks) still replay and verify.
"""

from __future__ import annotations

import contextlib
import json
import random
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from referee.bots import BUILTIN_BOTS, make_bot
from referee.game import GameConfig
from referee.play.replay import parse_record, verify
from referee.play.runner import (
    Answer,
    Ask,
    BotFault,
    DecisionRequest,
    FaultPolicy,
    GameRecord,
    InProcessPlayer,
    Player,
    TimeControl,
    drive,
    game_steps,
    replay_check,
)
from referee.players.concurrent import GameLoop
from referee.players.external import stdio_player
from referee.tournament.store import Store
from tests.cli.cli_helpers import invoke
from tests.players.conftest import bot_command
from tests.players.test_concurrent import hub_players, stop
from tests.procs import scaled

REPO = Path(__file__).resolve().parents[2]
OLD_RECORD = Path(__file__).parent / "records" / "time_limit.jsonl"

Charge = Callable[[DecisionRequest, int], float]


def drive_charged(steps: Any, charge: Charge, asked: list[DecisionRequest] | None = None
                  ) -> GameRecord:
    """Play ``game_steps`` to its end, each player asked at once; the answer to a
    seat's ``k``-th request (from 0) is charged ``charge(request, k)`` seconds."""
    counts: Counter[int] = Counter()
    try:
        ask: Ask = next(steps)
        while True:
            req = ask.request
            if asked is not None:
                asked.append(req)
            k = counts[req.seat]
            counts[req.seat] += 1
            try:
                value, error = ask.player.decide(req), None
            except Exception as e:  # what a bot raised: the game judges it
                value, error = None, e
            ask = steps.send(Answer(value, error, charge(req, k)))
    except StopIteration as done:
        record: GameRecord = done.value
        return record


class Leaves:
    """``player`` until its ``at``-th request (from 0), where it is gone: a fatal
    fault, so a forfeit at that moment."""

    def __init__(self, player: Player, at: int) -> None:
        self.player, self.at, self.n = player, at, 0
        self.name = player.name

    def start_game(self, *a: Any) -> None:
        self.player.start_game(*a)

    def decide(self, request: DecisionRequest) -> Any:
        self.n += 1
        if self.n - 1 == self.at:
            raise BotFault("crash", f"{self.name} left", fatal=True)
        return self.player.decide(request)

    def end_game(self, *a: Any) -> None:
        self.player.end_game(*a)


def builtins(names: Sequence[str], seed: int) -> list[Player]:
    return [InProcessPlayer(make_bot(b, seed + s), f"{b}{s}") for s, b in enumerate(names)]


def played(rec: GameRecord) -> list[tuple[int, str]]:
    return [(d["seat"], d["decision"]) for d in rec.decisions]


# --- the rules ----------------------------------------------------------------------------


@pytest.mark.parametrize("policy", [FaultPolicy("substitute", 3), FaultPolicy("forfeit")])
def test_a_seat_out_of_its_game_clock_loses_on_time_whatever_the_policy(
        policy: FaultPolicy) -> None:
    tc = TimeControl(per_decision=0.5, bank=0.5, game=1.1)
    asked: list[DecisionRequest] = []
    rec = drive_charged(
        game_steps(GameConfig(), 3, builtins(["heuristic", "heuristic"], 3), time_control=tc,
                   policy=policy),
        lambda req, k: 0.4 if req.seat == 0 else 0.0, asked)
    # seat 0: 0.4 + 0.4 of its 1.1 s, then 0.4 with 0.3 left: lost on time, a forfeit
    (f,) = rec.faults
    assert (f.seat, f.kind, f.action) == (0, "timeout", "forfeit")
    assert f.detail == ("heuristic0 used its 1.1 s game clock: lost on time (its last "
                        "decision took 0.400s, 0.300s were left; RULES §5.4)")
    assert rec.forfeits == [0] and rec.places == [2, 1]
    mine = [r for r in asked if r.seat == 0]
    assert [round(r.time_left, 6) for r in mine] == [1.0, 0.7, 0.3]
    assert mine[2].allowance() == "0.300s (what was left of its game clock)"
    assert mine[0].allowance() == "1.000s (0.5 s per decision + 0.500 s left of its bank)"
    # the other seat, never charged, is always allowed its per-decision limit and bank
    assert {r.time_left for r in asked if r.seat == 1} == {1.0}
    seat0 = [d for d in rec.decisions if d["seat"] == 0]
    assert "substituted" not in seat0[1] and seat0[2]["substituted"] is True
    assert all(d.get("substituted") for d in seat0[2:])  # played out by the referee
    assert rec.ended.how == "winner"  # never stopped: played to its natural end
    # a re-run of the record's decisions reproduces its result, and it verifies
    assert replay_check(rec.to_lines()) == (True, "")
    assert verify(parse_record(rec.to_lines())) == (True, "")


def test_a_game_clock_bounds_a_decision_and_is_charged_per_decision_and_bank_alike() -> None:
    # per_decision 1 + bank 10 would allow 11 s; the clock allows what is left of it
    tc = TimeControl(per_decision=1.0, bank=10.0, game=5.0)
    asked: list[DecisionRequest] = []
    rec = drive_charged(
        game_steps(GameConfig(turn_limit=8), 1, builtins(["random", "random"], 1),
                   time_control=tc),
        lambda req, k: 1.5 if req.seat == 1 and k < 3 else 0.0, asked)
    mine = [round(r.time_left, 6) for r in asked if r.seat == 1]
    assert mine[:4] == [5.0, 3.5, 2.0, 0.5]  # 1.5 s each, taken from the clock
    assert rec.faults == [] and rec.forfeits == []


VARIANTS: tuple[frozenset[str], ...] = (frozenset(), frozenset({"play_out"}), frozenset({"match_scoring"}),
            frozenset({"ones_reverse", "play_out"}))


@pytest.mark.parametrize("n", range(2, 7))
def test_one_seats_slowness_changes_the_others_result_only_as_a_forfeit_would(n: int) -> None:
    # Property: whatever one seat's decisions are charged, the others' game is the
    # game without its slowness -- or, once its clock has run out, the game in which
    # it forfeits at that very decision (RULES §5.4).  No other seat is charged,
    # asked sooner or allowed less.
    rng = random.Random(n)
    bots = sorted(BUILTIN_BOTS)
    lost = kept = 0
    for _ in range(12 if n < 5 else 6):
        seed = rng.randrange(10**6)
        names = [rng.choice(bots) for _ in range(n)]
        if "heuristic" in names[2:] and n > 3:  # (keep the test fast: heuristic is slow)
            names = [b if b != "heuristic" else "random" for b in names]
        slow = rng.randrange(n)
        clock = rng.choice([0.5, 2.0, 10.0])
        # on average its clock lasts 4, 40 or 400 decisions (a game: tens to hundreds)
        mean = clock / rng.choice([4, 40, 400])
        charges = [rng.uniform(0.0, 2 * mean) for _ in range(5000)]
        tc = TimeControl(per_decision=1.0, bank=100.0, game=clock)
        cfg = GameConfig(players=n, variants=rng.choice(VARIANTS))

        def steps(players: list[Player], tc: TimeControl = tc,
                  cfg: GameConfig = cfg, seed: int = seed) -> Any:
            return game_steps(cfg, seed, players, time_control=tc)

        fast_asked: list[DecisionRequest] = []
        slow_asked: list[DecisionRequest] = []
        fast = drive_charged(steps(builtins(names, seed)), lambda r, k: 0.0, fast_asked)

        def charge(r: DecisionRequest, k: int, slow: int = slow,
                   charges: list[float] = charges) -> float:
            return charges[k] if r.seat == slow else 0.0

        slowed = drive_charged(steps(builtins(names, seed)), charge, slow_asked)
        assert fast.faults == []
        assert all(f.seat == slow for f in slowed.faults), slowed.faults
        if not slowed.faults:
            kept += 1
            # within its clock: the very same game, to the last decision
            assert played(slowed) == played(fast)
            assert slowed.ended == fast.ended
            assert [(r.seat, r.time_left) for r in slow_asked if r.seat != slow] == [
                (r.seat, r.time_left) for r in fast_asked if r.seat != slow]
            continue
        lost += 1
        (f,) = slowed.faults
        assert (f.kind, f.action) == ("timeout", "forfeit")
        assert "game clock: lost on time" in f.detail
        # the request at which its clock ran out: the first whose charges reach it
        spent, at = 0.0, 0
        while spent + charges[at] < clock:
            spent += charges[at]
            at += 1
        players = builtins(names, seed)
        players[slow] = Leaves(players[slow], at)
        gone_asked: list[DecisionRequest] = []
        gone = drive_charged(steps(players), lambda r, k: 0.0, gone_asked)
        assert played(slowed) == played(gone)
        assert slowed.places == gone.places and slowed.ended.game_points == gone.ended.game_points
        assert slowed.places[slow] == n
        for s in range(n):
            if s != slow:
                assert slowed.points[s] == gone.points[s]
        # the others were asked the same, as often, and allowed exactly as long
        assert [(r.seat, r.observation, r.time_left) for r in slow_asked if r.seat != slow
                ] == [(r.seat, r.observation, r.time_left) for r in gone_asked if r.seat != slow]
    assert lost and kept  # both branches of the property were exercised


@pytest.mark.slow
def test_an_old_record_stopped_at_its_wall_clock_limit_still_replays(tmp_path: Path) -> None:
    # Made by the referee before the game clocks: `referee play heuristic random
    # random --seed 7 -V play_out --game-time 0.02 --record ...`.
    lines = OLD_RECORD.read_text().splitlines()
    assert json.loads(lines[-1])["how"] == "time_limit"
    assert replay_check(lines) == (True, "")
    assert verify(parse_record(lines)) == (True, "")
    check = subprocess.run([sys.executable, "-m", "referee.cli.main", "replay", str(OLD_RECORD)],
                           capture_output=True, text=True, timeout=scaled(60), cwd=REPO)
    assert check.returncode == 0, check.stderr
    assert "stopped at the game's wall-clock limit" in check.stdout
    assert "verified:" in check.stdout and "result time_limit" in check.stdout


# --- the attack, for real -----------------------------------------------------------------


def staller_game(mode: str, stall: float, seed: int, tc: TimeControl, tmp_path: Path
                 ) -> tuple[GameRecord, str]:
    """``attack_stall.py MODE STALL`` in seat 0 against heuristic: the record, and the
    bot's stderr."""
    logs = tmp_path / mode
    bot = stdio_player("staller", bot_command("attack_stall.py", mode, str(stall)),
                       time_control=tc, log_dir=str(logs))
    try:
        rec = drive(game_steps(GameConfig(), seed, [
            bot, InProcessPlayer(make_bot("heuristic", seed), "heuristic")],
            time_control=tc))
    finally:
        bot.close()
    return rec, (logs / "staller.stderr.log").read_text()


@pytest.mark.slow
def test_stalling_while_ahead_never_pays(tmp_path: Path) -> None:
    # seed 14: the staller, playing on (index 0 each time), beats heuristic; about
    # 50 decisions of its own, 17 of them while it is ahead
    seed, clock = 14, scaled(2.0)
    tc = TimeControl(startup=scaled(10.0), per_decision=scaled(1.0), bank=scaled(10.0),
                     game=clock)
    calm, _ = staller_game("calm", 0.0, seed, tc, tmp_path)
    over, over_log = staller_game("over", scaled(0.6), seed, tc, tmp_path)
    within, within_log = staller_game("within", scaled(0.1), seed, tc, tmp_path)
    assert calm.faults == [] and within.faults == []
    assert calm.places == [1, 2]
    # past its clock: lost on time, placed last -- no gain
    assert "stalled 4" in over_log  # 4 x 0.6 s > its 2 s clock
    (f,) = over.faults
    assert (f.seat, f.kind, f.action) == (0, "timeout", "forfeit")
    assert f.detail.startswith(f"staller used its {clock:.1f} s game clock: lost on time")
    assert over.forfeits == [0] and over.places == [2, 1]
    assert calm.ended.how == over.ended.how != "time_limit"
    # the game played is the game the staller would have played on (index 0 each
    # time, which the referee plays for a forfeited seat): its opponent does no worse
    assert played(over) == played(calm)
    assert over.places[1] <= calm.places[1] and over.points[1] <= calm.points[1]
    # within its clock: it stalled, and the game is exactly the game without stalling
    assert "stalled 1" in within_log
    assert played(within) == played(calm) and within.ended == calm.ended
    assert sum(d["ms"] for d in within.decisions if d["seat"] == 0) > sum(
        d["ms"] for d in calm.decisions if d["seat"] == 0)
    for rec in (calm, over, within):
        assert verify(parse_record(rec.to_lines())) == (True, "")


# --- the referee's own time ---------------------------------------------------------------


@pytest.mark.slow
def test_the_referees_own_delays_never_run_down_a_game_clock() -> None:
    # Two games in flight in one loop (as a tournament's worker runs them), each with
    # a referee slowed down at every decision (``on_event``: its own work, such as a
    # progress display): each game runs several times longer than its seats' clocks,
    # and the bot in it -- which answers at once -- is charged only its own time,
    # never the referee's work for its game or for the other game while it thought.
    clock, slow = scaled(0.6), scaled(0.04)
    tc = TimeControl(startup=scaled(30.0), per_decision=scaled(1.0), bank=0.0, game=clock)
    hub, players, _ = hub_players([0.0, 0.0], tc)
    records: dict[int, GameRecord] = {}

    def busy(kind: str, payload: Any) -> None:
        if kind == "decision":
            time.sleep(slow)  # the referee's own work: never charged

    try:
        for p in players:
            p.connect()
        loop = GameLoop()
        for i, p in enumerate(players):
            def done(rec: GameRecord | None, err: BaseException | None, i: int = i) -> None:
                assert err is None and rec is not None
                records[i] = rec

            loop.start(game_steps(GameConfig(turn_limit=24), 40 + i,
                                  [p, InProcessPlayer(make_bot("random", i), "random")],
                                  time_control=tc, on_event=busy), done)
        loop.run()
    finally:
        for p in players:
            with contextlib.suppress(Exception):
                p.close()
        stop(hub)
    assert len(records) == 2
    for rec in records.values():
        assert rec.faults == [], rec.faults
        assert rec.wall_time > clock  # the old wall-clock limit would have stopped it
        charged = sum(d["ms"] for d in rec.decisions if d["seat"] == 0) / 1000
        assert charged < clock
        # (24 turns: at least 26 decisions; the referee's delays alone exceed the clock)
        assert len(rec.decisions) * slow > clock


@pytest.mark.slow
def test_play_with_a_tiny_game_time_has_both_bots_lose_on_time(tmp_path: Path) -> None:
    # `referee play --game-time`: each built-in bot's first decision uses its whole
    # 1 microsecond; both forfeit, the game is played out, and its record verifies.
    record = tmp_path / "g.jsonl"
    r = subprocess.run([sys.executable, "-m", "referee.cli.main", "play", "heuristic", "random",
                        "--seed", "3", "--game-time", "0.000001", "--json",
                        "--record", str(record)],
                       capture_output=True, text=True, timeout=scaled(60), cwd=REPO)
    assert r.returncode == 0, r.stderr
    game = json.loads(r.stdout)["games"][0]
    assert game["how"] == "winner"
    faults = [json.loads(x) for x in record.read_text().splitlines()
              if json.loads(x)["type"] == "fault"]
    assert {(f["seat"], f["kind"], f["action"]) for f in faults} == {
        (0, "timeout", "forfeit"), (1, "timeout", "forfeit")}
    assert all("used its 1e-06 s game clock: lost on time" in f["detail"] for f in faults)
    check = subprocess.run([sys.executable, "-m", "referee.cli.main", "replay", str(record)],
                           capture_output=True, text=True, timeout=scaled(60), cwd=REPO)
    assert check.returncode == 0, check.stderr
    assert "verified:" in check.stdout


# --- the setting reaches every command ---------------------------------------------------


@pytest.mark.slow
def test_the_game_clock_reaches_matches_and_the_bots(tmp_path: Path) -> None:
    from referee.cli.match import _config as match_config
    from referee.tournament.config import load_config

    cfg = tmp_path / "t.toml"
    cfg.write_text('[tournament]\nseats = 2\n[time]\ngame = 45.0\n'
                   '[[bots]]\nname = "a"\nbuiltin = "random"\n'
                   '[[bots]]\nname = "b"\nbuiltin = "lowest"\n')
    assert load_config(str(cfg)).time.game == 45.0

    def match(config_file: str | None, game_time: float | None) -> float | None:
        new, old = ("a", "b") if config_file else ("random", "lowest")
        mc = match_config(new, old, (), None, None, 2, 10, None, None, (), None, None, None,
                          None, None, None, None, None, None, str(tmp_path / "out"),
                          config_file, game_time=game_time)
        return mc.tournament.time.game

    assert match(str(cfg), None) == 45.0  # a --config file's clock is kept
    assert match(str(cfg), 7.0) == 7.0  # --game-time overrides it
    assert match(None, None) is None
    # tournament quick --game-time: the tournament is stored (and resumed) with it
    out = tmp_path / "quick"
    r = invoke("tournament", "quick", "random", "lowest", "--deals", "1", "--game-time", "30",
                "-q", "-j", "1", "-o", str(out), "--format", "json")
    assert r.exit_code == 0, r.output
    stored = Store.stored_config(out)
    assert stored is not None and stored.time.game == 30.0
    # a bot is told its clock in `welcome` (time.game), only when there is one
    welcomes: list[dict[str, Any]] = []

    def note(kind: str, name: str, msg: Any, t: float) -> None:
        if kind == "send" and msg.get("type") == "welcome":
            welcomes.append(msg)

    for tc in (TimeControl(game=45.0), TimeControl()):
        bot = stdio_player("first", bot_command("first.py"), time_control=tc, on_message=note)
        try:
            bot.connect()
        finally:
            bot.close()
    assert [m["time"].get("game") for m in welcomes] == [45.0, None]
