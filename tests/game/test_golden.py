"""Golden playthroughs (as OpenSpiel's playthrough files): for a few seeded games, the
full record -- every event (omniscient text form) and every seat's observation after
every step -- is diffed against a file under ``tests/golden/``.  Any change in the
rules engine's behaviour, its events or its observations shows up as a diff.

``pytest --regen-golden`` rewrites the files (review the diff before committing).

File format: a header (configuration, seed, policies, deck), then for each step the
decision (``> seat: decision``), the events it produced (``  event ...``) and each
seat's observation (``  obs SEAT {json}``).  To keep files small, an observation is
written in full the first time, then as the JSON of only the fields that changed since
that seat's previous observation (``{}``: nothing changed; ``"-name": true``: the
field ``name`` is gone).

The decisions come from two tiny seeded policies defined here (not the reference
bots, whose tuning must not change these files): ``random`` (uniform over the legal
list) and ``low`` (the first listed play -- the engine lists plays from the lowest
number up -- else the first legal decision; a random 3UP choice).
"""

from __future__ import annotations

import difflib
import json
import random
from pathlib import Path
from typing import Any

import pytest

from referee.game import Decision, Game, GameConfig
from referee.game.cards import cards_text
from referee.game.decisions import CHOOSE_UP, PLAY
from referee.game.events import event_text

GOLDEN = Path(__file__).resolve().parent.parent / "golden"

# name -> (config, seed, policy by seat)
GAMES: dict[str, tuple[GameConfig, int, tuple[str, ...]]] = {
    "2p_default": (GameConfig(players=2), 27, ("low", "random")),
    # Seed chosen so that a run of four of a colour and a swap happen (they are rare).
    "4p_variants": (
        GameConfig(players=4, colours=4,
                   variants={"four_of_a_colour", "ones_reverse", "may_decline",
                             "draw_once_per_clear", "swap_piles"}),
        13, ("random", "low", "random", "random"),
    ),
    "6p_play_out": (GameConfig(players=6, variants={"play_out", "choose_for_others"}, colours=5),
                    13, ("low",) * 6),
}


def _json(d: dict[str, Any]) -> str:
    return json.dumps(d, separators=(",", ":"), sort_keys=True)


def _decide(policy: str, rng: random.Random, legal: list[Decision]) -> Decision:
    if policy == "random" or legal[0].code == CHOOSE_UP:
        return legal[rng.randrange(len(legal))]
    return next((d for d in legal if d.code == PLAY), legal[0])


def playthrough(config: GameConfig, seed: int, policies: tuple[str, ...]) -> str:
    g = Game(config, seed=seed)
    rngs = [random.Random(seed * 10 + s) for s in range(g.n)]
    lines = [
        "# golden playthrough (tests/game/test_golden.py); regenerate: pytest --regen-golden",
        f"config {_json(config.to_dict())}",
        f"seed {seed}",
        f"policies {' '.join(policies)}",
        f"deck {' '.join(cards_text(g.deck))}",
        f"first_player {g.first_player}",
    ]
    last: list[dict[str, Any] | None] = [None] * g.n
    start = 0

    def record() -> None:
        nonlocal start
        for e in g.events_for(None, start):
            lines.append(f"  event {event_text(e)}")
        start = len(g.events)
        for s in range(g.n):
            obs = g.observation(s)
            prev = last[s]
            if prev is None:
                shown = obs
            else:
                shown = {k: v for k, v in obs.items() if k not in prev or prev[k] != v}
                shown.update({f"-{k}": True for k in prev if k not in obs})
            lines.append(f"  obs {s} {_json(shown)}")
            last[s] = obs

    lines.append("> start")
    record()
    while not g.over:
        for s in g.to_decide():
            d = _decide(policies[s], rngs[s], g.legal(s))
            g.apply(s, d)
            lines.append(f"> {s}: {d.text}")
            record()
    r = g.result()
    assert r is not None
    lines.append(f"result {_json(r.to_dict())}")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("name", sorted(GAMES))
def test_golden_playthrough(name: str, regen_golden: bool) -> None:
    config, seed, bots = GAMES[name]
    text = playthrough(config, seed, bots)
    path = GOLDEN / f"{name}.txt"
    if regen_golden:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.exists(), f"{path} is missing: run pytest --regen-golden"
    expected = path.read_text(encoding="utf-8")
    if text != expected:
        diff = difflib.unified_diff(expected.splitlines(), text.splitlines(),
                                    f"{path.name} (golden)", f"{path.name} (now)", lineterm="")
        shown = "\n".join(list(diff)[:60])
        pytest.fail(f"{name}: the playthrough differs from {path}:\n{shown}\n"
                    "(if the change is intended: pytest --regen-golden)")


def test_golden_files_are_small_and_cover_the_variants() -> None:
    seen = set()
    for name in GAMES:
        path = GOLDEN / f"{name}.txt"
        assert path.stat().st_size < 400_000
        seen |= GAMES[name][0].variants
    assert {"play_out", "four_of_a_colour", "swap_piles"} <= seen
    text = (GOLDEN / "4p_variants.txt").read_text(encoding="utf-8")
    for needed in ("  event colour", "  event swap", "  event reverse", "  event piles",
                   ": decline", ": draw", "  event fail"):
        assert needed in text, needed
