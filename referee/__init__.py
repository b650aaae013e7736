"""updown-referee: a referee and tournament runner for the card game 3UP 3DOWN."""

__version__ = "0.1.0"
