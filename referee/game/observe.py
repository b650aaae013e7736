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

from typing import TYPE_CHECKING, Any

from .cards import ORDER, TEXT

if TYPE_CHECKING:
    from .state import Game

# state.py's phase numbers (state.py imports this module, so not the reverse).
SETUP = 0
PHASE_NAMES = ("setup", "play", "swap", "over")

_text = TEXT.__getitem__
_order = ORDER.__getitem__


def _texts(cards: list[int] | tuple[int, ...]) -> list[str]:
    return list(map(_text, cards))


def _cleared(game: Game) -> list[str]:
    # The cleared cards only ever grow, so their count identifies them: sort and
    # convert them once per clear, not once per observation.
    cached = game._cleared
    if cached is None or cached[0] != len(game.out):
        cached = game._cleared = (len(game.out), _texts(sorted(game.out, key=_order)))
    return list(cached[1])


def observation(game: Game, seat: int) -> dict[str, Any]:
    """What ``seat`` may know now (RULES §6)."""
    n = game.n
    setup = game.phase == SETUP
    obs: dict[str, Any] = {
        "seat": seat,
        "players": n,
        "variants": sorted(game.config.variants),
        "phase": PHASE_NAMES[game.phase],
        "turn": game.turn,
        "to_move": game.to_move if game.to_move >= 0 else None,
        "direction": game.direction,
        "extra_action": game.in_extra,
        "pending_extra": game.pending,
        "drawn": game.drawn if game.in_extra else False,
        # Own cards: the hand is the seat's own; in set-up, its six dealt cards.
        "hand": _texts(game.hand(seat)),
        "pile": _texts(game.pile),
        "pile_run": game.run,
        "draw_pile": len(game.draw_pile),
        "cleared": _cleared(game),
    }
    if setup:
        obs["dealt"] = _texts(game.dealt[seat])
        obs["chosen"] = game.choices[seat] is not None
        if game.choices[seat] is not None:
            choice = game.choices[seat]
            assert choice is not None
            obs["choice"] = _texts(choice.cards)
    if game.perm is not None:
        obs["piles"] = list(game.perm)
    seats = []
    for s in range(n):
        seats.append({
            "seat": s,
            "hand": game.hand_n[s],
            # 3UP cards are public once every seat has chosen (RULES §2.3, §6).
            "up": None if setup else _texts(game.up[s]),
            "down": [i for i in range(3) if game.down[s][i] is not None],
            "finished": game.place[s],  # set when the seat finishes (RULES §4)
            **({"chosen": game.choices[s] is not None} if setup else {}),
        })
    obs["seats"] = seats
    return obs
