"""RULES §4: finishing, the winner, places (competition ranking), ``play_out`` and
the turn limit."""

from __future__ import annotations

from referee.game import Game, GameConfig
from referee.game.state import competition_ranks
from tests.game.position import act, event_texts, position


def test_first_to_finish_wins_and_the_game_stops() -> None:
    g = position("""
        players 3
        0: down - - 9g
        1: hand 2y 3y
        2: hand 10b | up 5b
        pile 4r
    """)
    act(g, "down 2")
    assert g.over and g.to_decide() == () and g.legal(0) == []
    r = g.result()
    assert r is not None and r.how == "winner" and r.finish_order == (0,)
    assert r.points == (0, 5, 15)
    assert r.places == (1, 2, 3)
    assert event_texts(g)[-2:] == ["finish 0 1", "end winner places 1 2 3 points 0 5 15"]
    assert g.observation(1)["phase"] == "over" and g.observation(1)["to_move"] is None


def test_places_share_equal_points_with_competition_ranking() -> None:
    # RULES §4 example: points 10, 10, 25 after the winner give places 2, 2, 4.
    g = position("""
        players 4
        0: hand 10g
        1: hand 10r
        2: up 10b | down 5b 5y 5k
        3: hand 7g
        pile 9g
    """)
    act(g, "play hand 10x1")
    r = g.result()
    assert r is not None and r.points == (0, 10, 25, 7)
    assert r.places == (1, 3, 4, 2)
    assert competition_ranks([10, 10, 25], start=2) == [2, 2, 4]
    assert competition_ranks([5, 5, 5]) == [1, 1, 1]


def test_pending_extra_actions_lapse_on_finishing() -> None:
    g = position("""
        variants play_out
        players 3
        0: hand C+2g
        1: hand 2y 3y
        2: hand 4y
    """)
    act(g, "play hand C+2")
    assert g.finished == [0] and g.pending == 0 and not g.in_extra
    assert g.to_move == 1 and event_texts(g)[-2:] == ["finish 0 1", "turn 2 1"]


def test_finishing_from_3down_on_a_clear() -> None:
    g = position("""
        0: down C+1o - -
        1: hand 2y 3y
        pile 9b
    """)
    act(g, "down 0")
    r = g.result()
    assert r is not None and r.how == "winner" and r.places == (1, 2)
    assert event_texts(g)[:3] == ["play 0 3down 0 C+1o", "clear 0 C+1 2", "finish 0 1"]


def test_play_out_ranks_by_finishing_order() -> None:
    g = position("""
        players 3
        variants play_out
        0: hand 4g
        1: hand 5g
        2: hand 9g 9r
    """)
    act(g, "play hand 4x1")
    assert not g.over and g.finished == [0] and g.to_move == 1
    act(g, "play hand 5x1")
    r = g.result()
    assert r is not None and r.how == "played_out"
    assert r.finish_order == (0, 1) and r.places == (1, 2, 3) and r.points == (0, 0, 18)
    assert g.observation(2)["seats"][1]["finished"] == 2


def test_play_out_last_player_is_last_even_with_few_points() -> None:
    g = position("""
        players 3
        variants play_out
        finished 1
        0: hand 10g
        1:
        2: hand 1r
        pile 9g
    """)
    act(g, "play hand 10x1")
    r = g.result()
    assert r is not None and r.places == (2, 1, 3) and r.finish_order == (1, 0)


def test_turn_limit_ends_the_game_ranked_by_points() -> None:
    # RULES §4 Ruling: the game ends when turn `turn_limit` ends without a natural end.
    g = position("""
        turn_limit 5
        turn 4
        0: hand 3g
        1: hand 2y 2r
        pile 9r
    """)
    act(g, "pickup")
    assert not g.over and g.turn == 5
    act(g, "play hand 2x1")
    r = g.result()
    assert r is not None and r.how == "turn_limit" and r.turns == 5
    assert r.points == (12, 2) and r.places == (2, 1) and r.finish_order == ()
    assert event_texts(g)[-2:] == ["play 1 hand 2r", "end turn_limit places 2 1 points 12 2"]


def test_natural_end_on_the_last_turn_is_not_a_turn_limit() -> None:
    g = position("""
        turn_limit 5
        turn 5
        0: hand 3g
        1: hand 2y 2r
    """)
    act(g, "play hand 3x1")
    r = g.result()
    assert r is not None and r.how == "winner"


def test_turn_limit_counts_whole_turns_from_one() -> None:
    for limit in (1, 2, 7):
        g = Game(GameConfig(players=3, turn_limit=limit), seed=4)
        for s in range(3):
            g.apply(s, g.legal(s)[0])
        turns = 0
        while not g.over:
            (s,) = g.to_decide()
            g.apply(s, g.legal(s)[0])
            turns = g.turn
        r = g.result()
        assert r is not None and r.turns == turns
        assert r.how == "turn_limit" and turns == limit
        assert sum(1 for e in g.events if e[0] == "turn") == limit


def test_play_out_turn_limit_ranks_finished_first_then_by_points() -> None:
    g = position("""
        players 4
        variants play_out
        turn_limit 9
        turn 9
        finished 2
        0: hand 3g
        1: hand 2y 2r 10b
        2:
        3: hand 9k 9b
        pile 9r
    """)
    act(g, "pickup")
    r = g.result()
    assert r is not None and r.how == "turn_limit"
    assert r.points == (12, 14, 0, 18) and r.places == (2, 3, 1, 4)
