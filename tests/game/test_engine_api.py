"""The engine's API contract, as the referee and bots use it: ``to_decide``,
``legal``, ``apply`` (returns the listed decision, accepts its text), ``copy`` (an
independent game), ``events_for`` (offsets), observations JSON-ready."""

from __future__ import annotations

import json
import random

from referee.game import Game, GameConfig
from referee.game.phases import PLAYING
from referee.game.view import view_of
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


def test_a_game_determinized_from_a_seats_view_shows_that_seat_the_same() -> None:
    """``view_of`` reads an observation back into card ids; ``Game.determinize``
    deals the cards the seat cannot see (in any order) into the places it cannot see
    into: the game it builds shows the seat its observation and legal list, and the
    cards it deals are those of the real game's hidden places."""
    checked = 0
    for seed in range(6):
        game = Game(GameConfig(players=3, variants={"may_decline"}), seed)
        rng = random.Random(seed)
        while not game.over:
            for seat in game.to_decide():
                legal = game.legal(seat)
                obs = game.observation(seat)
                if obs["phase"] == "play" and rng.random() < 0.2:
                    view = view_of(obs, legal)
                    assert view is not None and view.seat == seat
                    order = list(view.hidden)
                    rng.shuffle(order)
                    sim = Game.determinize(view, order)
                    assert sim.observation(seat) == obs
                    assert [d.text for d in sim.legal(seat)] == [d.text for d in legal]
                    assert sim.events == [] and sim.turn_limit == game.turn_limit
                    unseen = sorted(
                        [c for s in range(3) if s != seat for c in sim.hand(s)]
                        + [c for d in sim.down for c in d if c is not None] + sim.draw_pile)
                    assert unseen == sorted(view.hidden)
                    short = Game.determinize(view, order, play_out=True, turn_limit=5)
                    assert (short.play_out, short.turn_limit) == (True, 5)
                    checked += 1
                game.apply(seat, legal[rng.randrange(len(legal))])
    assert checked > 10


def test_an_observation_no_deck_fits_has_no_view() -> None:
    game = Game(GameConfig(players=2), 1)
    while game.phase != PLAYING:
        for seat in game.to_decide():
            game.apply(seat, game.legal(seat)[0])
    seat = game.to_move
    obs = game.observation(seat)
    obs["hand"] = obs["hand"] + ["5g"] * 4  # more copies than any deck holds
    assert view_of(obs, game.legal(seat)) is None
