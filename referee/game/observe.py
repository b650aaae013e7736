"""A seat's observation: everything that seat may know (RULES §6), and nothing else.

The observation is *built* by listing what the seat may see -- never by copying the
full state and deleting secrets (a forgotten field would leak).  It is JSON-ready:
cards in their text form.  This is the only view of the game a bot is ever given.

Fields (the protocol documents them for bot authors):

    seat, players, variants, phase ("setup", "play", "swap", "over"), turn,
    to_move (null in set-up and at the end), direction (1 clockwise, -1 not),
    extra_action (the current action is an extra action), pending_extra (extra
    actions still to come after it), drawn (a card was drawn before this extra action),
    hand (own cards, sorted; empty in set-up), dealt (own six dealt cards: set-up only),
    chosen (own 3UP choice made: set-up only), pile (bottom to top), pile_run (how
    many of the top number lie in a row), draw_pile (count), cleared (cards out of
    the game), piles (the swap_piles permutation, when there was one),
    seats: [{seat, hand (count), up (cards, null before the reveal), down (slots that
    still hold a card), finished (place or null), chosen (set-up)}]
"""

from __future__ import annotations

from typing import Any

from .cards import ORDER, TEXT
from .phases import PHASE_NAMES, SETUP
from .table import Table

_text = TEXT.__getitem__
_order = ORDER.__getitem__

# Sorted variant names, by the config's frozenset (a handful of distinct values).
_VARIANT_NAMES: dict[frozenset[str], list[str]] = {}

# The 3DOWN slots that still hold a card, by the bit mask of the empty ones (bit i:
# slot i is empty).  Copied into each observation, never handed out.
_DOWN_SLOTS = tuple([i for i in range(3) if not m >> i & 1] for m in range(8))


def _texts(cards: list[int] | tuple[int, ...]) -> list[str]:
    return list(map(_text, cards))


def _cleared(game: Table) -> list[str]:
    # The cleared cards only ever grow, so their count identifies them: sort and
    # convert them once per clear, not once per observation.
    cached = game.cleared_cache
    if cached is None or cached[0] != len(game.out):
        cached = game.cleared_cache = (len(game.out), _texts(sorted(game.out, key=_order)))
    return cached[1][:]


def observation(game: Table, seat: int) -> dict[str, Any]:
    """What ``seat`` may know now (RULES §6).

    Written for speed (it is built for every request a bot is sent): locals instead
    of attribute look-ups, comprehensions instead of helper calls, no intermediate
    lists.  Every value is a fresh object: nothing is shared between observations.
    """
    n = game.n
    phase = game.phase
    setup = phase == SETUP
    variants = game.config.variants
    names = _VARIANT_NAMES.get(variants)
    if names is None:
        names = _VARIANT_NAMES[variants] = sorted(variants)
    in_extra = game.in_extra
    to_move = game.to_move
    text = TEXT
    hand_count = game.hand_count
    place = game.place
    down = game.down
    empty = [(d[0] is None) | (d[1] is None) << 1 | (d[2] is None) << 2 for d in down]
    seats: list[dict[str, Any]]
    if setup:
        choices = game.choices
        seats = [{
            "seat": s,
            "hand": hand_count[s],
            "up": None,  # 3UP cards are public once every seat has chosen (RULES §2.3, §6)
            "down": _DOWN_SLOTS[empty[s]][:],
            "finished": place[s],
            "chosen": choices[s] is not None,
        } for s in range(n)]
    else:
        up = game.up
        seats = [{
            "seat": s,
            "hand": hand_count[s],
            "up": [text[c] for c in up[s]],
            "down": _DOWN_SLOTS[empty[s]][:],
            "finished": place[s],  # set when the seat finishes (RULES §4)
        } for s in range(n)]
    # Own cards: the hand is the seat's own (in Game.hand's order: by kind, each
    # kind's copies last taken first); in set-up, its six dealt cards.
    hand = game.hands[seat]
    obs: dict[str, Any] = {
        "seat": seat,
        "players": n,
        "variants": names[:],
        "phase": PHASE_NAMES[phase],
        "turn": game.turn,
        "to_move": to_move if to_move >= 0 else None,
        "direction": game.direction,
        "extra_action": in_extra,
        "pending_extra": game.pending,
        "drawn": game.drawn if in_extra else False,
        "hand": [text[c] for k in sorted(hand) for c in reversed(hand[k])] if hand else [],
        "pile": [text[c] for c in game.pile],
        "pile_run": game.run,
        "draw_pile": len(game.draw_pile),
        "cleared": _cleared(game),
    }
    if setup:
        obs["dealt"] = [text[c] for c in game.dealt[seat]]
        choice = game.choices[seat]
        obs["chosen"] = choice is not None
        if choice is not None:
            obs["choice"] = [text[c] for c in choice.cards]
    if game.perm is not None:
        obs["piles"] = list(game.perm)
    obs["seats"] = seats
    return obs
