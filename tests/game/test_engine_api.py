"""The engine's API contract, as the referee and bots use it: ``to_decide``,
``legal``, ``apply`` (returns the listed decision, accepts its text), ``copy`` (an
independent game), ``events_for`` (offsets), observations JSON-ready."""

from __future__ import annotations

import json

from referee.game import Game, GameConfig
from tests.game.position import act, position, render


def test_copy_is_independent() -> None:
    g = Game(GameConfig(players=3, variants={"swap_piles", "four_of_a_colour"}), seed=8)
    for s in g.to_decide():
        g.apply(s, g.legal(s)[0])
    for _ in range(20):
        (s,) = g.to_decide()
        g.apply(s, g.legal(s)[-1])
    before = (render(g), list(g.events), g.rng.getstate())
    c = g.copy()
    assert render(c) == before[0] and c.events == before[1]
    while not c.over:
        (s,) = c.to_decide()
        c.apply(s, c.legal(s)[0])
    assert (render(g), list(g.events), g.rng.getstate()) == before
    # The copy continues exactly as the original would.
    d = g.copy()
    for game in (g, d):
        while not game.over:
            (s,) = game.to_decide()
            game.apply(s, game.legal(s)[0])
    assert g.events == d.events


def test_apply_returns_the_listed_decision_for_its_text() -> None:
    g = position("""
        0: hand 7g 7r 9g
        1: hand 2y
        draw 3y
    """)
    listed = g.legal(0)[1]
    assert listed.text == "play hand 7x2"
    assert g.apply(0, "play hand 7x2") is listed


def test_legal_is_empty_for_seats_with_nothing_to_decide() -> None:
    g = position("""
        players 3
        0: hand 7g
        1: hand 2y
        2: hand 2k
    """)
    assert g.legal(1) == [] and g.legal(2) == [] and g.legal(7) == []
    act(g, "play hand 7x1")
    assert g.over and g.legal(0) == [] and g.to_decide() == ()


def test_events_for_offsets_and_observations_are_json_ready() -> None:
    g = Game(GameConfig(players=2), seed=1)
    n = len(g.events)
    for s in g.to_decide():
        g.apply(s, g.legal(s)[0])
    assert g.events_for(0, n) == g.events_for(0)[n:]
    json.dumps(g.observation(0))
    json.dumps(g.observation(1))
