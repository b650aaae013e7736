"""RULES §5: penalty points of the cards still held (hand, 3UP and 3DOWN alike);
``match_scoring`` is accepted as a configuration (§9.4)."""

from __future__ import annotations

from referee.game import GameConfig
from tests.game.position import act, position


def test_card_values() -> None:
    g = position("""
        players 3
        0: hand 4g
        1: hand 1r 10r Cr C+1r | up C+2g | down 3b - 7b
        2: hand 1y
        pile 3y
    """)
    assert g.points(1) == 1 + 10 + 15 + 20 + 25 + 3 + 7
    act(g, "play hand 4x1")
    r = g.result()
    assert r is not None and r.points == (0, 81, 1)


def test_3down_cards_count_so_a_player_down_to_3down_does_not_score_zero() -> None:
    g = position("""
        0: hand 9g
        1: down 2y 3y 4y
        pile 8g
    """)
    act(g, "play hand 9x1")
    r = g.result()
    assert r is not None and r.points == (0, 9) and r.places == (1, 2)


def test_finished_players_hold_zero_points() -> None:
    g = position("""
        players 3
        variants play_out
        0: hand 5g
        1: hand 6g
        2: hand C+2g 9y
    """)
    act(g, "play hand 5x1", "play hand 6x1")
    r = g.result()
    assert r is not None and r.points == (0, 0, 34)


def test_points_are_in_the_result_dict_and_end_event() -> None:
    g = position("""
        0: hand 9g
        1: hand 7r 7b | up Cy
        pile 8g
    """)
    act(g, "play hand 9x1")
    r = g.result()
    assert r is not None
    assert r.to_dict() == {"how": "winner", "places": [1, 2], "points": [0, 29],
                           "finish_order": [0], "turns": 1}
    assert g.events[-1] == ("end", "winner", (1, 2), (0, 29))


def test_match_scoring_configuration_is_accepted() -> None:
    cfg = GameConfig(players=3, variants={"match_scoring"})
    assert cfg.has("match_scoring")
    assert GameConfig.from_dict(cfg.to_dict()) == cfg
