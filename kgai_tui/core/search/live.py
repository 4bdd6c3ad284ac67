"""The live documents (elements and decisions in force), recomputed only where needed.

The live index is written whole whenever its documents change, so its BM25 statistics
are always those of a fresh build. Writing 20,000 documents is cheap; recomputing each
one from the projection is what costs, so a process keeps the previous set in memory
(keyed by the index's digest) and, after events were appended, recomputes only:

* every element an appended event mentions (upserts, props, link ends, shapes);
* every decision an appended event carries or supersedes, and every decision that
  shapes an element whose name or kind changed (a stub named by a late event with a
  lower lamport renames it in the documents of the decisions that shaped it).

Everything else is unchanged by construction: a decision's document depends only on
its own fields, its shaped elements and whether it is in force, and an element's only
on its own kind, name and props. Membership (which decisions are in force) is always
taken from the new projection. The result equals a full recomputation, which the
index tests check by comparing incremental and fresh builds byte for byte.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kgai_tui.core.search.docs import (
    DocRecord,
    element_attrs,
    live_decision,
    live_element,
    live_members,
    record_bytes,
    record_order,
)

if TYPE_CHECKING:
    from kgai_tui.core.replay.projection_view import ProjectionView
    from kgai_tui.core.wire.model import Event

__all__ = ["LiveEntry", "LiveSet", "live_set", "touched_by"]


@dataclass(slots=True)
class LiveEntry:
    """One live document: its record, its serialisation, and its built document."""

    record: DocRecord
    blob: bytes
    doc: Any = None

    def document(self, build: Callable[[DocRecord], Any]) -> Any:
        """The index document, built once and reused by later writes."""
        if self.doc is None:
            self.doc = build(self.record)
        return self.doc


@dataclass(frozen=True, slots=True)
class LiveSet:
    """All live documents in write order, with their digest."""

    entries: tuple[LiveEntry, ...]
    digest: str

    def by_id(self) -> dict[tuple[str, str], LiveEntry]:
        """Entries by ``(doctype, id)``."""
        return {(e.record.doctype, e.record.id): e for e in self.entries}


def touched_by(events: Iterable[Event]) -> tuple[set[str], set[str]]:
    """Element ids and decision ids whose live documents appended events may change.

    Args:
        events: The appended events.

    Returns:
        ``(element ids, decision ids)``.
    """
    elements: set[str] = set()
    decisions: set[str] = set()
    for ev in events:
        d = ev.decision
        if d is None:
            continue
        decisions.add(d.id)
        decisions.update(d.supersedes)
        elements.update(d.shapes)
        for m in d.mutations or ():
            elements.update((m.element_id, m.from_id, m.to_id))
    elements.discard("")
    return elements, decisions


def live_set(
    p: ProjectionView,
    previous: LiveSet | None = None,
    touched: tuple[set[str], set[str]] | None = None,
) -> LiveSet:
    """Compute the live documents, reusing ``previous`` ones that cannot have changed.

    Args:
        p: The current projection.
        previous: The live set the index held before the appended events.
        touched: What the appended events touched (see :func:`touched_by`); with
            ``previous``, only those documents are recomputed.

    Returns:
        The live set in write order.
    """
    old = previous.by_id() if previous is not None and touched is not None else {}
    els, decs = touched if touched is not None else (set(), set())
    attrs = element_attrs(p)
    decisions, elements = live_members(p)
    entries: list[LiveEntry] = []
    renamed: list[str] = []
    for eid in elements:
        entry = old.get(("element", eid))
        if entry is None or eid in els:
            rec = live_element(eid, attrs[eid])
            if entry is not None and entry.record.text[:2] != rec.text[:2]:
                renamed.append(eid)  # a stub named by a late event: name or kind
            entry = LiveEntry(rec, record_bytes(rec))
        entries.append(entry)
    if renamed:
        ids = p.dec_id
        decs = decs | {ids[i] for eid in renamed for i in p.el_shapes.get(eid, ())}
    for idx in decisions:
        dec_id = p.dec_id[idx]
        entry = old.get(("decision", dec_id))
        if entry is None or dec_id in decs:
            rec = live_decision(p, attrs, idx)
            entry = LiveEntry(rec, record_bytes(rec))
        entries.append(entry)
    entries.sort(key=lambda e: record_order(e.record))
    h = hashlib.sha256()
    for e in entries:
        h.update(len(e.blob).to_bytes(8, "big"))
        h.update(e.blob)
    return LiveSet(tuple(entries), h.hexdigest())
