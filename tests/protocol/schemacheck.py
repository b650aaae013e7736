"""Validation against the protocol's schemas with a real validator (``jsonschema``,
draft 2020-12), as a bot author would check messages: ``errors`` lists what is wrong,
one line per problem, each naming the place (``$.code``)."""

from __future__ import annotations

from typing import Any

from jsonschema import Draft202012Validator


def errors(schema: dict[str, Any], value: Any) -> list[str]:
    Draft202012Validator.check_schema(schema)
    out = []
    for e in sorted(Draft202012Validator(schema).iter_errors(value), key=lambda e: e.json_path):
        out.append(f"{e.json_path}: {e.message}")
    return out
