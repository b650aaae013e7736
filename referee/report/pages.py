"""HTML pages of the report: one self-contained document each (its style sheet and
scripts inline, its data as inline JSON), so that it opens from ``file://`` with
no network and no server.

Owns the page skeleton, the templates' environment and the replay viewer's page.
The pages are Jinja2 templates (``templates/``) with autoescaping on: whatever came
from a bot or an organiser (names, commands, decisions, fault details) is passed in
as plain text and escaped by the template, never by hand; only the charts (``svg``:
``Markup`` built with MarkupSafe's ``escape``), the page's own style sheet and
scripts, and the inline JSON (``json_script``) go in as markup.  The page's
Content-Security-Policy allows exactly its own style sheet and scripts, by their
SHA-256 hashes: no ``'unsafe-inline'``, so an injected script would not run.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from functools import cache
from importlib import resources
from typing import Any

import jinja2
import orjson
from markupsafe import Markup

from .frames import Frames


@cache
def asset(name: str) -> str:
    return resources.files(__package__).joinpath("assets").joinpath(name).read_text(encoding="utf-8")


@cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader(__package__, "templates"),
        autoescape=True, undefined=jinja2.StrictUndefined,
        trim_blocks=False, keep_trailing_newline=True)


def json_script(element_id: str, data: Any) -> Markup:
    """Data for a page's script: inline JSON that cannot end its <script> early."""
    # "<" only occurs inside JSON strings, where \u003c reads back the same
    text = orjson.dumps(data).decode().replace("<", "\\u003c")
    return Markup('<script id="{}" type="application/json">').format(element_id) + \
        Markup(text) + Markup("</script>")


def _hash(text: str) -> str:
    digest = base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()
    return f"'sha256-{digest}'"


def render(template: str, *, title: str, nav: Sequence[tuple[str, str]] = (),
           scripts: Sequence[str] = (), subtitle: str = "", css: str = "",
           heading: str | None = None, stamp: str = "", **context: Any) -> str:
    """A whole page from ``templates/TEMPLATE``: ``title``, ``subtitle``, ``nav``
    (text, href) and every value in ``context`` are text (escaped by the template)
    unless they are ``Markup``; ``scripts`` name assets run on the page; ``css`` is
    extra style (the page's own, made here of figures, never of text); ``stamp``: a
    line on every page saying when and in what state it was written (a live league's
    report; empty, so that the same results give the same bytes, otherwise)."""
    style = asset("style.css") + css
    js = [asset(s) for s in scripts]
    return environment().get_template(template).render(
        title=title, heading=heading, subtitle=subtitle, nav=list(nav), stamp=stamp,
        css=Markup(style), scripts=[Markup(j) for j in js],
        # base64 and quotes: nothing to escape in an attribute
        style_hashes=Markup(_hash(style)),
        script_hashes=Markup(" ".join(_hash(j) for j in js) or "'none'"),
        **context)


def viewer_page(fr: Frames, nav: Sequence[tuple[str, str]] = (),
                others: Sequence[tuple[str, str, str]] | None = None, *,
                title: str | None = None) -> str:
    """The replay viewer of one game.  ``others``: (label, href, faults) of the same
    deal's other seatings, ``faults`` saying who faulted how ("" for none: the list
    marks a game with a fault); ``title``: the page's title (default "game ID")."""
    return render("viewer.html", title=title or f"game {fr.game_id}",
                  heading=f"game {fr.game_id}", nav=nav, scripts=("viewer.js",),
                  subtitle=" vs ".join(fr.names), fr=fr, others=list(others or ()),
                  data=json_script("game-data", fr.to_json()))
