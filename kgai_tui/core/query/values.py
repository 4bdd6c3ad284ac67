"""A query's values as kg prints them: what go-kuzu hands ``kg query``, through
Go's ``encoding/json``.

* A timestamp at the top of a row is RFC3339 in UTC, whole seconds
  (``time.RFC3339``); one inside a node, a list or a map is Go's ``time.Time``
  JSON (RFC3339 with the fraction when there is one).
* A node is go-kuzu's ``Node``: ``{"ID": {"TableID", "Offset"}, "Label",
  "Properties"}``, a relationship its ``Relationship`` (``ID``, ``SourceID``,
  ``DestinationID``, ``Label``, ``Properties``), a path ``{"Nodes",
  "Relationships"}``: struct fields in declaration order, map keys sorted, as Go
  encodes them.
* Lists stay lists; a struct or a map is an object with sorted keys.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

from kgai_tui.core.gosem.gotext import format_rfc3339

__all__ = ["rfc3339", "row_value"]


def rfc3339(t: datetime, fraction: bool = False) -> str:
    """``t`` (naive UTC, or aware) as Go's RFC3339 (``RFC3339Nano`` when asked):
    :func:`~kgai_tui.core.gosem.gotext.format_rfc3339`, plus the fraction."""
    text = format_rfc3339(t if t.tzinfo is not None else t.replace(tzinfo=UTC))
    if fraction and t.microsecond:
        text = text[:-1] + f".{t.microsecond:06d}".rstrip("0") + "Z"
    return text


def _internal(value: Any) -> dict[str, int]:
    return {"TableID": int(value["table"]), "Offset": int(value["offset"])}


def _properties(value: dict[str, Any], skip: frozenset[str]) -> dict[str, Any]:
    return {k: _nested(value[k]) for k in sorted(value) if k not in skip}


_NODE_KEYS = frozenset({"_ID", "_LABEL"})
_REL_KEYS = frozenset({"_ID", "_SRC", "_DST", "_LABEL"})


def _nested(value: Any) -> Any:
    if isinstance(value, datetime):
        return rfc3339(value, fraction=True)
    return _convert(value, nested=True)


def _convert(value: Any, nested: bool) -> Any:
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, datetime):
        return rfc3339(value, fraction=nested)
    if isinstance(value, date):
        return rfc3339(datetime(value.year, value.month, value.day), fraction=nested)
    if isinstance(value, timedelta):
        return int(value.total_seconds() * 1_000_000_000)  # Go's Duration: ns
    if isinstance(value, list | tuple):
        return [_nested(v) for v in value]
    if isinstance(value, dict):
        if "_NODES" in value and "_RELS" in value:
            return {
                "Nodes": [_nested(n) for n in value["_NODES"]],
                "Relationships": [_nested(r) for r in value["_RELS"]],
            }
        if "_SRC" in value and "_DST" in value and "_LABEL" in value:
            return {
                "ID": _internal(value["_ID"]) if value.get("_ID") else None,
                "SourceID": _internal(value["_SRC"]),
                "DestinationID": _internal(value["_DST"]),
                "Label": value["_LABEL"],
                "Properties": _properties(value, _REL_KEYS),
            }
        if "_ID" in value and "_LABEL" in value:
            return {
                "ID": _internal(value["_ID"]),
                "Label": value["_LABEL"],
                "Properties": _properties(value, _NODE_KEYS),
            }
        return {str(k): _nested(value[k]) for k in sorted(value, key=str)}
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def row_value(value: Any) -> Any:
    """One value of a result row, ready for Go-compatible JSON."""
    return _convert(value, nested=False)
