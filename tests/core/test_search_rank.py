"""The deterministic top-k equals a brute-force ranking, whatever the tie order."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgai_tui.core.search import rank as search_rank
from kgai_tui.core.search.model import round_score
from kgai_tui.core.search.rank import top_k, top_k_bounded


class FakeBackend:
    """An index of (score, key) documents whose tie order is an arbitrary address.

    ``top`` orders like tantivy: score descending, then the document address, which
    is a permutation unrelated to the key (as with segments built in another order).
    """

    def __init__(
        self, docs: Sequence[tuple[float, int]], order: Sequence[int], limit: int
    ) -> None:
        self.docs = list(docs)
        self.addr = {doc: a for doc, a in zip(range(len(docs)), order, strict=True)}
        self.limit = limit
        self.calls = 0

    # The query is a (low, high) key window, or None for everything.
    def _match(self, query: Any) -> list[int]:
        low, high = query if query is not None else (0, self.limit)
        return [i for i, (_, key) in enumerate(self.docs) if low <= key <= high]

    def top(self, query: Any, n: int) -> list[tuple[float, int]]:
        self.calls += 1
        found = sorted(
            self._match(query), key=lambda i: (-self.docs[i][0], self.addr[i])
        )
        return [(self.docs[i][0], i) for i in found[:n]]

    @property
    def doc_count(self) -> int:
        return len(self.docs)

    def keys(self, addrs: Sequence[Any]) -> list[int]:
        return [self.docs[i][1] for i in addrs]

    @property
    def key_range(self) -> tuple[int, int]:
        return (0, self.limit)

    def restrict(self, query: Any, low: int, high: int) -> Any:
        base_low, base_high = query if query is not None else (0, self.limit)
        return (max(low, base_low), min(high, base_high))

    def counted(self, query: Any, n: int) -> tuple[list[tuple[float, int]], int]:
        return self.top(query, n), len(self._match(query))

    def by_key(self, query: Any, n: int) -> list[int]:
        self.calls += 1
        # Documents sharing a key come in address order, as tantivy leaves them.
        found = sorted(
            self._match(query), key=lambda i: (self.docs[i][1], self.addr[i])
        )
        return found[:n]


def brute(
    docs: Sequence[tuple[float, int]], k: int, allowed: frozenset[int] | None
) -> list[tuple[float, int]]:
    best: dict[int, float] = {}
    for score, key in docs:
        if allowed is not None and key not in allowed:
            continue
        r = round_score(score)
        best[key] = max(best.get(key, r), r)
    return sorted(((r, key) for key, r in best.items()), key=lambda c: (-c[0], c[1]))[
        :k
    ]


SCORES = st.sampled_from([0.0, 0.5, 1.0, 1.00001, 1.00004, 1.00006, 2.5, 7.25])


@st.composite
def indexes(draw: st.DrawFn) -> tuple[list[tuple[float, int]], list[int], int]:
    limit = draw(st.sampled_from([50, 1000, 1 << 64]))
    n = draw(st.integers(0, 300))
    keys = st.integers(0, limit - 1)
    docs = [(draw(SCORES), draw(keys)) for _ in range(n)]
    if docs and draw(st.booleans()):  # a giant tie: most documents score the same
        tie = draw(SCORES)
        docs = [(tie if i % 5 else s, key) for i, (s, key) in enumerate(docs)]
    order = draw(st.permutations(list(range(n))))
    return docs, list(order), limit


@settings(max_examples=150, deadline=None)
@given(indexes(), st.integers(1, 40), st.booleans(), st.booleans(), st.data())
def test_top_k_matches_brute_force(
    index: tuple[list[tuple[float, int]], list[int], int],
    k: int,
    filtered: bool,
    paged: bool,
    data: st.DataObject,
) -> None:
    """Paged (a known match count), counted or by ranges, the same exact answer."""
    docs, order, limit = index
    allowed = None
    if filtered and docs:
        allowed = frozenset(
            data.draw(st.sets(st.sampled_from([key for _, key in docs])))
        )
    backend = FakeBackend(docs, order, limit)
    # Fetching a counted few whole is tried first; without it, pages settle ties.
    whole = data.draw(st.sampled_from([0, 640]))
    with mock.patch.object(search_rank, "_WHOLE_MAX", whole):
        expect = len(docs) if paged else None
        got = top_k(backend, None, k, allowed=allowed, expect=expect)
    assert [(r, key) for r, key, _ in got] == brute(docs, k, allowed)


@settings(max_examples=60, deadline=None)
@given(indexes(), st.integers(1, 40), st.booleans())
def test_pure_filter_returns_smallest_keys(
    index: tuple[list[tuple[float, int]], list[int], int], k: int, paged: bool
) -> None:
    docs, order, limit = index
    docs = [(0.0, key) for _, key in docs]
    expect = len(docs) if paged else None
    got = top_k(FakeBackend(docs, order, limit), None, k, scored=False, expect=expect)
    assert [key for _, key, _ in got] == sorted({key for _, key in docs})[:k]


@pytest.mark.parametrize("expect", [None, 5000])
def test_giant_tie_is_cut_by_key_not_by_address(expect: int | None) -> None:
    n = 5000
    keys = [(i * 7919) % 100_003 for i in range(n)]
    docs = [(1.25, key) for key in keys]
    order = list(reversed(range(n)))  # the address order disagrees with the key order
    backend = FakeBackend(docs, order, 100_003)
    with mock.patch.object(search_rank, "_WHOLE_MAX", 0):
        got = top_k(backend, None, 20, expect=expect)
    assert [key for _, key, _ in got] == sorted(keys)[:20]
    assert backend.calls <= 4  # one window, then a walk of one range or page


def test_a_counted_few_are_fetched_whole() -> None:
    """Few matches, all tied: one counting fetch, then one fetch of them all."""
    keys = [(i * 7919) % 100_003 for i in range(300)]
    backend = FakeBackend([(1.25, key) for key in keys], list(range(300)), 100_003)
    got = top_k(backend, None, 20, expect=300)
    assert [key for _, key, _ in got] == sorted(keys)[:20]
    assert backend.calls == 2


@pytest.mark.parametrize("expect", [None, 3000])
def test_walk_over_many_ranges_with_a_sparse_filter(expect: int | None) -> None:
    n = 3000
    keys = [(i * 104_729) % (1 << 40) for i in range(n)]
    docs = [(2.0 if i % 97 == 0 else 1.0, key) for i, key in enumerate(keys)]
    allowed = frozenset(keys[::50])
    order = [(i * 31) % n for i in range(n)]  # a permutation (31 and 3000 are coprime)
    backend = FakeBackend(docs, order, 1 << 40)
    got = top_k(backend, None, 20, allowed=allowed, expect=expect)
    assert [(r, key) for r, key, _ in got] == brute(docs, 20, allowed)
    assert backend.calls > 3  # several key ranges or pages were walked


def test_duplicate_keys_count_once_with_their_best_score() -> None:
    docs = [(1.0, 5), (3.0, 5), (1.0, 4), (1.0, 6), (2.0, 7)]
    got = top_k(FakeBackend(docs, [4, 3, 2, 1, 0], 10), None, 3)
    assert [(r, key) for r, key, _ in got] == [(3.0, 5), (2.0, 7), (1.0, 4)]


@settings(max_examples=150, deadline=None)
@given(indexes(), st.integers(1, 40), st.booleans(), st.data())
def test_bounded_top_k_is_top_k_or_gives_up(
    index: tuple[list[tuple[float, int]], list[int], int],
    k: int,
    paged: bool,
    data: st.DataObject,
) -> None:
    """Whatever the subset and the bound, the answer is exact or ``None``."""
    docs, order, limit = index
    low = data.draw(st.integers(0, limit - 1))
    high = data.draw(st.integers(low, limit - 1))
    # Outside the window every document scores at most the bound (often ~0).
    rest_max = data.draw(st.sampled_from([0.00001, 0.5, 1.0]))
    docs = [(s if low <= key <= high else min(s, rest_max) / 2, key) for s, key in docs]
    narrow: tuple[int, int] | None = (low, high)
    if data.draw(st.booleans()):  # no subset: every document is under the bound
        narrow = None
        docs = [(min(s, rest_max) / 2, key) for s, key in docs]
    backend = FakeBackend(docs, order, limit)
    expect = len(docs) if paged else None
    got = top_k_bounded(backend, None, k, narrow, rest_max, expect=expect)
    if got is not None:
        assert [(r, key) for r, key, _ in got] == brute(docs, k, None)


def test_bounded_top_k_settles_a_common_word() -> None:
    """Rare matches score high, the rest rounds to 0: no full ranking is needed."""
    n = 4000
    keys = [(i * 7919) % 100_003 for i in range(n)]
    docs = [(9.5 if key < 3000 else 0.000001, key) for key in keys]
    backend = FakeBackend(docs, list(range(n)), 100_003)
    got = top_k_bounded(backend, None, 20, (0, 2999), 0.00001)
    assert got is not None
    assert [(r, key) for r, key, _ in got] == brute(docs, 20, None)
    few = [(0.000001, key) for key in keys]
    got = top_k_bounded(FakeBackend(few, list(range(n)), 100_003), None, 20, None, 1e-5)
    assert got is not None
    assert [(r, key) for r, key, _ in got] == brute(few, 20, None)


def test_bounded_top_k_pages_a_selective_zero_score_group() -> None:
    """Few matches, all rounding to 0: the first page by key is the answer."""
    n = 500
    keys = [(i * 7919) % (1 << 40) for i in range(n)]
    docs = [(0.000001, key) for key in keys]
    backend = FakeBackend(docs, list(range(n)), 1 << 40)
    got = top_k_bounded(backend, None, 20, None, 1e-5, expect=n)
    assert got is not None
    assert [(r, key) for r, key, _ in got] == brute(docs, 20, None)
    assert backend.calls == 1
