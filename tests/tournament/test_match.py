"""``referee match``: duplicate sets, the SPRT through the real executor and store,
resuming with whole sets only, and the installed command."""

from __future__ import annotations

import dataclasses
import io
import json
import sqlite3
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from referee.game import GameConfig
from referee.stats.sprt import FaultCounts, Sprt
from referee.tournament.config import BotSpec, TournamentConfig, TournamentConfigError
from referee.tournament.driver import Progress
from referee.tournament.executor import Job, Report, SerialExecutor
from referee.tournament.match import MatchConfig, describe, run_match, set_games
from referee.tournament.outcome import GameOutcome
from referee.tournament.schedule import GameSpec
from tests.cli.cli_helpers import env_for_subprocess, referee_command
from tests.procs import scaled

pytestmark = pytest.mark.slow


def _config(tmp: Path, new: str, old: str, field: Sequence[str] = (), seats: int = 2,
            sprt: Sprt | None = None, games: int | None = None, seating: str = "rotate",
            seed: int = 1) -> MatchConfig:
    names = ["new", "old"] + [f"f{i}" for i in range(len(field))]
    bots = tuple(BotSpec(n, builtin=b) for n, b in zip(names, [new, old, *field], strict=True))
    t = TournamentConfig(bots=bots, name="m", seats=seats, seed=seed, seating=seating,
                         output=str(tmp),
                         game=GameConfig(players=seats, variants=frozenset({"play_out"})))
    return MatchConfig(t, "new", "old", tuple(names[2:]), sprt=sprt, games=games)


def test_a_set_pairs_new_and_old_on_the_same_seat_and_cards(tmp_path: Path) -> None:
    mc = _config(tmp_path, "heuristic", "random", ["lowest", "lowest", "random"], seats=4,
                 games=8)
    games = set_games(mc, 0)
    assert len(games) == 8 == mc.per_set  # 4 rotations x (NEW, OLD)
    assert len({g.deal_seed for g in games}) == 1 and {g.deal for g in games} == {0}
    for a, b in zip(games[::2], games[1::2], strict=True):
        seat = a.seats.index("new")
        assert b.seats.index("old") == seat
        assert [x for i, x in enumerate(a.seats) if i != seat] == \
               [x for i, x in enumerate(b.seats) if i != seat]
    assert Counter(g.seats.index("new") for g in games[::2]) == Counter(range(4))
    # head to head at 2 seats: both seat orders
    h2h = set_games(_config(tmp_path, "heuristic", "random", games=2), 5)
    assert [g.seats for g in h2h] in ([("new", "old"), ("old", "new")],
                                      [("old", "new"), ("new", "old")])
    assert [g.index for g in h2h] == [10, 11]
    # Williams at 3 seats with a field of 2: 6 seatings, 12 games a set
    assert _config(tmp_path, "heuristic", "random", ["lowest", "random"], seats=3,
                   games=1, seating="williams").per_set == 12


def test_a_match_needs_a_field_beyond_two_seats(tmp_path: Path) -> None:
    with pytest.raises(TournamentConfigError, match="need a field"):
        _config(tmp_path, "heuristic", "random", seats=4, games=4)
    with pytest.raises(TournamentConfigError, match="cannot pair"):
        _config(tmp_path, "heuristic", "random", games=4, seating="random")


def test_sprt_accepts_h1_for_a_clearly_stronger_bot(tmp_path: Path) -> None:
    # elo1 = 40: decided in 28 sets (at elo1 = 10: 104), the bot hundreds of Elo ahead
    mc = _config(tmp_path / "m", "heuristic", "random", sprt=Sprt(0, 40))
    r = run_match(mc, executor=SerialExecutor(), quiet=True)
    s = r.summary
    assert s.sprt is not None and s.sprt.verdict == "H1" and s.sprt.llr >= s.sprt.upper
    assert s.elo is not None and s.elo > 100 and s.los is not None and s.los > 0.999
    assert s.pentanomial is not None
    assert s.games == 2 * s.sets and sum(s.pentanomial) == s.sets
    assert describe(r)[0].startswith("H1 accepted: new is better than old")


def test_sprt_accepts_h0_on_a_mirror_match_at_4_seats(tmp_path: Path) -> None:
    # the same (random) policy as NEW and OLD, each with its own random stream
    # elo1 = 80: H0 in 12 sets of 8 games (at 40: 25)
    mc = _config(tmp_path / "m", "random", "random", ["heuristic", "lowest", "random"], seats=4,
                 sprt=Sprt(0, 80))
    r = run_match(mc, executor=SerialExecutor(), quiet=True, batch=8)
    s = r.summary
    assert s.sprt is not None and s.sprt.verdict == "H0" and s.sprt.llr <= s.sprt.lower
    assert s.games == 8 * s.sets and s.pentanomial is None
    assert s.score_diff is not None and abs(s.score_diff) < 0.1
    assert "H0 accepted: new is not 80 Elo better than old" in describe(r)[0]


def test_a_deterministic_mirror_is_every_set_even(tmp_path: Path) -> None:
    # elo1 = 40: H0 after 25 even sets (at elo1 = 10: 102)
    mc = _config(tmp_path / "m", "heuristic", "heuristic", sprt=Sprt(0, 40))
    s = run_match(mc, executor=SerialExecutor(), quiet=True).summary
    assert s.verdict == "H0" and s.pentanomial == (0, 0, s.sets, 0, 0)
    assert s.score == 0.5 and s.score_ci == 0.0


class _Interrupting:
    """SerialExecutor, interrupted (as by Ctrl-C) after ``after`` games: mid-set."""

    def __init__(self, after: int) -> None:
        self.after = after
        self.seen = 0

    def run(self, job: Job, games: Sequence[GameSpec], report: Callable[[Report], None]) -> None:
        def counting(r: Report) -> None:
            report(r)
            if isinstance(r, GameOutcome):
                self.seen += 1
                if self.seen == self.after:
                    raise KeyboardInterrupt

        SerialExecutor().run(job, games, counting)


def _stored_games(folder: Path) -> list[tuple[int, int]]:
    conn = sqlite3.connect(folder / "tournament.sqlite")
    try:
        return list(conn.execute("SELECT deal, COUNT(*) FROM games GROUP BY deal"))
    finally:
        conn.close()


def test_resume_mid_test_gives_identical_final_statistics(tmp_path: Path) -> None:
    def config(out: Path) -> MatchConfig:
        return _config(out, "heuristic", "lowest", ["random", "lowest"], seats=3,
                       sprt=Sprt(0, 40), seed=4)

    whole = run_match(config(tmp_path / "whole"), executor=SerialExecutor(), quiet=True,
                      batch=5)
    assert whole.summary.verdict is not None and whole.summary.sets > 10
    part = tmp_path / "part"
    with pytest.raises(KeyboardInterrupt):
        # 6 games a set: stop inside the fourth set of the first batch
        run_match(config(part), executor=_Interrupting(21), quiet=True, batch=5)
    stored = _stored_games(part)
    assert [d for d, _ in stored] == [0, 1, 2] and all(n == 6 for _, n in stored)
    resumed = run_match(config(part), executor=SerialExecutor(), quiet=True, batch=5)
    assert resumed.already_done == 3
    # every statistic identical; only how many sets were played beyond the verdict
    # (by a batch already under way) depends on where the run was interrupted
    assert dataclasses.replace(resumed.summary, sets_after_verdict=0) == \
           dataclasses.replace(whole.summary, sets_after_verdict=0)
    assert all(n == 6 for _, n in _stored_games(part))


def test_fixed_games_rounds_up_to_whole_sets_and_counts_faults(tmp_path: Path) -> None:
    mc = _config(tmp_path / "m", "heuristic", "random", games=9)
    r = run_match(mc, executor=SerialExecutor(), quiet=True)
    s = r.summary
    assert s.sets == 5 and s.games == 10 and s.sprt is None
    assert s.faulty_sets == 0 and s.faults == FaultCounts(0, 0, 0)
    text = "\n".join(describe(r))
    assert "LOS" in text and "Elo" in text and "after 5 sets (10 games)" in text


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([referee_command(), *args], capture_output=True, text=True,
                          timeout=scaled(120), env=env_for_subprocess(), cwd=cwd)


def test_match_through_the_installed_command(tmp_path: Path) -> None:
    # elo1=100 and a fixed seed: H1 after 12 sets (elo1=20 and a random seed took about
    # 50, a different number each run)
    p = _run("match", "heuristic", "random", "--sprt", "elo0=0,elo1=100", "--seed", "1",
             "-j", "1", "--json", "-o", str(tmp_path / "m"), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    assert s["new"] == "heuristic" and s["old"] == "random"
    assert s["sprt"]["verdict"] == "H1" and s["sprt"]["elo1"] == 100
    assert s["sets"] > 0 and (tmp_path / "m" / "tournament.sqlite").is_file()
    # the same command again: nothing left to play, the same verdict
    again = _run("match", "heuristic", "random", "--sprt", "elo0=0,elo1=100", "--seed", "1",
                 "-j", "1", "--json", "-o", str(tmp_path / "m"), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    s2 = json.loads(again.stdout)
    assert s2["resumed_sets"] >= s["sets"] and s2["sprt"] == s["sprt"]
    # plain text, at 4 seats against a field, a fixed number of games
    p = _run("match", "heuristic", "random", "--field", "lowest", "--field", "random",
             "--field", "lowest", "--seats", "4", "--games", "16", "--seating", "williams",
             "-j", "1", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "heuristic - random after 2 sets (16 games)" in p.stdout
    assert "place diff" in p.stdout and (tmp_path / "runs" / "match-heuristic-vs-random").is_dir()


@pytest.mark.parametrize(("args", "words"), [
    (["--sprt", "elo0=5,elo1=1"], "elo0 must be below elo1"),
    (["--sprt", "elo0=0", "--games", "4"], "not both"),
    (["--seats", "4"], "need a field"),
    (["--sprt", "bogus"], "--sprt: 'bogus' is not one of"),
])
def test_match_mistakes_are_one_error_line(tmp_path: Path, args: list[str], words: str) -> None:
    p = _run("match", "heuristic", "random", *args, "-o", str(tmp_path / "m"), cwd=tmp_path)
    assert p.returncode == 1
    assert p.stderr.startswith("Error: ") and words in p.stderr, p.stderr
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1


def test_progress_shows_llr_against_its_bounds_and_the_estimate(tmp_path: Path) -> None:
    mc = _config(tmp_path / "m", "heuristic", "random", sprt=Sprt(0, 40))
    buf = io.StringIO()
    r = run_match(mc, executor=SerialExecutor(), batch=4,
                  progress=Progress(0, 0, stream=buf, tty=False, every=0.0))
    lines = buf.getvalue().splitlines()
    assert len(lines) == r.summary.sets + r.summary.sets_after_verdict + 1
    assert lines[0].startswith("1 sets (2 games)  LLR ")
    last = lines[-1]
    assert f"{r.summary.sets} sets ({r.summary.games} games)" in last
    assert "[-2.94, +2.94]" in last and "Elo +" in last and "score 0." in last


def test_match_with_a_config_file_and_an_external_bot(tmp_path: Path) -> None:
    bots = Path(__file__).resolve().parents[2] / "example_bots" / "python"
    (tmp_path / "t.toml").write_text(f"""
[tournament]
name = "t"
seats = 3
seed = 5
seating = "williams"
[time]
per_decision = {scaled(5.0)}
[[bots]]
name = "ext"
command = ["{sys.executable}", "heuristic_bot.py"]
cwd = "{bots}"
[[bots]]
name = "h"
python = "{Path(__file__).resolve().parent / "fakebots.py"}:HeuristicRule"
[[bots]]
name = "r"
builtin = "random"
[[bots]]
name = "l"
builtin = "lowest"
""")
    p = _run("match", "ext", "h", "--field", "r", "--field", "l", "--config", "t.toml",
             "--games", "12", "-j", "1", "--json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    # 3 seats, williams: 6 seatings x (NEW, OLD) = one set of 12 games
    assert (s["seats"], s["sets"], s["games"]) == (3, 1, 12)
    assert s["faulty_sets"] == 0 and s["field"] == ["r", "l"]
    # the external heuristic bot plays exactly as the built-in one's rule part (the
    # built-in adds an endgame search): an even set
    assert s["score"] == 0.5 and s["place_diff"] == 0.0
    assert Path(s["output"]) == tmp_path / "runs" / "match-ext-vs-h"
    p = _run("match", "ext", "nobody", "--config", "t.toml", "--games", "2", cwd=tmp_path)
    assert p.returncode == 1 and p.stderr.startswith("Error: ")
