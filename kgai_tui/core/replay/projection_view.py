"""The read side of a projection, shared by the live projection and as-of views.

:class:`~kgai_tui.core.replay.projection.Projection` satisfies this protocol structurally (its
plain lists and dicts are read-only here), and so does the point-in-time view a
:class:`~kgai_tui.core.timeindex.index.TimeIndex` returns, so every reader that only reads
can accept either. Members are read-only properties so that ``list[str]`` satisfies
``Sequence[str]`` and ``dict[str, set[int]]`` satisfies ``Mapping[str, AbstractSet[int]]``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol

if TYPE_CHECKING:
    import networkx as nx

    from kgai_tui.core.reads.store import StoredReads, TimelineReads

#: A decision field :meth:`ProjectionView.decision_fields` reads (``time`` ``None``
#: for no recorded time, ``shapes`` the element ids in SHAPES creation order).
Field = Literal["id", "title", "rationale", "author", "time", "lamport", "shapes"]


class ProjectionView(Protocol):
    """What readers may use of a projection (the element graph and decision plane)."""

    @property
    def graph(self) -> nx.MultiDiGraph[str]:
        """Elements (``kind``, ``name``, ``props``) and links (``created_by``)."""
        ...

    @property
    def applied_count(self) -> int:
        """Number of distinct events replayed."""
        ...

    @property
    def dec_index(self) -> Mapping[str, int]:
        """Decision id to decision index."""
        ...

    @property
    def dec_id(self) -> Sequence[str]:
        """Decision ids by index."""
        ...

    @property
    def dec_title(self) -> Sequence[str]:
        """Titles (``""`` for a stub)."""
        ...

    @property
    def dec_rationale(self) -> Sequence[str]:
        """Rationales."""
        ...

    @property
    def dec_author(self) -> Sequence[str]:
        """Authors."""
        ...

    @property
    def dec_refs(self) -> Sequence[str]:
        """Refs."""
        ...

    @property
    def dec_summary(self) -> Sequence[str]:
        """Summaries."""
        ...

    @property
    def dec_time(self) -> Sequence[int | None]:
        """Recorded time in Unix seconds (``None`` for a stub or the zero time)."""
        ...

    @property
    def dec_lamport(self) -> Sequence[int]:
        """Lamport clocks (0 for a stub)."""
        ...

    @property
    def dec_install(self) -> Sequence[str]:
        """Install ids."""
        ...

    @property
    def dec_hash(self) -> Sequence[str]:
        """Event hashes (``""`` for a stub)."""
        ...

    @property
    def dec_shapes(self) -> Sequence[Sequence[str]]:
        """Element ids each decision shapes, in SHAPES creation order."""
        ...

    @property
    def dec_supersedes(self) -> Sequence[Sequence[int]]:
        """Decisions each decision supersedes."""
        ...

    @property
    def dec_superseded_by(self) -> Sequence[Sequence[int]]:
        """Decisions that supersede each decision."""
        ...

    @property
    def el_shapes(self) -> Mapping[str, Mapping[int, bool]]:
        """Per element: decision index to authority, in SHAPES creation order."""
        ...

    @property
    def heads(self) -> Mapping[str, AbstractSet[int]]:
        """Per element: the decisions in force (an entry may be empty)."""
        ...

    @property
    def contested(self) -> AbstractSet[str]:
        """Elements with two or more heads."""
        ...

    @property
    def unknown_ops(self) -> Sequence[tuple[str, str]]:
        """``(event hash, op)`` of every mutation with an unknown op."""
        ...

    def element(self, eid: str) -> tuple[str, str, str] | None:
        """Return ``(kind, name, props_blob)`` of an element, or ``None``."""
        ...

    def has_element(self, eid: str) -> bool:
        """Whether ``eid`` is an element (without walking the graph)."""
        ...

    def element_count(self) -> int:
        """How many elements there are."""
        ...

    def out_links(self, eid: str) -> list[tuple[str, str]]:
        """``(kind, to)`` of every link from an element."""
        ...

    def element_names(self) -> Iterable[tuple[str, str, str]]:
        """``(id, kind, name)`` of every element, in no promised order."""
        ...

    def element_props_with(self, key: str) -> Iterable[tuple[str, str]]:
        """``(id, props blob)`` of the elements whose props may set ``key`` (a
        superset: the caller parses the blob), in no promised order."""
        ...

    def in_links(self, eid: str) -> list[tuple[str, str]]:
        """``(kind, from)`` of every link to an element."""
        ...

    def prefetch(self, indices: Iterable[int]) -> None:
        """Say these decisions are about to be read (a model on disk fetches them
        in a few queries; in memory, nothing to do)."""
        ...

    def decision_fields(
        self, indices: Sequence[int], names: Sequence[Field]
    ) -> list[tuple[Any, ...]]:
        """The fields ``names`` of the decisions at ``indices``, a tuple each, in
        the order asked. A projection on disk reads them a few thousand per query
        and keeps none (a week's ``diff`` at a million decisions lists 568k)."""
        ...

    def head_order(self, indices: Iterable[int]) -> list[int]:
        """Order decision indices newest first: lamport descending, then id."""
        ...

    def heads_of(self, eid: str) -> list[int]:
        """Return the heads of an element, newest first."""
        ...

    def max_authority_lamport(self, eid: str) -> int:
        """Return the largest lamport of a decision with authority on the element."""
        ...

    def recorded_count(self) -> int:
        """How many decisions were recorded (stubs, only referred to, are not)."""
        ...

    def writer_count(self) -> int:
        """How many writers (install ids) recorded a decision."""
        ...

    @property
    def stored(self) -> StoredReads | None:
        """The whole-store passes the model's tables answer, when read from them
        (``None``: a projection in memory, walked instead)."""
        ...

    @property
    def timeline_reads(self) -> TimelineReads | None:
        """The timeline's passes without a walk (the model now, or a time index
        sharing the model's rows at a cut); ``None``: walked instead."""
        ...


class GraphReads:
    """The element reads of a projection held in memory, from its NetworkX graph
    (the live projection and the as-of view share them; the model on disk answers
    them from its rows instead)."""

    if TYPE_CHECKING:

        @property
        def graph(self) -> nx.MultiDiGraph[str]:
            """The element graph (an attribute, or a property, of the subclass)."""
            ...

        @property
        def dec_hash(self) -> Sequence[str]:
            """Event hashes (``""`` for a stub)."""
            ...

        @property
        def dec_install(self) -> Sequence[str]:
            """Install ids."""
            ...

    #: A projection in memory keeps no stored passes: its readers walk it.
    stored: StoredReads | None = None

    @property
    def timeline_reads(self) -> TimelineReads | None:
        """None: the timeline walks a projection in memory."""
        return None

    def has_element(self, eid: str) -> bool:
        """Whether ``eid`` is an element."""
        return eid in self.graph

    def element_count(self) -> int:
        """How many elements there are."""
        return int(self.graph.number_of_nodes())

    def element_names(self) -> Iterable[tuple[str, str, str]]:
        """``(id, kind, name)`` of every element, in no promised order."""
        return (
            (n, str(a.get("kind", "")), str(a.get("name", "")))
            for n, a in self.graph.nodes(data=True)
        )

    def element_props_with(self, key: str) -> Iterable[tuple[str, str]]:
        """``(id, props blob)`` of the elements whose props may set ``key``."""
        needle = key + "="
        return (
            (n, str(a.get("props", "")))
            for n, a in self.graph.nodes(data=True)
            if needle in str(a.get("props", ""))
        )

    def out_links(self, eid: str) -> list[tuple[str, str]]:
        """``(kind, to)`` of every link from an element."""
        return [(k, t) for _, t, k in self.graph.out_edges(eid, keys=True)]

    def in_links(self, eid: str) -> list[tuple[str, str]]:
        """``(kind, from)`` of every link to an element."""
        return [(k, f) for f, _, k in self.graph.in_edges(eid, keys=True)]

    def prefetch(self, indices: Iterable[int]) -> None:
        """Nothing to fetch: every decision is in memory."""

    def recorded_count(self) -> int:
        """How many decisions were recorded (a stub's hash is empty)."""
        hashes = self.dec_hash
        return len(hashes) - hashes.count("")

    def writer_count(self) -> int:
        """How many writers (install ids) recorded a decision (a stub has none)."""
        return len(set(self.dec_install) - {""})


def element_of(graph: nx.MultiDiGraph[str], eid: str) -> tuple[str, str, str] | None:
    """``(kind, name, props_blob)`` of an element of ``graph``, or ``None``."""
    if eid not in graph:
        return None
    node = graph.nodes[eid]
    return (node["kind"], node["name"], node["props"])


def column_fields(
    p: ProjectionView, indices: Sequence[int], names: Sequence[Field]
) -> list[tuple[Any, ...]]:
    """:meth:`ProjectionView.decision_fields` read from ``p``'s columns, one value
    at a time (a projection in memory)."""
    columns = [_COLUMN_OF[name](p) for name in names]
    return [tuple(column[i] for column in columns) for i in indices]


_COLUMN_OF: Final[dict[str, Callable[[ProjectionView], Sequence[Any]]]] = {
    "id": lambda p: p.dec_id,
    "title": lambda p: p.dec_title,
    "rationale": lambda p: p.dec_rationale,
    "author": lambda p: p.dec_author,
    "time": lambda p: p.dec_time,
    "lamport": lambda p: p.dec_lamport,
    "shapes": lambda p: p.dec_shapes,
}


def element_label(p: ProjectionView, eid: str) -> str:
    """``kind:name`` of an element, its name without a kind, else its id (how a
    diff, the report and a resolution's summary name it)."""
    kind, name, _ = p.element(eid) or ("", "", "")
    if kind and name:
        return f"{kind}:{name}"
    return name or eid


def newest_first(
    lamports: Sequence[int], ids: Sequence[str], indices: Iterable[int]
) -> list[int]:
    """Decision indices newest first: lamport descending, then id (the head order)."""
    return sorted(indices, key=lambda i: (-lamports[i], ids[i]))
