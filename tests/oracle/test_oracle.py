"""The oracle on its own, against the worked examples of protocol/RULES.md §13 and the
rules' own small cases (written from the rules text, before the engine was read)."""

from __future__ import annotations

import pytest

from tests.oracle.rules import Config, Game, OracleError, build_deck


def position(
    config: Config,
    hands: list[list[str]],
    ups: list[list[str]],
    downs: list[list[str | None]],
    pile: list[str],
    draw_pile: list[str],
    to_move: int,
    turn: int,
) -> Game:
    """A game put straight into a position of play (the oracle's state is plain data)."""
    deck = build_deck("standard", 7)
    g = Game(config, deck, first=0, piles=list(range(config.players)))
    for s, st in enumerate(g.seats):
        st.hand, st.up, st.down = list(hands[s]), list(ups[s]), list(downs[s])
        st.chosen = True
    g.pile, g.draw_pile = list(pile), list(draw_pile)
    g.phase, g.events = "play", []
    g.start_turn(turn, to_move)
    g.events = []
    return g


def step(g: Game, decision: str, legal: list[str]) -> list[str]:
    seat = g.deciding_seat()
    assert seat is not None
    assert g.legal() == legal
    before = len(g.events)
    g.apply(seat, decision)
    return [e.text for e in g.events[before:]]


def test_13_1_a_c_plus_2_with_draws() -> None:
    g = position(
        Config(2), [["5r", "5b", "C+2g"], ["2g", "2r", "2b"]],
        [["9g"], ["9r"]], [[None, None, "1g"], [None, "1r", None]],
        ["4y"], ["3p", "3k", "8o"], to_move=0, turn=2,
    )
    assert step(g, "play hand C+2", ["play hand 5x1", "play hand 5x2", "play hand C+2"]) == [
        "play 0 hand C+2g", "clear 0 C+2 2", "extra 0 1"]
    assert step(g, "draw", ["play hand 5x1", "play hand 5x2", "draw"]) == ["draw 0 1 extra 3p"]
    assert g.events[-1].seen_by(1) == "draw 0 1 extra ?"
    assert step(g, "play hand 5x2", ["play hand 3x1", "play hand 5x1", "play hand 5x2"]) == [
        "play 0 hand 5r 5b", "extra 0 0"]
    assert step(g, "draw", ["draw", "pickup"]) == ["draw 0 1 extra 3k"]
    assert step(g, "pickup", ["pickup"]) == ["pickup 0 5r 5b", "turn 3 1"]
    assert g.seats[0].hand == ["3p", "3k", "5r", "5b"]


def test_13_1_under_draw_once_per_clear_no_second_draw() -> None:
    g = position(
        Config(2, frozenset({"draw_once_per_clear"})), [["5r", "5b", "C+2g"], ["2g"]],
        [["9g"], ["9r"]], [[None, None, "1g"], [None, "1r", None]],
        ["4y"], ["3p", "3k", "8o"], to_move=0, turn=2,
    )
    step(g, "play hand C+2", ["play hand 5x1", "play hand 5x2", "play hand C+2"])
    step(g, "draw", ["play hand 5x1", "play hand 5x2", "draw"])
    step(g, "play hand 5x2", ["play hand 3x1", "play hand 5x1", "play hand 5x2"])
    assert g.legal() == ["pickup"]


def test_13_1_grants_add_up_and_the_forced_draw() -> None:
    g = position(
        Config(2), [["5b", "C+1r", "C+2g"], ["2g"]],
        [["9g"], ["9r"]], [[None, None, "1g"], [None, "1r", None]],
        ["4y"], ["3p", "3k", "8o"], to_move=0, turn=2,
    )
    assert step(g, "play hand C+2", ["play hand 5x1", "play hand C+1", "play hand C+2"]) == [
        "play 0 hand C+2g", "clear 0 C+2 2", "extra 0 1"]
    assert step(g, "play hand C+1", ["play hand 5x1", "play hand C+1", "draw"]) == [
        "play 0 hand C+1r", "clear 0 C+1 1", "extra 0 1"]
    assert g.observation(0)["pending_extra"] == 1
    assert step(g, "play hand 5x1", ["play hand 5x1", "draw"]) == ["play 0 hand 5b", "extra 0 0"]
    assert step(g, "draw", ["draw"]) == ["draw 0 1 extra 3p"]
    assert step(g, "pickup", ["pickup"]) == ["pickup 0 5b", "turn 3 1"]


def test_13_2_three_in_a_row_across_players() -> None:
    g = position(
        Config(3), [["4g", "5g", "7g"], ["4r", "5r", "7r"], ["5b", "7b", "7y"]],
        [["9g"], ["9r"], ["9b"]], [["1g", None, None]] * 3,
        [], ["6o", "6p", "6k", "8o"], to_move=0, turn=1,
    )
    assert step(g, "play hand 7x1", ["play hand 4x1", "play hand 5x1", "play hand 7x1"]) == [
        "play 0 hand 7g", "draw 0 1 refill 6o", "turn 2 1"]
    step(g, "play hand 7x1", ["play hand 7x1"])
    obs = g.observation(2)
    assert obs["pile"] == ["7g", "7r"] and obs["pile_run"] == 2
    assert step(g, "play hand 7x1", ["play hand 7x1", "play hand 7x2"]) == [
        "play 2 hand 7b", "clear 2 three 3", "draw 2 1 refill 6k", "turn 4 0"]
    assert g.pile == [] and g.cleared == ["7g", "7r", "7b"]


def test_13_3_a_failed_3down_then_a_c_plus_1_from_3down() -> None:
    g = position(
        Config(2), [[], ["2r"]], [[], []], [["1g", "C+1y", "9b"], [None, None, "2b"]],
        ["6r"], [], to_move=0, turn=9,
    )
    assert step(g, "down 0", ["down 0", "down 1", "down 2"]) == [
        "fail 0 0 1g pile 6r", "turn 10 1"]
    assert g.events[0].seen_by(1) == "fail 0 0 ? pile 6r"
    assert g.seats[0].hand == ["1g", "6r"]
    # Later: seat 0 is down to slots 1 and 2 again, with a pile of 3 cards.
    g.seats[0].hand, g.seats[1].hand = [], []
    g.seats[1].down = [None, "2r", "2b"]
    g.pile = ["1g", "6r"]
    g.start_turn(12, 0)
    assert step(g, "down 1", ["down 1", "down 2"]) == [
        "play 0 3down 1 C+1y", "clear 0 C+1 3", "extra 0 0"]
    assert step(g, "down 2", ["down 2"]) == [
        "play 0 3down 2 9b", "finish 0 1", "end winner places 1 2 points 0 4"]


def test_13_4_ranking_by_points_shares_places() -> None:
    g = position(
        Config(4), [[], ["5y", "C+1b"], ["9g"], []], [[], [], [], []],
        [[None, "3g", "7r"], [None, None, None], [None, None, None], ["10k", None, None]],
        ["8g"], [], to_move=2, turn=30,
    )
    assert step(g, "play hand 9x1", ["play hand 9x1"]) == [
        "play 2 hand 9g", "finish 2 1", "end winner places 2 4 1 2 points 10 25 0 10"]


def test_play_out_places_follow_the_finishing_order() -> None:
    g = position(
        Config(3, frozenset({"play_out"})), [["9g"], ["2g", "2r"], ["3b"]],
        [[], [], []], [[None] * 3] * 3, ["1y"], [], to_move=0, turn=5,
    )
    assert step(g, "play hand 9x1", ["play hand 9x1"]) == ["play 0 hand 9g", "finish 0 1", "turn 6 1"]
    assert step(g, "pickup", ["pickup"]) == ["pickup 1 1y 9g", "turn 7 2"]
    assert step(g, "play hand 3x1", ["play hand 3x1"]) == [
        "play 2 hand 3b", "finish 2 2", "end played_out places 1 3 2 points 0 14 0"]


def test_13_5_four_of_a_colour_swap() -> None:
    g = position(
        Config(2, frozenset({"four_of_a_colour"})), [["5b", "6g", "8g"], ["9k"]],
        [["1r", "2o", "C+1r"], ["9r"]], [["1g", "1b", "1k"], ["2g", "2r", "2b"]],
        ["3g", "4g", "5g"], ["5o", "7o"], to_move=0, turn=4,
    )
    assert step(g, "play hand 6g", ["play hand 5b", "play hand 6g", "play hand 8g"]) == [
        "play 0 hand 6g", "colour 0"]
    assert g.observation(0)["phase"] == "swap"
    swaps = [f"swap {u} {h}" for u in ["1r", "2o", "C+1r"] for h in ["5b", "8g"]]
    assert step(g, "swap C+1r 8g", swaps + ["keep"]) == [
        "swap 0 C+1r 8g", "draw 0 1 refill 5o", "turn 5 1"]
    assert g.seats[0].up == ["1r", "2o", "8g"]
    assert g.seats[0].hand == ["5b", "5o", "C+1r"]


def test_four_of_a_colour_lists_every_subset_and_top_card() -> None:
    g = position(
        Config(2, frozenset({"four_of_a_colour"})), [["7g", "7r", "7b"], ["9k"]],
        [["1r"], ["9r"]], [["1g", None, None], ["2g", None, None]],
        [], ["5o"], to_move=0, turn=4,
    )
    tops = ["7g", "7r", "7b", "7r 7g", "7g 7r", "7b 7g", "7g 7b", "7b 7r", "7r 7b",
            "7r 7b 7g", "7g 7b 7r", "7g 7r 7b"]
    assert g.legal() == [f"play hand {t}" for t in tops]


def test_may_decline_only_as_a_first_action_with_a_play() -> None:
    g = position(
        Config(2, frozenset({"may_decline"})), [["5b", "C+1g"], ["9k"]],
        [["1r"], ["9r"]], [["1g", None, None], ["2g", None, None]],
        ["6y"], ["5o", "4o"], to_move=0, turn=4,
    )
    assert g.legal() == ["play hand C+1", "decline"]
    step(g, "play hand C+1", ["play hand C+1", "decline"])
    assert g.legal() == ["play hand 5x1", "draw"]
    g2 = position(
        Config(2, frozenset({"may_decline"})), [["5b"], ["9k"]],
        [["1r"], ["9r"]], [["1g", None, None], ["2g", None, None]],
        ["6y"], ["5o", "4o"], to_move=0, turn=4,
    )
    assert g2.legal() == ["pickup"]
    g3 = position(
        Config(2, frozenset({"may_decline"})), [["7b"], ["9k"]],
        [["1r"], ["9r"]], [["1g", None, None], ["2g", None, None]],
        ["6y"], ["5o", "4o"], to_move=0, turn=4,
    )
    assert step(g3, "decline", ["play hand 7x1", "decline"]) == [
        "draw 0 1 decline 5o", "turn 5 1"]
    assert g3.seats[0].hand == ["5o", "7b"]


def test_ones_reverse_with_three_players() -> None:
    g = position(
        Config(3, frozenset({"ones_reverse"})), [["1g", "1r", "5g"], ["9k"], ["8k"]],
        [["1b"], ["9r"], ["9b"]], [["1y", None, None]] * 3,
        [], ["5o", "4o"], to_move=0, turn=4,
    )
    assert step(g, "play hand 1x2", ["play hand 1x1", "play hand 1x2", "play hand 5x1"]) == [
        "play 0 hand 1g 1r", "reverse -1", "draw 0 2 refill 5o 4o", "turn 5 2"]


def test_the_turn_limit_ranks_by_points() -> None:
    g = position(
        Config(2, turn_limit=5), [["2g"], ["9k"]], [["1r"], ["9r"]],
        [["1g", None, None], ["2r", None, None]], ["6y"], [], to_move=0, turn=5,
    )
    assert step(g, "pickup", ["pickup"]) == [
        "pickup 0 6y", "end turn_limit places 1 2 points 10 20"]


def test_dealing_and_setup() -> None:
    deck = build_deck("standard", 2)
    g = Game(Config(2, frozenset({"choose_for_others"})), deck, first=1)
    assert [st.down for st in g.seats] == [["1g", "3g", "5g"], ["2g", "4g", "6g"]]
    assert g.seats[0].dealt == ["1r", "3r", "5r", "7g", "9g", "Cg"]  # display order
    assert len(g.legal(0)) == 20 and len(g.legal(1)) == 20
    g.apply(0, g.legal(0)[0])
    assert g.observation(0)["choice"] == ["1r", "3r", "5r"]
    g.apply(1, g.legal(1)[-1])
    assert g.seats[1].up == ["1r", "3r", "5r"]
    assert g.seats[0].hand == ["7g", "9g", "Cg"]
    assert g.events[-1].text == "turn 1 1"
    assert g.draw_pile == deck[18:]


def test_a_deck_too_small_is_refused() -> None:
    with pytest.raises(OracleError):
        Game(Config(3), build_deck("standard", 2), first=0)
    assert len(build_deck("alternative")) == 74 and len(build_deck()) == 84
