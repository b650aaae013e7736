"""RULES §2: players, dealing from an explicit deck, the simultaneous 3UP choice, the
reveal, the draw pile, and the first player drawn from the seed."""

from __future__ import annotations

from collections import Counter

import pytest

from referee.game import ConfigError, Game, GameConfig, IllegalDecision, NotYourTurn
from referee.game.events import event_text
from tests.game.position import all_cards, cards, deal_deck, event_texts, texts

# Two players, an explicit deck, top card first (RULES §2.1).
DECK_2P = (
    "1g 1r 2g 2r 3g 3r "  # three rounds of 3DOWN: seat 0 slot 0, seat 1 slot 0, ...
    "4g 4r 5g 5r 6g 6r 7g 7r 8g 8r 9g 9r "  # six rounds of the six cards
    "10g 10r Cg Cr"  # the draw pile, its first card on top
)


def test_players_from_two_to_six() -> None:
    for n in range(2, 7):
        g = Game(GameConfig(players=n), seed=3)
        assert g.n == n and g.to_decide() == tuple(range(n))
    for bad in (0, 1, 7):
        with pytest.raises(ConfigError, match="RULES §2"):
            GameConfig(players=bad)


def test_dealing_order_is_exactly_the_ruling() -> None:
    # RULES §2 Ruling: one card at a time, clockwise from seat 0; three rounds of 3DOWN
    # (round r = slot r), then six rounds of six; the rest is the draw pile, top first.
    deck = cards(DECK_2P)
    g = Game(GameConfig(players=2), seed=0, deck=deck, first_player=0)
    assert texts(c for c in g.down[0]) == "1g 2g 3g"
    assert texts(c for c in g.down[1]) == "1r 2r 3r"
    assert texts(g.dealt[0]) == "4g 5g 6g 7g 8g 9g"
    assert texts(g.dealt[1]) == "4r 5r 6r 7r 8r 9r"
    assert texts(reversed(g.draw_pile)) == "10g 10r Cg Cr"  # top first
    assert g.observation(0)["draw_pile"] == 4


def test_dealing_three_players_round_robin() -> None:
    names = [f"{k}{c}" for k in range(1, 11) for c in "grbyopk"][:27]
    g = Game(GameConfig(players=3), seed=0, deck=cards(" ".join(names)), first_player=0)
    for s in range(3):
        assert [x for x in g.down[s]] == cards(" ".join(names[s:9:3]))
        assert sorted(g.dealt[s]) == sorted(cards(" ".join(names[9 + s::3])))
    assert g.draw_pile == []


def test_deal_deck_helper_inverts_the_deal() -> None:
    down = ["1g 2g 3g", "1r 2r 3r", "1b 2b 3b"]
    six = ["4g 5g 6g 7g 8g 9g", "4r 5r 6r 7r 8r 9r", "4b 5b 6b 7b 8b 9b"]
    deck = deal_deck(down, six, "10g Cg")
    g = Game(GameConfig(players=3), seed=0, deck=deck, first_player=0)
    for s in range(3):
        assert texts(g.down[s]) == down[s]  # type: ignore[arg-type]
        assert texts(g.dealt[s]) == six[s]
    assert texts(reversed(g.draw_pile)) == "10g Cg"


def test_the_deal_event_is_private_and_lists_the_six() -> None:
    g = Game(GameConfig(players=2), seed=0, deck=cards(DECK_2P), first_player=0)
    assert event_texts(g, 0) == ["deal 0 4g 5g 6g 7g 8g 9g", "deal 1 ?"]
    assert event_texts(g, 1) == ["deal 0 ?", "deal 1 4r 5r 6r 7r 8r 9r"]
    assert event_texts(g, -1) == ["deal 0 ?", "deal 1 ?"]


def test_choice_is_simultaneous_and_private_until_all_chose() -> None:
    g = Game(GameConfig(players=3), seed=5)
    assert g.to_decide() == (0, 1, 2)
    assert all(len(g.legal(s)) == 20 for s in range(3))  # C(6,3) of six distinct cards
    # Any order: seat 2 first.
    choice2 = g.legal(2)[7]
    g.apply(2, choice2)
    assert g.to_decide() == (0, 1)
    assert g.legal(2) == []
    own = g.observation(2)
    assert own["phase"] == "setup" and own["chosen"] is True
    assert own["choice"] == choice2.text.split()[1:]
    other = g.observation(0)
    assert other["chosen"] is False and "choice" not in other
    assert [s["chosen"] for s in other["seats"]] == [False, False, True]
    assert all(s["up"] is None for s in other["seats"])
    assert not any(e[0] == "reveal" for e in g.events)
    assert "chosen 2" in event_texts(g, 0)
    # A seat cannot choose twice.
    with pytest.raises(NotYourTurn, match="already chosen"):
        g.apply(2, g.legal(0)[0])
    g.apply(0, g.legal(0)[0].text)  # the text form is accepted too
    assert not any(e[0] == "reveal" for e in g.events)
    g.apply(1, g.legal(1)[-1])
    # Revealed only now, all at once, followed by the first turn.
    tail = [e[0] for e in g.events[-4:]]
    assert tail == ["reveal", "reveal", "reveal", "turn"]
    obs = g.observation(1)
    assert obs["phase"] == "play"
    assert obs["seats"][2]["up"] == choice2.text.split()[1:]
    assert all(len(s["up"]) == 3 and s["hand"] == 3 for s in obs["seats"])


def test_chosen_cards_become_3up_and_the_rest_the_hand() -> None:
    g = Game(GameConfig(players=2), seed=0, deck=cards(DECK_2P), first_player=1)
    g.apply(0, "3up 9g 4g 7g")
    g.apply(1, "3up 5r 6r 8r")
    assert texts(g.up[0]) == "4g 7g 9g" and texts(g.hand(0)) == "5g 6g 8g"
    assert texts(g.up[1]) == "5r 6r 8r" and texts(g.hand(1)) == "4r 7r 9r"
    assert event_texts(g, None, 2)[-3:] == ["reveal 0 4g 7g 9g", "reveal 1 5r 6r 8r",
                                            "turn 1 1"]
    assert g.to_decide() == (1,)
    assert Counter(all_cards(g)) == Counter(g.deck)


@pytest.mark.parametrize("bad", ["3up 9g 4g 10g", "3up 9g 9g 4g", "3up 4r 5r 6r", "play hand 4x1",
                                 "3up 4g 5g", "nonsense"])
def test_a_choice_must_be_three_of_ones_own_dealt_cards(bad: str) -> None:
    g = Game(GameConfig(players=2), seed=0, deck=cards(DECK_2P), first_player=0)
    with pytest.raises(IllegalDecision) as e:
        g.apply(0, bad)
    assert e.value.rule in ("RULES §2.3", "decision syntax")
    assert g.choices == [None, None]


def test_first_player_is_drawn_from_the_seed_and_recorded() -> None:
    # RULES §2 Ruling: random from the seed, reproducible, recorded.
    firsts = Counter()
    for seed in range(60):
        a = Game(GameConfig(players=4), seed=seed)
        b = Game(GameConfig(players=4), seed=seed)
        assert a.first_player == b.first_player and a.deck == b.deck
        firsts[a.first_player] += 1
        for s in range(4):
            a.apply(s, a.legal(s)[0])
        assert a.events[-1] == ("turn", 1, a.first_player)
        assert a.to_decide() == (a.first_player,)
    assert set(firsts) == {0, 1, 2, 3}


def test_first_player_may_be_given_and_is_checked() -> None:
    g = Game(GameConfig(players=3), seed=0, first_player=2)
    assert g.first_player == 2
    with pytest.raises(ConfigError, match="first player"):
        Game(GameConfig(players=3), seed=0, first_player=3)


def test_the_seed_shuffles_reproducibly() -> None:
    a, b, c = (Game(GameConfig(players=2), seed=s) for s in (1, 1, 2))
    assert a.deck == b.deck != c.deck
    assert sorted(a.deck) == sorted(GameConfig().deck_cards())


def test_after_setup_the_rest_is_the_draw_pile_and_the_pile_is_empty() -> None:
    for n in range(2, 7):
        g = Game(GameConfig(players=n), seed=n)
        for s in range(n):
            g.apply(s, g.legal(s)[0])
        assert len(g.draw_pile) == 84 - 9 * n
        assert g.pile == [] and g.out == []
        assert all(g.hand_n[s] == 3 and len(g.up[s]) == 3 and g.down_n[s] == 3 for s in range(n))
        obs = g.observation(0)
        assert obs["draw_pile"] == 84 - 9 * n and obs["pile"] == [] and obs["turn"] == 1


def test_deal_event_text() -> None:
    g = Game(GameConfig(players=2), seed=0, deck=cards(DECK_2P), first_player=0)
    assert event_text(g.events[0]) == "deal 0 4g 5g 6g 7g 8g 9g"
