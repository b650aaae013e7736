#!/usr/bin/env python3
"""Does seat rotation with duplicate deals make a comparison of two bots sharper?

Two in-process bots of close strength (heuristic vs lowest) play the same number of
games through the real tournament path (schedule, worker processes, store) under
independent deals (a fresh deal and a random seating for every game) and under
duplicate deals (each deal replayed in every rotation of the seats, ``rotate``, or in the
orders of a Williams design, ``williams``: k orders for even k, 2k for odd k,
balancing seat and predecessor).  Printed, for
2 seats the difference in win rate and for 4 seats (the pair and a field of one more
copy of each) the difference in place, each with its standard error (over games for independent
deals, over deals for duplicate deals: the games of one deal are not independent),
the ratio of the standard errors, and whether the two estimates agree.

Targets: the estimates agree (|z| < 2, for rotate and for williams: neither seating
biases the estimate); SE(duplicate) <= 0.85 x SE(independent) at 2 and 4 seats, for
both; the third figure, luck-adjusted duplicate (``referee.play.luck``: each game's
scores less the luck of the cards drawn and turned) against raw independent deals,
SE ratio <= 0.40 at 2 seats and <= 0.45 at 4 (printed, not part of the exit status:
an unbiased adjustment that misses the target is still correct); a mirror match (heuristic against itself under two names) under duplicate
deals comes out at exactly 0.  The heuristic searches with random numbers; in a
tournament an in-process bot draws them from the deal and its seat (not from its
name), so identical bots in identical positions choose identically and the mirror
match is exact (``referee.play.runner.SEAT_STREAM``).

    .venv/bin/python bench/fairness.py [--games 2000] [--jobs N] [--seed 1] [--seats 2 4]
                                       [--value linear|rollout] [--rollouts N] [--no-mirror]

``--lineup-decks DEALS`` measures instead what a league gives up by dealing each
lineup its own decks (issue 26): the standard error of comparing two entries through
their common opponents, with lineup-own decks and with decks shared across lineups.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from referee.bots import make_bot  # noqa: E402
from referee.game import GameConfig  # noqa: E402
from referee.league.schedule import deal_seed, league_schedule  # noqa: E402
from referee.play.runner import InProcessPlayer, run_game  # noqa: E402
from referee.tournament.config import parse_config, seatings_per_deal  # noqa: E402
from referee.tournament.run import run_tournament  # noqa: E402
from referee.tournament.standings import place_points  # noqa: E402
from referee.tournament.store import Store  # noqa: E402

#: The tournaments' ``[scores]`` table (``--value``, ``--rollouts``): which V adjusts.
SCORES_TABLE: dict[str, object] = {}


def play(bots: list[tuple[str, str]], seats: int, seating: str, deals: int, seed: int,
         jobs: int | None, out: Path) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
    """(deal, difference) per game: A's minus B's figure, where bots named a* are A;
    raw, and luck-adjusted (``referee.play.luck``: the win is the adjusted share at 2
    seats, the place is moved by the share's correction)."""
    raw = {
        "tournament": {"name": out.name, "seats": seats, "deals": deals, "seed": seed,
                       "seating": seating},
        "rules": {"variants": ["play_out"]},
        "bots": [{"name": n, "builtin": b} for n, b in bots],
        **({"scores": SCORES_TABLE} if SCORES_TABLE else {}),
    }
    config = parse_config(raw, base_dir=str(out.parent))
    run_tournament(config, output_dir=out, jobs=jobs, quiet=True)
    store = Store.open_existing(out)
    diffs = []
    adjusted = []
    for o in store.outcomes():
        assert o.adjusted is not None, o.game_id
        share = o.adjusted[0]
        for out_list, fig in (
            # win rate: 1 for a win (a shared first place is a win for both); mean place
            (diffs, [float(p == 1) if seats == 2 else float(p) for p in o.places]),
            # the adjusted win: the adjusted share at 2 seats; the place moved by the
            # share's correction, place - (k-1) * (adjusted share - share)
            (adjusted, list(share) if seats == 2 else
             [o.places[s] - (seats - 1) * (share[s] - place_points(o.places, s) / (seats - 1))
              for s in range(seats)]),
        ):
            a = [f for s, f in enumerate(fig) if o.seats[s].startswith("a")]
            b = [f for s, f in enumerate(fig) if o.seats[s].startswith("b")]
            out_list.append((o.deal, sum(a) / len(a) - sum(b) / len(b)))
    store.close()
    return diffs, adjusted


def estimate(diffs: list[tuple[int, float]]) -> tuple[float, float, int]:
    """Mean difference and its standard error over deals (each deal's games averaged
    first; with one game per deal this is the per-game standard error)."""
    by_deal: dict[int, list[float]] = defaultdict(list)
    for deal, d in diffs:
        by_deal[deal].append(d)
    units = [sum(v) / len(v) for v in by_deal.values()]
    n = len(units)
    m = sum(units) / n
    sd = math.sqrt(sum((x - m) ** 2 for x in units) / (n - 1))
    return m, sd / math.sqrt(n), n


# --- lineup-own decks (a league's rule, issue 26) vs decks shared across lineups ---------


def _lineup_game(job: tuple[int, str, tuple[str, ...], dict[str, str]]) -> tuple[int, str, str, int]:
    """Play one league game in process: (deal, A-or-B entry, opponent, 1 if it won)."""
    seed, key, seats, builtin = job
    players = [InProcessPlayer(make_bot(builtin[n], 0), n, stream=n) for n in seats]
    rec = run_game(GameConfig(players=len(seats), variants=frozenset({"play_out"})), seed,
                   players)
    deal = int(key)
    mine = [s for s, n in enumerate(seats) if n[0] in "ab"]
    s = mine[0]
    other = seats[1 - s]
    return deal, seats[s], other, int(rec.places[s] == 1)


def lineup_decks(deals: int, seed: int, jobs: int | None) -> None:
    """What sharing decks across lineups was worth: a league of heuristic (A), lowest
    (B) and a field of three (heuristic, lowest, random), two seats, ``deals`` deals
    per lineup in both seatings.  A and B are compared through their common
    opponents: per deal, A's win rate against the field minus B's.  With shared decks
    (the old rule: a deal's deck the same in every lineup) A and B meet each
    opponent on the same cards and the luck of the deck cancels; with lineup-own
    decks it does not.  Printed: the difference and its standard error over deals,
    under each rule, and their ratio."""
    builtin = {"a-heuristic": "heuristic", "b-lowest": "lowest", "f1-heuristic": "heuristic",
               "f2-lowest": "lowest", "f3-random": "random"}
    ids = [f"{n}@1" for n in builtin]
    by_id = {f"{n}@1": b for n, b in builtin.items()}
    secret = b"bench-fairness"
    games = league_schedule(ids, [2], deals, seed, "rotate", secret=secret)
    games = [g for g in games if sum(e[0] in "ab" for e in g.seats) == 1]
    print(f"lineup-own decks vs shared decks: a league of {len(builtin)} bots, 2 seats, "
          f"{deals} deals per lineup (both seatings); A = heuristic, B = lowest, compared "
          f"through their {len(builtin) - 2} common opponents (win rate A - B)")
    results = {}
    t0 = time.perf_counter()
    for rule in ("shared", "own"):
        work = []
        for g in games:
            ds = g.deal_seed if rule == "own" else deal_seed(seed, 2, g.deal, secret=secret)
            work.append((ds, str(g.deal), g.seats, by_id))
        with multiprocessing.Pool(jobs) as pool:
            out = pool.map(_lineup_game, work, chunksize=16)
        per: dict[int, dict[str, list[int]]] = defaultdict(lambda: {"a": [], "b": []})
        for deal, who, _, won in out:
            per[deal][who[0]].append(won)
        diffs = [(d, sum(v["a"]) / len(v["a"]) - sum(v["b"]) / len(v["b"]))
                 for d, v in per.items()]
        results[rule] = estimate(diffs)
    own, shared = results["own"], results["shared"]
    for label, est in (("shared decks (old rule)", shared), ("lineup-own decks", own)):
        print(f"  {label:<24} {est[0]:+.4f}  SE {est[1]:.4f}  ({est[2]} deals)")
    z = (own[0] - shared[0]) / math.sqrt(own[1] ** 2 + shared[1] ** 2)
    print(f"  SE ratio own / shared {own[1] / shared[1]:.3f} (what sharing decks across "
          f"lineups was worth); agreement z = {z:+.2f}; {time.perf_counter() - t0:.1f} s")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--games", type=int, default=2000, help="games per schedule and table size")
    ap.add_argument("--jobs", type=int, default=None)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lineup-decks", type=int, metavar="DEALS", default=None,
                    help="only measure a league's lineup-own decks against decks shared "
                         "across lineups, with DEALS deals per lineup (e.g. 300)")
    ap.add_argument("--seats", type=int, nargs="+", default=[2, 4], choices=[2, 4],
                    help="the table sizes of the pair's comparison")
    ap.add_argument("--value", choices=["linear", "rollout"], default="linear",
                    help="the value function of the luck-adjusted column (a tournament's "
                         "[scores] value)")
    ap.add_argument("--rollouts", type=int, default=None,
                    help="with --value rollout: rollouts per position")
    ap.add_argument("--no-mirror", action="store_true", help="skip the mirror matches")
    args = ap.parse_args()
    if args.value != "linear":
        SCORES_TABLE["value"] = args.value
        if args.rollouts:
            SCORES_TABLE["rollouts"] = args.rollouts
    if args.lineup_decks is not None:
        lineup_decks(args.lineup_decks, args.seed, args.jobs)
        return 0
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        print(f"{args.games} games per schedule; heuristic (A) vs lowest (B); luck-adjusted "
              f"by V = {args.value}"
              + (f" x{SCORES_TABLE.get('rollouts', 16)}" if args.value != "linear" else "")
              + "\n")
        for seats, what in ((2, "win rate A - B"), (4, "mean place A - B")):
            if seats not in args.seats:
                continue
            # At 4 seats the pair plays with a field of one more copy of each bot
            # (named f-*, left out of the difference): a table of two copies of each
            # would compare each bot with itself half of the time.
            bots = ([("a-heuristic", "heuristic"), ("b-lowest", "lowest")] if seats == 2 else
                    [("a-heuristic", "heuristic"), ("b-lowest", "lowest"),
                     ("f-heuristic", "heuristic"), ("f-lowest", "lowest")])
            t0 = time.perf_counter()
            ind = estimate(play(bots, seats, "random", args.games, args.seed, args.jobs,
                                root / f"ind{seats}")[0])
            raw, adjusted = play(bots, seats, "rotate", args.games // seats, args.seed,
                                 args.jobs, root / f"dup{seats}")
            dup = estimate(raw)
            adj = {"rotate": estimate(adjusted)}
            per_deal = seatings_per_deal("williams", seats)
            raw, adjusted = play(bots, seats, "williams", args.games // per_deal, args.seed,
                                 args.jobs, root / f"wil{seats}")
            wil = estimate(raw)
            adj["williams"] = estimate(adjusted)
            secs = time.perf_counter() - t0
            print(f"{seats} seats, {what}:")
            print(f"  independent deals  {ind[0]:+.4f}  SE {ind[1]:.4f}  ({ind[2]} deals)")
            for label, est in (("rotate", dup), ("williams", wil)):
                ratio = est[1] / ind[1]
                z = (est[0] - ind[0]) / math.sqrt(est[1] ** 2 + ind[1] ** 2)
                agree = abs(z) < 2
                print(f"  duplicate, {label:<9} {est[0]:+.4f}  SE {est[1]:.4f}  ({est[2]} deals): "
                      f"SE ratio {ratio:.3f} ({'meets' if ratio <= 0.85 else 'MISSES'} <= 0.85), "
                      f"agreement z = {z:+.2f} ({'agree' if agree else 'DISAGREE'})")
                ok &= ratio <= 0.85 and agree
                # The third column: luck-adjusted duplicate against raw independent deals.
                a = adj[label]
                target = 0.40 if seats == 2 else 0.45
                aratio = a[1] / ind[1]
                az = (a[0] - ind[0]) / math.sqrt(a[1] ** 2 + ind[1] ** 2)
                print(f"    luck-adjusted    {a[0]:+.4f}  SE {a[1]:.4f}: SE ratio {aratio:.3f} "
                      f"({'meets' if aratio <= target else 'MISSES'} <= {target:.2f}), "
                      f"agreement z = {az:+.2f} ({'agree' if abs(az) < 2 else 'DISAGREE'})")
            print(f"  {secs:.1f} s\n")
        for seats in () if args.no_mirror else tuple(args.seats):
            bots = [(f"{'a' if i < seats // 2 else 'b'}-heuristic-{i}", "heuristic")
                    for i in range(seats)]
            deals = max(50, args.games // (4 * seats))
            m, se, n = estimate(play(bots, seats, "rotate", deals, args.seed, args.jobs,
                                     root / f"mirror{seats}")[0])
            exact = m == 0.0 and se == 0.0
            print(f"mirror match, heuristic vs heuristic, {seats} seats, {n} duplicate deals: "
                  f"difference {m:+.4f}, SE {se:.4f} ({'exactly 0' if exact else 'NOT 0'})")
            ok &= exact
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
