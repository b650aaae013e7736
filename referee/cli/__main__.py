"""``python -m referee.cli.main``: the ``referee`` command."""

import sys

from .main import main

sys.exit(main())
