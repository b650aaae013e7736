"""Reading a league without SQL: its games (filtered by bot, opponent, losses,
faults, how they ended), an entry's record per opponent and its faults, and a bot's
own stderr for one game (cut from its per-worker log at the referee's
``==== [referee ...] game g000012, seat 1 ====`` markers).

Reads only; pure functions over the store plus the log files.
"""

from __future__ import annotations

import os
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..play.replay import RecordError, read_record, verify
from ..tournament.outcome import GameOutcome
from .config import DEFAULT_FAULT_ALERT
from .schedule import name_of
from .store import Entry, LeagueStore

_MARK = re.compile(r"^==== \[referee [0-9:.]+\] game (g\d+), seat (\d+) ====$")


@dataclass(frozen=True)
class GameRow:
    outcome: GameOutcome
    finished: str

    def line(self) -> str:
        o = self.outcome
        seats = "  ".join(f"{b}:{p}" for b, p in zip(o.seats, o.places, strict=True))
        faults = f"  faults {len(o.faults)}" if o.faults else ""
        return f"{o.game_id}  {len(o.seats)} seats  deal {o.deal:4d}  {seats}  {o.how}{faults}"


def _matches(bot: str | None, entry: str) -> bool:
    return bot is None or entry == bot or name_of(entry) == bot


def games(store: LeagueStore, *, bot: str | None = None, vs: str | None = None,
          lost: bool = False, faults: bool = False, ended: str | None = None) -> list[GameRow]:
    """The stored games, newest last.  ``bot`` and ``vs``: a name (any version) or an
    entry (``alice@2``); ``lost``: games ``bot`` did not win; ``faults``: games with a
    fault (by ``bot``, if given)."""
    finished = dict(store.conn.execute("SELECT idx, finished FROM games"))
    out = []
    for o in store.outcomes():
        mine = [s for s, b in enumerate(o.seats) if _matches(bot, b)]
        if not mine:
            continue
        if vs is not None and not any(_matches(vs, b) for s, b in enumerate(o.seats)
                                      if s not in mine):
            continue
        if lost and all(o.places[s] == 1 for s in mine):
            continue
        if faults and not any(f["seat"] in mine for f in o.faults):
            continue
        if ended is not None and o.how != ended:
            continue
        out.append(GameRow(o, finished.get(o.index, "")))
    return out


@dataclass
class Record:
    games: int = 0
    ahead: float = 0.0  # finished ahead of this opponent (level counts half)
    wins: int = 0


def record_per_opponent(store: LeagueStore, entry: str) -> dict[str, Record]:
    out: dict[str, Record] = defaultdict(Record)
    for o in store.outcomes():
        if entry not in o.seats:
            continue
        s = o.seats.index(entry)
        for t, other in enumerate(o.seats):
            if t == s:
                continue
            r = out[other]
            r.games += 1
            r.wins += o.places[s] == 1
            r.ahead += 1.0 if o.places[s] < o.places[t] else 0.5 if o.places[s] == o.places[t] else 0
    return dict(out)


def fault_rate(store: LeagueStore, entry: str) -> tuple[int, int]:
    """(games ``entry`` played, games in which it faulted)."""
    played = faulted = 0
    for o in store.outcomes():
        seats = [s for s, b in enumerate(o.seats) if b == entry]
        if seats:
            played += 1
            faulted += any(f["seat"] in seats for f in o.faults)
    return played, faulted


def safe(name: str) -> str:
    """A log file's name for a bot (as ``referee.players.external`` makes it)."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)


def log_files(league_dir: Path, entry: str) -> list[Path]:
    pat = re.compile(re.escape(safe(entry)) + r"(\.\d+)?\.stderr\.log$")
    logs = league_dir / "logs"
    if not logs.is_dir():
        return []
    return sorted(p for d in logs.iterdir() if d.is_dir() for p in d.iterdir()
                  if pat.fullmatch(p.name))


def stderr_of(league_dir: Path, entry: str, game_id: str) -> str | None:
    """What ``entry`` wrote on stderr during ``game_id`` (its lines after the game's
    marker, up to the next marker), None if no log holds the game."""
    for path in log_files(league_dir, entry):
        lines: list[str] = []
        inside = found = False
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = _MARK.match(line.rstrip("\n"))
                if m:
                    if inside:
                        break
                    inside = found = m.group(1) == game_id
                    continue
                if inside:
                    lines.append(line)
        if found:
            return "".join(lines)
    return None


def show(store: LeagueStore, league_dir: Path, name: str) -> str:
    """``league show``: an entry's versions, its record per opponent, its faults with
    game ids, where its records and logs are."""
    versions: Sequence[Entry] = store.entries(name)
    if not versions:
        known = sorted({e.name for e in store.entries()})
        raise KeyError(f"no bot {name!r} in this league"
                       + (f": its bots are {', '.join(known)}" if known else ""))
    lines = [f"{name}: {len(versions)} version(s)"]
    for e in versions:
        state = "active" if e.active else f"retired {e.retired}"
        lines.append(f"  v{e.version}  {state}  submitted {e.submitted}  content "
                     f"{e.hash[:12]}  command {' '.join(e.command)}  folder {e.folder}")
    alert = float(store.config.get("fault_alert", DEFAULT_FAULT_ALERT))
    for e in versions:
        played, faulted = fault_rate(store, e.id)
        if played and 100 * faulted > alert * played:
            lines.append(f"  ! {e.id} faulted in {faulted} of {played} games "
                         f"({100 * faulted / played:.0f}%), more than the league's {alert:g}% "
                         f"([league] fault_alert): it passed its check, its games say "
                         f"otherwise ('referee league games DIR --bot {e.id} --faults')")
    for e in versions:
        rec = record_per_opponent(store, e.id)
        lines.append(f"\n{e.id} per opponent (games, wins, finished ahead):")
        if not rec:
            lines.append("  no games yet")
        for other, r in sorted(rec.items()):
            lines.append(f"  vs {other:20s} {r.games:5d} games  {r.wins:5d} wins  "
                         f"{r.ahead:g} ahead ({100 * r.ahead / r.games:.0f}%)")
        fl = [(o.game_id, f) for o in store.outcomes() for f in o.faults
              if o.seats[f["seat"]] == e.id]
        lines.append(f"{e.id} faults: {len(fl)}")
        for gid, f in fl[:20]:
            lines.append(f"  {gid}  {f['kind']}: {f.get('detail', '')}")
        if len(fl) > 20:
            lines.append(f"  ... and {len(fl) - 20} more ('referee league games DIR --bot "
                         f"{e.id} --faults')")
        logs = log_files(league_dir, e.id)
        lines.append(f"{e.id} stderr logs (one section per game, after its '==== [referee "
                     f"...] game gNNNNNN' line): "
                     + (", ".join(os.path.relpath(p, league_dir) for p in logs) or "none yet"))
    lines.append(f"\ngame records: {league_dir / 'games'}/GAME_ID.jsonl")
    return "\n".join(lines)


def verify_league(store: LeagueStore, league_dir: Path) -> tuple[int, list[str]]:
    """Every stored game checked against its record: the record exists, re-runs
    identically under the rules (``referee.play.replay.verify``), and holds the places,
    points, seed and bots the database holds.  Returns (games checked, problems:
    one line each)."""
    problems: list[str] = []
    n = 0
    for o in store.outcomes():
        n += 1
        path = league_dir / o.record
        try:
            rec = read_record(str(path))
        except RecordError as e:
            problems.append(f"{o.game_id}: {e}")
            continue
        ok, why = verify(rec)
        if not ok:
            problems.append(f"{o.game_id}: {path.name} does not re-run identically: {why}")
            continue
        differ = [what for what, a, b in (
            ("places", list(o.places), rec.result.get("places")),
            ("points", list(o.points), rec.result.get("points")),
            ("seed", o.deal_seed, rec.head.get("seed")),
            ("bots", list(o.seats), rec.bots)) if a != b]
        if differ:
            problems.append(f"{o.game_id}: the database and {path.name} differ in "
                            f"{', '.join(differ)}")
    return n, problems
