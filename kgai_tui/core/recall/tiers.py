"""When recall segments merge: each segment kept outweighs all newer ones together.

Appended decisions get segments of their own (a few hundred to a few thousand
decisions each). After each new one, the segments from the oldest that holds no
more decisions than all newer ones together to the newest are merged into one.
Then every segment outweighs all newer ones together, so sizes more than double
from the newest back: at most log2(decisions) + 1 segments for a query to read.
And a merge at least doubles the segment each of its decisions was in, so a
decision is indexed again at most log2(decisions) times over the store's life.

The rule before ("past six segments, merge every one but the first") indexed
again every decision appended since the model was built, every sixth append:
at 10M decisions, 100 appends after the build, 1.3 s of one append in six, and
more with every append (py-spy, 2026-12-06).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["merged_tail"]


def merged_tail(counts: Sequence[int]) -> int:
    """How many of the last segments to merge into one (1: none), given every
    segment's decision count, oldest first, the newest last (``counts`` not empty).
    """
    newer = sum(counts)
    for i, count in enumerate(counts[:-1]):
        newer -= count
        if count <= newer:
            return len(counts) - i
    return 1
