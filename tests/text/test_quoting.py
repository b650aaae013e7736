"""What a bot sent is shown in JSON terms in the referee's messages, never as a
Python repr (referee/text/quoting.py)."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

from referee.text.quoting import Guard, control, excerpt, kind, printable, quote, show


@pytest.mark.parametrize("data, shown", [
    (b"hello there", '"hello there"'),
    ("it's \"x\"", '"it\'s \\"x\\""'),
    (b"tab\there\x00\x7f", '"tab\\there\\u0000\\u007f"'),
    (b"bad \xff byte", '"bad \ufffd byte"'),
    ("é" * 70, '"' + "é" * 60 + '"...'),
    ("😀".encode() * 100, '"' + "😀" * 60 + '"...'),
])
def test_quote_is_a_json_style_string(data: bytes | str, shown: str) -> None:
    assert quote(data) == shown


@pytest.mark.parametrize("value, shown", [
    (True, "true"), (False, "false"), (None, "null"), (1.0, "1.0"), (7, "7"),
    ("1", '"1"'), ([1, "a", None], '[1,"a",null]'), ({"k": True}, '{"k":true}'),
    (b"\x00\x01", "binary data of 2 bytes"),
    (list(range(100)), "[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,..."),
])
def test_show_writes_values_as_json_does(value: Any, shown: str) -> None:
    assert show(value) == shown


def test_excerpt_keeps_the_bots_own_spelling() -> None:
    assert excerpt(b"  1e0 ") == "1e0"
    assert excerpt(b"[" + b"1," * 100 + b"1]") == "[" + "1," * 28 + "..."


@pytest.mark.parametrize("value, json_kind, msgpack_kind", [
    ([1], "a JSON list", "a msgpack array"), ("s", "a JSON string", "a msgpack string"),
    (None, "JSON null", "msgpack nil"), (1.5, "a JSON number", "a msgpack float"),
    (True, "a JSON boolean", "a msgpack boolean"), (b"x", "a JSON value", "msgpack binary data"),
])
def test_kind_names_the_value_in_the_codecs_terms(value: Any, json_kind: str,
                                                  msgpack_kind: str) -> None:
    assert kind(value, "JSON") == json_kind
    assert kind(value, "msgpack") == msgpack_kind


def test_printable_escapes_every_character_a_terminal_would_act_on() -> None:
    hostile = ("a\x1b]0;t\x07\x1b[2J\rb\x7f\x85\x9b\u202e\u2066\u200b\u200d\u2028\ufeff"
               "\U000e0001\tc\nd")
    shown = printable(hostile)
    assert shown == ("a\\x1b]0;t\\x07\\x1b[2J\\x0db\\u007f\\u0085\\u009b\\u202e\\u2066"
                     "\\u200b\\u200d\\u2028\\ufeff\\udb40\\udc01\\x09c\\x0ad")
    assert all(c.isprintable() for c in shown)
    assert printable(hostile, keep_tabs=True, keep_newlines=True).endswith("\tc\nd")
    assert printable("é 🂡 日本 plain") == "é 🂡 日本 plain"  # printable text is left alone
    # JSON output stays valid JSON, meaning the same
    data = {"name": "x\u202e\x7f\x85\U000e0001"}
    assert json.loads(printable(json.dumps(data, ensure_ascii=False))) == data


def test_the_guard_escapes_writes_and_lets_only_the_referees_own_sequences_past() -> None:
    out = io.StringIO()
    g = Guard(out)  # type: ignore[arg-type]
    g.write("bot\x1b[31m\r\n")
    control(g, "\r\x1b[K")
    control(g, "\x1b[0m")
    with pytest.raises(ValueError):
        control(g, "\x1b]0;title\x07")  # not one of the referee's: refused
    assert out.getvalue() == "bot\\x1b[31m\\x0d\n\r\x1b[K\x1b[0m"
    with pytest.raises(AttributeError):
        g.buffer  # noqa: B018  # nothing writes around it
