"""The league's central promise: growing is the same as starting over.  A league
grown step by step (submissions, resubmissions, raised deals, a new table size,
interrupted runs) ends with exactly the games and the standings of a fresh league of
its final field; and every run plays only games it did not have."""

from __future__ import annotations

import contextlib
import random
from pathlib import Path

import pytest

from referee.game import Game, GameConfig
from referee.league.config import LeagueConfigError, load_league_config
from referee.league.results import pending, standings
from referee.league.run import new_league, run_league, submit
from referee.league.schedule import deck_idents, league_schedule, name_of
from referee.league.store import LeagueStore
from referee.players.sandbox import unsandboxed
from tests.league.leaguehelpers import FakeExecutor, Interrupted, fake_bot, league_toml


def ok_check(*args: object) -> tuple[bool, str]:
    return True, "(check skipped in this unit test)"


def put(league: Path, name: str, folder: Path) -> None:
    r = submit(league, name, folder, ["python3", "bot.py"], sandbox=unsandboxed(),
               checker=ok_check)
    assert r.accepted


def played(league: Path) -> set[tuple[object, ...]]:
    """Every game among the active field, by bot names (not versions)."""
    store = LeagueStore.open(league)
    try:
        active = {e.id for e in store.active()}
        out = set()
        for o in store.outcomes():
            if set(o.seats) <= active:
                out.add((tuple(name_of(s) for s in o.seats), o.deal, o.deal_seed, o.places,
                         o.points))
        return out
    finally:
        store.close()


def table_rows(league: Path) -> list[tuple[object, ...]]:
    return [(st.seats, st.played, st.scheduled, [
        (name_of(r.bot), r.rank, r.games, r.wins, r.place_points, r.avg_place,
         round(r.rating, 9), round(r.rating_low, 9), round(r.rating_high, 9))
        for r in st.rows])
        for st in standings(league)]


def run_all(league: Path, budget: int | None = None) -> None:
    with contextlib.suppress(Interrupted):
        run_league(league, executor=FakeExecutor(budget), sandbox=unsandboxed(),
                   progress=False)


@pytest.mark.slow
@pytest.mark.parametrize("scenario", range(12))
def test_a_grown_league_equals_a_fresh_league_of_its_final_field(tmp_path: Path,
                                                                 scenario: int) -> None:
    rng = random.Random(scenario)
    seats = sorted(rng.sample([2, 3, 4], rng.choice([1, 2])))
    deals = rng.choice([1, 2])
    seed = rng.randrange(1 << 40)
    grown = tmp_path / "grown"
    cfg = league_toml(tmp_path / "grown.toml", seats=seats, deals=deals, seed=seed)
    new_league(grown, load_league_config(cfg), cfg.read_text())
    bots: dict[str, Path] = {}
    made = 0
    resubmitted = raised = interrupted = False
    for step in range(10):
        op = rng.choice(["new", "new", "resubmit", "deals", "table", "run", "interrupt"])
        if op == "new" or not bots or (step == 9 and not resubmitted):
            op = "resubmit" if bots and step == 9 else "new"
        if op == "new":
            name = "abcdefg"[len(bots)]
            made += 1
            bots[name] = fake_bot(tmp_path / f"src{made}", rng.randrange(4))
            put(grown, name, bots[name])
        elif op == "resubmit":
            name = rng.choice(sorted(bots))
            made += 1
            bots[name] = fake_bot(tmp_path / f"src{made}", rng.randrange(4) + 10 * made)
            put(grown, name, bots[name])
            resubmitted = True
        elif op == "deals":
            deals += 1
            cfg = league_toml(tmp_path / "grown.toml", seats=seats, deals=deals, seed=seed)
            new_league(grown, load_league_config(cfg), cfg.read_text())
            raised = True
        elif op == "table" and len(seats) < 3:
            seats = sorted({*seats, rng.choice([2, 3, 4])})
            cfg = league_toml(tmp_path / "grown.toml", seats=seats, deals=deals, seed=seed)
            new_league(grown, load_league_config(cfg), cfg.read_text())
        elif op == "run":
            run_all(grown)
        elif op == "interrupt":
            run_all(grown, budget=rng.randrange(4))
            interrupted = True
    if not raised:
        deals += 1
        cfg = league_toml(tmp_path / "grown.toml", seats=seats, deals=deals, seed=seed)
        new_league(grown, load_league_config(cfg), cfg.read_text())
    if not interrupted:
        run_all(grown, budget=2)
    run_all(grown)
    store = LeagueStore.open(grown)
    try:
        assert pending(store) == []
    finally:
        store.close()

    fresh = tmp_path / "fresh"
    cfg = league_toml(tmp_path / "fresh.toml", seats=seats, deals=deals, seed=seed)
    store = LeagueStore.open(grown)
    try:
        secret = store.secret()  # the same key: the same decks for the same bots
    finally:
        store.close()
    new_league(fresh, load_league_config(cfg), cfg.read_text(), secret=secret)
    for name in sorted(bots, reverse=True):  # another order of arrival
        put(fresh, name, bots[name])
    run_all(fresh)

    assert played(grown) == played(fresh)
    expected = league_schedule(list(bots), seats, deals, seed)
    assert len(played(fresh)) == len(expected)
    # ... and with any other secret, other decks altogether
    other = tmp_path / "other"
    new_league(other, load_league_config(cfg), cfg.read_text())
    for name in sorted(bots):
        put(other, name, bots[name])
    run_all(other)
    assert {g[2] for g in played(other)}.isdisjoint({g[2] for g in played(fresh)})
    assert table_rows(grown) == table_rows(fresh)


def test_each_run_plays_only_new_games(tmp_path: Path) -> None:
    league = tmp_path / "l"
    cfg = league_toml(tmp_path / "l.toml", seats=[2, 3], deals=1, seed=3)
    new_league(league, load_league_config(cfg), cfg.read_text())
    for n in "abc":
        put(league, n, fake_bot(tmp_path / n, ord(n) % 3))
    ex = FakeExecutor()
    run_league(league, executor=ex, sandbox=unsandboxed(), progress=False)
    assert len(ex.played) == 3 * 2 + 1 * 3  # 3 pairs x 2 seatings, 1 trio x 3
    put(league, "d", fake_bot(tmp_path / "d", 1))
    ex = FakeExecutor()
    run_league(league, executor=ex, sandbox=unsandboxed(), progress=False)
    # only d's lineups: 3 pairs (x2) and 3 trios (x3)
    assert len(ex.played) == 3 * 2 + 3 * 3
    assert all(any(name_of(s) == "d" for s in g.seats) for g in ex.played)
    # a resubmission of a: a's lineups again, with a@2; a@1's games stay in the history
    put(league, "a", fake_bot(tmp_path / "a2", 2))
    ex = FakeExecutor()
    run_league(league, executor=ex, sandbox=unsandboxed(), progress=False)
    assert len(ex.played) == 3 * 2 + 3 * 3
    assert all("a@2" in g.seats for g in ex.played)
    hist = {st.seats: {r.bot for r in st.rows} for st in standings(league, history=True)}
    assert {"a@1", "a@2"} <= hist[2]
    now = {st.seats: {r.bot for r in st.rows} for st in standings(league)}
    assert now[2] == {"a@2", "b@1", "c@1", "d@1"}


def test_pending_games_are_interleaved_across_lineups(tmp_path: Path) -> None:
    league = tmp_path / "l"
    cfg = league_toml(tmp_path / "l.toml", seats=[2], deals=10, seed=3)
    new_league(league, load_league_config(cfg), cfg.read_text())
    for n in "abcd":
        put(league, n, fake_bot(tmp_path / n, 1))
    run_all(league, budget=20)  # interrupted at 20 of 120 games
    games = {st.seats: st for st in standings(league)}[2]
    counts = [r.games for r in games.rows]
    assert sum(counts) == 40 and max(counts) - min(counts) <= 2, counts


def test_a_resubmission_cancels_the_old_versions_pending_games(tmp_path: Path) -> None:
    league = tmp_path / "l"
    cfg = league_toml(tmp_path / "l.toml", seats=[2], deals=3, seed=3)
    new_league(league, load_league_config(cfg), cfg.read_text())
    for n in "abc":
        put(league, n, fake_bot(tmp_path / n, 1))
    run_all(league, budget=4)
    put(league, "a", fake_bot(tmp_path / "a2", 2))
    store = LeagueStore.open(league)
    try:
        plan = store.planned()
        old = [p for p in plan if "a@1" in p.seats]
        done = {o.index for o in store.outcomes()}
        assert old and all(p.cancelled is not None for p in old if p.idx not in done)
        assert all(p.cancelled is None for p in old if p.idx in done)
        assert all("a@1" not in g.seats for g, _ in pending(store))
    finally:
        store.close()


def test_one_authors_entries_never_sit_at_one_table(tmp_path: Path) -> None:
    league = tmp_path / "l"
    cfg = league_toml(tmp_path / "l.toml", seats=[2, 3], deals=2, seed=8)
    new_league(league, load_league_config(cfg), cfg.read_text())
    owners = {"a": "xavier", "b": "xavier", "c": "yvonne", "d": "zoe", "e": "xavier"}
    for name, who in owners.items():
        r = submit(league, name, fake_bot(tmp_path / name, ord(name) % 3), ["python3", "bot.py"],
                   author=who, sandbox=unsandboxed(), checker=ok_check)
        assert r.accepted
    ex = FakeExecutor()
    run_league(league, executor=ex, sandbox=unsandboxed(), progress=False)
    tables = {tuple(sorted(name_of(s) for s in g.seats)) for g in ex.played}
    assert all(len({owners[n] for n in t}) == len(t) for t in tables)
    # every lineup of different authors is played: x's three with c, d, or both
    assert tables == {("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"), ("c", "d"), ("c", "e"),
                      ("d", "e"), ("a", "c", "d"), ("b", "c", "d"), ("c", "d", "e")}
    # a resubmission keeps its author's entries apart too
    r = submit(league, "a", fake_bot(tmp_path / "a2", 2), ["python3", "bot.py"],
               author="xavier", sandbox=unsandboxed(), checker=ok_check)
    ex = FakeExecutor()
    run_league(league, executor=ex, sandbox=unsandboxed(), progress=False)
    assert ex.played and all({"b", "e"}.isdisjoint(name_of(s) for s in g.seats)
                             for g in ex.played)
    assert {r.bot for st in standings(league) for r in st.rows} == \
        {"a@2", "b@1", "c@1", "d@1", "e@1"}


def test_separate_authors_can_be_turned_off(tmp_path: Path) -> None:
    league = tmp_path / "l"
    cfg = league_toml(tmp_path / "l.toml", seats=[2], deals=1, seed=8,
                      extra="").read_text().replace("deals = 1\n",
                                                    "deals = 1\nseparate_authors = false\n")
    (tmp_path / "l.toml").write_text(cfg)
    new_league(league, load_league_config(tmp_path / "l.toml"), cfg)
    for name in "ab":
        submit(league, name, fake_bot(tmp_path / name, 1), ["python3", "bot.py"],
               author="xavier", sandbox=unsandboxed(), checker=ok_check)
    ex = FakeExecutor()
    run_league(league, executor=ex, sandbox=unsandboxed(), progress=False)
    assert len(ex.played) == 2  # one lineup, two seatings
    # the setting is for life: turning it on would change the games
    on = cfg.replace("separate_authors = false\n", "")
    (tmp_path / "l.toml").write_text(on)
    with pytest.raises(LeagueConfigError, match="separate_authors: was false, now true"):
        new_league(league, load_league_config(tmp_path / "l.toml"), on)


@pytest.mark.parametrize("scenario", range(4))
def test_no_deck_is_dealt_to_two_lineups(tmp_path: Path, scenario: int) -> None:
    # Issue 26, item 1: a new entry or a new version never plays a deck a game has
    # already played (its author may have read that game: its bot's stderr, status).
    rng = random.Random(1000 + scenario)
    league = tmp_path / "l"
    cfg = league_toml(tmp_path / "l.toml", seats=[2, 3], deals=2, seed=rng.randrange(99))
    new_league(league, load_league_config(cfg), cfg.read_text())
    for step in range(8):
        name = rng.choice("abcd")
        # now and then the very bot of an earlier step again (a new submission too)
        made = rng.choice([10 * step + rng.randrange(4), rng.randrange(3)])
        put(league, name, fake_bot(tmp_path / f"s{step}", made))
        if step % 2:
            run_all(league)
    run_all(league)
    store = LeagueStore.open(league)
    try:
        ident = deck_idents((e.id, e.ident) for e in store.entries())
        lineup_of: dict[tuple[int, ...], set[frozenset[tuple[str, str]]]] = {}
        games = list(store.outcomes())
        for o in games:
            lineup = frozenset((name_of(s), ident[s]) for s in o.seats)
            deck = tuple(Game(GameConfig(players=len(o.seats)), o.deal_seed).deck)
            lineup_of.setdefault(deck, set()).add(lineup)
    finally:
        store.close()
    assert len(games) > 20
    shared = {d: ls for d, ls in lineup_of.items() if len(ls) > 1}
    assert not shared


def decks_of(league: Path) -> dict[frozenset[str], set[int]]:
    """Each lineup's (entry ids) games' deal seeds."""
    store = LeagueStore.open(league)
    try:
        out: dict[frozenset[str], set[int]] = {}
        for o in store.outcomes():
            out.setdefault(frozenset(o.seats), set()).add(o.deal_seed)
        return out
    finally:
        store.close()


def with_(decks: dict[frozenset[str], set[int]], entry: str) -> set[int]:
    return set().union(*(seeds for lineup, seeds in decks.items() if entry in lineup))


def test_an_identical_resubmission_meets_none_of_its_old_decks(tmp_path: Path) -> None:
    """Issue 26: no two submissions share a deck.  The very bot of an earlier version,
    submitted again, meets none of the decks its earlier self met (scouted with it,
    they could be told to it in its version number and the time it is sent); a
    fresh league of the final field deals what the first submission was dealt
    (it knows nothing of the history), so for such a field, and only then, the
    grown league differs from it."""
    league = tmp_path / "l"
    cfg = league_toml(tmp_path / "l.toml", seats=[2, 3], deals=2, seed=5)
    new_league(league, load_league_config(cfg), cfg.read_text())
    put(league, "a", fake_bot(tmp_path / "a1", 1))
    put(league, "b", fake_bot(tmp_path / "b1", 2))
    put(league, "c", fake_bot(tmp_path / "c1", 3))
    run_all(league)
    put(league, "a", fake_bot(tmp_path / "a2", 7))
    run_all(league)
    put(league, "a", fake_bot(tmp_path / "a3", 1))  # a@1 again, byte for byte
    run_all(league)
    store = LeagueStore.open(league)
    try:
        ident = {e.id: e.ident for e in store.entries()}
        secret = store.secret()
    finally:
        store.close()
    assert ident["a@1"] == ident["a@3"] != ident["a@2"]
    decks = decks_of(league)
    assert len(with_(decks, "a@1")) == len(with_(decks, "a@3")) == 2 * 3  # 2 deals x 3 lineups
    assert with_(decks, "a@3").isdisjoint(with_(decks, "a@1") | with_(decks, "a@2"))
    fresh = tmp_path / "fresh"
    new_league(fresh, load_league_config(cfg), cfg.read_text(), secret=secret)
    for name, folder in (("c", "c1"), ("b", "b1"), ("a", "a3")):
        put(fresh, name, tmp_path / folder)
    run_all(fresh)
    fresh_decks = decks_of(fresh)
    # the fresh league's a@1 is the grown league's a@1, not its a@3; the lineup
    # without a keeps its decks
    assert fresh_decks == {lineup: seeds for lineup, seeds in decks.items()
                           if lineup <= {"a@1", "b@1", "c@1"}}


def test_deck_idents_count_repeats_per_name() -> None:
    ids = deck_idents([("a@3", "X"), ("a@1", "X"), ("a@2", "Y"), ("b@1", "X"), ("a@10", "X")])
    assert ids == {"a@1": "X", "a@2": "Y", "a@3": "X+1", "a@10": "X+2", "b@1": "X"}


def test_an_identical_resubmission_meets_none_of_its_old_decks_adaptive(tmp_path: Path) -> None:
    """The same under ``schedule = "adaptive"``, whose batches key their decks too."""
    cfg = league_toml(tmp_path / "l.toml", seats=[2], deals=4, seed=5)
    text = cfg.read_text().replace("[time]", 'schedule = "adaptive"\n\n[time]')
    cfg.write_text(text)
    league = tmp_path / "l"
    new_league(league, load_league_config(cfg), text)
    for name, strength in (("a", 1), ("b", 2), ("c", 3)):
        put(league, name, fake_bot(tmp_path / f"{name}1", strength))
    run_all(league)
    put(league, "a", fake_bot(tmp_path / "a2", 7))
    run_all(league)
    put(league, "a", fake_bot(tmp_path / "a3", 1))  # a@1 again, byte for byte
    run_all(league)
    decks = decks_of(league)
    first, again = with_(decks, "a@1"), with_(decks, "a@3")
    assert first and again, decks
    assert again.isdisjoint(first)
