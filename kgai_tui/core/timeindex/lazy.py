"""Read-only containers an as-of view hands out, filled on first use.

:class:`LazySeq` computes items on access, :class:`Column` is one decision field at a
cut without copying the index's list, :class:`NodeAttrs` is an element's attribute
dict whose ``props`` blob is computed on first read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from itertools import chain, islice
from operator import itemgetter
from typing import TYPE_CHECKING, Any, TypeVar, overload

if TYPE_CHECKING:
    from _collections_abc import dict_items, dict_keys, dict_values

T = TypeVar("T")


class LazySeq(Sequence[T]):
    """A read-only sequence whose items are computed on access and kept."""

    def __init__(self, size: int, item: Callable[[int], T]) -> None:
        self._size = size
        self._item = item
        self._cache: dict[int, T] = {}

    def __len__(self) -> int:
        return self._size

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[T]: ...
    def __getitem__(self, i: int | slice) -> T | Sequence[T]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._size))]
        if i < 0:
            i += self._size
        if not 0 <= i < self._size:
            raise IndexError(i)
        got = self._cache.get(i)
        if got is None:
            got = self._cache[i] = self._item(i)
        return got

    def __iter__(self) -> Iterator[T]:
        for i in range(self._size):
            yield self[i]


class Column(Sequence[T]):
    """One decision field at the cut: a prefix of the index's list, no copy.

    Decisions ``0 .. k-1`` of the index all exist at the cut and read straight from
    its list (a copy of a million-item list costs more than a whole as-of read);
    decisions that exist but sort later (``extra``) and the few whose fields differ
    at the cut (``patch``) are kept aside. Iteration runs at C speed.
    """

    __slots__ = ("_base", "_extra", "_k", "_patch", "_size")

    def __init__(
        self, base: Sequence[T], k: int, extra: list[T], patch: dict[int, T]
    ) -> None:
        self._base = base
        self._k = k
        self._extra = extra
        self._patch = patch
        self._size = k + len(extra)

    def __len__(self) -> int:
        return self._size

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[T]: ...
    def __getitem__(self, i: int | slice) -> T | Sequence[T]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(self._size))]
        if i < 0:
            i += self._size
        if 0 <= i < self._k:
            if self._patch and i in self._patch:
                return self._patch[i]
            return self._base[i]
        if self._k <= i < self._size:
            return self._extra[i - self._k]
        raise IndexError(i)

    def take(self, indices: list[int]) -> list[T]:
        """The values at many indices at once (C speed when they are all plain)."""
        if not indices:
            return []
        if not self._patch and max(indices) < self._k and min(indices) >= 0:
            if len(indices) == 1:
                return [self._base[indices[0]]]
            return list(itemgetter(*indices)(self._base))
        return [self[i] for i in indices]

    def __iter__(self) -> Iterator[T]:
        if self._patch:
            return (self[i] for i in range(self._size))
        return chain(islice(self._base, self._k), self._extra)


class NodeAttrs(dict[str, Any]):
    """An element's attributes whose ``props`` blob is computed on first read.

    ``props`` costs most of building the graph and most readers (as-of, heads, the
    slider's delta) never look at it. Every way of reading the dict (subscript,
    ``get``, ``in``, iteration, ``items``, ``copy``, equality) sees it.
    """

    __slots__ = ("_fill",)
    _fill: Callable[[], str] | None  # set right after construction

    @classmethod
    def with_props(cls, fill: Callable[[], str], **attrs: Any) -> NodeAttrs:
        """``attrs`` now, and ``props`` from ``fill()`` when first read."""
        node = cls(**attrs)
        node._fill = fill
        return node

    def _full(self) -> None:
        fill = self._fill
        if fill is not None:
            self._fill = None
            if not dict.__contains__(self, "props"):
                dict.__setitem__(self, "props", fill())

    def __missing__(self, key: str) -> Any:
        if key == "props" and self._fill is not None:
            self._full()
            return dict.__getitem__(self, key)
        raise KeyError(key)

    def get(self, key: str, default: Any = None, /) -> Any:
        if key == "props":  # the other keys are there already: kind and name
            self._full()
        return dict.get(self, key, default)  # of every element, each slider step

    def __contains__(self, key: object) -> bool:
        if key == "props":
            self._full()
        return dict.__contains__(self, key)

    def __iter__(self) -> Iterator[str]:
        self._full()
        return dict.__iter__(self)

    def __len__(self) -> int:
        self._full()
        return dict.__len__(self)

    def keys(self) -> dict_keys[str, Any]:
        self._full()
        return dict.keys(self)

    def values(self) -> dict_values[str, Any]:
        self._full()
        return dict.values(self)

    def items(self) -> dict_items[str, Any]:
        self._full()
        return dict.items(self)

    def copy(self) -> dict[str, Any]:
        self._full()
        return dict(dict.items(self))

    def __eq__(self, other: object) -> bool:
        self._full()
        if isinstance(other, NodeAttrs):
            other._full()
        return dict.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __repr__(self) -> str:
        self._full()
        return dict.__repr__(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (self.copy(),))
