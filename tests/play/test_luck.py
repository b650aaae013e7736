"""Luck-adjusted scores from game records (``referee.play.luck``): unbiased for the
shipped value function, for a random one (more variance, same mean), and caught when
the value function peeks at the card actually drawn.

The big check (>= 20,000 games at 2, 4 and 6 seats) is ``bench/unbiased.py``; these use a
few dozen quick games of seeded built-in bots, so they are deterministic."""

from __future__ import annotations

import hashlib
import json
import math
import random
import statistics
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from referee.bots import make_bot
from referee.cli.main import main
from referee.game import Game, GameConfig
from referee.game.cards import KIND, parse_deck
from referee.game.features import Summary, reshuffled, summaries, unseen, with_drawn
from referee.game.phases import PLAYING
from referee.play import luck
from referee.play.luck import (
    SCORES,
    Luck,
    LuckSetting,
    OwnChoices,
    RolloutValue,
    Value,
    ValueModel,
    default_model,
    design_rows,
    fit_model,
    fit_rows,
    game_luck,
    seat_policies,
    step_corrections,
)
from referee.play.runner import GameRecord, InProcessPlayer, run_game
from referee.stats.luck import unbiasedness


def _games(n: int, count: int, bots: Sequence[str] = ("lowest", "random")) -> list[GameRecord]:
    config = GameConfig(players=n, variants=frozenset({"play_out"}))
    out = []
    for g in range(count):
        players = [InProcessPlayer(make_bot(bots[s % len(bots)], g), f"b{s}") for s in range(n)]
        out.append(run_game(config, 9000 + g, players))
    return out


def _luck(rec: GameRecord, value: Value | None = None) -> Luck:
    return game_luck(rec.config, rec.seed, parse_deck(rec.deck), rec.first_player,
                     [(int(d["seat"]), str(d["decision"])) for d in rec.decisions],
                     rec.ended.places, rec.ended.points, value)


@pytest.fixture(scope="module")
def games2() -> list[GameRecord]:
    return _games(2, 60, ("lowest", "lowest"))


def _check(records: Sequence[GameRecord], value: Value | None, score: str = "share",
           seat: int = 0, lucks: Sequence[Luck] | None = None) -> tuple[bool, float, float]:
    lucks = lucks or [_luck(r, value) for r in records]
    i = SCORES.index(score)
    u = unbiasedness([lk.raw[i][seat] for lk in lucks], [lk.adjusted(score)[seat] for lk in lucks])
    return u.unbiased, u.variance_ratio, u.difference.mean


def test_the_shipped_value_function_is_unbiased_and_removes_variance(
        games2: list[GameRecord]) -> None:
    lucks = [_luck(r) for r in games2]
    for score in SCORES:
        ok, ratio, diff = _check(games2, None, score, lucks=lucks)
        assert ok, (score, diff)
        if score != "points":  # the penalty's V is weak: unbiased, not (yet) sharper
            assert ratio < 0.95, (score, ratio)
    assert default_model().meta["seed"] == 1


def test_a_game_with_no_chance_left_has_no_correction() -> None:
    rec = _games(2, 1)[0]
    got = _luck(rec)
    assert got.events > 20  # cards drawn and 3DOWN cards turned
    for i in range(len(SCORES)):
        assert got.raw[i] == tuple(float(x) for x in got.raw[i])
    # a value function that is the same whatever happens: no correction at all
    flat = _luck(rec, lambda game, sums: [[0.25] * game.n for _ in SCORES])
    assert flat.corrections == tuple((0.0,) * 2 for _ in SCORES)


def _random_value(game: Game, sums: Sequence[Summary]) -> list[list[float]]:
    """Noise: a hash of what the value function may see, scaled to +-2."""
    out = []
    for i in range(len(SCORES)):
        row = []
        for s in range(game.n):
            h = hashlib.blake2b(repr((i, s, sums[s], game.to_move, len(game.pile))).encode(),
                                digest_size=8).digest()
            row.append(4.0 * int.from_bytes(h, "big") / 2**64 - 2.0)
        out.append(row)
    return out


def test_a_random_value_function_keeps_the_mean_and_adds_variance(
        games2: list[GameRecord]) -> None:
    ok, ratio, _ = _check(games2[:30], _random_value)
    assert ok
    assert ratio > 2.0


def test_a_value_function_that_peeks_at_the_card_drawn_fails_the_check(
        games2: list[GameRecord]) -> None:
    """V reads the card that was really drawn from the game's events (hidden from the
    judge: only the drawer saw it) and values a hand by how many of that kind it holds:
    the card that happened looks better than each possible outcome, every time."""
    model = default_model()

    def peeking(game: Game, sums: Sequence[Summary]) -> list[list[float]]:
        base = model(game, sums)
        last = next((e for e in reversed(game.events) if e[0] == "draw"), None)
        if last is None:
            return base
        held = 11 + KIND[last[3][-1]]  # a summary's count of that kind in the hand
        return [[v + 0.2 * sums[s][held] for s, v in enumerate(row)] for row in base]

    ok, _, diff = _check(games2[:30], peeking)
    assert not ok and diff < 0  # its corrections are positive: scores pushed down


def test_the_model_file_round_trips_and_refuses_other_features(tmp_path: Path) -> None:
    model = default_model()
    path = tmp_path / "m.json"
    path.write_text(model.to_json())
    again = ValueModel.load(path)
    assert again.weights[4][0]["share"] == pytest.approx(model.weights[4][0]["share"],
                                                              abs=1e-6)
    raw = json.loads(path.read_text())
    raw["features"] = raw["features"][:-1]
    path.write_text(json.dumps(raw))
    with pytest.raises(ValueError, match="refit it"):
        ValueModel.load(path)


def test_luck_show_prints_a_records_adjusted_scores(tmp_path: Path) -> None:
    rec = _games(2, 1)[0]
    path = tmp_path / "g.jsonl"
    path.write_text("".join(line + "\n" for line in rec.to_lines()))
    r = CliRunner().invoke(main, ["luck", "show", str(path)])
    assert r.exit_code == 0, r.output
    assert "chance events" in r.output and "share" in r.output and "points" in r.output


@pytest.mark.slow
def test_rollout_value_is_unbiased_and_removes_more_variance(games2: list[GameRecord]) -> None:
    """V by rollouts in the endgame (``RolloutValue``): still unbiased on the same games,
    and it takes more of the variance away than the linear model (measured at 2 seats,
    bench/luck_bound.py: a game's variance x0.33 against x0.78 with 32 rollouts)."""
    value = RolloutValue(rollouts=16)
    lucks = [_luck(r, value) for r in games2]
    linear = [_luck(r) for r in games2]
    ok, ratio, diff = _check(games2, value, lucks=lucks)
    _, lin_ratio, _ = _check(games2, None, lucks=linear)
    assert ok, diff
    assert ratio < lin_ratio - 0.1, (ratio, lin_ratio)
    # the same state, the same value: a fixed function of the state (its own seed)
    rec = games2[0]
    assert _luck(rec, RolloutValue(rollouts=16)).corrections == lucks[0].corrections


def test_with_drawn_swaps_the_card_drawn_with_an_unseen_one() -> None:
    rec = _games(2, 1)[0]
    game = Game(rec.config, rec.seed, deck=parse_deck(rec.deck), first_player=rec.first_player)
    for d in rec.decisions:
        game.apply(int(d["seat"]), str(d["decision"]))
        last = game.events[-1]
        if last[0] == "draw" and game.draw_pile:
            break
    seat, card = last[1], last[3][-1]
    alt = next(c for c in unseen(game) if KIND[c] != KIND[card])
    g = with_drawn(game, seat, card, alt)
    held = [c for lst in g.hands[seat].values() for c in lst]
    assert alt in held and card not in held and g.hand_count == game.hand_count
    assert sorted(unseen(g)) == sorted([c for c in unseen(game) if c != alt] + [card])
    assert card in [c for lst in game.hands[seat].values() for c in lst]  # a copy


def test_luck_show_with_rollouts(tmp_path: Path) -> None:
    rec = _games(2, 1)[0]
    path = tmp_path / "g.jsonl"
    path.write_text("".join(line + "\n" for line in rec.to_lines()))
    r = CliRunner().invoke(main, ["luck", "show", str(path), "--rollouts", "4"])
    assert r.exit_code == 0, r.output
    assert "chance events" in r.output and "share" in r.output


def test_the_fit_takes_variance_away_on_its_games_and_stays_unbiased_on_others(
        games2: list[GameRecord]) -> None:
    """V fitted for least variance (``design_rows``, ``fit_rows``): on the games it
    was fitted to, the adjusted scores vary less than the raw ones (least squares
    can only do as well as the weights 0); on other games it is one more fixed V,
    unbiased."""
    bounds = (0,)
    rows = [r for rec in games2[:40] for r in design_rows(rec, bounds)]
    model = ValueModel({2: fit_rows(rows, bounds)}, {}, bounds)
    ok, ratio, diff = _check(games2[:40], model)
    assert ratio < 0.9, ratio
    ok, _, diff = _check(games2[40:], model)
    assert ok, diff
    # the design's columns sum what the corrections of a linear V sum: the same
    # adjusted score through either road
    rec = games2[41]
    z, y = design_rows(rec, bounds)[0]
    w = model.weights[2]
    flat = [x for st in w for x in st["share"]]
    via_design = y[0] - z[0] - sum(a * b for a, b in zip(flat, z[len(SCORES):], strict=True))
    assert via_design == pytest.approx(_luck(rec, model).adjusted("share")[0], abs=1e-9)


def test_a_fit_is_the_same_in_any_number_of_processes() -> None:
    one = fit_model(6, 3, seats=(2,), jobs=1, bounds=(0,))
    two = fit_model(6, 3, seats=(2,), jobs=2, bounds=(0,))
    assert one.to_json() == two.to_json()
    assert one.meta["refit"] == "referee luck fit --games 6 --seed 3 --seats 2"


@pytest.mark.slow
def test_rollouts_by_the_seats_own_policies_are_unbiased_and_cached(
        games2: list[GameRecord]) -> None:
    """Rollouts that play each seat by its built-in bot's rule (``seat_policies``),
    over the unseen cards in their places (common random numbers across a chance
    event's outcomes): unbiased; a state valued twice costs one set of rollouts."""
    own = RolloutValue(rollouts=8, policies=seat_policies(["lowest", "lowest"]))
    ok, _, diff = _check(games2[:30], own)
    assert ok, diff
    rec = games2[0]
    game = Game(rec.config, rec.seed, deck=parse_deck(rec.deck), first_player=rec.first_player)
    for d in rec.decisions:
        if not game.draw_pile and game.phase == PLAYING and not game.over:
            break
        game.apply(int(d["seat"]), str(d["decision"]))
    assert own.plays(game)
    own.cache.clear()
    first = own(game, summaries(game))
    assert len(own.cache) == 1
    assert own(game.copy(), summaries(game)) == first and len(own.cache) == 1
    assert seat_policies(["random", None, "heuristic"])[1] is seat_policies(["heuristic"])[0]


def test_a_value_setting_names_its_value_function() -> None:
    assert LuckSetting().describe() == "linear"
    assert LuckSetting.parse("rollout x12") == LuckSetting("rollout", 12, choices=False)
    assert LuckSetting("rollout", 12).describe() == "rollout x12, own choices"
    assert LuckSetting.parse("rollout x12, own choices") == LuckSetting("rollout", 12)
    assert LuckSetting("rollout", 4).value_for(["heuristic", None]).choices == [  # type: ignore[attr-defined]
        "heuristic", None]
    assert isinstance(LuckSetting("rollout", 4).value_for(["lowest", None]), RolloutValue)
    assert LuckSetting().value_for([None, None]) is default_model()
    with pytest.raises(ValueError, match="unknown value function"):
        LuckSetting("perfect")


def test_luck_fit_writes_a_model_the_estimator_reads(tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    r = CliRunner().invoke(main, ["luck", "fit", "--games", "10", "--seed", "4", "--seats", "2",
                                  "--output", str(out)])
    assert r.exit_code == 0, r.output
    model = ValueModel.load(out)
    assert sorted(model.weights) == [2] and len(model.weights[2]) == len(model.bounds) + 1
    assert model.meta["refit"] == "referee luck fit --games 10 --seed 4 --seats 2"
    rec = _games(2, 1)[0]
    assert _luck(rec, model).events > 20


class _WhereV:
    """A value function that reads the full state after the event, as rollouts do:
    how many unseen cards share the kind of the first unseen card (the draw pile's
    bottom card, or the first 3DOWN card still face down)."""

    needs_state = True

    def plays(self, game: Game) -> bool:
        return True

    def __call__(self, game: Game, sums: Sequence[Summary]) -> list[list[float]]:
        u = unseen(game)
        x = float(sum(1 for c in u if KIND[c] == KIND[u[0]])) if u else 0.0
        return [[x] * game.n for _ in SCORES]


def _event_state(down: bool, n: int) -> tuple[Game, int, str]:
    """The state just before the first decision of a seeded game at ``n`` seats that
    makes a seat draw (``down``: that turns a 3DOWN card), and the decision."""
    rec = _games(n, 1, ("lowest", "lowest"))[0]
    game = Game(rec.config, rec.seed, deck=parse_deck(rec.deck), first_player=rec.first_player)
    for d in rec.decisions:
        seat, text = int(d["seat"]), str(d["decision"])
        if game.phase == PLAYING:
            probe = game.copy()
            start = len(probe.events)
            probe.apply(seat, text)
            if (text.startswith("down") if down else
                    any(e[0] == "draw" for e in probe.events[start:]) and len(unseen(game)) > 20):
                return game, seat, text
        game.apply(seat, text)
    raise AssertionError("no such decision in the game")


@pytest.mark.parametrize(("down", "n", "deals"), [
    pytest.param(False, 2, 1500, id="draw"),
    pytest.param(True, 6, 3000, id="3down", marks=pytest.mark.slow)])
def test_corrections_have_mean_zero_even_for_a_value_function_that_reads_hidden_places(
        down: bool, n: int, deals: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """One chance event, its unseen cards dealt into their places ``deals`` ways
    (the turned 3DOWN card at 6 seats: 18 cards unseen, kinds repeated): the mean
    correction is 0 (|z| < 4) for a V that reads where the unseen cards lie.
    Choosing each group's representative outcome by its place (the first of its kind
    among the unseen cards, as an earlier version did) is caught by the same check."""
    game, seat, text = _event_state(down, n)
    order = unseen(game)

    def z() -> float:
        rng = random.Random(1)
        got = []
        for _ in range(deals):
            rng.shuffle(order)
            total = [[0.0] * game.n for _ in SCORES]
            assert step_corrections(reshuffled(game, order), seat, text, _WhereV(), total) >= 1
            got.append(total[0][seat])
        return statistics.fmean(got) / (statistics.stdev(got) / math.sqrt(len(got)))

    assert abs(z()) < 4
    monkeypatch.setattr(luck, "representative", lambda cards: cards[0])
    assert abs(z()) > 5


def _heuristic_game(seed: int) -> GameRecord:
    config = GameConfig(players=2, variants=frozenset({"play_out"}))
    return run_game(config, seed, [InProcessPlayer(make_bot("heuristic"), "h"),
                                   InProcessPlayer(make_bot("lowest"), "l")])


def test_the_heuristic_replayed_from_its_record_sees_what_it_saw() -> None:
    """The luck's copy of a built-in heuristic, told the events as the referee told
    the real one, and given the real one's random numbers, makes every decision the
    real one made (so the samples of its choices are of the right distribution)."""
    checked = searched = 0
    for g in range(3):
        rec = _heuristic_game(100 + g)
        game = Game(rec.config, rec.seed, deck=parse_deck(rec.deck),
                    first_player=rec.first_player)
        choices = luck._Choices(game, ["heuristic", "lowest"], rec.seed)
        choices.bots[0].new_game(rec.seed * 7919)  # as InProcessPlayer seeds seat 0
        for d in rec.decisions:
            seat, text = int(d["seat"]), str(d["decision"])
            if seat == 0:
                bot = choices.told(0)
                obs, legal = game.observation(0), game.legal(0)
                searched += bot.searches(obs, legal)
                assert bot.decide(obs, legal).text == text
                checked += 1
            game.apply(seat, text)
    assert checked > 100 and searched > 5


@pytest.mark.parametrize("bad", [False, True], ids=["linear", "random-numbers"])
def test_corrections_at_the_heuristics_own_choices_have_mean_zero(bad: bool) -> None:
    """At a decision where the heuristic searches and its choice varies with its
    random numbers, the correction Q(choice) - mean of Q over independent samples
    of its search has mean 0 over 150 draws of the bot's own numbers (|z| < 4), for
    the shipped V and for a V of random numbers."""
    rec = _heuristic_game(101)
    game = Game(rec.config, rec.seed, deck=parse_deck(rec.deck), first_player=rec.first_player)
    v = OwnChoices(_random_value if bad else default_model(), ["heuristic", "lowest"])
    choices = luck._Choices(game, ["heuristic", "lowest"], rec.seed)
    found = None
    for i, d in enumerate(rec.decisions):
        seat, text = int(d["seat"]), str(d["decision"])
        if seat == 0:
            bot = choices.told(0)
            obs, legal = game.observation(0), game.legal(0)
            if bot.searches(obs, legal) and len({bot.decide_with(obs, legal, random.Random(r)).text
                                                 for r in range(12)}) > 1:
                found = (i, obs, legal)
                break
        game.apply(seat, text)
    assert found is not None, "no searched decision whose choice varies"
    i, obs, legal = found
    got = []
    for r in range(150):
        text = choices.bots[0].decide_with(obs, legal, random.Random(10_000 + r)).text
        total = [[0.0] * 2 for _ in SCORES]
        choices.seen[0] = len(game.events)  # told already
        assert choices.correct(i + r, 0, text, v, total) == 1
        got.append(total[0][0])
    assert statistics.pstdev(got) > 0
    z = statistics.fmean(got) / (statistics.stdev(got) / math.sqrt(len(got)))
    assert abs(z) < 4, z


def test_own_choices_keep_the_games_unbiased_and_are_only_for_built_in_bots(
        ) -> None:
    """Over seeded games of the heuristic against lowest, the scores adjusted at the
    chance events and the heuristic's own choices (rollout V) keep the raw mean; a
    seat whose bot is not built in (None) gets no correction at its choices."""
    recs = [_heuristic_game(300 + g) for g in range(12)]
    on = [_luck(r, RolloutValue(rollouts=2, choices=["heuristic", "lowest"])) for r in recs]
    off = [_luck(r, RolloutValue(rollouts=2)) for r in recs]
    external = [_luck(r, RolloutValue(rollouts=2, choices=[None, "lowest"])) for r in recs]
    assert sum(a.events for a in on) > sum(b.events for b in off)
    assert [a.corrections for a in external] == [b.corrections for b in off]
    # a seat that faulted at turn 1: the referee may have decided for it from then on
    faulted = [game_luck(r.config, r.seed, parse_deck(r.deck), r.first_player,
                         [(int(d["seat"]), str(d["decision"])) for d in r.decisions],
                         r.ended.places, r.ended.points,
                         RolloutValue(rollouts=2, choices=["heuristic", "lowest"]),
                         faults=[(0, 1)]) for r in recs]
    assert [a.corrections for a in faulted] == [b.corrections for b in off]
    ok, _, _ = _check(recs, None, lucks=on)
    assert ok


def test_a_draws_outcomes_valued_at_once_give_the_same_numbers_to_the_last_bit() -> None:
    """``ValueModel.drawn`` (another seat's features computed once per value of what
    they read of the drawer) gives exactly the adjusted scores of valuing every
    outcome on its own, at every table size."""
    model = default_model()

    def plain(game: Game, sums: Sequence[Summary]) -> Sequence[Sequence[float]]:
        return model(game, sums)

    for n in range(2, 7):
        for rec in _games(n, 3):
            fast, slow = _luck(rec), _luck(rec, plain)
            assert (fast.corrections, fast.events) == (slow.corrections, slow.events)
            assert fast.adjusted_all() == slow.adjusted_all()
