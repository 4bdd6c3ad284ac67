"""The vocabulary of one set of fields: every token with a non-zero match, fast.

:class:`Vocab` keeps the distinct tokens in length buckets (:class:`Bucket`) and
finds a cheap superset of the tokens a query token can match (equal, shared prefix,
substring, one byte edit), then grades each with the real
:func:`~kgai_tui.core.recall.scoring.strength`.
"""

from __future__ import annotations

import itertools
import mmap
from typing import Any

import numpy as np
import numpy.typing as npt

from kgai_tui.core.recall.mapped import mapping_of
from kgai_tui.core.recall.scoring import strength
from kgai_tui.core.recall.tokens import I32, I64


def byte_set(grid: npt.NDArray[np.uint8]) -> bytes:
    """Which byte values occur in the tokens: a 256-bit set (bit ``c & 7`` of byte
    ``c >> 3``), so a substring scan can rule a bucket out without reading it."""
    seen = np.zeros(256, dtype=bool)
    seen[np.unique(grid)] = True
    return np.packbits(seen, bitorder="little").tobytes()


class Span:
    """Bytes searched with ``find`` where they lie: a slice of a mapped file, or a
    copy of an array that is not one."""

    __slots__ = ("_buf", "_end", "_start", "held")

    def __init__(self, buf: bytes | mmap.mmap, start: int, end: int, held: int) -> None:
        """``buf[start:end]``; ``held``: bytes copied to make it (0 when mapped)."""
        self._buf, self._start, self._end, self.held = buf, start, end, held

    @classmethod
    def of(cls, arr: npt.NDArray[Any]) -> Span:
        """The bytes of a contiguous array: in place when it views an ``mmap``."""
        found = mapping_of(arr)
        if found is not None:
            mapped, start = found
            return cls(mapped, start, start + arr.nbytes, 0)
        copy = arr.tobytes()
        return cls(copy, 0, len(copy), len(copy))

    def find(self, sub: bytes, at: int = 0) -> int:
        """The first offset (from the span's start) of ``sub`` at or after ``at``
        that lies wholly inside the span, or -1."""
        i = self._buf.find(sub, self._start + at, self._end)
        return -1 if i < 0 else i - self._start


class Bucket:
    """The vocabulary tokens of one byte length, sorted, with a reversed copy.

    Tokens are a fixed-width ``S`` array (no token holds a NUL byte, so numpy's
    NUL padding never bites); :attr:`blob` is their bytes end to end, for
    substring scans: where they lie when the array is a view of a mapped file
    (every recall of the read model), else a copy made on the first scan. At 10M
    decisions the bucket of 7-byte tokens is 64 MB: a copy per scan was most of
    a ``context``'s memory.
    """

    __slots__ = ("_blob", "first", "length", "present", "rev", "rev_pos", "toks")

    def __init__(self, length: int, first: int, toks: npt.NDArray[np.bytes_]) -> None:
        """``toks`` sorted; ``first`` is the global id of ``toks[0]``."""
        self.length = length
        self.first = first
        self.toks = toks
        n = len(toks)
        grid = toks.view(np.uint8).reshape(n, length)
        rev = np.ascontiguousarray(grid[:, ::-1]).view(f"S{length}").reshape(n)
        order = np.argsort(rev, kind="stable")
        self.rev = rev[order]
        self.rev_pos: I32 = order.astype(np.int32)
        self._blob: Span | None = None
        self.present: bytes | None = byte_set(grid)

    @property
    def blob(self) -> Span:
        """The tokens' bytes end to end (``length`` bytes each, no separator)."""
        if self._blob is None:
            self._blob = Span.of(self.toks)
        return self._blob

    def nbytes(self) -> int:
        """Bytes held (a mapped file's pages are the page cache's, not ours)."""
        blob = 0 if self._blob is None else self._blob.held
        return int(self.toks.nbytes + self.rev.nbytes + self.rev_pos.nbytes + blob)

    def parts(
        self,
    ) -> tuple[
        int, int, npt.NDArray[np.bytes_], npt.NDArray[np.bytes_], I32, bytes | None
    ]:
        """What :meth:`from_parts` needs (the blob is derived again from ``toks``)."""
        return self.length, self.first, self.toks, self.rev, self.rev_pos, self.present

    @classmethod
    def from_parts(
        cls,
        length: int,
        first: int,
        toks: npt.NDArray[np.bytes_],
        rev: npt.NDArray[np.bytes_],
        rev_pos: I32,
        present: object = None,
    ) -> Bucket:
        """A bucket from :meth:`parts` (arrays may be read-only views of a file;
        ``present`` is :func:`byte_set`'s as stored, ``None`` when it was not kept).

        Raises:
            ValueError: ``present`` is not a byte set.
        """
        bucket = cls.__new__(cls)
        bucket.length, bucket.first = length, first
        bucket.toks, bucket.rev, bucket.rev_pos = toks, rev, rev_pos
        bucket._blob = None
        if present is not None and (
            not isinstance(present, bytes) or len(present) != 32
        ):
            raise ValueError("a bucket's byte set is not 32 bytes")
        bucket.present = present
        return bucket

    def prefix(self, prefix: bytes) -> tuple[int, int]:
        """Local positions ``[a, b)`` of the tokens starting with ``prefix``."""
        hi = prefix + b"\xff" * (self.length - len(prefix))
        return (
            int(np.searchsorted(self.toks, prefix, "left")),
            int(np.searchsorted(self.toks, hi, "right")),
        )

    def suffix(self, suffix: bytes) -> tuple[int, int]:
        """Positions ``[a, b)`` in ``rev`` of the tokens ending with ``suffix``."""
        target = suffix[::-1]
        hi = target + b"\xff" * (self.length - len(target))
        return (
            int(np.searchsorted(self.rev, target, "left")),
            int(np.searchsorted(self.rev, hi, "right")),
        )

    def containing(self, qb: bytes) -> list[int]:
        """Local positions of the tokens that contain ``qb``, ascending.

        A find in :attr:`blob` that crosses from one token into the next is no
        match: the scan goes on from the next byte. A token holding ``qb`` holds
        each of its bytes, so one single-byte find (a ``memchr``) per distinct
        byte first rules out a bucket that lacks one: numbers hold no letter, and
        a word's scan over the million number tokens of a 1M store took ~4 ms
        each (the multi-byte search skips badly over digits), the check ~0.3 ms.
        """
        out: list[int] = []
        length, lq = self.length, len(qb)
        present = self.present
        if present is not None:
            if any(not present[c >> 3] >> (c & 7) & 1 for c in qb):
                return out  # known without reading a token
            blob = self.blob
        else:
            blob = self.blob
            if any(blob.find(bytes((c,))) < 0 for c in set(qb)):
                return out
        i = blob.find(qb)
        while i >= 0:
            k, at = divmod(i, length)
            if at + lq <= length:
                out.append(k)
                i = blob.find(qb, (k + 1) * length)
            else:
                i = blob.find(qb, i + 1)
        return out


class Vocab:
    """Distinct tokens in length buckets, searchable for every non-zero match."""

    def __init__(self, vocab: dict[bytes, int]) -> None:
        """Sort the tokens; ``remap[old id]`` is the new global id."""
        raw = list(vocab)
        lens = np.fromiter(map(len, raw), dtype=np.int64, count=len(raw))
        order = np.argsort(lens, kind="stable")
        self.remap: I64 = np.zeros(len(raw), dtype=np.int64)
        self.buckets: dict[int, Bucket] = {}
        self.size = len(raw)
        if not raw:
            return
        sl = lens[order]
        edges = [0, *(np.flatnonzero(np.diff(sl)) + 1).tolist(), len(raw)]
        for a, b in itertools.pairwise(edges):
            length = int(sl[a])
            ids = order[a:b]
            arr = np.array([raw[i] for i in ids.tolist()], dtype=f"S{length}")
            perm = np.argsort(arr, kind="stable")
            self.remap[ids[perm]] = np.arange(a, b, dtype=np.int64)
            self.buckets[length] = Bucket(length, a, arr[perm])

    def __len__(self) -> int:
        """The number of distinct tokens."""
        return self.size

    @classmethod
    def from_buckets(cls, size: int, buckets: list[Bucket]) -> Vocab:
        """A vocabulary from stored buckets (see :meth:`Bucket.parts`)."""
        vocab = cls({})
        vocab.size = size
        vocab.buckets = {b.length: b for b in buckets}
        return vocab

    def nbytes(self) -> int:
        """Bytes held."""
        return sum(b.nbytes() for b in self.buckets.values())

    def find(self, qb: bytes) -> int | None:
        """The global id of the token equal to ``qb``, or None."""
        bucket = self.buckets.get(len(qb))
        if bucket is None:
            return None
        a, b = bucket.prefix(qb)
        return bucket.first + a if b > a else None

    def matches(self, qb: bytes) -> list[tuple[int, float]]:
        """Every token with non-zero strength against ``qb``: ``(global id, s)``.

        Candidates are a superset; each is graded by the real ``strength``.
        """
        lq = len(qb)
        cand: dict[int, set[int]] = {}
        # Candidates found by suffix, spelled from the reversed copy: their
        # positions are scattered over the bucket, and reading each from the
        # tokens themselves touched most of a mapped 64 MB bucket at 10M decisions.
        spelled: dict[tuple[int, int], bytes] = {}
        for ld, bucket in self.buckets.items():
            got: set[int] = set()
            if ld == lq:  # equal
                a, b = bucket.prefix(qb)
                got.update(range(a, b))
            if lq >= 3 and ld >= 3:  # common prefix >= 3 covering >= 55%
                m = max(lq, ld)
                for need in range(3, min(lq, ld) + 1):
                    if need / m >= 0.55:
                        a, b = bucket.prefix(qb[:need])
                        got.update(range(a, b))
                        break
            if lq >= 4 and ld > lq:  # substring (of a token as long: equal, above)
                got.update(bucket.containing(qb))
            if lq >= 4 and ld >= 4 and abs(ld - lq) <= 1:  # one byte edit
                self._one_edit(qb, bucket, got, spelled)
            if got:
                cand[ld] = got
        out: list[tuple[int, float]] = []
        for ld, got in cand.items():
            bucket = self.buckets[ld]
            toks, first = bucket.toks, bucket.first
            for k in sorted(got):
                tok = spelled.get((ld, k))
                s = strength(qb, bytes(toks[k]) if tok is None else tok)
                if s > 0:
                    out.append((first + k, s))
        return out

    @staticmethod
    def _one_edit(
        qb: bytes,
        bucket: Bucket,
        got: set[int],
        spelled: dict[tuple[int, int], bytes],
    ) -> None:
        """Add the tokens of this bucket that may be one byte edit from ``qb``
        (those found by suffix also to ``spelled``, by (length, position)).

        An edit at position ``i`` keeps ``qb[:i]`` as a prefix and the rest as a
        suffix: a deletion is one exact token; a substitution or an insertion is
        the smaller of the prefix range and the suffix range.
        """
        lq, ld = len(qb), bucket.length
        if ld == lq - 1:
            for i in range(lq):
                a, b = bucket.prefix(qb[:i] + qb[i + 1 :])
                got.update(range(a, b))
            return
        skip = 1 if ld == lq else 0
        for i in range(lq + 1 - skip):
            pa, pb = bucket.prefix(qb[:i])
            sa, sb = bucket.suffix(qb[i + skip :])
            if pb - pa <= sb - sa:
                got.update(range(pa, pb))
            else:
                at = bucket.rev_pos[sa:sb].tolist()
                got.update(at)
                for k, rev in zip(at, bucket.rev[sa:sb].tolist(), strict=True):
                    spelled[ld, k] = rev[::-1]  # no token holds a NUL byte
