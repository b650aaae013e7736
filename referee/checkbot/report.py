"""check-bot's report: one check per row (pass, fail or skip), the root causes of the
failures, and its rendering -- one line per cause, the pass/fail table, a transcript
for each cause.  What the bot wrote is shown, never obeyed by the terminal.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from tabulate import tabulate

from ..text.quoting import command_line, printable

PASS, FAIL, SKIP = "PASS", "FAIL", "skip"
TRANSCRIPT_LINES = 24  # lines of transcript shown with a failure
LINE_CHARS = 240  # a transcript line is cut to this width


CAUSE_CHARS = 200  # a root cause's line is cut to this width (in full with its transcript)


def cut(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 3] + "..."



# --- the report ------------------------------------------------------------------------


@dataclass
class Check:
    name: str
    status: str = SKIP
    detail: str = ""
    transcript: list[str] = field(default_factory=list)
    causes: list[str] = field(default_factory=list)  # keys of Report.causes

    def passed(self, detail: str) -> None:
        if self.status != FAIL:
            self.status, self.detail = PASS, detail

    def failed(self, detail: str, transcript: Sequence[str] = (), cause: str = "") -> None:
        """Fail the row; ``cause`` is the key of the root cause it comes from (see
        ``Report.cause``; default: a cause of its own, this row's detail)."""
        if self.status != FAIL:  # the first failure is the one worth reading
            self.status, self.detail, self.transcript = FAIL, detail, list(transcript)
        key = cause or f"row:{self.name}"
        if key not in self.causes:
            self.causes.append(key)


@dataclass
class Cause:
    """One root cause: what the bot did wrong, once, however many rows it fails."""

    text: str
    transcript: list[str] = field(default_factory=list)


@dataclass
class Report:
    command: list[str]
    transport: str
    checks: list[Check] = field(default_factory=list)
    sandbox: str = ""  # Sandbox.summary() of what the bot ran in
    hints: list[str] = field(default_factory=list)  # what the sandbox stopped, in words
    causes: dict[str, Cause] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return all(c.status != FAIL for c in self.checks)

    def check(self, name: str) -> Check:
        for c in self.checks:
            if c.name == name:
                return c
        c = Check(name)
        self.checks.append(c)
        return c

    def cause(self, key: str, text: str, transcript: Sequence[str] = ()) -> str:
        """Register a root cause (the first text and transcript given for ``key``
        stay); returns ``key`` for ``Check.failed``."""
        self.causes.setdefault(key, Cause(text, list(transcript)))
        return key

    def _numbered(self) -> list[tuple[int, Cause]]:
        """The root causes of the failed rows, in the order of the rows, numbered."""
        keys: list[str] = []
        for c in self.checks:
            if c.status == FAIL:
                keys += [k for k in c.causes if k not in keys]
        out: list[tuple[int, Cause]] = []
        for k in keys:
            cause = self.causes.get(k)
            if cause is None:  # a row's own cause
                row = next(c for c in self.checks if f"row:{c.name}" == k)
                cause = Cause(f"{row.name}: {row.detail}", row.transcript)
            out.append((len(out) + 1, cause))
        return out

    def _index(self) -> dict[str, int]:
        keys = [k for c in self.checks if c.status == FAIL for k in c.causes]
        order: dict[str, int] = {}
        for k in keys:
            order.setdefault(k, len(order) + 1)
        return order

    def table(self) -> str:
        index = self._index()
        rows = []
        for c in self.checks:
            status = c.status
            if c.status == FAIL and c.causes:
                status += " (" + ", ".join(str(index[k]) for k in c.causes) + ")"
            rows.append((c.name, status, c.detail))
        return str(tabulate(rows, headers=["check", "result", "detail"], tablefmt="simple",
                            maxcolwidths=[None, None, 70]))

    def render(self) -> str:
        out = [f"check-bot: {command_line(self.command)} over {self.transport}"]
        if self.sandbox:
            out.append(self.sandbox)
        for h in self.hints:
            out.append(f"sandbox: the bot {h}")
        out.append("")
        causes = self._numbered()
        if causes:
            out.append(f"{len(causes)} root cause{'s' if len(causes) > 1 else ''} "
                       "(the rows below that fail from each give its number):")
            out += [f"  {i}. {cut(c.text, CAUSE_CHARS)}" for i, c in causes]
            out.append("")
        out.append(self.table())
        for i, c in causes:
            out += ["", f"--- cause {i}: {c.text}"]
            out += [f"    {line}" for line in c.transcript] or ["    (no transcript)"]
        failed = sum(c.status == FAIL for c in self.checks)
        passed = sum(c.status == PASS for c in self.checks)
        skipped = len(self.checks) - failed - passed
        tail = f"{passed} of {len(self.checks)} checks passed"
        tail += f", {failed} failed" if failed else ""
        tail += f", {skipped} skipped" if skipped else ""
        out += ["", (f"FAILED ({len(causes)} root cause{'s' if len(causes) != 1 else ''}): "
                     if failed else "PASSED: ") + tail]
        # What the bot wrote is shown, never obeyed by the terminal.
        return "\n".join(printable(line) for text in out for line in text.split("\n"))


