"""The real headless Chromium for the report's browser tests: Debian's ``chromium``
driven by Playwright for Python (``executable_path``: Playwright never downloads a
browser here), in a fresh profile, with the flags headless Chromium needs to start
cleanly on this machine.

Outside CI a missing browser or Playwright skips the browser tests; with CI=true it
fails them (a CI that silently skips its browser tests tests nothing)."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"  # Debian's package
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]

#: A card's text form (RULES §1): a kind and a colour letter.
CARD = re.compile(r"^(10|[1-9]|C|C\+1|C\+2)[grbyopk]$")


def _unavailable(why: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{why}: the browser tests cannot run, and CI=true requires them "
                    "('make test' installs chromium with apt-get when run as root)")
    pytest.skip(why)


@dataclass
class Watch:
    """What a page did: console errors, uncaught exceptions, and every request."""

    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


def open_browser(profile: Path, chromium: str = CHROMIUM) -> Iterator[Any]:
    """A persistent context on a new, empty user-data-dir (``--user-data-dir``)."""
    if not (os.path.isfile(chromium) and os.access(chromium, os.X_OK)):
        _unavailable(f"no Chromium at {chromium} (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("Playwright for Python is not installed (pip install -e '.[dev]')")
    if profile.exists():
        shutil.rmtree(profile)
    profile.mkdir(parents=True)
    with sync_playwright() as p:
        ctx = p.chromium.launch_persistent_context(
            str(profile), executable_path=chromium, headless=True, args=FLAGS,
            viewport={"width": 1200, "height": 900})
        try:
            yield ctx
        finally:
            ctx.close()


def watched_page(ctx: Any) -> tuple[Any, Watch]:
    page = ctx.new_page()
    w = Watch()
    page.on("console", lambda m: w.errors.append(f"console {m.type}: {m.text}")
            if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: w.errors.append(f"page error: {e}"))
    page.on("request", lambda r: w.requests.append(r.url))
    return page, w
