"""The store over time: the moments a slider can stop at, and what changed between two.

A moment is a ``recorded_at`` second at which at least one hash-verified event was
recorded. The projection at a moment is exactly ``as-of`` at that moment (spec 6.6).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from kgai_tui.core.as_of import project_as_of
from kgai_tui.core.gotext import parse_rfc3339

if TYPE_CHECKING:
    from kgai_tui.core.projection import Projection
    from kgai_tui.core.shards import ShardRead


def moments(shards: Iterable[ShardRead]) -> list[datetime]:
    """Return every distinct recorded second of a verified event, ascending."""
    seen: set[datetime] = set()
    for shard in shards:
        for item in shard.events:
            if item.decoded.hash_ok:
                moment = parse_rfc3339(item.decoded.event.recorded_at)
                if moment is not None:
                    seen.add(moment)
    return sorted(seen)


@dataclass(frozen=True, slots=True)
class GraphDelta:
    """Elements and links that appeared or disappeared between two projections."""

    elements_added: tuple[str, ...]
    elements_removed: tuple[str, ...]
    links_added: tuple[tuple[str, str, str], ...]
    links_retired: tuple[tuple[str, str, str], ...]

    @property
    def empty(self) -> bool:
        """Whether nothing changed."""
        return not (
            self.elements_added
            or self.elements_removed
            or self.links_added
            or self.links_retired
        )

    def describe(self) -> str:
        """Summarise the change in a few words, e.g. ``+2 elements, -1 link``."""
        parts = []
        for count, sign, noun in (
            (len(self.elements_added), "+", "element"),
            (len(self.elements_removed), "-", "element"),
            (len(self.links_added), "+", "link"),
            (len(self.links_retired), "-", "link"),
        ):
            if count:
                parts.append(f"{sign}{count} {noun}{'s' if count != 1 else ''}")
        return ", ".join(parts) if parts else "no graph changes"


def graph_delta(before: Projection, after: Projection) -> GraphDelta:
    """Compare the element graphs of two projections."""
    old_nodes, new_nodes = set(before.graph.nodes), set(after.graph.nodes)
    old_links = {(f, k, t) for f, t, k in before.graph.edges(keys=True)}
    new_links = {(f, k, t) for f, t, k in after.graph.edges(keys=True)}
    return GraphDelta(
        elements_added=tuple(sorted(new_nodes - old_nodes)),
        elements_removed=tuple(sorted(old_nodes - new_nodes)),
        links_added=tuple(sorted(new_links - old_links)),
        links_retired=tuple(sorted(old_links - new_links)),
    )


class TimeCursor:
    """Projections at slider moments, cached, so scrubbing back and forth is cheap."""

    def __init__(self, shards: list[ShardRead], *, cache_size: int = 64) -> None:
        """Index the moments of a store's shards."""
        self._shards = shards
        self.moments = moments(shards)
        self._cache: dict[datetime, Projection] = {}
        self._cache_size = cache_size

    def at(self, cut: datetime) -> Projection:
        """Return the projection as of ``cut`` (equal to ``as-of``)."""
        cut = cut.astimezone(UTC)
        cached = self._cache.get(cut)
        if cached is not None:
            return cached
        projection = project_as_of(self._shards, cut)
        if len(self._cache) >= self._cache_size:
            self._cache.pop(next(iter(self._cache)))
        self._cache[cut] = projection
        return projection
