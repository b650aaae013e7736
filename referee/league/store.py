"""Where a league keeps its entries, its planned games and their results: the
tournament store's SQLite schema (``referee.tournament.store``: ``games`` and
``seats``, written by ``Store.add``) in ``DIR/league.sqlite``, plus two tables of
its own.  Several processes may use one league at once (``league run --watch``,
``league submit``, ``league serve``, the browsing commands): WAL journaling and
short ``BEGIN IMMEDIATE`` transactions keep them apart.

Tables (besides the tournament's)::

    entries(name, version, hash, command, transport, folder, author, submitted, retired)
    meta: secret -- the league's secret key (hex), drawn when it is made
    planned(idx, key, tbl, deal, deal_seed, seating, seats, cancelled)
                       -- every game ever scheduled; idx is its game id's number

A game's ``idx`` is given when it is first scheduled and never reused, so its id
(``g000012``), its record and its stderr markers stay put; which game it is comes
from its ``key`` (``LeagueGame.key``), a function of the game alone.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import StorageError
from ..tournament.kinds import encode
from ..tournament.outcome import GameOutcome
from ..tournament.store import _SCHEMA, Store
from .config import LeagueConfig, read_league_config
from .schedule import LeagueGame, entry_id

DB_NAME = "league.sqlite"

_LEAGUE_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    name TEXT NOT NULL,
    version INTEGER NOT NULL,
    hash TEXT NOT NULL,
    command TEXT NOT NULL,
    transport TEXT NOT NULL,
    folder TEXT NOT NULL,
    author TEXT NOT NULL,
    submitted TEXT NOT NULL,
    retired TEXT,
    PRIMARY KEY (name, version)
);
CREATE TABLE IF NOT EXISTS planned (
    idx INTEGER PRIMARY KEY,
    key TEXT NOT NULL UNIQUE,
    tbl INTEGER NOT NULL,
    deal INTEGER NOT NULL,
    deal_seed INTEGER NOT NULL,
    seating INTEGER NOT NULL,
    seats TEXT NOT NULL,
    cancelled TEXT
);
"""


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


@dataclass(frozen=True)
class Entry:
    name: str
    version: int
    hash: str
    command: tuple[str, ...]
    transport: str
    folder: str  # relative to the league's folder
    author: str
    submitted: str
    retired: str | None

    @property
    def id(self) -> str:
        return entry_id(self.name, self.version)

    @property
    def active(self) -> bool:
        return self.retired is None

    @property
    def ident(self) -> str:
        """What the bot is, whatever its version number: its content, command and
        transport (its decks are keyed by this and, for a version identical to an
        earlier one, by which repeat it is: ``schedule.deck_idents``)."""
        text = json.dumps([self.hash, list(self.command), self.transport])
        return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Planned:
    idx: int
    key: str
    table: int
    deal: int
    deal_seed: int
    seating: int
    seats: tuple[str, ...]
    cancelled: str | None

    @property
    def game_id(self) -> str:
        return f"g{self.idx:06d}"


class LeagueStore(Store):
    """The league's database (a ``Store``, whose ``add`` and ``outcomes`` it uses)."""

    default_kind = "league"

    @classmethod
    def create(cls, league_dir: Path, config: LeagueConfig,
               secret: bytes | None = None) -> LeagueStore:
        """A new league's database, with its ``secret`` (drawn at random unless
        given: the key of its decks, seatings and game aliases)."""
        league_dir.mkdir(parents=True, exist_ok=True)
        store = cls._connect(league_dir / DB_NAME)
        with store.transaction():
            if store.meta("config") is not None:
                raise StorageError(f"{league_dir} holds a league already")
            store._set_meta("config", encode(config.kind, config.to_json()))
            store._set_meta("secret", (secret or secrets.token_bytes(32)).hex())
            store._set_meta("kind", "league")
            store._set_meta("created", now())
        return store

    @classmethod
    def open(cls, league_dir: Path) -> LeagueStore:
        path = league_dir / DB_NAME
        if not path.is_file():
            raise StorageError(f"{league_dir} holds no league (no {DB_NAME}); make one with "
                             f"'referee league new {league_dir} --config league.toml'")
        return cls._connect(path)

    @classmethod
    def _connect(cls, path: Path) -> LeagueStore:
        conn = sqlite3.connect(path, isolation_level=None, timeout=30)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA busy_timeout=30000")
        conn.executescript(_SCHEMA + _LEAGUE_SCHEMA)
        store = cls(path, conn)
        store.fill_luck()  # a league made before luck-adjusted scores: from its records
        return store

    def secret(self) -> bytes:
        """The league's secret: the key of its decks, seatings and game aliases.  It
        is kept here only (never in league.toml, never shown), so that nobody who
        reads the seed -- or a bot that reads its games -- can compute a deal.  A
        league made before it had one is given one now."""
        raw = self.meta("secret")
        if raw is None:
            with self.transaction():
                raw = self.meta("secret")
                if raw is None:
                    raw = secrets.token_bytes(32).hex()
                    self._set_meta("secret", raw)
        return bytes.fromhex(raw)

    def league_config(self) -> LeagueConfig:
        """The league's configuration, checked (``config.read_league_config``):
        StoredConfigError if it is damaged, of an unknown kind or not a league's."""
        raw = self.meta("config")
        if raw is None:
            raise StorageError(f"{self.path} holds no league configuration")
        return read_league_config(raw, self.path)

    def set_config(self, config: LeagueConfig) -> None:
        with self.transaction():
            self._set_meta("config", encode(config.kind, config.to_json()))

    # --- entries -------------------------------------------------------------------

    def entries(self, name: str | None = None) -> list[Entry]:
        q = ("SELECT name, version, hash, command, transport, folder, author, submitted, "
             "retired FROM entries")
        args: tuple[Any, ...] = ()
        if name is not None:
            q += " WHERE name = ?"
            args = (name,)
        rows = self.conn.execute(q + " ORDER BY name, version", args).fetchall()
        return [Entry(r[0], r[1], r[2], tuple(json.loads(r[3])), r[4], r[5], r[6], r[7], r[8])
                for r in rows]

    def active(self) -> list[Entry]:
        return [e for e in self.entries() if e.active]

    def next_version(self, name: str) -> int:
        row = self.conn.execute("SELECT MAX(version) FROM entries WHERE name = ?",
                                (name,)).fetchone()
        return int(row[0] or 0) + 1

    def add_entry(self, e: Entry) -> None:
        """Record ``e`` as its name's active version (in the caller's transaction):
        the previous version retires and its pending games are cancelled."""
        stamp = now()
        old = [x.id for x in self.entries(e.name) if x.active]
        self.conn.execute("UPDATE entries SET retired = ? WHERE name = ? AND retired IS NULL",
                          (stamp, e.name))
        self.conn.execute("INSERT INTO entries VALUES (?,?,?,?,?,?,?,?,NULL)",
                          (e.name, e.version, e.hash, json.dumps(list(e.command)), e.transport,
                           e.folder, e.author, e.submitted))
        for oid in old:
            self.cancel_pending_of(oid, stamp)

    def withdraw(self, name: str) -> Entry | None:
        """Retire ``name``'s active version without a new one (``league withdraw``):
        its pending games are cancelled, its played games kept.  Returns the version
        withdrawn, or None if ``name`` has no active version."""
        with self.transaction():
            current = [e for e in self.entries(name) if e.active]
            if not current:
                return None
            stamp = now()
            self.conn.execute("UPDATE entries SET retired = ? WHERE name = ? AND retired IS NULL",
                              (stamp, name))
            for e in current:
                self.cancel_pending_of(e.id, stamp)
        return current[-1]

    def cancel_pending_of(self, entry: str, stamp: str) -> None:
        rows = self.conn.execute(
            "SELECT p.idx, p.seats FROM planned p LEFT JOIN games g ON g.idx = p.idx "
            "WHERE g.idx IS NULL AND p.cancelled IS NULL").fetchall()
        gone = [(stamp, idx) for idx, seats in rows if entry in json.loads(seats)]
        self.conn.executemany("UPDATE planned SET cancelled = ? WHERE idx = ?", gone)

    # --- planned games -------------------------------------------------------------

    def planned(self) -> list[Planned]:
        rows = self.conn.execute("SELECT idx, key, tbl, deal, deal_seed, seating, seats, "
                                 "cancelled FROM planned ORDER BY idx").fetchall()
        return [Planned(r[0], r[1], r[2], r[3], r[4], r[5], tuple(json.loads(r[6])), r[7])
                for r in rows]

    def plan(self, games: Iterable[LeagueGame]) -> dict[str, int]:
        """The idx of each of ``games``, giving one to those never scheduled before
        (and taking back a cancellation: the game is wanted again)."""
        games = list(games)
        with self.transaction():
            known = {k: i for k, i in self.conn.execute("SELECT key, idx FROM planned")}
            new = [g for g in games if g.key not in known]
            start = int(self.conn.execute("SELECT COALESCE(MAX(idx), -1) + 1 FROM planned")
                        .fetchone()[0])
            for n, g in enumerate(new):
                self.conn.execute("INSERT INTO planned VALUES (?,?,?,?,?,?,?,NULL)",
                                  (start + n, g.key, g.table, g.deal, g.deal_seed, g.seating,
                                   json.dumps(list(g.seats))))
                known[g.key] = start + n
            wanted = [(known[g.key],) for g in games]
            self.conn.executemany("UPDATE planned SET cancelled = NULL WHERE idx = ? "
                                  "AND cancelled IS NOT NULL", wanted)
        return {g.key: known[g.key] for g in games}

    def played_keys(self) -> set[str]:
        return {r[0] for r in self.conn.execute(
            "SELECT p.key FROM planned p JOIN games g ON g.idx = p.idx")}

    def outcomes_where(self, idxs: Iterable[int]) -> list[GameOutcome]:
        wanted = set(idxs)
        return [o for o in self.outcomes() if o.index in wanted]
