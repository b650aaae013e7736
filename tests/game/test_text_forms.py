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
                                 "swap 10r", "draw now", 42])
def test_bad_decision_texts_are_refused(bad: object) -> None:
    with pytest.raises(DecisionSyntaxError):
        parse_decision(bad)  # type: ignore[arg-type]
