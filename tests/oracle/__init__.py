"""An independent oracle of the rules (rules.py), and the differential tests that
check the engine (referee/game/) against it."""
