"""Cards and decks of 3UP 3DOWN (RULES §1).

Owns: the card kinds, the colours, the integer card ids the engine uses in its hot
paths, the cards' text form (`7g`, `10r`, `Cy`, `C+1o`, `C+2g`) and deck building.
Must not import: anything doing I/O, a clock or global randomness.

A card is an ``int`` id: ``copy * 98 + colour * 14 + kind``, where ``kind`` is
1..10 for numbered cards, 11 for ``C``, 12 for ``C+1``, 13 for ``C+2``.  The id is
unique per physical card, even in decks holding two identical cards (``copy``).
Lookup tables (``KIND``, ``COLOUR``) turn an id into its parts without arithmetic.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence

from ..errors import InputError

Card = int

CLEAR = 11
CLEAR1 = 12
CLEAR2 = 13
KINDS = tuple(range(1, 14))
NUMBERED = tuple(range(1, 11))
SPECIALS = (CLEAR, CLEAR1, CLEAR2)

#: Colour names in deck order (RULES §1); their letters are the text form.
COLOUR_NAMES = ("green", "red", "blue", "yellow", "orange", "purple", "pink")
COLOUR_LETTERS = "grbyopk"
MAX_COPIES = 4
_STRIDE = 98  # 7 colours * 14 kind slots

KIND_TEXT = ("", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "C", "C+1", "C+2")
_KIND_BY_TEXT = {t: k for k, t in enumerate(KIND_TEXT) if t}

#: Penalty points of a kind (RULES §5).
KIND_POINTS = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 15, 20, 25)
#: Extra actions a special kind grants (RULES §3.6).
KIND_GRANTS = (0,) * 11 + (0, 1, 2)

_N_IDS = _STRIDE * MAX_COPIES
KIND: tuple[int, ...] = tuple(i % 14 for i in range(_N_IDS))
COLOUR: tuple[int, ...] = tuple((i % _STRIDE) // 14 for i in range(_N_IDS))
POINTS: tuple[int, ...] = tuple(KIND_POINTS[k] for k in KIND)
TEXT: tuple[str, ...] = tuple(
    KIND_TEXT[KIND[i]] + COLOUR_LETTERS[COLOUR[i]] if KIND[i] else "?" for i in range(_N_IDS)
)


#: Display order of a card id as one int (kind, then colour, then copy): a C-level
#: sort key (``key=ORDER.__getitem__``) for the hot paths.
ORDER: tuple[int, ...] = tuple(KIND[i] * 1000 + COLOUR[i] * 10 + i // _STRIDE for i in range(_N_IDS))


class CardError(InputError, ValueError):
    """A card's text form could not be read."""


def make_card(kind: int, colour: int, copy: int = 0) -> Card:
    return copy * _STRIDE + colour * 14 + kind


def card_text(card: Card) -> str:
    return TEXT[card]


def cards_text(cards: Iterable[Card]) -> list[str]:
    return [TEXT[c] for c in cards]


def parse_kind_colour(text: str) -> tuple[int, int]:
    """``"C+1o"`` -> ``(12, 4)``.  Raises CardError with what would be right."""
    t = text.strip()
    # Card texts are case-sensitive: an upper-case C, lower-case colour letters.
    fixed = ("C" + t[1:-1] if t[:1] in "cC" else t[:-1]) + t[-1:].lower()
    case = (f" (card texts are case-sensitive: {fixed})"
            if fixed != t and len(t) >= 2 and fixed[:-1] in _KIND_BY_TEXT
            and fixed[-1] in COLOUR_LETTERS else "")
    if len(t) < 2 or t[-1] not in COLOUR_LETTERS:
        raise CardError(
            f"{text!r} is not a card: write a kind (1..10, C, C+1, C+2) followed by a "
            f"colour letter ({', '.join(COLOUR_LETTERS)}), e.g. 7g, 10r, C+1o{case}"
        )
    kind = _KIND_BY_TEXT.get(t[:-1])
    if kind is None:
        raise CardError(f"{text!r} is not a card: unknown kind {t[:-1]!r} (1..10, C, C+1, "
                        f"C+2){case}")
    return kind, COLOUR_LETTERS.index(t[-1])


def parse_card(text: str) -> Card:
    """The first copy of the card named by ``text`` (decks of unique cards)."""
    kind, colour = parse_kind_colour(text)
    return make_card(kind, colour)


# --- decks -------------------------------------------------------------------------

DECKS = ("standard", "alternative")


def standard_deck(colours: int = 7) -> list[Card]:
    """RULES §1: each colour holds 1..10, a ``C`` and a ``C+1`` -- except green, whose
    second special card is the ``C+2``.  ``colours`` keeps the first colours of the
    list, so green (and its ``C+2``) always stays.  7 colours = 84 cards."""
    if not 1 <= colours <= 7:
        raise ValueError(f"colours must be 1..7, not {colours}")
    deck: list[Card] = []
    for col in range(colours):
        for kind in NUMBERED:
            deck.append(make_card(kind, col))
        deck.append(make_card(CLEAR, col))
        deck.append(make_card(CLEAR2 if col == 0 else CLEAR1, col))
    return deck


def alternative_deck(colours: int = 3) -> list[Card]:
    """The 002/003/004 page's composition (RULES §1, a named alternative): for each of
    ``colours`` colours (3 by default), two copies each of 1..10, ``C`` and ``C+1``;
    plus two ``C+2`` (green).  3 colours = 74 cards."""
    if not 1 <= colours <= 7:
        raise ValueError(f"colours must be 1..7, not {colours}")
    deck: list[Card] = []
    for copy in range(2):
        for col in range(colours):
            for kind in (*NUMBERED, CLEAR, CLEAR1):
                deck.append(make_card(kind, col, copy))
        deck.append(make_card(CLEAR2, 0, copy))
    return deck


def build_deck(name: str, colours: int | None) -> list[Card]:
    """A fresh list of the named deck's cards, in deck order."""
    return list(_deck(name, colours))


@functools.lru_cache(maxsize=64)
def _deck(name: str, colours: int | None) -> tuple[Card, ...]:
    if name == "standard":
        return tuple(standard_deck(7 if colours is None else colours))
    if name == "alternative":
        return tuple(alternative_deck(3 if colours is None else colours))
    raise ValueError(f"unknown deck {name!r}: choose one of {', '.join(DECKS)}")


def parse_deck(texts: Sequence[str]) -> list[Card]:
    """Card texts in deal order -> card ids.  Repeated texts (decks holding two
    identical cards) get successive copy numbers, so every id is unique."""
    seen: dict[tuple[int, int], int] = {}
    out: list[Card] = []
    for t in texts:
        kc = parse_kind_colour(t)
        copy = seen.get(kc, 0)
        if copy >= MAX_COPIES:
            raise CardError(f"card {t} appears more than {MAX_COPIES} times in the deck")
        seen[kc] = copy + 1
        out.append(make_card(kc[0], kc[1], copy))
    return out


def number_copies(cards: Sequence[Card]) -> list[Card]:
    """The same cards with the copies of each card numbered in the order they come
    (the first ``10r`` is copy 0, the next copy 1), as ``parse_deck`` numbers them:
    a deck's order of card texts then gives the same ids whether it was shuffled
    from a seed or read from a deck file.  Decks of unique cards are unchanged."""
    if all(c < _STRIDE for c in cards):
        return list(cards)
    seen: dict[int, int] = {}
    out: list[Card] = []
    for c in cards:
        base = c % _STRIDE
        copy = seen.get(base, 0)
        seen[base] = copy + 1
        out.append(base + copy * _STRIDE)
    return out


def sort_key(card: Card) -> tuple[int, int, int]:
    """Display order: by kind, then colour order, then copy."""
    return (KIND[card], COLOUR[card], card)

