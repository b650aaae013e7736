"""``referee luck``: the value function of luck-adjusted scores, refitted and applied.

The estimator is ``referee.play.luck``; this module is only the command group.
"""

from __future__ import annotations

from pathlib import Path

import click

from ..errors import StorageError
from ..league.store import DB_NAME as LEAGUE_DB
from ..league.store import LeagueStore
from ..play.luck import (
    DEFAULT_ROLLOUTS,
    FIT_SEATS,
    MODEL_FILE,
    SCORES,
    VALUES,
    LuckSetting,
    RolloutValue,
    Value,
    ValueModel,
    file_luck,
    fit_model,
)
from ..tournament.store import Store
from .kit import Group


@click.group(cls=Group)
def luck() -> None:
    """Luck-adjusted scores: the value function they use, and one game's luck."""


@luck.command("fit")
@click.option("--games", type=click.IntRange(min=10), default=1000, show_default=True,
              help="Games per table size (2 to 6 seats).")
@click.option("--seed", type=int, default=1, show_default=True,
              help="Seeds every game and every bot drawn: a seed gives one model.")
@click.option("--jobs", type=click.IntRange(min=1), default=1, show_default=True,
              help="Processes to play and replay the games in (the model is the same).")
@click.option("--seats", type=click.IntRange(2, 6), multiple=True,
              help="Only these table sizes (repeat; default: 2 to 6). A model without a "
                   "table size leaves its games unadjusted.")
@click.option("--output", type=click.Path(dir_okay=False), default=str(MODEL_FILE),
              show_default=True, help="Where to write the model (JSON).")
def fit_command(games: int, seed: int, jobs: int, seats: tuple[int, ...], output: str) -> None:
    """Refit the value function on games of the built-in bots (heuristic, lowest,
    and the two against each other) at 2 to 6 seats, and write it.  The weights are
    the ones that leave the adjusted scores of those games the least variance."""
    sizes = tuple(sorted(set(seats))) or FIT_SEATS
    total = games * len(sizes)
    done = [0]

    def progress(count: int) -> None:
        before = done[0]
        done[0] += count
        if done[0] // 250 > before // 250 or done[0] == total:
            click.echo(f"{done[0]}/{total} games", err=True)

    model = fit_model(games, seed, seats=sizes, progress=progress, jobs=jobs)
    Path(output).write_text(model.to_json())
    click.echo(f"wrote {output} ({games} games per table size, seed {seed})")


@luck.command("show")
@click.argument("record", type=click.Path(exists=True, dir_okay=False))
@click.option("--model", type=click.Path(exists=True, dir_okay=False), default=None,
              help="A value function other than the shipped one.")
@click.option("--rollouts", type=click.IntRange(min=0), default=0, show_default=True,
              help="Once the draw pile is empty, value positions by this many rollouts "
                   "(dealing the unseen 3DOWN cards, playing to the end) instead of the "
                   "linear model: far less variance at 2 seats, and slower.")
def show_command(record: str, model: str | None, rollouts: int) -> None:
    """One game's raw and luck-adjusted scores, seat by seat (RECORD: a game record)."""
    value: Value | None = ValueModel.load(Path(model)) if model else None
    if rollouts:
        value = RolloutValue(value, rollouts=rollouts)
    try:
        got = file_luck(Path(record), value)
    except (ValueError, KeyError, TypeError) as e:
        raise click.ClickException(f"{record}: {e}") from None
    click.echo(f"{got.events} chance events (cards drawn, 3DOWN cards turned)")
    for i, k in enumerate(SCORES):
        adj = got.adjusted(k)
        cells = "  ".join(f"seat {s}: {got.raw[i][s]:g} -> {adj[s]:+.3f}"
                          for s in range(len(adj)))
        click.echo(f"{k:<7} {cells}")


@luck.command("rescore")
@click.argument("folder", type=click.Path(exists=True, file_okay=False))
@click.option("--value", "value", type=click.Choice(VALUES), default="linear",
              show_default=True,
              help="The value function: the shipped linear model, or rollouts once the "
                   "draw pile is empty (a built-in bot played by its own policy).")
@click.option("--rollouts", type=click.IntRange(1, 1024), default=DEFAULT_ROLLOUTS,
              show_default=True, help="Rollouts per position, with --value rollout.")
def rescore_command(folder: str, value: str, rollouts: int) -> None:
    """Score a tournament's or league's games again (FOLDER: its output folder)
    with another value function: the standings, ratings, report and match then use
    these adjusted scores, and name the value function.  Running the tournament or
    league again scores its games by its file's [scores] setting."""
    where = Path(folder).resolve()
    setting = LuckSetting(value, rollouts)
    store: Store
    try:
        if (where / LEAGUE_DB).is_file():
            store = LeagueStore.open(where)
            builtins: dict[str, str | None] = {}
        else:
            store = Store.create_or_resume_existing(where)
            builtins = {b.name: b.builtin for b in store.settings.bots}
    except StorageError as e:
        raise click.ClickException(str(e)) from None
    try:
        store.lock()
        before = store.luck_setting().describe()
        count = store.rescore(setting, lambda seats: [builtins.get(x) for x in seats])
    except StorageError as e:
        raise click.ClickException(str(e)) from None
    finally:
        store.close()
    click.echo(f"{count} games scored again with the value function {setting.describe()} "
               f"(was {before})")
