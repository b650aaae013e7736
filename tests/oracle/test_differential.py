"""The engine against the independent oracle (tests/oracle/rules.py), game by game.

Seeded random games (uniformly random legal choices, sometimes written in another
accepted spelling) are played on both; at every step they must agree on who decides,
on the legal decisions (as sets and in order), on every seat's observation and on the
events each seat has seen; and on the result.  At each step a few decisions of every
text form, most of them illegal, are also tried on a copy of the engine: it must
accept exactly what the oracle accepts.  A disagreement names the setting, the seed
and the step, so that it can be replayed with `play_both`.
"""

from __future__ import annotations

import random

import pytest

from referee.errors import RefereeError
from referee.game import ConfigError, GameConfig, GameError, card_text, parse_deck
from referee.game import Game as EngineGame
from referee.game.view import view_of
from tests.oracle.adapter import Disagreement, Setting, play_both, random_setting
from tests.oracle.rules import VARIANTS, Config, OracleError, build_deck
from tests.oracle.rules import Game as OracleGame


def smallest_colours(deck: str, players: int) -> int:
    per_colour, extra = (12, 0) if deck == "standard" else (24, 2)
    return next(k for k in range(1, 8) if per_colour * k + extra >= 9 * players)


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("variant", [None, *VARIANTS])
def test_each_variant_at_each_seat_count(players: int, variant: str | None) -> None:
    variants = frozenset() if variant is None else frozenset({variant})
    kinds: dict[str, int] = {}
    for i in range(3):
        setting = Setting(players, variants)
        if i == 1:  # the smallest standard deck: colour runs, short games
            setting.colours = smallest_colours("standard", players)
        if i == 2:
            setting.deck = "alternative"
        seed = 1000 * players + 17 * i + VARIANTS.index(variant or "play_out")
        # The full deck's game mostly plays the lowest play: it reaches the endgame.
        out = play_both(setting, seed, lowest=0.8 if i == 0 else 0.0)
        for k, c in out.kinds.items():
            kinds[k] = kinds.get(k, 0) + c
    assert kinds.get("play", 0) > 0 and kinds.get("3up", 0) == 3 * players
    assert kinds.get("down", 0) > 0  # the 3DOWN cards were reached


def test_random_settings() -> None:
    """Random configurations: any set of variants, either deck, any allowed colours,
    short turn limits too."""
    hows: set[str] = set()
    for seed in range(40):
        rng = random.Random(seed)
        setting = random_setting(rng, rng.randint(2, 6))
        hows.add(play_both(setting, seed, probes=1).how)
    assert hows == {"winner", "played_out", "turn_limit"}


def test_four_of_a_colour_swaps_on_a_one_colour_deck() -> None:
    """One colour (the alternative deck's 26 cards): every run of four is one colour,
    so swap offers come often; the plays name their cards."""
    kinds: dict[str, int] = {}
    for seed in range(12):
        setting = Setting(2, frozenset({"four_of_a_colour", "play_out"}), "alternative", 1)
        for k, c in play_both(setting, seed).kinds.items():
            kinds[k] = kinds.get(k, 0) + c
    assert kinds.get("swap", 0) + kinds.get("keep", 0) > 5


def test_a_disagreement_is_reported() -> None:
    """The comparison can fail: an oracle made to disagree (C+2 granting one extra
    action) is caught, with the setting, seed and step named."""

    class Wrong(OracleGame):
        def put_on_pile(self, seat: int, cards: list[str]) -> None:
            if cards[-1].startswith("C+2"):
                self.pending_extra -= 1
            super().put_on_pile(seat, cards)

    import tests.oracle.adapter as adapter

    original = adapter.OracleGame
    adapter.OracleGame = Wrong  # type: ignore[misc]
    try:
        with pytest.raises(Disagreement, match=r"2p standard/2 .*seed \d+, step \d+"):
            for seed in range(50):
                play_both(Setting(2, colours=2, deck="standard"), seed)
    finally:
        adapter.OracleGame = original  # type: ignore[misc]


@pytest.mark.parametrize("play_out", [False, True])
def test_the_turn_limit_on_the_turn_of_a_finish(play_out: bool) -> None:
    """RULES §4 (turn limit): a game whose natural end falls on turn `turn_limit` ends
    naturally; one turn less, it ends by the turn limit.  Under play_out, a limit on
    the turn of the first finish ends the game there with the finisher keeping place 1.
    (The same seed plays the same game up to the limit: both list the same decisions.)"""
    variants = frozenset({"play_out"}) if play_out else frozenset()
    for seed in range(4):
        full = play_both(Setting(2 + seed % 3, variants, colours=3), seed)
        natural = full.how
        for limit, how in [(full.turns, natural), (full.turns - 1, "turn_limit")]:
            assert play_both(Setting(2 + seed % 3, variants, colours=3, turn_limit=limit), seed).how == how
        if play_out and len(full.finish_turns) > 1:
            first = full.finish_turns[0]
            cut = play_both(Setting(2 + seed % 3, variants, colours=3, turn_limit=first), seed)
            assert cut.how == "turn_limit" and cut.finish_turns == [first]


@pytest.mark.parametrize("deck", ["standard", "alternative"])
def test_decks_and_the_deck_size_rule(deck: str) -> None:
    """RULES §1: the same cards in every deck; a deck of fewer than 9 cards per player
    refused by both, from the configuration or as an explicit deck order."""
    for players in range(2, 7):
        for colours in [None, *range(1, 8)]:
            cards = build_deck(deck, colours)
            if len(cards) < 9 * players:
                with pytest.raises(ConfigError):
                    GameConfig(players=players, deck=deck, colours=colours).validate()
                continue
            config = GameConfig(players=players, deck=deck, colours=colours)
            config.validate()
            assert sorted(card_text(c) for c in config.deck_cards()) == sorted(cards)
    order = build_deck(deck, 1)[:17]
    with pytest.raises(OracleError):
        OracleGame(Config(2), order, first=0)
    with pytest.raises(GameError):
        EngineGame(GameConfig(players=2), 0, deck=parse_deck(order), first_player=0)
    five = ["7g"] * 5 + build_deck("standard", 2)[:15]
    with pytest.raises(OracleError):
        OracleGame(Config(2), five, first=0)
    with pytest.raises(RefereeError, match="more than 4 times"):
        EngineGame(GameConfig(players=2), 0, deck=parse_deck(five), first_player=0)


def test_the_oracle_deals_like_the_rules_say() -> None:
    deck = build_deck("standard", 2)
    g = OracleGame(Config(2), deck, first=0)
    assert g.seats[0].down == deck[0:6:2] and g.seats[1].down == deck[1:6:2]
    assert sorted(g.seats[0].dealt) == sorted(deck[6:18:2])
    assert g.draw_pile == deck[18:]


#: The sweep's games per seat count: the first QUICK in every run of the suite (make
#: test), all SWEEP of them under the ``sweep`` marker too (make test-sweep; the soak
#: runs them all).  Each game's setting and choices depend on its number alone, so
#: the quick part is the sweep's first games, every kind of them included: a third on
#: the smallest deck with four_of_a_colour, and each of the three ways of choosing.
SWEEP = 240
QUICK = 24


def sweep(players: int, games: range) -> None:
    """Games of random settings (a third of them four_of_a_colour on the smallest
    deck), the seats' choices uniformly random, mostly the lowest play or mostly the
    last entry (about 0.05 s of CPU a game)."""
    for seed in games:
        rng = random.Random(players * 100_000 + seed)
        setting = random_setting(rng, players)
        if seed % 3 == 0:
            setting.colours = smallest_colours(setting.deck, players)
            setting.variants = setting.variants | {"four_of_a_colour"}
        lowest, last = [(0.0, 0.0), (0.8, 0.0), (0.0, 0.6)][seed % 3]
        play_both(setting, players * 100_000 + seed, lowest=lowest, last=last)


@pytest.mark.slow
@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_a_sweep(players: int) -> None:
    """The sweep's first QUICK games at each seat count."""
    sweep(players, range(QUICK))


@pytest.mark.slow
@pytest.mark.sweep
@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_a_large_sweep(players: int) -> None:
    """The rest of the sweep: SWEEP games per seat count in all (about 10 s of CPU
    each), run by make test-sweep and the soak, not by make test."""
    sweep(players, range(QUICK, SWEEP))


def test_a_determinized_game_shows_the_seat_what_the_oracle_does() -> None:
    """The games a search plays (`Game.determinize` from the seat's view, its unseen
    cards dealt at random) show the seat to move exactly what the oracle says it may
    see, and offer it exactly the oracle's legal decisions (RULES §6, P§10)."""
    checked = 0
    for seed in range(25):
        rng = random.Random(seed)
        setting = random_setting(rng, rng.randint(2, 6))
        order = build_deck(setting.deck, setting.colours)
        rng.shuffle(order)
        first = rng.randrange(setting.players)
        engine = EngineGame(setting.engine_config(), 0, deck=parse_deck(order), first_player=first)
        oracle = OracleGame(setting.oracle_config(), order, first)
        while engine.to_decide():
            seat = engine.to_decide()[0]
            legal = engine.legal(seat)
            if oracle.phase == "play" and rng.random() < 0.3:
                view = view_of(engine.observation(seat), legal)
                if view is not None:
                    hidden = list(view.hidden)
                    rng.shuffle(hidden)
                    search = EngineGame.determinize(view, hidden)
                    assert search.observation(seat) == oracle.observation(seat), (setting, seed)
                    assert [d.text for d in search.legal(seat)] == oracle.legal(seat)
                    checked += 1
            choice = rng.choice(legal).text
            engine.apply(seat, choice)
            if oracle.phase == "setup" and "swap_piles" in setting.variants:
                oracle.perm = engine.observation(seat).get("piles") or oracle.perm
            oracle.apply(seat, choice)
    assert checked > 500
