"""The configurations a store keeps, typed (``referee.tournament.kinds``): each kind
written with its ``kind`` and read back checked; stores written by the referee
before the kinds (``tests/stores/old``, made by ``tests/stores/make_old_stores.py``
from main at 0c2700f) still read, resume, report and show standings; a damaged or
unknown configuration is one StorageError line naming the store and the setting."""

from __future__ import annotations

import json
import shutil
import sqlite3
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from referee.cli.main import main
from referee.errors import StorageError
from referee.game import GameConfig
from referee.league.config import LeagueConfig, load_league_config, read_league_config
from referee.league.results import standings
from referee.league.run import new_league
from referee.league.store import LeagueStore
from referee.play.runner import FaultPolicy, TimeControl
from referee.players.sandbox import SandboxConfig, resolve
from referee.report.results import load, load_league
from referee.stats.sprt import Sprt
from referee.tournament.config import BotSpec, TournamentConfig
from referee.tournament.executor import SerialExecutor
from referee.tournament.kinds import (
    MatchSettings,
    StoredConfigError,
    TournamentSettings,
    read_settings,
)
from referee.tournament.match import MatchConfig, run_match, stored_summary
from referee.tournament.run import run_tournament, standings_of
from referee.tournament.store import Store

OLD = Path(__file__).resolve().parents[1] / "stores" / "old"
OFF = resolve(SandboxConfig(mode="off"))
BOTS = (BotSpec("alice", builtin="heuristic"), BotSpec("bob", builtin="random"),
        BotSpec("carol", builtin="lowest"))
RULES = GameConfig(players=2, variants=frozenset({"play_out"}))


def _old(tmp: Path, which: str) -> Path:
    """A copy of an old store's folder (the originals stay as the old referee made them)."""
    dest = tmp / which
    shutil.copytree(OLD / which, dest)
    for p in [dest, *dest.rglob("*")]:
        p.chmod(p.stat().st_mode | stat.S_IWUSR)
    return dest


def _old_tournament(out: Path) -> TournamentConfig:
    """The configuration make_old_stores.py ran its tournament with."""
    return TournamentConfig(bots=BOTS, name="old tournament", seats=2, deals=1, seed=7,
                            game=RULES, output=str(out))


def _old_match(out: Path) -> MatchConfig:
    t = TournamentConfig(bots=BOTS[:2], name="old match", seats=2, seed=3, game=RULES,
                         output=str(out))
    return MatchConfig(t, "alice", "bob", sprt=Sprt(0, 20), max_sets=3)


def _stored(db: Path) -> str:
    conn = sqlite3.connect(db)
    try:
        return str(conn.execute("SELECT value FROM meta WHERE key = 'config'").fetchone()[0])
    finally:
        conn.close()


def _set_stored(db: Path, text: str) -> None:
    conn = sqlite3.connect(db)
    try:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'config'", (text,))
        conn.commit()
    finally:
        conn.close()


def test_old_stores_have_no_kind_and_read_as_theirs_exactly() -> None:
    for which, db in (("tournament", "tournament.sqlite"), ("match", "tournament.sqlite"),
                      ("league", "league.sqlite")):
        assert "kind" not in json.loads(_stored(OLD / which / db)), which
    t = read_settings(_stored(OLD / "tournament" / "tournament.sqlite"), "t")
    assert isinstance(t, TournamentSettings)
    assert t.bot_names == ["alice", "bob", "carol"] and t.seed == 7 and t.deals == 1
    m = read_settings(_stored(OLD / "match" / "tournament.sqlite"), "m")
    assert isinstance(m, MatchSettings)
    assert (m.new, m.old, m.field, m.max_sets, m.scores) == ("alice", "bob", (), 3, "adjusted")
    assert m.sprt == Sprt(0, 20) and m.per_set == 2 and m.head_to_head
    lg = read_league_config(_stored(OLD / "league" / "league.sqlite"), "l")
    assert lg.name == "test" and lg.seats == (2,) and lg.deals == 2 and lg.seed == 5
    # read and written back, each is what the old referee wrote (a resume compares it)
    for text, typed in ((_stored(OLD / "tournament" / "tournament.sqlite"), t),
                        (_stored(OLD / "match" / "tournament.sqlite"), m)):
        assert typed.to_json() == json.loads(text)
    # a league's settings that came after it read as their defaults (the rules it was
    # played by: a round-robin)
    old, again = json.loads(_stored(OLD / "league" / "league.sqlite")), lg.to_json()
    server = again["server"]  # (the server's limits may have grown since, with defaults)
    assert isinstance(server, dict)
    assert {k: server[k] for k in old["server"]} == old["server"]
    assert {k: again[k] for k in old if k != "server"} == {k: v for k, v in old.items()
                                                          if k != "server"}
    assert {k: v for k, v in again.items() if k not in old} == {
        "records": "seat", "schedule": "round-robin", "scores": "adjusted", "top": 3,
        "min_share": 0.25, "batch": None, "luck_value": "linear"}


def test_an_old_tournament_resumes_and_reports(tmp_path: Path) -> None:
    out = _old(tmp_path, "tournament")
    before = standings_of(out)
    r = run_tournament(_old_tournament(out), executor=SerialExecutor(), quiet=True,
                       sandbox=OFF)
    assert (r.already_done, r.played, r.errors) == (6, 0, [])
    assert json.loads(_stored(out / "tournament.sqlite"))  # left as it was: no kind added
    after = standings_of(out)
    assert [(x.bot, x.games) for x in after.rows] == [(x.bot, x.games) for x in before.rows]
    assert after.seed == 7 and sum(x.games for x in after.rows) == 12
    res = load(out)
    assert isinstance(res.settings, TournamentSettings) and res.bots == ["alice", "bob", "carol"]
    cli = CliRunner().invoke(main, ["tournament", "standings", str(out), "--format", "json"])
    assert cli.exit_code == 0, cli.output
    assert json.loads(cli.output)["name"] == "old tournament"


def test_an_old_match_resumes_with_the_same_summary(tmp_path: Path) -> None:
    out = _old(tmp_path, "match")
    store = Store.open_existing(out)
    try:
        settings, before = stored_summary(store)
    finally:
        store.close()
    assert settings.new == "alice" and before.sets == 3 and before.games == 6
    r = run_match(_old_match(out), executor=SerialExecutor(), quiet=True, sandbox=OFF)
    assert r.already_done == 3 and r.played == 0
    assert r.summary == before  # what the report reads is what the match printed
    assert isinstance(load(out).settings, MatchSettings)


def test_an_old_league_reads_runs_and_takes_its_own_file_again(tmp_path: Path) -> None:
    league = _old(tmp_path, "league")
    store = LeagueStore.open(league)
    try:
        assert store.league_config().name == "test"
    finally:
        store.close()
    (table,) = standings(league)
    assert sorted(r.bot for r in table.rows) == ["ann@1", "ben@1"]
    assert sum(r.games for r in table.rows) == 8
    text = (league / "league.toml").read_text()
    assert new_league(league, load_league_config(league / "league.toml"), text) == \
        ["nothing changed"]
    assert [r.name for r in load_league(league)] == ["test, 2 seats"]


def test_new_stores_write_their_kind_and_read_it_back(tmp_path: Path) -> None:
    run_tournament(_old_tournament(tmp_path / "t"), executor=SerialExecutor(), quiet=True,
                   sandbox=OFF)
    run_match(_old_match(tmp_path / "m"), executor=SerialExecutor(), quiet=True, sandbox=OFF)
    cfg = load_league_config(_league_toml(tmp_path))
    new_league(tmp_path / "l", cfg, "")
    t = json.loads(_stored(tmp_path / "t" / "tournament.sqlite"))
    m = json.loads(_stored(tmp_path / "m" / "tournament.sqlite"))
    lg = json.loads(_stored(tmp_path / "l" / "league.sqlite"))
    assert (t["kind"], m["kind"], lg["kind"]) == ("tournament", "match", "league")
    # the same settings as the old referee wrote, plus the kind
    for new, which, db in ((t, "tournament", "tournament.sqlite"),
                           (m, "match", "tournament.sqlite")):
        assert {k: v for k, v in new.items() if k != "kind"} == \
               json.loads(_stored(OLD / which / db))
    store = LeagueStore.open(tmp_path / "l")
    try:
        assert store.league_config() == cfg
    finally:
        store.close()


def _league_toml(tmp: Path) -> Path:
    p = tmp / "league.toml"
    p.write_text('[league]\nname = "x"\nseats = [2, 4]\ndeals = 3\nseed = 9\n'
                 '[server]\nqueue = 7\n[limits]\nmax_files = 99\n')
    return p


def test_the_writer_is_what_the_configuration_decides() -> None:
    """Every setting survives the store: the typed writer gives the configuration's
    own ``to_dict`` (what a resume compares), whatever is set."""
    cmd = BotSpec("ext", command=("python3", "bot.py"), transport="zmq", cwd="bots",
                  env=(("B", "2"), ("A", "1")), memory_mb=300, sandboxed=False)
    t = TournamentConfig(
        bots=(*BOTS, cmd, BotSpec("far", remote="far")), name="n", format="gauntlet",
        seats=3, deals=4, seed=11, seating="williams", challengers=("alice",),
        game=GameConfig(players=3, variants=frozenset({"play_out", "may_decline"}), colours=5,
                        deck="standard", turn_limit=300),
        time=TimeControl(startup=3, per_decision=0.5, bank=2, game=60.0),
        faults=FaultPolicy(mode="forfeit", strike_limit=1), stop_after=0,
        sandbox=SandboxConfig(mode="on", memory_mb=512, processes=16, scratch_mb=8,
                              read_only=("/opt/m",), interpreters=("/opt/py",)))
    s = TournamentSettings.of(t)
    assert s.to_json() == t.to_dict()
    assert TournamentSettings.from_json(s.to_json(), "x") == s
    assert s.bots[3].env == (("B", "2"), ("A", "1")) and not s.bots[3].sandboxed
    mc = MatchConfig(TournamentConfig(bots=BOTS, seats=3, seed=1, game=GameConfig(players=3),
                                      seating="all"),
                     "alice", "bob", ("carol", "carol2"), games=30, scores="raw")
    ms = mc.settings()
    assert ms.to_json() == mc.to_dict() and ms.scores == "raw" and ms.sprt is None
    assert ms.per_set == mc.per_set and ms.max_sets == mc.sets
    lc = LeagueConfig(name="q", seats=(2, 3), separate_authors=False, fault_alert=2.5,
                      records="full", scores="raw", schedule="adaptive", top=2, min_share=0.5,
                      batch=4)
    assert LeagueConfig.from_json(lc.to_json(), "x") == lc


@pytest.mark.parametrize(("edit", "words"), [
    (lambda c: {**c, "kind": "cup"}, "unknown kind 'cup' (this referee knows tournament, "
                                     "match, league)"),
    (lambda c: "not json", "the stored configuration is not JSON"),
    (lambda c: [1, 2], "is not a JSON object but [1, 2]"),
    (lambda c: {**c, "seats": "two"}, "configuration's seats is \"two\", not a whole number"),
    (lambda c: {k: v for k, v in c.items() if k != "bots"}, "has no bots (a list of objects)"),
    (lambda c: {**c, "faults": {"policy": "maybe", "strike_limit": 3}},
     "faults.policy cannot be used (fault policy must be 'substitute' or 'forfeit'"),
    (lambda c: {**c, "bots": [{"name": "x"}]}, "bots[0] cannot be used (bot 'x': give "
                                               "exactly one of"),
    (lambda c: {**c, "kind": "league"}, "holds a league, not a tournament or a match"),
])
def test_a_damaged_or_unknown_configuration_is_one_storage_error(
        tmp_path: Path, edit: object, words: str) -> None:
    out = _old(tmp_path, "tournament")
    db = out / "tournament.sqlite"
    changed = edit(json.loads(_stored(db)))  # type: ignore[operator]
    _set_stored(db, changed if isinstance(changed, str) else json.dumps(changed))
    store = Store.open_existing(out)
    try:
        with pytest.raises(StoredConfigError) as e:
            store.settings  # noqa: B018
    finally:
        store.close()
    assert isinstance(e.value, StorageError)
    assert str(e.value).startswith(str(db)) and words in str(e.value), str(e.value)
    cli = CliRunner().invoke(main, ["tournament", "standings", str(out)])
    assert cli.exit_code == 1
    assert cli.output.strip().splitlines() == [f"Error: {e.value}"]


def test_a_damaged_league_configuration_is_one_error_line(tmp_path: Path) -> None:
    league = _old(tmp_path, "league")
    db = league / "league.sqlite"
    _set_stored(db, json.dumps({**json.loads(_stored(db)), "deals": None}))
    cli = CliRunner().invoke(main, ["league", "standings", str(league)])
    assert cli.exit_code in (1, 2)  # (the league's mistakes: 2, being made 1 as documented)
    assert cli.output.strip().splitlines() == [
        f"Error: {db}: the stored configuration's deals is null (or missing), not a whole "
        "number; the store is damaged"]


def test_a_match_folder_is_not_run_as_a_tournament_nor_the_other_way(tmp_path: Path) -> None:
    out = _old(tmp_path, "match")
    with pytest.raises(StorageError, match=f"{out} holds a match, not a tournament"):
        run_tournament(_old_tournament(out), executor=SerialExecutor(), quiet=True,
                       sandbox=OFF)
    t = _old(tmp_path, "tournament")
    with pytest.raises(StorageError, match=f"{t} holds a tournament, not a match"):
        run_match(_old_match(t), executor=SerialExecutor(), quiet=True, sandbox=OFF)
    store = Store.open_existing(t)
    try:
        with pytest.raises(StoredConfigError, match="holds a tournament, not a match"):
            stored_summary(store)
    finally:
        store.close()
