"""RULES §9: the variants, each off by default and switched on by name."""

from __future__ import annotations

from collections import Counter

import pytest

from referee.game import VARIANTS, ConfigError, Game, GameConfig
from tests.game.position import (
    act,
    all_cards,
    cards,
    deal_deck,
    event_texts,
    legal_texts,
    position,
    texts,
)

# --- configuration -------------------------------------------------------------------


def test_every_variant_is_off_by_default_and_accepted_by_name() -> None:
    assert GameConfig().variants == frozenset()
    assert set(VARIANTS) == {"play_out", "may_decline", "ones_reverse", "match_scoring",
                             "swap_piles", "four_of_a_colour", "choose_for_others",
                             "draw_once_per_clear"}
    for v in VARIANTS:
        cfg = GameConfig(players=3, variants={v})
        assert cfg.has(v) and GameConfig.from_dict(cfg.to_dict()) == cfg
    cfg = GameConfig(players=4, variants=set(VARIANTS))
    assert cfg.variants == frozenset(VARIANTS)


def test_unknown_variant_is_refused() -> None:
    with pytest.raises(ConfigError, match="unknown variant"):
        GameConfig(variants={"jokers"})
    with pytest.raises(ConfigError, match="unknown configuration key"):
        GameConfig.from_dict({"players": 2, "speed": 3})


# --- §9.1 play_out -------------------------------------------------------------------


def test_play_out_continues_after_the_winner() -> None:
    g = position("""
        players 3
        variants play_out
        0: hand 4g
        1: hand 5g 6g
        2: hand 9g 9r
    """)
    act(g, "play hand 4x1")
    assert not g.over and g.to_decide() == (1,)
    g2 = position("""
        players 3
        0: hand 4g
        1: hand 5g 6g
        2: hand 9g 9r
    """)
    act(g2, "play hand 4x1")
    assert g2.over


# --- §9.2 may_decline --------------------------------------------------------------

DECLINE = """
    variants may_decline
    0: hand 7g 8g
    1: hand 2y
    pile 5r
    draw 4k 6k
"""


def test_may_decline_draws_one_card_and_ends_the_turn() -> None:
    g = position(DECLINE)
    assert legal_texts(g) == ["play hand 7x1", "play hand 8x1", "decline"]
    act(g, "decline")
    assert texts(g.hand(0)) == "4k 7g 8g" and g.to_move == 1
    assert texts(g.pile) == "5r"
    # One card, no end-of-turn draw.
    assert event_texts(g) == ["draw 0 1 decline 4k", "turn 2 1"]
    assert event_texts(g, 1)[0] == "draw 0 1 decline ?"


def test_may_decline_not_offered_without_a_legal_play_or_draw_pile_or_in_extras() -> None:
    g = position(DECLINE.replace("pile 5r", "pile 9r"))
    assert legal_texts(g) == ["pickup"]
    g = position(DECLINE.replace("draw 4k 6k", ""))
    assert "decline" not in legal_texts(g)
    g = position("extra 0\n" + DECLINE)
    assert "decline" not in legal_texts(g)
    g = position(DECLINE.replace("variants may_decline", ""))
    assert "decline" not in legal_texts(g)


# --- §9.3 ones_reverse ---------------------------------------------------------------

REVERSE = """
    players 4
    variants ones_reverse
    0: hand 1g 1r 5g
    1: hand 2y 3y
    2: hand 2k 3k
    3: hand 2b 3b
    draw 4k 6k 7k 8k
"""


def test_a_1_reverses_the_direction_at_once() -> None:
    g = position(REVERSE)
    act(g, "play hand 1x1")
    assert g.direction == -1 and g.to_move == 3
    assert event_texts(g)[:2] == ["play 0 hand 1g", "reverse -1"]
    assert g.observation(2)["direction"] == -1
    act(g, "play hand 2x1")
    assert g.to_move == 2


def test_several_1s_reverse_once_per_play() -> None:
    g = position(REVERSE)
    act(g, "play hand 1x2")
    assert g.direction == -1 and g.to_move == 3
    assert sum(1 for t in event_texts(g) if t.startswith("reverse")) == 1


def test_two_1_plays_reverse_back() -> None:
    g = position(REVERSE.replace("3: hand 2b 3b", "3: hand 1b 3b"))
    act(g, "play hand 1x1")
    assert g.to_move == 3
    act(g, "play hand 1x1")
    assert g.direction == 1 and g.to_move == 0


def test_1_from_3up_and_3down_reverses_and_in_extra_actions() -> None:
    g = position("""
        players 3
        variants ones_reverse
        0: up 1g 5g | down 1r 2r 3r
        1: hand 2y 3y
        2: hand 2k 3k
    """)
    act(g, "play 3up 1x1")
    assert g.direction == -1 and g.to_move == 2
    g = position("""
        players 3
        variants ones_reverse
        0: down 1r 2r 3r
        1: hand 2y 3y
        2: hand 2k 3k
    """)
    act(g, "down 0")
    assert g.direction == -1 and g.to_move == 2
    g = position("""
        players 3
        variants ones_reverse
        0: hand C+1o 1g 6g
        1: hand 2y 3y
        2: hand 2k 3k
        draw 4k 5k
    """)
    act(g, "play hand C+1", "play hand 1x1")
    assert g.direction == -1 and g.to_move == 2


def test_a_failed_3down_1_does_not_reverse() -> None:
    g = position("""
        players 3
        variants ones_reverse
        0: down 1r 2r 3r
        1: hand 2y 3y
        2: hand 2k 3k
        pile 5b
    """)
    act(g, "down 0")
    assert g.direction == 1 and g.to_move == 1


def test_reverse_with_two_players_changes_nothing() -> None:
    g = position("""
        variants ones_reverse
        0: hand 1g 5g
        1: hand 2y 3y
        draw 4k
    """)
    act(g, "play hand 1x1")
    assert g.to_move == 1
    act(g, "play hand 2x1")
    assert g.to_move == 0


def test_reverse_skips_finished_players_counter_clockwise() -> None:
    g = position("""
        players 4
        variants ones_reverse play_out
        finished 3
        0: hand 1g 5g
        1: hand 2y 3y
        2: hand 2k 3k
        3:
    """)
    act(g, "play hand 1x1")
    assert g.to_move == 2


# --- §9.4 match_scoring ----------------------------------------------------------


def test_match_scoring_changes_nothing_in_a_game() -> None:
    a = Game(GameConfig(players=3, variants={"match_scoring"}), seed=12)
    b = Game(GameConfig(players=3), seed=12)
    for g in (a, b):
        while not g.over:
            for s in g.to_decide():
                g.apply(s, g.legal(s)[-1])
    assert a.events == b.events


# --- §9.5 swap_piles --------------------------------------------------------------


def _set_up(g: Game) -> Game:
    for s in g.to_decide():
        g.apply(s, g.legal(s)[0])
    return g


def test_swap_piles_permutes_table_piles_after_the_reveal() -> None:
    down = ["1g 2g 3g", "1r 2r 3r", "1b 2b 3b"]
    six = ["4g 5g 6g 7g 8g 9g", "4r 5r 6r 7r 8r 9r", "4b 5b 6b 7b 8b 9b"]
    perms = set()
    for seed in range(40):
        g = _set_up(Game(GameConfig(players=3, variants={"swap_piles"}), seed=seed,
                         deck=deal_deck(down, six, "10g 10r"), first_player=0))
        assert g.perm is not None and sorted(g.perm) == [0, 1, 2]
        perms.add(g.perm)
        tail = event_texts(g)[-5:]
        assert tail[:3] == ["reveal 0 4g 5g 6g", "reveal 1 4r 5r 6r", "reveal 2 4b 5b 6b"]
        assert tail[3] == "piles " + " ".join(map(str, g.perm))  # public
        for i in range(3):
            j = g.perm[i]
            colour = "grb"[j]
            # Seat i holds seat perm[i]'s 3UP with its 3DOWN beneath, slots kept.
            assert texts(g.up[i]) == f"4{colour} 5{colour} 6{colour}"
            assert texts(g.down[i]) == down[j]  # type: ignore[arg-type]
            # Hands do not move.
            assert texts(g.hand(i)) == f"7{'grb'[i]} 8{'grb'[i]} 9{'grb'[i]}"
        obs = g.observation(1)
        assert obs["piles"] == list(g.perm)
        assert Counter(all_cards(g)) == Counter(g.deck)
    assert len(perms) == 6  # uniform over all permutations: every one occurs
    assert (0, 1, 2) in perms  # a pile may stay put


def test_swap_piles_is_reproducible_from_the_seed() -> None:
    a = _set_up(Game(GameConfig(players=5, variants={"swap_piles"}), seed=77))
    b = _set_up(Game(GameConfig(players=5, variants={"swap_piles"}), seed=77))
    assert a.perm == b.perm and a.events == b.events
    c = _set_up(Game(GameConfig(players=5), seed=77))
    assert c.perm is None and "piles" not in c.observation(0)


# --- §9.6 four_of_a_colour -------------------------------------------------------

FOUR = """
    variants four_of_a_colour
    0: hand 7g 7r 3b | up 9r 2k | down 1g 1r 1b
    1: hand 2y
    pile 4g 5g 6g
    draw 4k 5k 6k
"""


def test_plays_name_their_cards_and_go_on_the_pile_in_the_listed_order() -> None:
    g = position(FOUR)
    assert legal_texts(g) == ["play hand 7g", "play hand 7r", "play hand 7r 7g",
                              "play hand 7g 7r"]
    act(g, "play hand 7g 7r")
    assert texts(g.pile) == "4g 5g 6g 7g 7r"  # the last listed on top
    assert event_texts(g)[0] == "play 0 hand 7g 7r"
    assert g.to_move == 1  # 7r on top: no run of four


def test_four_of_a_colour_offers_a_swap() -> None:
    g = position(FOUR)
    act(g, "play hand 7r 7g")
    assert texts(g.pile) == "4g 5g 6g 7r 7g"
    g = position(FOUR)
    act(g, "play hand 7g")
    assert g.to_decide() == (0,) and g.observation(1)["phase"] == "swap"
    assert event_texts(g)[-1] == "colour 0"
    assert legal_texts(g) == ["swap 2k 3b", "swap 2k 7r", "swap 9r 3b", "swap 9r 7r", "keep"]
    act(g, "swap 9r 3b")
    assert sorted(texts(g.up[0]).split()) == ["2k", "3b"]
    assert texts(g.hand(0)) == "4k 7r 9r"
    # Public, both cards shown; then the end-of-turn draw.
    assert event_texts(g, 1)[-3:] == ["swap 0 9r 3b", "draw 0 1 refill ?", "turn 2 1"]


def test_keep_declines_the_swap() -> None:
    g = position(FOUR)
    act(g, "play hand 7g", "keep")
    assert texts(g.up[0]) == "9r 2k" and event_texts(g)[-3:] == ["keep 0", "draw 0 1 refill 4k",
                                                                  "turn 2 1"]


def test_the_swap_comes_before_pending_extra_actions() -> None:
    g = position("extra 1\n" + FOUR)
    act(g, "play hand 7g")
    assert g.observation(0)["phase"] == "swap"
    act(g, "keep")
    assert event_texts(g)[-1] == "extra 0 0" and g.in_extra and g.to_move == 0


def test_a_fifth_card_of_the_run_triggers_it_again() -> None:
    g = position("""
        variants four_of_a_colour
        0: hand 8g 3b | up 9r | down 1g 1r 1b
        1: hand 2y
        pile 4g 5g 6g 7g
        draw 4k 5k 6k
    """)
    act(g, "play hand 8g")
    assert event_texts(g)[-1] == "colour 0"


def test_no_swap_without_3up_or_hand_or_when_the_pile_clears() -> None:
    g = position(FOUR.replace("| up 9r 2k ", ""))
    act(g, "play hand 7g")
    assert g.to_move == 1 and "colour 0" not in event_texts(g)
    g = position(FOUR.replace("hand 7g 7r 3b", "hand 7g"))  # the hand empties
    act(g, "play hand 7g")
    assert "colour 0" not in event_texts(g)
    g = position("""
        variants four_of_a_colour
        0: hand 6y 3b | up 9r | down 1g 1r 1b
        1: hand 2y
        pile 4y 6r 6g
        draw 4k 5k 6k
    """)
    act(g, "play hand 6y")
    assert "clear 0 three 4" in event_texts(g) and "colour 0" not in event_texts(g)


def test_specials_break_the_colour_run() -> None:
    g = position("""
        variants four_of_a_colour
        0: hand Cg 5g | up 9r | down 1g 1r 1b
        1: hand 6g 7g
        pile 3g 4g
        draw 4k 5k 6k
    """)
    act(g, "play hand C", "play hand 6g")
    assert "colour 1" not in event_texts(g)


def test_duplicate_cards_of_one_colour_in_a_multi_card_play() -> None:
    # The alternative deck holds two 7g: a two-card play can make the run of four.
    g = position("""
        deck alternative
        variants four_of_a_colour
        0: hand 7g 7g 3b | up 9r | down 1g 1r 1b
        1: hand 2r
        pile 5g 6g
        draw 4b 5b 6b
    """)
    assert legal_texts(g) == ["play hand 7g", "play hand 7g 7g"]
    act(g, "play hand 7g 7g")
    assert event_texts(g)[-1] == "colour 0"


def test_a_multi_card_play_in_any_order_is_accepted_in_the_order_given() -> None:
    g = position("""
        variants four_of_a_colour
        0: hand 7g 7r 7b 3b | up 9r | down 1g 1r 1b
        1: hand 2y
        draw 4k 5k 6k
    """)
    act(g, "play hand 7b 7r 7g")
    assert event_texts(g)[:2] == ["play 0 hand 7b 7r 7g", "clear 0 three 3"]


# --- §9.7 choose_for_others --------------------------------------------------------


def test_choose_for_others_gives_the_3up_cards_to_the_left() -> None:
    down = ["1g 2g 3g", "1r 2r 3r", "1b 2b 3b"]
    six = ["4g 5g 6g 7g 8g 9g", "4r 5r 6r 7r 8r 9r", "4b 5b 6b 7b 8b 9b"]
    g = Game(GameConfig(players=3, variants={"choose_for_others"}), seed=0,
             deck=deal_deck(down, six), first_player=0)
    act(g, "0: 3up 4g 5g 6g", "1: 3up 7r 8r 9r", "2: 3up 4b 8b 9b")
    assert texts(g.up[1]) == "4g 5g 6g" and texts(g.hand(0)) == "7g 8g 9g"
    assert texts(g.up[2]) == "7r 8r 9r" and texts(g.hand(1)) == "4r 5r 6r"
    assert texts(g.up[0]) == "4b 8b 9b" and texts(g.hand(2)) == "5b 6b 7b"
    assert event_texts(g)[-4:-1] == ["reveal 0 4b 8b 9b", "reveal 1 4g 5g 6g",
                                     "reveal 2 7r 8r 9r"]
    assert Counter(all_cards(g)) == Counter(g.deck)


# --- §9.8 draw_once_per_clear ------------------------------------------------------

ONCE = """
    variants draw_once_per_clear
    0: hand C+2g C+1r Cr 3g 4g 5g
    1: hand 2y 3y
    draw 6y 6b 6k 7y 7b
"""


def test_draw_only_right_after_a_c_plus_1_or_c_plus_2() -> None:
    g = position(ONCE)
    act(g, "play hand C+2")
    assert "draw" in legal_texts(g)
    act(g, "play hand 3x1")
    assert "draw" not in legal_texts(g)  # second extra action of a lone C+2
    g = position(ONCE)
    act(g, "play hand C+2", "play hand C")
    assert "draw" not in legal_texts(g)  # after a plain clear
    g = position(ONCE)
    act(g, "play hand C+2", "play hand C+1")
    assert "draw" in legal_texts(g)  # right after a C+1
    g = position(ONCE.replace("variants draw_once_per_clear", ""))
    act(g, "play hand C+2", "play hand 3x1")
    assert "draw" in legal_texts(g)  # the default: before every extra action


def test_draw_once_per_clear_stuck_picks_up_without_draw() -> None:
    g = position("""
        variants draw_once_per_clear
        0: hand C+2g 9g 3g
        1: hand 2y 3y
        draw 6y 6b 6k
    """)
    act(g, "play hand C+2", "play hand 9x1")
    assert legal_texts(g) == ["pickup"]


def test_draw_once_per_clear_keeps_the_forced_draw() -> None:
    g = position("""
        variants draw_once_per_clear
        0: hand C+2g 9g | up 3g | down 1g 1r 1b
        1: hand 2y 3y
        draw 10y 6b 6k
    """)
    act(g, "play hand C+2", "play hand 9x1")
    assert legal_texts(g) == ["draw"]
    act(g, "draw", "play hand 10x1")
    assert g.to_move == 1


# --- §9.9 smaller deck -----------------------------------------------------------


@pytest.mark.parametrize(("players", "colours"), [(2, 2), (3, 3), (4, 3), (4, 4)])
def test_smaller_deck_games_deal_and_finish(players: int, colours: int) -> None:
    g = Game(GameConfig(players=players, colours=colours), seed=players * 10 + colours)
    assert len(g.deck) == 12 * colours
    assert len(g.draw_pile) == 12 * colours - 9 * players
    while not g.over:
        for s in g.to_decide():
            g.apply(s, g.legal(s)[0])
    assert Counter(all_cards(g)) == Counter(g.deck)
    assert sorted(cards("C+2g"))[0] in g.deck


def test_alternative_deck_games_finish() -> None:
    g = Game(GameConfig(players=4, deck="alternative"), seed=5)
    while not g.over:
        for s in g.to_decide():
            g.apply(s, g.legal(s)[-1])
    assert Counter(all_cards(g)) == Counter(g.deck)


def test_after_a_swap_the_extra_action_follows_a_numbered_play() -> None:
    # draw_once_per_clear: the swap does not make the next extra action "right after a
    # C+1 or C+2"; by default the optional draw is offered.
    for variants, offered in (("four_of_a_colour", True),
                              ("four_of_a_colour draw_once_per_clear", False)):
        g = position(f"""
            variants {variants}
            extra 1
            0: hand 7g 3b 9b | up 9r 2k | down 1g 1r 1b
            1: hand 2y
            pile 4g 5g 6g
            draw 4k 5k 6k
        """)
        act(g, "play hand 7g", "keep")
        assert g.in_extra and ("draw" in legal_texts(g)) is offered


@pytest.mark.parametrize("taking", ["fail", "pickup"])
def test_a_taken_pile_ends_the_colour_run(taking: str) -> None:
    seat0 = "0: down 2r 1r 1b" if taking == "fail" else "0: hand 3k"
    g = position(f"""
        variants four_of_a_colour
        {seat0}
        1: hand 7g 3b | up 9r | down 1g 1y 1k
        pile 4g 5g 6g
        draw 5k
    """.replace("draw 5k", "" if taking == "fail" else "draw 5k"))
    act(g, "down 0" if taking == "fail" else "pickup")
    assert g.pile == [] and g.to_move == 1
    act(g, "play hand 7g")
    assert "colour 1" not in event_texts(g) and g.to_move == 0
