"""The ``kg ingest`` input document, decoded with Go's rules (spec 5.1).

Go decodes the input with ``DisallowUnknownFields`` at every level, matches keys to
fields case-insensitively (the last duplicate wins), and reads props values and
``value`` as ``FlexString``: any JSON scalar, with numbers keeping their literal text
(``3.0`` stays ``"3.0"``). Python's ``json`` is driven so that it keeps exactly that
information: object pairs in order, and number literals as text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Final

from kgai_tui.core.errors import UsageError
from kgai_tui.core.gosem.gotext import go_fold_key
from kgai_tui.core.wire import codec as _codec  # noqa: F401  (registers "kgai-go-replace")

UNKNOWN_FIELD_HINT: Final = (
    " — valid decision fields are title, rationale, author, date, refs, supersedes_on,"
    " mutations; elements are attached via mutations, e.g."
    ' {"op":"upsert_element","kind":"service","name":"X"}'
)
_SURROGATE: Final = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True, slots=True)
class RefInput:
    """An external reference: ``{"system": "clickup", "url": "https://…"}``."""

    system: str = ""
    url: str = ""


@dataclass(frozen=True, slots=True)
class MutationInput:
    """One input mutation, fields as typed (references not yet resolved)."""

    op: str = ""
    kind: str = ""
    name: str = ""
    props: tuple[tuple[str, str], ...] = ()
    from_: str = ""
    to: str = ""
    link: str = ""
    element: str = ""
    key: str = ""
    value: str = ""


@dataclass(frozen=True, slots=True)
class DecisionInput:
    """One decision to record, as the user wrote it."""

    title: str = ""
    rationale: str = ""
    author: str = ""
    date: str = ""
    refs: tuple[RefInput, ...] = ()
    supersedes_on: tuple[str, ...] = ()
    mutations: tuple[MutationInput, ...] = ()


class _Num(str):
    """A JSON number, kept as its literal text."""

    __slots__ = ()


class _Obj(list[tuple[str, Any]]):
    """A JSON object as its ordered key/value pairs (duplicates kept)."""


def _reject_constant(name: str) -> Any:
    raise ValueError(f"invalid literal {name}")


_DECODER: Final = json.JSONDecoder(
    object_pairs_hook=_Obj,
    parse_float=_Num,
    parse_int=_Num,
    parse_constant=_reject_constant,
)

# Field tables, JSON name -> kind, per Go struct. Names are Go's for error messages.
_TOP: Final = ("IngestInput", {"decision": "decision", "decisions": "decisions"})
_DECISION: Final = (
    "DecisionInput",
    {
        "title": "str",
        "rationale": "str",
        "author": "str",
        "date": "str",
        "refs": "refs",
        "supersedes_on": "strlist",
        "mutations": "mutations",
    },
)
_REF: Final = ("RefInput", {"system": "str", "url": "str"})
_MUTATION: Final = (
    "MutationInput",
    {
        "op": "str",
        "kind": "str",
        "name": "str",
        "props": "props",
        "from": "str",
        "to": "str",
        "link": "str",
        "element": "str",
        "key": "str",
        "value": "flex",
    },
)
_GO_TYPES: Final = {
    "str": "string",
    "flex": "engine.FlexString",
    "strlist": "[]string",
    "refs": "[]engine.RefInput",
    "mutations": "[]engine.MutationInput",
    "props": "map[string]engine.FlexString",
    "decision": "engine.DecisionInput",
    "decisions": "[]engine.DecisionInput",
}


class _InputError(Exception):
    """A Go decoding error; ``unknown_field`` adds the valid-fields hint."""

    def __init__(self, message: str, *, unknown_field: bool = False) -> None:
        super().__init__(message)
        self.unknown_field = unknown_field


def _json_type(value: Any) -> str:
    if isinstance(value, _Num):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, _Obj):
        return "object"
    return "array"


def _go_str(value: str) -> str:
    """Lone surrogates (from ``\\ud800`` escapes) decode to U+FFFD in Go."""
    return _SURROGATE.sub("\ufffd", value) if _SURROGATE.search(value) else value


def _type_error(value: Any, struct: str, path: str, kind: str) -> _InputError:
    return _InputError(
        f"json: cannot unmarshal {_json_type(value)} into Go struct field "
        f"{struct}.{path} of type {_GO_TYPES[kind]}"
    )


def _flex(value: Any) -> str:
    """Decode a ``FlexString``: any scalar as text; ``null`` is ``""``."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):  # strings and number literals (_Num) alike
        return _go_str(str(value))
    return_type = "object" if isinstance(value, _Obj) else "array"
    raise _InputError(
        f"must be a scalar (string, number, boolean or null), got {return_type}"
    )


def _decode_struct(
    obj: _Obj,
    state: dict[str, Any],
    table: tuple[str, dict[str, str]],
    path: str,
) -> None:
    """Decode an object into ``state`` (a dict of field values), as Go would."""
    struct, fields = table
    folded = {go_fold_key(name): name for name in fields}
    for key, value in obj:
        name = key if key in fields else folded.get(go_fold_key(key))
        if name is None:
            raise _InputError(
                f"json: unknown field {json.dumps(key)}", unknown_field=True
            )
        state[name] = _decode_field(
            value, state.get(name), struct, path + name, fields[name]
        )


def _decode_field(value: Any, current: Any, struct: str, path: str, kind: str) -> Any:
    if kind == "flex":
        return _flex(value)
    if value is None:
        # null leaves a string unchanged and clears a list, a map or a pointer.
        if kind == "str":
            return current if current is not None else ""
        return None
    if kind == "str":
        if type(value) is not str:
            raise _type_error(value, struct, path, kind)
        return _go_str(value)
    if kind == "props":
        if not isinstance(value, _Obj):
            raise _type_error(value, struct, path, kind)
        props = dict(current) if current else {}
        for key, item in value:  # a Go map keeps earlier entries of a duplicate key
            props[_go_str(key)] = _flex(item)
        return props
    if kind == "decision":
        if not isinstance(value, _Obj):
            raise _type_error(value, struct, path, kind)
        sub = current if current is not None else {}
        _decode_struct(value, sub, _DECISION, path + ".")
        return sub
    if not isinstance(value, list) or isinstance(value, _Obj):
        raise _type_error(value, struct, path, kind)
    if kind == "strlist":
        items = []
        for item in value:
            if item is None:
                items.append("")
            elif type(item) is not str:
                raise _type_error(item, struct, path, "str")
            else:
                items.append(_go_str(item))
        return items
    table = {"refs": _REF, "mutations": _MUTATION, "decisions": _DECISION}[kind]
    out: list[dict[str, Any]] = []
    for item in value:
        fields: dict[str, Any] = {}
        if item is not None:
            if not isinstance(item, _Obj):
                raise _type_error(item, struct, path, kind)
            _decode_struct(item, fields, table, path + ".")
        out.append(fields)
    return out


def _mutation(state: dict[str, Any]) -> MutationInput:
    return MutationInput(
        op=state.get("op", ""),
        kind=state.get("kind", ""),
        name=state.get("name", ""),
        props=tuple(sorted((state.get("props") or {}).items())),
        from_=state.get("from", ""),
        to=state.get("to", ""),
        link=state.get("link", ""),
        element=state.get("element", ""),
        key=state.get("key", ""),
        value=state.get("value", ""),
    )


def _decision(state: dict[str, Any]) -> DecisionInput:
    return DecisionInput(
        title=state.get("title", ""),
        rationale=state.get("rationale", ""),
        author=state.get("author", ""),
        date=state.get("date", ""),
        refs=tuple(
            RefInput(r.get("system", ""), r.get("url", ""))
            for r in state.get("refs") or ()
        ),
        supersedes_on=tuple(state.get("supersedes_on") or ()),
        mutations=tuple(_mutation(m) for m in state.get("mutations") or ()),
    )


_GO_SYNTAX: Final = (
    ("Expecting value", "looking for beginning of value"),
    ("invalid literal", "looking for beginning of value"),
    ("Expecting property name", "looking for beginning of object key string"),
    ("Expecting ':' delimiter", "after object key"),
    ("Invalid control character", "in string literal"),
)


def _syntax_message(text: str, exc: json.JSONDecodeError) -> str:
    """Describe a syntax error in Go's words where they are known, with a position."""
    if exc.pos >= len(text):
        return "unexpected EOF"
    where = f"line {exc.lineno}, column {exc.colno}"
    context = next(
        (go for py, go in _GO_SYNTAX if exc.msg.startswith(py)), exc.msg.lower()
    )
    return f"invalid character {text[exc.pos]!r} {context} ({where})"


def parse_ingest(payload: bytes | str) -> list[DecisionInput]:
    """Decode an ingest document into its decisions: ``decision``, then ``decisions``.

    Only the first JSON value is read; trailing bytes are ignored, as Go's decoder
    does. Invalid UTF-8 becomes U+FFFD per byte.

    Raises:
        UsageError: ``invalid ingest JSON: …`` (with the valid-fields hint for an
            unknown field), or ``empty ingest: …`` when no decision is given.
    """
    text = (
        payload.decode("utf-8", "kgai-go-replace")
        if isinstance(payload, bytes)
        else payload
    )
    start = len(text) - len(text.lstrip(" \t\n\r"))
    if start == len(text):
        raise UsageError("invalid ingest JSON: EOF")
    try:
        value, _ = _DECODER.raw_decode(text, start)
    except json.JSONDecodeError as exc:
        raise UsageError(f"invalid ingest JSON: {_syntax_message(text, exc)}") from None
    except (ValueError, RecursionError) as exc:
        raise UsageError(f"invalid ingest JSON: {exc}") from None
    state: dict[str, Any] = {}
    try:
        if value is not None:
            if not isinstance(value, _Obj):
                raise _InputError(
                    f"json: cannot unmarshal {_json_type(value)} into Go value of type "
                    "engine.IngestInput"
                )
            _decode_struct(value, state, _TOP, "")
    except _InputError as exc:
        hint = UNKNOWN_FIELD_HINT if exc.unknown_field else ""
        raise UsageError(f"invalid ingest JSON: {exc}{hint}") from None
    except RecursionError:
        raise UsageError("invalid ingest JSON: nested too deeply") from None
    decisions: list[DecisionInput] = []
    if state.get("decision") is not None:
        decisions.append(_decision(state["decision"]))
    decisions.extend(_decision(d) for d in state.get("decisions") or ())
    if not decisions:
        raise UsageError('empty ingest: provide a "decision" (or "decisions")')
    return decisions
