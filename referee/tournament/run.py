"""Running a tournament end to end: its seed, its sandbox, its schedule, the games
the store does not hold yet handed to the ``driver`` (which owns the store, resuming,
the executor's reports and the progress display) as one fixed schedule; and its
standings.
"""

from __future__ import annotations

import json
import secrets
import sqlite3
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import StorageError
from ..play.luck import LuckSetting
from ..players.sandbox import Sandbox, resolve
from .config import TournamentConfig
from .driver import Driver, FixedSchedule, Progress
from .executor import Executor, Job, NotPlayed, ProcessExecutor, seat_builtins
from .kinds import TournamentSettings
from .players import check_bots
from .schedule import schedule, schedule_digest
from .standings import Standings, compute
from .store import Store


@dataclass
class RunSummary:
    scheduled: int
    already_done: int
    played: int = 0
    errors: list[NotPlayed] = field(default_factory=list)
    output_dir: Path = Path(".")
    replayed: list[str] = field(default_factory=list)  # games whose record was bad
    stopped: dict[str, str] = field(default_factory=dict)  # bots stopped in this run: why


def with_seed(config: TournamentConfig, output_dir: Path) -> tuple[TournamentConfig, str]:
    """The configuration with its seed fixed, and where the seed came from: the
    file's ``seed``; else the one drawn when the tournament in ``output_dir`` first
    ran (kept in its store); else a new one drawn at random (63 bits from the
    system's randomness: no bot can compute the deals from what it knows)."""
    if config.seed is not None:
        return config, "given"
    stored = Store.stored_config(output_dir)
    if stored is not None and stored.seed is not None:
        return replace(config, seed=stored.seed), "random"
    return replace(config, seed=secrets.randbelow(1 << 63)), "random"


def use_luck_setting(store: Store, setting: LuckSetting,
                     builtins: Callable[[Sequence[str]], Sequence[str | None]]) -> None:
    """Score the games to come with ``setting``'s value function: the stored games
    scored with another one are scored again first (``Store.rescore``), so that every
    adjusted score of a tournament comes from one V, the one its standings name."""
    if store.luck_setting() == setting:
        if store.meta("luck_value") is None:
            store.set_luck_setting(setting)
        return
    if store.count():
        store.rescore(setting, builtins)
    else:
        store.set_luck_setting(setting)


def sandbox_of(config: TournamentConfig, mode: str | None = None) -> Sandbox:
    """The sandbox the tournament's bots run in on this machine (``mode`` overrides
    the configuration's); raises SandboxError for ``on`` where it cannot be had."""
    cfg = replace(config.sandbox, mode=mode) if mode else config.sandbox
    return resolve(cfg)


def run_tournament(
    config: TournamentConfig,
    *,
    output_dir: Path | None = None,
    executor: Executor | None = None,
    jobs: int | None = None,
    progress: Progress | None = None,
    quiet: bool = False,
    sandbox: Sandbox | None = None,
    on_game: Callable[[RunSummary], None] | None = None,
) -> RunSummary:
    """Play every scheduled game the output folder does not hold yet, its bots in
    ``sandbox`` (default: the configuration's, ``sandbox_of``).  Raises StorageError if
    the folder holds another tournament, SandboxError if the sandbox is required and
    cannot be had; KeyboardInterrupt passes through after the finished games are
    committed.  ``on_game`` is called after each game is committed (``referee
    tournament run --report`` rewrites the report from it).  The run itself is the
    ``driver``'s, over the fixed schedule."""
    out = (output_dir or config.output_dir).resolve()
    config, seed_source = with_seed(config, out)
    check_bots(config)
    if sandbox is None:
        sandbox = sandbox_of(config)
    keys = [config.resolve(k) for k in (config.remote.keys, config.remote.server_key)]
    sandbox = sandbox.hide(str(out), *keys)
    games = schedule(config)
    store = Store.create_or_resume(out, TournamentSettings.of(config), config.name, len(games),
                                   schedule_digest(games),
                                   meta={"seed_source": seed_source,
                                         "sandbox": json.dumps(sandbox.describe())})
    use_luck_setting(store, config.luck, lambda seats: seat_builtins(config, seats))
    executor = executor or ProcessExecutor(jobs or config.jobs)
    driver = Driver(store, out, executor, stop_after=config.stop_after,
                    never_stop=[b.name for b in config.remote_bots])
    with driver:
        for w in sandbox.warnings:
            print(w, file=sys.stderr, flush=True)
        done = store.done()
        todo = [g for g in games if g.index not in done]
        summary = RunSummary(scheduled=len(games), already_done=len(done), output_dir=out,
                             replayed=driver.result.replayed, errors=driver.result.errors,
                             stopped=driver.result.stopped)
        if done and not quiet:
            # Said first: the run that follows is the rest of an earlier one.
            print(f"resumed: {len(done)} of {len(games)} games were already played"
                  + ("; nothing left to play" if not todo else
                     f", {len(todo)} to go"), file=sys.stderr, flush=True)
        if progress is None and not quiet and todo:
            progress = Progress(len(games), len(done))
        driver.progress = progress
        if driver.stopper.stopped and todo:
            driver.say("stopped earlier: " + ", ".join(sorted(driver.stopper.stopped))
                       + " (its games are forfeited without starting it)")

        def committed() -> None:
            summary.played = driver.result.played
            if on_game:
                on_game(summary)

        driver.on_commit = committed
        driver.run(FixedSchedule(Job(config, str(out), sandbox=sandbox), todo))
        summary.played = driver.result.played
        return summary


def standings_of(output_dir: Path, scores: str = "adjusted") -> Standings:
    """Standings of the tournament in ``output_dir`` (finished or running), with
    its seed and the sandbox its bots ran in, ranked by ``scores`` (adjusted or raw)."""
    store = Store.open_existing(output_dir)
    try:
        cfg = store.settings
        st = compute(list(store.outcomes()), cfg.bot_names, cfg.seats, name=cfg.name,
                     scheduled=store.scheduled, scores=scores)
        st.luck_value = store.luck_setting().describe()
        st.seed = cfg.seed
        st.seed_source = store.meta("seed_source") or "given"
        st.running = Store.in_use(output_dir) if not st.complete else None
        sandbox = store.meta("sandbox")
        st.sandbox = json.loads(sandbox) if sandbox else None
        return st
    except sqlite3.Error as e:
        raise StorageError(f"{store.path} cannot be read: {e}; 'referee tournament verify "
                         f"{output_dir} --repair' rebuilds it from the game records") from None
    finally:
        store.close()
