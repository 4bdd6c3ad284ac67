"""Arrays that are views of a mapped file: found, searched in place, let go of.

The read model's recall index is a set of array files mapped read-only
(:mod:`kgai_tui.core.model.arrays`); a query touches only the pages it reads, and
those pages count in the process's resident size for as long as they stay mapped.
A query that gathers rows spread over a long array (the elements of 100k scored
decisions out of 10M) would otherwise keep every page it passed over: at 10M
decisions 130 MB of a ``context``. :func:`let_go` drops a range's pages from
this process once read (they stay in the page cache; a later read faults them
back in), so such a gather holds one chunk's pages at a time.
"""

from __future__ import annotations

import mmap
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["let_go", "mapping_of"]

_PAGE = mmap.PAGESIZE


def mapping_of(arr: npt.NDArray[Any]) -> tuple[mmap.mmap, int] | None:
    """The ``mmap`` a contiguous array views and the array's offset in it, or
    ``None`` (an array of its own, or one not contiguous)."""
    base: object = arr
    while isinstance(base, np.ndarray):
        base = base.base
    mapped = base.obj if isinstance(base, memoryview) else None
    if not isinstance(mapped, mmap.mmap) or not arr.flags.c_contiguous:
        return None
    if not len(mapped) or mapped.closed:
        return None
    origin = np.frombuffer(mapped, dtype=np.uint8, count=1).ctypes.data
    start = int(arr.ctypes.data) - int(origin)
    if start < 0 or start + arr.nbytes > len(mapped):
        return None
    return mapped, start


def let_go(arr: npt.NDArray[Any], lo: int, hi: int) -> None:
    """Drop the pages wholly inside items ``[lo, hi)`` of a mapped 1-D array from
    this process (nothing for an array of its own)."""
    found = mapping_of(arr)
    if found is None or hi <= lo:
        return
    mapped, at = found
    size = arr.itemsize
    first = -(-(at + lo * size) // _PAGE) * _PAGE
    end = (at + hi * size) // _PAGE * _PAGE
    if end > first:
        mapped.madvise(mmap.MADV_DONTNEED, first, end - first)
