"""RULES §3: a turn -- sources (§3.1), what may be played (§3.2), 3DOWN cards (§3.3),
cannot play (§3.4), clearing (§3.5), extra actions (§3.6), the end-of-turn draw
(§3.7) and the next player (§3.8).  Positions are written in ``position.py``'s
notation."""

from __future__ import annotations

import pytest

from referee.game import IllegalDecision
from tests.game.position import act, event_texts, legal_texts, position, render, texts

# --- §3.1 where a player plays from -------------------------------------------------


def test_hand_first_even_when_3up_could_play() -> None:
    g = position("""
        0: hand 4g | up Cg 9r 9b | down 1g 1r 1b
        1: hand 2y
        pile 6g
        draw 3y
    """)
    assert legal_texts(g) == ["pickup"]  # 3UP cards are not a source yet


def test_3up_only_when_hand_and_draw_pile_are_empty() -> None:
    g = position("""
        0: up 4g 9r 9b | down 1g 1r 1b
        1: hand 2y
        pile 6g
    """)
    assert legal_texts(g) == ["play 3up 9x1", "play 3up 9x2"]


def test_3down_only_when_hand_3up_and_draw_pile_are_empty() -> None:
    g = position("""
        0: down 1g 1r 1b
        1: hand 2y
        pile 6g
    """)
    assert legal_texts(g) == ["down 0", "down 1", "down 2"]


def test_hand_empty_but_draw_pile_not_forces_a_draw() -> None:
    # Only reachable during extra actions (RULES §3.6: the forced draw).
    g = position("""
        extra 0
        0: up 4g 9r 9b | down 1g 1r 1b
        1: hand 2y
        draw 3y 5y
    """)
    assert legal_texts(g) == ["draw"]
    act(g, "draw")
    assert texts(g.hand(0)) == "3y"
    assert legal_texts(g) == ["play hand 3x1"]


# --- §3.2 what may be played ---------------------------------------------------------


def test_equal_or_higher_number_and_any_count_of_copies() -> None:
    g = position("""
        0: hand 5g 7g 7r 7b 8y Cr
        1: hand 2y
        pile 7y
        draw 3y
    """)
    assert legal_texts(g) == ["play hand 7x1", "play hand 7x2", "play hand 7x3",
                              "play hand 8x1", "play hand C"]


def test_any_number_on_an_empty_pile() -> None:
    g = position("""
        0: hand 1g 1r 10g C+2g
        1: hand 2y
        draw 3y
    """)
    assert legal_texts(g) == ["play hand 1x1", "play hand 1x2", "play hand 10x1",
                              "play hand C+2"]


def test_specials_are_played_one_at_a_time() -> None:
    g = position("""
        0: hand Cg Cr C+1r C+1b
        1: hand 2y
        pile 9y
        draw 3y
    """)
    assert legal_texts(g) == ["play hand C", "play hand C+1"]
    with pytest.raises(IllegalDecision, match="one at a time") as e:
        g.apply(0, "play hand Cg Cr")
    assert e.value.rule == "RULES §3.2"


def test_3up_multiple_copies_and_specials() -> None:
    g = position("""
        0: up 6g 6r C+1b | down 1g 1r 1b
        1: hand 2y
        pile 5y
    """)
    assert legal_texts(g) == ["play 3up 6x1", "play 3up 6x2", "play 3up C+1"]
    act(g, "play 3up 6x2")
    assert texts(g.pile) == "5y 6g 6r" and texts(g.up[0]) == "C+1b"
    assert g.to_move == 1


def test_must_play_when_a_play_exists() -> None:
    g = position("""
        0: hand 3g 9g
        1: hand 2y
        pile 8y
        draw 3y
    """)
    assert "pickup" not in legal_texts(g)
    with pytest.raises(IllegalDecision, match="only when you have no legal play") as e:
        g.apply(0, "pickup")
    assert e.value.rule == "RULES §3.4"


def test_a_play_moves_exactly_the_cards_played() -> None:
    g = position("""
        0: hand 7g 7r 7b 9y
        1: hand 2y
        pile 4y
        draw 3y 3b 3k
    """)
    act(g, "play hand 7x2")
    assert texts(g.pile) == "4y 7g 7r"  # the first copies in colour order
    assert texts(g.hand(0)) == "3y 7b 9y"
    assert event_texts(g) == ["play 0 hand 7g 7r", "draw 0 1 refill 3y", "turn 2 1"]


# --- §3.3 playing a 3DOWN card -------------------------------------------------------


def test_3down_success_is_played_like_a_hand_card() -> None:
    g = position("""
        0: down 2g 9g 4r
        1: hand 2y 3y
        pile 8y
    """)
    act(g, "down 1")
    assert texts(g.pile) == "8y 9g"
    assert [c is None for c in g.down[0]] == [False, True, False]
    assert event_texts(g) == ["play 0 3down 1 9g", "turn 2 1"]
    assert event_texts(g, 1) == event_texts(g)  # a played 3DOWN card is public


def test_3down_failure_picks_up_pile_and_card_and_ends_the_turn() -> None:
    g = position("""
        0: down 2g 9g 4r
        1: hand 2y 3y
        pile 5y 8y
    """)
    act(g, "down 0")
    assert texts(g.hand(0)) == "2g 5y 8y"
    assert g.pile == [] and g.to_move == 1
    assert event_texts(g, None) == ["fail 0 0 2g pile 5y 8y", "turn 2 1"]
    # Only the player learns the card; the others see that a 3DOWN card failed.
    assert event_texts(g, 0)[0] == "fail 0 0 2g pile 5y 8y"
    assert event_texts(g, 1)[0] == "fail 0 0 ? pile 5y 8y"
    assert event_texts(g, -1)[0] == "fail 0 0 ? pile 5y 8y"
    obs1 = g.observation(1)
    assert obs1["seats"][0]["hand"] == 3 and obs1["seats"][0]["down"] == [1, 2]
    assert "'2g'" not in str(obs1)


def test_3down_slot_keeps_its_number() -> None:
    g = position("""
        0: down 2g - 4r
        1: hand 2y 3y
        pile 3b
    """)
    assert legal_texts(g) == ["down 0", "down 2"]
    with pytest.raises(IllegalDecision, match="slot 1 holds no card") as e:
        g.apply(0, "down 1")
    assert e.value.rule == "RULES §3.3"


def test_3down_special_takes_effect_and_its_extra_action_turns_another() -> None:
    # RULES §3.3 Ruling: one 3DOWN card per action; the extra action a clear grants is
    # a new action, in which another one is turned.
    g = position("""
        0: down C+1o 9g 4r
        1: hand 2y 3y
        pile 10y 10b
    """)
    act(g, "down 0")
    assert g.pile == [] and g.to_move == 0 and g.in_extra
    assert event_texts(g) == ["play 0 3down 0 C+1o", "clear 0 C+1 3", "extra 0 0"]
    assert legal_texts(g) == ["down 1", "down 2"]
    act(g, "down 2")
    assert texts(g.pile) == "4r" and g.to_move == 1


def test_3down_numbered_success_ends_the_action() -> None:
    g = position("""
        0: down 2g 9g 4r
        1: hand 2y 3y
        pile 3b
    """)
    act(g, "down 2")
    assert g.to_move == 1
    with pytest.raises(IllegalDecision, match="turn") as e:
        g.apply(0, "down 1")  # a second 3DOWN card in the same turn
    assert e.value.rule == "RULES §8"


def test_only_3down_left_always_turns_never_picks_up() -> None:
    g = position("""
        0: down 2g 3g 4r
        1: hand 2y 3y
        pile 10b
    """)
    assert legal_texts(g) == ["down 0", "down 1", "down 2"]
    with pytest.raises(IllegalDecision):
        g.apply(0, "pickup")


def test_3down_failure_during_extra_actions_loses_them() -> None:
    g = position("""
        extra 1
        0: down 2g 3g 4r
        1: hand 2y 3y
        pile 10b
    """)
    act(g, "down 0")
    assert g.to_move == 1 and g.pending == 0 and not g.in_extra
    assert texts(g.hand(0)) == "2g 10b"


# --- §3.4 cannot play ---------------------------------------------------------------


def test_no_legal_play_picks_up_the_whole_pile_and_ends_the_turn_without_draw() -> None:
    g = position("""
        0: hand 3g
        1: hand 2y 3y
        pile 5r 9b 9y
        draw 4y 4b 4k
    """)
    assert legal_texts(g) == ["pickup"]
    act(g, "pickup")
    assert texts(g.hand(0)) == "3g 5r 9b 9y"
    assert g.pile == [] and g.to_move == 1
    assert event_texts(g) == ["pickup 0 5r 9b 9y", "turn 2 1"]  # no end-of-turn draw
    assert len(g.draw_pile) == 3


def test_pick_up_draws_nothing_even_below_three_cards() -> None:
    g = position("""
        0: hand 3g
        1: hand 2y 3y
        pile 9b
        draw 4y 4b 4k
    """)
    act(g, "pickup")
    assert texts(g.hand(0)) == "3g 9b" and len(g.draw_pile) == 3
    assert event_texts(g) == ["pickup 0 9b", "turn 2 1"]


def test_3up_cannot_play_picks_up() -> None:
    g = position("""
        0: up 3g 4g | down 1g 1r 1b
        1: hand 2y 3y
        pile 9b
    """)
    assert legal_texts(g) == ["pickup"]
    act(g, "pickup")
    assert texts(g.hand(0)) == "9b" and texts(g.up[0]) == "3g 4g"


# --- §3.5 clearing the pile ---------------------------------------------------------


@pytest.mark.parametrize("special", ["C", "C+1", "C+2"])
def test_a_special_clears_the_pile_and_leaves_the_game_with_it(special: str) -> None:
    card = {"C": "Cr", "C+1": "C+1r", "C+2": "C+2g"}[special]
    g = position(f"""
        0: hand 3g {card} 5b 6b
        1: hand 2y 3y
        pile 9r 10b
        draw 4y 4b 4k
        out 1k
    """)
    act(g, f"play hand {special}")
    assert g.pile == [] and set(texts(g.out).split()) >= {"1k", "9r", "10b", card}
    assert event_texts(g)[:2] == [f"play 0 hand {card}", f"clear 0 {special} 3"]
    assert len(g.draw_pile) == 3  # cleared cards are never reshuffled


def test_three_of_a_number_at_once_clears() -> None:
    g = position("""
        0: hand 7g 7r 7b 2g
        1: hand 2y 3y
        pile 5b
        draw 4y 4b 4k
    """)
    act(g, "play hand 7x3")
    assert g.pile == [] and g.to_move == 1 and not g.in_extra
    # Like a Clear card: no extra action, the turn ends with the end-of-turn draw.
    assert event_texts(g) == ["play 0 hand 7g 7r 7b", "clear 0 three 4",
                              "draw 0 2 refill 4y 4b", "turn 2 1"]


def test_three_in_a_row_across_plays_and_players_clears() -> None:
    g = position("""
        players 3
        0: hand 7g 9g
        1: hand 7r 9r
        2: hand 7b 9b
        draw 2y 3y 4y 5y 6y 8y
    """)
    act(g, "play hand 7x1", "play hand 7x1")
    assert texts(g.pile) == "7g 7r" and g.run == 2
    act(g, "play hand 7x1")
    assert g.pile == [] and "clear 2 three 3" in event_texts(g)


def test_two_on_two_clears_with_four_and_a_break_resets_the_count() -> None:
    g = position("""
        0: hand 7g 7r 8g 8r
        1: hand 7b 7y 8b
        draw 2y 3y 4y 5y 6y 8y
    """)
    act(g, "play hand 7x2", "play hand 7x2")
    assert "clear 1 three 4" in event_texts(g)
    g = position("""
        0: hand 7g 7r 8g
        1: hand 7b 8b 9b
        pile 7y
        draw 2y 3y 4y 5y 6y 8y
    """)
    act(g, "play hand 8x1", "play hand 8x1")
    assert texts(g.pile) == "7y 8g 8b" and g.run == 2  # the 7 below does not count


def test_three_clear_counts_only_numbers_in_a_row_at_the_top() -> None:
    g = position("""
        0: hand 7g 10g
        1: hand 2y 3y
        pile 7b 7r 8y
        draw 2k 3k 4k
    """)
    assert g.run == 1
    act(g, "play hand 10x1")
    assert texts(g.pile) == "7b 7r 8y 10g"


# --- §3.6 extra actions ------------------------------------------------------------


def test_c_grants_nothing_and_the_turn_ends() -> None:
    g = position("""
        0: hand Cg 3g 4g 5g
        1: hand 2y 3y
        pile 9y
        draw 4y 4b
    """)
    act(g, "play hand C")
    assert g.to_move == 1 and g.pending == 0
    assert event_texts(g) == ["play 0 hand Cg", "clear 0 C 2", "turn 2 1"]  # holds 3: no draw


def test_c_plus_1_grants_one_extra_action() -> None:
    g = position("""
        0: hand C+1o 3g 4g 5g
        1: hand 2y 3y
        pile 9y
        draw 4y 4b
    """)
    act(g, "play hand C+1")
    assert g.to_move == 0 and g.in_extra and g.pending == 0
    assert event_texts(g)[-1] == "extra 0 0"
    obs = g.observation(1)
    assert obs["extra_action"] is True and obs["pending_extra"] == 0 and obs["to_move"] == 0
    act(g, "play hand 3x1")
    assert g.to_move == 1 and not g.in_extra


def test_c_plus_2_grants_two_extra_actions() -> None:
    g = position("""
        0: hand C+2g 3g 4g 5g
        1: hand 2y 3y
        draw 4y 4b
    """)
    act(g, "play hand C+2")
    assert (g.in_extra, g.pending) == (True, 1)
    act(g, "play hand 3x1")
    assert (g.to_move, g.in_extra, g.pending) == (0, True, 0)
    assert event_texts(g)[-1] == "extra 0 0"
    act(g, "play hand 4x1")
    assert g.to_move == 1


def test_grants_add_up() -> None:
    # RULES §3.6 Ruling: C+2, then C+1 as its first extra action, leaves two pending.
    g = position("""
        0: hand C+2g C+1r 3g 4g 5g
        1: hand 2y 3y
        draw 4y 4b 4k 6k 7k
    """)
    act(g, "play hand C+2", "play hand C+1")
    assert event_texts(g)[-1] == "extra 0 1"
    assert (g.in_extra, g.pending) == (True, 1)
    act(g, "play hand 3x1", "play hand 4x1")
    assert g.to_move == 1


def test_c_during_extra_actions_grants_and_removes_nothing() -> None:
    g = position("""
        0: hand C+2g Cr 3g 4g 5g
        1: hand 2y 3y
        draw 4y 4b 4k 6k 7k
    """)
    act(g, "play hand C+2", "play hand C")
    assert (g.to_move, g.in_extra, g.pending) == (0, True, 0)


def test_three_clear_during_extra_actions_grants_and_removes_nothing() -> None:
    g = position("""
        0: hand C+2g 7g 7r 7b 5g
        1: hand 2y 3y
        draw 4y 4b 4k 6k 7k
    """)
    act(g, "play hand C+2", "play hand 7x3")
    assert "clear 0 three 3" in event_texts(g)
    assert (g.to_move, g.in_extra, g.pending) == (0, True, 0)


def test_optional_draw_before_every_extra_action() -> None:
    g = position("""
        0: hand C+2g 3g 4g 5g
        1: hand 2y 3y
        draw 6y 6b 6k
    """)
    act(g, "play hand C+2")
    assert legal_texts(g)[-1] == "draw"
    act(g, "draw")
    assert "draw" not in legal_texts(g)  # one draw per extra action
    assert texts(g.hand(0)) == "3g 4g 5g 6y"
    assert event_texts(g)[-1] == "draw 0 1 extra 6y"
    assert event_texts(g, 1)[-1] == "draw 0 1 extra ?"
    assert g.observation(0)["drawn"] is True
    act(g, "play hand 3x1")
    # Before the second extra action too (it follows a numbered card).
    assert legal_texts(g) == ["play hand 4x1", "play hand 5x1", "play hand 6x1", "draw"]
    assert g.observation(0)["drawn"] is False


def test_no_optional_draw_when_the_draw_pile_is_empty() -> None:
    g = position("""
        0: hand C+1o 3g 4g 5g
        1: hand 2y 3y
    """)
    act(g, "play hand C+1")
    assert "draw" not in legal_texts(g)
    with pytest.raises(IllegalDecision, match="draw pile is empty") as e:
        g.apply(0, "draw")
    assert e.value.rule == "RULES §8"


def test_forced_draw_when_the_hand_empties_during_extra_actions() -> None:
    g = position("""
        0: hand C+1o | up 9g 9r 9b | down 1g 1r 1b
        1: hand 2y 3y
        draw 6y 6b
    """)
    act(g, "play hand C+1")
    assert legal_texts(g) == ["draw"]
    with pytest.raises(IllegalDecision, match="must draw") as e:
        g.apply(0, "play 3up 9x1")
    assert e.value.rule == "RULES §3.6"
    act(g, "draw", "play hand 6x1")
    assert g.to_move == 1 and texts(g.hand(0)) == "6b"  # refilled from what was left


def test_extra_action_cannot_be_passed() -> None:
    g = position("""
        0: hand C+1o 3g
        1: hand 2y 3y
        draw 6y
    """)
    act(g, "play hand C+1")
    assert legal_texts(g) == ["play hand 3x1", "draw"]
    with pytest.raises(IllegalDecision, match="cannot be passed") as e:
        g.apply(0, "pickup")
    assert e.value.rule == "RULES §3.4"
    with pytest.raises(IllegalDecision):
        g.apply(0, "pass")


def test_stuck_in_an_extra_action_may_draw_then_picks_up() -> None:
    # The second extra action of a C+2 follows a numbered play: maybe nothing fits.
    g = position("""
        0: hand C+2g 9g 3g 4g
        1: hand 2y 3y
        draw 5y 6y 7y
    """)
    act(g, "play hand C+2", "play hand 9x1")
    assert legal_texts(g) == ["draw", "pickup"]
    act(g, "draw")
    assert texts(g.hand(0)) == "3g 4g 5y"
    assert legal_texts(g) == ["pickup"]
    act(g, "pickup")
    assert g.to_move == 1 and g.pending == 0 and not g.in_extra
    assert texts(g.hand(0)) == "3g 4g 5y 9g"
    assert event_texts(g)[-2:] == ["pickup 0 9g", "turn 2 1"]  # no end-of-turn draw


def test_stuck_in_an_extra_action_drawn_card_may_save_it() -> None:
    g = position("""
        0: hand C+2g 9g 3g 4g
        1: hand 2y 3y
        draw 10y 6y 7y
    """)
    act(g, "play hand C+2", "play hand 9x1", "draw")
    assert legal_texts(g) == ["play hand 10x1"]


def test_stuck_with_lost_extra_actions() -> None:
    # Pending extra actions are lost when picking up (RULES §3.4).
    g = position("""
        extra 1
        0: hand 3g 4g
        1: hand 2y 3y
        pile 9g
    """)
    assert legal_texts(g) == ["pickup"]
    act(g, "pickup")
    assert g.to_move == 1 and g.pending == 0


def test_extra_actions_from_3up() -> None:
    g = position("""
        0: up C+1o 4g 8g | down 1g 1r 1b
        1: hand 2y 3y
        pile 9y
    """)
    act(g, "play 3up C+1")
    assert legal_texts(g) == ["play 3up 4x1", "play 3up 8x1"]
    act(g, "play 3up 4x1")
    assert g.to_move == 1


# --- §3.7 end of turn -------------------------------------------------------------


def test_end_of_turn_draws_up_to_three() -> None:
    g = position("""
        0: hand 7g 7r 9g
        1: hand 2y 3y
        pile 5b
        draw 4y 4b 4k 6y
    """)
    act(g, "play hand 7x2")
    assert event_texts(g)[1] == "draw 0 2 refill 4y 4b"
    assert g.hand_n[0] == 3 and texts(reversed(g.draw_pile)) == "4k 6y"


def test_end_of_turn_draw_stops_when_the_draw_pile_runs_out() -> None:
    g = position("""
        0: hand 7g 7r 9g
        1: hand 2y 3y
        draw 4y
    """)
    act(g, "play hand 7x2")
    assert event_texts(g)[1] == "draw 0 1 refill 4y"
    assert g.hand_n[0] == 2 and g.draw_pile == []


def test_more_than_three_cards_draws_nothing() -> None:
    g = position("""
        0: hand 7g 8r 9g 10g 10r
        1: hand 2y 3y
        draw 4y
    """)
    act(g, "play hand 7x1")
    assert event_texts(g) == ["play 0 hand 7g", "turn 2 1"]


def test_end_of_turn_draw_after_extra_actions_only() -> None:
    g = position("""
        0: hand C+1o 3g 4g
        1: hand 2y 3y
        draw 5y 6y 7y
    """)
    act(g, "play hand C+1")
    assert len(g.draw_pile) == 3  # no draw between actions (unless chosen)
    act(g, "play hand 3x1")
    assert event_texts(g)[-2:] == ["draw 0 2 refill 5y 6y", "turn 2 1"]


# --- §3.8 next player ---------------------------------------------------------------


def test_play_passes_clockwise() -> None:
    g = position("""
        players 4
        to_move 3
        0: hand 8g 9g
        1: hand 8r 9r
        2: hand 8b 9b
        3: hand 3y 4y
    """)
    for expect in (0, 1, 2, 3):
        act(g, legal_texts(g)[0])
        assert g.to_move == expect


def test_next_player_skips_finished_players() -> None:
    g = position("""
        players 4
        variants play_out
        finished 1
        0: hand 8g 9g
        1:
        2: hand 8b 9b
        3: hand 3y 4y
    """)
    act(g, "play hand 8x1")
    assert g.to_move == 2 and event_texts(g)[-1] == "turn 2 2"


def test_render_round_trips_the_notation() -> None:
    text = """players 3
variants draw_once_per_clear four_of_a_colour
turn 7
to_move 1
direction -1
extra 1 drawn nodraw
finished 2
0: hand 3g 3r C+1b | up 10g | down 1g - 2y
1: hand 8y | down - - 4k
2:
pile 5g 6g 6r
draw 9k 1k"""
    g = position(text)
    assert render(g) == text
    assert g.run == 2 and g.top == 6 and g.crun == 1


def test_a_3down_card_completes_three_of_a_number() -> None:
    g = position("""
        0: down 7b 2g 3g
        1: hand 2y 3y
        pile 5r 7g 7r
    """)
    act(g, "down 0")
    assert event_texts(g)[:2] == ["play 0 3down 0 7b", "clear 0 three 4"]
    assert g.pile == [] and g.to_move == 1
