"""An independent oracle of 3UP 3DOWN, written from the rules text alone.

Sources: /work/shared/RULES.md (the project's rule set, cited as RULES §n) and
protocol/RULES.md (the rules as the referee enforces them, with the text forms of
cards, decisions, events and the observation; cited as P§n).  It was written without
reading the engine (referee/game/), to be a differential check of it: simple,
unoptimised, one obvious step per rule.  Clarity over speed.

What it does not do (things the rules leave to the referee's seeded randomness, which
the oracle takes as given instead): shuffling (the oracle deals a given deck order),
drawing the first player, and drawing the `swap_piles` permutation.

Cards are their text form (`7g`, `C+1o`); identical copies of the alternative deck are
identical strings, "identical for every purpose" (P§2).
"""

from __future__ import annotations

import itertools
from collections import Counter
from dataclasses import dataclass, field

COLOURS = ["g", "r", "b", "y", "o", "p", "k"]  # RULES §1, in this order
KINDS = ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "C", "C+1", "C+2"]  # P§1
SPECIALS = ["C", "C+1", "C+2"]
GRANTS = {"C": 0, "C+1": 1, "C+2": 2}  # RULES §3.6
SPECIAL_POINTS = {"C": 15, "C+1": 20, "C+2": 25}  # RULES §5

VARIANTS = [
    "play_out",
    "may_decline",
    "ones_reverse",
    "match_scoring",
    "swap_piles",
    "four_of_a_colour",
    "choose_for_others",
    "draw_once_per_clear",
]


class OracleError(Exception):
    """A configuration or a decision the rules refuse."""


# --- cards -----------------------------------------------------------------------


def kind(card: str) -> str:
    return card[:-1]


def colour(card: str) -> str:
    return card[-1]


def is_special(card: str) -> bool:
    return kind(card) in SPECIALS


def number(card: str) -> int:
    """The number of a numbered card."""
    assert not is_special(card), card
    return int(kind(card))


def display_key(card: str) -> tuple[int, int]:
    """P§1: by kind (1 … 10, C, C+1, C+2), then by colour in the list order."""
    return (KINDS.index(kind(card)), COLOURS.index(colour(card)))


def display_sorted(cards: list[str]) -> list[str]:
    return sorted(cards, key=display_key)


def points(card: str) -> int:
    """RULES §5."""
    if is_special(card):
        return SPECIAL_POINTS[kind(card)]
    return number(card)


def is_card(text: str) -> bool:
    if len(text) < 2:
        return False
    return kind(text) in KINDS and colour(text) in COLOURS


# --- decks -----------------------------------------------------------------------


def build_deck(deck: str = "standard", colours: int | None = None) -> list[str]:
    """The deck's cards (in a fixed order; the game shuffles it). P§2."""
    if deck == "standard":
        k = 7 if colours is None else colours
        if not 1 <= k <= 7:
            raise OracleError(f"colours must be 1 to 7, not {k}")
        cards = []
        for c in COLOURS[:k]:
            for n in range(1, 11):
                cards.append(f"{n}{c}")
            cards.append(f"C{c}")
            cards.append("C+2g" if c == "g" else f"C+1{c}")
        return cards
    if deck == "alternative":
        k = 3 if colours is None else colours
        if not 1 <= k <= 7:
            raise OracleError(f"colours must be 1 to 7, not {k}")
        cards = []
        for c in COLOURS[:k]:
            for _copy in range(2):
                for n in range(1, 11):
                    cards.append(f"{n}{c}")
                cards.append(f"C{c}")
                cards.append(f"C+1{c}")
        cards += ["C+2g", "C+2g"]
        return cards
    raise OracleError(f"unknown deck {deck!r}")


# --- configuration ---------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    players: int = 2
    variants: frozenset[str] = frozenset()
    colours: int | None = None
    deck: str = "standard"
    turn_limit: int = 1000

    def has(self, variant: str) -> bool:
        return variant in self.variants


def check_config(config: Config) -> None:
    if not 2 <= config.players <= 6:
        raise OracleError("2 to 6 players (RULES §2)")
    for v in config.variants:
        if v not in VARIANTS:
            raise OracleError(f"unknown variant {v!r}")
    if config.turn_limit < 1:
        raise OracleError("turn_limit must be at least 1")


def check_deck_order(config: Config, deck_order: list[str]) -> None:
    """P§2: at least 9 cards per player; the same text at most 4 times."""
    for card in deck_order:
        if not is_card(card):
            raise OracleError(f"not a card: {card!r}")
    if len(deck_order) < 9 * config.players:
        raise OracleError("a deck must hold at least 9 cards per player (RULES §1)")
    for card, count in Counter(deck_order).items():
        if count > 4:
            raise OracleError(f"{card} appears {count} times")


# --- per-seat state --------------------------------------------------------------


@dataclass
class Seat:
    hand: list[str] = field(default_factory=list)  # always kept in display order
    up: list[str] = field(default_factory=list)
    down: list[str | None] = field(default_factory=lambda: [None, None, None])
    dealt: list[str] = field(default_factory=list)
    chosen: bool = False
    choice: list[str] = field(default_factory=list)
    place: int | None = None  # once finished

    def holds_cards(self) -> bool:
        return bool(self.hand) or bool(self.up) or any(c is not None for c in self.down)

    def down_slots(self) -> list[int]:
        return [i for i, c in enumerate(self.down) if c is not None]

    def penalty(self) -> int:
        held = self.hand + self.up + [c for c in self.down if c is not None]
        return sum(points(c) for c in held)


@dataclass
class Event:
    """One event; `hidden` is the text every seat but `owner` sees (None: public)."""

    text: str
    owner: int | None = None
    hidden: str | None = None

    def seen_by(self, seat: int) -> str:
        if self.hidden is None or seat == self.owner:
            return self.text
        return self.hidden


# --- the game --------------------------------------------------------------------


class Game:
    """One game, dealt from a given deck order.

    `first` is the seat that plays turn 1 (RULES §2: drawn from the seed by the
    referee); `piles` is the `swap_piles` permutation (seat i gets seat piles[i]'s
    table piles), drawn from the seed by the referee: needed under that variant by
    the reveal (it may be set as `perm` until then).
    """

    def __init__(
        self,
        config: Config,
        deck_order: list[str],
        first: int,
        piles: list[int] | None = None,
    ) -> None:
        check_config(config)
        check_deck_order(config, deck_order)
        n = config.players
        if not 0 <= first < n:
            raise OracleError("the first player must be a seat")
        if piles is not None and sorted(piles) != list(range(n)):
            raise OracleError("piles must be a permutation of the seats")
        self.config = config
        self.n = n
        self.deck_order = list(deck_order)
        self.first = first
        self.perm = list(piles) if piles is not None else None
        self.seats = [Seat() for _ in range(n)]
        self.events: list[Event] = []

        # RULES §2 (Ruling, dealing): three rounds of 3DOWN cards, round r = slot r,
        # then six rounds of the six cards, always starting with seat 0.
        deck = list(deck_order)
        pos = 0
        for r in range(3):
            for s in range(n):
                self.seats[s].down[r] = deck[pos]
                pos += 1
        six: list[list[str]] = [[] for _ in range(n)]
        for _r in range(6):
            for s in range(n):
                six[s].append(deck[pos])
                pos += 1
        self.draw_pile = deck[pos:]  # first = top
        for s in range(n):
            self.seats[s].dealt = display_sorted(six[s])
            self.emit(
                f"deal {s} " + " ".join(self.seats[s].dealt), owner=s, hidden=f"deal {s} ?"
            )

        self.pile: list[str] = []  # bottom to top
        self.cleared: list[str] = []
        self.phase = "setup"
        self.turn = 0
        self.to_move: int | None = None
        self.direction = 1
        self.extra_action = False
        self.pending_extra = 0
        self.drawn = False
        self.last_played: str | None = None  # the card on top of the last play
        self.finish_order: list[int] = []
        self.end_how: str | None = None
        self.places: list[int] | None = None
        self.points: list[int] | None = None

    # --- helpers -------------------------------------------------------------

    def emit(self, text: str, owner: int | None = None, hidden: str | None = None) -> None:
        self.events.append(Event(text, owner, hidden))

    def events_seen_by(self, seat: int) -> list[str]:
        return [e.seen_by(seat) for e in self.events]

    def top_number(self) -> int | None:
        """The number on top of the pile (the pile only ever holds numbered cards)."""
        if not self.pile:
            return None
        return number(self.pile[-1])

    def pile_run(self) -> int:
        """P§12: numbered cards of the top number in a row at the top."""
        if not self.pile:
            return 0
        top = number(self.pile[-1])
        run = 0
        for card in reversed(self.pile):
            if number(card) != top:
                break
            run += 1
        return run

    def can_go_on_pile(self, card: str) -> bool:
        """RULES §3.2: a special on anything; a number >= the top; anything on empty."""
        if is_special(card):
            return True
        top = self.top_number()
        return top is None or number(card) >= top

    def to_decide(self) -> list[int]:
        """The seats that may decide now.  RULES §2.3: the 3UP choices are made
        simultaneously (the referee asks for them one at a time, in seat order, P§3.2,
        but any order is a legal order); during play, the seat to move."""
        if self.phase == "setup":
            return [s for s in range(self.n) if not self.seats[s].chosen]
        if self.phase == "over" or self.to_move is None:
            return []
        return [self.to_move]

    def deciding_seat(self) -> int | None:
        """The first of `to_decide` (the seat the referee asks first)."""
        seats = self.to_decide()
        return seats[0] if seats else None

    # --- legal decisions (P§10) ------------------------------------------------

    def source(self, seat: int) -> str | None:
        """RULES §3.1: hand, then 3UP (hand and draw pile empty), then 3DOWN."""
        st = self.seats[seat]
        if st.hand:
            return "hand"
        if self.draw_pile:
            return None  # only the (forced) draw is possible
        if st.up:
            return "3up"
        if st.down_slots():
            return "3down"
        return None

    def plays_from(self, cards: list[str], src: str) -> list[str]:
        """The legal plays from a hand or the 3UP cards, in the order of P§10.3."""
        plays: list[str] = []
        top = self.top_number()
        for k in KINDS:
            of_kind = display_sorted([c for c in cards if kind(c) == k])
            if not of_kind:
                continue
            if k in SPECIALS:
                plays.append(f"play {src} {k}")  # once per kind held, without colour
                continue
            if top is not None and int(k) < top:
                continue
            if not self.config.has("four_of_a_colour"):
                for count in range(1, len(of_kind) + 1):
                    plays.append(f"play {src} {k}x{count}")
            else:
                for size in range(1, len(of_kind) + 1):
                    for subset in itertools.combinations(range(len(of_kind)), size):
                        for top_pos in subset:
                            below = [of_kind[i] for i in subset if i != top_pos]
                            order = below + [of_kind[top_pos]]
                            plays.append(f"play {src} " + " ".join(order))
        return dedupe(plays)

    def optional_draw_allowed(self) -> bool:
        """RULES §3.6 and §9.8 (P§10.2)."""
        if not self.extra_action or self.drawn or not self.draw_pile:
            return False
        if self.config.has("draw_once_per_clear"):
            return self.last_played is not None and kind(self.last_played) in ("C+1", "C+2")
        return True

    def legal(self, seat: int | None = None) -> list[str]:
        """The legal decisions of `seat` (default: the seat to decide), in order."""
        if seat is None:
            seat = self.deciding_seat()
        if seat is None or self.phase == "over":
            return []
        st = self.seats[seat]
        if self.phase == "setup":
            if st.chosen:
                return []
            choices = []
            for combo in itertools.combinations(range(6), 3):
                choices.append("3up " + " ".join(st.dealt[i] for i in combo))
            return dedupe(choices)
        if seat != self.to_move:
            return []
        if self.phase == "swap":
            swaps = []
            for u in display_sorted(st.up):
                for h in st.hand:
                    swaps.append(f"swap {u} {h}")
            return dedupe(swaps) + ["keep"]
        src = self.source(seat)
        if src is None:
            # Hand empty, draw pile not: the forced draw (RULES §3.6).
            assert not st.hand and self.draw_pile, "a finished seat is never to move"
            return ["draw"]
        if src == "3down":
            return [f"down {i}" for i in st.down_slots()]
        plays = self.plays_from(st.hand if src == "hand" else st.up, src)
        if plays:
            if self.optional_draw_allowed():
                return plays + ["draw"]
            if (
                self.config.has("may_decline")
                and not self.extra_action
                and self.draw_pile
            ):
                return plays + ["decline"]
            return plays
        if self.optional_draw_allowed():
            return ["draw", "pickup"]
        return ["pickup"]

    # --- applying a decision ---------------------------------------------------

    def apply(self, seat: int, decision: str) -> None:
        """Apply a decision of `seat`; it must be in its legal list (RULES §8)."""
        decision = " ".join(decision.split())
        if not self.is_legal(seat, decision):
            legal = self.legal(seat)
            raise OracleError(f"seat {seat}: {decision!r} is not legal; legal: {legal}")
        words = decision.split()
        if self.phase == "setup":
            self.choose(seat, words[1:])
        elif words[0] == "swap":
            self.swap(seat, words[1], words[2])
        elif words[0] == "keep":
            self.emit(f"keep {seat}")
            self.after_action(seat)
        elif words[0] == "play":
            self.play(seat, words[1], words[2:])
        elif words[0] == "down":
            self.turn_down(seat, int(words[1]))
        elif words[0] == "pickup":
            self.pickup(seat)
        elif words[0] == "draw":
            self.draw_before_extra(seat)
        elif words[0] == "decline":
            self.decline(seat)
        else:  # pragma: no cover - the legal list holds nothing else
            raise OracleError(decision)

    def is_legal(self, seat: int, decision: str) -> bool:
        """In the legal list, or another spelling the rules accept (P§10.1): a 3UP
        choice's cards in any order; under four_of_a_colour, a play's cards in any
        order (they go on the pile in the order written)."""
        decision = " ".join(decision.split())
        legal = self.legal(seat)
        if decision in legal:
            return True
        words = decision.split()
        if len(words) == 4 and words[0] == "3up" and all(is_card(w) for w in words[1:]):
            return "3up " + " ".join(display_sorted(words[1:])) in legal
        if (
            self.config.has("four_of_a_colour")
            and len(words) >= 3
            and words[0] == "play"
            and all(is_card(w) for w in words[2:])
        ):
            for entry in legal:
                ew = entry.split()
                if ew[:2] == words[:2] and sorted(ew[2:]) == sorted(words[2:]):
                    return True
        return False

    # set-up ---------------------------------------------------------------------

    def choose(self, seat: int, cards: list[str]) -> None:
        st = self.seats[seat]
        rest = list(st.dealt)
        for c in cards:
            rest.remove(c)
        st.chosen = True
        st.choice = display_sorted(cards)
        self.emit(f"chosen {seat}")
        if all(s.chosen for s in self.seats):
            self.reveal()

    def reveal(self) -> None:
        n = self.n
        for s in range(n):
            rest = list(self.seats[s].dealt)
            for c in self.seats[s].choice:
                rest.remove(c)
            self.seats[s].hand = display_sorted(rest)
        for s in range(n):
            receiver = (s + 1) % n if self.config.has("choose_for_others") else s
            self.seats[receiver].up = list(self.seats[s].choice)
        for s in range(n):
            self.emit(f"reveal {s} " + " ".join(self.seats[s].up))
        if self.config.has("swap_piles"):
            if self.perm is None:
                raise OracleError("swap_piles: the permutation (drawn from the seed) is needed")
            old = [(list(st.up), list(st.down)) for st in self.seats]
            for i in range(n):
                self.seats[i].up, self.seats[i].down = old[self.perm[i]]
            self.emit("piles " + " ".join(str(p) for p in self.perm))
        self.phase = "play"
        self.start_turn(1, self.first)

    # turns ------------------------------------------------------------------------

    def start_turn(self, number_: int, seat: int) -> None:
        self.turn = number_
        self.to_move = seat
        self.extra_action = False
        self.pending_extra = 0
        self.drawn = False
        self.last_played = None
        self.emit(f"turn {number_} {seat}")

    def play(self, seat: int, src: str, words: list[str]) -> None:
        st = self.seats[seat]
        holding = st.hand if src == "hand" else st.up
        if len(words) == 1 and words[0] in SPECIALS:
            # A special is written without colour: the first copy in colour order.
            cards = [display_sorted([c for c in holding if kind(c) == words[0]])[0]]
        elif len(words) == 1 and "x" in words[0]:
            num, count = words[0].split("x")
            of_num = display_sorted([c for c in holding if kind(c) == num])
            cards = of_num[: int(count)]  # P§10.4: first copies in colour order
        else:
            cards = list(words)  # four_of_a_colour: in the order listed, last on top
        for c in cards:
            holding.remove(c)
        self.emit(f"play {seat} {src} " + " ".join(cards))
        self.put_on_pile(seat, cards)

    def turn_down(self, seat: int, slot: int) -> None:
        st = self.seats[seat]
        card = st.down[slot]
        assert card is not None
        st.down[slot] = None
        if self.can_go_on_pile(card):
            self.emit(f"play {seat} 3down {slot} {card}")
            self.put_on_pile(seat, [card])
        else:
            # RULES §3.3: pick up the pile and the card; only the player learns it.
            pile = " ".join(self.pile)
            self.emit(
                f"fail {seat} {slot} {card} pile {pile}",
                owner=seat,
                hidden=f"fail {seat} {slot} ? pile {pile}",
            )
            st.hand = display_sorted(st.hand + self.pile + [card])
            self.pile = []
            self.end_turn(seat, played=False)

    def put_on_pile(self, seat: int, cards: list[str]) -> None:
        """A play (from any source): reverse, clear, then swap offer/finish/extra/end."""
        self.last_played = cards[-1]
        if self.config.has("ones_reverse") and any(
            not is_special(c) and number(c) == 1 for c in cards
        ):
            self.direction = -self.direction
            self.emit(f"reverse {self.direction}")
        self.pile.extend(cards)
        cleared_now = False
        if is_special(cards[-1]):
            # RULES §3.5: a special clears the pile, itself included; §3.6 grants.
            self.cleared = display_sorted(self.cleared + self.pile)
            self.emit(f"clear {seat} {kind(cards[-1])} {len(self.pile)}")
            self.pile = []
            self.pending_extra += GRANTS[kind(cards[-1])]
            cleared_now = True
        elif self.pile_run() >= 3:
            self.cleared = display_sorted(self.cleared + self.pile)
            self.emit(f"clear {seat} three {len(self.pile)}")
            self.pile = []
            cleared_now = True
        st = self.seats[seat]
        if not st.holds_cards():
            self.finish(seat)
            return
        if (
            self.config.has("four_of_a_colour")
            and not cleared_now
            and self.four_of_one_colour()
            and st.up
            and st.hand
        ):
            self.phase = "swap"
            self.emit(f"colour {seat}")
            return
        self.after_action(seat)

    def four_of_one_colour(self) -> bool:
        if len(self.pile) < 4:
            return False
        top4 = self.pile[-4:]
        return all(not is_special(c) for c in top4) and len({colour(c) for c in top4}) == 1

    def swap(self, seat: int, up_card: str, hand_card: str) -> None:
        st = self.seats[seat]
        st.up[st.up.index(up_card)] = hand_card
        st.hand.remove(hand_card)
        st.hand = display_sorted(st.hand + [up_card])
        self.emit(f"swap {seat} {up_card} {hand_card}")
        self.after_action(seat)

    def after_action(self, seat: int) -> None:
        """After a play (and its swap offer): the next extra action, or the turn's end."""
        self.phase = "play"
        if self.pending_extra > 0:
            self.pending_extra -= 1
            self.extra_action = True
            self.drawn = False
            self.emit(f"extra {seat} {self.pending_extra}")
            return
        self.end_turn(seat, played=True)

    def draw_cards(self, count: int) -> list[str]:
        drawn = self.draw_pile[:count]
        self.draw_pile = self.draw_pile[count:]
        return drawn

    def emit_draw(self, seat: int, cards: list[str], why: str) -> None:
        self.emit(
            f"draw {seat} {len(cards)} {why} " + " ".join(cards),
            owner=seat,
            hidden=f"draw {seat} {len(cards)} {why} ?",
        )

    def draw_before_extra(self, seat: int) -> None:
        st = self.seats[seat]
        cards = self.draw_cards(1)
        st.hand = display_sorted(st.hand + cards)
        self.drawn = True
        self.emit_draw(seat, cards, "extra")

    def pickup(self, seat: int) -> None:
        st = self.seats[seat]
        self.emit(f"pickup {seat} " + " ".join(self.pile))
        st.hand = display_sorted(st.hand + self.pile)
        self.pile = []
        self.end_turn(seat, played=False)

    def decline(self, seat: int) -> None:
        st = self.seats[seat]
        cards = self.draw_cards(1)
        st.hand = display_sorted(st.hand + cards)
        self.emit_draw(seat, cards, "decline")
        self.end_turn(seat, played=False)

    def end_turn(self, seat: int, played: bool) -> None:
        """RULES §3.7 (end-of-turn draw), §3.8 (next player), §4 (turn limit)."""
        st = self.seats[seat]
        self.extra_action = False
        self.pending_extra = 0
        self.drawn = False
        if played and len(st.hand) < 3 and self.draw_pile:
            cards = self.draw_cards(3 - len(st.hand))
            st.hand = display_sorted(st.hand + cards)
            self.emit_draw(seat, cards, "refill")
        self.next_turn(seat)

    def next_turn(self, seat: int) -> None:
        if self.turn >= self.config.turn_limit:
            self.end_game("turn_limit")
            return
        s = seat
        while True:
            s = (s + self.direction) % self.n
            if self.seats[s].place is None:
                break
        self.start_turn(self.turn + 1, s)

    # finishing --------------------------------------------------------------------

    def finish(self, seat: int) -> None:
        """RULES §4: a player with no cards finishes; pending extra actions lapse."""
        place = len(self.finish_order) + 1
        self.seats[seat].place = place
        self.finish_order.append(seat)
        self.emit(f"finish {seat} {place}")
        self.extra_action = False
        self.pending_extra = 0
        self.drawn = False
        self.phase = "play"
        if not self.config.has("play_out"):
            self.end_game("winner")
            return
        still = [s for s in range(self.n) if self.seats[s].place is None]
        if len(still) <= 1:
            self.end_game("played_out")
            return
        self.next_turn(seat)

    def end_game(self, how: str) -> None:
        """RULES §4 places and §5 points."""
        pts = [0 if st.place is not None else st.penalty() for st in self.seats]
        places: list[int] = [0] * self.n
        finished = len(self.finish_order)
        for s in range(self.n):
            if self.seats[s].place is not None:
                places[s] = self.seats[s].place  # type: ignore[assignment]
        unfinished = [s for s in range(self.n) if self.seats[s].place is None]
        if how == "played_out":
            assert len(unfinished) == 1
            places[unfinished[0]] = self.n
        else:
            for s in unfinished:
                better = sum(1 for t in unfinished if pts[t] < pts[s])
                places[s] = finished + 1 + better
        self.phase = "over"
        self.to_move = None
        self.extra_action = False
        self.pending_extra = 0
        self.drawn = False
        self.end_how = how
        self.places = places
        self.points = pts
        self.emit(
            f"end {how} places "
            + " ".join(str(p) for p in places)
            + " points "
            + " ".join(str(p) for p in pts)
        )

    # --- what a seat may see (P§12) --------------------------------------------------

    def observation(self, seat: int) -> dict[str, object]:
        st = self.seats[seat]
        setup = self.phase == "setup"
        obs: dict[str, object] = {
            "seat": seat,
            "players": self.n,
            "variants": sorted(self.config.variants),
            "phase": self.phase,
            "turn": self.turn,
            "to_move": None if setup or self.phase == "over" else self.to_move,
            "direction": self.direction,
            "extra_action": self.extra_action,
            "pending_extra": self.pending_extra,
            "drawn": self.drawn,
            "hand": [] if setup else list(st.hand),
            "pile": list(self.pile),
            "pile_run": self.pile_run(),
            "draw_pile": len(self.draw_pile),
            "cleared": list(self.cleared),
        }
        if setup:
            obs["dealt"] = list(st.dealt)
            obs["chosen"] = st.chosen
            if st.chosen:
                obs["choice"] = list(st.choice)
        if self.config.has("swap_piles") and not setup:
            obs["piles"] = list(self.perm or [])
        seats = []
        for s, other in enumerate(self.seats):
            entry: dict[str, object] = {
                "seat": s,
                "hand": 0 if setup else len(other.hand),
                "up": None if setup else list(other.up),
                "down": other.down_slots(),
                "finished": other.place,
            }
            if setup:
                entry["chosen"] = other.chosen
            seats.append(entry)
        obs["seats"] = seats
        return obs

    def result(self) -> tuple[str, list[int], list[int]]:
        assert self.end_how is not None and self.places is not None and self.points
        return self.end_how, list(self.places), list(self.points)


def dedupe(items: list[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for item in items:
        if item not in seen:
            seen.add(item)
            out.append(item)
    return out


# --- the JSON form of events (P§11) ---------------------------------------------------


def event_json(text: str) -> dict[str, object]:
    """An event's JSON form (P§11) from its text form as a seat sees it (`?` -> null)."""
    w = text.split()
    kind_, args = w[0], w[1:]

    def cards(ws: list[str]) -> list[str] | None:
        return None if ws == ["?"] else list(ws)

    out: dict[str, object] = {"type": kind_}
    if kind_ in ("deal", "reveal", "pickup"):
        out.update(seat=int(args[0]), cards=cards(args[1:]))
    elif kind_ in ("chosen", "colour", "keep"):
        out.update(seat=int(args[0]))
    elif kind_ == "piles":
        out.update(perm=[int(a) for a in args])
    elif kind_ == "turn":
        out.update(turn=int(args[0]), seat=int(args[1]))
    elif kind_ == "extra":
        out.update(seat=int(args[0]), left=int(args[1]))
    elif kind_ == "play":
        out.update(seat=int(args[0]), source=args[1])
        if args[1] == "3down":
            out.update(slot=int(args[2]), cards=[args[3]])
        else:
            out.update(cards=list(args[2:]))
    elif kind_ == "fail":
        out.update(
            seat=int(args[0]),
            slot=int(args[1]),
            card=None if args[2] == "?" else args[2],
            pile=list(args[4:]),
        )
    elif kind_ == "clear":
        out.update(seat=int(args[0]), how=args[1], count=int(args[2]))
    elif kind_ == "reverse":
        out.update(direction=int(args[0]))
    elif kind_ == "draw":
        out.update(seat=int(args[0]), count=int(args[1]), why=args[2], cards=cards(args[3:]))
    elif kind_ == "swap":
        out.update(seat=int(args[0]), up_card=args[1], hand_card=args[2])
    elif kind_ == "finish":
        out.update(seat=int(args[0]), place=int(args[1]))
    elif kind_ == "end":
        p = args.index("points")
        out.update(
            how=args[0],
            places=[int(a) for a in args[2:p]],
            points=[int(a) for a in args[p + 1 :]],
        )
    else:
        raise OracleError(f"unknown event {text!r}")
    return out


# --- match_scoring (RULES §9.4, §5) ------------------------------------------------------


def competition_places(values: list[int]) -> list[int]:
    """Fewer is better; equal values share a place ("1224", RULES §4)."""
    return [1 + sum(1 for w in values if w < v) for v in values]


def match_standings(points: list[list[int]]) -> tuple[list[int], list[int]]:
    """RULES §9.4: a match's totals (each player's points summed over the games,
    `points[game][player]`) and places (fewest total points first, ties shared)."""
    players = len(points[0])
    totals = [sum(game[p] for game in points) for p in range(players)]
    return totals, competition_places(totals)


# --- why a decision is refused (P§8) ------------------------------------------------------


def refusal_reasons(game: Game, seat: int, text: str) -> set[str]:
    """Every rule a refused decision breaks, as P§8's table cites it ("RULES §n" or
    "decision syntax").  A decision can break several; the referee cites one."""
    reasons = rule_reasons(game, seat, text)
    if not well_formed(text, game.config):
        reasons.add("decision syntax")
    return reasons


def rule_reasons(game: Game, seat: int, text: str) -> set[str]:
    words = text.split()
    if seat not in game.to_decide():
        # Out of turn; during set-up, a seat that has chosen is also making "any other
        # decision during set-up" (§2.3).
        return {"RULES §8", "RULES §2.3"} if game.phase == "setup" else {"RULES §8"}
    out: set[str] = set()
    st = game.seats[seat]
    head = words[0] if words else ""
    if game.phase == "setup":
        out.add("RULES §2.3")
        if head != "3up" or len(words) != 4 or not all(is_card(w) for w in words[1:]):
            out.add("decision syntax")
        return out
    if game.phase == "swap":
        out.add("RULES §9.6")
        if head == "swap" and len(words) == 3:
            out.add("RULES §8")  # cards not held
        if head == "3up":
            out.add("RULES §2.3")  # a 3UP choice after the set-up
        return out
    forced_draw = not st.hand and bool(game.draw_pile)
    if forced_draw and head != "draw":
        out.add("RULES §3.6")
    plays = [d for d in game.legal(seat) if d.startswith("play ") or d.startswith("down ")]
    if head in ("swap", "keep"):
        out |= {"RULES §9.6", "decision syntax"}
    elif head == "decline":
        if not game.config.has("may_decline"):
            out.add("RULES §3.2")
        if game.extra_action or not game.draw_pile:
            out.add("RULES §9.2")
        if not plays:
            out |= {"RULES §3.4", "RULES §9.2"}
        if not st.hand:
            out.add("RULES §9.2")
    elif head == "draw":
        if not game.draw_pile:
            out.add("RULES §8")
        if not game.extra_action or game.drawn:
            out.add("RULES §3.6")
        if game.config.has("draw_once_per_clear"):
            out.add("RULES §9.8")
    elif head == "pickup":
        out.add("RULES §3.4")
    elif head == "down":
        out |= {"RULES §3.1", "RULES §3.3", "decision syntax"}
    elif head == "play":
        out |= {"RULES §3.1", "RULES §3.2", "RULES §8", "decision syntax"}
    elif head == "3up":
        out.add("RULES §2.3")  # a 3UP choice after the set-up
    else:
        out.add("decision syntax")
    if len(words) > 1 and head in ("pickup", "draw", "decline", "keep"):
        out.add("decision syntax")
    return out


def well_formed(text: str, config: Config) -> bool:
    """The text forms of P§10.1 (whether or not the decision is legal now)."""
    w = text.split()
    if not w:
        return False
    if w[0] in ("pickup", "draw", "decline", "keep"):
        return len(w) == 1
    if w[0] == "3up":
        return len(w) == 4 and all(is_card(x) for x in w[1:])
    if w[0] == "down":
        return len(w) == 2 and w[1] in ("0", "1", "2")
    if w[0] == "swap":
        return len(w) == 3 and all(is_card(x) for x in w[1:])
    if w[0] == "play" and len(w) >= 3 and w[1] in ("hand", "3up"):
        if len(w) == 3 and w[2] in SPECIALS:
            return True
        if config.has("four_of_a_colour"):
            return all(is_card(x) and not is_special(x) for x in w[2:])
        if len(w) == 3 and "x" in w[2]:
            n, _, k = w[2].partition("x")
            return n in KINDS[:10] and k.isdigit() and int(k) >= 1
    return False
