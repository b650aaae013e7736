"""Many-seed random playouts (as OpenSpiel's ``random_sim_test``): thousands of games
across 2-6 players, every variant and random variant combinations, decks of every
size, checking the engine's invariants after every step:

* every card is accounted for exactly once (hands or dealt cards, 3UP, 3DOWN, draw
  pile, pile, cleared = the deck);
* exactly the right seats are to decide, and only they have legal decisions;
* the legal list is non-empty, free of repeats, and the same when recomputed;
* the pile never descends (RULES §3.2) and never holds three of a number at the top
  (RULES §3.5); the engine's counters agree with the cards;
* the game always ends, with a well-formed result;
* in a sample of steps every listed decision applies (on a copy);
* in a sample of games the same seed and decisions give the same event stream.
"""

from __future__ import annotations

import random

import pytest

from referee.game import VARIANTS, Game, GameConfig
from referee.game.cards import COLOUR, KIND
from referee.game.decisions import DECLINE, DOWN, DRAW, PICKUP, PLAY
from referee.game.state import OVER, SETUP, SWAPPING, competition_ranks

_SINGLE = [frozenset(), *(frozenset({v}) for v in VARIANTS), frozenset(VARIANTS)]


def _games(variants: frozenset[str]) -> int:
    # four_of_a_colour lists every order of named cards: its games cost several times more.
    return 20 if "four_of_a_colour" in variants else 40


def _configs() -> list[tuple[GameConfig, int]]:
    out: list[tuple[GameConfig, int]] = []
    rng = random.Random(2024)
    for players in range(2, 7):
        for variants in _SINGLE:
            out.append((GameConfig(players=players, variants=variants), _games(variants)))
        for _ in range(3):
            combo = frozenset(v for v in VARIANTS if rng.random() < 0.5)
            out.append((GameConfig(players=players, variants=combo), _games(combo)))
    # Smaller decks (RULES §9.9) and the alternative deck.
    for players, colours in ((2, 2), (2, 3), (3, 3), (4, 3), (4, 4), (5, 4), (6, 5)):
        combo = frozenset(v for v in VARIANTS if rng.random() < 0.4)
        out.append((GameConfig(players=players, colours=colours, variants=combo), _games(combo)))
    for players in (2, 4, 6):
        out.append((GameConfig(players=players, deck="alternative",
                               variants={"four_of_a_colour", "play_out"}), 10))
    out.append((GameConfig(players=3, deck="alternative", variants=frozenset(VARIANTS)), 10))
    out.append((GameConfig(players=5, deck="alternative",
                           variants={"choose_for_others", "swap_piles", "may_decline"}), 20))
    return out


CONFIGS = _configs()


def _check(g: Game, deck: list[int], deep: bool) -> None:
    """The invariants; ``deep`` adds the costlier ones (run after every few steps)."""
    n = g.n
    setup = g.phase == SETUP
    # Every card exactly once.
    held = g.draw_pile + g.pile + g.out
    for s in range(n):
        if setup:
            held += g.dealt[s]
        else:
            for lst in g.hands[s].values():
                held += lst
            held += g.up[s]
        held += filter(None, g.down[s])  # card ids are never 0
    held.sort()
    assert held == deck
    # The right seats decide, and only they; the legal list is never empty.
    deciding = g.to_decide()
    if g.phase == OVER:
        assert deciding == () and g.result() is not None
    elif setup:
        assert deciding == tuple(s for s in range(n) if g.choices[s] is None) != ()
    else:
        s = g.to_move
        assert deciding == (s,) and g.place[s] is None
        assert g.hand_n[s] or g.up[s] or g.down_n[s]
        assert g.pending >= 0 and (g.in_extra or g.pending == 0 or g.phase == SWAPPING)
    for s in deciding:
        assert g.legal(s)
    if not deep:
        return
    for s in range(n):
        if s not in deciding:
            assert g.legal(s) == []
        else:
            texts = [d.text for d in g.legal(s)]
            assert len(set(texts)) == len(texts)
        assert g.down_n[s] == sum(1 for c in g.down[s] if c is not None)
        if not setup:
            hand = g.hands[s]
            assert g.hand_n[s] == sum(len(v) for v in hand.values())
            for k, lst in hand.items():
                assert lst and all(KIND[c] == k for c in lst)
    if g.phase not in (OVER, SETUP):
        # Deterministic: recomputing the legal list gives the same list.
        legal = g.legal(g.to_move)
        fresh = [d.text for d in g._compute_legal()]
        assert fresh == [d.text for d in legal]
        codes = {d.code for d in legal}
        if PICKUP in codes:  # never voluntary (RULES §3.4)
            assert not codes & {PLAY, DOWN}
        if DECLINE in codes:  # RULES §9.2
            assert g.may_decline and not g.in_extra and g.draw_pile and PLAY in codes
        if DRAW in codes:  # RULES §3.6
            assert g.draw_pile and (g.in_extra or g.hand_n[g.to_move] == 0)
            assert not g.drawn or g.hand_n[g.to_move] == 0
        if DOWN in codes:  # RULES §3.1
            assert codes == {DOWN} and not g.draw_pile and not g.up[g.to_move]
    # The pile never descends and is cleared at three of a number (RULES §3.2, §3.5).
    kinds = [KIND[c] for c in g.pile]
    assert all(k <= 10 for k in kinds) and kinds == sorted(kinds)
    if kinds:
        top = kinds[-1]
        run = 0
        for k in reversed(kinds):
            if k != top:
                break
            run += 1
        assert (g.top, g.run) == (top, run) and run < 3
        if g.four_colour:
            col = COLOUR[g.pile[-1]]
            crun = 0
            for c in reversed(g.pile):
                if COLOUR[c] != col:
                    break
                crun += 1
            assert g.crun == crun
    else:
        assert g.top == 0 and g.run == 0
    # Finished seats hold nothing, and the draw pile is empty by then (RULES §4).
    for s in g.finished:
        assert g.hand_n[s] == 0 and not g.up[s] and g.down_n[s] == 0
        assert not g.draw_pile


def _check_result(g: Game) -> None:
    r = g.result()
    assert r is not None and r.how in ("winner", "played_out", "turn_limit")
    n = g.n
    assert len(r.places) == len(r.points) == n
    assert r.points == tuple(g.points(s) for s in range(n))
    assert all(r.points[s] == 0 for s in r.finish_order)
    assert [r.places[s] for s in r.finish_order] == list(range(1, len(r.finish_order) + 1))
    rest = [s for s in range(n) if s not in r.finish_order]
    if r.how == "played_out":
        assert len(rest) == 1 and r.places[rest[0]] == n
    else:
        ranks = competition_ranks([r.points[s] for s in rest], start=len(r.finish_order) + 1)
        assert [r.places[s] for s in rest] == ranks
    if r.how == "winner":
        assert len(r.finish_order) == 1
    if r.how == "turn_limit":
        assert r.turns == g.config.turn_limit
    assert 1 <= r.turns <= g.config.turn_limit
    assert g.events[-1] == ("end", r.how, r.places, r.points)


def _play(config: GameConfig, seed: int, *, full: bool) -> list[str]:
    """One random game with invariant checks; returns the decisions taken."""
    g = Game(config, seed=seed)
    deck = sorted(g.deck)
    rng = random.Random(seed * 7 + 1)
    taken: list[str] = []
    steps = 0
    _check(g, deck, True)
    while not g.over:
        for s in g.to_decide():
            legal = g.legal(s)
            if full and steps % 7 == 0:
                for d in legal:
                    g.copy().apply(s, d)
            d = legal[int(rng.random() * len(legal))]
            g.apply(s, d)
            taken.append(f"{s}:{d.text}")
            _check(g, deck, steps % 6 == 0)
            steps += 1
            assert steps < 20000
    _check_result(g)
    return taken


@pytest.mark.slow
@pytest.mark.parametrize(("config", "games"), CONFIGS,
                         ids=[f"{c.players}p-{c.colours or 'all'}c-{c.deck}-"
                              f"{'+'.join(sorted(c.variants)) or 'default'}" for c, _ in CONFIGS])
def test_random_playouts_keep_the_invariants(config: GameConfig, games: int) -> None:
    for seed in range(games):
        taken = _play(config, seed, full=seed % 10 == 0)
        if seed % 8 == 0:
            # RULES §7: same seed, same decisions, same game, event for event.
            a, b = Game(config, seed=seed), Game(config, seed=seed)
            for step in taken:
                s, d = step.split(":", 1)
                a.apply(int(s), d)
            for step in taken:
                s, d = step.split(":", 1)
                b.apply(int(s), d)
            assert a.events == b.events and a.over and b.result() == a.result()


def test_total_number_of_games_is_in_the_thousands() -> None:
    assert sum(games for _, games in CONFIGS) >= 2500
