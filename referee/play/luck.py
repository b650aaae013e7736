"""Luck-adjusted scores of a recorded game: replay its deck and decisions through the
engine and, at every chance event, subtract what the outcome's luck was worth.

Owns the value functions (a linear model over ``referee.game.features`` per stage of
the draw pile, fitted for the least variance of the adjusted scores on games of the
built-in bots, shipped as ``luck_model.json`` and refitted by ``referee luck fit``;
``RolloutValue``, rollouts once the draw pile is empty; ``LuckSetting``, a
tournament's or league's choice between them), the replay that finds the chance events and builds each one's
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
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..bots import HeuristicBot, LowestBot, make_bot
from ..bots.search import rollout_policy
from ..game import Game, GameConfig
from ..game.cards import COLOUR, KIND, Card, parse_deck
from ..game.decisions import DOWN, Decision
from ..game.events import events_for
from ..game.features import (
    FEATURES,
    Summary,
    features,
    hand_kinds,
    reshuffled,
    summaries,
    summaries_of_hands,
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


#: The model's stages by default: the draw pile holds more than each bound in turn,
#: then (the last stage) it is empty; each stage has its own weights.
STAGE_BOUNDS = (30, 15, 5, 0)


def stage_index(game: Game, bounds: Sequence[int] = STAGE_BOUNDS) -> int:
    left = len(game.draw_pile)
    for i, b in enumerate(bounds):
        if left > b:
            return i
    return len(bounds)


@dataclass(frozen=True)
class ValueModel:
    """V: per table size and stage (the draw pile's size, ``bounds``: see
    ``stage_index``), one weight vector over ``FEATURES`` for each score."""

    weights: Mapping[int, Sequence[Mapping[str, Sequence[float]]]]
    meta: Mapping[str, Any]
    bounds: tuple[int, ...] = STAGE_BOUNDS

    @classmethod
    def load(cls, path: Path | None = None) -> ValueModel:
        where = path or MODEL_FILE
        raw = json.loads(where.read_text())
        if list(raw.get("features", [])) != list(FEATURES):
            raise ValueError(f"{where}: its features are not this version's "
                             f"(refit it: referee luck fit)")
        if "stage_bounds" in raw:
            bounds = tuple(int(b) for b in raw["stage_bounds"])
            stages: Sequence[Any] = range(len(bounds) + 1)
        else:  # version 1: two stages, named
            bounds, stages = (0,), ("draw", "endgame")
        try:
            weights = {int(n): [{k: [float(x) for x in (w[st] if isinstance(w, dict)
                                                         else w[st])[k]] for k in SCORES}
                                for st in stages]
                       for n, w in raw["weights"].items()}
        except (KeyError, IndexError, TypeError) as e:
            raise ValueError(f"{where}: not a value model ({e!r}; refit it: referee luck "
                             f"fit)") from None
        meta = {k: v for k, v in raw.items() if k not in ("weights", "features", "stage_bounds")}
        return cls(weights, meta, bounds)

    def to_json(self) -> str:
        body = {**self.meta, "version": 2, "features": list(FEATURES),
                "stage_bounds": list(self.bounds),
                "weights": {str(n): [{k: [round(x, 6) for x in st[k]] for k in SCORES}
                                     for st in w]
                            for n, w in sorted(self.weights.items())}}
        return json.dumps(body, indent=1) + "\n"

    def __call__(self, game: Game, sums: Sequence[Summary]) -> list[list[float]]:
        per_n = self.weights.get(game.n)
        w = per_n[stage_index(game, self.bounds)] if per_n is not None else None
        return self._seats(game, sums, _exact(game, sums), w, range(game.n))


    def drawn(self, game: Game, sums: Sequence[Summary], drawer: int,
              alts: Sequence[Summary]) -> list[list[list[float]]]:
        """``self(game, sums')`` for each ``sums'``: ``sums`` with the drawer's summary
        replaced by one of ``alts`` (a draw's outcomes), the same numbers computed
        with less work: another seat's features read the drawer's summary only
        through its place, its cards left and its specials, so they are computed once
        for each value of those."""
        exact = _exact(game, sums)  # the drawer's place is the same in every outcome
        per_n = self.weights.get(game.n)
        w = per_n[stage_index(game, self.bounds)] if per_n is not None else None
        n = game.n
        seen: dict[tuple[int, ...], list[list[float]]] = {}
        out = []
        alt_sums = list(sums)
        for alt in alts:
            alt_sums[drawer] = alt
            key = (alt[0], alt[1] + alt[2] + alt[3], alt[6] + alt[7] + alt[9])
            others = seen.get(key)
            if others is None:
                others = seen[key] = self._seats(game, alt_sums, exact, w,
                                                 [s for s in range(n) if s != drawer])
            mine = self._seats(game, alt_sums, exact, w, [drawer])
            out.append([[mine[i][0] if s == drawer else others[i][s - (s > drawer)]
                         for s in range(n)] for i in range(len(SCORES))])
        return out

    @staticmethod
    def _seats(game: Game, sums: Sequence[Summary], exact: Sequence[Sequence[float | None]],
               w: Mapping[str, Sequence[float]] | None, seats: Sequence[int]
               ) -> list[list[float]]:
        """``__call__``'s values of ``seats`` only, in that order."""
        out = [[0.0] * len(seats) for _ in SCORES]
        for j, s in enumerate(seats):
            x = features(game, sums, s) if w is not None else None
            for i, k in enumerate(SCORES):
                e = exact[i][s]
                if e is not None:
                    out[i][j] = e
                elif x is not None and w is not None:
                    out[i][j] = dot(w[k], x)
        return out


_DEFAULT: ValueModel | None = None


def default_model() -> ValueModel:
    """The shipped model (read once)."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = ValueModel.load()
    return _DEFAULT


#: A rollout's policy for one seat: (legal decisions, the rollout's generator) -> one.
Policy = Callable[[Sequence[Decision], random.Random], Decision]

_LOWEST = LowestBot()


def _rule(legal: Sequence[Decision], rng: random.Random) -> Decision:
    return rollout_policy(legal)


def _lowest(legal: Sequence[Decision], rng: random.Random) -> Decision:
    return _LOWEST.decide({}, legal)


def _random(legal: Sequence[Decision], rng: random.Random) -> Decision:
    return legal[int(rng.random() * len(legal))]


#: The play-phase policy of each built-in bot, as a rollout plays it: the heuristic's
#: rule (its endgame search left out), lowest's rule, random's uniform choice.
BUILTIN_POLICIES: Mapping[str, Policy] = {"heuristic": _rule, "lowest": _lowest,
                                          "random": _random}


def seat_policies(builtins: Sequence[str | None]) -> list[Policy]:
    """Each seat's rollout policy: its bot's own where the seat's bot is built in
    (``builtins``: the built-in bot's name, or None for an external bot), the
    heuristic's rule otherwise (a fair judge knows a built-in bot's policy; an external
    bot's it can only model)."""
    return [BUILTIN_POLICIES.get(b or "", _rule) for b in builtins]


class RolloutValue:
    """V by rollouts once the draw pile holds ``draw_limit`` cards or fewer (0: once
    it is empty), the linear model (``base``) before.

    In the endgame the only cards no one has seen are the 3DOWN cards still face down,
    and the hands are known to the judge: a position's worth is then well estimated by
    dealing the unseen cards into their places ``rollouts`` times and playing every
    seat to the end, each with ``policies[seat]`` (``seat_policies``: the bots' own
    when they are built in; by default the heuristic's rule, ``bots.search.
    rollout_policy``).  The deals come from a generator seeded with ``seed`` afresh
    at every call, so V is a fixed function of the state (what unbiasedness needs),
    and the outcomes of one chance event are valued on the same deals (common random
    numbers: the corrections carry little of the rollouts' own noise).  A rollout
    still going after ``cap`` decisions is valued by ``base``.  Values are cached by
    state within a game (``cache``: the states seen, at most ``CACHE`` of them).
    ``needs_state``: ``game_luck`` builds the real state of every outcome of a draw
    that reaches the rollouts (not only its summaries), since the rollouts play it.

    Costly (hundreds of rollouts per game): an option for measurements and re-scoring,
    and a tournament's ``[scores] value = "rollout"``."""

    needs_state = True
    CACHE = 4096

    def __init__(self, base: Value | None = None, rollouts: int = 8, seed: int = 1,
                 cap: int = 400, draw_limit: int = 0,
                 policies: Sequence[Policy] | None = None, coupled: bool = True,
                 choices: Sequence[str | None] | None = None) -> None:
        self.coupled = coupled
        #: each seat's built-in bot (None: another bot), whose own random choices
        #: are corrected too (``_Choices``); None: only the chance events
        self.choices = list(choices) if choices is not None else None
        self.base = base if base is not None else default_model()
        self.rollouts = rollouts
        self.seed = seed
        self.cap = cap
        self.draw_limit = draw_limit
        self.policies = list(policies) if policies is not None else None
        self.cache: dict[tuple[Any, ...], list[list[float]]] = {}

    def plays(self, game: Game) -> bool:
        """Is ``game`` valued by rollouts (the draw pile down to ``draw_limit`` cards)?"""
        return game.phase == PLAYING and not game.over and len(game.draw_pile) <= self.draw_limit

    def _key(self, game: Game) -> tuple[Any, ...]:
        """What a rollout's result depends on: the whole state but its event log."""
        return (game.to_move, game.direction, game.turn, game.pending, game.in_extra,
                game.drawn, game.draw_ok, game.granted, game.top, game.run,
                game.colour_run, game.run_colour, tuple(game.pile), tuple(game.draw_pile),
                tuple(tuple(d) for d in game.down), tuple(tuple(u) for u in game.up),
                tuple(tuple(sorted(c for lst in h.values() for c in lst)) for h in game.hands),
                tuple(game.place))

    def __call__(self, game: Game, sums: Sequence[Summary]) -> list[list[float]]:
        if not self.plays(game):
            return [list(x) for x in self.base(game, sums)]
        key = self._key(game)
        got = self.cache.get(key)
        if got is None:
            got = self._rollouts(game, sums)
            if len(self.cache) >= self.CACHE:
                self.cache.clear()
            self.cache[key] = got
        return [list(x) for x in got]

    def _rollouts(self, game: Game, sums: Sequence[Summary]) -> list[list[float]]:
        n = game.n
        rng = random.Random(self.seed)
        # The unseen cards in their places (draw pile, then 3DOWN slots): an outcome's
        # state differs from the actual one only in the card at one place, so the same
        # seed deals the same cards to the same places in both -- save that one.
        cards = unseen(game) if self.coupled else sorted(unseen(game))
        pol = self.policies
        total = [[0.0] * n for _ in SCORES]
        for _ in range(self.rollouts):
            order = list(cards)
            rng.shuffle(order)
            g = reshuffled(game, order)
            steps = 0
            while not g.over and steps < self.cap:
                s = g.to_move
                legal = g.legal(s)
                g.apply(s, pol[s](legal, rng) if pol is not None else rollout_policy(legal))
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


#: The value functions a tournament or league may score its games with.
VALUES = ("linear", "rollout")
#: Rollouts per position of ``value = "rollout"`` unless the file says otherwise.
DEFAULT_ROLLOUTS = 16


@dataclass(frozen=True)
class LuckSetting:
    """Which V scores a tournament's or league's games (``[scores]``): the shipped
    linear model (``"linear"``, the default: cheap), or that model while the draw
    pile lasts and ``rollouts`` rollouts after (``"rollout"``: less variance left at
    2 seats, about ten times the cost).  With the rollout V, ``choices``: the
    built-in bots' own random choices are corrected too (``_Choices``; between
    lowest and random at 2 seats the share's variance left went from 0.61 / 0.57 to
    0.53 / 0.47 of the raw one; nothing measurable off the heuristic's); with the linear V they are not (it cannot tell one decision from
    another well enough: the corrections only added noise)."""

    value: str = "linear"
    rollouts: int = DEFAULT_ROLLOUTS
    choices: bool = True

    def __post_init__(self) -> None:
        if self.value not in VALUES:
            raise ValueError(f"unknown value function {self.value!r}: choose from "
                             f"{', '.join(VALUES)}")
        if not 1 <= self.rollouts <= 1024:
            raise ValueError(f"rollouts must be 1 to 1024, not {self.rollouts}")

    def describe(self) -> str:
        if self.value == "linear":
            return "linear"
        return f"rollout x{self.rollouts}" + (CHOICES_SUFFIX if self.choices else "")

    @classmethod
    def parse(cls, text: str) -> LuckSetting:
        """The setting ``describe`` wrote (``rollout xN`` alone: a store scored before
        the own choices were corrected)."""
        if text.startswith("rollout x"):
            rest = text.removeprefix("rollout x")
            return cls("rollout", int(rest.removesuffix(CHOICES_SUFFIX)),
                       rest.endswith(CHOICES_SUFFIX))
        return cls(text)

    def value_for(self, builtins: Sequence[str | None]) -> Value:
        """V for a game whose seats hold these bots (a built-in bot's name, None for
        any other): a rollout plays each built-in bot by its own policy and, with
        ``choices``, corrects its own random choices."""
        if self.value == "linear":
            return default_model()
        return RolloutValue(rollouts=self.rollouts, policies=seat_policies(builtins),
                            choices=list(builtins) if self.choices else None)


#: ``LuckSetting.describe``'s mark of the corrections at the built-in bots' choices.
CHOICES_SUFFIX = ", own choices"


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
            for i in range(len(actual))]


def game_luck(config: GameConfig, seed: int, deck: Sequence[Card], first_player: int,
              steps: Iterable[tuple[int, str]], places: Sequence[int], points: Sequence[int],
              value: Value | None = None, faults: Iterable[tuple[int, int]] = ()) -> Luck:
    """Replay a game (its deck, first player and decisions ``steps``: (seat, decision
    text)) and sum each seat's corrections at its chance events, for every score;
    ``places`` and ``points``: the final ones, as the standings count them;
    ``faults``: (seat, turn) of each fault recorded (a seat's own choices are not
    corrected from the turn of its first fault: the referee may have decided for it)."""
    v = value if value is not None else default_model()
    total, events = corrections(config, seed, deck, first_player, steps, v, len(SCORES),
                                faults)
    return Luck(tuple(tuple(x) for x in raw_scores(places, points)),
                tuple(tuple(x) for x in total), events)


def corrections(config: GameConfig, seed: int, deck: Sequence[Card], first_player: int,
                steps: Iterable[tuple[int, str]], v: Value, width: int,
                faults: Iterable[tuple[int, int]] = ()) -> tuple[list[list[float]], int]:
    """The sums, seat by seat, of the corrections of the ``width`` rows of ``v``'s
    values (``SCORES`` for a value function; a fit's design columns for
    ``design_rows``) at the game's chance events, and how many events there were."""
    game = Game(config, seed, deck=deck, first_player=first_player)
    total = [[0.0] * game.n for _ in range(width)]
    events = 0
    choices = _Choices(game, getattr(v, "choices", None), seed)
    first_fault: dict[int, int] = {}
    for seat, turn in faults:
        first_fault[seat] = min(turn, first_fault.get(seat, turn))
    for i, (seat, text) in enumerate(steps):
        if game.over:
            break
        if seat in first_fault and game.turn >= first_fault[seat]:
            choices.forget(seat)
        if choices.known(seat):
            events += choices.correct(i, seat, text, v, total)
        events += step_corrections(game, seat, text, v, total)
    return total, events


#: Independent samples of a searching heuristic's decision per decision it searches.
CHOICE_SAMPLES = 4
#: The built-in bots whose own random choices are corrected (``_Choices``): random's
#: (uniform over the legal decisions: its exact distribution) and the heuristic's
#: (its endgame search; its distribution sampled).  Lowest is deterministic.
RANDOMISING = ("heuristic", "random")


class _Choices:
    """Corrections at the random choices of seats whose policy is known (AIVAT's
    corrections at a known player's actions): built-in bots, never external ones.

    At a decision of such a seat once the draw pile is empty (no decision can draw
    then, so each decision's worth is one V), the correction is

        Q(decision taken) - mean of Q over the policy's distribution

    with Q(d) = V after d (a 3DOWN card: the mean of V over the cards it may be).
    For ``random`` the distribution is uniform over the legal decisions, exactly.
    The heuristic's decision comes from a search with random deals; its distribution
    has no closed form, so the mean is taken over ``CHOICE_SAMPLES`` independent runs
    of the same search on the seat's own view (its observation, and the cards it
    remembers from its events, replayed as the referee gave them), with generators
    of their own seeded from the game's seed and the decision's number.  Each sample
    is distributed as the bot's own choice and independent of it, so the correction
    has mean 0 given everything before it, whatever Q is: the adjusted score stays
    unbiased, and the part of the bot's luck in its own dice that V sees is taken
    off (all but 1 / CHOICE_SAMPLES of it).  The heuristic's rule part is
    deterministic: no correction when it does not search."""

    def __init__(self, game: Game, builtins: Sequence[str | None] | None, seed: int) -> None:
        self.game = game
        self.seed = seed
        self.bots: dict[int, Any] = {}
        for s, name in enumerate(builtins or ()):
            if name in RANDOMISING and s < game.n:
                self.bots[s] = make_bot(name)
        self.seen = [0] * game.n

    def known(self, seat: int) -> bool:
        return seat in self.bots

    def forget(self, seat: int) -> None:
        """No more corrections at the seat's choices (it faulted: the decisions
        recorded from then on may be the referee's, not its policy's)."""
        self.bots.pop(seat, None)

    def told(self, seat: int) -> Any:
        """The seat's bot, told the events since its last decision (as the referee
        tells an in-process bot before each request)."""
        bot = self.bots[seat]
        game = self.game
        observe = getattr(bot, "observe", None)
        if observe is not None:
            observe(events_for(game.events[self.seen[seat]:], seat))
        self.seen[seat] = len(game.events)
        return bot

    def correct(self, index: int, seat: int, text: str, v: Value,
                total: list[list[float]]) -> int:
        game = self.game
        bot = self.told(seat)
        if game.phase != PLAYING or game.draw_pile:
            return 0
        legal = game.legal(seat)
        if len(legal) < 2:
            return 0
        taken = next((d for d in legal if d.text == text), None)
        if taken is None:
            return 0  # not a decision the bot could have taken: no correction
        if isinstance(bot, HeuristicBot):
            obs = game.observation(seat)
            if not bot.searches(obs, legal):
                return 0
            key = derive_seed(self.seed, "luck-choice", index)
            sample = [bot.decide_with(obs, legal, random.Random(derive_seed(key, m)))
                      for m in range(CHOICE_SAMPLES)]
        else:
            sample = list(legal)
        worth: dict[str, list[list[float]]] = {}
        for d in [taken, *sample]:
            if d.text not in worth:
                worth[d.text] = _q(game, seat, d, v)
        mean = [[sum(worth[d.text][i][s] for d in sample) / len(sample) for s in range(game.n)]
                for i in range(len(total))]
        _add(total, [[a - b for a, b in zip(worth[taken.text][i], mean[i], strict=True)]
                     for i in range(len(total))])
        return 1


class OwnChoices:
    """``base`` (a value function), with the corrections at the built-in bots' own
    random choices on (``_Choices``; ``builtins``: each seat's built-in bot, None for
    any other bot: those seats get only the chance events' corrections)."""

    def __init__(self, base: Value, builtins: Sequence[str | None]) -> None:
        self.base = base
        self.choices = list(builtins)
        self.needs_state = bool(getattr(base, "needs_state", False))

    def plays(self, game: Game) -> bool:
        return bool(getattr(self.base, "plays", lambda g: True)(game))

    def __call__(self, game: Game, sums: Sequence[Summary]) -> Sequence[Sequence[float]]:
        return self.base(game, sums)


def _q(game: Game, seat: int, d: Decision, v: Value) -> list[list[float]]:
    """V after ``seat`` takes ``d`` (the draw pile empty: no card is drawn); a 3DOWN
    card: the mean of V over the unseen cards it may be."""
    if d.code != DOWN:
        g = game.copy()
        g.apply(seat, d)
        return [list(x) for x in v(g, summaries(g))]
    by_colour = game.four_colour
    groups: dict[tuple[int, int], list[Card]] = {}
    for c in unseen(game):
        groups.setdefault((KIND[c], COLOUR[c] if by_colour else 0), []).append(c)
    out: list[list[float]] | None = None
    n = 0
    for cards in groups.values():
        alt = with_down(game, seat, d.slot, representative(cards))
        alt.apply(seat, d)
        got = v(alt, summaries(alt))
        w = len(cards)
        n += w
        if out is None:
            out = [[w * x for x in row] for row in got]
        else:
            for row, new in zip(out, got, strict=True):
                for s, x in enumerate(new):
                    row[s] += w * x
    assert out is not None, "a 3DOWN card is always unseen"
    return [[x / n for x in row] for row in out]


def representative(cards: Sequence[Card]) -> Card:
    """The card that stands for a group of outcomes (cards of one kind): the lowest id,
    whatever its place among the unseen cards (``step_corrections``)."""
    return min(cards)


def step_corrections(game: Game, seat: int, text: str, v: Value,
                     total: list[list[float]]) -> int:
    """Apply ``seat``'s decision ``text`` to ``game`` and add the corrections of its
    chance events (the cards it makes someone draw, the 3DOWN card it turns) to
    ``total`` (rows of ``v``'s values by seat); returns how many events there were.

    An outcome's state is the actual one with the card that came and the outcome's
    card swapped (``with_drawn``, ``with_down``): under the uniform order of the unseen
    cards, that swap is as likely as the actual state, which is what makes each
    correction's mean 0 for any V, even one that reads where the unseen cards lie
    (rollouts).  The outcomes of one kind (and colour, where colours matter) are
    valued once, by a representative card chosen by its identity (the lowest id of
    the group), never by where it lies: a representative chosen by position (say,
    the first of its kind in the draw pile) would carry information on the order of
    the unseen cards into the outcome's state, and a V that reads that order would
    be biased."""
    if game.phase != PLAYING:
        game.apply(seat, text)
        return 0
    pool = unseen(game)
    before = game.copy() if text.startswith("down") else None
    start = len(game.events)
    decision = game.apply(seat, text)
    new = game.events[start:]
    if before is not None and decision.code == DOWN:
        ev = new[0]
        card = ev[3][0] if ev[0] == "play" else ev[3]
        slot = decision.slot
        by_colour = game.four_colour  # 3DOWN outcomes differ by colour too (RULES §9.6)
        groups: dict[tuple[int, int], list[Card]] = {}
        for c in pool:
            groups.setdefault((KIND[c], COLOUR[c] if by_colour else 0), []).append(c)
        actual = v(game, summaries(game))
        outcomes = []
        for cards in groups.values():
            if card in cards:
                outcomes.append((float(len(cards)), actual))
                continue
            alt = with_down(before, seat, slot, representative(cards))
            alt.apply(seat, decision)
            outcomes.append((float(len(cards)), v(alt, summaries(alt))))
        _add(total, _event_correction(actual, outcomes))
        return 1
    draws = [e for e in new if e[0] == "draw"]
    if not draws or game.over:
        return 0  # a game ended at the turn limit right after a draw: no correction
    events = 0
    sums = summaries(game)
    actual = v(game, sums)
    # a value function that plays the state out needs the real state of each
    # outcome once the draw pile is empty, not only the drawer's summary
    real = bool(getattr(v, "needs_state", False)) and bool(
        getattr(v, "plays", lambda g: True)(game))
    fast = getattr(v, "drawn", None)  # a draw's outcomes valued at once (ValueModel)
    for ev in draws:
        drawer, drawn = ev[1], list(ev[3])
        kinds_after = hand_kinds(game, drawer)
        left = Counter(KIND[c] for c in pool)
        for i, c in enumerate(drawn):
            later = Counter(KIND[x] for x in drawn[i + 1:])
            possible = left - later  # drawing a later card: the same hand in the end
            outcomes = [(float(sum(later.values())), actual)] if later else []
            mine = KIND[c]
            alts: list[tuple[int, list[int]]] = []  # (where in outcomes, the hand's kinds)
            for k, count in possible.items():
                if k == mine:
                    outcomes.append((float(count), actual))
                    continue
                if real:
                    alt_card = representative([x for x in pool if KIND[x] == k and x not in drawn])
                    alt = with_drawn(game, drawer, c, alt_card)
                    outcomes.append((float(count), v(alt, summaries(alt))))
                    continue
                kinds = list(kinds_after)
                kinds.remove(mine)
                kinds.append(k)
                alts.append((len(outcomes), kinds))
                outcomes.append((float(count), actual))  # its value is filled in below
            if alts:
                alt_summaries = summaries_of_hands(game, drawer, [h for _, h in alts])
                if fast is not None:
                    got = fast(game, sums, drawer, alt_summaries)
                else:
                    got = []
                    for a in alt_summaries:
                        alt_sums = list(sums)
                        alt_sums[drawer] = a
                        got.append(v(game, alt_sums))
                for (at, _), value in zip(alts, got, strict=True):
                    outcomes[at] = (outcomes[at][0], value)
            _add(total, _event_correction(actual, outcomes))
            events += 1
            left[mine] -= 1
        pool = [x for x in pool if x not in drawn]
    return events


def record_luck(lines: Iterable[str], value: Value | None = None) -> Luck:
    """The luck of a game from its JSONL record (the lines of the file)."""
    head: dict[str, Any] | None = None
    steps: list[tuple[int, str]] = []
    faults: list[tuple[int, int]] = []
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
        elif kind == "fault":
            faults.append((int(row["seat"]), int(row.get("turn", 0))))
        elif kind == "result":
            result = row
    if head is None or result is None:
        raise ValueError("the record is incomplete: no header or no result")
    return game_luck(GameConfig.from_dict(head["config"]), int(head["seed"]),
                     parse_deck(head["deck"]), int(head["first_player"]), steps,
                     result["places"], result["points"], value, faults)


def file_luck(path: Path, value: Value | None = None) -> Luck:
    with path.open(encoding="utf-8") as f:
        return record_luck(f, value)


# --- fitting the value function -----------------------------------------------------
#
# V is fitted for what it is used for: a seat's adjusted score is its raw score less
# the sum of its corrections, and with a linear V each correction is linear in the
# weights -- w . (x(after the event) - mean over outcomes of x(after that outcome)),
# plus the part of the exact values (a seat finished, a game over), which do not
# depend on w.  So the weights that leave the adjusted scores the least variance are a
# least-squares regression of (raw score - the exact part) on the summed feature
# differences ``design_rows``: a classical optimal control variate, fitted on games
# other than the ones it will adjust.  (Fitting V to predict the final score state by
# state, as version 1 did, explains almost nothing while the draw pile lasts.)

#: What ``fit_model`` plays by default: every table size, these lineups of built-in
#: bots in turn (a name per seat, repeated round the table): self-play of each, and
#: the two against each other.
FIT_SEATS = (2, 3, 4, 5, 6)
FIT_BOTS = ("heuristic", "lowest")
FIT_LINEUPS: tuple[tuple[str, ...], ...] = (("heuristic",), ("lowest",),
                                            ("heuristic", "lowest"))


class _Design:
    """A "value function" whose rows are the regression's columns: first, for each
    score, the exact values (``_exact``; 0 where unknown), then, stage by stage, the
    features of each seat whose value is not exact (0 in the other stages)."""

    def __init__(self, bounds: Sequence[int]) -> None:
        self.bounds = tuple(bounds)
        self.width = len(SCORES) + (len(self.bounds) + 1) * len(FEATURES)

    def __call__(self, game: Game, sums: Sequence[Summary]) -> list[list[float]]:
        n = game.n
        out = [[0.0] * n for _ in range(self.width)]
        exact = _exact(game, sums)
        base = len(SCORES) + stage_index(game, self.bounds) * len(FEATURES)
        for s in range(n):
            if exact[0][s] is not None:
                for i in range(len(SCORES)):
                    out[i][s] = exact[i][s] or 0.0
                continue
            for j, x in enumerate(features(game, sums, s)):
                out[base + j][s] = x
        return out


def design_rows(record: GameRecord, bounds: Sequence[int] = STAGE_BOUNDS
                ) -> list[tuple[list[float], list[float]]]:
    """For each seat of a game: (the summed corrections of each design column, the
    raw scores), the regression's rows (see above)."""
    d = _Design(bounds)
    total, _ = corrections(record.config, record.seed, parse_deck(record.deck),
                           record.first_player,
                           [(int(x["seat"]), str(x["decision"])) for x in record.decisions],
                           d, d.width)
    raw = raw_scores(record.ended.places, record.ended.points)
    return [([row[s] for row in total], [raw[i][s] for i in range(len(SCORES))])
            for s in range(record.config.players)]


def fit_rows(rows: Sequence[tuple[list[float], list[float]]], bounds: Sequence[int],
             ridge: float = 1e-3) -> list[dict[str, list[float]]]:
    """The weights, stage by stage, for each score, from ``design_rows``' rows."""
    m = len(SCORES)
    xs = [[1.0, *z[m:]] for z, _ in rows]  # an intercept, not part of V
    per_stage: list[dict[str, list[float]]] = [{} for _ in range(len(bounds) + 1)]
    for i, k in enumerate(SCORES):
        w = fit_linear(xs, [y[i] - z[i] for z, y in rows], ridge)[1:]
        for st in range(len(bounds) + 1):
            per_stage[st][k] = w[st * len(FEATURES):(st + 1) * len(FEATURES)]
    return per_stage


def self_play(n: int, games: int, seed: int,
              lineups: Sequence[Sequence[str]] = FIT_LINEUPS,
              variants: Sequence[str] = ("play_out",),
              progress: Callable[[], None] | None = None, start: int = 0) -> list[GameRecord]:
    """Games ``start`` to ``start + games - 1`` at ``n`` seats of the built-in bots,
    each of ``lineups`` in turn (its names repeated round the table, starting at a
    seat that turns with the games); every game and every bot's random numbers from
    ``seed`` and the game's number, so that games can be played in any split."""
    config = GameConfig(players=n, variants=frozenset(variants))
    out = []
    for gi in range(start, start + games):
        names = lineups[gi % len(lineups)]
        turn = gi // len(lineups)
        players = [InProcessPlayer(make_bot(names[(s + turn) % len(names)]), f"p{s}")
                   for s in range(n)]
        out.append(run_game(config, derive_seed(seed, "luck-fit", n, gi), players,
                            game_id=f"fit{n}-{gi}"))
        if progress is not None:
            progress()
    return out


#: Games per piece of work when a fit is spread over processes.
FIT_CHUNK = 25


def _fit_chunk(job: tuple[int, int, int, int, tuple[tuple[str, ...], ...], tuple[str, ...],
                          tuple[int, ...]]) -> list[tuple[list[float], list[float]]]:
    n, start, count, seed, lineups, variants, bounds = job
    return [r for rec in self_play(n, count, seed, lineups, variants, start=start)
            for r in design_rows(rec, bounds)]


def fit_records(records: Mapping[int, Sequence[GameRecord]], meta: Mapping[str, Any],
                bounds: Sequence[int] = STAGE_BOUNDS) -> ValueModel:
    """Fit V, per table size, on the records of games at that size."""
    weights = {n: fit_rows([r for rec in recs for r in design_rows(rec, bounds)], bounds)
               for n, recs in sorted(records.items())}
    return ValueModel(weights, dict(meta), tuple(bounds))


def fit_model(games: int, seed: int, seats: Sequence[int] = FIT_SEATS,
              lineups: Sequence[Sequence[str]] = FIT_LINEUPS,
              variants: Sequence[str] = ("play_out",),
              progress: Callable[[int], None] | None = None, jobs: int = 1,
              bounds: Sequence[int] = STAGE_BOUNDS) -> ValueModel:
    """Fit V on ``games`` games per table size (``self_play``), in ``jobs``
    processes: a seed gives one model, whatever ``jobs``.  ``progress(games)`` is
    called as games are done."""
    lu = tuple(tuple(x) for x in lineups)
    work = [(n, start, min(FIT_CHUNK, games - start), seed, lu, tuple(variants), tuple(bounds))
            for n in seats for start in range(0, games, FIT_CHUNK)]
    rows: dict[int, list[tuple[list[float], list[float]]]] = {n: [] for n in seats}
    with ProcessPoolExecutor(max(1, jobs)) as pool:
        for job, got in zip(work, pool.map(_fit_chunk, work), strict=True):
            rows[job[0]].extend(got)
            if progress is not None:
                progress(job[2])
    meta = {"seed": seed, "games_per_table": games, "seats": list(seats),
            "lineups": [list(x) for x in lineups], "variants": sorted(variants),
            "fit": "least variance of the adjusted scores",
            "refit": f"referee luck fit --games {games} --seed {seed}"
                     + ("" if tuple(seats) == FIT_SEATS else
                        "".join(f" --seats {n}" for n in seats))}
    weights = {n: fit_rows(r, bounds) for n, r in sorted(rows.items())}
    return ValueModel(weights, meta, tuple(bounds))
