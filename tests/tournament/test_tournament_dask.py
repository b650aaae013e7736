"""The Dask executor on a real ``distributed.LocalCluster`` (2 process workers x 1
thread): the same standings as the process pool, a worker killed mid-set, the
scheduler killed mid-run and the run resumed, and a bot that exists only on the
coordinator shipped to the workers.  Plus the pure parts (packing, rewriting a
bot's paths) and the configuration."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path

import dask
import pytest
from click.testing import CliRunner
from distributed import LocalCluster

from referee.cli.main import main
from referee.errors import ExecutionError
from referee.play.runner import Fault
from referee.protocol.messages import FaultKind
from referee.tournament.config import TournamentConfigError, load_config, parse_config
from referee.tournament.dask_executor import (
    Committer,
    DaskExecutor,
    SetResult,
    deal_sets,
    localize,
    pack,
    unpack,
)
from referee.tournament.executor import Batch, Job
from referee.tournament.outcome import GameOutcome
from referee.tournament.run import run_tournament
from referee.tournament.schedule import GameSpec, derive_seed, schedule
from tests.procs import Children, scaled

pytestmark = pytest.mark.slow

pytestmark = pytest.mark.slow

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
EXAMPLE = REPO / "example_bots" / "python"
REFEREE = [sys.executable, "-m", "referee.cli.main"]


def invoke(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(main, list(args))
    if r.exception and not isinstance(r.exception, SystemExit):
        raise r.exception
    return r.exit_code, r.stdout, r.stderr


def rows(out: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(out / "tournament.sqlite")
    try:
        return conn.execute(sql).fetchall()
    finally:
        conn.close()


def tournament(tmp: Path, bots: str, deals: int = 4, name: str = "t.toml") -> Path:
    p = tmp / name
    p.write_text(f"""
[tournament]
name = "dask"
seats = 2
deals = {deals}
seed = 11
output = "out"
[rules]
variants = []
colours = 5
{bots}
""")
    return p


def bot(name: str, line: str) -> str:
    return f'[[bots]]\nname = "{name}"\n{line}\n'


HEURISTIC = bot("heuristic", 'builtin = "heuristic"')
RANDOM = bot("random", 'builtin = "random"')
EXTERNAL = bot("ext", f'command = ["{sys.executable}", "random_bot.py", "--seed", "3"]\n'
               f'cwd = "{EXAMPLE}"')


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A LocalCluster of 2 process workers with 1 thread each, whose scheduler gives
    up on a task at the first worker that dies with it (allowed-failures 0: every
    lost set is a KilledWorker, which the coordinator must not take as final)."""
    wd = tmp_path_factory.mktemp("workers")
    saved = os.environ.get("UPDOWN_WORKER_DIR")
    os.environ["UPDOWN_WORKER_DIR"] = str(wd)  # the workers inherit it
    os.environ["KILL_ONCE"] = str(wd / "killed")
    os.environ["KILL_ALWAYS"] = str(wd / "kill-always")  # while this file exists
    try:
        with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
            c = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                             dashboard_address=None, worker_dashboard_address=None,
                             silence_logs=50)
        try:
            yield c.scheduler_address
        finally:
            c.close()
    finally:
        del os.environ["KILL_ONCE"], os.environ["KILL_ALWAYS"]
        if saved is None:
            del os.environ["UPDOWN_WORKER_DIR"]
        else:
            os.environ["UPDOWN_WORKER_DIR"] = saved


def standings_json(cfg: Path, *extra: str) -> str:
    code, out, err = invoke("tournament", "run", str(cfg), "-q", "--format", "json", *extra)
    assert code == 0, err
    return out


def test_same_standings_as_the_process_pool(tmp_path: Path, cluster: str) -> None:
    local, remote = tmp_path / "local", tmp_path / "dask"
    local.mkdir()
    remote.mkdir()
    body = HEURISTIC + RANDOM + EXTERNAL
    expected = standings_json(tournament(local, body), "--jobs", "2")
    got = standings_json(tournament(remote, body), "--executor", "dask",
                         "--scheduler", cluster)
    assert got == expected  # byte for byte
    out = remote / "out"
    assert rows(out, "SELECT COUNT(*) FROM games") == [(24,)]
    workers = {w for (w,) in rows(out, "SELECT DISTINCT worker FROM games")}
    assert len(workers) == 2 and all(isinstance(w, str) and ":" in w for w in workers)
    # Every record was written by the coordinator, whole.
    for (rel,) in rows(out, "SELECT record FROM games"):
        lines = (out / str(rel)).read_text().splitlines()
        assert json.loads(lines[-1])["type"] == "result"
    # The fault view names the workers that played the games.
    code, view, _ = invoke("tournament", "standings", str(out), "--faults", "--format", "csv")
    assert code == 0 and {line.split(",")[0] for line in view.splitlines()[1:]} == workers
    # Each duplicate set (a deal's seatings of one lineup) was played by one worker.
    per_set: dict[tuple[int, str], set[object]] = {}
    for deal, seats, w in rows(out, "SELECT deal, seats, worker FROM games"):
        per_set.setdefault((int(deal), str(sorted(json.loads(str(seats))))), set()).add(w)  # type: ignore[call-overload]
    assert len(per_set) == 12 and all(len(ws) == 1 for ws in per_set.values())


def test_a_worker_killed_mid_set_loses_nothing_and_duplicates_nothing(
        tmp_path: Path, cluster: str) -> None:
    marker = Path(os.environ["KILL_ONCE"])
    assert not marker.exists()
    body = HEURISTIC + RANDOM + bot("killer", f'python = "{HERE / "dask_bots.py"}:KillsItsWorker"')
    remote = tmp_path / "dask"
    remote.mkdir()
    got = standings_json(tournament(remote, body), "--executor", "dask", "--scheduler", cluster)
    # The killer died: pid and the seed of the game it died in.
    pid, seed = marker.read_text().split()
    cfg = load_config(remote / "t.toml")
    games = schedule(cfg)  # the file gives the seed
    killed_deal = {g.deal for g in games
                   if "killer" in g.seats and derive_seed(
                       g.deal_seed, "bot", "seat", g.seats.index("killer")) == int(seed)}
    assert len(killed_deal) == 1
    out = remote / "out"
    assert rows(out, "SELECT COUNT(*), COUNT(DISTINCT game_id) FROM games") == [(len(games),) * 2]
    deal = killed_deal.pop()
    played = [w for w, seats in rows(out, f"SELECT worker, seats FROM games WHERE deal = {deal}")
              if "killer" in json.loads(str(seats))]
    assert len(played) == 2  # the whole set, once
    assert all(not str(w).endswith(f":{pid}") for w in played)  # not by the dead worker
    # The same standings as the process pool, where nobody dies (the marker is there).
    local = tmp_path / "local"
    local.mkdir()
    assert standings_json(tournament(local, body), "--jobs", "2") == got


def test_a_set_that_kills_every_worker_is_given_up_by_the_coordinator(
        tmp_path: Path, cluster: str) -> None:
    flag = Path(os.environ["KILL_ALWAYS"])
    flag.write_text("")
    try:
        body = HEURISTIC + bot("doom", f'python = "{HERE / "dask_bots.py"}:KillsEveryWorker"')
        cfg = load_config(tournament(tmp_path, body, deals=1))
        summary = run_tournament(cfg, executor=DaskExecutor(cluster, resubmit=1), quiet=True)
    finally:
        flag.unlink()
    # Dask gave up at the first death (KilledWorker); the coordinator tried once
    # more, then reported the set's games as not played: they are played on resume.
    assert summary.played == 0 and len(summary.errors) == 2
    assert all("lost with 2 Dask workers that died" in e.message for e in summary.errors)
    assert len(flag.with_suffix(".deaths").read_text().split()) == 2


def test_a_bot_only_on_the_coordinator_is_shipped_to_the_workers(
        tmp_path: Path, cluster: str) -> None:
    src = tmp_path / "alice"
    src.mkdir()
    for f in ("random_bot.py", "updown_bot.py"):
        shutil.copy(EXAMPLE / f, src / f)
    body = HEURISTIC + bot("alice", f'command = ["{sys.executable}", "random_bot.py", "--seed", "5"]\n'
                                    f'cwd = "{src}"')
    cfg = load_config(tournament(tmp_path, body, deals=3))
    gone = tmp_path / "alice-moved-away"

    class Packed(DaskExecutor):
        """Moves the bot's folder away once it is packed: from then on the bot
        exists only in what was shipped."""

        def pack(self, job: Job):  # type: ignore[no-untyped-def]
            bundles = super().pack(job)
            src.rename(gone)
            return bundles

    ex = Packed(cluster)
    summary = run_tournament(cfg, executor=ex, quiet=True)
    assert not src.exists()
    assert summary.played == 6 and not summary.errors
    out = cfg.output_dir
    faults = rows(out, "SELECT faults FROM games")
    assert all(json.loads(str(f)) == [] for (f,) in faults)
    cache = Path(os.environ["UPDOWN_WORKER_DIR"]) / "bots"
    digest = pack("alice", str(gone)).digest  # the same files, the same name
    assert (cache / digest / "random_bot.py").is_file()
    # The bot's own log (on the worker) shows it playing.
    logs = list((Path(os.environ["UPDOWN_WORKER_DIR"]) / "runs").glob("*/logs/*/alice*.log"))
    assert logs and any("g00000" in p.read_text() for p in logs)


STALLED_CLUSTER = """
import sys
from distributed import LocalCluster
c = LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                 worker_dashboard_address=None, silence_logs=50)
print(c.scheduler_address, flush=True)
sys.stdin.read()  # until the test kills us
"""


def test_the_scheduler_killed_mid_run_stops_cleanly_and_the_run_resumes(
        tmp_path: Path, children: Children) -> None:
    env = {**os.environ, "STALL": "1", "UPDOWN_WORKER_DIR": str(tmp_path / "wd")}
    helper = children.popen([sys.executable, "-c", STALLED_CLUSTER], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert helper.stdout is not None
        address = helper.stdout.readline().strip()
        assert address.startswith("tcp://")
        body = HEURISTIC + RANDOM + bot("staller", f'python = "{HERE / "dask_bots.py"}:Stalls"')
        cfg = tournament(tmp_path, body, deals=4)
        run = children.popen([*REFEREE, "tournament", "run", str(cfg), "-q", "--executor",
                              "dask", "--scheduler", address], cwd=REPO,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env={k: v for k, v in os.environ.items() if k != "STALL"})
        out = tmp_path / "out"
        deadline = time.monotonic() + scaled(60)
        # Each worker plays the staller's first deal whole, then holds: at least 2
        # games are committed, and the run cannot end by itself.
        while time.monotonic() < deadline and run.poll() is None:
            if committed(out) >= 2:
                break
            time.sleep(0.05)
        assert run.poll() is None, run.communicate()
        os.killpg(helper.pid, signal.SIGKILL)  # the scheduler (and its workers) die
        stdout, stderr = run.communicate(timeout=scaled(60))
    finally:
        kill_group(helper)
    assert run.returncode == 1, stderr
    # (The file's own warning, variants without play_out, comes first.)
    lines = [ln for ln in stderr.splitlines() if ln.strip() and not ln.startswith("warning: ")]
    assert len(lines) == 1, stderr
    assert lines[0].startswith("Error: lost the Dask scheduler " + address), lines[0]
    assert "the finished games are saved in" in lines[0]
    kept = rows(out, "SELECT COUNT(*) FROM games")[0][0]
    assert 2 <= kept < 24
    # Resumed on this machine, without the cluster: it completes.
    code, text, err = invoke("tournament", "run", str(cfg), "--format", "json", "--jobs", "2")
    assert code == 0, err
    assert f"resumed: {kept} of 24 games were already played" in err
    st = json.loads(text)
    assert st["played"] == st["scheduled"] == 24
    assert rows(out, "SELECT COUNT(*), COUNT(DISTINCT game_id) FROM games") == [(24, 24)]


def committed(out: Path) -> int:
    try:
        return int(rows(out, "SELECT COUNT(*) FROM games")[0][0])  # type: ignore[call-overload]
    except sqlite3.OperationalError:  # not made yet
        return 0


def kill_group(p: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(p.pid, signal.SIGKILL)
    p.wait(timeout=scaled(30))


def test_without_a_scheduler_a_local_cluster_plays(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UPDOWN_WORKER_DIR", str(tmp_path / "wd"))
    cfg = tournament(tmp_path, HEURISTIC + EXTERNAL, deals=2)
    code, out, err = invoke("tournament", "run", str(cfg), "-q", "--executor", "dask",
                            "--jobs", "1", "--format", "csv")
    assert code == 0, err
    assert rows(tmp_path / "out", "SELECT COUNT(*), COUNT(DISTINCT worker) FROM games") == [(4, 1)]
    assert (tmp_path / "wd" / "cpus").is_dir()  # its one worker pinned itself


def test_an_unreachable_scheduler_is_one_line(tmp_path: Path) -> None:
    cfg = load_config(tournament(tmp_path, HEURISTIC + RANDOM, deals=1))
    ex = DaskExecutor("127.0.0.1:9")  # nothing listens on the discard port
    ex.connect_timeout = 1.0
    with pytest.raises(ExecutionError, match=r"cannot reach the Dask scheduler at tcp://127\.0\.0\.1:9"):
        run_tournament(cfg, executor=ex, quiet=True)


# --- the pure parts ------------------------------------------------------------------------


def test_pack_is_deterministic_and_leaves_out_the_output_folder(tmp_path: Path) -> None:
    src = tmp_path / "bot"
    (src / "sub").mkdir(parents=True)
    (src / "bot.py").write_text("print('hi')\n")
    (src / "sub" / "data.txt").write_text("x" * 1000)
    (src / "out").mkdir()
    (src / "out" / "tournament.sqlite").write_text("secret")
    (src / "__pycache__").mkdir()
    (src / "__pycache__" / "bot.pyc").write_text("junk")
    a = pack("b", str(src), [str(src / "out")])
    os.utime(src / "bot.py", (0, 12345))  # times and owners are not part of it
    b = pack("b", str(src), [str(src / "out")])
    assert a.digest == b.digest and a.data == b.data
    there = unpack(a.digest, a.data, tmp_path / "cache")
    assert (there / "bot.py").read_text() == "print('hi')\n"
    assert (there / "sub" / "data.txt").stat().st_size == 1000
    assert not (there / "out").exists() and not (there / "__pycache__").exists()
    assert unpack(a.digest, a.data, tmp_path / "cache") == there  # once
    (src / "bot.py").write_text("print('changed')\n")
    assert pack("b", str(src), [str(src / "out")]).digest != a.digest
    with pytest.raises(ExecutionError, match="does not match its hash"):
        unpack("0" * 64, a.data, tmp_path / "cache2")


def test_localize_points_a_bot_at_its_folder_on_the_worker(tmp_path: Path) -> None:
    cfg = parse_config({
        "tournament": {"seed": 1},
        "bots": [{"name": "a", "command": ["python3", "bots/a/bot.py", "--x"]},
                 {"name": "b", "command": "./run.sh", "cwd": "bots/b/sub"},
                 {"name": "p", "python": "bots/p/mine.py:Bot"},
                 {"name": "h", "builtin": "heuristic"}]}, base_dir=str(tmp_path))
    for d in ("bots/a", "bots/b/sub", "bots/p"):
        (tmp_path / d).mkdir(parents=True)
    (tmp_path / "bots/a/bot.py").write_text("")
    (tmp_path / "bots/b/sub/run.sh").write_text("")
    b = tmp_path / "bots"
    moved = localize(cfg, {"a": (str(b / "a"), "/cache/A"), "b": (str(b / "b"), "/cache/B"),
                           "p": (str(b / "p"), "/cache/P")})
    a, bb, p, h = moved.bots
    assert a.command == ("python3", "/cache/A/bot.py", "--x")
    assert moved.resolve(a.cwd or ".") == "/cache/A"
    assert moved.resolve(bb.cwd) == "/cache/B/sub" and bb.command == ("/cache/B/sub/run.sh",)
    assert p.python == "/cache/P/mine.py:Bot"
    assert h == cfg.bots[3]
    assert moved.to_dict() != cfg.to_dict() and cfg.bots[0].command == ("python3", "bots/a/bot.py", "--x")


def test_deal_sets_and_a_set_committed_twice_is_stored_once(tmp_path: Path) -> None:
    cfg = load_config(tournament(tmp_path, HEURISTIC + RANDOM + EXTERNAL, deals=2))
    games = schedule(cfg)
    sets = deal_sets(games)
    assert sum(map(len, sets)) == len(games) and all(len({g.deal for g in s}) == 1 for s in sets)
    # one set per deal and lineup: 2 deals x 3 pairs, each pair in both seatings
    assert len(sets) == 6 and all(len(s) == 2 and s[0].seats == s[1].seats[::-1] for s in sets)
    first = sets[0]
    records = tmp_path / "games"
    records.mkdir()
    outcomes = tuple(GameOutcome(index=g.index, game_id=g.game_id, deal=g.deal,
                                 deal_seed=g.deal_seed, seats=g.seats, places=(1, 2),
                                 points=(0, 3), how="out", turns=9, worker="w:1",
                                 record=f"games/{g.game_id}.jsonl") for g in first)
    import zlib
    result = SetResult(first[0].deal, "w:1", outcomes,
                       tuple(zlib.compress(b'{"type": "result"}\n') for _ in first))
    pending = {g.index for g in games}
    got: list[object] = []
    committer = Committer(str(tmp_path), pending, got.append)
    committer.arrive(result)
    committer.arrive(result)  # it came back again, before the first was committed
    committer.drain(block=True)
    committer.arrive(result)  # and after
    committer.close()
    assert got == [Batch(outcomes)]  # the set whole, once
    assert pending == {g.index for g in games} - {g.index for g in first}
    assert sorted(p.name for p in records.iterdir()) == [f"{g.game_id}.jsonl" for g in first]


def fake_set(specs: list[GameSpec], worker: str = "w:1") -> SetResult:
    return SetResult(specs[0].deal, worker, tuple(
        GameOutcome(index=g.index, game_id=g.game_id, deal=g.deal, deal_seed=g.deal_seed,
                    seats=g.seats, places=(1, 2), points=(0, 3), how="out", turns=9,
                    worker=worker, record=f"games/{g.game_id}.jsonl") for g in specs),
        tuple(zlib.compress(b'{"type": "result"}\n') for _ in specs))


def test_sets_ready_together_share_one_commit_each_set_whole(tmp_path: Path) -> None:
    cfg = load_config(tournament(tmp_path, HEURISTIC + RANDOM + EXTERNAL, deals=2))
    games = schedule(cfg)
    sets = deal_sets(games)
    (tmp_path / "games").mkdir()
    got: list[object] = []
    committer = Committer(str(tmp_path), {g.index for g in games}, got.append)
    committer.arrive(fake_set(sets[0]))
    committer.drain(block=True)  # alone: its own commit
    for s in sets[1:4]:  # three came back before the next drain: one commit
        committer.arrive(fake_set(s))
    committer.arrive(fake_set(sets[2]))  # one of them again: stored once
    committer.close()
    assert [type(r) for r in got] == [Batch, Batch] and committer.commits == 2
    first, rest = (r.outcomes for r in got)  # type: ignore[attr-defined]
    assert [o.index for o in first] == [g.index for g in sets[0]]
    assert [o.index for o in rest] == [g.index for s in sets[1:4] for g in s]  # arrival order


def test_a_run_stopped_between_commits_holds_whole_sets_and_resumes(
        tmp_path: Path, cluster: str) -> None:
    """The coordinator stops (Ctrl-C) right after its first commit: the store holds
    only whole duplicate sets, never one seating of a deal without the other; the
    run resumes, and the standings are the process pool's."""
    body = HEURISTIC + RANDOM + EXTERNAL
    remote = tmp_path / "dask"
    remote.mkdir()
    cfg = load_config(tournament(remote, body, deals=4))

    def stop(summary: object) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_tournament(cfg, executor=DaskExecutor(cluster), quiet=True, on_game=stop)
    out = cfg.output_dir
    per_set: dict[tuple[int, str], int] = {}
    for deal, seats in rows(out, "SELECT deal, seats FROM games"):
        key = (int(deal), str(sorted(json.loads(str(seats)))))  # type: ignore[call-overload]
        per_set[key] = per_set.get(key, 0) + 1
    assert per_set and all(n == 2 for n in per_set.values()), per_set
    kept = sum(per_set.values())
    assert kept < 24
    got = standings_json(remote / "t.toml", "--executor", "dask", "--scheduler", cluster)
    assert rows(out, "SELECT COUNT(*), COUNT(DISTINCT game_id) FROM games") == [(24, 24)]
    local = tmp_path / "local"
    local.mkdir()
    assert standings_json(tournament(local, body, deals=4), "--jobs", "2") == got


def test_records_that_cannot_be_written_stop_the_commits(tmp_path: Path) -> None:
    from referee.tournament.executor import NotPlayed

    cfg = load_config(tournament(tmp_path, HEURISTIC + RANDOM, deals=2))
    games = schedule(cfg)
    first, second = deal_sets(games)[:2]

    def result(specs: list) -> SetResult:  # type: ignore[type-arg]
        import zlib
        return SetResult(specs[0].deal, "w:1", tuple(
            GameOutcome(index=g.index, game_id=g.game_id, deal=g.deal, deal_seed=g.deal_seed,
                        seats=g.seats, places=(1, 2), points=(0, 3), how="out", turns=9,
                        record=f"games/{g.game_id}.jsonl") for g in specs),
            tuple(zlib.compress(b"{}\n") for _ in specs))

    got: list[object] = []
    pending = {g.index for g in games}
    committer = Committer(str(tmp_path / "no such folder"), pending, got.append)
    committer.arrive(result(first))
    committer.drain(block=True)
    assert committer.stopped
    assert [type(r) for r in got] == [NotPlayed, NotPlayed]
    assert all(r.storage for r in got)  # type: ignore[attr-defined]
    assert "cannot write the game records in" in got[0].message  # type: ignore[attr-defined]
    committer.arrive(result(second))  # dropped: played again on resume
    committer.close()
    assert len(got) == 2 and {g.index for g in second} <= pending


def test_the_executor_in_the_configuration(tmp_path: Path) -> None:
    base = {"bots": [{"name": "a", "builtin": "heuristic"}, {"name": "b", "builtin": "random"}]}
    cfg = parse_config({**base, "tournament": {"executor": "dask",
                                               "scheduler": "tcp://h:8786"}})
    assert (cfg.executor, cfg.scheduler, cfg.ship_bots) == ("dask", "tcp://h:8786", True)
    assert not parse_config({**base, "tournament": {"ship_bots": False}}).ship_bots
    with pytest.raises(TournamentConfigError, match="tournament.ship_bots: must be true"):
        parse_config({**base, "tournament": {"ship_bots": "no"}})
    assert "executor" not in cfg.to_dict() and "scheduler" not in cfg.to_dict()
    with pytest.raises(TournamentConfigError, match='tournament.scheduler: a scheduler is for the Dask'):
        parse_config({**base, "tournament": {"scheduler": "tcp://h:8786"}})
    with pytest.raises(TournamentConfigError, match="tournament.executor: must be one of process, dask"):
        parse_config({**base, "tournament": {"executor": "ray"}})
    code, _, err = invoke("tournament", "run", str(tournament(tmp_path, HEURISTIC + RANDOM)),
                          "--scheduler", "tcp://h:8786", "--executor", "process")
    assert code == 1 and "--scheduler is for the Dask executor" in err


def test_the_fault_view_finds_a_sick_worker() -> None:
    from referee.tournament.standings import by_worker, render_by_worker

    def game(i: int, worker: str, faults: list[Fault]) -> GameOutcome:
        return GameOutcome(index=i, game_id=f"g{i:06d}", deal=i // 2, deal_seed=1,
                           seats=("a", "b"), places=(1, 2), points=(0, 1), how="out",
                           turns=5, faults=tuple(faults), worker=worker)

    def f(seat: int, kind: FaultKind) -> Fault:
        return Fault(seat=seat, bot="?", kind=kind, detail="", turn=1, action="substituted")

    timeout = [f(0, "timeout"), f(1, "timeout")]
    games = [game(i, "good:1", []) for i in range(6)]
    games += [game(6, "good:1", [f(1, "crash")])]
    games += [game(7 + i, "sick:2", timeout) for i in range(3)] + [game(10, "sick:2", [])]
    sick, good = by_worker(games)
    assert (sick.worker, sick.games, sick.faulty, sick.every_seat) == ("sick:2", 4, 3, 3)
    assert sick.faults == {"timeout": 6} and sick.examples == ["g000007", "g000008", "g000009"]
    assert (good.worker, good.faulty, good.every_seat, good.faults) == ("good:1", 1, 0, {"crash": 1})
    text = render_by_worker([sick, good])
    assert text.index("sick:2") < text.index("good:1") and "3 (75%)" in text
    assert json.loads(render_by_worker([sick], "json"))[0]["faulty_rate"] == 0.75


def test_a_batch_is_committed_in_one_transaction_all_or_none(tmp_path: Path) -> None:
    """The run loop commits a Batch (whole sets) in one transaction: when one of its
    games cannot be stored, none is, and the run stops with what was before."""
    from referee.tournament.executor import Report

    cfg = load_config(tournament(tmp_path, HEURISTIC + RANDOM, deals=2))
    first, second = deal_sets(schedule(cfg))
    (tmp_path / "out" / "games").mkdir(parents=True)

    class Batches:
        def run(self, job: Job, games: list[GameSpec], report: Callable[[Report], None]) -> None:
            good = fake_set(first)
            for o in good.outcomes:
                (Path(job.output_dir) / o.record).write_text('{"type": "result"}\n')
            report(Batch(good.outcomes))
            a, b = fake_set(second).outcomes
            (Path(job.output_dir) / a.record).write_text('{"type": "result"}\n')
            broken = dataclasses.replace(b, faults=(Fault(  # no seat 7
                seat=7, bot="?", kind="crash", detail="", turn=1, action="forfeit"),))
            report(Batch((a, broken)))

    with pytest.raises(IndexError):
        run_tournament(cfg, executor=Batches(), quiet=True)  # type: ignore[arg-type]
    assert rows(cfg.output_dir, "SELECT idx FROM games ORDER BY idx") == [
        (g.index,) for g in first]
