"""Every user mistake ends with a one-line message and a non-zero exit, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.cli_helpers import invoke, write_deal

pytestmark = pytest.mark.slow


def _cases(tmp: Path) -> list[tuple[list[str], str]]:
    deal = write_deal(tmp)
    bad_card = tmp / "bad_card.txt"
    bad_card.write_text("1g 2g\n3g 11g 4g\n")
    not_record = tmp / "notes.txt"
    not_record.write_text("hello\n")
    empty = tmp / "empty.txt"
    empty.write_text("# nothing\n")
    blank = tmp / "blank.jsonl"
    blank.write_text("\n")
    return [
        (["play", "heuristic", "no-such-bot-xyz"], "unknown bot command 'no-such-bot-xyz'"),
        (["play", "heuristic", "./nowhere/bot.py"], "no such file './nowhere/bot.py'"),
        (["play", "heuristic", "example:cobol"], "unknown example bot 'cobol'"),
        (["play", "heuristic", "random", "--deck-file", str(tmp / "missing.txt")],
         "no such deck file"),
        (["play", "heuristic", "random", "--deck-file", str(bad_card)], "line 2: '11g' is not a card"),
        (["play", "heuristic", "random", "--deck-file", str(empty)], "lists no cards"),
        (["play", "heuristic", "random", "-V", "play_outt"], "did you mean play_out?"),
        (["play", "heuristic", "random", "-V", "everything"], "unknown variant 'everything'"),
        (["play", "heuristic"], "a game needs 2 to 6 bots, 1 given"),
        (["play", *["random"] * 7], "a game needs 2 to 6 bots, 7 given"),
        (["play", "random", "random", "random", "--colours", "1"], "too small for 3 players"),
        (["play", "random", "random", "random", "--deck-file", str(deal)],
         "too small for 3 players"),
        (["play", "random", "random", "--deck", "tiny"], "unknown deck 'tiny'"),
        (["play", "random", "random", "--first-player", "2"], "--first-player must be a seat"),
        (["play", "random", "random", "--colours", "9"], "colours must be 1 to 7"),
        (["play", "human", "human"], "only one person"),
        (["play", "random", "random", "--record", str(tmp / "no" / "dir" / "g.jsonl")],
         "does not exist"),
        (["replay", str(tmp / "missing.jsonl")], "no such file"),
        (["replay", str(not_record)], "is not JSON"),
        (["replay", str(empty)], "is not JSON"),
        (["replay", str(blank)], "does not start with a game header"),
    ]


def test_each_mistake_gives_one_line_and_a_nonzero_exit(tmp_path: Path) -> None:
    for args, message in _cases(tmp_path):
        r = invoke(*args)
        assert r.exit_code != 0, args
        lines = [x for x in r.stderr.splitlines() if x.strip()]
        assert len(lines) == 1, (args, r.stderr)
        assert lines[0].startswith("Error: ") and message in lines[0], (args, lines[0])
        assert "Traceback" not in r.output


def test_replay_seat_out_of_range(tmp_path: Path) -> None:
    rec = tmp_path / "g.jsonl"
    invoke("play", "random", "lowest", "--seed", "1", "-q", "--record", str(rec))
    r = invoke("replay", str(rec), "--seat", "3")
    assert r.exit_code != 0 and "there is no seat 3" in r.stderr


@pytest.mark.parametrize("flag", ["--human", "human"])
def test_human_and_json_do_not_mix(flag: str) -> None:
    r = invoke("play", flag, "random", "--json")
    assert r.exit_code != 0 and "--json cannot be combined" in r.stderr
