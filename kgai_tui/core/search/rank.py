"""Deterministic top-k over a BM25 index whose tie order is not deterministic.

tantivy returns matches by score and breaks ties by internal document address, which
depends on how the index was built (segments, merges, threads). kgai-tui orders hits by
the score rounded to :data:`~kgai_tui.core.search.model.SCORE_DIGITS` decimals,
descending, then by a stable integer *key* ordered like the document id. To cut the
list at ``k`` exactly, every document whose rounded score ties with the k-th must be
considered:

1. Fetch the best ``k + 16`` by score. If the last one fetched already scores (rounded)
   below the k-th, nothing unseen can enter the first ``k``: done.
2. Otherwise fetch four times as many, and again, up to 2304.
3. If the boundary group is still open (a huge tie, e.g. a word every document has;
   tried at once when half the first window ties, unless a probe of the first key
   range shows the group is small), walk the key space upwards and take the
   smallest keys whose rounded score equals the boundary. How depends on how many
   documents the query can match (``expect``, an upper bound the caller knows):

   * when every remaining match is known to score the boundary (a pure filter, or
     a bound that rounds to 0) and the matches are few (at most
     :data:`PAGE_MAX`), *page* through them in key order: the index returns the
     next smallest keys directly, and no score is needed;
   * otherwise walk key *ranges*, fetching the best matches of each range (the
     query restricted to the range) until one scores below the boundary. The
     first range is sized for a few times the missing hits, from the count of
     matches when the first fetch counted them (few possible matches), else as if
     every document matched. Keys are uniform (hashes of ids) or dense
     (ordinals), so the first range usually suffices.

Documents sharing a key (the same decision recorded by two events) count once, with
their best score. This module never imports tantivy: the index is reached through the
small :class:`Backend` protocol (so the tie logic is also testable on its own).
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from typing import Any, Final, Protocol

from kgai_tui.core.search.model import SCORE_DIGITS, round_score

__all__ = ["Backend", "Cand", "top_k", "top_k_bounded"]

#: (rounded score, key, document address)
Cand = tuple[float, int, Any]

_PAD: Final = 16
_WALK_FORCE: Final = 2304
_RANGE_FETCH: Final = 64
#: Up to this many possible matches, a walk pages through them in key order: each
#: page costs one pass over the matches, cheaper than ranges sized for the whole
#: index, which a selective query leaves nearly empty.
PAGE_MAX: Final = 60_000
#: Up to this many counted matches are fetched in one go.
_WHOLE_MAX: Final = 640


class Backend(Protocol):
    """What the ranking needs from an index searcher."""

    def top(self, query: Any, n: int) -> Sequence[tuple[float, Any]]:
        """The best ``n`` matches as (score, address)."""
        ...

    @property
    def doc_count(self) -> int:
        """How many documents the index holds."""
        ...

    def keys(self, addrs: Sequence[Any]) -> list[int]:
        """The key of each address."""
        ...

    @property
    def key_range(self) -> tuple[int, int]:
        """Bounds ``[low, high)`` of the keys the query can match."""
        ...

    def restrict(self, query: Any, low: int, high: int) -> Any:
        """The query limited to ``low <= key <= high``, scores unchanged."""
        ...

    def counted(self, query: Any, n: int) -> tuple[Sequence[tuple[float, Any]], int]:
        """:meth:`top`, and how many documents match."""
        ...

    def by_key(self, query: Any, n: int) -> Sequence[Any]:
        """The addresses of the ``n`` matches with the smallest keys (ascending;
        documents sharing a key in any order)."""
        ...


def _collect(
    backend: Backend,
    hits: Sequence[tuple[float, Any]],
    allowed: Container[int] | None,
    seen: set[int],
    out: list[Cand],
) -> None:
    """Append (rounded, key, address) for keys not seen yet that pass the filter."""
    if not hits:
        return
    keys = backend.keys([addr for _, addr in hits])
    digits = SCORE_DIGITS
    for (score, addr), key in zip(hits, keys, strict=True):
        if key in seen or (allowed is not None and key not in allowed):
            continue
        seen.add(key)
        out.append((round(score, digits) + 0.0, key, addr))


def top_k(
    backend: Backend,
    query: Any,
    k: int,
    *,
    scored: bool = True,
    allowed: Container[int] | None = None,
    expect: int | None = None,
) -> list[Cand]:
    """Return the first ``k`` matches by (rounded score desc, key asc), exactly.

    Args:
        backend: The index.
        query: The query (opaque here).
        k: How many (at least 1).
        scored: False when every match scores 0 (a pure filter): the first ``k``
            keys are then the answer.
        allowed: If given, only these keys may be returned (a post-filter).
        expect: At least the number of documents the query matches, if known
            (it chooses how to walk a big tie; the answer does not depend on it).

    Returns:
        At most ``k`` candidates, best first, one per key.
    """
    if not scored:
        flat = _walk(backend, query, k, allowed, 0.0, set(), None, expect, flat=True)
        return flat or []
    fetch = k + _PAD
    probed = False
    # Few possible matches: the first fetch also counts them (it visits them all
    # anyway), and a modest number is then fetched whole, settling every tie.
    count = expect is not None and expect <= PAGE_MAX
    whole = False
    counted: int | None = None
    while True:
        if count:
            count = False
            hits, counted = backend.counted(query, fetch)
            if fetch < counted <= _WHOLE_MAX:
                fetch, whole = counted, True
                continue
        else:
            hits = backend.top(query, fetch)
        cands: list[Cand] = []
        _collect(backend, hits, allowed, set(), cands)
        ranked = sorted(cands, key=lambda c: (-c[0], c[1]))
        if len(hits) < fetch or whole:
            return ranked[:k]
        if len(ranked) >= k:
            bound = ranked[k - 1][0]
            if round_score(hits[-1][0]) < bound:
                return ranked[:k]
            tied = sum(1 for c in ranked if c[0] == bound)
            if fetch >= _WALK_FORCE or (not probed and 2 * tied >= len(hits)):
                above = [c for c in ranked if c[0] > bound]
                done = {c[1] for c in above}
                sparse_at = None if fetch >= _WALK_FORCE else 4 * fetch
                rest = _walk(
                    backend,
                    query,
                    k - len(above),
                    allowed,
                    bound,
                    done,
                    sparse_at,
                    expect,
                    counted=counted,
                )
                if rest is not None:
                    return above + rest
                probed = True
        fetch *= 4


def top_k_bounded(
    backend: Backend,
    query: Any,
    k: int,
    narrow: Any | None,
    rest_max: float,
    *,
    allowed: Container[int] | None = None,
    expect: int | None = None,
) -> list[Cand] | None:
    """The first ``k`` matches, exactly as :func:`top_k` orders them, from a bound.

    Scoring every match of a query that has a word found in most documents is what
    makes a search slow on a large index. When the matches outside a small subset
    cannot reach the top ``k``, ranking the subset is enough:

    * every match outside it rounds to 0 (``rest_max`` does): the subset's hits
      scoring above 0 come first, the rest is the smallest keys (the key walk, if
      the matches are dense enough for it to be quick);
    * or they round below the ``k``-th hit of the subset: the subset's top ``k``.

    Args:
        backend: The index.
        query: The whole query.
        k: How many (at least 1).
        narrow: The query restricted to the subset, with the same scores; ``None``
            for an empty subset.
        rest_max: An upper bound of the raw score of any match outside the subset.
        allowed: If given, only these keys may be returned.
        expect: At least the number of documents ``query`` matches, if known.

    Returns:
        The same candidates as ``top_k(backend, query, k, allowed=allowed)``, or
        ``None`` when the bound does not settle the answer.
    """
    rest = round_score(rest_max)
    top = (
        []
        if narrow is None
        else top_k(backend, narrow, k, allowed=allowed, expect=expect)
    )
    if rest == 0.0:
        above = [c for c in top if c[0] > 0.0]
        if len(above) == k:
            return above
        done = {c[1] for c in above}
        # Every match left rounds to 0: the smallest keys are the rest. Walking
        # ranges pays when the matches are many; when few (a selective filter),
        # scoring them all is cheaper: that walk gives up (None). Pages never do.
        tail = _walk(
            backend,
            query,
            k - len(above),
            allowed,
            0.0,
            done,
            _WALK_FORCE,
            expect,
            flat=True,
        )
        return None if tail is None else above + tail
    if narrow is not None and len(top) == k and rest < top[-1][0]:
        return top
    return None


def _walk(
    backend: Backend,
    query: Any,
    need: int,
    allowed: Container[int] | None,
    bound: float,
    done: set[int],
    sparse_at: int | None,
    expect: int | None,
    *,
    flat: bool = False,
    counted: int | None = None,
) -> list[Cand] | None:
    """The ``need`` smallest keys among matches whose rounded best score is ``bound``.

    ``flat`` says every match whose key is not in ``done`` rounds to ``bound``:
    when the matches are few (``expect``), they are then paged through in key
    order. Otherwise ranges of keys are walked, sized from ``counted`` (the exact
    number of matches, when a fetch counted them: a range then holds about as many
    matches as asked, fetched at once), else from ``expect`` or the index size.
    """
    if flat and expect is not None and expect <= PAGE_MAX:
        return _key_pages(backend, query, need, allowed, bound, done)
    exact = counted is not None
    matches = counted if exact else expect
    return _range_walk(
        backend, query, need, allowed, bound, done, sparse_at, matches, exact
    )


def _key_pages(
    backend: Backend,
    query: Any,
    need: int,
    allowed: Container[int] | None,
    bound: float,
    done: set[int],
) -> list[Cand]:
    """:func:`_walk` of a flat group: the matches' smallest keys, a page at a time.

    Every match whose key is not in ``done`` rounds to ``bound``, so no score is
    needed: a page is the next matches by key. The next page is sized from the
    share of keys taken so far (others are in ``done`` or not allowed).
    """
    start, limit = backend.key_range
    low = start
    size = max(_RANGE_FETCH, 2 * need)
    seen = 0
    out: list[Cand] = []
    while len(out) < need and low < limit:
        page = query if low == start else backend.restrict(query, low, limit - 1)
        addrs = backend.by_key(page, size)
        if not addrs:
            break
        keys = backend.keys(addrs)
        for i in sorted(range(len(keys)), key=keys.__getitem__):
            key = keys[i]
            if key in done or (allowed is not None and key not in allowed):
                continue
            done.add(key)
            out.append((bound, key, addrs[i]))
        if len(addrs) < size:
            break
        seen += len(addrs)
        # Past the page's last key: a key shared with a document beyond the page
        # was taken already (documents sharing a key count once).
        low = max(keys) + 1
        size = max(2 * size, 2 * (need - len(out)) * seen // max(len(out), 1))
    return out[:need]


def _range_walk(
    backend: Backend,
    query: Any,
    need: int,
    allowed: Container[int] | None,
    bound: float,
    done: set[int],
    sparse_at: int | None,
    expect: int | None,
    exact: bool = False,
) -> list[Cand] | None:
    """:func:`_walk` over key ranges.

    Walks the key space upwards in ranges (each twice as wide as the last, the first
    sized to hold ``4 * need`` matches if keys are spread evenly and ``expect`` or
    every document match; with ``exact``, ``expect`` is the count of matches and
    the first range is sized for ``8 * need``, each fetched at once) and collects, in
    each range, every match scoring ``bound`` (the best of a range are fetched by
    score until one scores below it). Keys in ``done`` (already ranked above the
    boundary) are skipped. With ``sparse_at``, give up (``None``, leaving ``done``
    as it was) when the first range projects a group smaller than that: fetching by
    score is then cheaper than walking the key space.
    """
    out: list[Cand] = []
    start, limit = backend.key_range
    low, span = start, limit - start
    matches = backend.doc_count if expect is None else min(expect, backend.doc_count)
    target = (8 if exact else 4) * max(need, 1)
    width = max(1, min(span, span * target // max(matches, 1)))
    # The first fetch of a range: all its matches, when their count is known.
    fetch = target * 3 // 2 + _PAD if exact else _RANGE_FETCH
    before = set(done)
    while len(out) < need and low < limit:
        high = min(limit, low + width) - 1
        out.extend(
            _group_in_range(backend, query, low, high, bound, done, allowed, fetch)
        )
        first = low == start and len(out) < need
        if first and sparse_at is not None and len(out) * (span // width) < sparse_at:
            done.intersection_update(before)
            return None
        low = high + 1
        width *= 2
        if exact:
            fetch *= 2
    return out[:need]


def _group_in_range(
    backend: Backend,
    query: Any,
    low: int,
    high: int,
    bound: float,
    done: set[int],
    allowed: Container[int] | None,
    limit: int = _RANGE_FETCH,
) -> list[Cand]:
    """Matches with ``low <= key <= high`` whose best rounded score is ``bound``.

    ``limit`` is the first fetch: enough for every match in the range if known.

    Returns:
        One candidate per key, in key order.
    """
    restricted = backend.restrict(query, low, high)
    while True:
        hits = backend.top(restricted, limit)
        if len(hits) < limit or round_score(hits[-1][0]) < bound:
            break
        limit *= 4
    best: dict[int, tuple[float, Any]] = {}
    keys = backend.keys([addr for _, addr in hits])
    for (score, addr), key in zip(hits, keys, strict=True):
        rounded = round_score(score)
        if key not in best or rounded > best[key][0]:
            best[key] = (rounded, addr)
    out = []
    for key in sorted(best):
        if key in done or (allowed is not None and key not in allowed):
            continue
        done.add(key)
        rounded, addr = best[key]
        if rounded == bound:
            out.append((bound, key, addr))
    return out
