"""HTML pages of the report: one self-contained document each (its style sheet and
scripts inline, its data as inline JSON), so that it opens from ``file://`` with
no network and no server.

Owns the page skeleton and the replay viewer's page.  Everything written into a
page that came from a bot or an organiser is escaped by the caller (``frames.esc``).
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

import orjson

from .frames import Frames, esc


@cache
def asset(name: str) -> str:
    return resources.files(__package__).joinpath("assets").joinpath(name).read_text(encoding="utf-8")


def json_script(element_id: str, data: Any) -> str:
    """Data for a page's script: inline JSON that cannot end its <script> early."""
    # "<" only occurs inside JSON strings, where \u003c reads back the same
    text = orjson.dumps(data).decode().replace("<", "\\u003c")
    return f'<script id="{element_id}" type="application/json">{text}</script>'


def page(title: str, body: str, nav: list[tuple[str, str]] | None = None,
         scripts: tuple[str, ...] = (), subtitle: str = "") -> str:
    """A whole page; ``title`` and ``subtitle`` are escaped here, ``body`` is HTML."""
    links = "".join(f'<a href="{esc(href)}">{esc(text)}</a>' for text, href in nav or [])
    js = "".join(f"<script>{asset(s)}</script>" for s in scripts)
    sub = f'<div class="note" style="color:#cfd6e4">{esc(subtitle)}</div>' if subtitle else ""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        # No request may leave the page: this policy makes the browser refuse any.
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
        f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>{esc(title)}</title><style>{asset('style.css')}</style></head><body>"
        f"<header class=\"top\"><h1>{esc(title)}</h1>{sub}<nav>{links}</nav></header>"
        f"<main>{body}</main>{js}</body></html>\n"
    )


def viewer_page(fr: Frames, nav: list[tuple[str, str]] | None = None,
                others: list[tuple[str, str]] | None = None) -> str:
    """The replay viewer of one game.  ``others``: (label, href) of the same deal's
    other seatings."""
    seatings = ""
    if others:
        seatings = ('<div class="panel">the same deal, other seatings: '
                    + " · ".join(f'<a class="seating" data-href="{esc(h)}" href="{esc(h)}">'
                                 f"{esc(t)}</a>" for t, h in others)
                    + ' <span class="note">(each opens at the same turn and seat: the same cards, '
                    'played by another bot)</span></div>')
    err = f'<div class="error">{fr.error}</div>' if fr.error else ""
    body = f"""
<div class="note">{fr.header} · {esc(", ".join(fr.names))}</div>
<div class="note">result: {fr.result or "not finished"}</div>
{err}{seatings}
<div class="controls">
  <button id="first" title="Home">|◀</button><button id="back" title="Left arrow">◀◀</button>
  <button id="play" title="Space">▶ play</button><button id="fwd" title="Right arrow">▶▶</button>
  <button id="end" title="End">▶|</button>
  <input id="slider" type="range" min="0" value="0" aria-label="step">
  <form id="jump"><label>turn <input id="to-turn" type="number" min="0" style="width:5em"></label>
  <button type="submit">go</button></form>
  <label>view <select id="view"></select></label>
</div>
<div class="status">turn <b id="turn">0</b> · step <span id="step"></span>
  <span class="keys">keys: ← → step, PgUp/PgDn turn, Home/End, Space play/pause, t: turn box, v: view</span></div>
<div class="table"><div id="seats"></div>
<div class="center"><div id="pile"></div><div id="stock"></div></div></div>
<div class="panel"><div id="decision"></div><div id="faults"></div><ul id="events"></ul>
<div id="next"></div></div>
<h2>the game so far</h2><ol id="log"></ol>
{json_script("game-data", fr.to_json())}
"""
    return page(f"game {fr.game_id}", body, nav, scripts=("viewer.js",),
                subtitle=" vs ".join(fr.names))
