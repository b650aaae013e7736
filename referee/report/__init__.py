"""The HTML report: a self-contained static site of a tournament's (or, with the
same store, a league's) results -- standings, charts, a page per bot and a replay
viewer per game -- and the one-file replay of a single game.

Modules: ``frames`` (a record re-run into the viewer's frames, every view built by
the engine; plain text, never HTML), ``svg`` (charts drawn as inline SVG, labels
escaped through MarkupSafe), ``pages`` (the Jinja2 environment -- autoescaping on --
and the Content-Security-Policy by hashes; the viewer page), ``templates/`` (the pages'
markup), ``results`` (what a results folder holds, read once), ``site`` (the whole
site's data, page by page).  Layering: the CLI imports this package; this package imports the
tournament store and standings, ``replay`` and the engine, never the CLI.
"""

from .frames import Frames, build_frames
from .site import ReportError, write_game_html, write_site

__all__ = ["Frames", "ReportError", "build_frames", "write_game_html", "write_site"]
