"""The slider's moments from a time index: every distinct recorded second within
the years a datetime holds, ascending, whether the index's times come sorted (as
the index keeps them) or not (a damaged index read as it is)."""

from __future__ import annotations

import random
from array import array

import pytest

from kgai_tui.core.reads.moments import _FIRST, _LAST, index_moments


class _Times:
    """What :func:`index_moments` reads of an index: its event times."""

    def __init__(self, times: list[int]) -> None:
        self.times = array("q", times)


@pytest.mark.parametrize("seed", range(40))
def test_moments_are_the_distinct_seconds_in_range(seed: int) -> None:
    rng = random.Random(seed)
    pool = [_FIRST - 1, _FIRST, 0, 1, 1, 1_700_000_000, _LAST, _LAST + 1]
    times = [rng.choice(pool) + rng.randrange(3) for _ in range(rng.randrange(60))]
    want = sorted({t for t in times if _FIRST <= t <= _LAST})
    for shown in (sorted(times), times):
        got = index_moments(_Times(shown))  # type: ignore[arg-type]
        assert list(got) == [got[i] for i in range(len(got))]
        assert [int(m.timestamp()) for m in got] == want
