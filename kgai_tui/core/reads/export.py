"""The canonical export and its digest, the replay-determinism check (spec 6.7).

Both sources of an export (a replayed projection here, or the read model's tables,
:class:`kgai_tui.core.model.export.ModelExport`) hand over the four parts as chunks
of rows in print order; the printing and the digest are done once, here, a chunk
at a time (:func:`export_chunks`): at a million decisions the export is 300 MB and
is never held whole.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from operator import itemgetter
from typing import TYPE_CHECKING, Any, Final, Protocol

import orjson

from kgai_tui.core.gosem.gojson import marshal
from kgai_tui.core.safe_text import escape_json_controls

if TYPE_CHECKING:
    from kgai_tui.core.replay.projection_view import ProjectionView

#: The parts in the order kg prints them.
PARTS: Final = ("elements", "links", "decisions", "shapes")
#: Rows encoded at a time.
_CHUNK: Final = 8192

Row = dict[str, Any]


class ExportSource(Protocol):
    """An export's four parts, each chunks of rows in kg's print order (every
    element id, link, decision id and (decision, element) pair is unique, so the
    orders are total): elements by id, links by from/kind/to, decisions by id,
    shapes by decision then element. Parts are iterated in :data:`PARTS` order."""

    def elements(self) -> Iterable[list[Row]]:
        """``{id, kind, name, props}`` by id."""
        ...

    def links(self) -> Iterable[list[Row]]:
        """``{f, k, t}`` by from, kind, to."""
        ...

    def decisions(self) -> Iterable[list[Row]]:
        """``{id, lamport, title}`` by id."""
        ...

    def shapes(self) -> Iterable[list[Row]]:
        """``{authority, decision, element}`` by decision id, then element id."""
        ...


class ProjectionExport:
    """The export of a replayed projection (the whole store: the oracle), sorted
    in memory, each part one chunk.

    Sorts by one string key (CPython's fast path), never by a Python key function
    or by whole tuples: at a million decisions that is seconds, not tens of them.
    Shapes sort by element, then stably by decision.
    """

    def __init__(self, p: ProjectionView) -> None:
        """Take the rows of ``p``."""
        self._p = p

    def elements(self) -> list[list[Row]]:
        """Elements by id."""
        rows = [
            (eid, attrs["kind"], attrs["name"], attrs["props"])
            for eid, attrs in self._p.graph.nodes(data=True)
        ]
        rows.sort(key=itemgetter(0))
        return [[{"id": e, "kind": k, "name": n, "props": p} for e, k, n, p in rows]]

    def links(self) -> list[list[Row]]:
        """Links by from, kind, to."""
        rows = sorted((f, k, t) for f, t, k in self._p.graph.edges(keys=True))
        return [[{"f": f, "k": k, "t": t} for f, k, t in rows]]

    def decisions(self) -> list[list[Row]]:
        """Decisions by id."""
        p = self._p
        rows = list(zip(p.dec_id, p.dec_lamport, p.dec_title, strict=True))
        rows.sort(key=itemgetter(0))
        return [[{"id": d, "lamport": lam, "title": t} for d, lam, t in rows]]

    def shapes(self) -> list[list[Row]]:
        """Shapes by decision, then element."""
        dec_id = self._p.dec_id
        rows = [
            (dec_id[idx], eid, auth)
            for eid, shapers in self._p.el_shapes.items()
            for idx, auth in shapers.items()
        ]
        rows.sort(key=itemgetter(1))
        rows.sort(key=itemgetter(0))
        return [[{"authority": a, "decision": d, "element": e} for d, e, a in rows]]


def source_parts(
    source: ExportSource,
) -> tuple[tuple[str, Callable[[], Iterable[list[Row]]]], ...]:
    """Each part's name (:data:`PARTS`) with the method that reads it, in order."""
    reads = (source.elements, source.links, source.decisions, source.shapes)
    return tuple(zip(PARTS, reads, strict=True))


def export_parts(p: ProjectionView) -> dict[str, list[Row]]:
    """The four export parts of a projection, each in print order (what the
    property tests compare every export against)."""
    return {
        name: [row for chunk in read() for row in chunk]
        for name, read in source_parts(ProjectionExport(p))
    }


def export_digest(parts: Mapping[str, list[Row]]) -> str:
    """``sha256:`` over ``{"ok":false,elements,links,decisions,shapes}`` (Go's
    compact bytes, each part ``null`` when empty) of parts held whole."""
    body = {"ok": False, **{name: parts[name] or None for name in PARTS}}
    return "sha256:" + hashlib.sha256(marshal(body)).hexdigest()


def _chunks(parts: Iterable[list[Row]]) -> Iterator[list[Row]]:
    """At most :data:`_CHUNK` rows at a time (orjson's output is held per chunk)."""
    for rows in parts:
        for i in range(0, len(rows), _CHUNK):
            yield rows[i : i + _CHUNK] if len(rows) > _CHUNK else rows


def export_chunks(
    source: ExportSource, after: Mapping[str, Any], *, canonical: bool
) -> Iterator[bytes]:
    """The export's bytes as Go's ``MarshalIndent`` prints it (plus ``\\n``), a
    chunk at a time: ``{ok, elements, links, decisions, shapes}``, then ``digest``
    when ``canonical``, then the keys of ``after`` (``pending_approval``).

    Each chunk of rows is encoded by orjson indented for the output (nested two
    levels down, so that orjson indents it where it is printed) and, for the
    digest, compact, with Go's HTML-safe escapes; the output's controls are
    escaped as every answer's are. Neither depends on where a chunk ends.
    """
    digest = hashlib.sha256(b'{"ok":false')
    yield b'{\n  "ok": true'
    for name, read in source_parts(source):
        key = marshal(name)
        yield b",\n  " + key + b": "
        digest.update(b"," + key + b":")
        any_rows = False
        for chunk in _chunks(read()):
            nested = marshal({"": chunk}, orjson.OPT_INDENT_2)
            # {\n  "": [\n    {...},\n    {...}\n  ]\n}  ->  the rows' lines alone
            body = escape_json_controls(nested[10:-6])
            yield (b",\n" if any_rows else b"[\n") + body
            if canonical:
                compact = marshal(chunk)[1:-1]
                digest.update((b"," if any_rows else b"[") + compact)
            any_rows = True
        yield b"\n  ]" if any_rows else b"null"
        digest.update(b"]" if any_rows else b"null")
    digest.update(b"}")
    tail = {"digest": "sha256:" + digest.hexdigest()} if canonical else {}
    for field, value in {**tail, **after}.items():
        yield b",\n  " + marshal(field) + b": " + escape_json_controls(marshal(value))
    yield b"\n}\n"
