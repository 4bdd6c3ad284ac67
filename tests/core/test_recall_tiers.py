"""The recall segments' merge rule: few segments, each decision indexed again
a few times, whatever the sizes of the appends."""

from __future__ import annotations

from math import log2

from hypothesis import given
from hypothesis import strategies as st

from kgai_tui.core.recall.tiers import merged_tail


def _append(counts: list[int], size: int) -> int:
    """Add a segment of ``size`` and merge as the rule says; the decisions
    indexed (the new segment's, or the merged one's)."""
    counts.append(size)
    k = merged_tail(counts)
    counts[-k:] = [sum(counts[-k:])]
    return counts[-1]


@given(st.lists(st.integers(min_value=1, max_value=5000), min_size=1, max_size=300))
def test_segments_stay_few_and_merges_stay_cheap(sizes: list[int]) -> None:
    counts: list[int] = []
    indexed = 0
    for size in sizes:
        indexed += _append(counts, size)
    total = sum(sizes)
    assert sum(counts) == total
    # Each segment holds more than every newer one together...
    assert all(counts[i] > sum(counts[i + 1 :]) for i in range(len(counts) - 1))
    # ...so there are few, and no decision was indexed more than that many times.
    assert len(counts) <= log2(total) + 1
    assert indexed <= total * (log2(total) + 1)


def test_a_big_build_segment_is_not_merged_into_by_small_appends() -> None:
    counts = [10_000_000]
    indexed = [_append(counts, 1000) for _ in range(100)]
    # The build's segment stays; 100 appends of 1,000 leave one segment per set
    # bit of 100 (64 + 32 + 4), and the largest merge indexed 64,000 decisions.
    assert counts == [10_000_000, 64_000, 32_000, 4_000]
    assert max(indexed) == 64_000
    assert indexed.count(1000) == 50  # half the appends merge nothing


def test_equal_neighbours_merge_and_a_larger_one_stays() -> None:
    assert merged_tail([5]) == 1
    assert merged_tail([8, 5]) == 1
    assert merged_tail([8, 5, 5]) == 3  # 5 + 5 = 10 outweighs 8 too
    assert merged_tail([20, 5, 5]) == 2
    assert merged_tail([20, 4, 5]) == 2
    assert merged_tail([20, 6, 5]) == 1
    assert merged_tail([3, 2, 1]) == 3  # 3 is not more than 2 + 1
