"""Where a tournament's results live: a SQLite file in the output folder, one row
per finished game, committed the moment the game is reported, next to the games'
JSONL records (written and synced by the worker before it reports the game).

Owns the database schema, the refusal to resume a tournament whose configuration
changed, and reading results back.  Only the referee's main process writes; any
number of readers (``referee tournament standings`` during a run) may read, which
WAL journaling allows.  Knows nothing of schedules, workers or standings.

Tables::

    meta(key, value)            config (JSON: one of ``kinds``, with its ``kind``), name,
                                games (schedule size), created
    games(idx, game_id, deal, deal_seed, seats, places, points, how, turns,
          faults, forfeits, wall_time, worker, record, finished)
    seats(idx, seat, bot, place, points, faults)      -- the same, one row per seat,
                                                      -- for ad-hoc SQL queries
    luck(idx, adjusted)         the game's luck-adjusted scores (``play.luck``), JSON
                                [share by seat, win by seat, points by seat]; a store
                                made before them gets the table, and the scores from
                                the records, when it is resumed (``fill_luck``)
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from ..errors import StorageError
from ..game import GameError
from ..play.luck import SCORES, LuckSetting, Value, file_luck, raw_scores
from ..play.runner import Fault
from ..stats.sprt import Json
from .kinds import Kind, Settings, StoredConfigError, decode, encode, read_settings
from .outcome import GameOutcome

DB_NAME = "tournament.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS games (
    idx INTEGER PRIMARY KEY,
    game_id TEXT NOT NULL UNIQUE,
    deal INTEGER NOT NULL,
    deal_seed INTEGER NOT NULL,
    seats TEXT NOT NULL,
    places TEXT NOT NULL,
    points TEXT NOT NULL,
    how TEXT NOT NULL,
    turns INTEGER NOT NULL,
    faults TEXT NOT NULL,
    forfeits TEXT NOT NULL,
    wall_time REAL NOT NULL,
    worker INTEGER NOT NULL,
    record TEXT NOT NULL,
    finished TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS seats (
    idx INTEGER NOT NULL REFERENCES games(idx),
    seat INTEGER NOT NULL,
    bot TEXT NOT NULL,
    place INTEGER NOT NULL,
    points INTEGER NOT NULL,
    faults INTEGER NOT NULL,
    PRIMARY KEY (idx, seat)
);
CREATE INDEX IF NOT EXISTS seats_bot ON seats(bot);
CREATE TABLE IF NOT EXISTS luck (
    idx INTEGER PRIMARY KEY REFERENCES games(idx),
    adjusted TEXT NOT NULL
);
"""


class Store:
    #: The kind of configuration a store of this class held before the kinds were
    #: written in it (``kinds.decode``).
    default_kind: Kind = "tournament"

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self.conn = conn

    # --- opening -----------------------------------------------------------------

    @classmethod
    def create_or_resume(cls, output_dir: Path, settings: Settings, name: str,
                         games: int, schedule_digest: str = "",
                         meta: dict[str, str] | None = None) -> Store:
        """Open the tournament (or match: ``settings``' kind) in ``output_dir``,
        creating it if new.  Refuses (with the first differing setting named) if the
        folder holds another tournament, or a match where a tournament is run (or
        the other way round), or the same configuration now schedules other games
        (another referee version), since resuming would then mix two tournaments."""
        try:
            output_dir.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise StorageError(f"cannot make the output folder {output_dir}: "
                             f"{e.strerror or e}") from None
        path = output_dir / DB_NAME
        conn: sqlite3.Connection | None = None
        try:
            conn = sqlite3.connect(path, isolation_level=None)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")  # a reported game survives a power cut
            conn.execute("PRAGMA busy_timeout=10000")
            conn.executescript(_SCHEMA)
            store = cls(path, conn)
            stored = store.meta("config")
            if stored is None:
                with store.transaction():
                    store._set_meta("config", encode(settings.kind, settings.to_json()))
                    store._set_meta("name", name)
                    store._set_meta("games", str(games))
                    store._set_meta("schedule", schedule_digest)
                    store._set_meta("created",
                                    time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
                    for k, v in (meta or {}).items():
                        store._set_meta(k, v)
        except sqlite3.Error as e:
            if conn is not None:
                conn.close()
            raise _unreadable(path, e) from None
        if stored is not None:
            try:
                kind, old = decode(stored, path, cls.default_kind)
            except StoredConfigError:
                conn.close()
                raise
            if kind != settings.kind:
                conn.close()
                raise StorageError(f"{output_dir} holds a {kind}, not a {settings.kind}: "
                                   "choose another output folder")
            config = settings.to_json()
            if old != config:
                conn.close()
                raise StorageError(
                    f"{output_dir} holds a tournament with another configuration "
                    f"({_first_difference(old, config)}); run it with its original "
                    f"configuration to resume, or choose another output folder")
            before = store.scheduled
            if (store.meta("schedule") or "") != schedule_digest or before != games:
                conn.close()
                raise StorageError(
                    f"{output_dir} holds this tournament as scheduled by another version of "
                    f"the referee ({before} games then, {games} now, or other games); finish "
                    "it with that version, or choose another output folder")
            store.fill_luck()
        return store

    def lock(self) -> None:
        """Hold the folder for this process (released when it exits, however it
        exits): two referees playing the same games would only waste their time."""

        self._lock = open(self.path.parent / "lock", "w")  # noqa: SIM115 (held open)
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._lock.close()
            self.conn.close()
            raise StorageError(f"{self.path.parent} is in use by another referee running this "
                             "tournament; wait for it, or stop it and run again") from None
        self._lock.write(str(os.getpid()))
        self._lock.flush()

    @staticmethod
    def in_use(output_dir: Path) -> bool:
        """Is a referee running the tournament in ``output_dir`` now (it holds the
        folder's lock, ``lock``)?"""
        try:
            with open(output_dir / "lock", "a") as f:
                try:
                    fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    return True
                fcntl.flock(f, fcntl.LOCK_UN)
                return False
        except OSError:
            return False

    @classmethod
    def stored_config(cls, output_dir: Path) -> Settings | None:
        """The configuration of the tournament (or match) in ``output_dir``, None if
        there is none yet; StoredConfigError if it cannot be read."""
        if not (output_dir / DB_NAME).exists():
            return None
        store = cls.open_existing(output_dir)
        try:
            return store.settings if store.meta("config") is not None else None
        except sqlite3.Error as e:
            raise _unreadable(output_dir / DB_NAME, e) from None
        finally:
            store.close()

    @classmethod
    def open_existing(cls, output_dir: Path) -> Store:
        """Open for reading (standings); works while a run is writing."""
        path = output_dir / DB_NAME
        if not path.is_file():
            raise StorageError(f"{output_dir} holds no tournament (no {DB_NAME})")
        try:
            conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
        except sqlite3.Error as e:
            raise _unreadable(path, e) from None
        store = cls(path, conn)
        try:
            conn.execute("PRAGMA busy_timeout=10000")
            if store.meta("config") is None:
                raise StorageError(f"{path} holds no tournament configuration: it was not "
                                 "made by 'referee tournament run', or it is damaged")
            conn.execute("SELECT COUNT(*) FROM games").fetchone()
        except sqlite3.Error as e:
            conn.close()
            raise _unreadable(path, e) from None
        except StorageError:
            conn.close()
            raise
        return store

    @classmethod
    def create_or_resume_existing(cls, output_dir: Path) -> Store:
        """Open an existing tournament for writing, whatever its configuration
        (``tournament verify --repair``).  StorageError if it cannot be read."""
        check = cls.open_existing(output_dir)
        check.close()
        path = output_dir / DB_NAME
        try:
            conn = sqlite3.connect(path, isolation_level=None)
            conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA busy_timeout=10000")
        except sqlite3.Error as e:
            raise _unreadable(path, e) from None
        return cls(path, conn)

    def replace_all(self, outcomes: list[GameOutcome]) -> None:
        """Every game row replaced by ``outcomes``, in one transaction."""
        try:
            with self.transaction():
                self.conn.execute("DELETE FROM luck")
                self.conn.execute("DELETE FROM seats")
                self.conn.execute("DELETE FROM games")
                for o in outcomes:
                    self._insert(o)
        except sqlite3.Error as e:
            raise StorageError(f"cannot rewrite {self.path}: {e}") from None

    def close(self) -> None:
        self.conn.close()
        lock = getattr(self, "_lock", None)
        if lock is not None:
            lock.close()

    # --- meta --------------------------------------------------------------------

    def meta(self, key: str) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def _set_meta(self, key: str, value: str) -> None:
        self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    @property
    def settings(self) -> Settings:
        """The tournament's or match's configuration (``kinds``), checked:
        StoredConfigError if it is of another kind, damaged or unknown."""
        raw = self.meta("config")
        if raw is None:
            raise StorageError(f"{self.path} holds no tournament configuration")
        return read_settings(raw, self.path, self.default_kind)

    @property
    def scheduled(self) -> int:
        return int(self.meta("games") or 0)

    # --- games -------------------------------------------------------------------

    class _Tx:
        def __init__(self, conn: sqlite3.Connection) -> None:
            self.conn = conn

        def __enter__(self) -> None:
            self.conn.execute("BEGIN IMMEDIATE")

        def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
            if exc_type is None:
                self.conn.execute("COMMIT")
            else:
                # SQLite may have rolled back already (a full disk): the error that
                # did it is the one to report.
                with contextlib.suppress(sqlite3.Error):
                    self.conn.execute("ROLLBACK")

    def transaction(self) -> Store._Tx:
        return Store._Tx(self.conn)

    def add(self, o: GameOutcome) -> None:
        """Commit one finished game (durably, before returning).  A game already
        stored is left as it is.  StorageError when it cannot be (a full disk): the
        transaction is rolled back, what was committed before stays."""
        self.add_all([o])

    def add_all(self, outcomes: list[GameOutcome]) -> None:
        """Commit several games in one transaction: all of them or none (a match
        commits a duplicate set whole, so that a resumed test never holds half of
        one).  Games already stored are left as they are.  StorageError as ``add``."""
        try:
            with self.transaction():
                for o in outcomes:
                    self._insert(o)
        except sqlite3.Error as e:
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute("ROLLBACK")
            ids = ", ".join(o.game_id for o in outcomes[:3]) + (" ..." if len(outcomes) > 3 else "")
            raise StorageError(f"cannot save game{'s' if len(outcomes) > 1 else ''} {ids} in "
                             f"{self.path}: {e}; the games saved before are kept: make room "
                             "(or fix the folder) and run the same command again to "
                             "resume") from None

    def _insert(self, o: GameOutcome) -> None:
        cur = self.conn.execute(
            "INSERT OR IGNORE INTO games VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (o.index, o.game_id, o.deal, o.deal_seed, json.dumps(o.seats),
             json.dumps(o.places), json.dumps(o.points), o.how, o.turns,
             json.dumps([f.to_dict() for f in o.faults]), json.dumps(o.forfeits), o.wall_time,
             o.worker, o.record,
             time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())))
        if cur.rowcount:
            faults = [0] * len(o.seats)
            for f in o.faults:
                faults[f.seat] += 1
            self.conn.executemany(
                "INSERT INTO seats VALUES (?,?,?,?,?,?)",
                [(o.index, s, o.seats[s], o.places[s], o.points[s], faults[s])
                 for s in range(len(o.seats))])
            if o.adjusted is not None:
                self.conn.execute("INSERT OR REPLACE INTO luck VALUES (?, ?)",
                                  (o.index, json.dumps(o.adjusted)))

    def forget_unrecorded(self) -> list[str]:
        """Delete the rows of committed games whose record file is missing or cut
        short (so that they are played again); their game ids."""
        bad = [(idx, gid) for idx, gid, rel in
               self.conn.execute("SELECT idx, game_id, record FROM games ORDER BY idx")
               if record_problem(self.path.parent / rel) is not None]
        if bad:
            try:
                with self.transaction():
                    for idx, _ in bad:
                        self.conn.execute("DELETE FROM luck WHERE idx = ?", (idx,))
                        self.conn.execute("DELETE FROM seats WHERE idx = ?", (idx,))
                        self.conn.execute("DELETE FROM games WHERE idx = ?", (idx,))
            except sqlite3.Error as e:
                raise StorageError(f"cannot update {self.path}: {e}") from None
        return [gid for _, gid in bad]

    def done(self) -> set[int]:
        return {r[0] for r in self.conn.execute("SELECT idx FROM games")}

    def count(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM games").fetchone()[0])

    def outcomes(self) -> Iterator[GameOutcome]:
        """Every stored game, in schedule order.  A game stored without its
        luck-adjusted scores (by a referee older than them) gets them from its record
        (``fill_luck`` keeps them)."""
        has_luck = self._has_luck()
        cur = self.conn.execute(
            "SELECT g.idx, game_id, deal, deal_seed, seats, places, points, how, turns, faults, "
            "forfeits, wall_time, worker, record, "
            + ("l.adjusted FROM games g LEFT JOIN luck l ON l.idx = g.idx " if has_luck
               else "NULL FROM games g ")
            + "ORDER BY g.idx")
        for r in cur.fetchall():
            o = GameOutcome(
                index=r[0], game_id=r[1], deal=r[2], deal_seed=r[3],
                seats=tuple(json.loads(r[4])), places=tuple(json.loads(r[5])),
                points=tuple(json.loads(r[6])), how=r[7], turns=r[8],
                faults=tuple(Fault.as_stored(f) for f in json.loads(r[9])),
                forfeits=tuple(json.loads(r[10])),
                wall_time=r[11], worker=r[12], record=r[13],
                adjusted=None if r[14] is None else tuple(tuple(x) for x in json.loads(r[14])))
            if o.adjusted is None:
                o = dataclasses.replace(o, adjusted=self._luck_from_record(o))
            yield o

    def _has_luck(self) -> bool:
        return self.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'luck'").fetchone() is not None

    def _luck_from_record(self, o: GameOutcome, value: Value | None = None
                          ) -> tuple[tuple[float, ...], ...] | None:
        """The luck-adjusted scores from the game's record file (by ``value``, the
        shipped linear V by default); None if it cannot be read (the standings then
        count that game's raw scores)."""
        try:
            luck = file_luck(self.path.parent / o.record, value)
        except (OSError, ValueError, KeyError, TypeError, GameError):
            return None
        # The standings' places (forfeits counted) may differ from the rules' own.
        raw = raw_scores(o.places, o.points)
        return tuple(tuple(round(raw[i][s] - luck.corrections[i][s], 6)
                           for s in range(len(o.seats))) for i in range(len(SCORES)))

    def luck_setting(self) -> LuckSetting:
        """The value function the stored adjusted scores were computed with."""
        text = self.meta("luck_value")
        try:
            return LuckSetting.parse(text) if text else LuckSetting()
        except ValueError:
            return LuckSetting()

    def set_luck_setting(self, setting: LuckSetting) -> None:
        with self.transaction():
            self._set_meta("luck_value", setting.describe())

    def rescore(self, setting: LuckSetting, builtins: Callable[[Sequence[str]], Sequence[str | None]],
                progress: Callable[[int, int], None] | None = None) -> int:
        """Compute every stored game's luck-adjusted scores again with ``setting``'s
        value function (``builtins``: each seat's built-in bot, for rollouts that play
        a built-in bot by its own policy) and keep them, and the setting; how many
        games.  A game whose record cannot be read keeps no adjusted scores (its raw
        ones count).  ``progress(done, total)`` after each game."""
        games = [o for o in self.outcomes()]
        rows = []
        for i, o in enumerate(games):
            adj = self._luck_from_record(o, setting.value_for(builtins(o.seats)))
            if adj is not None:
                rows.append((o.index, json.dumps(adj)))
            if progress is not None:
                progress(i + 1, len(games))
        try:
            with self.transaction():
                self.conn.execute("CREATE TABLE IF NOT EXISTS luck (idx INTEGER PRIMARY KEY "
                                  "REFERENCES games(idx), adjusted TEXT NOT NULL)")
                self.conn.execute("DELETE FROM luck")
                self.conn.executemany("INSERT OR REPLACE INTO luck VALUES (?, ?)", rows)
                self._set_meta("luck_value", setting.describe())
        except sqlite3.Error as e:
            raise StorageError(f"cannot update {self.path}: {e}") from None
        return len(games)

    def fill_luck(self) -> int:
        """Store the luck-adjusted scores of the games stored without them (a store
        made by an older referee, resumed); how many."""
        if not self._has_luck() or not self.conn.execute(
                "SELECT COUNT(*) FROM games g LEFT JOIN luck l ON l.idx = g.idx "
                "WHERE l.idx IS NULL").fetchone()[0]:
            return 0
        missing = list(self.outcomes())
        have = {r[0] for r in self.conn.execute("SELECT idx FROM luck")}
        rows = [(o.index, json.dumps(o.adjusted)) for o in missing
                if o.index not in have and o.adjusted is not None]
        if rows:
            try:
                with self.transaction():
                    self.conn.executemany("INSERT OR REPLACE INTO luck VALUES (?, ?)", rows)
            except sqlite3.Error as e:
                raise StorageError(f"cannot update {self.path}: {e}") from None
        return len(rows)


def _unreadable(path: Path, e: sqlite3.Error) -> StorageError:
    return StorageError(
        f"{path} cannot be used: {e} (damaged, not a tournament database, or not "
        f"readable); 'referee tournament verify {path.parent} --repair --config CONFIG' "
        "rebuilds it from the game records, or choose another output folder")


def record_problem(path: Path) -> str | None:
    """What is wrong with a game record file, or None: missing, or cut short (it must
    end with its result line and a newline, as the referee writes it)."""
    try:
        with open(path, "rb") as f:
            size = f.seek(0, os.SEEK_END)
            f.seek(max(0, size - 65536))
            tail = f.read()
    except FileNotFoundError:
        return "missing"
    except OSError as e:
        return f"unreadable ({e.strerror or e})"
    if not tail.endswith(b"\n"):
        return "truncated (it does not end with a complete line)"
    last = tail.rstrip(b"\n").rsplit(b"\n", 1)[-1]
    try:
        row = json.loads(last)
    except ValueError:
        return "truncated (its last line is not JSON)"
    if not isinstance(row, dict) or row.get("type") != "result":
        return "truncated (it has no result line at its end)"
    return None


def _first_difference(old: Json, new: Json, path: str = "") -> str:
    """Names the first setting that differs, e.g. ``seed: 1 -> 2``."""
    if isinstance(old, dict) and isinstance(new, dict):
        for k in sorted(set(old) | set(new)):
            if old.get(k) != new.get(k):
                return _first_difference(old.get(k), new.get(k), f"{path}.{k}" if path else k)
    if isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            if a != b:
                return _first_difference(a, b, f"{path}[{i}]")
    return f"{path or 'configuration'}: was {json.dumps(old)}, now {json.dumps(new)}"
