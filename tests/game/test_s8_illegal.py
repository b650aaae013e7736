"""RULES §8: every thing the rules do not allow raises ``IllegalDecision`` with a
message that says what was wrong and names the rule, and leaves the game untouched."""

from __future__ import annotations

import pytest

from referee.game import Game, GameConfig, IllegalDecision, NotYourTurn
from referee.game.decisions import parse_decision
from tests.game.position import act, event_texts, position, render

BASE = """
    players 3
    0: hand 7g 7r 3b Cy C+1b | up 9g 9r | down 1g 1r 1b
    1: hand 2y 4y | up 10y | down 2r 2b 2k
    2: hand 6k | up 8k | down 3r 3g 3k
    pile 5g
    draw 4k 5k
"""

UP_ONLY = """
    0: up 9g 9r 2b | down 1g 1r 1b
    1: hand 2y 4y
    pile 5g
"""

DOWN_ONLY = """
    0: down 1g 1r 1b
    1: hand 2y 4y
    pile 5g
"""

EXTRA = """
    extra 1
    0: hand 7g 3b
    1: hand 2y 4y
    pile 5g
    draw 4k
"""

CASES = [
    # (id, position, seat, decision, rule, words in the message)
    ("out of turn", BASE, 1, "play hand 4x1", "RULES §8", "seat 0's turn"),
    ("no such seat", BASE, 5, "play hand 4x1", "RULES §8", "no seat 5"),
    ("card not held", BASE, 0, "play hand 9x1", "RULES §8", "hold 0 card"),
    ("more copies than held", BASE, 0, "play hand 7x3", "RULES §8", "hold 2 card"),
    ("3up card not held", UP_ONLY, 0, "play 3up 10x1", "RULES §8", "hold 0 card"),
    ("mixing numbers", BASE, 0, "play hand 7g 8r", "RULES §3.2", "same number"),
    ("two specials", BASE, 0, "play hand Cy C+1b", "RULES §3.2", "one at a time"),
    ("two specials by count", BASE, 0, "play hand Cx2", "decision syntax",
     "one at a time (RULES §3.2)"),
    ("lower number", BASE, 0, "play hand 3x1", "RULES §3.2", "lower than the 5"),
    ("3up while holding hand cards", BASE, 0, "play 3up 9x1", "RULES §3.1", "hand is empty"),
    ("3up while the draw pile is not empty", """
        extra 0
        0: up 9g | down 1g 1r 1b
        1: hand 2y
        draw 4k
     """, 0, "play 3up 9x1", "RULES §3.6", "draw pile is not"),
    ("3down while holding hand cards", BASE, 0, "down 0", "RULES §3.1", "hand"),
    ("3down while 3up remains", UP_ONLY, 0, "down 0", "RULES §3.1", "3UP cards must be played first"),
    ("two 3down cards in one action", DOWN_ONLY, 0, "down 0 1", "decision syntax",
     "one 3DOWN card is turned per action (RULES §3.3)"),
    ("empty 3down slot", """
        0: down - 1r 1b
        1: hand 2y
     """, 0, "down 0", "RULES §3.3", "slot 0 holds no card"),
    ("pick up while a play exists", BASE, 0, "pickup", "RULES §3.4", "no legal play"),
    ("pick up from 3up while a play exists", UP_ONLY, 0, "pickup", "RULES §3.4", "no legal play"),
    ("pass an extra action by picking up", EXTRA, 0, "pickup", "RULES §3.4", "cannot be passed"),
    ("pass", EXTRA, 0, "pass", "decision syntax", "RULES §3.6"),
    ("draw from an empty draw pile", """
        extra 0
        0: hand 7g
        1: hand 2y
     """, 0, "draw", "RULES §8", "draw pile is empty"),
    ("draw outside extra actions", BASE, 0, "draw", "RULES §3.6", "only before an extra action"),
    ("draw twice before one extra action", """
        extra 0 drawn
        0: hand 7g
        1: hand 2y
        draw 4k
     """, 0, "draw", "RULES §3.6", "already drawn"),
    ("draw after a numbered play under draw_once_per_clear", """
        variants draw_once_per_clear
        extra 0 nodraw
        0: hand 7g
        1: hand 2y
        draw 4k
     """, 0, "draw", "RULES §9.8", "draw_once_per_clear"),
    ("decline without may_decline", BASE, 0, "decline", "RULES §3.2", "must play"),
    ("decline an extra action", "variants may_decline\n" + EXTRA, 0, "decline", "RULES §9.2",
     "extra action"),
    ("decline with an empty draw pile", """
        variants may_decline
        0: hand 7g
        1: hand 2y
     """, 0, "decline", "RULES §9.2", "draw pile is empty"),
    ("decline with no legal play", """
        variants may_decline
        0: hand 3g
        1: hand 2y
        pile 9g
        draw 4k
     """, 0, "decline", "RULES §3.4", "pick up"),
    ("swap when not offered", BASE, 0, "swap 9g 7g", "RULES §9.6", "four cards of one colour"),
    ("keep when not offered", BASE, 0, "keep", "RULES §9.6", "four cards of one colour"),
    ("3up choice after set-up", BASE, 0, "3up 7g 7r 3b", "RULES §2.3", "set-up only"),
    ("gibberish", BASE, 0, "fold", "decision syntax", "not a decision"),
    # Syntax errors list what would have been legal too (RULES §8), and their advice
    # fits the game's variant: without four_of_a_colour, plays are written by count.
    ("a number that is not in the deck", BASE, 0, "play hand 99x1", "decision syntax",
     "'play hand 99x1': 99 is not a number of the deck (numbers are 1 to 10); a play by "
     "count is written NUMBERxCOUNT, e.g. 'play hand 7x2' (NUMBER 1 to 10); legal now: "
     "play hand 7x1, play hand 7x2, play hand C, play hand C+1 (decision syntax)"),
    ("a count of 0", BASE, 0, "play hand 7x0", "decision syntax",
     "a play holds 1 to 28 cards, not 0; a play by count"),
    ("a count with a colour", BASE, 0, "play hand 7gx1", "decision syntax",
     "a play by count names no colour: write '7x1'; legal now: play hand 7x1"),
    ("a count without its number", BASE, 0, "play hand 7", "decision syntax",
     "the count is missing: write 'play hand 7x1' for one 7"),
    ("a special card with a count of 2", BASE, 0, "play hand C+1x2", "decision syntax",
     "one at a time (RULES §3.2), written without a count: 'play hand C+1'; legal now:"),
    ("a lower-case special", BASE, 0, "play hand c+1", "decision syntax",
     "'c+1' is written 'C+1' (decisions are case-sensitive); legal now:"),
    ("upper case", BASE, 0, "PLAY HAND 7X1", "decision syntax",
     "decisions are case-sensitive: write 'play hand 7x1'; legal now:"),
    ("an index sent as text", BASE, 0, "0", "decision syntax",
     "seat 0: '0' is not a decision: to answer by index, send the index as a number, not "
     "as text; legal now: play hand 7x1"),
    ("a count under four_of_a_colour", "variants four_of_a_colour\n" + BASE, 0,
     "play hand 99x1", "decision syntax",
     "99 is not a number of the deck (numbers are 1 to 10); under four_of_a_colour a "
     "numbered play names its cards in pile order, e.g. 'play hand 7g 7r'; legal now:"),
    ("a count with a colour under four_of_a_colour", "variants four_of_a_colour\n" + BASE, 0,
     "play hand 7gx1", "decision syntax", "under four_of_a_colour, name the card: "
     "'play hand 7g'"),
    ("named cards without four_of_a_colour", BASE, 0, "play hand 7g", "decision syntax",
     "play hand 7x1"),
]


@pytest.mark.parametrize(("pos", "seat", "decision", "rule", "words"),
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_illegal_decision_names_the_rule(pos: str, seat: int, decision: str, rule: str,
                                         words: str) -> None:
    g = position(pos)
    before = (render(g), list(g.events), [d.text for d in g.legal(g.to_move)])
    with pytest.raises(IllegalDecision) as e:
        g.apply(seat, decision)
    assert e.value.rule == rule
    assert words in str(e.value)
    if rule.startswith("RULES"):
        assert f"({rule})" in str(e.value)
    # An illegal decision changes nothing.
    assert (render(g), list(g.events), [d.text for d in g.legal(g.to_move)]) == before
    # A parsed Decision object is refused the same way as its text.
    try:
        parsed = parse_decision(decision)
    except ValueError:
        return
    with pytest.raises(IllegalDecision) as e2:
        g.apply(seat, parsed)
    assert e2.value.rule == rule


def test_out_of_turn_is_its_own_type() -> None:
    g = position(BASE)
    with pytest.raises(NotYourTurn):
        g.apply(2, "play hand 6x1")


def test_a_finished_seat_cannot_decide() -> None:
    g = position("""
        players 3
        variants play_out
        finished 1
        0: hand 7g
        1:
        2: hand 8k 9k
    """)
    with pytest.raises(NotYourTurn, match="has finished") as e:
        g.apply(1, "play hand 7x1")
    assert e.value.rule == "RULES §8"


def test_turning_a_second_3down_card_in_the_same_turn_is_out_of_turn() -> None:
    g = position(DOWN_ONLY)
    act(g, "down 1")  # 1r fails on the 5: the turn ends
    assert g.to_move == 1
    with pytest.raises(NotYourTurn):
        g.apply(0, "down 2")


def test_deciding_after_the_game_is_over() -> None:
    g = position("""
        0: hand 7g
        1: hand 2y
    """)
    act(g, "play hand 7x1")
    assert g.over
    with pytest.raises(IllegalDecision, match="over"):
        g.apply(1, "play hand 2x1")


def test_a_non_decision_is_refused() -> None:
    g = position(BASE)
    with pytest.raises(IllegalDecision, match="not a decision") as e:
        g.apply(0, 42)  # type: ignore[arg-type]
    assert e.value.rule == "decision syntax"


def test_set_up_refuses_plays_and_foreign_cards() -> None:
    g = Game(GameConfig(players=2), seed=1)
    with pytest.raises(IllegalDecision, match="choose your 3UP cards") as e:
        g.apply(0, "play hand 7x1")
    assert e.value.rule == "RULES §2.3"
    mine = {t for d in g.legal(0) for t in d.text.split()[1:]}
    theirs = [t for d in g.legal(1) for t in d.text.split()[1:] if t not in mine]
    with pytest.raises(IllegalDecision, match="not among your dealt cards"):
        g.apply(0, f"3up {theirs[0]} {' '.join(sorted(mine)[:2])}")


def test_wrong_swap_decisions_during_the_swap() -> None:
    g = position("""
        variants four_of_a_colour
        0: hand 7g 3b | up 9r 2k | down 1g 1r 1b
        1: hand 2y
        pile 4g 5g 6g
        draw 4k
    """)
    act(g, "play hand 7g")
    assert g.observation(0)["phase"] == "swap"
    for bad, words in [("play hand 3b", "swap a 3UP card"), ("swap 10r 3b", "not one of your 3UP"),
                       ("swap 9r 8b", "not in your hand")]:
        with pytest.raises(IllegalDecision, match=words) as e:
            g.apply(0, bad)
        assert e.value.rule == "RULES §9.6"
    with pytest.raises(NotYourTurn):
        g.apply(1, "keep")
    assert event_texts(g)[-1] == "colour 0"


@pytest.mark.parametrize("text", ["x" * 900_000, "play hand " + "7g " * 250_000,
                                  "3up " + "7g " * 250_000, "down " + "1" * 900_000])
def test_a_text_of_a_megabyte_is_refused_with_a_message_of_one_line(text: str) -> None:
    # A bot may send a long decision text (the engine takes any text: the message size
    # limit is the transport's, and an organiser's may be larger); the message
    # about it goes back to the bot, into the record and the transcript: it shows only
    # the start of the text, not the whole of it.
    g = position(BASE)
    with pytest.raises(IllegalDecision) as e:
        g.apply(0, text)
    message = str(e.value)
    assert e.value.rule == "decision syntax" and len(message) < 1000
    assert "characters) is not a decision: no decision is longer than 256" in message
    assert message.startswith(f"seat 0: {text[:60]!r}...")
    assert "legal now: play hand 7x1" in message
    with pytest.raises(IllegalDecision) as e:
        g.apply(0, list(range(100_000)))  # type: ignore[arg-type]
    assert len(str(e.value)) < 1000


def test_extra_spaces_do_not_count_against_the_length() -> None:
    g = position(BASE)
    text = "  play" + " " * 1000 + "hand\t7x2" + " " * 1000
    assert g.apply(0, text).text == "play hand 7x2"
