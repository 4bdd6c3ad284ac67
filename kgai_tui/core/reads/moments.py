"""The store over time: the moments a slider can stop at, and what changed between two.

A moment is a ``recorded_at`` second at which at least one hash-verified event was
recorded. The projection at a moment is exactly ``as-of`` at that moment (spec 6.6).
"""

from __future__ import annotations

import weakref
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Final, overload

from kgai_tui.core.gosem.gotext import epoch_to_datetime, parse_rfc3339

if TYPE_CHECKING:
    from kgai_tui.core.reads.store import Store
    from kgai_tui.core.replay.projection_view import ProjectionView
    from kgai_tui.core.store.shards import ShardRead
    from kgai_tui.core.timeindex.index import TimeIndex


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


def graph_delta(before: ProjectionView, after: ProjectionView) -> GraphDelta:
    """Compare the element graphs of two projections."""
    if before is after:  # now, then a moment the present answers (or back)
        return GraphDelta((), (), (), ())
    old_nodes, new_nodes = set(before.graph.nodes), set(after.graph.nodes)
    old_links, new_links = _links(before), _links(after)
    return GraphDelta(
        elements_added=tuple(sorted(new_nodes - old_nodes)),
        elements_removed=tuple(sorted(old_nodes - new_nodes)),
        links_added=tuple(sorted(new_links - old_links)),
        links_retired=tuple(sorted(old_links - new_links)),
    )


#: The links of the last views a slider step compared: a view at a moment, like
#: the model's present, never changes, and each step compares the view shown
#: before with the next one.
_SEEN: weakref.WeakKeyDictionary[ProjectionView, frozenset[tuple[str, str, str]]] = (
    weakref.WeakKeyDictionary()
)


def _links(p: ProjectionView) -> AbstractSet[tuple[str, str, str]]:
    """``(from, kind, to)`` of every link, from NetworkX's own successor dicts (its
    edge views cost ten times as much: a slider step at 1M compares 2 x 10k). A
    view that never changes (a moment's; the model's present, read from one
    snapshot) keeps its set for the next step; a replay in memory grows."""
    from kgai_tui.core.timeindex.view import AsOfView  # loaded: the views exist

    if isinstance(p, AsOfView) or p.stored is not None:
        seen = _SEEN.get(p)
        if seen is None:
            seen = _SEEN[p] = frozenset(_succ_links(p))
        return seen
    return _succ_links(p)


def _succ_links(p: ProjectionView) -> set[tuple[str, str, str]]:
    succ: dict[str, dict[str, dict[str, object]]] = vars(p.graph)["_succ"]
    return {
        (f, k, t) for f, out in succ.items() for t, keys in out.items() for k in keys
    }


class TimeCursor:
    """Views of the store at slider moments, read from a time index (no replay)."""

    def __init__(
        self,
        index: TimeIndex,
        *,
        cache_size: int = 4,
        present: tuple[ProjectionView, Callable[[int], bool]] | None = None,
    ) -> None:
        """Take the moments from a store's time index; keep the views of the last
        ``cache_size`` moments shown (a view of ten thousand elements holds
        ~12 MB; a step back and forth reuses them).

        ``present``: the store now and whether the store as of a cut (Unix
        seconds) is known to be it (the read model's moments say so from the
        latest recorded time on, when no event was left out): such a cut is
        shown from the present, as ``as-of`` answers it, with no view to build
        and nothing changed since now (the slider's first step back from now)."""
        self.index = index
        self.moments = index_moments(index)
        self._cache: dict[datetime, ProjectionView] = {}
        self._cache_size = cache_size
        self._version = index.version
        self._present = present

    @classmethod
    def of_store(cls, store: Store) -> TimeCursor:
        """A cursor over the store's time index
        (:func:`~kgai_tui.core.reads.store.time_index_of`), the present read
        where the model says it is the store as of a cut."""
        from kgai_tui.core.reads.store import time_index_of

        kept = store.kept
        present = None if kept is None else (store.projection, kept.answers_now_at)
        return cls(time_index_of(store), present=present)

    def warm(self) -> None:
        """Do now what the first view at a moment and its first comparison with
        the present need once (the index's columns, NetworkX's import, the
        present's links: ~0.2 s at 1M), for a caller already waiting on the
        history: the first step back is shown from the present and builds none
        of it, so the step after it would pay."""
        self.index.columns()
        import kgai_tui.core.timeindex.view  # noqa: F401 - NetworkX

        if self._present is not None:
            _links(self._present[0])

    def at(self, cut: datetime) -> ProjectionView:
        """Return the store as of ``cut`` (equal to ``as-of``)."""
        cut = cut.astimezone(UTC)
        if self._version != self.index.version:  # events were added since
            self._cache.clear()
            self._version = self.index.version
            self.moments = index_moments(self.index)
            self._present = None  # the present it was given is of fewer events
        if (
            self._present is not None
            and self.moments
            and cut >= self.moments[-1]
            and self._present[1](int(cut.timestamp()))
        ):
            return self._present[0]
        cached = self._cache.get(cut)
        if cached is not None:
            return cached
        view = self.index.at(cut)
        if len(self._cache) >= self._cache_size:
            self._cache.pop(next(iter(self._cache)))
        self._cache[cut] = view
        return view


#: The first and last second a datetime can hold (years 1 and 9999).
_FIRST: Final = -62135596800
_LAST: Final = 253402300799


class Moments(Sequence[datetime]):
    """Distinct recorded seconds, ascending, each a datetime made when read.

    A million datetimes cost half a second and ~60 MB; the slider reads a few
    (its ends, the moment it stops at, a bisection's probes)."""

    __slots__ = ("_stamps",)

    def __init__(self, stamps: array[int] | memoryview) -> None:
        """``stamps``: distinct Unix seconds, ascending, within years 1-9999 (an
        int64 array, or a read-only view of one)."""
        self._stamps = stamps

    def __len__(self) -> int:
        return len(self._stamps)

    @overload
    def __getitem__(self, i: int) -> datetime: ...
    @overload
    def __getitem__(self, i: slice) -> list[datetime]: ...
    def __getitem__(self, i: int | slice) -> datetime | list[datetime]:
        if isinstance(i, slice):
            return [_moment(t) for t in self._stamps[i]]
        return _moment(self._stamps[i])

    def _find(self, value: object) -> int:
        """Where a moment is, by bisection; -1 when it is not one."""
        if not isinstance(value, datetime) or value.tzinfo is None:
            return -1
        stamp = value.timestamp()
        i = bisect_left(self._stamps, int(stamp))
        found = i < len(self._stamps) and self._stamps[i] == stamp
        return i if found else -1

    def __contains__(self, value: object) -> bool:
        return self._find(value) >= 0

    def index(self, value: object, start: int = 0, stop: int | None = None) -> int:
        """Where a moment is, as ``list.index``."""
        i = self._find(value)
        if not max(start, 0) <= i < (len(self) if stop is None else stop):
            raise ValueError(f"{value!r} is not a moment")
        return i

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Moments):
            return self._stamps == other._stamps
        if isinstance(other, Sequence):
            return list(self) == list(other)
        return NotImplemented


def _moment(stamp: int) -> datetime:
    moment = epoch_to_datetime(stamp)
    assert moment is not None  # the stamps are within years 1-9999
    return moment


def index_moments(index: TimeIndex) -> Moments:
    """Every distinct recorded second in the index, ascending (as :func:`moments`)."""
    import numpy as np

    times = np.frombuffer(index.times, dtype=np.int64, count=len(index.times))
    if (
        isinstance(index.times, memoryview)  # mapped, read-only: never grows
        and len(times)
        and times[0] >= _FIRST
        and times[-1] <= _LAST
        and bool(np.all(times[1:] > times[:-1]))
    ):
        return Moments(index.times)  # distinct already: read in place (8 MB at 1M)
    if len(times) and bool(np.all(times[1:] >= times[:-1])):
        # The index keeps its times sorted: the distinct ones are where a value
        # changes (5 ms at 1M; np.unique hashed and sorted them again: 0.9 s of
        # the explorer's first step back).
        seconds = times[np.concatenate(([True], times[1:] != times[:-1]))]
    else:
        seconds = np.unique(times)
    seconds = seconds[(seconds >= _FIRST) & (seconds <= _LAST)]
    return Moments(array("q", seconds.tobytes()))
