"""``python -m referee.cli``: the ``referee`` command."""

import sys

from .main import main

sys.exit(main())
