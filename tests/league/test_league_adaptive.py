"""A league with ``schedule = "adaptive"`` (``referee.league.adaptive``): it plays
where its ranking is least certain, every entry keeps its minimum share, it stops
when its top is separated, and its schedule is a function of its results alone
(an interrupted and resumed league plays the games of an uninterrupted one)."""

from __future__ import annotations

import contextlib
import itertools
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from referee.league.adaptive import next_games, states
from referee.league.browse import overview
from referee.league.config import LeagueConfig, LeagueConfigError, load_league_config
from referee.league.results import config_of, standings
from referee.league.run import new_league, run_league, submit
from referee.league.schedule import name_of
from referee.league.store import LeagueStore
from referee.players.botspec import BotSpec
from referee.players.sandbox import unsandboxed
from referee.tournament.executor import Job, Report, SerialExecutor
from referee.tournament.schedule import GameSpec
from tests.league.leaguehelpers import FakeExecutor, Interrupted, fake_bot, league_toml

SECRET = b"k" * 32


def ok_check(*args: object) -> tuple[bool, str]:
    return True, "(check skipped in this unit test)"


def put(league: Path, name: str, folder: Path) -> None:
    r = submit(league, name, folder, ["python3", "bot.py"], sandbox=unsandboxed(),
               checker=ok_check)
    assert r.accepted


def adaptive_league(where: Path, *, seats: Sequence[int] = (2,), deals: int = 4,
                    extra: str = "") -> Path:
    cfg = league_toml(where.parent / f"{where.name}.toml", seats=seats, deals=deals, seed=7,
                      extra="")
    text = cfg.read_text().replace("[time]", f"schedule = \"adaptive\"\n{extra}\n[time]")
    cfg.write_text(text)
    new_league(where, load_league_config(cfg), text, secret=SECRET)
    return where


class BuiltinExecutor:
    """Real games, in this process: each entry plays as the built-in bot its folder
    names (``builtin.txt``), through the tournament's serial executor (real engine,
    real records, luck-adjusted scores)."""

    def __init__(self) -> None:
        self.inner = SerialExecutor()

    def run(self, job: Job, games: Sequence[GameSpec], report: Callable[[Report], None]) -> None:
        bots = tuple(BotSpec(name=b.name, builtin=(Path(b.cwd or ".") / "builtin.txt")
                             .read_text().split()[0]) for b in job.config.bots)
        self.inner.run(replace(job, config=replace(job.config, bots=bots)), games, report)


def builtin_bot(folder: Path, bot: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "builtin.txt").write_text(f"{bot} {folder.name}\n")  # each its own content
    return folder


def pair_games(league: Path) -> tuple[Counter[frozenset[str]], Counter[str], int]:
    store = LeagueStore.open(league)
    try:
        outs = list(store.outcomes())
    finally:
        store.close()
    pairs: Counter[frozenset[str]] = Counter()
    per: Counter[str] = Counter()
    for o in outs:
        pairs[frozenset(name_of(s) for s in o.seats)] += 1
        per.update(name_of(s) for s in o.seats)
    return pairs, per, len(outs)


@pytest.mark.slow
def test_real_bots_the_uncertain_pair_is_played_most_and_everyone_keeps_a_share(
        tmp_path: Path) -> None:
    """Two copies of the lowest-card bot (equal: their order can never be settled)
    and three random bots, top 1: the adaptive league spends its games on the two
    copies, until its budget (a round-robin's games) is spent -- while each random
    bot still plays its minimum share."""
    league = adaptive_league(tmp_path / "l", deals=2, extra="top = 1\nmin_share = 0.3")
    for name, bot in [("low1", "lowest"), ("low2", "lowest"), ("rnd1", "random"),
                      ("rnd2", "random"), ("rnd3", "random")]:
        put(league, name, builtin_bot(tmp_path / name, bot))
    summary = run_league(league, executor=BuiltinExecutor(), sandbox=unsandboxed(),
                         progress=False)
    pairs, per, total = pair_games(league)
    assert summary.played == total == 2 * 10 * 2  # the budget: 2 deals of 10 pairs
    uncertain = pairs[frozenset({"low1", "low2"})]
    others = [n for p, n in pairs.items() if p != frozenset({"low1", "low2"})]
    assert uncertain > 3 * max(others), pairs
    randoms = [pairs[frozenset(p)] for p in itertools.combinations(["rnd1", "rnd2", "rnd3"], 2)]
    assert sum(randoms) < uncertain / 2, pairs
    fair = total * 2 / 5  # a round-robin's games per entry
    assert all(per[n] >= 0.3 * fair for n in ("rnd1", "rnd2", "rnd3")), per
    (st,) = standings(league)
    assert st.separation is not None and "top 1 not yet separated" in st.separation
    assert "budget" in st.separation
    # Judged by the luck-adjusted scores (the default), not the raw ones.
    store = LeagueStore.open(league)
    try:
        config = config_of(store)
        (adjusted,) = states(store, config)
        (raw,) = states(store, replace(config, scores="raw"))
    finally:
        store.close()
    assert adjusted.strengths.theta != raw.strengths.theta
    assert "from the luck-adjusted scores" in st.separation


def test_it_stops_once_the_top_is_separated(tmp_path: Path) -> None:
    league = adaptive_league(tmp_path / "l", deals=20, extra="top = 1")
    for n, strength in [("a", 30), ("b", 1), ("c", 1), ("d", 0)]:
        put(league, n, fake_bot(tmp_path / n, strength))
    run_league(league, executor=FakeExecutor(), sandbox=unsandboxed(), progress=False)
    _, _, total = pair_games(league)
    assert 0 < total < 20 * 6 * 2  # well before its budget
    (st,) = standings(league)
    assert st.rows[0].bot == "a@1" and st.complete
    assert st.separation is not None and "top 1 separated at 95 %" in st.separation
    assert "has stopped" in st.separation
    store = LeagueStore.open(league)
    try:
        assert next_games(store, config_of(store)) == []
        (state,) = states(store, config_of(store))
        assert state.settled and state.separation.separated
        # league show says it too
        assert "2 seats: the top 1 separated at 95 %" in overview(store, 0)
    finally:
        store.close()


Played = tuple[int, tuple[str, ...], tuple[int, ...], int]


def schedule_of_league(league: Path) -> tuple[list[str], list[Played]]:
    store = LeagueStore.open(league)
    try:
        plan = [p.key for p in store.planned()]
        outs = sorted((o.index, o.seats, o.places, o.deal_seed) for o in store.outcomes())
        return plan, outs
    finally:
        store.close()


@pytest.mark.parametrize(("seats", "deals"), [([2], 2), ([3, 4], 1)])
def test_a_resumed_league_plays_the_schedule_of_an_uninterrupted_one(
        tmp_path: Path, seats: list[int], deals: int) -> None:
    """The same league twice (the same secret, the same bots): one played straight
    through, one interrupted every few games and resumed; both then take a new entry
    and lose one.  They plan and play the same games, in the same order."""
    bots = {n: fake_bot(tmp_path / "bots" / n, s)
            for n, s in [("a", 3), ("b", 2), ("c", 2), ("d", 1), ("e", 0), ("f", 2)]}
    leagues = []
    for kind in ("straight", "interrupted"):
        league = adaptive_league(tmp_path / kind, seats=seats, deals=deals, extra="top = 2")
        for n in "abcde":
            put(league, n, bots[n])

        def play(league: Path = league, kind: str = kind) -> None:
            if kind == "straight":
                run_league(league, executor=FakeExecutor(), sandbox=unsandboxed(),
                           progress=False)
                return
            for _ in range(1000):
                ex = FakeExecutor(budget=9)
                with contextlib.suppress(Interrupted):
                    run_league(league, executor=ex, sandbox=unsandboxed(), progress=False)
                if len(ex.played) < 9:
                    return
            raise AssertionError("the league never finished")

        play()
        put(league, "f", bots["f"])
        store = LeagueStore.open(league)
        try:
            assert store.withdraw("c") is not None
        finally:
            store.close()
        play()
        leagues.append(league)
    one, two = (schedule_of_league(lg) for lg in leagues)
    assert one == two
    plan, outs = one
    assert len(outs) > 10
    # The newcomer played, the withdrawn entry not after it left.
    assert any("f@1" in seats for _, seats, _, _ in outs)
    store = LeagueStore.open(leagues[0])
    try:
        last = [o for o in store.outcomes()][-1]
        assert "c@1" not in last.seats
    finally:
        store.close()


def test_the_schedule_setting(tmp_path: Path) -> None:
    cfg = league_toml(tmp_path / "l.toml", extra="")
    base = cfg.read_text()
    assert load_league_config(cfg).schedule == "round-robin"
    for bad, words in [('schedule = "adaptiv"', "did you mean 'adaptive'"),
                       ("min_share = 1.5", "share of the round-robin"),
                       ("top = -1", "whole number"), ("batch = 0", "whole number"),
                       ('scores = "lucky"', "adjusted, raw")]:
        cfg.write_text(base.replace("[time]", f"{bad}\n[time]"))
        with pytest.raises(LeagueConfigError, match=words):
            load_league_config(cfg)
    league = adaptive_league(tmp_path / "al")
    config = config_of_dir(league)
    assert (config.schedule, config.top, config.min_share, config.batch) == (
        "adaptive", 3, 0.25, None)
    # A league keeps its schedule for life; its top, minimum share and batch may change.
    mine = tmp_path / "al.toml"
    text = mine.read_text()
    mine.write_text(text.replace('schedule = "adaptive"', "top = 2"))
    with pytest.raises(LeagueConfigError, match="schedule: was \"adaptive\""):
        new_league(league, load_league_config(mine), mine.read_text())
    mine.write_text(text.replace('schedule = "adaptive"', 'schedule = "adaptive"\ntop = 2'))
    lines = new_league(league, load_league_config(mine), mine.read_text())
    assert any(line.startswith("top: 3 -> 2") for line in lines), lines


def config_of_dir(league: Path) -> LeagueConfig:
    store = LeagueStore.open(league)
    try:
        return config_of(store)
    finally:
        store.close()
