"""The 3UP 3DOWN state machine: the authoritative game state and its transitions.

Everything that affects what is legal and what happens lives in this file (as h11
keeps its whole state machine in one module).  The engine is pure: no I/O, no clock,
and no randomness except the ``random.Random`` built from the game's seed.

Use::

    game = Game(GameConfig(players=4), seed=7)
    while not game.over:
        for seat in game.to_decide():
            game.apply(seat, pick(game.legal(seat)))
    game.result()

Legality is checked in exactly one place, :meth:`Game.apply`: a decision not in the
seat's legal list raises :class:`IllegalDecision` naming the rule it breaks.

Events are plain tuples (cheap in the hot path); ``events.py`` gives them a text
form and filters them per seat.  Their shapes:

    ("deal", seat, cards6)                 private: the six cards dealt to choose from
    ("chosen", seat)                       the seat has made its 3UP choice
    ("reveal", seat, up_cards)             the seat's 3UP cards, public once all chose
    ("piles", perm)                        swap_piles: seat i now has seat perm[i]'s piles
    ("turn", number, seat)                 a turn starts
    ("extra", seat, left)                  an extra action starts; ``left`` still pending
    ("play", seat, src, cards, slot)       cards played (slot: the 3DOWN slot, else -1)
    ("fail", seat, slot, card, pile)       a 3DOWN card failed: card (private) + pile taken
    ("pickup", seat, cards)                the pile picked up
    ("clear", seat, how, n)                pile of n cards cleared; how: C, C+1, C+2, three
    ("reverse", direction)                 ones_reverse: the direction is now +1 / -1
    ("draw", seat, n, cards, why)          n cards drawn (cards private); why: refill,
                                           extra, decline
    ("colour", seat)                       four_of_a_colour: seat may swap
    ("swap", seat, up_card, hand_card)     four_of_a_colour: the swap made
    ("keep", seat)                         four_of_a_colour: the swap declined
    ("finish", seat, place)                the seat has no cards left
    ("end", how, places, points)           how: winner, played_out, turn_limit
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Literal, TypeGuard, get_args

from .cards import (
    CLEAR,
    COLOUR,
    KIND,
    KIND_GRANTS,
    KIND_TEXT,
    ORDER,
    POINTS,
    TEXT,
    Card,
    card_text,
    number_copies,
    sort_key,
)
from .config import CARDS_PER_PLAYER, GameConfig
from .decisions import (
    CHOOSE_UP,
    DECLINE,
    DECLINE_D,
    DOWN,
    DOWN_D,
    DOWNSRC,
    DRAW,
    DRAW_D,
    HAND,
    KEEP_D,
    PICKUP,
    PICKUP_D,
    PLAY,
    PLAYS,
    SWAP,
    UP,
    Decision,
    DecisionSyntaxError,
    parse_decision,
    play_cards,
    swap,
)
from .errors import ConfigError, IllegalDecision, NotYourTurn
from .events import filter_event as _filter_event
from .explain import explain, legal_now
from .observe import observation as _observation
from .phases import OVER, PLAYING, SETUP, SWAPPING
from .view import View

_ORDER_OF = ORDER.__getitem__  # display order (kind, colour, copy): a C-level sort key


_HAND_PLAYS = PLAYS[HAND]
_UP_PLAYS = PLAYS[UP]
_SPECIAL_KINDS = (11, 12, 13)
_COMBOS_6_3 = tuple(combinations(range(6), 3))
_NO_SHUFFLE = random.Random(0)  # the generator of a determinized game (never drawn from)


#: How a game ends: by the rules' own course (``winner``: a seat finished first,
#: the others are ranked by penalty points; ``played_out``: the ``play_out`` variant
#: played on until one seat was left; ``turn_limit``), or stopped from outside it
#: (``Stop``, RULES §5.4).
How = Literal["winner", "played_out", "turn_limit", "forfeits", "time_limit"]
HOWS: tuple[How, ...] = get_args(How)
#: How the referee stops a game (``Game.stop``): every seat still playing but one
#: has forfeited, or the game's wall-clock limit is over.
Stop = Literal["forfeits", "time_limit"]
STOPS: tuple[Stop, ...] = get_args(Stop)


def is_stop(how: object) -> TypeGuard[Stop]:
    """``how`` (read from a record, say) is one of STOPS."""
    return how in STOPS


@dataclass(frozen=True)
class GameEnd:
    """How the rules ended a game.  ``places[seat]`` is 1 for the winner; equal
    penalty points share a place (competition ranking, RULES §4).  The engine knows
    no bots: forfeits and faults are the referee's, in its ``GameResult``."""

    how: How
    places: tuple[int, ...]
    points: tuple[int, ...]
    finish_order: tuple[int, ...]
    turns: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "how": self.how,
            "places": list(self.places),
            "points": list(self.points),
            "finish_order": list(self.finish_order),
            "turns": self.turns,
        }


def competition_ranks(values: Sequence[int], start: int = 1) -> list[int]:
    """Standard competition ranking of ``values`` (smaller is better): 10, 10, 25 ->
    start, start, start + 2."""
    return [start + sum(1 for w in values if w < v) for v in values]


class Game:
    """One game of 3UP 3DOWN.  Mutable for speed; ``copy()`` gives an independent one."""

    __slots__ = (
        "config", "n", "seed", "rng", "deck", "first_player",
        "play_out", "may_decline", "ones_reverse", "four_colour", "for_others",
        "once_per_clear", "swap_piles", "turn_limit",
        "hands", "hand_count", "up", "down", "down_count", "dealt", "choices",
        "draw_pile", "pile", "top", "run", "colour_run", "run_colour", "out",
        "phase", "to_move", "direction", "turn", "pending", "in_extra", "drawn",
        "draw_ok", "granted", "finished", "place", "events", "_legal", "_result",
        "perm", "_setup_cache", "cleared_cache",
    )

    def __init__(
        self,
        config: GameConfig | None = None,
        seed: int = 0,
        *,
        deck: Sequence[Card] | None = None,
        first_player: int | None = None,
    ) -> None:
        """A game from ``config`` and ``seed``: the seed shuffles the deck, then draws
        the first player; ``swap_piles`` draws its permutation from a separate stream
        (``random.Random(f"swap_piles:{seed}")``).  With ``deck``
        (card ids in deal order, first card = top) the deck is used as given; with
        ``first_player`` the first player is not drawn."""
        config = config or GameConfig()
        n = self.n = config.players
        self.seed = seed
        self.rng = random.Random(seed)
        if deck is None:
            cards = config.deck_cards()
            self.rng.shuffle(cards)
        else:
            cards = list(deck)
            if len(set(cards)) != len(cards):
                raise ConfigError("the deck lists the same card twice")
        # Copies of one card are numbered in deal order, however the deck was given
        # (shuffled from the seed, or listed): a deck order fixes every id (RULES §2).
        cards = number_copies(cards)
        if deck is not None:
            if len(cards) < CARDS_PER_PLAYER * n:
                raise ConfigError(
                    f"a deck of {len(cards)} cards is too small for {n} players: it must hold at "
                    f"least {CARDS_PER_PLAYER * n} cards (RULES §1)"
                )
        self.deck: tuple[Card, ...] = tuple(cards)
        if first_player is None:
            first_player = self.rng.randrange(n)
        elif not (isinstance(first_player, int) and 0 <= first_player < n):
            raise ConfigError(f"the first player must be a seat from 0 to {n - 1}, not {first_player!r}")
        self.first_player = first_player

        self.set_rules(config)

        # RULES §2: deal one card at a time, clockwise from seat 0: three rounds of
        # 3DOWN cards (round r fills slot r), then six rounds of the six cards.
        it = iter(cards)
        self.down: list[list[Card | None]] = [[None, None, None] for _ in range(n)]
        for r in range(3):
            for s in range(n):
                self.down[s][r] = next(it)
        six: list[list[Card]] = [[] for _ in range(n)]
        for _ in range(6):
            for s in range(n):
                six[s].append(next(it))
        self.dealt: list[tuple[Card, ...]] = [tuple(sorted(x, key=sort_key)) for x in six]
        rest = list(it)
        rest.reverse()  # the draw pile's top is the end of the list
        self.draw_pile: list[Card] = rest

        self.down_count = [3] * n  # face-down cards left, by seat
        self.hands: list[dict[int, list[Card]]] = [{} for _ in range(n)]
        self.hand_count = [0] * n  # cards in hand, by seat (the sum over ``hands``)
        self.up: list[list[Card]] = [[] for _ in range(n)]
        self.choices: list[Decision | None] = [None] * n
        self.pile: list[Card] = []
        self.top = 0  # number on top of the pile; 0 = empty pile
        self.run = 0  # numbered cards of that number in a row at the top (RULES §3.5)
        self.colour_run = 0  # numbered cards of one colour in a row at the top (RULES §9.6)
        self.run_colour = -1  # the colour of that run (-1: none yet)
        self.out: list[Card] = []
        self.phase = SETUP
        self.to_move = -1
        self.direction = 1
        self.turn = 0
        self.pending = 0
        self.in_extra = False
        self.drawn = False
        self.draw_ok = False
        self.granted = False
        self.finished: list[int] = []
        self.place: list[int | None] = [None] * n
        self.perm: tuple[int, ...] | None = None
        self._setup_cache: list[list[Decision] | None] = [None] * n
        #: observe.py's cache of the cleared cards' texts: (how many, texts)
        self.cleared_cache: tuple[int, list[str]] | None = None
        self._legal: list[Decision] | None = None
        self._result: GameEnd | None = None
        self.events: list[tuple[Any, ...]] = [("deal", s, self.dealt[s]) for s in range(n)]

    # --- queries --------------------------------------------------------------------

    @property
    def over(self) -> bool:
        return self.phase == OVER

    def to_decide(self) -> tuple[int, ...]:
        """The seats that must decide now, in seat order: several at once during the
        3UP choice, else the seat to move; none when the game is over."""
        phase = self.phase
        if phase in (PLAYING, SWAPPING):
            return (self.to_move,)
        if phase == SETUP:
            return tuple(s for s in range(self.n) if self.choices[s] is None)
        return ()

    def legal(self, seat: int) -> list[Decision]:
        """Every legal decision of ``seat``, in a deterministic order (empty if the seat
        has nothing to decide).  The list must not be modified."""
        if seat == self.to_move:
            legal = self._legal
            if legal is None:
                if self.phase == OVER:
                    return []
                legal = self._legal = self._compute_legal()
            return legal
        if self.phase == SETUP and 0 <= seat < self.n and self.choices[seat] is None:
            return self._setup_legal(seat)
        return []

    def hand(self, seat: int) -> list[Card]:
        """The seat's hand, in display order."""
        hand = self.hands[seat]
        out: list[Card] = []
        for k in sorted(hand):
            out.extend(reversed(hand[k]))
        return out

    def points(self, seat: int) -> int:
        """Penalty points of the cards the seat holds (RULES §5)."""
        total = sum(POINTS[c] for lst in self.hands[seat].values() for c in lst)
        total += sum(POINTS[c] for c in self.up[seat])
        total += sum(POINTS[c] for c in self.down[seat] if c is not None)
        return total

    def result(self) -> GameEnd | None:
        return self._result

    def set_rules(self, config: GameConfig) -> None:
        """The configuration and the rule flags read from it (its variants, its turn
        limit): the one place they are set, for a new game and for a game built for
        a search (``referee.bots.search``), which may then change some."""
        self.config = config
        v = config.variants
        self.play_out = "play_out" in v
        self.may_decline = "may_decline" in v
        self.ones_reverse = "ones_reverse" in v
        self.four_colour = "four_of_a_colour" in v
        self.for_others = "choose_for_others" in v
        self.once_per_clear = "draw_once_per_clear" in v
        self.swap_piles = "swap_piles" in v
        self.turn_limit = config.turn_limit

    @classmethod
    def determinize(cls, view: View, order: Sequence[Card], *, play_out: bool | None = None,
                    turn_limit: int | None = None) -> Game:
        """A game ``view``'s seat could be in, its turn to move: the cards it cannot
        see (``view.hidden``) dealt in ``order`` (a permutation of them) into the
        places it cannot see into -- seat by seat, the rest of its hand (after the
        cards known to be there), then its 3DOWN slots -- and the rest into the draw
        pile.  ``play_out`` and ``turn_limit`` override the configuration's (a search
        may end its games sooner).  Such a game has no seed nor deck order, and its
        events start here.  Built without a shuffle: a search makes many."""
        n = view.config.players
        g = cls.__new__(cls)
        g.set_rules(view.config)
        if play_out is not None:
            g.play_out = play_out
        if turn_limit is not None:
            g.turn_limit = turn_limit
        g.n = n
        g.seed = 0
        g.rng = _NO_SHUFFLE  # a Game draws from it only when it is made (the shuffle)
        g.deck = ()
        g.first_player = 0
        g.hands = [{} for _ in range(n)]
        g.hand_count = [0] * n
        down: list[list[Card | None]] = []
        g.down = down
        g.down_count = []
        it = iter(order)
        known, sizes, slots_of = view.known, view.hand_sizes, view.down_slots
        for s in range(n):
            mine = known[s]
            g._take(s, [*mine, *[next(it) for _ in range(sizes[s] - len(mine))]])
            slots = slots_of[s]
            down.append([next(it) if i in slots else None for i in range(3)])
            g.down_count.append(len(slots))
        g.up = [list(u) for u in view.up]
        g.draw_pile = list(it)
        g.dealt = [()] * n
        g.choices = [None] * n
        g.pile = list(view.pile)
        g.top = view.top
        g.run = view.run
        g.colour_run, g.run_colour = view.colour_run, view.run_colour
        g.out = list(view.out)
        g.phase = PLAYING
        g.to_move = view.seat
        g.direction = view.direction
        g.turn = view.turn
        g.pending = view.pending
        g.in_extra = view.in_extra
        g.drawn = view.drawn
        g.draw_ok = view.draw_ok
        g.granted = False
        g.finished = list(view.finished)
        g.place = list(view.place)
        g.perm = view.perm
        g.events = []
        g._legal = None
        g._result = None
        g._setup_cache = [None] * n
        g.cleared_cache = None
        return g

    def observation(self, seat: int) -> dict[str, Any]:
        """What ``seat`` may know now (RULES §6); see ``observe.py``."""
        return _observation(self, seat)

    def events_for(self, seat: int | None, start: int = 0) -> list[tuple[Any, ...]]:
        """Events from index ``start`` as ``seat`` may see them (None: omniscient)."""
        return [_filter_event(e, seat) for e in self.events[start:]]

    def copy(self) -> Game:
        g = Game.__new__(Game)
        for name in Game.__slots__:
            setattr(g, name, getattr(self, name))
        g.rng = random.Random()
        g.rng.setstate(self.rng.getstate())
        g.hands = [{k: list(v) for k, v in h.items()} for h in self.hands]
        g.hand_count = list(self.hand_count)
        g.up = [list(x) for x in self.up]
        g.down = [list(x) for x in self.down]
        g.down_count = list(self.down_count)
        g.choices = list(self.choices)
        g.draw_pile = list(self.draw_pile)
        g.pile = list(self.pile)
        g.out = list(self.out)
        g.finished = list(self.finished)
        g.place = list(self.place)
        g.events = list(self.events)
        g._legal = None
        g._setup_cache = list(self._setup_cache)
        return g

    # --- legal decisions ------------------------------------------------------------

    def _setup_legal(self, seat: int) -> list[Decision]:
        cached = self._setup_cache[seat]
        if cached is not None:
            return cached
        dealt = self.dealt[seat]
        texts = [TEXT[c] for c in dealt]
        # Every choice of 3 of the 6 dealt cards, by position; built inline (not via
        # choose_up) because set-up is a tenth of a random game's cost.
        out = [
            Decision(CHOOSE_UP, f"3up {texts[i]} {texts[j]} {texts[k]}",
                     cards=(dealt[i], dealt[j], dealt[k]))
            for i, j, k in _COMBOS_6_3
        ]
        if len(set(texts)) < 6:
            # Two identical cards (the alternative deck): list each choice once.
            unique: dict[str, Decision] = {}
            for d in out:
                unique.setdefault(d.text, d)
            out = list(unique.values())
        self._setup_cache[seat] = out
        return out

    def _compute_legal(self, _plays: tuple[tuple[Decision, ...], ...] = _HAND_PLAYS) -> list[Decision]:
        if self.phase == SWAPPING:
            return self._swap_legal()
        s = self.to_move
        top = self.top
        if self.hand_count[s]:
            hand = self.hands[s]
            if self.four_colour:
                legal: list[Decision] = []
                self._named_plays(legal, HAND, [hand.get(k, []) for k in range(14)], top)
            elif top:
                # Specials' entries in PLAYS hold one decision, so the slice lists one.
                legal = []
                for k in sorted(hand):
                    if k >= top:
                        legal += _plays[k][: len(hand[k])]
            else:
                legal = []
                for k in sorted(hand):
                    legal += _plays[k][: len(hand[k])]
            if self.in_extra:
                # RULES §3.6: the optional draw before an extra action.
                if self.draw_ok and not self.drawn and self.draw_pile:
                    if not legal:
                        return [DRAW_D, PICKUP_D]
                    legal.append(DRAW_D)
                    return legal
            elif legal and self.may_decline and self.draw_pile:
                legal.append(DECLINE_D)  # RULES §9.2
            return legal or [PICKUP_D]  # RULES §3.4
        legal = []
        if self.draw_pile:
            # RULES §3.6: hand empty, draw pile not: the draw is forced.
            return [DRAW_D]
        up = self.up[s]
        if up:
            groups: list[list[Card]] = [[] for _ in range(14)]
            for c in up:
                groups[KIND[c]].append(c)
            for g in groups:
                if len(g) > 1:
                    g.sort(key=_ORDER_OF, reverse=True)
            if self.four_colour:
                self._named_plays(legal, UP, groups, top)
            else:
                for k in range(top or 1, 14):
                    if groups[k]:
                        legal += _UP_PLAYS[k][: len(groups[k]) if k < CLEAR else 1]
            if not legal:
                legal.append(PICKUP_D)
            return legal
        down = self.down[s]
        return [DOWN_D[i] for i in range(3) if down[i] is not None]

    @staticmethod
    def _named_plays(legal: list[Decision], src: int, groups: list[list[Card]], top: int) -> None:
        """four_of_a_colour (RULES §9.6): plays name their cards, since the order on
        the pile matters.  Listed: every set of copies of a number, with each choice
        of the card that goes on top (the others in colour order); distinct texts."""
        for k in range(top or 1, 14):
            lst = groups[k]
            if not lst:
                continue
            if k >= CLEAR:
                legal.append(PLAYS[src][k][0])
                continue
            cards = sorted(lst, key=sort_key)
            seen: set[str] = set()
            for size in range(1, len(cards) + 1):
                for combo in combinations(cards, size):
                    for last in range(size):
                        order = combo[:last] + combo[last + 1 :] + (combo[last],)
                        d = play_cards(src, order)
                        if d.text not in seen:
                            seen.add(d.text)
                            legal.append(d)

    def _swap_legal(self) -> list[Decision]:
        s = self.to_move
        out: list[Decision] = []
        seen: set[str] = set()
        for u in sorted(self.up[s], key=sort_key):
            for h in self.hand(s):
                d = swap(u, h)
                if d.text not in seen:
                    seen.add(d.text)
                    out.append(d)
        out.append(KEEP_D)
        return out

    # --- applying decisions -----------------------------------------------------------

    def apply(self, seat: int, decision: Decision | str) -> Decision:
        """Apply ``seat``'s decision (a Decision or its text form), after checking it
        is in the seat's legal list.  Returns the decision applied (the listed one)."""
        phase = self.phase
        if phase == PLAYING:
            if seat != self.to_move:
                raise NotYourTurn(self._not_your_turn(seat), "RULES §8")
            legal = self._legal
            if legal is None:
                legal = self._legal = self._compute_legal()
            if decision not in legal:
                decision = self._match(seat, decision, legal)
            self._legal = None
            code = decision.code
            if code == PLAY:
                if decision.src == HAND and not decision.cards:
                    # The common case, inline: a play written by number and count.
                    kind = decision.kind
                    hand = self.hands[seat]
                    lst = hand[kind]
                    c = decision.count
                    if c == 1:
                        cards: tuple[Card, ...] = (lst.pop(),)
                    else:
                        taken = lst[-c:]
                        del lst[-c:]
                        taken.reverse()
                        cards = tuple(taken)
                    if not lst:
                        del hand[kind]
                    self.hand_count[seat] -= c
                    self.events.append(("play", seat, HAND, cards, -1))
                    self._land(seat, cards, kind)
                else:
                    self._play(seat, decision)
            elif code == PICKUP:
                self._pickup(seat)
            elif code == DRAW:
                card = self.draw_pile.pop()
                self._take(seat, (card,))
                self.drawn = True
                self.events.append(("draw", seat, 1, (card,), "extra"))
            elif code == DOWN:
                self._turn_down(seat, decision.slot)
            elif code == DECLINE:
                card = self.draw_pile.pop()
                self._take(seat, (card,))
                self.events.append(("draw", seat, 1, (card,), "decline"))
                self._end_turn(seat, False)
            return decision
        if phase == SETUP:
            return self._choose(seat, decision)
        if phase == SWAPPING:
            if seat != self.to_move:
                raise NotYourTurn(self._not_your_turn(seat), "RULES §8")
            legal = self._legal
            if legal is None:
                legal = self._legal = self._compute_legal()
            if decision not in legal:
                decision = self._match(seat, decision, legal)
            self._legal = None
            if decision.code == SWAP:
                self._swap(seat, decision.cards[0], decision.cards[1])
            else:
                self.events.append(("keep", seat))
            self.phase = PLAYING
            self._continue(seat, self.granted)
            return decision
        raise IllegalDecision(f"seat {seat} cannot decide: the game is over")

    def _match(self, seat: int, decision: Decision | str, legal: list[Decision]) -> Decision:
        """Slow path of the legality check: a decision given as text, or equal in text
        to a listed one, is the listed one; anything else is illegal, and we say why."""
        if isinstance(decision, str):
            try:
                parsed = parse_decision(decision, four_of_a_colour=self.four_colour)
            except DecisionSyntaxError as e:
                # RULES §8: the message lists (the start of) what would have been legal.
                raise IllegalDecision(f"seat {seat}: {e}; {legal_now(legal)}",
                                      "decision syntax") from None
        elif isinstance(decision, Decision):
            parsed = decision
        else:
            shown = repr(decision)  # an in-process bot's answer: any object at all
            if len(shown) > 80:
                shown = shown[:60] + "..."
            raise IllegalDecision(f"seat {seat}: {shown} is not a decision; "
                                  f"{legal_now(legal)}", "decision syntax")
        for d in legal:
            if d.text == parsed.text:
                return d
        if parsed.code == CHOOSE_UP or (parsed.code == PLAY and parsed.cards):
            same = self._same_cards(parsed, legal)
            if same is not None:
                return same
        message, rule = explain(self, seat, parsed)
        raise IllegalDecision(message, rule)

    @staticmethod
    def _same_cards(parsed: Decision, legal: list[Decision]) -> Decision | None:
        """A 3UP choice, or a play naming its cards, listed in another order than the
        engine lists it.  The three cards chosen are a set (RULES §2.3); a play goes on
        the pile in the order the seat lists it (RULES §9.6 ruling), so the listed play
        with the same cards is returned re-ordered as the seat wrote it."""
        want = sorted(card_text(c) for c in parsed.cards)
        for d in legal:
            if (d.code != parsed.code or d.src != parsed.src
                    or sorted(card_text(c) for c in d.cards) != want):
                continue
            if d.code == CHOOSE_UP:
                return d
            pool = list(d.cards)
            ordered: list[Card] = []
            for c in parsed.cards:
                i = next(i for i, x in enumerate(pool) if card_text(x) == card_text(c))
                ordered.append(pool.pop(i))
            return play_cards(d.src, tuple(ordered))
        return None

    def _not_your_turn(self, seat: int) -> str:
        if not 0 <= seat < self.n:
            return f"there is no seat {seat} in a {self.n}-player game"
        if self.place[seat] is not None:
            return f"seat {seat} has finished and has nothing to decide"
        return f"it is seat {self.to_move}'s turn, not seat {seat}'s"

    def _take(self, seat: int, cards: Sequence[Card]) -> None:
        """Cards into the seat's hand.  Each number's list is kept in descending
        display order (colour, then copy), so that its end holds the copies played
        first (colour order).  Not by id: an id's copy number depends on where the
        deck's other copies lie, which the seat may not know (RULES §6)."""
        hand = self.hands[seat]
        unsorted = None
        for c in cards:
            k = KIND[c]
            lst = hand.get(k)
            if lst is None:
                hand[k] = [c]
            else:
                lst.append(c)
                if unsorted is None:
                    unsorted = [lst]
                else:
                    unsorted.append(lst)
        if unsorted is not None:
            for lst in unsorted:
                lst.sort(key=_ORDER_OF, reverse=True)
        self.hand_count[seat] += len(cards)

    def _choose(self, seat: int, decision: Decision | str) -> Decision:
        if not 0 <= seat < self.n:
            raise NotYourTurn(f"there is no seat {seat} in a {self.n}-player game", "RULES §2")
        if self.choices[seat] is not None:
            raise NotYourTurn(f"seat {seat} has already chosen its 3UP cards", "RULES §2.3")
        legal = self._setup_legal(seat)
        if decision not in legal:
            decision = self._match(seat, decision, legal)
        self.choices[seat] = decision
        self.events.append(("chosen", seat))
        if all(c is not None for c in self.choices):
            self._reveal()
        return decision

    def _reveal(self) -> None:
        n = self.n
        for s in range(n):
            choice = self.choices[s]
            assert choice is not None
            chosen = list(choice.cards)  # the listed decision's own card ids
            rest = list(self.dealt[s])
            for c in chosen:
                rest.remove(c)
            target = (s + 1) % n if self.for_others else s  # RULES §9.7
            self.up[target] = sorted(chosen, key=sort_key)
            self._take(s, rest)
        for s in range(n):
            self.events.append(("reveal", s, tuple(self.up[s])))
        if self.swap_piles:
            # RULES §9.5: the table piles (3UP over 3DOWN, slots kept) change hands.
            # Drawn from its own stream of the seed, so that a game re-run from its
            # recorded deck order (no shuffle) with the same seed swaps the same way.
            perm = list(range(n))
            random.Random(f"swap_piles:{self.seed}").shuffle(perm)
            self.perm = tuple(perm)
            self.up = [self.up[perm[i]] for i in range(n)]
            self.down = [self.down[perm[i]] for i in range(n)]
            self.down_count = [self.down_count[perm[i]] for i in range(n)]
            self.events.append(("piles", self.perm))
        self.phase = PLAYING
        self.turn = 1
        self.to_move = self.first_player
        self.events.append(("turn", 1, self.first_player))

    def _play(self, s: int, d: Decision) -> None:
        kind = d.kind
        if d.src == HAND:
            hand = self.hands[s]
            lst = hand[kind]
            if d.cards:
                cards: Sequence[Card] = d.cards
                for c in cards:
                    lst.remove(c)
            elif d.count == 1:
                cards = (lst.pop(),)
            else:
                c = d.count
                cards = lst[-c:]
                del lst[-c:]
                cards.reverse()
            if not lst:
                del hand[kind]
            self.hand_count[s] -= len(cards)
        else:
            up = self.up[s]
            if d.cards:
                # Named cards (four_of_a_colour): of identical copies, the first in the
                # 3UP list leaves, as a play by count takes the first of a list
                # (protocol/RULES.md §10.4): never the one whose deck position (its copy
                # number) says so.  After a swap the copies need not be adjacent.
                named: list[Card] = []
                for x in d.cards:
                    text = card_text(x)
                    named.append(next(c for c in up if card_text(c) == text and c not in named))
                cards = named
            else:
                cards = sorted((c for c in up if KIND[c] == kind), key=sort_key)[: d.count]
            for c in cards:
                up.remove(c)
        cards = tuple(cards)
        self.events.append(("play", s, d.src, cards, -1))
        self._land(s, cards, kind)

    def _turn_down(self, s: int, slot: int) -> None:
        # RULES §3.3: turn one 3DOWN card, blind.
        down = self.down[s]
        card = down[slot]
        assert card is not None
        down[slot] = None
        self.down_count[s] -= 1
        kind = KIND[card]
        if kind >= CLEAR or kind >= self.top:
            self.events.append(("play", s, DOWNSRC, (card,), slot))
            self._land(s, (card,), kind)
            return
        pile = tuple(self.pile)
        self.pile.clear()
        self.top = self.run = self.colour_run = 0
        self.events.append(("fail", s, slot, card, pile))
        self._take(s, pile + (card,))
        self._end_turn(s, False)

    def _land(self, s: int, cards: tuple[Card, ...], kind: int) -> None:
        """Cards have been played: their effect on the pile (RULES §3.5, §3.6, §9.3,
        §9.6), then what comes next.  The common path (a numbered play that neither
        finishes the player nor grants anything) is written out inline: this is the
        engine's hottest code."""
        pile = self.pile
        pile.extend(cards)
        if kind >= CLEAR:
            self._clear(s, KIND_TEXT[kind])
            self.pending += KIND_GRANTS[kind]
            self._after(s, kind > CLEAR)
            return
        if kind == self.top:
            self.run += len(cards)
        else:
            self.top = kind
            self.run = len(cards)
        if kind == 1 and self.ones_reverse:
            self.direction = -self.direction
            self.events.append(("reverse", self.direction))
        if self.run >= 3:
            self._clear(s, "three")
        elif self.four_colour:
            for c in cards:
                if self.colour_run and COLOUR[c] == self.run_colour:
                    self.colour_run += 1
                else:
                    self.run_colour = COLOUR[c]
                    self.colour_run = 1
            if (
                self.colour_run >= 4
                and self.up[s]
                and self.hand_count[s]
                and not self._is_finished(s)
            ):
                self.phase = SWAPPING
                self.granted = False
                self.events.append(("colour", s))
                return
        hand_count = self.hand_count[s]
        if self.pending or not (hand_count or self.up[s] or self.down_count[s]):
            self._after(s, False)
            return
        # End of turn (RULES §3.7, §3.8), inline.
        self.in_extra = False
        events = self.events
        draw = self.draw_pile
        if hand_count < 3 and draw:
            if hand_count == 2 or len(draw) == 1:
                c = draw.pop()
                k = KIND[c]
                hand = self.hands[s]
                lst = hand.get(k)
                if lst is None:
                    hand[k] = [c]
                else:
                    lst.append(c)
                    lst.sort(key=_ORDER_OF, reverse=True)
                self.hand_count[s] = hand_count + 1
                events.append(("draw", s, 1, (c,), "refill"))
            else:
                got = [draw.pop() for _ in range(min(3 - hand_count, len(draw)))]
                self._take(s, got)
                events.append(("draw", s, len(got), tuple(got), "refill"))
        if self.turn >= self.turn_limit:
            self._end("turn_limit")
            return
        n = self.n
        place = self.place
        step = self.direction
        nxt = (s + step) % n
        while place[nxt] is not None:
            nxt = (nxt + step) % n
        self.turn += 1
        self.to_move = nxt
        events.append(("turn", self.turn, nxt))

    def _clear(self, s: int, how: str) -> None:
        pile = self.pile
        self.events.append(("clear", s, how, len(pile)))
        self.out.extend(pile)
        pile.clear()
        self.top = self.run = self.colour_run = 0

    def _is_finished(self, s: int) -> bool:
        return not self.hand_count[s] and not self.up[s] and not self.down_count[s]

    def _after(self, s: int, granted: bool) -> None:
        if not self.hand_count[s] and not self.up[s] and not self.down_count[s]:
            self._finish(s)
            return
        self._continue(s, granted)

    def _continue(self, s: int, granted: bool) -> None:
        if self.pending:
            # RULES §3.6: the next action is an extra action.
            self.pending -= 1
            self.in_extra = True
            self.drawn = False
            self.draw_ok = granted or not self.once_per_clear
            self.events.append(("extra", s, self.pending))
        else:
            self._end_turn(s, True)

    def _end_turn(self, s: int, played: bool) -> None:
        self.in_extra = False
        self.pending = 0
        if played:
            # RULES §3.7: draw up to three cards.
            need = 3 - self.hand_count[s]
            draw = self.draw_pile
            if need > 0 and draw:
                got = [draw.pop() for _ in range(min(need, len(draw)))]
                self._take(s, got)
                self.events.append(("draw", s, len(got), tuple(got), "refill"))
        if self.turn >= self.turn_limit:
            self._end("turn_limit")
            return
        self._next_turn(s)

    def _next_turn(self, s: int) -> None:
        n = self.n
        place = self.place
        step = self.direction
        nxt = (s + step) % n
        while place[nxt] is not None:
            nxt = (nxt + step) % n
        self.turn += 1
        self.to_move = nxt
        self.events.append(("turn", self.turn, nxt))

    def _pickup(self, s: int) -> None:
        # RULES §3.4: the whole pile into the hand; the turn ends, no draw.
        cards = tuple(self.pile)
        self.pile.clear()
        self.top = self.run = self.colour_run = 0
        self.events.append(("pickup", s, cards))
        self._take(s, cards)
        # End of turn without a draw (RULES §3.4), inline: pick-ups are frequent.
        self.in_extra = False
        self.pending = 0
        if self.turn >= self.turn_limit:
            self._end("turn_limit")
            return
        self._next_turn(s)

    def _swap(self, s: int, up_card: Card, hand_card: Card) -> None:
        # RULES §9.6: public swap of a 3UP card with a hand card.
        up = self.up[s]
        up_card = next(c for c in up if card_text(c) == card_text(up_card))
        lst = self.hands[s][KIND[hand_card]]
        hand_card = next(c for c in lst if card_text(c) == card_text(hand_card))
        up[up.index(up_card)] = hand_card
        lst.remove(hand_card)
        if not lst:
            del self.hands[s][KIND[hand_card]]
        self.hand_count[s] -= 1
        self._take(s, (up_card,))
        self.events.append(("swap", s, up_card, hand_card))

    def _finish(self, s: int) -> None:
        # RULES §4: no cards left; pending extra actions lapse.
        self.pending = 0
        self.in_extra = False
        place = len(self.finished) + 1
        self.finished.append(s)
        self.place[s] = place
        self.events.append(("finish", s, place))
        if not self.play_out:
            self._end("winner")
            return
        left = [x for x in range(self.n) if self.place[x] is None]
        if len(left) == 1:
            self._end("played_out")
            return
        if self.turn >= self.turn_limit:
            self._end("turn_limit")
            return
        self._next_turn(s)

    def stop(self, how: Stop) -> None:
        """End the game now, as the turn limit does (RULES §5.4): the finished seats
        keep their places, the others are ranked by penalty points.  ``how`` is one
        of STOPS.  The referee decides when (a rules-engine cannot know who forfeited,
        or the time); a record says so in its result, and a re-run stops there too."""
        if how not in STOPS:
            raise ValueError(f"a game is stopped by {' or '.join(STOPS)}, not {how!r}")
        if self.phase == OVER:
            raise ValueError("the game is over already")
        self._end(how)

    def _end(self, how: How) -> None:
        n = self.n
        points = tuple(self.points(s) for s in range(n))
        places = list(self.place)
        rest = [s for s in range(n) if places[s] is None]
        ranks = competition_ranks([points[s] for s in rest], start=len(self.finished) + 1)
        for s, r in zip(rest, ranks, strict=True):
            places[s] = r
        final = tuple(p for p in places if p is not None)
        self.phase = OVER
        self.to_move = -1
        self._legal = None
        self._result = GameEnd(how, final, points, tuple(self.finished), self.turn)
        self.events.append(("end", how, final, points))
