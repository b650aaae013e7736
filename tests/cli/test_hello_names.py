"""Seats named from the bots' hellos (``referee play --names hello``, issue 23): a
hello's name is hostile text, made a plain name of at most 32 characters; two alike
are numbered; a NAME= given and the built-in bots keep theirs; the default names
seats as before (from the bot spec)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from referee.players.botspec import HELLO_NAME_MAX, hello_seat_name, names_from_hellos

from .cli_helpers import invoke

NAMED = Path(__file__).resolve().parents[1] / "bots" / "named.py"
#: A carriage return, a fake line, a screen clear, a window title, a bidi override,
#: markup and far more than 32 characters.
HOSTILE = ("\\r\\u001b[2J\\u001b]0;pwned\\u0007XX other REJECTED \\u202e<b>evil</b> "
           + "x" * 150)


def test_a_hello_name_becomes_a_plain_bounded_name() -> None:
    assert hello_seat_name("mybot") == "mybot"
    assert hello_seat_name("My Bot 2.0 (beta)") == "My_Bot_2.0_beta"
    name = hello_seat_name(json.loads('"' + HOSTILE + '"'))
    assert len(name) <= HELLO_NAME_MAX and name.startswith("2J_0_pwned_XX_other_REJECTED")
    assert all(c.isalnum() or c in "_.+@-" for c in name) and name.isascii()
    assert hello_seat_name("\x1b\u202e<>") == ""
    # alike names are numbered, in seat order; a kept name is never taken; nothing
    # usable in a hello keeps the seat's own name
    assert names_from_hellos(["a", "b", "heuristic", "d"],
                             ["alpha", "alpha", None, "<>"]) == ["alpha", "alpha-2", "heuristic", "d"]
    assert names_from_hellos(["x", "heuristic"], ["Heuristic", None]) == ["Heuristic-2", "heuristic"]
    long = "y" * 40
    assert names_from_hellos(["a", "b"], [long, long]) == ["y" * 32, "y" * 30 + "-2"]


def play(tmp_path: Path, *extra: str) -> dict[str, object]:
    bot = f"{sys.executable} {NAMED} '{HOSTILE}'"
    rec = tmp_path / "game.jsonl"
    r = invoke("play", bot, bot, "heuristic", "--seed", "3", "--sandbox", "off",
               "--record", str(rec), "--json", *extra)
    assert r.exit_code == 0, r.stderr
    assert "\x1b" not in r.stdout + r.stderr and "\u202e" not in r.stdout + r.stderr
    out: dict[str, object] = json.loads(r.stdout)
    head = json.loads(rec.read_text().splitlines()[0])
    assert head["bots"] == out["bots"]  # the record names the seats alike
    return out


def test_play_names_seats_from_the_hello_when_asked(tmp_path: Path) -> None:
    plain = hello_seat_name(json.loads('"' + HOSTILE + '"'))
    out = play(tmp_path, "--names", "hello")
    assert out["bots"] == [plain, plain[:30] + "-2", "heuristic"]
    standings = [row["bot"] for row in out["standings"]]  # type: ignore[attr-defined]
    assert sorted(standings) == sorted(out["bots"])  # type: ignore[arg-type]
    # today's rule is the default: the program's name, numbered
    assert play(tmp_path)["bots"] == ["named", "named-2", "heuristic"]


@pytest.mark.slow
def test_tournament_quick_and_match_name_bots_from_the_hello_when_asked(tmp_path: Path) -> None:
    alpha = f"{sys.executable} {NAMED} 'Alpha \\u001b[2J'"
    r = invoke("tournament", "quick", "heuristic", alpha, alpha, "--names", "hello",
               "--deals", "1", "--seed", "4", "-o", str(tmp_path / "q"), "--jobs", "1",
               "--format", "json", "--quiet")
    assert r.exit_code == 0, r.stderr
    st = json.loads(r.stdout)
    assert sorted(row["bot"] for row in st["standings"]) == ["Alpha_2J", "Alpha_2J-2",
                                                              "heuristic"]
    r = invoke("match", alpha, "heuristic", "--names", "hello", "--games", "2", "--jobs", "1",
               "-o", str(tmp_path / "m"), "--json")
    assert r.exit_code == 0, r.stderr
    m = json.loads(r.stdout)
    assert (m["new"], m["old"]) == ("Alpha_2J", "heuristic") and m["games"] == 2
    # a NAME= given is kept
    r = invoke("match", f"mine={alpha}", "heuristic", "--names", "hello", "--games", "2",
               "--jobs", "1", "-o", str(tmp_path / "m2"), "--json")
    assert r.exit_code == 0, r.stderr
    assert json.loads(r.stdout)["new"] == "mine"
