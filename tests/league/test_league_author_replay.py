"""An author's replay of their own game over a real ``league serve`` (loopback):
``referee submit --status --game ID --html OUT`` writes the replay viewer with only
what the author's seat could see -- the page's data holds the author's cards and
none of the other seat's hidden cards -- unless the league publishes full records
(``[league] records = "full"``), when the page shows every card and ``--record OUT``
gives the whole record (issue 23)."""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from referee.game import Game
from referee.game.cards import card_text, parse_deck
from referee.league.remote import author_game_id
from referee.league.store import LeagueStore
from referee.play.replay import read_record
from tests.league.conftest import Referee
from tests.league.leaguehelpers import EXAMPLE_BOTS, league_toml
from tests.league.servehelpers import Served
from tests.report.test_browser import knowable, steps_of

pytestmark = pytest.mark.slow

CARD = re.compile(r"^(10|[1-9]|C|C\+1|C\+2)[grbyopk]$")


def page_data(html: str) -> dict[str, Any]:
    m = re.search(r'<script id="game-data" type="application/json">(.*?)</script>', html, re.S)
    assert m, html[:500]
    data: dict[str, Any] = json.loads(m.group(1))
    return data


def cards_in(obj: Any) -> set[str]:
    """Every card text anywhere in the page's data."""
    if isinstance(obj, str):
        return {w for w in re.split(r"[\s,;:()\[\]]+", obj) if CARD.match(w)}
    if isinstance(obj, dict):
        return set().union(*(cards_in(v) for v in obj.values())) if obj else set()
    if isinstance(obj, list):
        return set().union(*(cards_in(v) for v in obj)) if obj else set()
    return set()


def test_an_author_gets_their_own_games_replay_with_their_seats_view_only(
        tmp_path: Path, referee: Referee, league_server: Callable[..., Served],
        need_sandbox: None) -> None:
    league = tmp_path / "league"
    cfg = league_toml(tmp_path / "league.toml", deals=1)
    assert referee("league", "new", league, "--config", cfg).returncode == 0
    for name, cmd in (("alice", "python3 heuristic_bot.py"),
                      ("bob", "python3 random_bot.py --seed 3")):
        r = referee("league", "submit", league, name, EXAMPLE_BOTS, "--command", cmd, "--quiet")
        assert r.returncode == 0, r.stdout + r.stderr
    r = referee("league", "run", league, "--quiet")
    assert r.returncode == 0, r.stderr
    endpoint = league_server(league).endpoint

    def submit(who: str, *args: str | Path) -> subprocess.CompletedProcess[str]:
        return referee("submit", "--to", endpoint, "--name", who, "--status", *args)

    r = submit("alice")
    games = re.findall(r"^  (g[0-9a-f]{12})  ", r.stdout, re.M)  # alice's own ids
    assert len(games) == 2, r.stdout + r.stderr
    gid = games[0]
    store = LeagueStore.open(league)
    try:  # the league's id of the game (the organiser's), for its record
        secret = store.secret()
        league_gid = next(o.game_id for o in store.outcomes()
                          if author_game_id(secret, "alice", o.game_id) == gid)
    finally:
        store.close()
    rec, cum, _ = steps_of(league / "games" / f"{league_gid}.jsonl")
    seat = next(s for s, b in enumerate(rec.bots) if b.startswith("alice@"))
    other = 1 - seat
    game = Game(rec.config, rec.head.seed, deck=parse_deck(list(rec.head.deck)),
                first_player=rec.head.first_player)
    dealt = [sorted(card_text(c) for c in game.dealt[s]) for s in range(2)]
    # after the deal, the other seat's six cards are its own secret
    hidden = set(dealt[other]) - knowable(rec.events[:cum[0]], seat)
    assert hidden, "the other seat kept no card hidden: the check would have no teeth"

    out = tmp_path / "mine.html"
    r = submit("alice", "--game", gid, "--html", out)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"as seat {seat} saw it" in r.stdout and str(out) in r.stdout
    html = out.read_text()
    assert "Content-Security-Policy" in html and "'unsafe-inline'" not in html
    data = page_data(html)
    assert data["views"] == [str(seat)] and data["start"]["view"] == str(seat)
    assert set(data["tables"]) == set(data["events"]) == {str(seat)}
    # the author's own six cards as dealt; the other seat's hand only a count
    table0 = data["tables"][str(seat)][0]
    assert sorted(table0[seat][0]) == dealt[seat]
    assert all(isinstance(t[other][0], int) for t in data["tables"][str(seat)])
    # at every step, no card the seat could not know by then anywhere in the page's
    # data (tables, event lines, decisions, legal lists, faults); nor the seed
    v = str(seat)
    assert len(data["frames"]) == len(cum)
    for k in range(len(cum)):
        shown = cards_in([data["tables"][v][k], data["events"][v][k], data["frames"][k]])
        leaked = shown - knowable(rec.events[:cum[k]], seat)
        assert not leaked, f"step {k} shows seat {seat} {leaked}"
    assert not cards_in(data["tables"][v][0]) & hidden
    assert f"seed {rec.head.seed}" not in html
    assert league_gid not in html and gid in html  # the author's id, not the league's
    assert all("legal" not in f for f in data["frames"] if f.get("next") == other)

    # the whole record is the league's to publish: refused by default
    r = submit("alice", "--game", gid, "--record", tmp_path / "mine.jsonl")
    assert r.returncode == 1 and len(r.stderr.splitlines()) == 1, r.stderr
    assert "records = \"seat\"" in r.stderr and not (tmp_path / "mine.jsonl").exists()
    # another author's game is nobody's business: as if it did not exist
    r = submit("mallory", "--game", gid, "--html", tmp_path / "theirs.html")
    assert r.returncode == 1 and f"{gid}: no game of mallory has this id" in r.stderr
    assert not (tmp_path / "theirs.html").exists()

    # a league that publishes full records: every card, and the record itself
    full = league_toml(tmp_path / "full.toml", deals=1)
    full.write_text(full.read_text().replace('name = "test"', 'name = "test"\nrecords = "full"'))
    r = referee("league", "new", league, "--config", full)
    assert r.returncode == 0 and 'records: "seat" -> "full"' in r.stdout, r.stdout + r.stderr
    r = submit("alice", "--game", gid, "--html", out, "--record", tmp_path / "mine.jsonl")
    assert r.returncode == 0, r.stdout + r.stderr
    data = page_data(out.read_text())
    assert data["views"][0] == "omni" and hidden <= cards_in(data["tables"]["omni"])
    assert read_record(str(tmp_path / "mine.jsonl")).events == rec.events
