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

from ..text.quoting import command_line, printable
from ..tournament.outcome import GameOutcome
from ..tournament.verify import check_store
from .adaptive import separation_lines
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
        if faults and not any(f.seat in mine for f in o.faults):
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
            faulted += any(f.seat in seats for f in o.faults)
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


def game_view(store: LeagueStore, league_dir: Path, game_id: str, *,
              tail: int | None = 50) -> str:
    """``league game ID``, the organiser's view of one game: its table, deal and
    seats with places and penalties, how it ended, every fault, where its record is,
    and every seat's stderr in that game (its last ``tail`` lines; None: all).
    KeyError if the league has no such game."""
    found = [o for o in store.outcomes() if o.game_id == game_id]
    if not found:
        raise KeyError(f"the league has played no game {game_id!r} ('referee league games "
                       f"DIR' lists them)")
    o = found[0]
    lines = [f"{game_id}: {len(o.seats)} seats, deal {o.deal}, {o.how} after {o.turns} "
             f"turns; record {o.record}"]
    for s, b in enumerate(o.seats):
        lines.append(f"  seat {s}  {b:24s} place {o.places[s]}  penalty {o.points[s]}")
    lines.append(f"faults: {len(o.faults)}")
    for f in o.faults:
        lines.append(f"  seat {f.seat} ({o.seats[f.seat]}) turn {f.turn}: "
                     f"{f.kind}: {f.detail} [{f.action}]")
    for s, b in enumerate(o.seats):
        text = stderr_of(league_dir, b, game_id)
        body = (text or "").rstrip("\n").split("\n") if text else []
        cut = tail is not None and len(body) > tail
        head = f"--- seat {s} ({b}) stderr in {game_id}"
        head += f": the last {tail} of {len(body)} lines ---" if cut else " ---"
        lines.append(head)
        lines += body[-tail:] if cut and tail is not None else (body or ["(nothing)"])
    return "\n".join(printable(x, keep_tabs=True) for x in lines)


def overview(store: LeagueStore, pending: int) -> str:
    """``league show`` without a name: every entry, a line each -- its active (or
    last) version, its author, when it was submitted, its games and faults so far,
    and whether it is active or withdrawn; and ``pending``, the games left to play."""
    entries = store.entries()
    if not entries:
        return "no entries yet: submit one with 'referee league submit DIR NAME FOLDER " \
               "--command \"...\"'"
    played: dict[str, int] = defaultdict(int)
    faulted: dict[str, int] = defaultdict(int)
    for o in store.outcomes():
        for seat, b in enumerate(o.seats):
            played[b] += 1
            faulted[b] += any(f.seat == seat for f in o.faults)
    by_name: dict[str, list[Entry]] = defaultdict(list)
    for e in entries:
        by_name[e.name].append(e)
    rows = []
    for name in sorted(by_name):
        vs = by_name[name]
        last = vs[-1]
        state = "active" if last.active else f"withdrawn {last.retired}"
        games = sum(played[e.id] for e in vs)
        faults = sum(faulted[e.id] for e in vs)
        rows.append(f"{name:20s} v{last.version:<3d} {state:28s} author {last.author:12s} "
                    f"{games:6d} games {faults:5d} with faults  ({len(vs)} version(s))")
    return "\n".join([*rows, *(["", *separation_lines(store, store.league_config())]),
                      f"\n{len(by_name)} entries, {pending} games pending; "
                      "'referee league show DIR NAME' for one of them"])


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
                     f"{e.hash[:12]}  command {command_line(e.command)}  folder {e.folder}")
    alert = store.league_config().fault_alert
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
              if o.seats[f.seat] == e.id]
        lines.append(f"{e.id} faults: {len(fl)}")
        for gid, f in fl[:20]:
            lines.append(f"  {gid}  {f.kind}: {f.detail}")
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
    """Every stored game checked against its record, as ``tournament verify`` checks
    a tournament's (``referee.tournament.verify.check_store``): the record exists,
    re-runs identically under the rules (``referee.play.replay.verify``), and holds
    the row of table ``games`` and every row of table ``seats``; and every record
    has its row.  Returns (games checked, problems: one line each)."""
    report = check_store(store, league_dir)
    problems = [str(f) for f in report.errors]
    # A record with no row: its row was deleted, or a run stopped between writing
    # the record and committing it (the next `league run` plays the game again).
    # Either way the database does not hold a game that was played: say so.
    problems += [f"{f.game_id}: games/{f.game_id}.jsonl has no row in the database (deleted, "
                 "or a run stopped before committing it: 'league run' plays it again)"
                 for f in report.findings if f.kind == "unrecorded"]
    return report.games, problems
