"""Errors raised by the rules engine.

Owns the engine's exception types.  ``IllegalDecision`` is what a bot's bad
decision produces (the referee turns it into a recorded fault); ``ConfigError`` is a
bad game configuration (the user's mistake, reported in one line).

    GameError
     +-- ConfigError        a configuration or deck the rules refuse
     +-- IllegalDecision    a decision the rules forbid (names the rule)
     +-- NotYourTurn        a decision from a seat that is not to decide
"""

from __future__ import annotations

from .. import errors
from ..errors import BotError, RefereeError


class GameError(RefereeError):
    """Base class of the engine's errors."""


class ConfigError(GameError, errors.ConfigError, ValueError):
    """A game configuration the rules refuse; the message says what would be right."""


class IllegalDecision(GameError, BotError):
    """A decision the rules forbid.  ``rule`` cites the section it breaks."""

    def __init__(self, message: str, rule: str = "") -> None:
        super().__init__(f"{message} ({rule})" if rule else message)
        self.rule = rule
        self.detail = message


class NotYourTurn(IllegalDecision):
    """A decision from a seat that has nothing to decide (RULES §8)."""
