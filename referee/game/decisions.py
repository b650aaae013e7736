"""Decisions a seat can make, and their text form.

Owns: the ``Decision`` record, its text form (which round-trips through
``parse_decision``) and the interned decisions the engine lists in its hot path.
Must not import: anything doing I/O, a clock or global randomness.

Text forms (one line, tokens separated by single spaces):

==========================  ===================================================
``3up 7g 10r Cy``           set-up (RULES §2.3): the three cards laid face up
                            (under ``choose_for_others``: given to the left)
``play hand 7x2``           play two 7s from the hand (``play 3up 10x1``: from
                            the 3UP cards); the copies played are the first
                            ones in colour order (colours do not matter)
``play hand C+1``           play a special card (always one)
``play hand 7g 7r``         ``four_of_a_colour`` only: the exact cards, in the
                            order they go on the pile (the last on top)
``down 2``                  turn over the 3DOWN card in slot 2 (RULES §3.3)
``pickup``                  pick up the pile: only when nothing can be played
``draw``                    the draw before an extra action (RULES §3.6)
``decline``                 ``may_decline``: draw one card, end the turn
``swap 10r 7g``             ``four_of_a_colour``: 3UP card 10r <-> hand card 7g
``keep``                    ``four_of_a_colour``: decline the swap
==========================  ===================================================
"""

from __future__ import annotations

from typing import NamedTuple

from ..errors import InputError
from .cards import (
    CLEAR,
    KIND,
    KIND_TEXT,
    MAX_COPIES,
    Card,
    CardError,
    card_text,
    make_card,
    parse_kind_colour,
)

# Decision codes.
CHOOSE_UP = 0
PLAY = 1
DOWN = 2
PICKUP = 3
DRAW = 4
DECLINE = 5
SWAP = 6
KEEP = 7

# Sources of a play (RULES §3.1).
HAND = 0
UP = 1
DOWNSRC = 2
SOURCE_NAMES = ("hand", "3up", "3down")


class Decision(NamedTuple):
    """One decision.  Compares by value (it is a tuple), so a parsed decision equals
    the engine's listed one.  ``cards`` is empty for plays written by number and
    count, where the engine picks the copies."""

    code: int
    text: str
    src: int = -1
    kind: int = 0
    count: int = 0  # type: ignore[assignment]  # shadows tuple.count, on purpose
    cards: tuple[Card, ...] = ()
    slot: int = -1

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Decision({self.text!r})"


class DecisionSyntaxError(InputError, ValueError):
    """A decision's text form could not be read."""


PICKUP_D = Decision(PICKUP, "pickup")
DRAW_D = Decision(DRAW, "draw")
DECLINE_D = Decision(DECLINE, "decline")
KEEP_D = Decision(KEEP, "keep")
DOWN_D = tuple(Decision(DOWN, f"down {i}", DOWNSRC, slot=i) for i in range(3))

_MAX_COUNT = 7 * MAX_COPIES

#: No decision's text is longer (the longest, a play naming 28 cards, has ~120
#: characters).  A longer text -- a bot may send up to a megabyte -- is refused
#: unread, and the message shows only its start: messages about a bot's decision go
#: back to it, and into records and transcripts, and must stay one readable line.
MAX_TEXT = 256


def _play_text(src: int, kind: int, count: int) -> str:
    if kind >= CLEAR:
        return f"play {SOURCE_NAMES[src]} {KIND_TEXT[kind]}"
    return f"play {SOURCE_NAMES[src]} {KIND_TEXT[kind]}x{count}"


#: PLAYS[src][kind] = (play of 1 card, of 2 cards, ...) -- interned, sliced by the
#: engine when it lists legal decisions (a slice of a prebuilt tuple is the fastest
#: way to list "1, 2 or all n copies").  A special kind has one entry: specials are
#: played one at a time (RULES §3.2).
PLAYS: tuple[tuple[tuple[Decision, ...], ...], ...] = tuple(
    tuple(
        tuple(
            Decision(PLAY, _play_text(src, kind, c), src, kind, c)
            for c in range(1, (_MAX_COUNT if kind < CLEAR else 1) + 1)
        )
        if kind
        else ()
        for kind in range(14)
    )
    for src in range(2)
)


def play_cards(src: int, cards: tuple[Card, ...]) -> Decision:
    """A play naming its cards (``four_of_a_colour``)."""
    kind = KIND[cards[0]]
    text = f"play {SOURCE_NAMES[src]} " + " ".join(card_text(c) for c in cards)
    return Decision(PLAY, text, src, kind, len(cards), cards)


def choose_up(cards: tuple[Card, ...]) -> Decision:
    return Decision(CHOOSE_UP, "3up " + " ".join(card_text(c) for c in cards), cards=cards)


def swap(up_card: Card, hand_card: Card) -> Decision:
    return Decision(SWAP, f"swap {card_text(up_card)} {card_text(hand_card)}", cards=(up_card, hand_card))


_SIMPLE = {"pickup": PICKUP_D, "draw": DRAW_D, "decline": DECLINE_D, "keep": KEEP_D}
_KIND_BY_TEXT = {t: k for k, t in enumerate(KIND_TEXT) if t}

SYNTAX_HELP = (
    "decisions are written '3up 7g 10r Cy', 'play hand 7x2', 'play 3up C+1', "
    "'play hand 7g 7r', 'down 0', 'pickup', 'draw', 'decline', 'swap 10r 7g' or 'keep'"
)
#: How a numbered play is written without four_of_a_colour (RULES §10.1).
COUNT_FORM = "a play by count is written NUMBERxCOUNT, e.g. 'play hand 7x2' (NUMBER 1 to 10)"
#: ... and under it.
CARDS_FORM = ("under four_of_a_colour a numbered play names its cards in pile order, e.g. "
              "'play hand 7g 7r'")


def _numbered_form(four: bool | None) -> str:
    """How a numbered play is written: in the game's variant when it is known
    (``four``: four_of_a_colour is on), else both ways (RULES §10.1)."""
    if four is None:
        return (f"{COUNT_FORM}, or, under four_of_a_colour only, by the cards it names, "
                "e.g. 'play hand 7g 7r'")
    return CARDS_FORM if four else COUNT_FORM


def _cards(tokens: list[str], text: str) -> tuple[Card, ...]:
    try:
        return tuple(make_card(*parse_kind_colour(t)) for t in tokens)
    except CardError as e:
        raise DecisionSyntaxError(f"{text!r}: {e}") from None


def _case_fixed(text: str) -> str:
    """``text`` in the case decisions are written in: lower case, but the special
    kinds' upper-case C ('PLAY HAND C+1' -> 'play hand C+1'; no other token of a
    decision begins with a c)."""
    return " ".join("C" + w[1:] if w.startswith("c") else w for w in text.lower().split())


def _is_number(text: str) -> bool:
    return text.isascii() and text.isdigit()


def parse_decision(text: str, *, four_of_a_colour: bool | None = None) -> Decision:
    """Read a decision's text form.  The result equals the engine's listed decision
    with the same text.  Raises DecisionSyntaxError saying what would be right.  The
    form a numbered play takes depends on the variant (RULES §10.1): the engine says
    whether ``four_of_a_colour`` is on, so that the advice fits the game; left None,
    the advice names both forms.  (What is read does not depend on it: a play in the
    other form is read, and the engine's ``explain`` refuses it.)"""
    if not isinstance(text, str):
        raise DecisionSyntaxError(f"a decision is a string, not {type(text).__name__}")
    if len(text) > MAX_TEXT:
        text = " ".join(text.split())  # extra spaces are allowed (RULES §10)
        if len(text) > MAX_TEXT:
            raise DecisionSyntaxError(
                f"{text[:60]!r}... ({len(text)} characters) is not a decision: no decision "
                f"is longer than {MAX_TEXT} characters; {SYNTAX_HELP}")
    tokens = text.split()
    if not tokens:
        raise DecisionSyntaxError(f"empty decision: {SYNTAX_HELP}")
    head = tokens[0]
    if len(tokens) == 1 and head in _SIMPLE:
        return _SIMPLE[head]
    if head == "down" and len(tokens) == 2 and tokens[1] in ("0", "1", "2"):
        return DOWN_D[int(tokens[1])]
    if head == "3up" and len(tokens) == 4:
        return choose_up(_cards(tokens[1:], text))
    if head == "swap" and len(tokens) == 3:
        a, b = _cards(tokens[1:], text)
        return swap(a, b)
    if head == "play" and len(tokens) >= 3 and tokens[1] in ("hand", "3up"):
        src = SOURCE_NAMES.index(tokens[1])
        body = tokens[2:]
        if len(body) == 1:
            return _play_one(src, body[0], text, four_of_a_colour)
        return play_cards(src, _cards(body, text))
    raise DecisionSyntaxError(_why_not(text, tokens, four_of_a_colour))


def _play_one(src: int, token: str, text: str, four: bool | None) -> Decision:
    """A play whose body is one token: ``7x2``, ``C+1``, or one card (``7g``)."""
    kind = _KIND_BY_TEXT.get(token)
    if kind is not None:
        if kind >= CLEAR:
            return PLAYS[src][kind][0]
        if four:
            raise DecisionSyntaxError(f"{text!r}: name the card(s) of {token} to play; "
                                      f"{CARDS_FORM}")
        one = f"write {_play_text(src, kind, 1)!r} for one {token}"
        raise DecisionSyntaxError(f"{text!r}: the count is missing: {one}; "
                                  f"{_numbered_form(four)}")
    num, sep, count = token.partition("x")
    if sep:
        # No card's text holds an x: this is meant as a play by count (RULES §10.1).
        kind = _KIND_BY_TEXT.get(num)
        if kind is None:
            raise DecisionSyntaxError(f"{text!r}: {_not_a_number(src, num, count, four)}")
        if kind >= CLEAR:
            if count == "1":
                return PLAYS[src][kind][0]  # "C+1x1" is one C+1: read it so
            raise DecisionSyntaxError(
                f"{text!r}: special cards are played one at a time (RULES §3.2), written "
                f"without a count: {_play_text(src, kind, 1)!r}")
        if not _is_number(count):
            what = f"the count {count!r} is not a whole number" if count else \
                "the count after the x is missing"
            raise DecisionSyntaxError(f"{text!r}: {what}; {_numbered_form(four)}")
        c = int(count)
        if 1 <= c <= _MAX_COUNT:
            return PLAYS[src][kind][c - 1]
        raise DecisionSyntaxError(
            f"{text!r}: a play holds 1 to {_MAX_COUNT} cards, not {c}; {_numbered_form(four)}")
    try:
        card = make_card(*parse_kind_colour(token))
    except CardError:
        raise DecisionSyntaxError(f"{text!r}: {_not_a_play(src, token, four)}") from None
    return play_cards(src, (card,))


def _not_a_number(src: int, num: str, count: str, four: bool | None) -> str:
    """Why ``num`` in ``NUMxCOUNT`` is not a number of the deck, and what would be."""
    fixed = _case_fixed(num)
    if fixed != num and fixed in _KIND_BY_TEXT:
        return f"{num!r} is written {fixed!r} (decisions are case-sensitive)"
    if not num:
        return f"the number before the x is missing; {_numbered_form(four)}"
    if _is_number(num):
        return (f"{num} is not a number of the deck (numbers are 1 to 10); "
                f"{_numbered_form(four)}")
    try:
        kind, _ = parse_kind_colour(num)
    except CardError:
        return f"{num!r} is not a number (1 to 10); {_numbered_form(four)}"
    by_count = f"a play by count names no colour: write '{KIND_TEXT[kind]}x{count}'"
    by_cards = f"name the card: 'play {SOURCE_NAMES[src]} {num}'"
    if four is None:
        return f"{by_count} (or, under four_of_a_colour only, {by_cards})"
    return f"under four_of_a_colour, {by_cards}" if four else by_count


def _not_a_play(src: int, token: str, four: bool | None) -> str:
    """Why a play's one token is neither a count, a special card nor a card."""
    fixed = _case_fixed(token)
    if fixed != token:
        try:
            _play_one(src, fixed, fixed, four)
        except DecisionSyntaxError:
            pass
        else:
            return f"{token!r} is written {fixed!r} (decisions are case-sensitive)"
    if _is_number(token):
        return (f"{token} is not a number of the deck (numbers are 1 to 10); "
                f"{_numbered_form(four)}")
    return (f"{token!r} is not a play: a special card is played alone ('play hand C+1'); "
            f"{_numbered_form(four)}")


def _why_not(text: str, tokens: list[str], four: bool | None) -> str:
    """The message for an unreadable decision, naming the rule when a bot tried
    something the rules forbid (RULES §8) rather than mistyped."""
    head = tokens[0]
    if head == "down" and len(tokens) > 2:
        return (f"{text!r}: one 3DOWN card is turned per action (RULES §3.3); "
                "write 'down SLOT'")
    if head == "pass":
        return (f"{text!r}: there is no passing: a seat that can play must play (RULES §3.2), "
                "an extra action cannot be passed (RULES §3.6), and a seat with no legal "
                "play picks up ('pickup', RULES §3.4)")
    fixed = _case_fixed(text)
    if fixed != " ".join(tokens):
        try:
            parse_decision(fixed, four_of_a_colour=four)
        except DecisionSyntaxError:
            pass
        else:
            return f"{text!r}: decisions are case-sensitive: write {fixed!r}"
    if len(tokens) == 1 and _is_number(head):
        return (f"{text!r} is not a decision: to answer by index, send the index as a "
                "number, not as text")
    if head == "play" and len(tokens) >= 2 and tokens[1] not in ("hand", "3up"):
        return (f"{text!r}: a play names its source, 'hand' or '3up' (3DOWN cards are turned "
                "with 'down SLOT'), e.g. 'play hand 7x2'")
    return f"{text!r} is not a decision: {SYNTAX_HELP}"
