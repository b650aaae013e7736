"""Validation against the protocol's schemas with a real validator (``jsonschema``,
draft 2020-12), as a bot author would check messages: ``errors`` lists what is wrong,
one line per problem, each naming the place (``$.code``)."""

from __future__ import annotations

import json
from typing import Any

from jsonschema import Draft202012Validator

# One validator per schema, the schema itself checked once: checking the full
# request schema costs ~80 ms, and a game sends a thousand messages.
_VALIDATORS: dict[str, Draft202012Validator] = {}


def _validator(schema: dict[str, Any]) -> Draft202012Validator:
    key = json.dumps(schema, sort_keys=True)
    v = _VALIDATORS.get(key)
    if v is None:
        Draft202012Validator.check_schema(schema)
        v = _VALIDATORS[key] = Draft202012Validator(schema)
    return v


def errors(schema: dict[str, Any], value: Any) -> list[str]:
    out = []
    for e in sorted(_validator(schema).iter_errors(value), key=lambda e: e.json_path):
        out.append(f"{e.json_path}: {e.message}")
    return out
