"""The organiser's proof of the standings: every committed game checked against its
record, and every record re-run through the rules engine (``referee tournament
verify DIR``); with ``repair``, the database rebuilt from the records, which are
the source of truth.

Owns comparing a database row with its record and rebuilding the rows.  Reading
and re-running a record is ``referee.play.replay``'s; the rows are ``Store``'s.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import StorageError
from ..play.replay import Record, RecordError, read_record, verify
from .outcome import GameOutcome
from .store import DB_NAME, Store, record_problem

RECORDS = "games"


@dataclass(frozen=True)
class Finding:
    """Something wrong with one game: ``kind`` is ``missing`` (no record),
    ``truncated``, ``invalid`` (the record does not re-run identically, or cannot be
    read), ``differs`` (the row says other than its record) or ``unrecorded`` (a
    record with no row: the game will be played again on resume -- not an error)."""

    game_id: str
    kind: str
    text: str

    def __str__(self) -> str:
        return f"{self.game_id}: {self.text}"


@dataclass
class Report:
    games: int = 0  # rows checked
    scheduled: int = 0
    findings: list[Finding] = field(default_factory=list)

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.kind != "unrecorded"]

    def summary(self) -> str:
        kinds: dict[str, int] = {}
        for f in self.errors:
            kinds[f.kind] = kinds.get(f.kind, 0) + 1
        agree = self.games - len({f.game_id for f in self.errors})
        text = f"verified {self.games} of {self.scheduled} scheduled games: {agree} agree with " \
               "their records"
        words = {"missing": "with their record missing", "truncated": "with a truncated record",
                 "invalid": "whose record does not re-run identically",
                 "differs": "problems where a row differs from its record"}
        if kinds:
            text += "; " + ", ".join(f"{n} {words.get(k, k)}" for k, n in sorted(kinds.items()))
        return text


def outcome_of(rec: Record, index: int, deal: int, rel: str, worker: int | str = 0) -> GameOutcome:
    """What the store keeps of the game a record holds."""
    r = rec.result
    if r is None:
        raise RecordError(f"the record of game {rec.game_id} has no result line")
    return GameOutcome(
        index=index, game_id=rec.head.game_id or "", deal=deal,
        deal_seed=rec.head.seed, seats=tuple(rec.bots), places=r.places, points=r.points,
        how=r.how, turns=r.turns,
        # As the record says (verify checks it against the engine, not its form).
        faults=tuple(rec.faults),
        forfeits=r.forfeits, wall_time=rec.wall_time or 0.0, worker=worker, record=rel)


#: What is compared, row against record: (name, the row's value, the record's).
_FIELDS: tuple[tuple[str, Callable[[GameOutcome], Any]], ...] = (
    ("seats", lambda o: list(o.seats)),
    ("deal seed", lambda o: o.deal_seed),
    ("places", lambda o: list(o.places)),
    ("points", lambda o: list(o.points)),
    ("how the game ended", lambda o: o.how),
    ("turns", lambda o: o.turns),
    ("faults", lambda o: [f.to_dict() for f in o.faults]),
    ("forfeits", lambda o: list(o.forfeits)),
)


def _check_record(out: Path, rel: str, game_id: str) -> tuple[Record | None, Finding | None]:
    """The record, read and re-run; or what is wrong with it."""
    path = out / rel
    problem = record_problem(path)
    if problem == "missing":
        return None, Finding(game_id, "missing", f"its record {rel} is missing")
    if problem is not None:
        kind = "truncated" if problem.startswith("truncated") else "invalid"
        return None, Finding(game_id, kind, f"its record {rel} is {problem}")
    try:
        rec = read_record(str(path))
    except RecordError as e:
        return None, Finding(game_id, "invalid", f"its record cannot be read: {e}")
    ok, why = verify(rec)
    if not ok:
        return None, Finding(game_id, "invalid",
                             f"its record {rel} does not re-run identically: {why}")
    if rec.head.game_id != game_id:
        return None, Finding(game_id, "invalid",
                             f"its record {rel} holds game {rec.head.game_id!r}")
    return rec, None


def check(out: Path) -> Report:
    """Every row of the tournament in ``out`` against its record; every record
    re-run.  Raises StorageError if the database cannot be read."""
    store = Store.open_existing(out)
    try:
        return check_store(store, out, repair_hint=(
            f"'referee tournament verify {out} --repair --config CONFIG' rebuilds it "
            "from the game records"))
    finally:
        store.close()


def check_store(store: Store, out: Path, *, repair_hint: str = "") -> Report:
    """Every row of ``store`` (a tournament's or a league's: the same ``games`` and
    ``seats`` tables) against its record under ``out``, every record re-run, and
    every record without a row.  Raises StorageError if the database cannot be read."""
    try:
        report = Report(scheduled=store.scheduled)
        rows = list(store.outcomes())
        seat_rows = {(idx, seat): (bot, place, points, faults) for idx, seat, bot, place,
                     points, faults in store.conn.execute("SELECT * FROM seats")}
    except sqlite3.Error as e:
        raise StorageError(f"{store.path} cannot be read: {e}"
                           + (f"; {repair_hint}" if repair_hint else "")) from None
    seen: set[str] = set()
    for row in rows:
        report.games += 1
        seen.add(row.record)
        rec, problem = _check_record(out, row.record, row.game_id)
        if problem is not None:
            report.findings.append(problem)
            continue
        assert rec is not None
        want = outcome_of(rec, row.index, row.deal, row.record)
        for name, get in _FIELDS:
            if get(row) != get(want):
                report.findings.append(Finding(
                    row.game_id, "differs",
                    f"{name}: the database says {get(row)}, the record {get(want)}"))
        faults = [0] * len(row.seats)
        for f in want.faults:
            if 0 <= f.seat < len(faults):
                faults[f.seat] += 1
        for s, bot in enumerate(want.seats):
            have = seat_rows.get((row.index, s))
            expect = (bot, want.places[s], want.points[s], faults[s])
            if have != expect:
                report.findings.append(Finding(
                    row.game_id, "differs",
                    f"seat {s}'s row in table seats differs: the database says {have}, "
                    f"the record {expect}"))
    folder = out / RECORDS
    if folder.is_dir():
        for p in sorted(folder.glob("*.jsonl")):
            rel = os.path.join(RECORDS, p.name)
            if rel not in seen:
                report.findings.append(Finding(
                    p.stem, "unrecorded", f"{rel} has no row in the database (not "
                    "committed: the game is played again on resume)"))
    return report


@dataclass
class Repair:
    kept: int = 0  # rows rebuilt from records
    dropped: list[str] = field(default_factory=list)  # games to be played again
    left: list[str] = field(default_factory=list)  # records not placed in the schedule


def seed_in_records(out: Path) -> int | None:
    """The tournament seed the records of ``out`` were played with (a drawn seed is
    in no configuration file), None if no record says."""
    folder = out / RECORDS
    for p in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        with contextlib.suppress(OSError, ValueError):
            with open(p, encoding="utf-8") as f:
                head = json.loads(f.readline())
            if isinstance(head.get("tournament_seed"), int):
                return int(head["tournament_seed"])
    return None


def repair(out: Path, schedule_of: Callable[[], dict[int, int]] | None = None,
           fresh: Callable[[], Store] | None = None) -> Repair:
    """Rebuild the rows of ``out``'s database from its records: a row for every
    record that re-runs identically, none for the others (they are played again on
    resume).  ``schedule_of`` (index -> deal, from the configuration) places records
    without a row; ``fresh`` makes a new database when the old one cannot be read."""
    result = Repair()
    try:
        store = Store.create_or_resume_existing(out)
        rows = {o.index: o for o in store.outcomes()}
    except (StorageError, sqlite3.Error) as e:
        if fresh is None:
            raise StorageError(f"{out / DB_NAME} cannot be read: give the tournament's "
                             "configuration file with --config to rebuild it from the "
                             f"records ({str(e).split(' (')[0]})") from None
        damaged = out / DB_NAME
        for extra in ("", "-wal", "-shm"):
            p = Path(str(damaged) + extra)
            if p.is_file() or p.is_dir():
                os.replace(p, str(p) + ".damaged")
        store = fresh()
        rows = {}
    try:
        deal_of_seed = {o.deal_seed: o.deal for o in rows.values()}
        deals = schedule_of() if schedule_of is not None else {}
        rebuilt: list[GameOutcome] = []
        folder = out / RECORDS
        names = sorted(folder.glob("*.jsonl")) if folder.is_dir() else []
        for p in names:
            rel = os.path.join(RECORDS, p.name)
            try:
                index = int(p.stem[1:])
            except ValueError:
                continue
            rec, problem = _check_record(out, rel, p.stem)
            if rec is None:
                result.dropped.append(p.stem)
                continue
            old = rows.get(index)
            deal = old.deal if old is not None else deals.get(
                index, deal_of_seed.get(rec.head.seed, -1))
            if deal < 0:
                result.left.append(p.stem)
                continue
            rebuilt.append(outcome_of(rec, index, deal, rel, old.worker if old else 0))
        result.dropped += [o.game_id for i, o in rows.items()
                           if not (out / o.record).is_file() and o.game_id not in result.dropped]
        store.replace_all(rebuilt)
        result.kept = len(rebuilt)
    finally:
        store.close()
    return result
