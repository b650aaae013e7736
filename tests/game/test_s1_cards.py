"""RULES §1: card kinds, the default and smaller decks, the text form, deck checks."""

from __future__ import annotations

from collections import Counter

import pytest

from referee.game import ConfigError, Game, GameConfig, card_text, parse_card, parse_deck
from referee.game.cards import (
    CLEAR,
    CLEAR1,
    CLEAR2,
    COLOUR,
    COLOUR_NAMES,
    KIND,
    KIND_POINTS,
    CardError,
    alternative_deck,
    standard_deck,
)
from tests.game.position import act, legal_texts, position


def test_default_deck_is_84_cards_per_the_ruling() -> None:
    # RULES §1 Ruling: 7 colours of 1..10 plus C and C+1, green's second special is C+2.
    deck = GameConfig().deck_cards()
    assert len(deck) == 84 == len(set(deck))
    kinds = Counter(KIND[c] for c in deck)
    assert sum(kinds[k] for k in range(1, 11)) == 70
    assert all(kinds[k] == 7 for k in range(1, 11))
    assert (kinds[CLEAR], kinds[CLEAR1], kinds[CLEAR2]) == (7, 6, 1)
    assert [card_text(c) for c in deck if KIND[c] == CLEAR2] == ["C+2g"]
    assert "C+1g" not in {card_text(c) for c in deck}
    for colour in range(7):
        own = sorted(KIND[c] for c in deck if COLOUR[c] == colour)
        second = CLEAR2 if colour == 0 else CLEAR1
        assert own == [*range(1, 11), CLEAR, second]


def test_colour_order_and_letters() -> None:
    assert COLOUR_NAMES == ("green", "red", "blue", "yellow", "orange", "purple", "pink")
    letters = [card_text(c)[-1] for c in standard_deck() if KIND[c] == 1]
    assert letters == list("grbyopk")


@pytest.mark.parametrize(
    "text", ["7g", "10r", "Cy", "C+1o", "C+2g", "1k", "5p", "9b", "Ck", "C+1p"]
)
def test_text_form_round_trips(text: str) -> None:
    assert card_text(parse_card(text)) == text


def test_every_card_of_the_deck_round_trips() -> None:
    for c in standard_deck() + alternative_deck():
        assert card_text(parse_card(card_text(c))) == card_text(c)


@pytest.mark.parametrize("bad", ["", "7", "11g", "7x", "C+3g", "Dg", "g7", "0g", "C+g"])
def test_bad_card_texts_are_refused(bad: str) -> None:
    with pytest.raises(CardError):
        parse_card(bad)


@pytest.mark.parametrize("bad, fixed", [("cy", "Cy"), ("7G", "7g"), ("c+1O", "C+1o")])
def test_a_card_in_the_wrong_case_is_named_in_the_right_one(bad: str, fixed: str) -> None:
    with pytest.raises(CardError, match=f"card texts are case-sensitive: {fixed.replace('+', '[+]')}"):
        parse_card(bad)


@pytest.mark.parametrize("k", range(1, 8))
def test_smaller_deck_keeps_the_first_colours(k: int) -> None:
    # RULES §1 / §9.9: k colours keep the first k colours, so green and C+2 stay.
    deck = standard_deck(k)
    assert len(deck) == 12 * k
    assert {COLOUR[c] for c in deck} == set(range(k))
    assert "C+2g" in {card_text(c) for c in deck}


@pytest.mark.parametrize(
    ("players", "colours", "ok"),
    [(2, 1, False), (2, 2, True), (3, 3, True), (4, 3, True), (5, 4, True), (6, 4, False),
     (6, 5, True), (6, None, True)],
)
def test_deck_must_hold_nine_cards_per_player(players: int, colours: int | None, ok: bool) -> None:
    # RULES §1: a deck with fewer than 9 cards per player is refused.
    if ok:
        assert GameConfig(players=players, colours=colours).deck_cards() == standard_deck(colours or 7)
        cfg = GameConfig(players=players, colours=colours)
        assert len(cfg.deck_cards()) >= 9 * players
        Game(cfg, seed=1)
    else:
        with pytest.raises(ConfigError, match="at least 9 per player"):
            GameConfig(players=players, colours=colours)


def test_explicit_deck_order_is_checked() -> None:
    cfg = GameConfig(players=3)
    with pytest.raises(ConfigError, match="RULES §1"):
        Game(cfg, seed=0, deck=standard_deck()[:26])
    Game(cfg, seed=0, deck=standard_deck()[:27])  # exactly 9 per player is enough
    with pytest.raises(ConfigError, match="twice"):
        Game(cfg, seed=0, deck=standard_deck()[:27] + standard_deck()[:1])


def test_explicit_deck_is_used_as_given_not_shuffled() -> None:
    deck = standard_deck()
    a = Game(GameConfig(players=2), seed=1, deck=deck)
    b = Game(GameConfig(players=2), seed=2, deck=deck)
    assert a.deck == b.deck == tuple(deck)
    assert a.draw_pile == b.draw_pile


def test_alternative_deck_composition() -> None:
    # RULES §1: offered as a named alternative: 3 colours, two copies each of 1..10,
    # C and C+1, plus two C+2.
    cfg = GameConfig(players=4, deck="alternative")
    deck = cfg.deck_cards()
    assert len(deck) == 74 == len(set(deck))
    texts = Counter(card_text(c) for c in deck)
    assert texts["C+2g"] == 2 and texts["7b"] == 2 and texts["C+1r"] == 2
    assert {t[-1] for t in texts} == set("grb")


def test_parse_deck_gives_repeated_texts_distinct_copies() -> None:
    ids = parse_deck(["7g", "7g", "Cr"])
    assert len(set(ids)) == 3
    assert [card_text(c) for c in ids] == ["7g", "7g", "Cr"]
    with pytest.raises(CardError, match="more than"):
        parse_deck(["7g"] * 5)


def test_penalty_values_of_kinds() -> None:
    # RULES §5 values, listed by kind: numbers face value, C 15, C+1 20, C+2 25.
    assert list(KIND_POINTS[1:]) == [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 20, 25]


def test_numbers_compare_by_number_and_specials_play_on_anything() -> None:
    # RULES §1 Ordering: equal or higher numbers only; a special card on anything.
    g = position("""
        0: hand 4g 9r 10b Cg C+1r C+2g
        1: hand 2y
        pile 9g
        draw 1y
    """)
    assert legal_texts(g) == ["play hand 9x1", "play hand 10x1", "play hand C",
                              "play hand C+1", "play hand C+2"]
    act(g, "play hand 9x1")
    assert g.run == 2  # 9r on 9g: colours differ, the numbers are equal
