"""``referee replay``: a recorded game shown turn by turn and verified by re-running
it, or written as the one-file replay viewer.  Loaded only when ``replay`` runs
(``referee.cli.main``)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..play.replay import (
    RecordError,
    deck_file_text,
    play_again_command,
    read_record,
    show_record,
    verify,
)
from ..report import ReportError, write_game_html
from .kit import UserError


@click.command("replay")
@click.argument("record_file", metavar="FILE", type=click.Path(dir_okay=False))
@click.option("--seat", type=int, default=None,
              help="Show the game as this seat saw it (default: every card, omniscient).")
@click.option("--check", "check_only", is_flag=True,
              help="Only verify the record; print one line.")
@click.option("--step", is_flag=True, help="Wait for Enter before each turn.")
@click.option("--no-decisions", is_flag=True, help="Show events only, not the decisions.")
@click.option("--write-deck", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Also write the game's deal as a deck file for 'referee play --deck-file'.")
@click.option("--turn", "turn", type=click.IntRange(min=0), default=None, metavar="N",
              help="Start at turn N: the table then, and the game on from there.")
@click.option("--html", "html_out", type=click.Path(dir_okay=False), default=None,
              metavar="OUT.html", help="Write the game as one self-contained HTML file (the "
              "replay viewer: step, jump, every view) instead of printing it; with --seat and "
              "--turn, it opens there.")
def replay(record_file: str, seat: int | None, check_only: bool, step: bool,
           no_decisions: bool, write_deck: str | None, turn: int | None,
           html_out: str | None) -> None:
    """Show a recorded game turn by turn, and verify it by re-running it.

    The record (written by 'referee play --record', or a tournament's
    OUTPUT/games/*.jsonl) is re-run through the rules engine; if it does not re-run
    identically, that is reported and the exit status is 2.  With --seat, each of the
    seat's decisions comes with its hand and its legal decisions; faults are shown
    where they happened, with what the bot sent.

    \b
    Examples:
      referee replay game.jsonl                 # every card, turn by turn
      referee replay game.jsonl --seat 1        # only what seat 1 knew
      referee replay game.jsonl --turn 40       # start at turn 40
      referee replay game.jsonl --step          # press Enter for each turn
      referee replay game.jsonl --html game.html   # the viewer, one file
      referee replay runs/demo/games/g000012.jsonl --check
      referee replay game.jsonl --check --write-deck deal.txt   # then play it again
    """
    try:
        rec = read_record(record_file)
        if html_out:
            try:
                if seat is not None and not 0 <= seat < rec.config.players:
                    raise UserError(f"there is no seat {seat} in this {rec.config.players}-"
                                   f"player game: choose 0 to {rec.config.players - 1}")
                write_game_html(rec, Path(html_out), seat=seat, turn=turn)
            except ReportError as e:
                raise UserError(str(e)) from None
            click.echo(f"replay viewer written to {html_out}: open it in a browser "
                       f"(file://{Path(html_out).resolve()})")
        elif not check_only:
            pause = None
            if step:
                def pause() -> bool:
                    return click.prompt("", default="", show_default=False,
                                        prompt_suffix="[Enter: next turn, q: stop] ") != "q"
            show_record(rec, click.echo, seat, decisions=not no_decisions, pause=pause,
                        turn=turn)
        if write_deck:
            with open(write_deck, "w", encoding="utf-8") as f:
                f.write(deck_file_text(rec))
            click.echo(f"deal written to {write_deck}: play it again with\n  "
                       + play_again_command(rec, write_deck))
    except RecordError as e:
        raise UserError(str(e)) from None
    except BrokenPipeError:
        raise  # the reader went away (``| head``): see _Group
    except OSError as e:
        raise UserError(f"cannot write the deck file {write_deck}: {e}") from None
    except click.Abort:
        raise UserError("stopped") from None
    ok, why = verify(rec)
    if ok:
        res = rec.result
        summary = (f"; result {res.how}, points {' '.join(map(str, res.points))}"
                   if res else "")
        click.echo(f"verified: {record_file} re-runs identically "
                   f"({len(rec.decisions)} decisions, {len(rec.events)} events{summary})")
        return
    click.echo(f"Error: {record_file} does NOT re-run identically: {why}", err=True)
    sys.exit(2)
