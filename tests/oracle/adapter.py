"""The engine and the oracle side by side: one random game played on both, compared
at every step.

Both are dealt the same deck order with the same first player (what the referee draws
from the seed); under `swap_piles` the oracle is given the engine's permutation, which
is public (the `piles` event).  At every step both must agree on who decides, on each
deciding seat's legal decisions (as sets, then their order, P§10.3), on every seat's
observation (P§12) and on the events every seat has been shown (P§11); at the end on
the result (how, places, points).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from referee.game import DecisionSyntaxError, GameConfig, GameError, parse_deck
from referee.game import Game as EngineGame
from referee.game.events import event_text
from tests.oracle.rules import KINDS, SPECIALS, VARIANTS, Config, build_deck, refusal_reasons
from tests.oracle.rules import Game as OracleGame


class Disagreement(AssertionError):
    """The engine and the oracle differ."""


@dataclass
class Setting:
    players: int
    variants: frozenset[str] = frozenset()
    deck: str = "standard"
    colours: int | None = None
    turn_limit: int = 1000

    def oracle_config(self) -> Config:
        return Config(self.players, self.variants, self.colours, self.deck, self.turn_limit)

    def engine_config(self) -> GameConfig:
        return GameConfig(
            players=self.players,
            variants=frozenset(self.variants),
            colours=self.colours,
            deck=self.deck,
            turn_limit=self.turn_limit,
        )

    def __str__(self) -> str:
        v = ",".join(sorted(self.variants)) or "-"
        return f"{self.players}p {self.deck}/{self.colours} {v} limit {self.turn_limit}"


@dataclass
class Outcome:
    decisions: int = 0
    how: str = ""
    turns: int = 0  # the last turn's number
    finish_turns: list[int] = field(default_factory=list)  # the turn of each finish
    kinds: dict[str, int] = field(default_factory=dict)


def random_setting(rng: random.Random, players: int) -> Setting:
    """A random configuration: any variants, either deck, any allowed colours."""
    variants = frozenset(v for v in VARIANTS if rng.random() < 0.35)
    deck = rng.choice(["standard", "standard", "alternative"])
    colours: int | None = None
    if rng.random() < 0.4:
        per_colour = 12 if deck == "standard" else 24
        extra = 0 if deck == "standard" else 2
        smallest = next(k for k in range(1, 8) if per_colour * k + extra >= 9 * players)
        colours = rng.randint(smallest, 7)
    turn_limit = rng.choice([1000, 1000, 1000, 40, 7])
    return Setting(players, variants, deck, colours, turn_limit)


def fail(setting: Setting, seed: int, step: int, what: str, engine: object, oracle: object) -> None:
    raise Disagreement(
        f"{setting}, seed {seed}, step {step}: {what}\n  engine: {engine!r}\n  oracle: {oracle!r}"
    )


def play_both(
    setting: Setting,
    seed: int,
    check_order: bool = True,
    probes: int = 2,
    lowest: float = 0.0,
    last: float = 0.0,
) -> Outcome:
    """One random game on the engine and the oracle; raises Disagreement.

    At each step, `probes` decisions drawn from every decision of the text forms
    (P§10.1), most of them illegal, are tried on a copy of the engine: it must
    accept exactly those the oracle accepts, and refuse the others citing a rule they
    break (P§8).  With probability `lowest` a seat plays the
    first legal decision (the lowest play; the referee's substitute) instead of a
    uniformly random one: such games get rid of their cards and reach the 3UP and 3DOWN
    cards more often; with probability `last`, the last (`draw`, `decline`, `keep`,
    the highest play)."""
    rng = random.Random(seed)
    order = build_deck(setting.deck, setting.colours)
    rng.shuffle(order)
    first = rng.randrange(setting.players)
    engine = EngineGame(setting.engine_config(), seed, deck=parse_deck(order), first_player=first)
    oracle = OracleGame(setting.oracle_config(), order, first)
    in_seat_order = rng.random() < 0.7  # the referee's order; any order is legal
    out = Outcome()
    seen = [0] * (setting.players + 1)
    step = 0
    while True:
        compare(setting, seed, step, engine, oracle, check_order, seen)
        seats = list(engine.to_decide())
        if not seats:
            break
        seat = seats[0] if in_seat_order else rng.choice(seats)
        if probes:
            probe(setting, seed, step, engine, oracle, rng, probes)
        legal = [d.text for d in engine.legal(seat)]
        r = rng.random()
        if r < lowest:
            choice = legal[0]
        elif r < lowest + last:
            choice = legal[-1]
        else:
            choice = rng.choice(legal)
        words = choice.split()
        if len(words) > 3 and rng.random() < 0.5:
            # Another spelling the rules accept: the cards in another order.
            cards = words[2:] if words[0] == "play" else words[1:]
            rng.shuffle(cards)
            choice = " ".join(words[: len(words) - len(cards)] + cards)
        word = choice.split()[0]
        out.kinds[word] = out.kinds.get(word, 0) + 1
        engine.apply(seat, choice)
        if oracle.phase == "setup" and oracle.perm is None and setting.variants >= {"swap_piles"}:
            # The permutation is drawn from the seed by the referee; public once drawn.
            if engine.observation(seat).get("piles") is not None:
                oracle.perm = list(engine.observation(seat)["piles"])
        finished = len(oracle.finish_order)
        oracle.apply(seat, choice)
        if len(oracle.finish_order) > finished:
            out.finish_turns.append(oracle.turn)
        step += 1
    result = engine.result()
    if result is None:
        fail(setting, seed, step, "no decision left but no result", None, oracle.result())
    assert result is not None
    mine = oracle.result()
    theirs = (result.how, list(result.places), list(result.points))
    if theirs != mine:
        fail(setting, seed, step, "result", theirs, mine)
    if list(result.finish_order) != oracle.finish_order:
        fail(setting, seed, step, "finish order", result.finish_order, oracle.finish_order)
    out.decisions = step
    out.how = result.how
    out.turns = oracle.turn
    return out


def compare(
    setting: Setting,
    seed: int,
    step: int,
    engine: EngineGame,
    oracle: OracleGame,
    check_order: bool,
    seen: list[int],
) -> None:
    """Compare the two games now; `seen[seat]` (and `seen[-1]`, omniscient) counts the
    events already compared (events are only ever appended)."""
    if list(engine.to_decide()) != oracle.to_decide():
        fail(setting, seed, step, "seats to decide", engine.to_decide(), oracle.to_decide())
    for seat in oracle.to_decide():
        theirs = [d.text for d in engine.legal(seat)]
        mine = oracle.legal(seat)
        if set(theirs) != set(mine):
            fail(
                setting, seed, step,
                f"legal decisions of seat {seat} (engine only: {sorted(set(theirs) - set(mine))},"
                f" oracle only: {sorted(set(mine) - set(theirs))})",
                theirs, mine,
            )
        if len(theirs) != len(set(theirs)):
            fail(setting, seed, step, f"repeated legal decisions of seat {seat}", theirs, mine)
        if check_order and theirs != mine:
            fail(setting, seed, step, f"order of the legal list of seat {seat}", theirs, mine)
    for seat in range(setting.players):
        e_obs = engine.observation(seat)
        o_obs = oracle.observation(seat)
        if e_obs != o_obs:
            diff = {
                k: (e_obs.get(k), o_obs.get(k))
                for k in sorted(set(e_obs) | set(o_obs))
                if e_obs.get(k) != o_obs.get(k)
            }
            fail(setting, seed, step, f"observation of seat {seat}: {diff}", "", "")
        start = seen[seat]
        e_events = [event_text(ev) for ev in engine.events_for(seat, start)]
        o_events = [ev.seen_by(seat) for ev in oracle.events[start:]]
        if e_events != o_events:
            at = next(
                (i for i, (a, b) in enumerate(zip(e_events, o_events, strict=False)) if a != b),
                min(len(e_events), len(o_events)),
            )
            fail(
                setting, seed, step, f"events seen by seat {seat}, from #{start + at}",
                e_events[at : at + 4], o_events[at : at + 4],
            )
    start = seen[-1]
    e_all = [event_text(ev) for ev in engine.events_for(None, start)]
    o_all = [ev.text for ev in oracle.events[start:]]
    if e_all != o_all:
        at = next(
            (i for i, (a, b) in enumerate(zip(e_all, o_all, strict=False)) if a != b),
            min(len(e_all), len(o_all)),
        )
        fail(
            setting, seed, step, f"omniscient events, from #{start + at}",
            e_all[at : at + 4], o_all[at : at + 4],
        )
    for i in range(len(seen)):
        seen[i] = len(oracle.events)


def candidate(oracle: OracleGame, seat: int, rng: random.Random) -> str:
    """A decision of a random text form (P§10.1) that `seat` could try now; most are
    illegal, some legal (the seat's own cards are used more often than not)."""
    st = oracle.seats[seat]
    mine = st.hand + st.up + st.dealt + [c for c in st.down if c is not None]
    pool = mine if mine and rng.random() < 0.8 else oracle.deck_order

    def card() -> str:
        return rng.choice(pool)

    src = rng.choice(["hand", "3up"])
    form = rng.randrange(9)
    if form == 0:
        return rng.choice(["pickup", "draw", "decline", "keep"])
    if form == 1:
        return f"down {rng.randrange(4)}"
    if form == 2:
        return f"play {src} {rng.choice(SPECIALS)}"
    if form == 3:
        return f"play {src} {rng.choice(KINDS[:10])}x{rng.randint(1, 4)}"
    if form == 4:
        return f"play {src} {card()}"
    if form == 5:
        first = card()
        same = [c for c in pool if c[:-1] == first[:-1]]
        return f"play {src} " + " ".join(rng.sample(same, min(len(same), rng.randint(2, 3))))
    if form == 6:
        return f"swap {card()} {card()}"
    if form == 7 and len(st.dealt) == 6:
        return "3up " + " ".join(rng.sample(st.dealt, 3))
    if rng.random() < 0.5:
        legal = oracle.legal(seat)
        if legal:
            return rng.choice(legal)
    return rng.choice(["play hand", "3up", "down x", "draw 2"])


def probe(
    setting: Setting,
    seed: int,
    step: int,
    engine: EngineGame,
    oracle: OracleGame,
    rng: random.Random,
    count: int,
) -> None:
    """The engine accepts a decision exactly when the oracle does (RULES §8)."""
    seats = list(range(setting.players))
    for _ in range(count):
        seat = rng.choice(seats)
        text = candidate(oracle, seat, rng)
        trial = engine.copy()
        try:
            trial.apply(seat, text)
            accepted, why = True, ""
        except (GameError, DecisionSyntaxError) as e:
            accepted, why = False, str(e)
        if accepted != oracle.is_legal(seat, text):
            fail(
                setting, seed, step, f"seat {seat} tried {text!r}: accepted?",
                accepted, oracle.is_legal(seat, text),
            )
        if not accepted:
            # The refusal cites one of the rules the decision breaks (P§8's table).
            cited = why[why.rfind("(") + 1 : -1] if why.endswith(")") else why
            reasons = refusal_reasons(oracle, seat, text)
            if cited not in reasons:
                fail(setting, seed, step, f"seat {seat}: {text!r} refused citing", why, reasons)
