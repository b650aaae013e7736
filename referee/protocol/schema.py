"""JSON Schema (draft 2020-12) for every message, generated from ``messages.MESSAGES``.

Owns the translation of the message table into schema files; the files under
``protocol/schema/`` are its output and a test checks they are up to date::

    python -m referee.protocol.schema protocol/schema

The schemas describe version 1 as documented: unknown fields are allowed
(``additionalProperties`` is left open) so later versions may add optional fields.
They are written for strict validators (ajv's strict mode accepts them): ``anyOf``
rather than a list of types, a ``type`` beside every keyword that needs one.  The
observation, the events and the configuration are described in full
(``game_schema``), so that validating a request checks what it carries.

JSON Schema counts ``1.0`` as an integer; the referee does not (a bot's ``"id": 3.0``
is malformed).  No keyword can tell the two apart, so the descriptions of the
integers a bot sends say so.

Must not import: anything doing I/O beyond writing the files in ``main``.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

from .game_schema import INTEGER_NOTE
from .messages import INTEGER, MESSAGES, Field, MessageSpec

SCHEMA_ID = "https://updown-referee.invalid/protocol/1/"


def _types(types: tuple[str, ...]) -> dict[str, Any]:
    """A type keyword; ``anyOf`` for more than one type (ajv's strict mode refuses a
    list of types)."""
    if len(types) == 1:
        return {"type": types[0]}
    return {"anyOf": [{"type": t} for t in types]}


def field_schema(f: Field, sender: str = "referee") -> dict[str, Any]:
    """One field's schema; an object's fields (or an array's objects') nested in it.
    In what a bot sends, an integer's description says that 1.0 is no integer to the
    referee, though JSON Schema counts it as one (no schema keyword can tell them
    apart, so the schema says it in words)."""
    doc = f.doc
    if sender == "bot" and INTEGER in (*f.types, f.items):
        doc += f"; integers {INTEGER_NOTE}"
    p: dict[str, Any] = {"description": doc}
    if f.enum is not None and len(f.types) > 1:
        p["anyOf"] = [{"type": t} for t in f.types]
    else:
        p.update(_types(f.types))
    if f.items is not None:
        p["items"] = {"type": f.items}
    if f.enum is not None:
        p["enum"] = list(f.enum) + ([None] if "null" in f.types else [])
    if f.minimum is not None:
        p["minimum"] = f.minimum
    if f.maximum is not None:
        p["maximum"] = f.maximum
    if f.min_items is not None:
        p["minItems"] = f.min_items
    if f.max_length is not None:
        p["maxLength"] = f.max_length
    if f.fields is not None:
        obj = {"required": [g.name for g in f.fields if g.required],
               "properties": {g.name: field_schema(g, sender) for g in f.fields}}
        if "items" in p:
            p["items"].update(obj)
        else:
            p.update(obj)
    if f.schema is not None:
        full = {k: v for k, v in f.schema.items() if k != "description"}
        if "items" in p:
            p["items"] = full
        else:
            p.update(full)
    return p


def message_schema(spec: MessageSpec) -> dict[str, Any]:
    props: dict[str, Any] = {"type": {"type": "string", "const": spec.type}}
    required = ["type"]
    for f in spec.fields:
        props[f.name] = field_schema(f, spec.sender)
        if f.required:
            required.append(f.name)
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"{SCHEMA_ID}{spec.type}.json",
        "title": f"{spec.type} ({spec.sender} to {'referee' if spec.sender == 'bot' else 'bot'})",
        "description": spec.doc,
        "type": "object",
        "required": required,
        "properties": props,
        **(spec.schema or {}),
    }


def all_schemas() -> dict[str, dict[str, Any]]:
    """File name -> schema: one per message."""
    return {f"{t}.json": message_schema(spec) for t, spec in MESSAGES.items()}


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    out = argv[0] if argv else os.path.join("protocol", "schema")
    os.makedirs(out, exist_ok=True)
    for name, schema in all_schemas().items():
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            f.write(render(schema))
    print(f"wrote {len(MESSAGES)} schemas to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
