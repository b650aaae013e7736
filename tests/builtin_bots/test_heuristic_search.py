"""The built-in heuristic's endgame search (``referee/bots/search.py``): it uses only
what its seat may know (RULES §6), it is deterministic given its seed, and it only
ever makes legal decisions.

* A determinized game shows the seat exactly its real observation and legal list,
  and deals only the cards the seat cannot see, into the places it cannot see into
  (the same multiset of cards there as in the real game), with the cards it saw
  picked up in the hand that picked them up.
* The information-set property for the bot, as ``tests/game/test_infosets.py`` has
  it for the engine: two games that differ only in cards seat ``x`` cannot see
  (game B's deck is A's with those cards permuted, the other seats replaying A's
  decisions) get the same decisions from ``x``'s bot at the same seed, searches
  included.
* Same seed, same game; another seed, other samples; no illegal decision (no fault)
  over many games of every table size and variant.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from referee.bots import HeuristicBot, LowestBot, make_bot
from referee.bots.search import determinize
from referee.game import Game, GameConfig, IllegalDecision
from referee.game.cards import TEXT
from referee.play.runner import InProcessPlayer, run_game
from tests.game.test_infosets import seen_by

Event = tuple[Any, ...]

CONFIGS = [
    GameConfig(players=2),
    GameConfig(players=4),
    GameConfig(players=3, variants={"may_decline", "ones_reverse", "play_out"}),
    GameConfig(players=4, variants={"four_of_a_colour", "draw_once_per_clear", "play_out"}),
    GameConfig(players=5, variants={"swap_piles", "choose_for_others"}),
    GameConfig(players=6, variants={"play_out"}, colours=5),
    GameConfig(players=2, deck="alternative", colours=1, variants={"four_of_a_colour"}),
    GameConfig(players=3, colours=3),
]
IDS = [f"{c.players}p-{c.deck}-{'+'.join(sorted(c.variants)) or 'std'}" for c in CONFIGS]


def searched(bot: HeuristicBot, obs: dict[str, Any], legal: list[Any]) -> tuple[Any, bool]:
    """The bot's decision, and whether it searched (drew from its generator)."""
    before = bot.rng.getstate()
    d = bot.decide(obs, legal)
    return d, bot.rng.getstate() != before


def hidden_places(game: Game, seat: int) -> Counter[str]:
    """The cards in the places ``seat`` cannot see into: the other hands, every 3DOWN
    slot, the draw pile."""
    out: Counter[str] = Counter()
    for s in range(game.n):
        if s != seat:
            out.update(TEXT[c] for c in game.hand(s))
        out.update(TEXT[c] for c in game.down[s] if c is not None)
    out.update(TEXT[c] for c in game.draw_pile)
    return out


@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_a_determinized_game_is_one_the_seat_could_be_in(config: GameConfig) -> None:
    checked = 0
    for seed in range(4):
        game = Game(config, seed)
        bots = [HeuristicBot(seed * 10 + s) for s in range(config.players)]
        rng = random.Random(seed)
        seen = [0] * config.players
        while not game.over:
            for seat in game.to_decide():
                bot = bots[seat]
                bot.observe(game.events_for(seat, seen[seat]))
                seen[seat] = len(game.events)
                legal = game.legal(seat)
                obs = game.observation(seat)
                if obs["phase"] == "play" and rng.random() < 0.3:
                    sim = determinize(obs, legal, random.Random(checked), bot.known)
                    assert sim is not None
                    assert sim.observation(seat) == obs
                    assert [d.text for d in sim.legal(seat)] == [d.text for d in legal]
                    # Only the cards the seat cannot see, dealt where it cannot see.
                    assert hidden_places(sim, seat) == hidden_places(game, seat)
                    for s, cards in enumerate(bot.known):
                        if s != seat and cards:
                            # cards it saw go into a hand are (still) in that hand
                            assert not Counter(cards) - Counter(TEXT[c] for c in game.hand(s))
                            assert not Counter(cards) - Counter(TEXT[c] for c in sim.hand(s))
                    checked += 1
                game.apply(seat, bot.decide(obs, legal) if rng.random() < 0.7
                           else legal[rng.randrange(len(legal))])
    assert checked > 25


View = tuple[dict[str, Any], list[Event]]


def play_a(config: GameConfig, seed: int, x: int,
           ) -> tuple[Game, list[tuple[int, str]], list[View]]:
    """Game A on its own deck order: seat ``x`` the heuristic (seeded), the others
    ``lowest`` with a random decision now and then; returned with its decisions and
    what ``x`` was shown at each of its own (observation, events)."""
    shuffled = Game(config, seed=seed)
    g = Game(config, seed=seed, deck=list(shuffled.deck), first_player=shuffled.first_player)
    bot = HeuristicBot()
    bot.new_game(seed)
    other = LowestBot()
    rng = random.Random(seed)
    seen = 0
    taken: list[tuple[int, str]] = []
    views: list[View] = []
    while not g.over:
        for s in g.to_decide():
            legal = g.legal(s)
            if s == x:
                views.append((g.observation(x), g.events_for(x, seen)))
                bot.observe(views[-1][1])
                seen = len(g.events)
                d = bot.decide(views[-1][0], legal)
            elif rng.random() < 0.2:
                d = legal[rng.randrange(len(legal))]
            else:
                d = other.decide(g.observation(s), legal)
            g.apply(s, d)
            taken.append((s, d.text))
    return g, taken, views


def replay_b(config: GameConfig, seed: int, deck: list[int], first: int,
             taken: list[tuple[int, str]], x: int, views: list[View],
             ) -> tuple[list[str], int]:
    """Game B: the other seats replay A's decisions, seat ``x`` is a fresh heuristic
    at the same seed, told what its seat sees.  Its decisions and how many of them
    searched, as long as ``x`` is shown what it was shown in A (a replayed decision
    can play other copies, or become illegal, once other cards are hidden)."""
    g = Game(config, seed=seed, deck=deck, first_player=first)
    bot = HeuristicBot()
    bot.new_game(seed)
    seen = 0
    mine: list[str] = []
    searches = 0
    for s, text in taken:
        if s == x:
            view = (g.observation(x), g.events_for(x, seen))
            if view != views[len(mine)]:
                break  # not a pair from here on: x sees a difference
            bot.observe(view[1])
            seen = len(g.events)
            d, did = searched(bot, view[0], g.legal(x))
            searches += did
            mine.append(d.text)
            text = d.text
        try:
            g.apply(s, text)
        except IllegalDecision:
            break
    return mine, searches


@pytest.mark.parametrize("config", CONFIGS[:4] + CONFIGS[6:], ids=IDS[:4] + IDS[6:])
def test_cards_the_seat_cannot_see_do_not_change_its_decisions(config: GameConfig) -> None:
    pairs = searches = 0
    for seed in range(8):
        x = seed % config.players
        a, taken, views = play_a(config, seed, x)
        rng = random.Random(1000 + seed)
        k = rng.randrange(len(taken) // 2, len(taken))  # a prefix reaching the endgame
        taken = taken[:k]
        # The cards x has not seen by step k (replayed on A's deck order).
        g = Game(config, seed=seed, deck=list(a.deck), first_player=a.first_player)
        for s, text in taken:
            g.apply(s, text)
        hidden = [c for c in a.deck if c not in seen_by(g.events, x)]
        want = [text for s, text in taken if s == x]
        for _ in range(3):
            perm = list(hidden)
            rng.shuffle(perm)
            pi = dict(zip(hidden, perm, strict=True))
            deck_b = [pi.get(c, c) for c in a.deck]
            mine, did = replay_b(config, seed, deck_b, a.first_player, taken, x, views)
            # As long as x sees what it saw in A, it decides as in A.
            assert mine == want[: len(mine)], (seed, x)
            if deck_b != list(a.deck):
                pairs += len(mine) == len(want)
                searches += did
    assert pairs >= 4
    assert searches > 0  # the property was checked on searched decisions too


def heuristic_vs_lowest(seed: int, bot_seed: int) -> list[str]:
    """Seat 0's decisions in a 2-player game against ``lowest``, its generator seeded
    with ``bot_seed``."""
    g = Game(GameConfig(players=2), seed)
    bot = HeuristicBot(12345)
    bot.new_game(bot_seed)
    low = LowestBot()
    seen = 0
    out = []
    while not g.over:
        for s in g.to_decide():
            legal = g.legal(s)
            if s == 0:
                bot.observe(g.events_for(0, seen))
                seen = len(g.events)
                d = bot.decide(g.observation(0), legal)
                out.append(d.text)
            else:
                d = low.decide(g.observation(s), legal)
            g.apply(s, d)
    return out


def test_the_same_seed_gives_the_same_game_and_another_seed_other_searches() -> None:
    config = GameConfig(players=3, variants={"play_out"})
    for seed in range(5):
        recs = [run_game(config, seed, [InProcessPlayer(make_bot(n)) for n in
                                        ("heuristic", "lowest", "heuristic")])
                for _ in range(2)]
        assert [d["decision"] for d in recs[0].decisions] == [
            d["decision"] for d in recs[1].decisions]
        assert recs[0].events == recs[1].events
    # Only the seed given at new_game counts (not the one the bot was made with),
    # and another one samples other deals: some decision differs.
    differ = 0
    for seed in range(10):
        assert heuristic_vs_lowest(seed, 1) == heuristic_vs_lowest(seed, 1)
        differ += heuristic_vs_lowest(seed, 1) != heuristic_vs_lowest(seed, 2)
    assert differ > 0


@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_the_heuristic_only_makes_legal_decisions(config: GameConfig) -> None:
    names = ["heuristic", "lowest", "random"]
    for seed in range(8):
        lineup = [names[(seed + s) % 3] if s else "heuristic" for s in range(config.players)]
        rec = run_game(config, seed, [InProcessPlayer(make_bot(n, seed)) for n in lineup])
        assert rec.faults == [], [str(f) for f in rec.faults]
        assert rec.ended.how in ("winner", "played_out", "turn_limit")


def test_the_search_touches_no_private_name_of_the_engine() -> None:
    """The engine builds the search's games (``Game.determinize``): search.py reads no
    name starting with an underscore of another module's object, nor makes a Game
    with ``__new__`` -- a new field in Game cannot silently break it."""
    import ast
    from pathlib import Path

    import referee.bots.search as search

    tree = ast.parse(Path(search.__file__).read_text())
    own = {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)}
    private = [f"line {node.lineno}: .{node.attr}" for node in ast.walk(tree)
               if isinstance(node, ast.Attribute) and node.attr.startswith("_")]
    imported = [f"{a.name} from {node.module}" for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) for a in node.names
                if a.name.startswith("_") and a.name not in own]
    assert private == [] and imported == []
