#!/usr/bin/env python3
"""Does the SPRT on duplicate sets keep its error rates, and how many games does it
save?  And how much sharper is the paired NEW/OLD design than independent games
and than plain duplicate deals?

Bots: in-process mixtures, ``mix(p)`` playing the heuristic bot's decision with
probability p and a random legal decision otherwise (each seeded per game from the
deal and its name, as a tournament seeds its in-process bots).  NEW = mix(P_NEW),
OLD = mix(P_OLD); the field at 4 seats is heuristic, lowest and random.

1. Pools of real duplicate sets, laid out and scored by ``referee match``'s own code
   (``set_games``, ``reduce_set``, NEW and OLD sharing their random numbers as in a
   match) and played with the referee's ``run_game``.  The NEW/OLD pool's true Elo
   is its mean, and the test is run with elo1 set to it; the null pool is the same
   sets made exactly symmetric (each set score x joined by 1 - x): as spread out,
   with exactly no difference (elo0 = 0).  The truth of each pool is thus known
   exactly, and each SPRT run draws sets from a pool with replacement until it
   decides.
2. >= 200 SPRT runs per pool and table size: the rate of accepting H1 on the mirror
   (false positives, against alpha) and of accepting H0 at elo1 (false negatives,
   against beta), with their sampling error; the mean number of games to a
   decision, against the games a fixed-games test needs for the same error rates
   (one-sided z test at alpha with power 1 - beta at elo1:
   n = ((z_alpha sd0 + z_beta sd1) / (s1 - s0))^2 sets).  Target: <= half.
3. The standard error of the NEW - OLD score difference for the same number of
   games, at 2 and 4 seats: independent games (a fresh deal and seating per game),
   plain duplicate deals (NEW, OLD and the field's first k - 2 bots in every
   rotation of one deal) and the paired design, with NEW and OLD sharing their
   random numbers (``referee match`` with in-process bots) and drawing their own (an
   external bot that seeds itself per game).  Target: paired <= 0.6 x independent
   at 4 seats.

4. ``--luck SETS`` (only this): the same paired sets scored raw and luck-adjusted
   (``referee match --scores``), and the mean games to a decision of each, same
   alpha, beta and elo1 (the raw pool's mean).  Target: adjusted <= 0.5 x raw.

    .venv/bin/python bench/sprt.py [--sets 3000] [--runs 300] [--seed 1]
    .venv/bin/python bench/sprt.py --luck 200 [--pair det|mix] [--seats 2 4]
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import random
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from statistics import NormalDist
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from referee.bots.policies import Bot, HeuristicBot, RandomBot, make_bot  # noqa: E402
from referee.game import GameConfig  # noqa: E402
from referee.game.cards import parse_deck  # noqa: E402
from referee.play.luck import RolloutValue, game_luck, seat_policies  # noqa: E402
from referee.play.runner import GameRecord, InProcessPlayer, run_game  # noqa: E402
from referee.stats.sprt import PENTANOMIAL, Sprt, SprtState, elo_of_score  # noqa: E402
from referee.tournament.config import BotSpec, TournamentConfig  # noqa: E402
from referee.tournament.match import PAIRED_STREAM, MatchConfig, reduce_set, set_games  # noqa: E402
from referee.tournament.outcome import GameOutcome, luck_of  # noqa: E402
from referee.tournament.schedule import derive_seed, seatings  # noqa: E402

P_NEW, P_OLD = 0.75, 0.6
FIELD = ("heuristic", "lowest", "random")
Z = 1.6448536  # one-sided 5 %


class Mix(Bot):
    """The heuristic's decision with probability p, else a random one."""

    def __init__(self, p: float, seed: int = 0) -> None:
        super().__init__(seed)
        self.p = p
        self.h = HeuristicBot(seed)
        self.r = RandomBot(seed)

    def new_game(self, seed: int) -> None:
        super().new_game(seed)
        self.h.new_game(seed)
        self.r.new_game(seed ^ 0x5A5A)

    def decide(self, obs: dict[str, Any], legal: Sequence[Any]) -> Any:
        return (self.h if self.rng.random() < self.p else self.r).decide(obs, legal)


#: ``--rollouts R``: a second luck-adjusted pool, by rollouts (``RolloutValue``, each
#: built-in seat played by its own rule), beside the shipped linear V's.
ROLLOUTS = 0
#: The built-in bot of each name, for the rollouts' own policies (``det`` pair).
BUILTIN = {"new": "heuristic", "old": "lowest", **{n: n for n in ("heuristic", "lowest",
                                                                  "random")}}


def rollout_adjusted(rec: GameRecord, seats: Sequence[str]) -> tuple[tuple[float, ...], ...]:
    """The game's luck-adjusted scores by ``ROLLOUTS`` rollouts."""
    r = rec.ended
    value = RolloutValue(rollouts=ROLLOUTS, policies=seat_policies([BUILTIN.get(n)
                                                                    for n in seats]))
    return game_luck(rec.config, rec.seed, parse_deck(rec.deck), rec.first_player,
                     [(int(d["seat"]), str(d["decision"])) for d in rec.decisions],
                     r.places, r.points, value).adjusted_all()


class Table:
    """In-process players by name, and one game played through ``run_game``."""

    def __init__(self, k: int, bots: dict[str, Bot], crn: bool = False,
                 luck: bool = False) -> None:
        self.config = GameConfig(players=k, variants=frozenset({"play_out"}))
        self.luck = luck  # compute each game's luck-adjusted scores
        # crn: NEW and OLD draw the same random numbers, as ``referee match`` has them
        self.players = {n: InProcessPlayer(b, n, stream=PAIRED_STREAM
                                           if crn and n in ("new", "old") else n)
                        for n, b in bots.items()}
        #: game index -> its adjusted scores by rollouts (with ``ROLLOUTS``)
        self.rolled: dict[int, tuple[tuple[float, ...], ...]] = {}

    def play(self, index: int, deal: int, deal_seed: int, seats: Sequence[str]) -> GameOutcome:
        rec = run_game(self.config, deal_seed, [self.players[n] for n in seats],
                       game_id=f"g{index}")
        r = rec.ended
        out = GameOutcome(index=index, game_id=f"g{index}", deal=deal, deal_seed=deal_seed,
                           seats=tuple(seats), places=r.places, points=r.points, how=r.how,
                           turns=r.turns, faults=tuple(rec.faults),
                           adjusted=luck_of(rec) if self.luck else None)
        if self.luck and ROLLOUTS:
            self.rolled[index] = rollout_adjusted(rec, seats)
        return out


def match_config(k: int, seed: int) -> MatchConfig:
    field = FIELD if k > 2 else ()
    names = ["new", "old", *field]
    t = TournamentConfig(bots=tuple(BotSpec(n, builtin="random") for n in names), seats=k,
                         seed=seed, game=GameConfig(players=k, variants=frozenset({"play_out"})))
    return MatchConfig(t, "new", "old", tuple(field), games=1)


def bots_for(new: Bot, old: Bot, k: int) -> dict[str, Bot]:
    out: dict[str, Bot] = {"new": new, "old": old}
    if k > 2:
        out.update({n: make_bot(n) for n in FIELD})
    return out


def pair(which: str) -> tuple[Bot, Bot]:
    """NEW and OLD: the mixtures, or the deterministic heuristic against lowest."""
    return (Mix(P_NEW), Mix(P_OLD)) if which == "mix" else (make_bot("heuristic"),
                                                             make_bot("lowest"))


def paired_pool(k: int, which: str, sets: int, seed: int, crn: bool = True) -> list[float]:
    """Set scores x of the paired design (``referee match``'s sets); without
    ``crn``, NEW and OLD each draw their own random numbers."""
    mc = match_config(k, seed)
    table = Table(k, bots_for(*pair(which), k), crn)
    out = []
    for s in range(sets):
        games = [table.play(g.index, g.deal, g.deal_seed, g.seats) for g in set_games(mc, s)]
        out.append(reduce_set(mc, s, games).score)
    return out


def luck_pools(k: int, which: str, sets: int, seed: int) -> dict[str, list[float]]:
    """The same paired sets scored raw and luck-adjusted (``referee match --scores``):
    by the shipped linear V, and by rollouts with ``ROLLOUTS``."""
    mc = match_config(k, seed)
    raw_mc = dataclasses.replace(mc, scores="raw")
    table = Table(k, bots_for(*pair(which), k), True, luck=True)
    pools: dict[str, list[float]] = {"raw": [], "adjusted": []}
    if ROLLOUTS:
        pools[f"rollout x{ROLLOUTS}"] = []
    for s in range(sets):
        games = [table.play(g.index, g.deal, g.deal_seed, g.seats) for g in set_games(mc, s)]
        pools["raw"].append(reduce_set(raw_mc, s, games).score)
        pools["adjusted"].append(reduce_set(mc, s, games).score)
        if ROLLOUTS:
            rolled = [dataclasses.replace(o, adjusted=table.rolled[o.index]) for o in games]
            pools[f"rollout x{ROLLOUTS}"].append(reduce_set(mc, s, rolled).score)
    return pools


def luck_section(k: int, which: str, sets: int, runs: int, seed: int, alpha: float,
                 beta: float) -> bool:
    """Mean games to a decision, adjusted against raw set scores: the same sets, the
    same test (elo1 at the raw pool's mean: the true difference, which the adjusted
    pool shares), the same alpha and beta.  Target: <= 0.5 x."""
    t0 = time.perf_counter()
    per_set = match_config(k, seed).per_set
    pools = luck_pools(k, which, sets, seed)
    raw = pools["raw"]
    m = statistics.fmean(raw)
    test = Sprt(0.0, elo_of_score(m), alpha, beta)
    names = (f"mix({P_NEW}) - mix({P_OLD})" if which == "mix"
             else "heuristic - lowest (deterministic)")
    print(f"{k} seats, {names}: {sets} paired sets scored raw and luck-adjusted "
          f"({time.perf_counter() - t0:.0f} s)")
    print("  set score " + ", ".join(f"{label} {statistics.fmean(pool):.4f} (sd "
                                     f"{statistics.pstdev(pool):.4f})"
                                     for label, pool in pools.items())
          + f"; test elo1 {test.elo1:+.1f}")
    means = {}
    for label, pool in pools.items():
        support = PENTANOMIAL if k == 2 and label == "raw" else ()
        mirror = pool + [round(1.0 - x, 3) for x in pool]
        v0, n0 = simulate(mirror, test, runs, seed, support)
        v1, n1 = simulate(pool, test, runs, seed + 7, support)
        means[label] = (statistics.fmean(n0) + statistics.fmean(n1)) / 2
        print(f"  {label:<12} false positives {v0.count('H1') / runs:.3f}, false negatives "
              f"{v1.count('H0') / runs:.3f}, mean games to a decision "
              f"{means[label] * per_set:.0f}")
    ok = True
    for label in pools:
        if label == "raw":
            continue
        ratio = means[label] / means["raw"]
        print(f"  {label} / raw: {ratio:.2f} x the games "
              f"({'meets' if ratio <= 0.5 else 'MISSES'} <= 0.5)")
        ok = ok and ratio <= 0.5
    print()
    return ok


def live_runs(test: Sprt, runs: int, seed: int) -> tuple[list[str], list[int]]:
    """SPRT runs on freshly played sets (2 seats), each on its own deals: OLD against a
    second copy of OLD drawing its own random numbers, a difference of exactly none."""
    verdicts, lengths = [], []
    for r in range(runs):
        mc = match_config(2, seed * 7919 + r)
        table = Table(2, bots_for(Mix(P_OLD), Mix(P_OLD), 2), crn=False)
        state = SprtState.over(test, PENTANOMIAL)
        s = 0
        while state.verdict is None and s < 100_000:
            games = [table.play(g.index, g.deal, g.deal_seed, g.seats) for g in set_games(mc, s)]
            state.add(reduce_set(mc, s, games).score)
            s += 1
        verdicts.append(state.verdict or "none")
        lengths.append(state.sets)
    return verdicts, lengths


def share(o: GameOutcome, bot: str) -> float:
    seat = o.seats.index(bot)
    mine = o.places[seat]
    pp = sum(1.0 if p > mine else 0.5 if p == mine else 0.0
             for t, p in enumerate(o.places) if t != seat)
    return pp / (len(o.seats) - 1)


def lineup_design(k: int, which: str, games: int, seed: int, duplicate: bool) -> list[float]:
    """Per deal, the mean over its games of s_NEW - s_OLD: NEW, OLD and the field's
    first k - 2 bots at one table, each deal in every rotation (duplicate) or once,
    seated at random (independent)."""
    lineup = ("new", "old", *FIELD[: k - 2])
    table = Table(k, bots_for(*pair(which), k))
    units, index, deal = [], 0, 0
    while index < games:
        deal_seed = derive_seed(seed, "deal", deal)
        rng = random.Random(derive_seed(seed, "seating", deal))
        orders = seatings(lineup, "rotate" if duplicate else "random", rng)
        diffs = []
        for seats in orders:
            o = table.play(index, deal, deal_seed, seats)
            diffs.append(share(o, "new") - share(o, "old"))
            index += 1
        units.append(sum(diffs) / len(diffs))
        deal += 1
    return units


def se_per(units: Sequence[float], games_per_unit: int, budget: int) -> tuple[float, float]:
    """Mean of the units and the SE of that mean for ``budget`` games."""
    return statistics.fmean(units), statistics.stdev(units) / math.sqrt(budget / games_per_unit)


def simulate(pool: Sequence[float], test: Sprt, runs: int, seed: int,
             support: Sequence[float], extremes: bool = True) -> tuple[list[str], list[int]]:
    verdicts, lengths = [], []
    for r in range(runs):
        rng = random.Random(seed * 1_000_003 + r)
        state = SprtState.over(test, support, extremes)
        while state.verdict is None:
            state.add(pool[int(rng.random() * len(pool))])
            if state.sets >= 200_000:
                break
        verdicts.append(state.verdict or "none")
        lengths.append(state.sets)
    return verdicts, lengths


def rate_line(label: str, k: int, verdicts: list[str], wrong: str, target: float) -> bool:
    n = len(verdicts)
    rate = verdicts.count(wrong) / n
    se = math.sqrt(target * (1 - target) / n)
    ok = rate <= target + 2 * se
    where = ("within" if abs(rate - target) <= 2 * se else
             "below" if rate < target else "ABOVE")
    print(f"  {label:<28} {rate:6.3f}  (target {target:.3f} +- {2 * se:.3f}: {where} "
          f"2 sampling SE; {verdicts.count('none')} undecided)")
    return ok


def main() -> int:
    global P_NEW
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--sets", type=int, default=3000, help="sets per pool at 2 seats "
                    "(4 seats: a third as many, each set is 8 games)")
    ap.add_argument("--runs", type=int, default=300, help="SPRT runs per pool (>= 200)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--alpha", type=float, default=0.05)
    ap.add_argument("--beta", type=float, default=0.05)
    ap.add_argument("--p-new", type=float, default=0.75,
                    help=f"NEW's share of heuristic decisions (OLD's is {P_OLD}); closer to {P_OLD}: a smaller difference, longer tests")
    ap.add_argument("--seats", type=int, nargs="+", default=[2, 4], choices=[2, 4])
    ap.add_argument("--live", type=int, default=0, metavar="RUNS",
                    help="also RUNS SPRT runs at 2 seats on freshly played games (a mirror "
                    "with its own random numbers: no difference), instead of a pool")
    ap.add_argument("--live-elo1", type=float, default=100.0,
                    help="elo1 of the --live runs (larger: shorter runs)")
    ap.add_argument("--luck", type=int, default=0, metavar="SETS",
                    help="only the luck-adjusted comparison: SETS paired sets per table "
                    "size, scored raw and adjusted, and the mean games to a decision of each")
    ap.add_argument("--rollouts", type=int, default=0, metavar="R",
                    help="--luck with the rollout value function (referee.play.luck."
                    "RolloutValue, R rollouts once the draw pile is empty)")
    ap.add_argument("--pair", choices=["mix", "det"], default="det",
                    help="--luck's NEW and OLD: the mixtures, or heuristic against lowest")
    ap.add_argument("--no-extremes", action="store_true",
                    help="also run the SPRTs with 0 and 1 left out of the support unless "
                    "needed (referee match keeps them: see referee/stats/sprt.py)")
    args = ap.parse_args()
    P_NEW = args.p_new
    global ROLLOUTS
    ROLLOUTS = args.rollouts
    ok = True
    if args.luck:
        for k in args.seats:
            ok &= luck_section(k, args.pair, args.luck, args.runs, args.seed, args.alpha,
                               args.beta)
        return 0 if ok else 1
    print(f"NEW = mix({P_NEW}), OLD = mix({P_OLD}); field at 4 seats: {', '.join(FIELD)}; "
          f"alpha = {args.alpha}, beta = {args.beta}\n")
    for k in args.seats:
        t0 = time.perf_counter()
        n_sets = args.sets if k == 2 else max(200, args.sets // 3)
        per_set = match_config(k, args.seed).per_set
        h1 = paired_pool(k, "mix", n_sets, args.seed)
        # The null: the NEW/OLD pool made symmetric (each x joined by 1 - x): as
        # spread as NEW against OLD, but with exactly no difference (mean 1/2).
        mirror = h1 + [1.0 - x for x in h1]
        m1 = statistics.fmean(h1)
        elo1 = elo_of_score(m1)
        test = Sprt(0.0, elo1, args.alpha, args.beta)
        support = PENTANOMIAL if k == 2 else ()
        print(f"{k} seats, paired sets of {per_set} games: a pool of {n_sets} real sets "
              f"({n_sets * per_set} games, {time.perf_counter() - t0:.0f} s)")
        print(f"  NEW/OLD pool: mean set score {m1:.4f}, Elo {elo1:+.1f} (the test's elo1); "
              f"null pool (x and 1 - x): mean {statistics.fmean(mirror):.4f} (elo0 = 0)")
        t1 = time.perf_counter()
        v0, n0 = simulate(mirror, test, args.runs, args.seed, support)
        v1, n1 = simulate(h1, test, args.runs, args.seed + 7, support)
        print(f"  {args.runs} + {args.runs} SPRT runs ({time.perf_counter() - t1:.0f} s):")
        ok &= rate_line("false positives (null, H1)", k, v0, "H1", args.alpha)
        ok &= rate_line("false negatives (elo1, H0)", k, v1, "H0", args.beta)
        sd0, sd1 = statistics.pstdev(mirror), statistics.pstdev(h1)
        fixed = ((Z * sd0 + Z * sd1) / (test.s1 - test.s0)) ** 2
        mean0, mean1 = statistics.fmean(n0), statistics.fmean(n1)
        for label, m in (("at elo0 (null)", mean0), ("at elo1", mean1),
                         ("average of the two", (mean0 + mean1) / 2)):
            ratio = m / fixed
            print(f"  mean games to a decision {label:<20} {m * per_set:8.0f}  "
                  f"= {ratio:.2f} x the fixed test's {fixed * per_set:.0f}"
                  + ("" if label.startswith("at") else
                     f"  ({'meets' if ratio <= 0.5 else 'MISSES'} <= 0.5)"))
        ok &= (mean0 + mean1) / 2 / fixed <= 0.5
        if args.live and k == 2:
            t2 = time.perf_counter()
            live = Sprt(0.0, args.live_elo1, args.alpha, args.beta)
            lv, ln = live_runs(live, args.live, args.seed)
            print(f"  {args.live} SPRT runs (elo1 = {args.live_elo1:g}) on fresh games, a mirror "
                  f"with its own random numbers ({sum(ln) * per_set} games, "
                  f"{time.perf_counter() - t2:.0f} s):")
            ok &= rate_line("false positives (mirror, H1)", k, lv, "H1", args.alpha)
            print(f"  mean games to a decision {statistics.fmean(ln) * per_set:.0f}")
        if args.no_extremes and k > 2:
            w0, l0 = simulate(mirror, test, args.runs, args.seed, support, extremes=False)
            w1, l1 = simulate(h1, test, args.runs, args.seed + 7, support, extremes=False)
            print("  the same runs with 0 and 1 left out of the support (--no-extremes):")
            rate_line("false positives (null, H1)", k, w0, "H1", args.alpha)
            rate_line("false negatives (elo1, H0)", k, w1, "H0", args.beta)
            avg = (statistics.fmean(l0) + statistics.fmean(l1)) / 2
            print(f"  mean games to a decision, average of the two {avg * per_set:6.0f}  "
                  f"= {avg / fixed:.2f} x the fixed test's {fixed * per_set:.0f}")
        # the same comparison against a fixed test with the error rates the SPRT
        # actually had (Wald's bounds are conservative; floored at 1 / runs)
        a_hat = max(v0.count("H1"), 1) / len(v0)
        b_hat = max(v1.count("H0"), 1) / len(v1)
        za, zb = NormalDist().inv_cdf(1 - a_hat), NormalDist().inv_cdf(1 - b_hat)
        fixed_hat = ((za * sd0 + zb * sd1) / (test.s1 - test.s0)) ** 2
        print(f"  against a fixed test with the achieved rates ({a_hat:.3f}, {b_hat:.3f}): "
              f"{(mean0 + mean1) / 2 / fixed_hat:.2f} x its {fixed_hat * per_set:.0f} games")
        # standard errors for the same number of games
        for which in ("mix", "det"):
            budget = (n_sets // 2) * per_set
            ind = se_per(lineup_design(k, which, budget, args.seed + 2, duplicate=False), 1,
                         budget)
            dup = se_per(lineup_design(k, which, budget, args.seed + 3, duplicate=True), k,
                         budget)
            crn = h1 if which == "mix" else paired_pool(k, which, n_sets // 2, args.seed + 5)
            par = se_per([2 * x - 1 for x in crn], per_set, budget)
            own = paired_pool(k, which, n_sets // 2, args.seed + 4, crn=False)
            par_own = se_per([2 * x - 1 for x in own], per_set, budget)
            names = (f"mix({P_NEW}) - mix({P_OLD})" if which == "mix"
                     else "heuristic - lowest (deterministic)")
            print(f"  SE of the score difference {names}, {budget} games each "
                  f"(share of opponents beaten):")
            rows = [("independent games", ind), ("plain duplicate deals", dup)]
            if which == "mix":
                rows.append(("paired, own random numbers", par_own))
            rows.append(("paired (referee match)", par))
            for label, (m, se) in rows:
                print(f"    {label:<26} {m:+.4f}  SE {se:.4f}  ({se / ind[1]:.2f} x "
                      f"independent; difference / SE {m / se:+.1f})")
            if k == 4:
                ratio = par[1] / ind[1]
                print(f"    paired / independent at 4 seats: {ratio:.2f} "
                      f"({'meets' if ratio <= 0.6 else 'MISSES'} <= 0.6)")
                if which == "mix":
                    ok &= ratio <= 0.6
        print(f"  ({time.perf_counter() - t0:.0f} s)\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
