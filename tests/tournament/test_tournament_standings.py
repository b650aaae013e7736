"""Standings arithmetic against figures computed by hand."""

from __future__ import annotations

import csv
import io
import json
import math

import pytest

from referee.play.runner import Fault
from referee.protocol.messages import FaultKind
from referee.stats.ratings import RatedGame, fit_plackett_luce
from referee.tournament.outcome import GameOutcome
from referee.tournament.standings import compute, mean_ci, place_points, render, standings_table


def game(index: int, deal: int, seats: str | tuple[str, ...], places: tuple[int, ...], points: tuple[int, ...],
         faults: tuple[Fault, ...] = (), forfeits: tuple[int, ...] = ()) -> GameOutcome:
    return GameOutcome(index=index, game_id=f"g{index}", deal=deal, deal_seed=deal,
                       seats=tuple(seats), places=places, points=points, how="played_out",
                       turns=10, faults=faults, forfeits=forfeits)


def fault(seat: int, kind: FaultKind) -> Fault:
    return Fault(seat=seat, bot="?", kind=kind, detail="", turn=1, action="substituted")


# Two duplicated deals between A and B (each deal played with the seats swapped):
# A wins 3 of 4 games: both games of deal 0, one of deal 1.
DUPLICATE = [
    game(0, 0, "AB", (1, 2), (0, 10)),
    game(1, 0, "BA", (2, 1), (12, 0), faults=(fault(0, "timeout"), fault(0, "illegal"))),
    game(2, 1, "AB", (2, 1), (7, 0)),
    game(3, 1, "BA", (2, 1), (5, 0), faults=(fault(0, "crash"),), forfeits=(0,)),
]


def test_two_seat_figures_by_hand() -> None:
    st = compute(DUPLICATE, ["A", "B"], 2)
    a, b = st.rows
    assert (a.bot, a.rank, b.bot, b.rank) == ("A", 1, "B", 2)
    assert (a.games, a.wins, b.wins) == (4, 3, 1)
    assert a.win_rate == 0.75 and b.win_rate == 0.25
    assert a.avg_place == 1.25 and b.avg_place == 1.75
    assert a.place_points == 3 and b.place_points == 1
    assert a.avg_penalty == 7 / 4 and b.avg_penalty == 27 / 4
    # over deals: A's deal means are 1.0 and 0.5 -> sd 0.3536, se 0.25
    assert a.win_ci == pytest.approx(1.959964 * 0.25)
    assert a.place_ci == pytest.approx(1.959964 * 0.25)
    assert (b.timeouts, b.illegal, b.crashes, b.forfeits, b.protocol) == (1, 1, 1, 1, 0)
    assert (a.timeouts, a.illegal, a.crashes, a.forfeits) == (0, 0, 0, 0)
    assert st.head["A"]["B"] == 3 and st.head["B"]["A"] == 1 and st.met["A"]["B"] == 4
    assert st.played == st.scheduled == 4 and st.complete


def test_confidence_interval_is_over_deals_not_games() -> None:
    """A wins both games of deal 0 and loses both of deal 1: two units of evidence,
    not four, so the interval is wider than a per-game one would be."""
    same = [game(0, 0, "AB", (1, 2), (0, 1)), game(1, 0, "BA", (2, 1), (1, 0)),
            game(2, 1, "AB", (2, 1), (1, 0)), game(3, 1, "BA", (1, 2), (0, 1))]
    a = next(r for r in compute(same, ["A", "B"], 2).rows if r.bot == "A")
    assert a.win_rate == 0.5
    # deal means 1.0 and 0.0: sd 0.7071, se 0.5
    assert a.win_ci == pytest.approx(1.959964 * 0.5)
    # per-game it would have been sd 0.5774, se 0.2887
    independent = [game(i, i, g.seats, g.places, g.points) for i, g in enumerate(same)]
    b = next(r for r in compute(independent, ["A", "B"], 2).rows if r.bot == "A")
    assert b.win_ci == pytest.approx(1.959964 * math.sqrt(1 / 3) / 2)


def test_mean_ci() -> None:
    assert mean_ci([]) == (None, None)
    assert mean_ci([3.0]) == (3.0, None)
    m, h = mean_ci([1, 0, 1, 1])
    assert m == 0.75 and h == pytest.approx(1.959964 * 0.5 / 2)


def test_three_seats_with_a_shared_place() -> None:
    games = [game(0, 0, "ABC", (1, 2, 2), (0, 9, 9)), game(1, 1, "CBA", (1, 2, 3), (0, 4, 20))]
    assert place_points((1, 2, 2), 0) == 2 and place_points((1, 2, 2), 1) == 0.5
    st = compute(games, ["A", "B", "C"], 3)
    rows = {r.bot: r for r in st.rows}
    assert rows["A"].place_points == 2 + 0 and rows["B"].place_points == 0.5 + 1
    assert rows["C"].place_points == 0.5 + 2
    assert rows["C"].avg_place == 1.5 and rows["A"].avg_place == 2.0 and rows["B"].avg_place == 2.0
    # A and B tie on average place and win rate: the rating decides
    assert [r.bot for r in st.rows][0] == "C"
    assert st.head["B"]["C"] == 0.5 + 0 and st.head["C"]["B"] == 0.5 + 1
    assert st.head["A"]["B"] == 1 + 0 and st.met["A"]["B"] == 2
    # the rating is the batch Plackett-Luce fit over both finishing orders (the tie
    # counts half each way), with its bootstrap interval over the 2 deals
    fit = fit_plackett_luce([RatedGame(g.deal, g.seats, g.places) for g in games], list("ABC"))
    for x in "ABC":
        assert rows[x].rating == pytest.approx(fit[x])
        assert rows[x].rating_low <= rows[x].rating <= rows[x].rating_high
    assert rows["C"].rating > rows["B"].rating and rows["C"].rating > rows["A"].rating
    # no game has adjusted scores (no records): ranked by them or not, the rating is
    # fitted to the finishing orders, and the standings say so
    assert st.rating_scores == "raw" and "finishing orders (no game has" in render(st)
    # in any order, the same standings
    again = {r.bot: r for r in compute(games[::-1], ["A", "B", "C"], 3).rows}
    assert again == rows


def test_a_bot_without_games_is_listed_last() -> None:
    st = compute(DUPLICATE, ["A", "B", "Z"], 2, scheduled=10)
    assert st.rows[-1].bot == "Z" and st.rows[-1].games == 0 and st.rows[-1].win_rate is None
    assert not st.complete
    assert "in progress: 4 of 10" in render(st)


def test_renderings() -> None:
    st = compute(DUPLICATE, ["A", "B"], 2)
    plain = render(st, "plain")
    assert "75.0 ± 49.0" in plain and "1.25 ± 0.49" in plain and "3-1" in plain
    assert "win % (95% CI)" in plain and "rating (95% CI)" in plain
    md = render(st, "markdown")
    assert "| rank" in md and "|-" in md
    rows = list(csv.DictReader(io.StringIO(render(st, "csv"))))
    assert rows[0]["bot"] == "A" and float(rows[0]["win_rate"]) == 0.75
    assert rows[1]["forfeits"] == "1"
    data = json.loads(render(st, "json"))
    assert data["standings"][1]["timeouts"] == 1
    assert data["head_to_head"]["A"]["B"] == {"score": 3.0, "games": 4, "significant": False}
    three = compute([game(0, 0, "ABC", (1, 2, 3), (0, 1, 2))], list("ABC"), 3)
    assert "100%" in render(three) and "how often the row bot finished ahead" in render(three)


def test_every_fault_kind_has_its_count_and_the_table_joins_unreadable_messages() -> None:
    games = [game(0, 0, "AB", (1, 2), (0, 10), faults=(
        fault(1, "malformed"), fault(1, "malformed"), fault(1, "oversized"),
        fault(1, "protocol"), fault(0, "timeout")))]
    st = compute(games, ["A", "B"], 2)
    b = next(r for r in st.rows if r.bot == "B")
    assert (b.malformed, b.oversized, b.protocol, b.timeouts) == (2, 1, 1, 0)
    data = json.loads(render(st, "json"))
    row = next(r for r in data["standings"] if r["bot"] == "B")
    assert (row["malformed"], row["oversized"], row["protocol"]) == (2, 1, 1)
    headers, rows = standings_table(st)
    line = dict(zip(headers, next(r for r in rows if r[1] == "B"), strict=True))
    assert (line["malformed"], line["protocol"], line["timeouts"]) == ("3", "1", "0")


def test_head_to_head_marks_significant_cells() -> None:
    # A beats B in every game of 12 deals (both seat orders): significant; against C,
    # A wins one seat order and loses the other: an even score, not significant
    games = []
    for d in range(12):
        games += [game(len(games), d, "AB", (1, 2), (0, 5)), game(len(games) + 1, d, "BA", (2, 1), (5, 0))]
    for d in range(12, 24):
        games += [game(len(games), d, "AC", (1, 2), (0, 5)), game(len(games) + 1, d, "CA", (1, 2), (0, 5))]
    st = compute(games, ["A", "B", "C"], 2)
    assert st.significant["A"]["B"] and st.significant["B"]["A"]
    assert not st.significant["A"]["C"] and not st.significant["C"]["A"]
    text = render(st)
    assert "24-0*" in text and "0-24*" in text and "12-12" in text and "12-12*" not in text
    assert "* significant" in text
    assert json.loads(render(st, "json"))["head_to_head"]["A"]["B"]["significant"] is True
    rows = {r.bot: r for r in st.rows}
    assert rows["A"].rating_low > rows["B"].rating_high  # separated intervals


def test_the_header_says_whether_an_unfinished_tournament_is_being_played(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """An interrupted tournament says it stopped (and how to go on), not 'in
    progress', once no referee is playing it."""
    from referee.tournament.config import parse_config
    from referee.tournament.executor import SerialExecutor
    from referee.tournament.run import run_tournament, standings_of
    from referee.tournament.store import Store

    class Half(SerialExecutor):
        def run(self, job, games, report):  # type: ignore[no-untyped-def]
            super().run(job, list(games)[:2], report)

    cfg = parse_config({"tournament": {"seats": 2, "deals": 2, "seed": 3, "output": "out"},
                        "bots": [{"name": "a", "builtin": "lowest"},
                                 {"name": "b", "builtin": "random"}]}, base_dir=str(tmp_path))
    run_tournament(cfg, executor=Half(), quiet=True)
    out = tmp_path / "out"
    assert "(stopped at 2 of 4: run it again to play the rest)" in render(standings_of(out))
    store = Store.open_existing(out)
    try:
        store.lock()  # as a run playing the rest holds it
        assert "(in progress: 2 of 4)" in render(standings_of(out))
    finally:
        store.close()
    run_tournament(cfg, quiet=True, executor=SerialExecutor())
    assert "stopped" not in render(standings_of(out)) and "progress" not in render(standings_of(out))
