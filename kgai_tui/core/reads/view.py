"""The small read API a face uses: elements, their decisions, decision records, heads, conflicts.

:class:`KgView` wraps anything that satisfies
:class:`~kgai_tui.core.replay.projection_view.ProjectionView` (the live projection or an
as-of view), so readers never touch the decision columns or the networkx graph. Values
come back as frozen dataclasses or plain ints and strings; decisions are named by their
index in the projection.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from itertools import chain, compress

from kgai_tui.core.reads.kg import history_order
from kgai_tui.core.reads.legend import Status, decision_status, status_on
from kgai_tui.core.replay.projection_view import ProjectionView


@dataclass(frozen=True, slots=True)
class Element:
    """One element: its id, kind, name and props blob (``wire.props.parse_props``)."""

    id: str
    kind: str
    name: str
    props: str

    @property
    def label(self) -> str:
        """``kind:name`` (``(unnamed <id>)`` for a stub)."""
        return element_label(self.id, self.kind, self.name)


@dataclass(frozen=True, slots=True)
class Link:
    """A link seen from one element: its kind and the element at the other end."""

    kind: str
    other: str


@dataclass(frozen=True, slots=True)
class Decision:
    """The record of one decision (empty fields and no hash for a stub)."""

    index: int
    id: str
    title: str
    rationale: str
    author: str
    refs: str
    summary: str
    time: int | None  # Unix seconds
    lamport: int
    install: str
    hash: str
    shapes: tuple[str, ...]  # in SHAPES creation order
    supersedes: tuple[int, ...]
    superseded_by: tuple[int, ...]

    @property
    def stub(self) -> bool:
        """Whether only a reference to the decision was seen, not its event."""
        return not self.hash


def element_label(eid: str, kind: str, name: str) -> str:
    """:meth:`KgView.label` of an element already read: ``kind:name``, the name
    without a kind, ``(unnamed <id>)`` without a name."""
    if not name:
        return f"(unnamed {eid})"
    return f"{kind}:{name}" if kind else name


@dataclass(frozen=True, slots=True)
class KgView:
    """Read-only questions about one projection (live or as of a moment)."""

    projection: ProjectionView

    # ------------------------------------------------------------------ elements

    def has_element(self, eid: str) -> bool:
        """Whether the element exists in this projection."""
        return self.projection.has_element(eid)

    def element_ids(self) -> Iterator[str]:
        """Every element id, in the graph's insertion order."""
        return iter(self.projection.graph.nodes)

    def element_count(self) -> int:
        """Number of elements."""
        return self.projection.element_count()

    def element_names(self) -> Iterable[tuple[str, str, str]]:
        """``(id, kind, name)`` of every element, in no promised order (the model
        on disk reads them in one query, without building the graph)."""
        return self.projection.element_names()

    def element_paths(self) -> dict[str, list[str]]:
        """Each element's stored paths (its ``paths`` prop, split as recall splits
        it: spec 6.4), for the elements that have any."""
        from kgai_tui.core.recall.scoring import props_paths

        out: dict[str, list[str]] = {}
        for eid, blob in self.projection.element_props_with("paths"):
            stored = props_paths(blob)
            if stored:
                out[eid] = stored
        return out

    def paths_of(self, eid: str) -> list[str]:
        """One element's stored paths, split as recall splits them (none when it
        has no ``paths`` prop or does not exist)."""
        from kgai_tui.core.recall.scoring import props_paths

        found = self.projection.element(eid)
        return [] if found is None else props_paths(found[2])

    def element(self, eid: str) -> Element | None:
        """One element, or ``None`` when it does not exist."""
        found = self.projection.element(eid)
        return None if found is None else Element(eid, *found)

    def label(self, eid: str) -> str:
        """``kind:name`` of an element (``(unnamed <id>)`` for a stub or a missing one)."""
        kind, name, _ = self.projection.element(eid) or ("", "", "")
        return element_label(eid, kind, name)

    def kind(self, eid: str) -> str:
        """The kind of an element (``""`` when unknown)."""
        return (self.projection.element(eid) or ("", "", ""))[0]

    def links_out(self, eid: str) -> list[Link]:
        """Links leaving an element, sorted by kind then target."""
        return [Link(k, t) for k, t in sorted(self.projection.out_links(eid))]

    def links_in(self, eid: str) -> list[Link]:
        """Links arriving at an element, sorted by kind then source."""
        return [Link(k, f) for k, f in sorted(self.projection.in_links(eid))]

    def degree(self, eid: str) -> int:
        """Number of links at an element, both directions."""
        return int(self.projection.graph.degree(eid))

    # ------------------------------------------------------------------ decisions

    def decision(self, idx: int) -> Decision:
        """The record of decision ``idx``."""
        p = self.projection
        return Decision(
            index=idx,
            id=p.dec_id[idx],
            title=p.dec_title[idx],
            rationale=p.dec_rationale[idx],
            author=p.dec_author[idx],
            refs=p.dec_refs[idx],
            summary=p.dec_summary[idx],
            time=p.dec_time[idx],
            lamport=p.dec_lamport[idx],
            install=p.dec_install[idx],
            hash=p.dec_hash[idx],
            shapes=tuple(p.dec_shapes[idx]),
            supersedes=tuple(p.dec_supersedes[idx]),
            superseded_by=tuple(p.dec_superseded_by[idx]),
        )

    def title(self, idx: int) -> str:
        """A decision's title (``""`` for a stub)."""
        return self.projection.dec_title[idx]

    def decision_index(self, did: str) -> int | None:
        """The index of a decision id, or ``None`` when this projection lacks it."""
        return self.projection.dec_index.get(did)

    def titled(self) -> Iterator[tuple[int, str]]:
        """``(index, title)`` of every decision with a title, in index order."""
        titles = self.projection.dec_title
        return ((i, t) for i, t in enumerate(titles) if t)

    def recorded(self) -> list[int]:
        """Indices of every decision whose event was applied (no stubs)."""
        p = self.projection
        return list(compress(range(len(p.dec_id)), p.dec_hash))

    def recorded_count(self) -> int:
        """Number of decisions whose event was applied."""
        return self.projection.recorded_count()

    def oldest_first(self, indices: Iterable[int]) -> list[int]:
        """Order decisions oldest first: time (none last), then lamport, then id."""
        return history_order(self.projection, indices)

    def status(self, idx: int) -> Status:
        """The decision's status on its own: the legend's (``reads.legend``)."""
        return decision_status(self.projection, idx)

    def status_on(self, eid: str, idx: int) -> Status:
        """The decision's status on one element: the legend's (``reads.legend``)."""
        return status_on(self.projection, eid, idx)

    # ------------------------------------------------------------------ many decisions at once

    def writers(self, indices: Iterable[int]) -> list[str]:
        """The distinct install ids (writers) of some decisions, sorted."""
        return sorted(set(map(self.projection.dec_install.__getitem__, indices)))

    def authors(self, indices: Iterable[int]) -> list[str]:
        """The distinct authors of some decisions, sorted."""
        return sorted(set(map(self.projection.dec_author.__getitem__, indices)))

    def shaped_kinds(self, indices: Iterable[int]) -> list[str]:
        """The distinct kinds of the elements some decisions shaped, sorted (no ``""``)."""
        p = self.projection
        shaped = set(chain.from_iterable(p.dec_shapes[i] for i in indices))
        return [k for k in sorted({self.kind(e) for e in shaped}) if k]

    def stamps(self, indices: Iterable[int]) -> list[int]:
        """The recorded times (Unix seconds) of some decisions, skipping unknown ones."""
        return [
            s
            for s in map(self.projection.dec_time.__getitem__, indices)
            if s is not None
        ]

    def select(
        self,
        indices: Iterable[int],
        *,
        writer: str | None = None,
        author: str | None = None,
        kind: str | None = None,
        status: str | None = None,
        heads: AbstractSet[int] = frozenset(),
    ) -> list[int]:
        """Keep the decisions by ``writer``, by ``author``, shaping an element of
        ``kind``, with ``status`` ``head`` (in ``heads``), ``superseded`` or ``dead``
        (as :mod:`~kgai_tui.core.reads.legend` defines them); ``None`` matches
        anything. The order is kept."""
        p = self.projection
        rows = []
        for i in indices:
            if writer is not None and p.dec_install[i] != writer:
                continue
            if author is not None and p.dec_author[i] != author:
                continue
            if kind is not None and not any(
                self.kind(e) == kind for e in p.dec_shapes[i]
            ):
                continue
            if status == "head" and i not in heads:
                continue
            if status in ("superseded", "dead") and (
                i in heads or bool(p.dec_superseded_by[i]) != (status == "superseded")
            ):
                continue  # the legend's partition (reads.legend)
            rows.append(i)
        return rows

    # ------------------------------------------------------------------ an element's decisions

    def decisions_of(self, eid: str) -> Mapping[int, bool]:
        """Decisions that shaped an element (index to authority), in SHAPES order."""
        return self.projection.el_shapes.get(eid, {})

    def history(self, eid: str) -> list[int]:
        """Decisions that shaped an element, oldest first."""
        return history_order(self.projection, list(self.decisions_of(eid)))

    def prepare(self) -> None:
        """Build the per-element index now (it is lazy), e.g. in a worker thread."""
        self.projection.el_shapes.get("")

    # ------------------------------------------------------------------ heads and conflicts

    def heads(self, eid: str) -> list[int]:
        """The decisions in force on an element, newest first."""
        return self.projection.heads_of(eid)

    def is_head(self, eid: str, idx: int) -> bool:
        """Whether decision ``idx`` is in force on the element."""
        return idx in self.projection.heads.get(eid, ())

    def all_heads(self) -> frozenset[int]:
        """Every decision in force on some element."""
        return frozenset(i for heads in self.projection.heads.values() for i in heads)

    def conflicts(self) -> AbstractSet[str]:
        """Elements with two or more decisions in force."""
        return self.projection.contested

    def is_contested(self, eid: str) -> bool:
        """Whether an element has two or more decisions in force."""
        return eid in self.projection.contested
