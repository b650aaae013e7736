"""The information-set property (RULES §6): two games that differ only in what a seat
may not know give that seat identical observations and identical filtered events.

Pairs are built from explicit deck orders.  Game A is played with random decisions.
The cards a seat ``x`` may know by step ``k`` are worked out *from the rules*, here,
not from the engine's filter: its own six dealt cards, its own draws and its own
failed 3DOWN card, and every public card (3UP reveals, plays, pick-ups, failed
piles, swaps).  Every other card (other seats' hands, every 3DOWN card, the draw
pile) is hidden from ``x``; game B's deck is A's with those hidden cards permuted.
B replays A's decisions.  When the relabelling changes nothing but the hidden cards
(B's full event stream is A's with the permutation applied), ``x`` must see exactly
the same observations and events in both, at every step up to ``k``.

The converse: changing something ``x`` may know changes its view.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from referee.game import Game, GameConfig, IllegalDecision
from referee.game.cards import KIND
from tests.game.position import deal_deck

Event = tuple[Any, ...]


def seen_by(events: list[Event], x: int) -> set[int]:
    """The cards RULES §6 lets seat ``x`` know, from the omniscient events."""
    seen: set[int] = set()
    for e in events:
        kind = e[0]
        if kind == "deal" and e[1] == x or kind in ("reveal", "pickup"):
            seen.update(e[2])
        elif kind == "play":
            seen.update(e[3])
        elif kind == "fail":
            seen.update(e[4])
            if e[1] == x:
                seen.add(e[3])
        elif kind == "draw" and e[1] == x:
            seen.update(e[3])
        elif kind == "swap":
            seen.update((e[2], e[3]))
    return seen


def relabel(e: Event, pi: dict[int, int]) -> Event:
    """Event ``e`` with every card ``c`` replaced by ``pi[c]``."""
    def m(cards: Any) -> Any:
        return None if cards is None else tuple(pi.get(c, c) for c in cards)

    kind = e[0]
    if kind in ("deal", "reveal", "pickup"):
        return (kind, e[1], m(e[2]))
    if kind == "play":
        return (kind, e[1], e[2], m(e[3]), e[4])
    if kind == "fail":
        return (kind, e[1], e[2], pi.get(e[3], e[3]), m(e[4]))
    if kind == "draw":
        return (kind, e[1], e[2], m(e[3]), e[4])
    if kind == "swap":
        return (kind, e[1], pi.get(e[2], e[2]), pi.get(e[3], e[3]))
    return e


def record(config: GameConfig, seed: int) -> tuple[Game, list[tuple[int, str]]]:
    """Game A: a seeded deck, random decisions; returned with its decisions."""
    shuffled = Game(config, seed=seed)
    g = Game(config, seed=seed, deck=list(shuffled.deck), first_player=shuffled.first_player)
    rng = random.Random(seed)
    taken: list[tuple[int, str]] = []
    while not g.over:
        for s in g.to_decide():
            legal = g.legal(s)
            d = legal[rng.randrange(len(legal))]
            g.apply(s, d)
            taken.append((s, d.text))
    return g, taken


def views(config: GameConfig, seed: int, deck: list[int], first: int,
          taken: list[tuple[int, str]], x: int) -> tuple[Game, list[Any]] | None:
    """Replay ``taken`` on ``deck``: x's view (observation, new events) after every
    step, or None if a decision is not legal there."""
    g = Game(config, seed=seed, deck=deck, first_player=first)
    out: list[Any] = [(g.observation(x), g.events_for(x))]
    for s, d in taken:
        start = len(g.events)
        try:
            g.apply(s, d)
        except IllegalDecision:
            return None
        out.append((g.observation(x), g.events_for(x, start)))
    return g, out


CONFIGS = [
    GameConfig(players=2),
    GameConfig(players=3, variants={"may_decline", "ones_reverse"}),
    GameConfig(players=4, variants={"four_of_a_colour", "play_out"}),
    GameConfig(players=5, variants={"swap_piles", "choose_for_others"}),
    GameConfig(players=6, variants={"draw_once_per_clear", "play_out"}, colours=5),
    GameConfig(players=3, colours=3),
]


@pytest.mark.slow
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c.players}p")
def test_hidden_cards_do_not_change_a_seats_view(config: GameConfig) -> None:
    valid = [0, 0]  # pairs compared: colours only, any hidden cards
    for seed in range(6):
        a, taken = record(config, seed)
        rng = random.Random(1000 + seed)
        k = rng.randrange(len(taken) // 3, len(taken) - 1)  # stop before the end
        taken = taken[:k]
        for x in {seed % config.players, (seed + 1) % config.players}:
            replay = views(config, seed, list(a.deck), a.first_player, taken, x)
            assert replay is not None
            ga, view_a = replay
            hidden = [c for c in a.deck if c not in seen_by(ga.events, x)]
            for attempt in range(3):
                perm = list(hidden)
                if attempt == 0:
                    # Only colours move: a number stays a number (legality unchanged).
                    by_kind: dict[int, list[int]] = {}
                    for c in hidden:
                        by_kind.setdefault(KIND[c], []).append(c)
                    for lst in by_kind.values():
                        rng.shuffle(lst)
                    perm = [by_kind[KIND[c]].pop() for c in hidden]
                else:
                    rng.shuffle(perm)
                pi = dict(zip(hidden, perm, strict=True))
                deck_b = [pi.get(c, c) for c in a.deck]
                replay_b = views(config, seed, deck_b, a.first_player, taken, x)
                if replay_b is None:
                    continue  # a hidden card made a decision illegal: not a pair
                gb, view_b = replay_b
                if [relabel(e, pi) for e in ga.events] != gb.events:
                    continue  # the relabelling changed what happened: not a pair
                valid[min(attempt, 1)] += 1
                for step, (va, vb) in enumerate(zip(view_a, view_b, strict=True)):
                    assert va == vb, f"seat {x} tells the games apart at step {step}"
    assert valid[0] >= 6 and valid[1] >= 2  # enough real pairs were compared


def test_a_seats_own_3down_cards_are_hidden_from_it() -> None:
    # Nobody, the owner included, may see 3DOWN cards (RULES §2.2).
    down = ["1g 2g 3g", "1r 2r 3r"]
    six = ["4g 5g 6g 7g 8g 9g", "4r 5r 6r 7r 8r 9r"]
    a = Game(GameConfig(players=2), seed=0, deck=deal_deck(down, six, "10g"), first_player=0)
    b = Game(GameConfig(players=2), seed=0,
             deck=deal_deck(["10g 2g 3g", "1r 2r 3r"], six, "1g"), first_player=0)
    for g in (a, b):
        g.apply(0, "3up 7g 8g 9g")
        g.apply(1, "3up 7r 8r 9r")
    for x in (0, 1):
        assert a.observation(x) == b.observation(x)
        assert a.events_for(x) == b.events_for(x)


def test_converse_own_dealt_cards_change_own_view_only() -> None:
    down = ["1g 2g 3g", "1r 2r 3r"]
    six = ["4g 5g 6g 7g 8g 9g", "4r 5r 6r 7r 8r 9r"]
    a = Game(GameConfig(players=2), seed=0, deck=deal_deck(down, six), first_player=0)
    # Seat 1's 5r and seat 0's 3DOWN 1g change places.
    b = Game(GameConfig(players=2), seed=0,
             deck=deal_deck(["5r 2g 3g", "1r 2r 3r"], ["4g 5g 6g 7g 8g 9g",
                                                         "4r 1g 6r 7r 8r 9r"]),
             first_player=0)
    assert a.observation(0) == b.observation(0) and a.events_for(0) == b.events_for(0)
    assert a.observation(1) != b.observation(1) and a.events_for(1) != b.events_for(1)
    assert a.events_for(-1) == b.events_for(-1)


def test_converse_public_and_own_facts_change_the_view() -> None:
    # Seat 1 lays a different card face up: public after the reveal, not before.
    down = ["1g 2g 3g", "1r 2r 3r"]
    six_a = ["4g 5g 6g 7g 8g 9g", "4r 5r 6r 7r 8r 9r"]
    six_b = ["4g 5g 6g 7g 8g 9g", "4r 5r 6r 7r 8r 10r"]
    a = Game(GameConfig(players=2), seed=0, deck=deal_deck(down, six_a, "10r"), first_player=0)
    b = Game(GameConfig(players=2), seed=0, deck=deal_deck(down, six_b, "9r"), first_player=0)
    a.apply(1, "3up 4r 5r 6r")
    b.apply(1, "3up 4r 5r 6r")
    assert a.observation(0) == b.observation(0)  # 9r / 10r are still in seat 1's hand
    a.apply(0, "3up 4g 5g 6g")
    b.apply(0, "3up 4g 5g 6g")
    assert a.observation(0) == b.observation(0)
    # Seat 1 plays its highest card: what is played is public.
    a.apply(0, "play hand 7x1")
    b.apply(0, "play hand 7x1")
    a.apply(1, "play hand 9x1")
    b.apply(1, "play hand 10x1")
    assert a.observation(0)["pile"] != b.observation(0)["pile"]
    # The card seat 0 will draw is hidden until drawn, then it is its own.
    for deck_top, other in (("10g", "Cg"), ("Cg", "10g")):
        g = Game(GameConfig(players=2), seed=0, deck=deal_deck(down, six_a, f"{deck_top} {other}"),
                 first_player=0)
        g.apply(0, "3up 4g 5g 6g")
        g.apply(1, "3up 4r 5r 6r")
        before = g.observation(0)
        g.apply(0, "play hand 7x1")
        assert deck_top in g.observation(0)["hand"]
        assert other not in str(g.observation(0)) and other not in str(before)
