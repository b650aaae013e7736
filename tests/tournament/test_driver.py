"""One driver for tournaments, matches and leagues (issue 22 item 1): what only one of
them could do now holds for all three, through the same loop -- a bot failing its
first games is stopped, a committed game whose record is missing is played again,
temporary files of unfinished records are swept away, a record that cannot be
written stops the run with one StorageError keeping what was saved, an interrupted
run keeps its finished games, and the progress display shows faults by one rule."""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from referee.errors import StorageError
from referee.league.run import run_league, submit
from referee.league.store import LeagueStore
from referee.play.runner import Fault
from referee.players.sandbox import unsandboxed
from referee.tournament.config import TournamentConfig, parse_config
from referee.tournament.driver import Progress
from referee.tournament.executor import FaultNotice, Job, NotPlayed, Report
from referee.tournament.match import MatchConfig, run_match
from referee.tournament.outcome import GameOutcome
from referee.tournament.run import run_tournament
from referee.tournament.schedule import GameSpec
from referee.tournament.store import Store
from tests.league.leaguehelpers import fake_bot, make_league

BAD = "bad"  # the bot (or league entry name) that crashes in every game it starts


def _is_bad(bot: str) -> bool:
    return bot.split("@")[0] == BAD


class Fake:
    """Plays each game at once: the seats in order are the places, except that the
    bad bot crashes (a fatal fault, a forfeit) unless it was stopped, when its seat is
    forfeited without starting it.  Writes each record as an executor does.
    ``storage_after``: games played before every record fails to be written (a
    full disk); ``interrupt_after``: games before a KeyboardInterrupt."""

    def __init__(self, *, storage_after: int | None = None,
                 interrupt_after: int | None = None) -> None:
        self.storage_after = storage_after
        self.interrupt_after = interrupt_after
        self.played: list[GameSpec] = []
        self.started: list[str] = []  # the bad bot's starts
        self.stopped: set[str] = set()

    def stop(self, bot: str) -> None:
        self.stopped.add(bot)

    def run(self, job: Job, games: Sequence[GameSpec], report: Callable[[Report], None]) -> None:
        records = Path(job.output_dir) / job.records
        records.mkdir(parents=True, exist_ok=True)
        for spec in games:
            if self.interrupt_after is not None and len(self.played) >= self.interrupt_after:
                raise KeyboardInterrupt
            record = records / f"{spec.game_id}.jsonl"
            if self.storage_after is not None and len(self.played) >= self.storage_after:
                (records / f"{spec.game_id}.jsonl.tmp").write_text("half a rec")
                report(NotPlayed(spec.index, spec.game_id, f"cannot write the game record "
                                 f"{record}: No space left on device", storage=True))
                return
            self.played.append(spec)
            faults, forfeits = [], []
            for seat, bot in enumerate(spec.seats):
                if _is_bad(bot):
                    forfeits.append(seat)
                    if bot in self.stopped:
                        detail = f"{bot} was stopped by the referee"
                    else:
                        self.started.append(spec.game_id)
                        detail = f"{bot} ended before its hello: exit code 1"
                        report(FaultNotice(spec.game_id, f"{bot} (seat {seat}) turn 0: "
                                                         f"crash: {detail} [forfeit]"))
                    faults.append(Fault(seat=seat, bot=bot, kind="crash", detail=detail,
                                        turn=0, action="forfeit"))
            order = [s for s in range(len(spec.seats)) if s not in forfeits] + forfeits
            places = [0] * len(spec.seats)
            for place, s in enumerate(order):
                places[s] = place + 1
            record.write_text('{"type": "result"}\n')
            report(GameOutcome(index=spec.index, game_id=spec.game_id, deal=spec.deal,
                               deal_seed=spec.deal_seed, seats=spec.seats,
                               places=tuple(places), points=tuple(0 for _ in places),
                               how="played_out", turns=9, faults=tuple(faults),
                               forfeits=tuple(forfeits), record=f"games/{spec.game_id}.jsonl"))


# --- the three users of the driver, each over the same three bots ----------------------


def _tournament_config(out: Path) -> TournamentConfig:
    return parse_config({
        "tournament": {"name": "t", "seats": 2, "deals": 4, "seed": 3, "output": str(out)},
        "faults": {"stop_after": 2},
        "bots": [{"name": "a", "builtin": "heuristic"}, {"name": "b", "builtin": "lowest"},
                 {"name": BAD, "builtin": "random"}]})


def tournament(where: Path, ex: Fake) -> int:
    """Runs a tournament: the games this run played."""
    return run_tournament(_tournament_config(where), executor=ex, quiet=True,
                          sandbox=unsandboxed()).played


def match(where: Path, ex: Fake) -> int:
    t = _tournament_config(where)
    mc = MatchConfig(t, new="a", old="b", field=(BAD,), games=24, sprt=None)
    r = run_match(mc, executor=ex, quiet=True, sandbox=unsandboxed(), batch=2)
    return r.played * mc.per_set


def league(where: Path, ex: Fake) -> int:
    if not where.exists():
        make_league(where, deals=4)
        for name in ("a", "b", BAD):
            r = submit(where, name, fake_bot(where.parent / f"src-{name}", 1),
                       ["python3", "bot.py"], sandbox=unsandboxed(),
                       checker=lambda *a: (True, "skipped"))
            assert r.accepted
    return run_league(where, executor=ex, sandbox=unsandboxed(), progress=False).played


RUNS = {"tournament": tournament, "match": match, "league": league}


def _count(where: Path, kind: str) -> int:
    store = LeagueStore.open(where) if kind == "league" else Store.open_existing(where)
    try:
        return store.count()
    finally:
        store.close()


@pytest.mark.parametrize("kind", RUNS)
def test_a_bot_failing_its_first_games_is_stopped(tmp_path: Path, kind: str) -> None:
    """[faults] stop_after (the tournament's file: 2; the league: the default, 3): the
    bad bot is started in its first games only; its other games are forfeited.  (A
    match commits whole sets: the stop rule sees the bad bot's first set, 4 games.)"""
    ex = Fake()
    where = tmp_path / "run"
    played = RUNS[kind](where, ex)
    assert played == len(ex.played) > 0
    bad_games = [g for g in ex.played if any(_is_bad(b) for b in g.seats)]
    started = {"tournament": 2, "league": 3, "match": 4}[kind]
    assert len(ex.started) == started < len(bad_games)
    assert {b.split("@")[0] for b in ex.stopped} == {BAD}
    # Resumed, it stays stopped: the stores' outcomes say so.
    ex2 = Fake()
    RUNS[kind](where, ex2)
    assert {b.split("@")[0] for b in ex2.stopped} == {BAD} and not ex2.started


@pytest.mark.parametrize("kind", RUNS)
def test_a_committed_game_whose_record_is_missing_is_played_again(tmp_path: Path,
                                                                   kind: str) -> None:
    where = tmp_path / "run"
    RUNS[kind](where, Fake())
    total = _count(where, kind)
    lost = sorted((where / "games").glob("*.jsonl"))[0]
    lost.unlink()
    (where / "games" / "x.jsonl.tmp").write_text("cut")  # a run killed mid-write
    ex = Fake()
    RUNS[kind](where, ex)
    assert lost.stem in {g.game_id for g in ex.played}
    assert lost.exists() and _count(where, kind) == total
    assert not list((where / "games").glob("*.tmp"))


@pytest.mark.parametrize("kind", RUNS)
def test_a_record_that_cannot_be_written_stops_the_run_keeping_what_was_saved(
        tmp_path: Path, kind: str) -> None:
    where = tmp_path / "run"
    with pytest.raises(StorageError, match=r"No space left on device; the \d+ games saved "
                                           r"before are kept: make room"):
        RUNS[kind](where, Fake(storage_after=6))
    saved = _count(where, kind)
    assert 0 < saved <= 6
    assert not list((where / "games").glob("*.tmp"))  # swept after the executor stopped
    ex = Fake()
    RUNS[kind](where, ex)  # room made: it resumes
    assert _count(where, kind) == saved + len(ex.played)


@pytest.mark.parametrize("kind", RUNS)
def test_an_interrupted_run_keeps_its_finished_games_and_resumes(tmp_path: Path,
                                                                 kind: str) -> None:
    where = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        RUNS[kind](where, Fake(interrupt_after=5))
    kept = _count(where, kind)
    assert 0 < kept <= 5
    assert not Store.in_use(where)  # the lock went with the run
    ex = Fake()
    RUNS[kind](where, ex)
    assert _count(where, kind) == kept + len(ex.played)


@pytest.mark.parametrize("kind", RUNS)
def test_one_run_at_a_time(tmp_path: Path, kind: str) -> None:
    where = tmp_path / "run"
    RUNS[kind](where, Fake())
    holder = LeagueStore.open(where) if kind == "league" else Store.open_existing(where)
    try:
        holder.lock()
        with pytest.raises(StorageError, match="another"):
            RUNS[kind](where, Fake())
    finally:
        holder.close()


def test_one_progress_rule_for_faults_in_a_match_too(tmp_path: Path) -> None:
    """The match shows its test's figures, and faults by the tournament's rule: a few
    of each bot's kind, the rest counted."""
    buf = io.StringIO()
    t = _tournament_config(tmp_path / "m")
    mc = MatchConfig(t, new="a", old="b", field=(BAD,), games=24, sprt=None)
    ex = Fake()
    ex.stop = lambda bot: None  # type: ignore[method-assign]  # never stopped: crashes on
    run_match(mc, executor=ex, sandbox=unsandboxed(), batch=2,
              progress=Progress(0, 0, stream=buf, tty=False, every=0.0))
    lines = buf.getvalue().splitlines()
    faults = [x for x in lines if x.startswith("fault: ")]
    assert len(faults) == 1 < len(ex.started)  # the same words each time: shown once
    assert lines[-1].startswith(f"{len(ex.started) - 1} more faults not shown")
    assert any(x.startswith("6 sets (24 games)") for x in lines)  # 4 games a set
