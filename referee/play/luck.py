"""Luck-adjusted scores of a recorded game: replay its deck and decisions through the
engine and, at every chance event, subtract what the outcome's luck was worth.

Owns the value function (a linear model over ``referee.game.features``, fitted on
self-play of the built-in bots, shipped as ``luck_model.json`` and refitted by
``referee luck fit``), the replay that finds the chance events and builds each one's
possible outcomes, and the scores it adjusts.  The estimator's arithmetic is
``referee.stats.luck``.

Chance events and their outcomes.  All chance is fixed by the deck order, but to
every seat -- and to a fair judge -- the next card drawn, and each 3DOWN card turned,
is uniformly one of the cards no one has seen yet (the draw pile and the 3DOWN cards
still face down).  So at each event the possible outcomes are those cards, equally
likely.  A draw of m cards is m events, in the order drawn; an outcome swaps the card
drawn with an unseen card (which takes its place in the draw pile or 3DOWN slot).
The value function reads no colour and no unseen card (``features``), so the
outcomes are grouped by kind: a draw's outcomes differ only in the drawer's hand;
a 3DOWN card's outcomes are played through the engine (played, cleared, failed and
picked up...).  A game that ends at the event is valued by its actual scores.

Scores: ``share`` (the share of opponents finished ahead of, level counting half:
place points / (n - 1), a win at 2 seats), ``win`` (first place), ``points`` (the
penalty points held at the end).  Raw scores come from the game's final places and
points (forfeits included), as the standings count them.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..bots import make_bot
from ..bots.search import rollout_policy
from ..game import Game, GameConfig
from ..game.cards import COLOUR, KIND, Card, parse_deck
from ..game.decisions import DOWN
from ..game.features import (
    FEATURES,
    Summary,
    features,
    hand_kinds,
    reshuffled,
    summaries,
    summary,
    unseen,
    with_down,
    with_drawn,
)
from ..game.phases import PLAYING
from ..game.seeds import derive_seed
from ..stats.luck import correction, dot, fit_linear
from .runner import GameRecord, InProcessPlayer, run_game

#: The scores adjusted, in the order of every per-score list here.
SCORES = ("share", "win", "points")
MODEL_FILE = Path(__file__).with_name("luck_model.json")

#: A value function: the game and every seat's summary (``features.summaries``, which
#: a draw's outcomes change for the drawer) -> values[score][seat] for ``SCORES``.
Value = Callable[[Game, Sequence[Summary]], Sequence[Sequence[float]]]


def seat_score(places: Sequence[int], points: Sequence[int], seat: int, score: str) -> float:
    """The seat's raw ``score`` in a game that ended with ``places`` and ``points``."""
    if score == "share":
        me = places[seat]
        n = len(places)
        behind = sum(1 for p in places if p > me)
        level = sum(1 for p in places if p == me) - 1
        return (behind + 0.5 * level) / (n - 1)
    if score == "win":
        return 1.0 if places[seat] == 1 else 0.0
    if score == "points":
        return float(points[seat])
    raise ValueError(f"unknown score {score!r}: choose from {', '.join(SCORES)}")


def raw_scores(places: Sequence[int], points: Sequence[int]) -> list[list[float]]:
    return [[seat_score(places, points, s, k) for s in range(len(places))] for k in SCORES]


def _exact(game: Game, sums: Sequence[Summary]) -> list[list[float | None]]:
    """The values already certain: every seat's at the end of the game; a finished
    seat's place and its 0 points (its share: every seat still playing ends behind)."""
    end = game.result()
    n = game.n
    if end is not None:
        return [list(x) for x in raw_scores(end.places, end.points)]
    out: list[list[float | None]] = [[None] * n for _ in SCORES]
    for s, sm in enumerate(sums):
        if sm[0]:
            out[0][s] = (n - sm[0]) / (n - 1)
            out[1][s] = 1.0 if sm[0] == 1 else 0.0
            out[2][s] = 0.0
    return out


#: The model's stages, each with its own weights: while the draw pile lasts, and after.
STAGES = ("draw", "endgame")


def stage_of(game: Game) -> str:
    return "draw" if game.draw_pile else "endgame"


@dataclass(frozen=True)
class ValueModel:
    """V: per table size and stage (``STAGES``), one weight vector over ``FEATURES``
    for each score."""

    weights: Mapping[int, Mapping[str, Mapping[str, Sequence[float]]]]
    meta: Mapping[str, Any]

    @classmethod
    def load(cls, path: Path | None = None) -> ValueModel:
        raw = json.loads((path or MODEL_FILE).read_text())
        if list(raw.get("features", [])) != list(FEATURES):
            raise ValueError(f"{path or MODEL_FILE}: its features are not this version's "
                             f"(refit it: referee luck fit)")
        weights = {int(n): {st: {k: [float(x) for x in w[st][k]] for k in SCORES}
                            for st in STAGES}
                   for n, w in raw["weights"].items()}
        return cls(weights, {k: v for k, v in raw.items() if k not in ("weights", "features")})

    def to_json(self) -> str:
        body = {**self.meta, "features": list(FEATURES),
                "weights": {str(n): {st: {k: [round(x, 6) for x in w[st][k]] for k in SCORES}
                                     for st in STAGES}
                            for n, w in sorted(self.weights.items())}}
        return json.dumps(body, indent=1) + "\n"

    def __call__(self, game: Game, sums: Sequence[Summary]) -> list[list[float]]:
        exact = _exact(game, sums)
        per_n = self.weights.get(game.n)
        w = per_n[stage_of(game)] if per_n is not None else None
        out = [[0.0] * game.n for _ in SCORES]
        for s in range(game.n):
            x = features(game, sums, s) if w is not None else None
            for i, k in enumerate(SCORES):
                e = exact[i][s]
                if e is not None:
                    out[i][s] = e
                elif x is not None and w is not None:
                    out[i][s] = dot(w[k], x)
        return out


_DEFAULT: ValueModel | None = None


def default_model() -> ValueModel:
    """The shipped model (read once)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = ValueModel.load()
    return _DEFAULT


class RolloutValue:
    """V by rollouts once the draw pile is empty, the linear model (``base``) before.

    In the endgame the only cards no one has seen are the 3DOWN cards still face down,
    and the hands are known to the judge: a position's worth is then well estimated by
    dealing those cards into their slots ``rollouts`` times and playing every seat to
    the end with the heuristic's rule (``bots.search.rollout_policy``).  The deals come
    from a generator seeded with ``seed`` afresh at every call, so V is a fixed
    function of the state (what unbiasedness needs), and the outcomes of one chance
    event are valued on the same deals (common random numbers: the corrections carry
    little of the rollouts' own noise).  A rollout still going after ``cap``
    decisions is valued by ``base``.  ``needs_state``: ``game_luck`` builds the real
    state of every outcome of a draw that empties the draw pile (not only its
    summaries), since the rollouts play it.

    Costly (hundreds of rollouts per game): an option for measurements and re-scoring,
    not the default."""

    needs_state = True

    def __init__(self, base: Value | None = None, rollouts: int = 8, seed: int = 1,
                 cap: int = 400, draw_limit: int = 0) -> None:
        self.base = base if base is not None else default_model()
        self.rollouts = rollouts
        self.seed = seed
        self.cap = cap
        self.draw_limit = draw_limit

    def plays(self, game: Game) -> bool:
        """Is ``game`` valued by rollouts (the draw pile down to ``draw_limit`` cards)?"""
        return game.phase == PLAYING and not game.over and len(game.draw_pile) <= self.draw_limit

    def __call__(self, game: Game, sums: Sequence[Summary]) -> list[list[float]]:
        if not self.plays(game):
            return [list(x) for x in self.base(game, sums)]
        n = game.n
        rng = random.Random(self.seed)
        cards = sorted(unseen(game))
        total = [[0.0] * n for _ in SCORES]
        for _ in range(self.rollouts):
            order = list(cards)
            rng.shuffle(order)
            g = reshuffled(game, order)
            steps = 0
            while not g.over and steps < self.cap:
                s = g.to_move
                g.apply(s, rollout_policy(g.legal(s)))
                steps += 1
            end = g.result()
            vals = (raw_scores(end.places, end.points) if end is not None
                    else self.base(g, summaries(g)))
            for i in range(len(SCORES)):
                row, got = total[i], vals[i]
                for s in range(n):
                    row[s] += got[s]
        exact = _exact(game, sums)
        return [[e if e is not None else t / self.rollouts
                 for e, t in zip(exact[i], total[i], strict=True)] for i in range(len(SCORES))]


@dataclass(frozen=True)
class Luck:
    """A game's luck: ``corrections[score][seat]`` (the sum over its chance events),
    ``raw[score][seat]``, and ``events``, the chance events counted."""

    raw: tuple[tuple[float, ...], ...]
    corrections: tuple[tuple[float, ...], ...]
    events: int

    def adjusted(self, score: str = "share") -> tuple[float, ...]:
        i = SCORES.index(score)
        return tuple(r - c for r, c in zip(self.raw[i], self.corrections[i], strict=True))

    def adjusted_all(self) -> tuple[tuple[float, ...], ...]:
        """``adjusted(score)`` for every score of ``SCORES``, rounded to 6 places."""
        return tuple(tuple(round(x, 6) for x in self.adjusted(k)) for k in SCORES)


def _add(total: list[list[float]], corr: Sequence[Sequence[float]]) -> None:
    for i, per_score in enumerate(corr):
        row = total[i]
        for s, c in enumerate(per_score):
            row[s] += c


def _event_correction(actual: Sequence[Sequence[float]],
                      outcomes: Sequence[tuple[float, Sequence[Sequence[float]]]]
                      ) -> list[list[float]]:
    return [correction(actual[i], [(w, v[i]) for w, v in outcomes])
            for i in range(len(SCORES))]


def game_luck(config: GameConfig, seed: int, deck: Sequence[Card], first_player: int,
              steps: Iterable[tuple[int, str]], places: Sequence[int], points: Sequence[int],
              value: Value | None = None) -> Luck:
    """Replay a game (its deck, first player and decisions ``steps``: (seat, decision
    text)) and sum each seat's corrections at its chance events, for every score;
    ``places`` and ``points``: the final ones, as the standings count them."""
    v = value if value is not None else default_model()
    needs_state = bool(getattr(v, "needs_state", False))
    game = Game(config, seed, deck=deck, first_player=first_player)
    n = game.n
    total = [[0.0] * n for _ in SCORES]
    events = 0
    by_colour = game.four_colour  # 3DOWN outcomes differ by colour too (RULES §9.6)
    for seat, text in steps:
        if game.over:
            break
        if game.phase != PLAYING:
            game.apply(seat, text)
            continue
        pool = unseen(game)
        before = game.copy() if text.startswith("down") else None
        start = len(game.events)
        decision = game.apply(seat, text)
        new = game.events[start:]
        if before is not None and decision.code == DOWN:
            ev = new[0]
            card = ev[3][0] if ev[0] == "play" else ev[3]
            slot = decision.slot
            groups: dict[tuple[int, int], list[Card]] = {}
            for c in pool:
                groups.setdefault((KIND[c], COLOUR[c] if by_colour else 0), []).append(c)
            actual = v(game, summaries(game))
            outcomes = []
            for cards in groups.values():
                if card in cards:
                    outcomes.append((float(len(cards)), actual))
                    continue
                alt = with_down(before, seat, slot, cards[0])
                alt.apply(seat, decision)
                outcomes.append((float(len(cards)), v(alt, summaries(alt))))
            _add(total, _event_correction(actual, outcomes))
            events += 1
            continue
        draws = [e for e in new if e[0] == "draw"]
        if not draws or game.over:
            continue  # a game ended at the turn limit right after a draw: no correction
        sums = summaries(game)
        actual = v(game, sums)
        # a value function that plays the state out needs the real state of each
        # outcome once the draw pile is empty, not only the drawer's summary
        real = needs_state and bool(getattr(v, "plays", lambda g: True)(game))
        for ev in draws:
            drawer, drawn = ev[1], list(ev[3])
            kinds_after = hand_kinds(game, drawer)
            left = Counter(KIND[c] for c in pool)
            for i, c in enumerate(drawn):
                later = Counter(KIND[x] for x in drawn[i + 1:])
                possible = left - later  # drawing a later card: the same hand in the end
                outcomes = [(float(sum(later.values())), actual)] if later else []
                mine = KIND[c]
                for k, count in possible.items():
                    if k == mine:
                        outcomes.append((float(count), actual))
                        continue
                    if real:
                        alt_card = next(x for x in pool if KIND[x] == k and x not in drawn)
                        alt = with_drawn(game, drawer, c, alt_card)
                        outcomes.append((float(count), v(alt, summaries(alt))))
                        continue
                    kinds = list(kinds_after)
                    kinds.remove(mine)
                    kinds.append(k)
                    alt_sums = list(sums)
                    alt_sums[drawer] = summary(game, drawer, kinds)
                    outcomes.append((float(count), v(game, alt_sums)))
                _add(total, _event_correction(actual, outcomes))
                events += 1
                left[mine] -= 1
            pool = [x for x in pool if x not in drawn]
    return Luck(tuple(tuple(x) for x in raw_scores(places, points)),
                tuple(tuple(x) for x in total), events)


def record_luck(lines: Iterable[str], value: Value | None = None) -> Luck:
    """The luck of a game from its JSONL record (the lines of the file)."""
    head: dict[str, Any] | None = None
    steps: list[tuple[int, str]] = []
    result: dict[str, Any] | None = None
    for line in lines:
        if not line.strip():
            continue
        row = json.loads(line)
        kind = row.get("type")
        if head is None:
            head = row
        elif kind == "decision":
            steps.append((int(row["seat"]), str(row["decision"])))
        elif kind == "result":
            result = row
    if head is None or result is None:
        raise ValueError("the record is incomplete: no header or no result")
    return game_luck(GameConfig.from_dict(head["config"]), int(head["seed"]),
                     parse_deck(head["deck"]), int(head["first_player"]), steps,
                     result["places"], result["points"], value)


def file_luck(path: Path, value: Value | None = None) -> Luck:
    with path.open(encoding="utf-8") as f:
        return record_luck(f, value)


# --- fitting the value function -----------------------------------------------------

#: What ``fit_model`` plays by default: every table size, self-play of these built-in
#: bots in turn (every seat the same bot: a game's result then depends on the cards and
#: the seats, not on which bot sat where, which is what V must predict).
FIT_SEATS = (2, 3, 4, 5, 6)
FIT_BOTS = ("heuristic", "lowest")


def training_rows(record: GameRecord, every: int = 2
                  ) -> list[tuple[str, list[float], tuple[float, ...]]]:
    """(stage, features, final scores) of each seat still playing, at every
    ``every``-th decision of the game's play phase."""
    g = record
    game = Game(g.config, g.seed, deck=parse_deck(g.deck), first_player=g.first_player)
    res = g.ended
    final = raw_scores(res.places, res.points)
    rows = []
    for i, d in enumerate(g.decisions):
        if game.over:
            break
        if game.phase == PLAYING and i % every == 0:
            sums = summaries(game)
            st = stage_of(game)
            for s in range(game.n):
                if not sums[s][0]:
                    rows.append((st, features(game, sums, s),
                                 tuple(final[k][s] for k in range(len(SCORES)))))
        game.apply(int(d["seat"]), str(d["decision"]))
    return rows


def self_play(n: int, games: int, seed: int, bots: Sequence[str] = FIT_BOTS,
              variants: Sequence[str] = ("play_out",),
              progress: Callable[[], None] | None = None) -> list[GameRecord]:
    """``games`` self-play games at ``n`` seats, of each of ``bots`` in turn; every
    game and every bot's random numbers from ``seed``."""
    config = GameConfig(players=n, variants=frozenset(variants))
    out = []
    for gi in range(games):
        b = bots[gi % len(bots)]
        players = [InProcessPlayer(make_bot(b), f"{b}{s}") for s in range(n)]
        out.append(run_game(config, derive_seed(seed, "luck-fit", n, gi), players,
                            game_id=f"fit{n}-{gi}"))
        if progress is not None:
            progress()
    return out


def fit_records(records: Mapping[int, Sequence[GameRecord]], meta: Mapping[str, Any]
                ) -> ValueModel:
    """Fit V, per table size and stage, on the records of games at that size."""
    weights: dict[int, dict[str, dict[str, list[float]]]] = {}
    for n, recs in sorted(records.items()):
        rows = [r for rec in recs for r in training_rows(rec)]
        weights[n] = {}
        for st in STAGES:
            xs = [x for s, x, _ in rows if s == st]
            ys = [y for s, _, y in rows if s == st]
            weights[n][st] = {k: fit_linear(xs, [y[i] for y in ys]) if xs else
                              [0.0] * len(FEATURES) for i, k in enumerate(SCORES)}
    return ValueModel(weights, dict(meta))


def fit_model(games: int, seed: int, seats: Sequence[int] = FIT_SEATS,
              bots: Sequence[str] = FIT_BOTS, variants: Sequence[str] = ("play_out",),
              progress: Callable[[], None] | None = None) -> ValueModel:
    """Fit V on ``games`` self-play games per table size (``self_play``): a seed
    gives one model.  ``progress()`` is called after each game."""
    records = {n: self_play(n, games, seed, bots, variants, progress) for n in seats}
    meta = {"version": 1, "seed": seed, "games_per_table": games, "seats": list(seats),
            "bots": list(bots), "variants": sorted(variants),
            "refit": f"referee luck fit --games {games} --seed {seed}"}
    return fit_records(records, meta)
