"""One queued submission, checked in a process of its own (``league serve``'s
checker starts it, with a wall-clock budget, and kills its process group when the
budget is spent).

``python -m referee.league.checkjob REQUEST.json``: the request names the league,
the author, the uploaded archive and the command; the result is written, whole, to
``REQUEST.json.result`` (``{"ok", "accepted"?, "version"?, "report"?, "summary"?,
"error"?}``).  Prints nothing; a bug's traceback goes to stderr (the server keeps it
in its log folder, never in an author's reply).
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from types import FrameType
from typing import Any

from .results import LeagueError
from .run import submit
from .submission import SubmissionError


def _stop(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # unwinds: the staging folder is removed


def check(request: dict[str, Any]) -> dict[str, Any]:
    try:
        result = submit(Path(request["league"]), request["name"], Path(request["upload"]),
                        request["command"], transport=request["transport"],
                        author=request["name"])
    except (SubmissionError, LeagueError) as e:
        return {"ok": False, "error": str(e)}
    return {"ok": True, "accepted": result.accepted, "version": result.version,
            "report": result.report, "summary": result.summary()}


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGTERM, _stop)
    path = Path(argv[1])
    out = check(json.loads(path.read_text(encoding="utf-8")))
    tmp = path.with_name(path.name + ".part")
    tmp.write_text(json.dumps(out), encoding="utf-8")
    os.replace(tmp, path.with_name(path.name + ".result"))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
