"""A missing browser skips the browser tests on a developer's machine, and fails
them in CI (CI=true): a CI that skips its browser tests tests nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.report.browser import open_browser

pytestmark = pytest.mark.slow


def test_a_missing_chromium_fails_under_ci(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true requires them"):
        next(open_browser(tmp_path / "p", str(tmp_path / "no-chromium")))


def test_a_missing_chromium_skips_outside_ci(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no Chromium at"):
        next(open_browser(tmp_path / "p", str(tmp_path / "no-chromium")))
