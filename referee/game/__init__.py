"""The rules engine of 3UP 3DOWN: pure, seeded, fast.

Imports nothing that does I/O, reads a clock or uses global randomness.
"""

from .cards import Card, card_text, parse_card, parse_deck
from .config import VARIANTS, GameConfig
from .decisions import Decision, DecisionSyntaxError, parse_decision
from .errors import ConfigError, GameError, IllegalDecision, NotYourTurn
from .state import HOWS, STOPS, Game, GameEnd, How, Stop

__all__ = [
    "HOWS",
    "STOPS",
    "VARIANTS",
    "Card",
    "ConfigError",
    "Decision",
    "DecisionSyntaxError",
    "Game",
    "GameConfig",
    "GameError",
    "How",
    "GameEnd",
    "IllegalDecision",
    "NotYourTurn",
    "Stop",
    "card_text",
    "parse_card",
    "parse_decision",
    "parse_deck",
]
