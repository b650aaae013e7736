#!/usr/bin/env python3
"""How far can luck-adjusted scores go?  The floor no value function can get under.

The corrections of ``referee.play.luck`` are made at the chance events of the play
phase (a card drawn, a 3DOWN card turned).  Each has mean 0 given everything seen
before it, so, whatever V is, the adjusted score keeps the conditional mean of the raw
one given what was known when play started: every seat's hand and 3UP cards (the
3DOWN cards and the draw pile still unseen).  Hence for any V

    Var(adjusted) >= Var(E[raw | the hands and 3UP cards dealt])

and for a duplicate deal (the same deck in every rotation of the seats), the same with
the deal's difference A - B in place of one game's score.  That floor is what a
perfect V would reach; it is estimated here by Monte Carlo: for each deal, the cards
unseen at the start of play (the 3DOWN cards and the draw pile) are shuffled again
``--resamples`` times and every rotation is replayed with the same bots (their
own random numbers from each replay's seed), the hands dealt kept.  The mean over
the replays estimates E[difference | hands]; its variance over deals, less the
replays' own noise (within-deal variance / resamples), is the floor.

Printed, as SE ratios against independent deals (the figure of ``bench/fairness.py``'s
third column, same pair: heuristic (A) against lowest (B), at 4 seats with a field of
one more copy of each): raw duplicate, luck-adjusted duplicate with the shipped V
(or ``--model``), and the floor.  Also the share of the raw variance of one game's
score that the value function explains at each stage of play (R^2 of V against the
final share, over every play-phase state of the real games).

    .venv/bin/python bench/luck_bound.py [--deals 150] [--resamples 24] [--seats 2 4]
                                         [--jobs 1] [--seed 1] [--model FILE]
                                         [--rollouts 16 32] [--ceiling GAMES]

``--rollouts R...``: also the adjusted figure with V = ``RolloutValue(R)`` (rollouts
once the draw pile is empty); ``--resamples 0`` skips the floor.  ``--ceiling GAMES``:
only the R^2 a perfect V reaches at each stage of a game, beside the linear V's.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from referee.bots import make_bot  # noqa: E402
from referee.bots.policies import HeuristicBot, LowestBot  # noqa: E402
from referee.game import Game, GameConfig  # noqa: E402
from referee.game.cards import parse_deck  # noqa: E402
from referee.game.features import reshuffled, summaries, unseen  # noqa: E402
from referee.game.phases import PLAYING  # noqa: E402
from referee.game.seeds import derive_seed  # noqa: E402
from referee.play.luck import (  # noqa: E402
    SCORES,
    OwnChoices,
    RolloutValue,
    Value,
    ValueModel,
    default_model,
    game_luck,
    raw_scores,
    seat_policies,
)
from referee.play.runner import SEAT_STREAM, GameRecord, InProcessPlayer, run_game  # noqa: E402

BOTS = {2: ("heuristic", "lowest"), 4: ("heuristic", "lowest", "heuristic", "lowest")}
NAMES = {2: ("a", "b"), 4: ("a", "b", "fa", "fb")}

_MODEL: ValueModel | None = None
_VALUES: dict[str, Callable[[Sequence[str]], Value]] = {}


def _figure(places: Sequence[int], seat: int, k: int) -> float:
    """bench/fairness.py's figure: a win at 2 seats, the place at 4."""
    return float(places[seat] == 1) if k == 2 else float(places[seat])


def _diff(places: Sequence[int], seats: Sequence[str], k: int) -> float:
    return _figure(places, seats.index("a"), k) - _figure(places, seats.index("b"), k)


def _play(k: int, seed: int, deck: Sequence[int] | None, first: int | None,
          seats: Sequence[str]) -> GameRecord:
    bots = dict(zip(NAMES[k], BOTS[k], strict=True))
    players = [InProcessPlayer(make_bot(bots[n]), n, stream=SEAT_STREAM) for n in seats]
    return run_game(GameConfig(players=k, variants=frozenset({"play_out"})), seed, players,
                    deck=deck, first_player=first)


def _adjusted_diff(rec: GameRecord, seats: Sequence[str], k: int,
                   value: Value | None = None) -> float:
    """The luck-adjusted difference: the adjusted share at 2 seats, the place moved by
    the share's correction at 4 (as bench/fairness.py)."""
    luck = game_luck(rec.config, rec.seed, parse_deck(rec.deck), rec.first_player,
                     [(int(d["seat"]), str(d["decision"])) for d in rec.decisions],
                     rec.ended.places, rec.ended.points, value or _MODEL)
    share = luck.adjusted("share")
    raw = luck.raw[0]
    fig = [share[s] if k == 2 else rec.ended.places[s] - (k - 1) * (share[s] - raw[s])
           for s in range(k)]
    return fig[seats.index("a")] - fig[seats.index("b")]


def _r2_rows(rec: GameRecord) -> list[tuple[str, float, float]]:
    """(stage, V's share, final share) for every seat still playing at every decision."""
    game = Game(rec.config, rec.seed, deck=parse_deck(rec.deck), first_player=rec.first_player)
    final = raw_scores(rec.ended.places, rec.ended.points)[0]
    model = _MODEL or default_model()
    rows = []
    for d in rec.decisions:
        if game.over:
            break
        if game.phase == PLAYING:
            sums = summaries(game)
            v = model(game, sums)[0]
            left = len(game.draw_pile)
            stage = ("draw pile > 20" if left > 20 else "draw pile 1-20" if left else
                     "draw pile empty")
            for s in range(game.n):
                if not sums[s][0]:
                    rows.append((stage, v[s], final[s]))
        game.apply(int(d["seat"]), str(d["decision"]))
    return rows


def one_deal(job: tuple[int, int, int, int]) -> dict[str, object]:
    k, seed, deal, resamples = job
    deal_seed = derive_seed(seed, "bound-deal", k, deal)
    rotations = [tuple(NAMES[k][(i + r) % k] for i in range(k)) for r in range(k)]
    raw, adj, games, r2 = [], [], [], []
    extra: dict[str, list[float]] = {}
    base: GameRecord | None = None
    for seats in rotations:
        rec = _play(k, deal_seed, None, None, seats)
        base = base or rec
        d = _diff(rec.ended.places, seats, k)
        raw.append(d)
        games.append(d)
        adj.append(_adjusted_diff(rec, seats, k))
        for label, make in _VALUES.items():
            extra.setdefault(label, []).append(_adjusted_diff(rec, seats, k, make(seats)))
        r2.extend(_r2_rows(rec))
    assert base is not None
    deck = list(parse_deck(base.deck))
    dealt = set(range(3 * k, 9 * k))  # the six cards of each seat (RULES §2)
    hidden = [i for i in range(len(deck)) if i not in dealt]
    means = []
    rng = random.Random(derive_seed(seed, "bound-resample", k, deal))
    for r in range(resamples):
        cards = [deck[i] for i in hidden]
        rng.shuffle(cards)
        alt = list(deck)
        for i, c in zip(hidden, cards, strict=True):
            alt[i] = c
        rs = derive_seed(seed, "bound-replay", k, deal, r)
        ds = [_diff(_play(k, rs, alt, base.first_player, seats).ended.places, seats, k)
              for seats in rotations]
        means.append(sum(ds) / k)
    return {"raw": sum(raw) / k, "adj": sum(adj) / k, "games": games, "mc": means, "r2": r2,
            "extra": {label: sum(v) / k for label, v in extra.items()}}


def report(k: int, rows: list[dict[str, object]], resamples: int) -> None:
    games = [g for r in rows for g in r["games"]]  # type: ignore[attr-defined]
    var_game = statistics.variance(games)
    units = {"raw duplicate": [float(r["raw"]) for r in rows],  # type: ignore[arg-type]
             "luck-adjusted duplicate": [float(r["adj"]) for r in rows]}  # type: ignore[arg-type]
    for label in rows[0]["extra"]:  # type: ignore[attr-defined]
        units[f"  with V = {label}"] = [r["extra"][label] for r in rows]  # type: ignore[index]
    print(f"{k} seats, {len(rows)} duplicate deals ({len(games)} games), heuristic (A) - "
          f"lowest (B), {'win rate' if k == 2 else 'mean place'}:")
    print(f"  one game's variance (independent deals) {var_game:.4f}")
    for label, u in units.items():
        ratio = math.sqrt(k * statistics.variance(u) / var_game)
        print(f"  {label:<26} SE ratio {ratio:.3f}  (mean {statistics.fmean(u):+.4f})")
    mc = [r["mc"] for r in rows]
    if resamples >= 2:
        means = [statistics.fmean(m) for m in mc]  # type: ignore[arg-type]
        within = statistics.fmean(statistics.variance(m) for m in mc)  # type: ignore[arg-type]
        floor = max(0.0, statistics.variance(means) - within / resamples)
        print(f"  floor (perfect V)          SE ratio {math.sqrt(k * floor / var_game):.3f}  "
              f"(deal-to-deal variance of E[difference | hands] {floor:.4f}; replay noise "
              f"{within / resamples:.4f} taken off)")
    r2 = [x for r in rows for x in r["r2"]]  # type: ignore[attr-defined]
    for stage in ("draw pile > 20", "draw pile 1-20", "draw pile empty"):
        pts = [(v, y) for s, v, y in r2 if s == stage]
        if len(pts) < 3:
            continue
        ys = [y for _, y in pts]
        my = statistics.fmean(ys)
        sst = sum((y - my) ** 2 for y in ys)
        sse = sum((y - v) ** 2 for v, y in pts)
        print(f"  V's R^2 of the final share, {stage:<16} {1 - sse / sst:6.3f}  "
              f"({len(pts)} states)")


def ceiling(k: int, games: int, replays: int, seed: int) -> None:
    """How well a perfect V predicts the final share at each stage: ``lowest`` against
    itself (deterministic, so E[final | position] is a function of the position and
    the unseen cards alone), six positions of each game valued by ``replays`` replays
    with the unseen cards (draw pile and 3DOWN) reshuffled; R^2 of that value against
    the share the game really ended with (noise of the replays taken off), beside
    the linear V's R^2 on the same positions."""
    low = LowestBot()
    cfg = GameConfig(players=k, variants=frozenset({"play_out"}))
    model = _MODEL or default_model()
    rng = random.Random(derive_seed(seed, "ceiling", k))
    rows: list[tuple[str, float, float, float]] = []  # stage, replays' mean, V, final
    for gi in range(games):
        rec = run_game(cfg, derive_seed(seed, "ceiling-game", k, gi),
                       [InProcessPlayer(make_bot("lowest"), f"l{s}") for s in range(k)])
        game = Game(cfg, rec.seed, deck=parse_deck(rec.deck), first_player=rec.first_player)
        final = raw_scores(rec.ended.places, rec.ended.points)[0]
        pick = set(rng.sample(range(len(rec.decisions)), min(6, len(rec.decisions))))
        for i, d in enumerate(rec.decisions):
            if game.over:
                break
            if game.phase == PLAYING and i in pick:
                mean = [0.0] * k
                for _ in range(replays):
                    cards = sorted(unseen(game))
                    rng.shuffle(cards)
                    g = reshuffled(game, cards)
                    while not g.over:
                        g.apply(g.to_move, low.decide({}, g.legal(g.to_move)))
                    end = g.result()
                    assert end is not None
                    got = raw_scores(end.places, end.points)[0]
                    for s in range(k):
                        mean[s] += got[s] / replays
                sums = summaries(game)
                v = model(game, sums)[0]
                left = len(game.draw_pile)
                stage = ("draw pile > 5" if left > 5 else "draw pile 1-5" if left else
                         "draw pile empty")
                rows.extend((stage, mean[s], v[s], final[s]) for s in range(k)
                            if not sums[s][0])
            game.apply(int(d["seat"]), str(d["decision"]))
    print(f"{k} seats, lowest against itself, {games} games, {len(rows)} positions valued "
          f"by {replays} replays each: R^2 of the final share")
    for stage in ("draw pile > 5", "draw pile 1-5", "draw pile empty"):
        pts = [r for r in rows if r[0] == stage]
        if len(pts) < 3:
            continue
        ys = [r[3] for r in pts]
        my = statistics.fmean(ys)
        sst = sum((y - my) ** 2 for y in ys)
        sse = sum((r[1] - r[3]) ** 2 for r in pts)
        # a replays' mean m of outcomes of variance about m(1 - m) (a win at 2 seats;
        # an upper bound otherwise) misses by that / replays more than the true value
        noise = sum(r[1] * (1 - r[1]) for r in pts) / (replays - 1)
        lin = sum((r[2] - r[3]) ** 2 for r in pts)
        print(f"  {stage:<16} perfect V {1 - (sse - noise) / sst:6.3f}   linear V "
              f"{1 - lin / sst:6.3f}   ({len(pts)} positions)")


def _rollout(spec: str) -> tuple[str, Callable[[Sequence[str]], Value]]:
    """A --rollouts spec, R[:L[:own]]: R rollouts once the draw pile holds L cards or
    fewer, each seat played by its bot's own policy (own) or the heuristic's rule."""
    parts = spec.split(":")
    r, limit = int(parts[0]), int(parts[1]) if len(parts) > 1 else 0
    flags = parts[2].split("+") if len(parts) > 2 else []
    own, coupled, choices = "own" in flags, "sorted" not in flags, "choices" in flags
    bots = dict(zip(NAMES[2] + NAMES[4][2:], BOTS[4], strict=True))

    def make(seats: Sequence[str]) -> Value:
        pol = seat_policies([bots[x] for x in seats]) if own else None
        return RolloutValue(_MODEL, rollouts=r, draw_limit=limit, policies=pol, coupled=coupled,
                            choices=[bots[x] for x in seats] if choices else None)

    return (f"rollouts x{r}, draw pile <= {limit}{', own policies' if own else ''}"
            f"{', sorted deals' if not coupled else ''}"
            f"{', own choices corrected' if choices else ''}", make)


def _init(model: str | None, rollouts: Sequence[str], compare: Sequence[str] = (),
          no_search: bool = False, choices: bool = False) -> None:
    global _MODEL
    if no_search:  # the heuristic without its endgame search: its rule, deterministic
        HeuristicBot.SEARCH_CARDS = -1
    _MODEL = ValueModel.load(Path(model)) if model else None
    for spec in rollouts:
        label, make = _rollout(spec)
        _VALUES[label] = make
    if choices:
        bots = dict(zip(NAMES[2] + NAMES[4][2:], BOTS[4], strict=True))
        _VALUES["linear, own choices corrected"] = lambda seats: OwnChoices(
            _MODEL or default_model(), [bots[x] for x in seats])
    for f in compare:
        m = ValueModel.load(Path(f))
        _VALUES[Path(f).name] = lambda seats, m=m: m  # type: ignore[misc]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--deals", type=int, default=150)
    ap.add_argument("--resamples", type=int, default=24)
    ap.add_argument("--seats", type=int, nargs="+", default=[2, 4], choices=[2, 4])
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--model", default=None, help="a value model file (default: the shipped one)")
    ap.add_argument("--rollouts", nargs="*", default=[], metavar="R[:L[:FLAGS]]",
                    help="also the adjusted figure with V = RolloutValue: R rollouts once the "
                    "draw pile holds L cards or fewer (default 0), each seat played by its "
                    "own bot's policy with the flag own (else the heuristic's rule); the flag sorted: "
                    "the old deals (unseen cards sorted, not in their places: no common random "
                    "numbers across outcomes); the flag choices: corrections at the built-in bots' own "
                    "random choices too (the heuristic's search, sampled); flags joined by +")
    ap.add_argument("--compare", nargs="*", default=[], metavar="FILE",
                    help="also the adjusted figure with each of these value model files")
    ap.add_argument("--no-search", action="store_true",
                    help="the heuristic without its endgame search (deterministic, and its "
                    "policy is exactly the rollouts' rule): how much of what is left is the "
                    "search's own randomness")
    ap.add_argument("--choices", action="store_true",
                    help="also the adjusted figure with the linear V and the corrections at "
                    "the built-in bots' own random choices")
    ap.add_argument("--ceiling", type=int, default=0, metavar="GAMES",
                    help="only the R^2 of a perfect V by stage, on GAMES games of lowest "
                    "against itself (at each --seats), each position by --resamples replays")
    args = ap.parse_args()
    assert SCORES[0] == "share"
    if args.ceiling:
        _init(args.model, [])
        for k in args.seats:
            ceiling(k, args.ceiling, max(2, args.resamples), args.seed)
        return 0
    with multiprocessing.Pool(args.jobs, initializer=_init, initargs=(args.model, args.rollouts,
                                                                      args.compare, args.no_search,
                                                                      args.choices)) as pool:
        for k in args.seats:
            t0 = time.perf_counter()
            rows = pool.map(one_deal, [(k, args.seed, d, args.resamples)
                                       for d in range(args.deals)], chunksize=2)
            report(k, rows, args.resamples)
            print(f"  ({time.perf_counter() - t0:.0f} s)\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
