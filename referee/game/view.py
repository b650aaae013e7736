"""A seat's view of a game in card ids: the inverse of its observation (``observe.py``),
less the cards it cannot see.

``view_of(observation, legal)`` reads back, from what a seat is shown (RULES §6),
everything a game in that position holds -- except where the cards the seat cannot
see lie: the other seats' hands (but for cards it saw go there), every 3DOWN slot
(its own too) and the draw pile.  Those cards, the deck less what the observation
shows, are the view's ``hidden`` pool; ``Game.determinize(view, order)``
(``state.py``) deals one order of that pool into those places and gives a game the
seat could be in (a determinization, for a search over hidden information).

The deck is not in the observation; its size is (every card is somewhere the
observation counts), and the size tells the deck: ``12 * colours`` cards for the
standard deck, ``24 * colours + 2`` for the alternative one (RULES §1).  A deck may
hold two identical cards, whose ids differ only in a copy number nobody can tell
apart: any free id of the text will do.

Pure, as the whole engine: no I/O, clock or randomness.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .cards import COLOUR, KIND, TEXT, Card, build_deck
from .config import GameConfig
from .decisions import DRAW, Decision


@dataclass(frozen=True, slots=True)
class View:
    """A game at ``seat``'s turn in play, as that seat sees it, in card ids.

    By seat: ``known`` (cards known to be in its hand: the seat's own whole hand;
    another seat's, the cards it picked up that the seat saw), ``hand_sizes``,
    ``up`` (its 3UP cards), ``down_slots`` (the 3DOWN slots still holding a card).
    ``hidden``: the cards the seat cannot see, in a fixed order.  The rest is the
    table: pile (bottom to top) and its top number, runs and colour run, the cleared
    cards, direction, turn, extra actions, the seats finished (in order) and their
    places, the swap_piles permutation."""

    config: GameConfig
    seat: int
    known: tuple[tuple[Card, ...], ...]
    hand_sizes: tuple[int, ...]
    up: tuple[tuple[Card, ...], ...]
    down_slots: tuple[tuple[int, ...], ...]
    hidden: tuple[Card, ...]
    pile: tuple[Card, ...]
    top: int
    run: int
    colour_run: int
    run_colour: int
    out: tuple[Card, ...]
    direction: int
    turn: int
    pending: int
    in_extra: bool
    drawn: bool
    draw_ok: bool
    finished: tuple[int, ...]
    place: tuple[int | None, ...]
    perm: tuple[int, ...] | None


def deck_of(size: int) -> tuple[str, int] | None:
    """The deck (name, colours) of ``size`` cards, if there is one."""
    if size % 12 == 0 and 1 <= size // 12 <= 7:
        return "standard", size // 12
    if size % 24 == 2 and 1 <= size // 24 <= 7:
        return "alternative", size // 24
    return None


_CONFIGS: dict[tuple[int, tuple[str, ...], str, int], GameConfig] = {}
_FREE: dict[tuple[str, int], dict[str, list[Card]]] = {}


def view_of(obs: dict[str, Any], legal: Sequence[Decision],
            known: Sequence[Sequence[str]] = ()) -> View | None:
    """The view of ``obs`` (an observation of the seat to move, in play) and its
    ``legal`` list; ``known``: by seat, cards known to be in that seat's hand (shown
    to the seat by a pick-up, say).  None when the observation fits no deck (more
    copies of a card seen than a deck holds)."""
    n: int = obs["players"]
    seats = obs["seats"]
    size = (sum(s["hand"] + len(s["up"]) + len(s["down"]) for s in seats)
            + len(obs["pile"]) + obs["draw_pile"] + len(obs["cleared"]))
    deck = deck_of(size)
    if deck is None:
        return None
    variants = tuple(obs["variants"])
    key = (n, variants, deck[0], deck[1])
    config = _CONFIGS.get(key)
    if config is None:
        config = _CONFIGS[key] = GameConfig(players=n, variants=frozenset(variants),
                                            deck=deck[0], colours=deck[1])
    template = _FREE.get(deck)
    if template is None:
        template = _FREE[deck] = {}
        for c in build_deck(deck[0], deck[1]):
            template.setdefault(TEXT[c], []).append(c)
    free = {t: list(ids) for t, ids in template.items()}

    def take(texts: Sequence[str]) -> tuple[Card, ...] | None:
        out = []
        for t in texts:
            ids = free.get(t)
            if not ids:  # more copies seen than the deck holds: not this deck
                return None
            out.append(ids.pop())
        return tuple(out)

    me: int = obs["seat"]
    hand = take(obs["hand"])
    ups = [take(s["up"]) for s in seats]  # in the observation's order
    pile = take(obs["pile"])
    out = take(obs["cleared"])
    # Cards the seat saw go into another seat's hand (a pick-up) and not leave it.
    held: list[tuple[Card, ...] | None] = [() for _ in range(n)]
    for s, texts in enumerate(known):
        if s != me and texts and s < n:
            held[s] = take(list(texts)[: seats[s]["hand"]])
    if hand is None or pile is None or out is None or None in ups or None in held:
        return None
    held[me] = hand
    hidden = [c for ids in free.values() for c in ids]
    hidden.sort()  # the dict's order depends on what was seen; the deal must not
    draw_ok = any(d.code == DRAW for d in legal) or "draw_once_per_clear" not in (
        config.variants)
    places = [(s["finished"], s["seat"]) for s in seats if s["finished"] is not None]
    top = KIND[pile[-1]] if pile else 0
    colour_run, run_colour = 0, -1
    for c in reversed(pile):
        if colour_run and COLOUR[c] != run_colour:
            break
        run_colour = COLOUR[c]
        colour_run += 1
    return View(
        config=config, seat=me,
        known=tuple(h or () for h in held),
        hand_sizes=tuple(len(hand) if s == me else seats[s]["hand"] for s in range(n)),
        up=tuple(u or () for u in ups),
        down_slots=tuple(tuple(s["down"]) for s in seats),
        hidden=tuple(hidden), pile=pile, top=top, run=obs["pile_run"],
        colour_run=colour_run, run_colour=run_colour, out=out,
        direction=obs["direction"], turn=obs["turn"], pending=obs["pending_extra"],
        in_extra=obs["extra_action"], drawn=obs["drawn"], draw_ok=draw_ok,
        finished=tuple(s for _, s in sorted(places)),
        place=tuple(s["finished"] for s in seats),
        perm=tuple(obs["piles"]) if "piles" in obs else None)
