"""One sentence for a tool call whose arguments do not fit the tool's schema.

pydantic reports a multi-line dump with links, and one entry per member of a union.
An agent needs the argument's name, what it must be and what it got, so the
sentence is read off the tool's own JSON schema: ``recall: max must be an integer
of at least 1, not 0.``
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from pydantic import ValidationError

__all__ = ["argument_error"]

Schema = Mapping[str, Any]
Loc = tuple[str | int, ...]

_SHOWN: Final = 40  # characters of a rejected value quoted back


def _options(node: Schema) -> Sequence[Schema]:
    """The alternatives of a union, or the node itself."""
    options: Sequence[Schema] = node.get("anyOf") or node.get("oneOf") or [node]
    return options


def _step(node: Schema, part: str | int) -> Schema | None:
    """The sub-schema of an item, field or map entry; ``None`` past the schema
    (a union member pydantic names, an unknown key)."""
    for option in _options(node):
        if isinstance(part, int):
            if option.get("type") == "array":
                items: Schema = option.get("items", {})
                return items
            continue
        properties: Schema = option.get("properties", {})
        if part in properties:
            found: Schema = properties[part]
            return found
        entries = option.get("additionalProperties")
        if isinstance(entries, Mapping):
            return entries
    return None


def _walk(schema: Schema, loc: Loc) -> tuple[Schema, Loc]:
    """How far ``loc`` follows the schema: the node reached and its path."""
    node: Schema = schema
    path: Loc = ()
    for part in loc:
        child = _step(node, part)
        if child is None:
            break
        node, path = child, (*path, part)
    return node, path


def _where(path: Loc) -> str:
    text = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)
    return text.removeprefix(".") or "the arguments"


def _listing(words: Sequence[str], last: str) -> str:
    """``a, b and c`` (or ``a, b or c``)."""
    if len(words) < 2:
        return "".join(words)
    return f"{', '.join(words[:-1])} {last} {words[-1]}"


def _one(node: Schema, alone: bool) -> str:
    """What one schema alternative accepts, as a noun phrase."""
    if "enum" in node:
        return "one of " + _listing([json.dumps(v) for v in node["enum"]], "or")
    kind = node.get("type")
    if kind == "string":
        return "a non-empty string" if node.get("minLength") else "a string"
    if kind == "integer":
        low, high = node.get("minimum"), node.get("maximum")
        if low is not None and high is not None:
            return f"an integer from {low} to {high}"
        return f"an integer of at least {low}" if low is not None else "an integer"
    if kind == "boolean":
        return "true or false" if alone else "a boolean"
    items = node.get("items", {}).get("type")
    plural = {"string": "strings", "object": "objects"}.get(items or "", "values")
    return {
        "number": "a number",
        "object": "an object",
        "array": f"a list of {plural}",
    }.get(kind or "", "a JSON value")


def _expected(node: Schema) -> str:
    options = [o for o in _options(node) if o.get("type") != "null"] or [node]
    kinds = {o.get("type") for o in options}
    if {"integer", "number"} <= kinds:  # any number will do
        options = [o for o in options if o.get("type") != "integer"]
    phrases = list(dict.fromkeys(_one(o, len(options) == 1) for o in options))
    return _listing(phrases, "or")


def _value_at(arguments: Mapping[str, Any], path: Loc, fallback: Any) -> Any:
    value: Any = arguments
    try:
        for part in path:
            value = value[part]
    except (KeyError, IndexError, TypeError):
        return fallback
    return value


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=True, default=str)
    return text if len(text) <= _SHOWN else text[: _SHOWN - 1] + "…"


def _names(node: Schema) -> list[str]:
    return [str(n) for o in _options(node) for n in o.get("properties", {})]


def _sentence(
    tool: str, schema: Schema, arguments: Mapping[str, Any], error: Any
) -> str:
    loc: Loc = tuple(error["loc"])
    node, path = _walk(schema, loc)
    kind: str = error["type"]
    if kind == "extra_forbidden" and len(path) == len(loc) - 1:
        name = json.dumps(str(loc[-1]))[:_SHOWN]
        names = _listing(_names(node), "and")
        if not path:
            takes = f"its arguments: {names}" if names else "it takes none"
            return f"{tool}: unknown argument {name}; {takes}"
        return f"{tool}: unknown field {name} in {_where(path)}; its fields: {names}"
    if kind == "missing" and len(path) == len(loc):
        return f"{tool}: {_where(path)} is required"
    got = _value_at(arguments, path, error.get("input"))
    return f"{tool}: {_where(path)} must be {_expected(node)}, not {_shown(got)}"


def _problem(schema: Schema, error: Any) -> Loc:
    """What an error is about: a union's members all count as one problem."""
    loc: Loc = tuple(error["loc"])
    return (
        loc
        if error["type"] in ("extra_forbidden", "missing")
        else _walk(schema, loc)[1]
    )


def argument_error(
    tool: str, schema: Schema, arguments: Mapping[str, Any], exc: ValidationError
) -> str:
    """One sentence saying which argument is wrong and what it must be.

    Args:
        tool: the tool's name.
        schema: the tool's input schema (references inlined).
        arguments: the arguments as the client sent them.
        exc: pydantic's verdict on them.
    """
    errors = exc.errors(include_url=False)
    first = _sentence(tool, schema, arguments, errors[0])
    others = {_problem(schema, e) for e in errors[1:]} - {_problem(schema, errors[0])}
    if others:
        first += f" (and {len(others)} more problem{'s' if len(others) > 1 else ''})"
    return first + "."
