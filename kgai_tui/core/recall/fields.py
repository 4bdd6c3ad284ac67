"""Weighted token fields over rows (decisions or elements): postings and scores.

:class:`Fields` tokenizes each field once into a :class:`Csr` of postings per
vocabulary token; :meth:`Fields.score` gives per row the same float as
:func:`~kgai_tui.core.recall.scoring.fields_score` divided by ``3 * len(q_toks)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from kgai_tui.core.recall.tokens import F64, I32, I64, tokenize_many, utf8
from kgai_tui.core.recall.vocab import Vocab

#: Postings at least this long are assigned whole rather than through maximum.at.
_BIG_POSTING: Final = 4096


@dataclass(slots=True)
class SparseRows:
    """Scores of a few rows (every other row scores 0): ``rows`` ascending, unique."""

    rows: I64
    vals: F64

    def at(self, wanted: I32 | I64) -> F64:
        """The scores of rows ``wanted`` (0 for a row not held)."""
        out = np.zeros(len(wanted), dtype=np.float64)
        if not len(self.rows) or not len(wanted):
            return out
        pos = np.searchsorted(self.rows, wanted)
        inside = pos < len(self.rows)
        hit = np.zeros(len(wanted), dtype=np.bool_)
        hit[inside] = self.rows[pos[inside]] == wanted[inside]
        out[hit] = self.vals[pos[hit]]
        return out


_EMPTY_ROWS: Final = np.zeros(0, dtype=np.int64)


def _joined(parts: list[I32]) -> I32:
    """One array of ``parts`` (emptied), without a copy when there is one."""
    if len(parts) == 1:
        return parts.pop()
    out = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int32)
    parts.clear()
    return out


def _postings(csr: Csr, starts: I64, counts: I64, values: F64) -> tuple[I32, F64]:
    """The members of the postings ``starts``/``counts`` (all non-empty), each
    with its posting's value."""
    total = int(counts.sum())
    first = np.repeat(starts - (np.cumsum(counts) - counts), counts)
    return csr.members[first + np.arange(total)], np.repeat(values, counts)


@dataclass(slots=True)
class Csr:
    """Rows -> int32 members: ``members[ptr[r]:ptr[r + 1]]``."""

    ptr: I64
    members: I32

    @staticmethod
    def build(rows: I64, members: I32, n_rows: int) -> Csr:
        """Group ascending ``members`` (below 2**31) by ``rows``, dropping
        repeated pairs.

        One int64 key per pair, the row above the member, sorted in place:
        members ascending within a row, as a stable sort by row leaves them.
        ``rows`` becomes that key (the caller's array is consumed). A stable
        argsort with each array gathered in its order held five arrays as long
        as the postings at once: at 10M, most of the recall build's peak.
        """
        key = rows
        key <<= 32
        key |= members
        key.sort()
        if len(key) > 1:
            keep = np.empty(len(key), dtype=np.bool_)
            keep[0] = True
            np.not_equal(key[1:], key[:-1], out=keep[1:])
            if not keep.all():
                key = key[keep]
            del keep
        bounds = np.arange(n_rows + 1, dtype=np.int64)
        bounds <<= 32
        ptr = np.searchsorted(key, bounds).astype(np.int64)
        key &= 0xFFFFFFFF
        return Csr(ptr, key.astype(np.int32))

    def nbytes(self) -> int:
        """Array bytes held."""
        return int(self.ptr.nbytes + self.members.nbytes)


class Fields:
    """Weighted token fields over ``n`` rows (decisions or elements), one vocabulary."""

    def __init__(self, texts: Iterable[tuple[float, Sequence[str]]], n: int) -> None:
        """Tokenize every field; ``texts`` are ``(weight, per-row text)`` pairs,
        each let go once tokenized (a generator makes the next one then)."""
        self._build(((weight, (column,)) for weight, column in texts), n)

    @classmethod
    def chunked(
        cls, fields: Iterable[tuple[float, Iterable[Sequence[str]]]], n: int
    ) -> Fields:
        """The same fields, each field's texts given as runs of consecutive rows:
        one run's strings are alive at a time, not a whole column's (at 10M
        decisions ten million titles, their distinct-text dict and their joined
        text). The vocabulary is sorted once every run is in, so the ids, and so
        the postings, are those of whole columns."""
        out = cls.__new__(cls)
        out._build(fields, n)
        return out

    def _build(
        self, fields: Iterable[tuple[float, Iterable[Sequence[str]]]], n: int
    ) -> None:
        vocab: dict[bytes, int] = {}
        raw: list[tuple[float, I32, I32]] = []
        for weight, runs in fields:
            owners: list[I32] = []
            tids: list[I32] = []
            base = 0
            for run in runs:
                owner, tid = tokenize_many(run, vocab)
                if base:
                    owner += base
                base += len(run)
                del run
                owners.append(owner)
                tids.append(tid)
                del owner, tid
            if base != n:
                raise ValueError(f"a field holds {base} rows, not {n}")
            raw.append((weight, _joined(owners), _joined(tids)))
            del owners, tids
        self.vocab = Vocab(vocab)
        del vocab
        self.n = n
        self.fields: list[tuple[float, Csr]] = []
        remap = self.vocab.remap
        raw.reverse()
        while raw:  # each field's tokens let go once its postings are built
            weight, owner, tid = raw.pop()
            rows = remap[tid]  # a new int64 array: Csr.build's key
            del tid
            self.fields.append((weight, Csr.build(rows, owner, len(self.vocab))))
            del owner, rows
        self.vocab.remap = np.zeros(0, dtype=np.int64)

    def nbytes(self) -> int:
        """Approximate bytes held."""
        return self.vocab.nbytes() + sum(c.nbytes() for _, c in self.fields)

    @classmethod
    def from_parts(
        cls, n: int, vocab: Vocab, fields: list[tuple[float, Csr]]
    ) -> Fields:
        """Fields from stored parts (the vocabulary and one :class:`Csr` per field)."""
        out = cls.__new__(cls)
        out.vocab, out.n, out.fields = vocab, n, fields
        return out

    def rows_with(self, qb: bytes, field: int) -> I32:
        """The rows whose field number ``field`` holds the token ``qb`` exactly."""
        tid = self.vocab.find(qb)
        if tid is None:
            return np.zeros(0, dtype=np.int32)
        csr = self.fields[field][1]
        return csr.members[int(csr.ptr[tid]) : int(csr.ptr[tid + 1])]

    def _matched(self, qb: bytes) -> tuple[I64, F64] | None:
        """The vocabulary tokens ``qb`` matches and their strengths (None: none)."""
        found = self.vocab.matches(qb)
        if not found:
            return None
        tids = np.fromiter((t for t, _ in found), dtype=np.int64, count=len(found))
        strengths = np.fromiter(
            (s for _, s in found), dtype=np.float64, count=len(found)
        )
        return tids, strengths

    def best(self, qb: bytes) -> F64 | None:
        """Per row, the best ``strength * weight`` of one query token (None: all 0).

        Big postings are assigned in ascending value order (the last write is the
        max); the many small ones go through one ``maximum.at``. Max is exact.
        """
        matched = self._matched(qb)
        if matched is None:
            return None
        tids, strengths = matched
        big: list[tuple[float, int, int]] = []
        small_idx: list[I32] = []
        small_val: list[F64] = []
        for f, (weight, csr) in enumerate(self.fields):
            starts = csr.ptr[tids]
            counts = csr.ptr[tids + 1] - starts
            values = strengths * weight  # the same product as fields_score
            large = counts >= _BIG_POSTING
            for k in np.flatnonzero(large).tolist():
                big.append((float(values[k]), f, int(tids[k])))
            take = ~large & (counts > 0)
            if take.any():
                rows, vals = _postings(csr, starts[take], counts[take], values[take])
                small_idx.append(rows)
                small_val.append(vals)
        if not big and not small_idx:
            return None
        best = np.zeros(self.n, dtype=np.float64)
        big.sort()
        for value, f, t in big:
            csr = self.fields[f][1]
            a, b = int(csr.ptr[t]), int(csr.ptr[t + 1])
            if b - a == self.n:  # distinct rows, so every row
                best.fill(value)
            else:
                best[csr.members[a:b]] = value
        if small_idx:
            np.maximum.at(best, np.concatenate(small_idx), np.concatenate(small_val))
        return best

    def _sparse_best(self, qb: bytes, budget: int) -> tuple[I64, F64] | bool | None:
        """:meth:`best` as ``(rows, values)`` for the rows it does not leave at 0;
        ``None`` when no token matches, ``False`` when its postings pass
        ``budget`` entries (a dense array is cheaper then)."""
        matched = self._matched(qb)
        if matched is None:
            return None
        tids, strengths = matched
        idx: list[I32] = []
        val: list[F64] = []
        total = 0
        for weight, csr in self.fields:
            starts = csr.ptr[tids]
            counts = csr.ptr[tids + 1] - starts
            total += int(counts.sum())
            if total > budget:
                return False
            values = strengths * weight  # the same product as best()
            take = counts > 0
            if take.any():
                rows, vals = _postings(csr, starts[take], counts[take], values[take])
                idx.append(rows)
                val.append(vals)
        if not idx:
            return _EMPTY_ROWS, np.zeros(0, dtype=np.float64)
        rows, inverse = np.unique(np.concatenate(idx), return_inverse=True)
        best = np.zeros(len(rows), dtype=np.float64)  # as best(): the max from 0
        np.maximum.at(best, inverse, np.concatenate(val))
        return rows.astype(np.int64), best

    def sparse_score(self, q_toks: Sequence[str], budget: int) -> SparseRows | None:
        """:meth:`score` for the rows it does not leave at 0, or ``None`` when the
        query's postings pass ``budget`` entries. Each held row's value is the
        same float :meth:`score` gives it: the same terms, added in the same
        order (a missing term is 0.0, and ``x + 0.0 == x``)."""
        if not q_toks:
            return SparseRows(_EMPTY_ROWS, np.zeros(0, dtype=np.float64))
        memo: dict[str, tuple[I64, F64] | None] = {}
        for q in q_toks:
            if q not in memo:
                got = self._sparse_best(utf8(q), budget)
                if got is False:
                    return None
                memo[q] = got  # type: ignore[assignment]
                if got is not None:
                    budget -= len(got[0])  # type: ignore[index]
        held = [b for b in memo.values() if b is not None]
        if not held:
            return SparseRows(_EMPTY_ROWS, np.zeros(0, dtype=np.float64))
        rows = np.unique(np.concatenate([r for r, _ in held]))
        total: F64 | None = None
        for q in q_toks:
            b = memo[q]
            if b is None:
                continue
            term = np.zeros(len(rows), dtype=np.float64)
            term[np.searchsorted(rows, b[0])] = b[1]
            total = term if total is None else total + term
        assert total is not None
        return SparseRows(rows, total / (3 * len(q_toks)))

    def score(self, q_toks: Sequence[str]) -> F64 | None:
        """``fields_score(q_toks, row fields) / (3 * len(q_toks))`` per row."""
        if not q_toks:
            return None
        memo: dict[str, F64 | None] = {}
        total: F64 | None = None
        for q in q_toks:
            if q not in memo:
                memo[q] = self.best(utf8(q))
            b = memo[q]
            if b is None:
                continue
            # 0.0 + x == x, so starting from the first non-zero term is exact; no
            # copy: ``total + b`` and the division below make new arrays.
            total = b if total is None else total + b
        if total is None:
            return None
        return total / (3 * len(q_toks))
