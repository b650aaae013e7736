"""What a value function may read of a game, and the chance events' possible outcomes.

Owns two small, pure pieces for luck-adjusted scores (``referee.play.luck``):

* ``summaries(game)`` and ``features(...)``: numbers describing each seat's position
  (cards left in each zone, their ranks, Clears held, pile size, whose turn, ...).
  They read only what some seat has seen -- hands, 3UP cards, the pile, counts --
  and never a card's colour, the draw pile's order or a 3DOWN card: two states that
  differ only in cards no one has seen, or in colours, have the same features.  That
  is what lets the estimator group a chance event's possible outcomes by card kind
  (``referee.play.luck``).
* ``unseen(game)``: the cards no one has seen -- the draw pile and every 3DOWN card
  still face down -- and ``with_down(game, seat, slot, card)``, a copy of the game
  in which ``card`` lies in that 3DOWN slot (swapped with wherever it was): the
  state an alternative outcome of turning that slot would have started from.
"""

from __future__ import annotations

from collections.abc import Sequence

from .cards import CLEAR, KIND, KIND_POINTS, KIND_TEXT, Card
from .state import Game

#: The names of ``features``' entries, in order.
FEATURES = (
    "bias", "hand", "up", "down", "hand_rank", "hand_low", "hand_clear", "hand_clear_plus",
    "up_rank", "up_special", "points", "to_move", "to_move_x_pile", "pile", "draw_pile",
    "others_cards", "others_min_cards", "others_specials", "finished", "cards_x_no_draw",
    "hand_x_no_draw", "to_move_x_below_top", "lead",
    *(f"hand_{k}" for k in KIND_TEXT[1:]),
)

#: One seat's summary: (place or 0, hand, up, down, hand rank sum, hand cards 1..4,
#: hand C, hand C+1/C+2, up rank sum, up specials, penalty points, hand numbers below
#: top), then the hand's count of each kind, 1 to C+2.
Summary = tuple[int, ...]


def hand_summary(kinds: Sequence[int], top: int) -> tuple[int, ...]:
    """(cards, rank sum, cards 1..4, C, C+1/C+2, points, numbers below ``top``, then
    the count of each kind 1..13) of a hand given by its cards' kinds."""
    rank = low = c = cp = pts = below = 0
    per = [0] * 14
    for k in kinds:
        per[k] += 1
        pts += KIND_POINTS[k]
        if k < CLEAR:
            rank += k
            low += k <= 4
            below += k < top
        elif k == CLEAR:
            c += 1
        else:
            cp += 1
    return (len(kinds), rank, low, c, cp, pts, below, *per[1:])


def hand_kinds(game: Game, seat: int) -> list[int]:
    """The kinds of the cards in the seat's hand."""
    return [k for k, lst in game.hands[seat].items() for _ in lst]


def summary(game: Game, seat: int, kinds: Sequence[int] | None = None) -> Summary:
    """The seat's summary; ``kinds``: its hand's kinds, if not the game's."""
    return summaries_of_hands(game, seat, [hand_kinds(game, seat) if kinds is None
                                           else kinds])[0]


def summaries_of_hands(game: Game, seat: int, hands: Sequence[Sequence[int]]) -> list[Summary]:
    """``summary(game, seat, kinds)`` for each ``kinds`` of ``hands`` (a draw's
    outcomes: the same table cards, another hand), the table cards' part summed once."""
    up = game.up[seat]
    up_rank = sum(KIND[c] for c in up if KIND[c] < CLEAR)
    up_special = sum(1 for c in up if KIND[c] >= CLEAR)
    down = game.down_count[seat]
    up_pts = sum(KIND_POINTS[KIND[c]] for c in up)
    place = game.place[seat] or 0
    n_up = len(up)
    top = game.top
    out = []
    for kinds in hands:
        h = hand_summary(kinds, top)
        # 3DOWN cards are unseen: count them at a deck's mean worth, not their own.
        out.append((place, h[0], n_up, down, h[1], h[2], h[3], h[4], up_rank,
                    up_special, h[5] + up_pts + 6 * down, h[6], *h[7:]))
    return out


def summaries(game: Game) -> list[Summary]:
    return [summary(game, s) for s in range(game.n)]


def features(game: Game, sums: Sequence[Summary], seat: int) -> list[float]:
    """The feature vector (``FEATURES``) of ``seat`` from every seat's summary."""
    me = sums[seat]
    draw = len(game.draw_pile)
    pile = len(game.pile)
    mover = 1.0 if game.to_move == seat else 0.0
    no_draw = 1.0 if draw == 0 else 0.0
    mine = me[1] + me[2] + me[3]
    others = [s[1] + s[2] + s[3] for i, s in enumerate(sums) if i != seat and not s[0]]
    specials = [s[6] + s[7] + s[9] for i, s in enumerate(sums) if i != seat and not s[0]]
    o_mean = sum(others) / len(others) if others else 0.0
    o_min = float(min(others)) if others else 0.0
    return [
        1.0, me[1], me[2], me[3], me[4] / 10, me[5], me[6], me[7], me[8] / 10, me[9],
        me[10] / 10, mover, mover * pile, pile, draw / 10, o_mean, o_min,
        sum(specials) / len(specials) if specials else 0.0,
        float(sum(1 for s in sums if s[0])), mine * no_draw, me[1] * no_draw,
        mover * me[11], o_min - mine, *me[12:],
    ]


def unseen(game: Game) -> list[Card]:
    """The cards no one has seen: the draw pile and the 3DOWN cards still face down."""
    out = list(game.draw_pile)
    for slots in game.down:
        out.extend(c for c in slots if c is not None)
    return out


def with_down(game: Game, seat: int, slot: int, card: Card) -> Game:
    """A copy of ``game`` in which ``card`` (an unseen card) lies in ``seat``'s 3DOWN
    ``slot``, and the card that lay there lies where ``card`` was (the draw pile or
    another 3DOWN slot)."""
    g = game.copy()
    old = g.down[seat][slot]
    if old == card:
        return g
    for s, slots in enumerate(g.down):
        for i, c in enumerate(slots):
            if c == card:
                g.down[s][i] = old
                g.down[seat][slot] = card
                return g
    i = g.draw_pile.index(card)
    assert old is not None, "the slot was turned already"
    g.draw_pile[i] = old
    g.down[seat][slot] = card
    return g


def with_drawn(game: Game, seat: int, card: Card, alt: Card) -> Game:
    """A copy of ``game`` in which ``seat`` drew ``alt`` (an unseen card) instead of
    ``card`` (a card in its hand): ``alt`` in the hand, and ``card`` where ``alt`` lay
    (the draw pile or a 3DOWN slot) -- the state an alternative outcome of that draw
    would have led to."""
    g = game.copy()
    g._legal = None
    hand = g.hands[seat]
    lst = hand[KIND[card]]
    lst.remove(card)
    if not lst:
        del hand[KIND[card]]
    g.hand_count[seat] -= 1
    g._take(seat, [alt])
    for slots in g.down:
        for i, c in enumerate(slots):
            if c == alt:
                slots[i] = card
                return g
    g.draw_pile[g.draw_pile.index(alt)] = card
    return g


def reshuffled(game: Game, order: Sequence[Card]) -> Game:
    """A copy of ``game`` (without its event log) in which the unseen cards
    (``unseen``: the draw pile, then the 3DOWN slots still face down, seat by seat)
    are ``order``, dealt into those places in that order."""
    events = game.events
    game.events = []
    try:
        g = game.copy()
    finally:
        game.events = events
    it = iter(order)
    g.draw_pile = [next(it) for _ in g.draw_pile]
    for slots in g.down:
        for i, c in enumerate(slots):
            if c is not None:
                slots[i] = next(it)
    return g
