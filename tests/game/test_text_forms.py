"""Text forms round-trip: every decision the engine lists (``parse_decision``) and
every event, in every seat's view (``events.parse_event`` / ``event_text``); the
JSON-ready event form agrees with the tuple."""

from __future__ import annotations

import json
import random

import pytest

from referee.game import VARIANTS, Decision, Game, GameConfig, parse_decision
from referee.game.decisions import DecisionSyntaxError
from referee.game.events import EventSyntaxError, event_dict, event_text, parse_event


def _games() -> list[tuple[GameConfig, int]]:
    out = []
    for i, v in enumerate(VARIANTS):
        out.append((GameConfig(players=2 + i % 5, variants={v}), i))
    out.append((GameConfig(players=3, variants=set(VARIANTS)), 99))
    out.append((GameConfig(players=4, variants={"four_of_a_colour"}, deck="alternative"), 7))
    return out


@pytest.mark.parametrize(("config", "seed"), _games())
def test_decisions_and_events_round_trip(config: GameConfig, seed: int) -> None:
    g = Game(config, seed=seed)
    rng = random.Random(seed)
    seen_codes: set[int] = set()
    while not g.over:
        for s in g.to_decide():
            legal = g.legal(s)
            for d in legal:
                p = parse_decision(d.text)
                assert p.text == d.text and str(d) == d.text
                seen_codes.add(d.code)
                if not d.cards:
                    assert p == d
            choice = legal[rng.randrange(len(legal))]
            # Applying the text form is applying the decision.
            g.apply(s, choice.text if rng.random() < 0.5 else choice)
    assert len(seen_codes) >= 4
    for seat in [None, -1, *range(g.n)]:
        for e in g.events_for(seat):
            text = event_text(e)
            assert event_text(parse_event(text)) == text
            if config.deck == "standard":  # cards come back as their first copy
                assert parse_event(text) == e, text
            d = event_dict(e)
            assert d["type"] == e[0]
            json.dumps(d)


@pytest.mark.parametrize("text", [
    "deal 0 1g 4r 7b 9y Co C+1k", "deal 0 ?", "chosen 2", "reveal 0 7g 10r Cy", "piles 2 0 1",
    "turn 12 0", "extra 0 1", "play 0 hand 7g 7r", "play 0 3up 10r", "play 0 3down 2 7g",
    "fail 0 2 4g pile 9r 9b", "fail 0 2 ? pile 9r 9b", "fail 1 0 3g pile", "pickup 0 9r 9b",
    "clear 0 C+1 5", "clear 0 three 4", "reverse -1", "draw 0 2 refill 7g 3r",
    "draw 0 2 refill ?", "draw 1 1 extra 5b", "draw 1 1 decline ?", "colour 0",
    "swap 0 10r 7g", "keep 0", "finish 0 1", "end winner places 1 2 points 0 34",
    "end turn_limit places 1 1 3 points 4 4 9",
])
def test_documented_event_texts_round_trip(text: str) -> None:
    assert event_text(parse_event(text)) == text


@pytest.mark.parametrize("bad", ["", "boom 1", "turn x 1", "play 0 hand", "fail 0 1 4g heap"])
def test_bad_event_texts_are_refused(bad: str) -> None:
    with pytest.raises(EventSyntaxError):
        parse_event(bad)


@pytest.mark.parametrize("text", [
    "3up 7g 10r Cy", "play hand 7x2", "play 3up 10x1", "play hand C+1", "play 3up C",
    "play hand 7g 7r", "down 2", "pickup", "draw", "decline", "swap 10r 7g", "keep",
])
def test_documented_decision_texts_round_trip(text: str) -> None:
    d = parse_decision(text)
    assert isinstance(d, Decision) and d.text == text and parse_decision(d.text) == d


@pytest.mark.parametrize("bad", ["", "play", "play hand", "play pocket 7x1", "play hand 7x0",
                                 "play hand 11x1", "down 3", "down", "3up 7g 10r",
                                 "swap 10r", "draw now", 42, "play hand 7x\u00b2",
                                 "play hand 7x", "play hand x1", "Pickup"])
def test_bad_decision_texts_are_refused(bad: object) -> None:
    with pytest.raises(DecisionSyntaxError):
        parse_decision(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("text, words", [
    # RULES §10.1: the advice names the count form -- and, as the parser does not know
    # the variant, the four_of_a_colour form too -- never a card form alone.
    ("play hand 99x1", "99 is not a number of the deck (numbers are 1 to 10); a play by "
                       "count is written NUMBERxCOUNT, e.g. 'play hand 7x2' (NUMBER 1 to 10), "
                       "or, under four_of_a_colour only, by the cards it names"),
    ("play hand 5x0", "a play holds 1 to 28 cards, not 0; a play by count is written"),
    ("play hand Cx2", "special cards are played one at a time (RULES §3.2), written without "
                      "a count: 'play hand C'"),
    ("play hand cx1", "'c' is written 'C' (decisions are case-sensitive)"),
    ("play 3up 10rx1", "a play by count names no colour: write '10x1' (or, under "
                       "four_of_a_colour only, name the card: 'play 3up 10r')"),
    ("play hand 7x\u00b2", "the count '\u00b2' is not a whole number"),
    ("play hand 99", "99 is not a number of the deck"),
    ("play hand 7G", "'7G' is written '7g' (decisions are case-sensitive)"),
    ("PLAY HAND 5X1", "decisions are case-sensitive: write 'play hand 5x1'"),
    ("Pickup", "decisions are case-sensitive: write 'pickup'"),
    ("play down 2", "a play names its source, 'hand' or '3up'"),
])
def test_bad_decision_texts_get_advice_that_fits(text: str, words: str) -> None:
    with pytest.raises(DecisionSyntaxError) as e:
        parse_decision(text)
    assert words in str(e.value)
    assert "not a card" not in str(e.value)


def test_the_count_form_is_read_whatever_the_advice() -> None:
    assert parse_decision("play hand 5x9").text == "play hand 5x9"  # legality: the engine's
    assert parse_decision("play hand Cx1").text == "play hand C"
    for four in (None, False, True):
        assert parse_decision("play hand 7x2", four_of_a_colour=four).text == "play hand 7x2"
