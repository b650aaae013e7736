"""Why a decision is illegal: the message and the rule it breaks (RULES §8).

Only called on the slow path of ``Game.apply``, after a decision was found not to be
in the seat's legal list.  The message says what the seat did and what would have
been right.  Must not import anything doing I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

from .cards import CLEAR, KIND, KIND_TEXT, card_text
from .decisions import CHOOSE_UP, DECLINE, DOWN, DRAW, HAND, KEEP, PICKUP, PLAY, SWAP, Decision
from .phases import SETUP, SWAPPING
from .table import Table


def legal_now(legal: Sequence[Decision], shown: int = 8) -> str:
    """The start of a legal list, for a message: ``legal now: pickup``, or ``legal
    now: A, B, ... and 12 more``.  Every message about a refused decision ends so."""
    texts = ", ".join(d.text for d in legal[:shown])
    more = f" and {len(legal) - shown} more" if len(legal) > shown else ""
    return f"legal now: {texts}{more}"


def explain(game: Table, seat: int, d: Decision) -> tuple[str, str]:
    """(message, rule) for an illegal decision ``d`` of ``seat``."""
    msg, rule = _why(game, seat, d)
    if game.phase != SETUP or d.code != CHOOSE_UP:
        msg = f"seat {seat}: {msg}; {legal_now(game.legal(seat))}"
    else:
        msg = f"seat {seat}: {msg}"
    if game.phase == SWAPPING and not rule:
        rule = "RULES §9.6"
    return msg, rule or "RULES §8"


def _why(game: Table, seat: int, d: Decision) -> tuple[str, str]:
    code = d.code
    if game.phase == SETUP:
        if code != CHOOSE_UP:
            return (f"'{d.text}' during set-up: choose your 3UP cards ('3up' and three of your "
                    "six dealt cards)", "RULES §2.3")
        dealt = [card_text(c) for c in game.dealt[seat]]
        names = [card_text(c) for c in d.cards]
        for nm in names:
            if names.count(nm) > dealt.count(nm):
                return (f"'{d.text}' names {nm}, which is not among your dealt cards "
                        f"({' '.join(dealt)})", "RULES §2.3")
        return f"'{d.text}' is not a choice of three of your dealt cards", "RULES §2.3"
    if code == CHOOSE_UP:
        return f"'{d.text}': the 3UP cards are chosen at set-up only", "RULES §2.3"
    if game.phase == SWAPPING:
        if code not in (SWAP, KEEP):
            return (f"'{d.text}': a run of four cards of one colour lets you swap a 3UP card "
                    "with a hand card ('swap UP HAND') or decline ('keep') first", "RULES §9.6")
        up = [card_text(c) for c in game.up[seat]]
        a, b = (card_text(c) for c in d.cards)
        if a not in up:
            return f"'{d.text}': {a} is not one of your 3UP cards ({' '.join(up)})", "RULES §9.6"
        return f"'{d.text}': {b} is not in your hand", "RULES §9.6"
    if code in (SWAP, KEEP):
        return (f"'{d.text}': a swap is offered only after a play leaves four cards of one "
                "colour on top of the pile", "RULES §9.6")
    hand_count = game.hand_count[seat]
    draw = len(game.draw_pile)
    if hand_count == 0 and draw and code != DRAW:
        return ("your hand is empty and the draw pile is not: you must draw before this "
                "extra action", "RULES §3.6")
    if code == DRAW:
        if not draw:
            return "'draw': the draw pile is empty", "RULES §8"
        if not game.in_extra:
            return ("'draw': a card may be drawn only before an extra action (after C+1 or "
                    "C+2); at the end of the turn the draw is automatic", "RULES §3.6")
        if game.drawn:
            return "'draw': you have already drawn before this extra action", "RULES §3.6"
        return ("'draw': under draw_once_per_clear a card may be drawn only right after a "
                "C+1 or C+2", "RULES §9.8")
    if code == DECLINE:
        if not game.may_decline:
            return ("'decline': declining to play is the may_decline variant, which is off; "
                    "you must play", "RULES §3.2")
        if game.in_extra:
            return "'decline': an extra action cannot be declined", "RULES §9.2"
        if not draw:
            return "'decline': the draw pile is empty", "RULES §9.2"
        return "'decline': you have no legal play, so you must pick up the pile", "RULES §3.4"
    if code == PICKUP:
        what = "an extra action cannot be passed, and " if game.in_extra else ""
        return (f"'pickup': {what}you may pick up only when you have no legal play",
                "RULES §3.4")
    if code == DOWN:
        if hand_count:
            return f"'{d.text}': you still hold cards in your hand", "RULES §3.1"
        if game.up[seat]:
            return f"'{d.text}': your 3UP cards must be played first", "RULES §3.1"
        return f"'{d.text}': slot {d.slot} holds no card", "RULES §3.3"
    if code == PLAY:
        return _why_play(game, seat, d, hand_count, draw)
    return f"'{d.text}' is not a decision here", "RULES §8"


def _why_play(game: Table, seat: int, d: Decision, hand_count: int, draw: int) -> tuple[str, str]:
    kind = d.kind
    where = "hand" if d.src == HAND else "3UP cards"
    if d.src == HAND and not hand_count:
        if game.up[seat]:
            return f"'{d.text}': your hand is empty; play from your 3UP cards", "RULES §3.1"
        return f"'{d.text}': your hand is empty; turn a 3DOWN card", "RULES §3.1"
    if d.src != HAND:
        if hand_count:
            return (f"'{d.text}': 3UP cards are played only once your hand is empty",
                    "RULES §3.1")
        if draw:
            return (f"'{d.text}': 3UP cards are played only once the draw pile is empty",
                    "RULES §3.1")
    # What the rules forbid comes before how a play should be written.
    if kind >= CLEAR and len(d.cards) == 1:
        return (f"'{d.text}': a special card is written without its colour: "
                f"'play {'hand' if d.src == HAND else '3up'} {KIND_TEXT[kind]}'", "decision syntax")
    if kind >= CLEAR and (d.count > 1 or len(d.cards) > 1):
        return f"'{d.text}': special cards are played one at a time", "RULES §3.2"
    if d.cards and len({KIND[c] for c in d.cards}) > 1:
        return f"'{d.text}': all cards of a play must have the same number", "RULES §3.2"
    if d.cards and not game.four_colour:
        return (f"'{d.text}': colours do not matter under these rules; write the number and "
                f"count, e.g. 'play {'hand' if d.src == HAND else '3up'} "
                f"{KIND_TEXT[kind]}x{len(d.cards)}'", "decision syntax")
    if not d.cards and game.four_colour and kind < CLEAR:
        return (f"'{d.text}': under four_of_a_colour a play names its cards in pile order, "
                "e.g. 'play hand 7g 7r'", "decision syntax")
    if d.src == HAND:
        held = [card_text(c) for c in game.hands[seat].get(kind, [])]
    else:
        held = [card_text(c) for c in game.up[seat] if KIND[c] == kind]
    if d.cards:
        for c in d.cards:
            nm = card_text(c)
            if [card_text(x) for x in d.cards].count(nm) > held.count(nm):
                return f"'{d.text}': you do not hold {nm} in your {where}", "RULES §8"
    elif d.count > len(held):
        return (f"'{d.text}': you hold {len(held)} card(s) of {KIND_TEXT[kind]} in your "
                f"{where}", "RULES §8")
    if kind < CLEAR and game.top and kind < game.top:
        return (f"'{d.text}': {KIND_TEXT[kind]} is lower than the {KIND_TEXT[game.top]} on "
                "top of the pile", "RULES §3.2")
    return f"'{d.text}' is not legal here", "RULES §3.2"
