"""Decks that repeat a card text (the alternative deck, or any deck file): a deck
order and the decisions fix the game event for event, however the deck was given
(RULES §2, §7), and a seat's hand -- its order, and which copy a play by count
takes -- depends only on the cards in that hand (RULES §6).

Regressions: copies used to be numbered one way for a seeded deck (the deck's
construction order) and another for an explicit one (deal order), and hands were
sorted by card id, whose copy number depends on where the other copies lie.
"""

from __future__ import annotations

import random

import pytest

from referee.bots import make_bot
from referee.game import Game, GameConfig
from referee.game.cards import alternative_deck, card_text, parse_deck
from referee.game.events import event_text, events_for
from referee.play.replay import deck_file_text, parse_record, verify
from referee.play.runner import InProcessPlayer, replay_check, run_game
from referee.play.series import read_deck_file

ALT = GameConfig(players=4, deck="alternative")


def _bots(n: int, seed: int) -> list[InProcessPlayer]:
    kinds = ("random", "heuristic", "lowest")
    return [InProcessPlayer(make_bot(kinds[s % 3], seed + s)) for s in range(n)]


@pytest.mark.slow
@pytest.mark.parametrize("players", [2, 4, 6])
def test_every_alternative_deck_game_replays(players: int) -> None:
    cfg = GameConfig(players=players, deck="alternative")
    bad = []
    for seed in range(60):
        rec = run_game(cfg, seed, _bots(players, seed))
        ok, why = replay_check(rec.to_lines())
        if not ok:
            bad.append((seed, why))
    assert bad == []


def test_a_recorded_alternative_game_verifies_as_replay_check_does() -> None:
    rec = run_game(ALT, 11, _bots(4, 11))
    assert verify(parse_record(rec.to_lines())) == (True, "")


@pytest.mark.parametrize("seed", range(12))
def test_write_deck_then_deck_file_reproduces_the_game_exactly(tmp_path, seed: int) -> None:
    first = run_game(ALT, seed, _bots(4, seed))
    path = tmp_path / "deal.txt"
    path.write_text(deck_file_text(parse_record(first.to_lines())), encoding="utf-8")
    deck = read_deck_file(str(path))
    again = run_game(ALT, seed, _bots(4, seed), deck=deck, first_player=first.first_player)
    assert again.deck == first.deck
    assert [d["decision"] for d in again.decisions] == [d["decision"] for d in first.decisions]
    assert again.events == first.events
    assert again.result == first.result


def test_a_seeded_deck_and_the_same_order_listed_give_the_same_ids() -> None:
    for seed in range(20):
        seeded = Game(ALT, seed)
        listed = Game(ALT, seed, deck=parse_deck([card_text(c) for c in seeded.deck]),
                      first_player=seeded.first_player)
        assert seeded.deck == listed.deck


def _hidden_swap(order: list[str], n: int, seat: int, rng: random.Random) -> list[str]:
    """The deck with one card hidden from ``seat`` -- another seat's 3DOWN card, one
    whose twin ``seat`` is dealt when there is one -- exchanged with the bottom card
    of the draw pile (hidden from everyone)."""
    mine = {order[3 * n + r * n + seat] for r in range(6)}  # seat's six cards (RULES §2)
    slots = [r * n + s for r in range(3) for s in range(n) if s != seat]
    twins = [i for i in slots if order[i] in mine]
    i = rng.choice(twins or slots)
    out = list(order)
    out[i], out[-1] = out[-1], out[i]
    return out


def _seen(g: Game, x: int) -> list[str]:
    """Seat x's events so far, as texts (ids of identical cards may differ)."""
    return [event_text(e) for e in events_for(g.events, x)]


@pytest.mark.slow
@pytest.mark.parametrize("players", [2, 3, 4])
def test_deals_differing_only_in_hidden_cards_give_identical_hands(players: int) -> None:
    """Property: two deals that differ only in cards seat x may not know give x the
    same observation -- its hand in the same order -- and the same legal decisions at
    every request, for as long as x's events are the same in both games."""
    cfg = GameConfig(players=players, deck="alternative")
    checked = 0
    for trial in range(150):
        rng = random.Random(trial)
        texts = [card_text(c) for c in alternative_deck()]
        rng.shuffle(texts)
        x = rng.randrange(players)
        other = _hidden_swap(texts, players, x, rng)
        a = Game(cfg, trial, deck=parse_deck(texts), first_player=0)
        b = Game(cfg, trial, deck=parse_deck(other), first_player=0)
        while not a.over and not b.over:
            if _seen(a, x) != _seen(b, x):
                break
            assert a.observation(x) == b.observation(x), f"trial {trial}, seat {x}"
            assert [d.text for d in a.legal(x)] == [d.text for d in b.legal(x)]
            checked += 1
            seats = a.to_decide()
            if seats != b.to_decide():
                break
            for s in seats:
                la, lb = a.legal(s), b.legal(s)
                k = rng.randrange(len(la))
                if k >= len(lb) or la[k].text != lb[k].text:
                    break
                na, nb = len(a.events), len(b.events)
                a.apply(s, la[k].text)
                b.apply(s, lb[k].text)
                if s == x and la[k].text.startswith("play hand"):
                    # x's own play by count puts the same card on the pile.
                    assert event_text(a.events[na]) == event_text(b.events[nb]), (
                        f"trial {trial}: {la[k].text}")
            else:
                continue
            break
    assert checked > 1000


def test_a_3up_play_of_one_of_two_identical_copies_leaves_the_first_in_the_3up_list() -> None:
    """RULES §9.6 (four_of_a_colour: a swap puts the hand card in the place of the 3UP
    card it replaced), §6 and protocol/RULES.md §10.4: identical copies are identical
    for every purpose, and which copy a play takes depends only on the cards the seat
    holds, in the order shown (the hand's, the 3UP cards'), never on where the copies
    lay in the deck.  Seat 1's 3UP cards are 9g 7g 9g after swapping a hand 9g for its
    2g; `play 3up 9g` plays the first 9g of that list and leaves 7g 9g.  (Found by the
    differential tests against the oracle, tests/oracle: the engine played the copy
    dealt first, by its copy number, and left 9g 7g.)"""
    deck = ["4g", "Cg", "5g", "Cg", "7g", "5g", "10g", "9g", "2g", "6g", "C+2g", "3g", "4g",
            "7g", "10g", "2g", "C+1g", "9g", "8g", "1g", "6g", "8g", "3g", "1g", "C+2g", "C+1g"]
    decisions = [
        (1, "3up 2g 7g 9g"), (0, "3up 2g 4g C+1g"), (1, "play hand 3g"),
        (0, "play hand 10g 10g"), (1, "pickup"), (0, "play hand C+2"), (0, "draw"),
        (0, "play hand 1g"), (0, "play hand 6g"), (1, "play hand 10g 10g"), (1, "swap 2g 9g"),
        (0, "pickup"), (1, "play hand 2g"), (0, "play hand 3g"), (1, "play hand 6g"),
        (0, "play hand 10g"), (0, "swap C+1g 1g"), (1, "play hand C+2"), (1, "play hand 8g"),
        (1, "draw"), (1, "play hand C+1"), (1, "play hand 3g"), (0, "play hand 6g"),
    ]
    config = GameConfig(players=2, deck="alternative", colours=1,
                        variants=frozenset({"four_of_a_colour"}))
    game = Game(config, 0, deck=parse_deck(deck), first_player=1)
    for seat, decision in decisions:
        game.apply(seat, decision)
    assert game.observation(0)["seats"][1]["up"] == ["9g", "7g", "9g"]
    assert game.observation(0)["seats"][1]["hand"] == 0
    game.apply(1, "play 3up 9g")
    for seat in (0, 1):
        assert game.observation(seat)["seats"][1]["up"] == ["7g", "9g"]
