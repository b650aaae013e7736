"""Game configuration: players, deck, variants, turn limit (RULES §1, §4, §9).

Owns ``GameConfig`` and the names of the variants.  Must not import anything doing
I/O, a clock or global randomness.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .cards import DECKS, build_deck
from .errors import ConfigError

#: Variant names (RULES §9), each off by default.  The smaller deck (§9.9) is the
#: ``colours`` setting, not a flag.
VARIANTS = (
    "play_out",
    "may_decline",
    "ones_reverse",
    "match_scoring",
    "swap_piles",
    "four_of_a_colour",
    "choose_for_others",
    "draw_once_per_clear",
)

MIN_PLAYERS = 2
MAX_PLAYERS = 6
CARDS_PER_PLAYER = 9


@dataclass(frozen=True)
class GameConfig:
    """What a game is played with.  ``colours=None`` means the deck's default (7 for
    the standard deck, 3 for the alternative one)."""

    players: int = 2
    variants: frozenset[str] = field(default_factory=frozenset)
    colours: int | None = None
    deck: str = "standard"
    turn_limit: int = 1000

    def __post_init__(self) -> None:
        object.__setattr__(self, "variants", frozenset(self.variants))
        self.validate()

    def validate(self) -> None:
        if not isinstance(self.players, int) or not MIN_PLAYERS <= self.players <= MAX_PLAYERS:
            raise ConfigError(
                f"players must be {MIN_PLAYERS} to {MAX_PLAYERS}, not {self.players!r} (RULES §2)"
            )
        unknown = sorted(self.variants - set(VARIANTS))
        if unknown:
            raise ConfigError(
                f"unknown variant {', '.join(unknown)}: choose from {', '.join(VARIANTS)} (RULES §9)"
            )
        if self.deck not in DECKS:
            raise ConfigError(f"unknown deck {self.deck!r}: choose one of {', '.join(DECKS)} (RULES §1)")
        if self.colours is not None and (
            not isinstance(self.colours, int) or not 1 <= self.colours <= 7
        ):
            raise ConfigError(f"colours must be 1 to 7, not {self.colours!r} (RULES §1)")
        if not isinstance(self.turn_limit, int) or self.turn_limit < 1:
            raise ConfigError(f"turn_limit must be a positive whole number, not {self.turn_limit!r}")
        size = len(self.deck_cards())
        if size < CARDS_PER_PLAYER * self.players:
            raise ConfigError(
                f"a deck of {size} cards is too small for {self.players} players: it must hold at "
                f"least {CARDS_PER_PLAYER} per player ({CARDS_PER_PLAYER * self.players}); "
                f"use more colours or fewer players (RULES §1)"
            )

    def deck_cards(self) -> list[int]:
        return build_deck(self.deck, self.colours)

    def has(self, variant: str) -> bool:
        return variant in self.variants

    def to_dict(self) -> dict[str, object]:
        return {
            "players": self.players,
            "variants": sorted(self.variants),
            "colours": self.colours,
            "deck": self.deck,
            "turn_limit": self.turn_limit,
        }

    @classmethod
    def from_dict(cls, d: dict[str, object]) -> GameConfig:
        allowed = {"players", "variants", "colours", "deck", "turn_limit"}
        extra = sorted(set(d) - allowed)
        if extra:
            raise ConfigError(f"unknown configuration key {', '.join(extra)}: expected {', '.join(sorted(allowed))}")
        kw: dict[str, object] = dict(d)
        if "variants" in kw:
            v = kw["variants"]
            if not isinstance(v, (list, tuple, set, frozenset)):
                raise ConfigError("variants must be a list of variant names")
            kw["variants"] = frozenset(str(x) for x in v)
        return cls(**kw)  # type: ignore[arg-type]
