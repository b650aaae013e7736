"""A validator for the small part of JSON Schema the protocol's schemas use: type,
const, enum, required, properties, items, minimum, minItems, maxLength."""

from __future__ import annotations

from typing import Any

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: type(v) is int,
    "number": lambda v: type(v) in (int, float),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
}
KNOWN = {"$schema", "$id", "title", "description", "type", "const", "enum", "required",
         "properties", "items", "minimum", "minItems", "maxLength"}


def errors(schema: dict[str, Any], value: Any, path: str = "$") -> list[str]:
    unknown = set(schema) - KNOWN
    assert not unknown, f"minischema does not know {unknown}"
    out: list[str] = []
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_TYPES[t](value) for t in types):
            return [f"{path}: {value!r} is not {types}"]
    if "const" in schema and value != schema["const"]:
        out.append(f"{path}: {value!r} != {schema['const']!r}")
    if "enum" in schema and value not in schema["enum"]:
        out.append(f"{path}: {value!r} not in {schema['enum']}")
    if "minimum" in schema and value < schema["minimum"]:
        out.append(f"{path}: {value} < {schema['minimum']}")
    if "minItems" in schema and len(value) < schema["minItems"]:
        out.append(f"{path}: fewer than {schema['minItems']} items")
    if "maxLength" in schema and len(value) > schema["maxLength"]:
        out.append(f"{path}: longer than {schema['maxLength']}")
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                out.append(f"{path}: lacks {key!r}")
        for key, sub in schema.get("properties", {}).items():
            if key in value:
                out += errors(sub, value[key], f"{path}.{key}")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            out += errors(schema["items"], item, f"{path}[{i}]")
    return out
