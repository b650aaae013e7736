"""The phases of a game, by number, and their names in observations.

Its own module so that the state machine (``state``), the observations
(``observe``) and the illegal-decision messages (``explain``) share one definition:
``state`` imports the other two, and they import only this.
"""

from __future__ import annotations

SETUP = 0
PLAYING = 1
SWAPPING = 2
OVER = 3
#: An observation's ``phase``, by phase number.
PHASE_NAMES = ("setup", "play", "swap", "over")
