"""One ``referee play`` session: a game or a match among the seats given, and its result.

Owns: reading deck files, the match loop (the same players, one game after another,
each with its own seed), the match standings (RULES §5, §9.4: fewest total penalty
points wins, ties share a place), and the machine-readable summary.  The CLI parses
and prints; this module plays.  Players are made by the caller (``botspec``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..game import Game, GameConfig
from ..game.cards import CardError, parse_deck
from ..game.state import competition_ranks
from .runner import FaultPolicy, GameRecord, Player, TimeControl, run_game


class DeckFileError(InputError, ValueError):
    """A deck file that cannot be used; the message says where and why."""


def read_deck_file(path: str) -> list[int]:
    """Card texts in deal order (first card = top of the deck, RULES §2), separated
    by whitespace or newlines; ``#`` starts a comment to the end of the line."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        raise DeckFileError(f"no such deck file: {path}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise DeckFileError(f"cannot read the deck file {path}: {e}") from None
    texts: list[str] = []
    where: list[int] = []
    for i, line in enumerate(lines, 1):
        words = line.split("#", 1)[0].split()
        texts += words
        where += [i] * len(words)
    if not texts:
        raise DeckFileError(f"the deck file {path} lists no cards: write card texts such as "
                            "7g 10r Cy C+1o C+2g in deal order")
    for t, line_no in zip(texts, where, strict=True):
        try:
            parse_deck([t])
        except CardError as e:
            raise DeckFileError(f"{path} line {line_no}: {e}") from None
    try:
        return parse_deck(texts)
    except CardError as e:
        raise DeckFileError(f"{path}: {e}") from None


def check_setup(config: GameConfig, seed: int, deck: Sequence[int] | None,
                first_player: int | None) -> None:
    """Set a game up once, so that a bad deck or first player is reported before any
    bot is started (raises ConfigError)."""
    Game(config, seed, deck=deck, first_player=first_player)


@dataclass
class Standing:
    bot: str
    seat: int
    place: int
    games: int
    wins: int
    total_points: int
    mean_place: float

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def standings(bots: Sequence[str], records: Sequence[GameRecord],
              match_scoring: bool,
              seatings: Sequence[Sequence[int]] | None = None) -> list[Standing]:
    """Per-bot totals over the games, best first.  With ``match_scoring`` (RULES
    §9.4) the place is by total penalty points (fewest first, ties share a place:
    competition ranking); otherwise by mean place.  ``seatings[g][seat]`` is the bot
    (its index in ``bots``) in that seat of game g (default: bot i in seat i); a
    Standing's ``seat`` is the bot's seat in the first game."""
    n = len(bots)
    games = len(records)
    # seat_of[g][b]: the seat bot b took in game g.
    seat_of = [[list(seatings[g]).index(b) if seatings else b for b in range(n)]
               for g in range(games)]
    points = [sum(r.points[seat_of[g][b]] for g, r in enumerate(records)) for b in range(n)]
    place_sum = [sum(r.places[seat_of[g][b]] for g, r in enumerate(records)) for b in range(n)]
    totals = points
    wins = [sum(1 for g, r in enumerate(records) if r.places[seat_of[g][b]] == 1)
            for b in range(n)]
    mean = [place_sum[b] / games if games else 0.0 for b in range(n)]
    if match_scoring:
        ranks = competition_ranks(totals)
    else:
        # Competition ranking of mean places (scaled to integers to compare exactly).
        ranks = competition_ranks(place_sum)
    rows = [Standing(bots[s], s, ranks[s], games, wins[s], totals[s], round(mean[s], 3))
            for s in range(n)]
    return sorted(rows, key=lambda r: (r.place, r.seat))


def make_output_dir(path: str, what: str) -> None:
    """Make the directory ``path`` (and its parents) for ``what``; an OSError with one
    line naming it and why if it cannot be made."""
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise OSError(f"cannot make {what} {path}: {e.strerror or e}") from None


@dataclass
class Session:
    """What ``referee play`` was asked to do."""

    config: GameConfig
    seed: int
    games: int = 1
    deck: list[int] | None = None
    first_player: int | None = None
    time_control: TimeControl = field(default_factory=TimeControl)
    policy: FaultPolicy = field(default_factory=FaultPolicy)
    record: str | None = None
    record_dir: str | None = None
    sandbox: dict[str, Any] | None = None  # what the bots ran in, for the records
    #: A match rotates the seats: in game i, seat s is taken by bot (s + i) mod n, so
    #: every bot plays from every seat (the first player is drawn per game anyway).
    rotate: bool = True

    def game_seed(self, i: int) -> int:
        return self.seed + i

    def seating(self, i: int) -> list[int]:
        """The bots (indices into the players given to ``run``) by seat, in game i."""
        n = self.config.players
        return [(s + i) % n if self.rotate else s for s in range(n)]

    def game_id(self, i: int) -> str:
        return f"game-{self.seed}" if self.games == 1 else f"match-{self.seed}-{i + 1}"

    def record_path(self, i: int) -> str | None:
        if self.record:
            if self.games == 1:
                return self.record
            p = Path(self.record)
            return str(p.with_name(f"{p.stem}-{i + 1}{p.suffix or '.jsonl'}"))
        if self.record_dir:
            return os.path.join(self.record_dir, f"{self.game_id(i)}.jsonl")
        return None

    def prepare(self) -> None:
        """Check everything that can be checked before a bot starts: the deal, and
        that records can be written (raises ConfigError or OSError)."""
        check_setup(self.config, self.seed, self.deck, self.first_player)
        if self.record_dir:
            make_output_dir(self.record_dir, "the records' directory")
        if self.record:
            parent = Path(self.record).parent
            if not parent.is_dir():
                raise OSError(f"cannot write the record {self.record}: the directory "
                              f"{parent} does not exist")

    def run(self, players: Sequence[Player], *,
            on_event: Callable[[str, Any], None] | None = None,
            on_game: Callable[[int, str], None] | None = None,
            on_result: Callable[[int, GameRecord, str | None], None] | None = None,
            clock: Callable[[], float] | None = None) -> list[GameRecord]:
        """Play the games one after another with the same players (their seats
        rotated when ``rotate``: see ``seating``)."""
        records: list[GameRecord] = []
        for i in range(self.games):
            gid = self.game_id(i)
            if on_game:
                on_game(i, gid)
            kw: dict[str, Any] = {"clock": clock} if clock is not None else {}
            seated = [players[b] for b in self.seating(i)]
            rec = run_game(self.config, self.game_seed(i), seated, game_id=gid,
                           deck=self.deck, first_player=self.first_player,
                           time_control=self.time_control, policy=self.policy,
                           on_event=on_event, **kw)
            rec.sandbox = self.sandbox
            path = self.record_path(i)
            if path:
                rec.write(path)
            records.append(rec)
            if on_result:
                on_result(i, rec, path)
        return records


def game_summary(rec: GameRecord, path: str | None) -> dict[str, Any]:
    """The machine-readable result of one game."""
    return {
        "game_id": rec.game_id,
        "seed": rec.seed,
        "first_player": rec.first_player,
        "bots": rec.bots,
        **rec.ended.to_json(),  # its forfeits included
        "faults": [f.to_dict() for f in rec.faults],
        "wall_time": round(rec.wall_time, 6),
        "record": path,
    }

