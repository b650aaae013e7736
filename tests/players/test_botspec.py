"""Bot specs (referee.players.botspec): the syntax of a seat on the command line."""

from __future__ import annotations

import sys

import pytest

from referee.players.botspec import BotSpecError, parse_spec, parse_specs


def test_builtin_human_and_names() -> None:
    s = parse_spec("heuristic")
    assert (s.kind, s.name, s.builtin) == ("builtin", "heuristic", "heuristic")
    assert parse_spec("human").kind == "human"
    named = parse_spec("alice=random")
    assert (named.kind, named.name, named.builtin) == ("builtin", "alice", "random")


def test_commands_and_transports() -> None:
    s = parse_spec(f"{sys.executable} my_bot.py --level 3", check=False)
    assert s.kind == "stdio" and s.command[1:] == ("my_bot.py", "--level", "3")
    assert s.name == "my_bot"
    z = parse_spec(f"zmq:{sys.executable} 'my bot.py'", check=False)
    assert z.kind == "zmq" and z.command[1] == "my bot.py" and z.name == "my bot"
    assert parse_spec(f"stdio:{sys.executable} x.py", check=False).kind == "stdio"
    assert parse_spec(f"{sys.executable} -u -m mypkg.bot").name == "bot"
    assert parse_spec("sh -c 'exec ./bot'").name == "sh"
    ex = parse_spec("example:python-random")
    assert ex.kind == "stdio" and ex.command[-1].endswith("example_bots/python/random_bot.py")


def test_duplicate_names_are_numbered_and_named_duplicates_refused() -> None:
    assert [s.name for s in parse_specs(["random", "random", "lowest"])] == [
        "random", "random-2", "lowest"]
    with pytest.raises(BotSpecError, match="two seats are named 'a'"):
        parse_specs(["a=random", "a=lowest"])


@pytest.mark.parametrize(("spec", "message"), [
    ("no-such-program-xyz --fast", "unknown bot command 'no-such-program-xyz'"),
    ("./missing_bot.py", "no such file './missing_bot.py'"),
    ("python3 -u missing_bot.py", "no such file 'missing_bot.py'"),
    ("example:cobol", "unknown example bot 'cobol'"),
    ("tcp:localhost", "unknown prefix 'tcp:'"),
    ("python3 'unclosed", "cannot split the command line"),
    ("", "an empty bot spec"),
])
def test_bad_specs_say_what_is_wrong(spec: str, message: str) -> None:
    with pytest.raises(BotSpecError, match=message):
        parse_spec(spec)
