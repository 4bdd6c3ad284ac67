"""An exact index for recall: the same relevance floats as the scan, in milliseconds.

:func:`kgai_tui.core.reads.context.decision_boost` scores every decision's text against
the topic with the fuzzy :func:`~kgai_tui.core.recall.scoring.match_strength`, and
:func:`~kgai_tui.core.reads.context.relevance` scores every element; on a million
decisions that is tens of seconds. :class:`RecallIndex` gives bit-identical floats:

* **Candidates, then the real grader.** A query token scores non-zero against a
  document token only when they are equal, share a >= 3 byte prefix covering >= 55%
  of the longer one, the query (>= 4 bytes) is a substring, or both (>= 4 bytes) are
  one byte edit apart. Each rule has a cheap superset in a vocabulary sorted by
  ``(length, bytes)``: a bisect per length bucket on the shortest prefix that can
  reach 55%, one ``bytes.find`` scan over the joined vocabulary, and for one edit
  the tokens of length ``lq-1..lq+1`` that keep the first or the second half (an
  edit cannot touch both). Every candidate is then graded with
  :func:`~kgai_tui.core.recall.scoring.strength` itself, so a loose superset costs time,
  never exactness.
* **Postings, vectorised.** Per query token, ``best[d]`` is the largest
  ``strength * weight`` over the matched vocabulary tokens a decision holds; values
  are assigned in ascending order so the last write is the max. The per-decision
  total is then summed in query order (duplicates included) and divided by
  ``3 * len(q_toks)``, the same IEEE operations in the same order as
  :func:`~kgai_tui.core.recall.scoring.fields_score`. An element keeps the max over the
  decisions that shape it (``maximum.reduceat`` over an element -> decisions CSR).
* **Freshness.** The index holds its projection and, before every answer, compares
  ``applied_count``; new events are caught up incrementally (see :meth:`refresh`),
  so a stale index never answers.

Tokenizing a million titles one by one costs ~10 s, so texts are tokenized in bulk
by one regular expression equivalent to :func:`~kgai_tui.core.recall.scoring.tokenize` on
ASCII (tested against it); non-ASCII texts go through ``tokenize`` itself.
"""

from __future__ import annotations

import itertools
import re
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from kgai_tui.core.heap import settle_heap
from kgai_tui.core.recall.scoring import (
    ABOUT_WEIGHT,
    DECISION_WEIGHT,
    PATH_WEIGHT,
    STOPWORDS,
    decision_about_score,
    glob_match,
    split_paths,
    strength,
    tokenize,
)
from kgai_tui.core.wire.props import parse_props

if TYPE_CHECKING:
    from kgai_tui.core.replay.projection import Projection

__all__ = ["RecallIndex", "tokenize_many"]

# The weights of kgai_tui.core.reads.context (not imported: context imports this module).
# tests/core/test_recall_index.py asserts they are equal.

#: Decisions appended since the last segment are scored by the reference function
#: until there are this many; then they become a segment of their own.
DELTA_MAX: Final = 512
#: Beyond this many segments, all but the largest are merged into one.
SEGMENTS_MAX: Final = 6
#: Postings at least this long are assigned whole rather than through maximum.at.
_BIG_POSTING: Final = 4096

I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]


def _utf8(s: str) -> bytes:
    """Encode like scoring does (lone surrogates never raise)."""
    return s.encode("utf-8", "surrogatepass")


# --------------------------------------------------------------------------- tokens


def _ascii_table(lower: bool) -> bytes:
    """A ``bytes.translate`` table: letters and digits kept, \x01 kept, rest space."""
    out = bytearray(b" " * 256)
    for c in b"0123456789abcdefghijklmnopqrstuvwxyz":
        out[c] = c
    for c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZ":
        out[c] = c + 32 if lower else c
    out[1] = 1
    return bytes(out)


_KEEP_LOWER: Final = _ascii_table(lower=True)
_KEEP_CASE: Final = _ascii_table(lower=False)
_CAMEL: Final = re.compile(rb"[a-z][A-Z]")
_CAMEL_SPLIT: Final = re.compile(rb"(?<=[a-z])(?=[A-Z])")
_STOP_BYTES: Final = frozenset(w.encode() for w in STOPWORDS)
_SEP_ID: Final = -1
_DROP_ID: Final = -2
_MULTI_BASE: Final = -3  # ids <= this index a list of token ids (camelCase runs)


def _piece_ids(
    pieces: Sequence[bytes], vocab: dict[bytes, int], camel: bool
) -> tuple[dict[bytes, int], list[list[int]]]:
    """Map each distinct ASCII run to a token id, a marker, or a camelCase list."""
    ids: dict[bytes, int] = dict.fromkeys(pieces, _DROP_ID)
    multi: list[list[int]] = []
    for piece in ids:
        if piece == b"\x01":
            ids[piece] = _SEP_ID
            continue
        parts = _CAMEL_SPLIT.split(piece) if camel and _CAMEL.search(piece) else None
        if parts is None:
            low = piece.lower()
            if len(low) >= 2 and low not in _STOP_BYTES:
                ids[piece] = vocab.setdefault(low, len(vocab))
            continue
        kept = [
            vocab.setdefault(low, len(vocab))
            for low in (part.lower() for part in parts)
            if len(low) >= 2 and low not in _STOP_BYTES
        ]
        if len(kept) == 1:
            ids[piece] = kept[0]
        elif kept:
            ids[piece] = _MULTI_BASE - len(multi)
            multi.append(kept)
    return ids, multi


def tokenize_many(texts: Sequence[str], vocab: dict[bytes, int]) -> tuple[I64, I64]:
    """Tokenize many texts at once, exactly as ``tokenize`` would one by one.

    Distinct texts are tokenized once. ASCII texts (without ``\x01``) go through
    ``bytes.translate`` and ``split`` (letters and digits kept, camelCase runs cut
    like the engine); other texts through :func:`tokenize` itself.

    Args:
        texts: The texts.
        vocab: UTF-8 token -> id, extended in place with ids ``len(vocab), ...``.

    Returns:
        ``(owner, tid)``: one row per token of a text (text index, token id),
        grouped by text index; a text's repeated token may appear more than once.
    """
    n = len(texts)
    empty = np.zeros(0, dtype=np.int64)
    if n == 0:
        return empty, empty.copy()
    uniq = dict.fromkeys(texts)
    ulist: list[str] = list(uniq) if len(uniq) != n else list(texts)
    text_uid: I64 | None = None
    if len(ulist) != n:
        uid_of = dict(zip(ulist, range(len(ulist)), strict=True))
        text_uid = np.fromiter(map(uid_of.__getitem__, texts), np.int64, count=n)
        del uid_of
    del uniq
    joined = "\x01".join(ulist)
    if joined.isascii() and joined.count("\x01") == len(ulist) - 1:
        fast, slow = ulist, []
        fast_pos: I64 | None = None
    else:
        ok = [t.isascii() and "\x01" not in t for t in ulist]
        fast = [t for t, good in zip(ulist, ok, strict=True) if good]
        slow = [i for i, good in enumerate(ok) if not good]
        fast_pos = np.flatnonzero(np.asarray(ok, dtype=np.bool_))
        joined = "\x01".join(fast)
    owners: list[I64] = []
    tids: list[I64] = []
    if fast:
        raw = joined.encode("ascii")
        del joined
        camel = _CAMEL.search(raw) is not None
        table = _KEEP_CASE if camel else _KEEP_LOWER
        pieces = raw.translate(table).replace(b"\x01", b" \x01 ").split()
        del raw
        piece_id, multi = _piece_ids(pieces, vocab, camel)
        ids = np.fromiter(
            map(piece_id.__getitem__, pieces), dtype=np.int64, count=len(pieces)
        )
        del pieces, piece_id
        which = np.cumsum(ids == _SEP_ID)
        if fast_pos is not None:
            which = fast_pos[which]
        keep = ids >= 0
        owners.append(which[keep])
        tids.append(ids[keep])
        if multi:
            at = np.flatnonzero(ids <= _MULTI_BASE)
            o: list[int] = []
            k: list[int] = []
            for w, m in zip(which[at].tolist(), ids[at].tolist(), strict=True):
                for t in multi[_MULTI_BASE - m]:
                    o.append(w)
                    k.append(t)
            owners.append(np.asarray(o, dtype=np.int64))
            tids.append(np.asarray(k, dtype=np.int64))
    if slow:
        o = []
        k = []
        for i in slow:
            for tok in tokenize(ulist[i]):
                o.append(i)
                k.append(vocab.setdefault(_utf8(tok), len(vocab)))
        owners.append(np.asarray(o, dtype=np.int64))
        tids.append(np.asarray(k, dtype=np.int64))
    u_owner = np.concatenate(owners) if owners else empty
    u_tid = np.concatenate(tids) if tids else empty
    if len(owners) > 1:
        order = np.argsort(u_owner, kind="stable")
        u_owner, u_tid = u_owner[order], u_tid[order]
    if text_uid is None:
        return u_owner, u_tid
    # Expand to every text: text i holds the tokens of its distinct text.
    u_ptr = np.zeros(len(ulist) + 1, dtype=np.int64)
    np.cumsum(np.bincount(u_owner, minlength=len(ulist)), out=u_ptr[1:])
    counts = u_ptr[text_uid + 1] - u_ptr[text_uid]
    total = int(counts.sum())
    owner = np.repeat(np.arange(n, dtype=np.int64), counts)
    first = np.repeat(u_ptr[text_uid] - (np.cumsum(counts) - counts), counts)
    return owner, u_tid[first + np.arange(total, dtype=np.int64)]


@dataclass(slots=True)
class _Csr:
    """Rows -> int32 members: ``members[ptr[r]:ptr[r + 1]]``."""

    ptr: I64
    members: I32

    @staticmethod
    def build(rows: I64, members: I64, n_rows: int) -> _Csr:
        """Group ascending ``members`` by ``rows``, dropping repeated pairs."""
        order = np.argsort(rows, kind="stable")
        rows, members = rows[order], members[order]
        if len(rows):
            keep = np.ones(len(rows), dtype=np.bool_)
            keep[1:] = (rows[1:] != rows[:-1]) | (members[1:] != members[:-1])
            rows, members = rows[keep], members[keep]
        ptr = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=n_rows), out=ptr[1:])
        return _Csr(ptr, members.astype(np.int32))

    def nbytes(self) -> int:
        """Array bytes held."""
        return int(self.ptr.nbytes + self.members.nbytes)


# --------------------------------------------------------------------------- vocabulary


class _Bucket:
    """The vocabulary tokens of one byte length, sorted, with a reversed copy.

    Tokens are a fixed-width ``S`` array (no token holds a NUL byte, so numpy's
    NUL padding never bites); ``blob`` is the tokens joined by newlines for
    substring scans.
    """

    __slots__ = ("blob", "first", "length", "rev", "rev_pos", "toks")

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
        nl = np.full((n, 1), 10, dtype=np.uint8)
        self.blob = np.hstack((grid, nl)).tobytes()

    def nbytes(self) -> int:
        """Bytes held."""
        return int(
            self.toks.nbytes + self.rev.nbytes + self.rev_pos.nbytes + len(self.blob)
        )

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
        """Local positions of tokens that may contain ``qb`` (a superset)."""
        out: list[int] = []
        width = self.length + 1
        blob = self.blob
        i = blob.find(qb)
        while i >= 0:
            k = i // width
            out.append(k)
            i = blob.find(qb, (k + 1) * width)
        return out


class _Vocab:
    """Distinct tokens in length buckets, searchable for every non-zero match."""

    def __init__(self, vocab: dict[bytes, int]) -> None:
        """Sort the tokens; ``remap[old id]`` is the new global id."""
        raw = list(vocab)
        lens = np.fromiter(map(len, raw), dtype=np.int64, count=len(raw))
        order = np.argsort(lens, kind="stable")
        self.remap: I64 = np.zeros(len(raw), dtype=np.int64)
        self.buckets: dict[int, _Bucket] = {}
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
            self.buckets[length] = _Bucket(length, a, arr[perm])

    def __len__(self) -> int:
        """The number of distinct tokens."""
        return self.size

    def nbytes(self) -> int:
        """Bytes held."""
        return sum(b.nbytes() for b in self.buckets.values())

    def matches(self, qb: bytes) -> list[tuple[int, float]]:
        """Every token with non-zero strength against ``qb``: ``(global id, s)``.

        Candidates are a superset; each is graded by the real ``strength``.
        """
        lq = len(qb)
        cand: dict[int, set[int]] = {}
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
            if lq >= 4 and ld >= lq:  # substring
                got.update(bucket.containing(qb))
            if lq >= 4 and ld >= 4 and abs(ld - lq) <= 1:  # one byte edit
                self._one_edit(qb, bucket, got)
            if got:
                cand[ld] = got
        out: list[tuple[int, float]] = []
        for ld, got in cand.items():
            bucket = self.buckets[ld]
            toks, first = bucket.toks, bucket.first
            for k in sorted(got):
                s = strength(qb, bytes(toks[k]))
                if s > 0:
                    out.append((first + k, s))
        return out

    @staticmethod
    def _one_edit(qb: bytes, bucket: _Bucket, got: set[int]) -> None:
        """Add the tokens of this bucket that may be one byte edit from ``qb``.

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
                got.update(bucket.rev_pos[sa:sb].tolist())


# --------------------------------------------------------------------------- scoring


class _Fields:
    """Weighted token fields over ``n`` rows (decisions or elements), one vocabulary."""

    def __init__(self, texts: Sequence[tuple[float, Sequence[str]]], n: int) -> None:
        """Tokenize every field; ``texts`` are ``(weight, per-row text)`` pairs."""
        vocab: dict[bytes, int] = {}
        raw: list[tuple[float, I64, I64]] = []
        for weight, column in texts:
            owner, tid = tokenize_many(column, vocab)
            raw.append((weight, owner, tid))
        self.vocab = _Vocab(vocab)
        self.n = n
        self.fields: list[tuple[float, _Csr]] = [
            (w, _Csr.build(self.vocab.remap[tid], owner, len(self.vocab)))
            for w, owner, tid in raw
        ]
        self.vocab.remap = np.zeros(0, dtype=np.int64)

    def nbytes(self) -> int:
        """Approximate bytes held."""
        return self.vocab.nbytes() + sum(c.nbytes() for _, c in self.fields)

    def best(self, qb: bytes) -> F64 | None:
        """Per row, the best ``strength * weight`` of one query token (None: all 0).

        Big postings are assigned in ascending value order (the last write is the
        max); the many small ones go through one ``maximum.at``. Max is exact.
        """
        found = self.vocab.matches(qb)
        if not found:
            return None
        tids = np.fromiter((t for t, _ in found), dtype=np.int64, count=len(found))
        strengths = np.fromiter(
            (s for _, s in found), dtype=np.float64, count=len(found)
        )
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
                st, ct = starts[take], counts[take]
                total = int(ct.sum())
                first = np.repeat(st - (np.cumsum(ct) - ct), ct)
                small_idx.append(csr.members[first + np.arange(total)])
                small_val.append(np.repeat(values[take], ct))
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

    def score(self, q_toks: Sequence[str]) -> F64 | None:
        """``fields_score(q_toks, row fields) / (3 * len(q_toks))`` per row."""
        if not q_toks:
            return None
        memo: dict[str, F64 | None] = {}
        total: F64 | None = None
        for q in q_toks:
            if q not in memo:
                memo[q] = self.best(_utf8(q))
            b = memo[q]
            if b is None:
                continue
            # 0.0 + x == x, so starting from the first non-zero term is exact.
            total = b.copy() if total is None else total + b
        if total is None:
            return None
        return total / (3 * len(q_toks))


class _Segment:
    """A frozen set of decisions with their text postings and shaped elements."""

    def __init__(self, p: Projection, decs: I64, el_of: dict[str, int]) -> None:
        """Index decisions ``decs`` (global indices, ascending) of ``p``."""
        self.decs = decs
        idx = decs.tolist()
        title, rat, summ = p.dec_title, p.dec_rationale, p.dec_summary
        titles = [title[i] for i in idx]
        rs = [rat[i] + " " + summ[i] for i in idx]
        self.fields = _Fields([(3.0, titles), (1.0, rs)], len(idx))
        del titles, rs
        shapes = p.dec_shapes
        lens = np.fromiter(
            (len(shapes[i]) for i in idx), dtype=np.int64, count=len(idx)
        )
        self.shape_lens: I64 = lens
        self.shape_total = int(lens.sum())
        flat = np.fromiter(
            (el_of[e] for i in idx for e in shapes[i]),
            dtype=np.int64,
            count=self.shape_total,
        )
        local = np.repeat(np.arange(len(idx), dtype=np.int64), lens)
        order = np.argsort(flat, kind="stable")
        flat, local = flat[order], local[order]
        if len(flat):
            edges = np.flatnonzero(np.diff(flat)) + 1
            starts = np.concatenate(([0], edges))
        else:
            starts = np.zeros(0, dtype=np.int64)
        self.el_ids: I64 = flat[starts]
        self.el_starts: I64 = starts
        self.el_decs: I32 = local.astype(np.int32)
        self.dead: npt.NDArray[np.bool_] | None = None
        self.n_dead = 0
        self.placeholders = [
            k for k, i in enumerate(idx) if not (title[i] or rat[i] or summ[i])
        ]

    def nbytes(self) -> int:
        """Approximate bytes held."""
        return int(
            self.fields.nbytes()
            + self.decs.nbytes
            + self.shape_lens.nbytes
            + self.el_ids.nbytes
            + self.el_starts.nbytes
            + self.el_decs.nbytes
        )

    def kill(self, local: int) -> None:
        """Stop answering for one decision (it moved to the delta)."""
        if self.dead is None:
            self.dead = np.zeros(len(self.decs), dtype=np.bool_)
        if not self.dead[local]:
            self.dead[local] = True
            self.n_dead += 1
            self.shape_total -= int(self.shape_lens[local])

    def live(self) -> I64:
        """The global indices of the decisions this segment still answers for."""
        return self.decs if self.dead is None else self.decs[~self.dead]

    def boost_into(self, q_toks: Sequence[str], out: F64) -> None:
        """Raise ``out[element]`` to this segment's best decision score."""
        score = self.fields.score(q_toks)
        if score is None or not len(self.el_ids):
            return
        if self.dead is not None:
            score[self.dead] = 0.0
        per_el = np.maximum.reduceat(score[self.el_decs], self.el_starts)
        np.maximum(out[self.el_ids], per_el, out=per_el)
        out[self.el_ids] = per_el


class _Elements:
    """Element fields (name 3, kind 2, props 1) and stored paths, by position."""

    def __init__(self, p: Projection) -> None:
        """Index every element of the graph in node order."""
        nodes = p.graph.nodes
        self.ids: list[str] = list(nodes)
        self.attrs: list[tuple[str, str, str]] = [
            (a["kind"], a["name"], a["props"]) for a in (nodes[e] for e in self.ids)
        ]
        n = len(self.ids)
        self.fields = _Fields(
            [
                (3.0, [a[1] for a in self.attrs]),
                (2.0, [a[0] for a in self.attrs]),
                (1.0, [a[2] for a in self.attrs]),
            ],
            n,
        )
        self.paths: list[tuple[int, list[str]]] = []
        for k, (_, _, blob) in enumerate(self.attrs):
            if "paths" in blob:
                stored = split_paths(parse_props(blob).get("paths", ""))
                if stored:
                    self.paths.append((k, stored))

    def path_scores(self, paths: Sequence[str]) -> F64:
        """``PATH_WEIGHT`` per query path any stored path of the element globs."""
        out = np.zeros(len(self.ids), dtype=np.float64)
        if not paths:
            return out
        memo: dict[tuple[str, str], bool] = {}
        for k, stored in self.paths:
            score = 0.0
            for query in paths:
                for s in stored:
                    hit = memo.get((s, query))
                    if hit is None:
                        hit = memo[(s, query)] = glob_match(s, query)
                    if hit:
                        score += PATH_WEIGHT
                        break
            out[k] = score
        return out


# --------------------------------------------------------------------------- index


class RecallIndex:
    """Exact, incremental recall scores over one projection (see the module doc).

    Build once with :meth:`from_projection`; every query first catches up with
    events applied to the projection since (:meth:`refresh`), so it never answers
    for a stale state. Assumption (true of :mod:`kgai_tui.core.replay.projection`): a
    decision's title, rationale and summary never change once it is filled, shapes
    and elements only grow, and the projection changes only through ``apply``
    (which bumps ``applied_count``). Placeholder decisions (created empty by a
    ``supersedes``) are re-checked, and a decision that gains shapes is detected.
    """

    def __init__(self, p: Projection) -> None:
        """Index the whole projection (prefer :meth:`from_projection`)."""
        self._p = p
        self._build()

    @classmethod
    def from_projection(cls, p: Projection) -> RecallIndex:
        """Build the index of a replayed projection."""
        return cls(p)

    @property
    def projection(self) -> Projection:
        """The projection this index answers for."""
        return self._p

    def _build(self) -> None:
        p = self._p
        self._applied = p.applied_count
        self._elements = _Elements(p)
        self._el_of = {e: k for k, e in enumerate(self._elements.ids)}
        n = len(p.dec_id)
        self._segments: list[_Segment] = []
        if n:
            self._segments.append(
                _Segment(p, np.arange(n, dtype=np.int64), self._el_of)
            )
        self._n_dec = n
        self._delta: list[int] = []

    def nbytes(self) -> int:
        """Approximate bytes held by the index (arrays, vocabularies)."""
        return sum(s.nbytes() for s in self._segments) + self._elements.fields.nbytes()

    # ------------------------------------------------------------------ freshness

    def refresh(self) -> None:
        """Catch up with events applied to the projection since the last call.

        New decisions join a small delta scored by the reference function (and
        become a segment past :data:`DELTA_MAX`); decisions whose shapes grew or
        placeholders that got text leave their segment for the delta; elements are
        re-indexed when any changed. Cheap when nothing was applied.
        """
        p = self._p
        if p.applied_count == self._applied and len(p.dec_id) == self._n_dec:
            return
        self._applied = p.applied_count
        els = self._elements
        nodes = p.graph.nodes
        if len(nodes) != len(els.ids) or any(
            (a["kind"], a["name"], a["props"]) != old
            for a, old in zip(nodes.values(), els.attrs, strict=False)
        ):
            ids = list(nodes)
            if ids[: len(els.ids)] != els.ids:
                self._build()  # node order changed: start over
                return
            self._elements = _Elements(p)
            self._el_of = {e: k for k, e in enumerate(self._elements.ids)}
        n = len(p.dec_id)
        self._delta.extend(range(self._n_dec, n))
        self._n_dec = n
        self._evict_changed()
        if len(self._delta) > DELTA_MAX:
            decs = np.asarray(sorted(set(self._delta)), dtype=np.int64)
            self._delta = []
            self._segments.append(_Segment(p, decs, self._el_of))
            if len(self._segments) > SEGMENTS_MAX:
                self._merge()

    def _evict_changed(self) -> None:
        """Move segment decisions whose text or shapes changed to the delta."""
        p = self._p
        title, rat, summ, shapes = (
            p.dec_title,
            p.dec_rationale,
            p.dec_summary,
            p.dec_shapes,
        )
        for seg in self._segments:
            still: list[int] = []
            for k in seg.placeholders:
                i = int(seg.decs[k])
                if title[i] or rat[i] or summ[i]:
                    seg.kill(k)
                    self._delta.append(i)
                elif seg.dead is None or not seg.dead[k]:
                    still.append(k)
            seg.placeholders = still
        actual = sum(map(len, p.el_shapes.values()))
        expected = sum(s.shape_total for s in self._segments) + sum(
            len(shapes[i]) for i in set(self._delta)
        )
        if actual == expected:
            return
        for seg in self._segments:
            now = np.fromiter(
                (len(shapes[i]) for i in seg.decs.tolist()),
                dtype=np.int64,
                count=len(seg.decs),
            )
            for k in np.flatnonzero(now != seg.shape_lens).tolist():
                if seg.dead is None or not seg.dead[k]:
                    seg.kill(k)
                    self._delta.append(int(seg.decs[k]))

    def _merge(self) -> None:
        """Merge every segment but the largest into one."""
        self._segments.sort(key=lambda s: len(s.decs), reverse=True)
        keep, rest = self._segments[0], self._segments[1:]
        decs = np.sort(np.concatenate([s.live() for s in rest]))
        self._segments = [keep, _Segment(self._p, decs, self._el_of)]

    # ------------------------------------------------------------------ queries

    def _boost_array(self, q_toks: Sequence[str]) -> F64:
        p = self._p
        out = np.zeros(len(self._elements.ids), dtype=np.float64)
        if not q_toks:
            return out
        for seg in self._segments:
            seg.boost_into(q_toks, out)
        el_of = self._el_of
        for i in sorted(set(self._delta)):
            shaped = p.dec_shapes[i]
            if not shaped:
                continue
            score = decision_about_score(
                q_toks, p.dec_title[i], p.dec_rationale[i], p.dec_summary[i]
            )
            if score <= 0:
                continue
            for e in shaped:
                k = el_of[e]
                if score > out[k]:
                    out[k] = score
        return out

    def boost(self, q_toks: Sequence[str]) -> dict[str, float]:
        """Equal to ``decision_boost(p, q_toks)``: element -> best decision score.

        Keys are the elements some shaping decision scores above 0 for; the dict
        order may differ from the scan's.
        """
        self.refresh()
        arr = self._boost_array(q_toks)
        ids = self._elements.ids
        hit = np.flatnonzero(arr > 0).tolist()
        return dict(zip([ids[k] for k in hit], arr[hit].tolist(), strict=True))

    def relevance_array(
        self, paths: Sequence[str], q_toks: Sequence[str]
    ) -> tuple[list[str], F64]:
        """Element ids in graph node order and their relevance, as an array.

        ``rel[k] == relevance(p, ids[k], paths, q_toks, decision_boost(p, q_toks))``.
        The list is the index's own: do not mutate it.
        """
        self.refresh()
        els = self._elements
        rel = els.path_scores(paths)
        if q_toks:
            about = els.fields.score(q_toks)
            if about is not None:
                rel = rel + ABOUT_WEIGHT * about
            boost = self._boost_array(q_toks)
            rel = rel + DECISION_WEIGHT * boost
        return els.ids, rel

    def relevances(
        self, paths: Sequence[str], q_toks: Sequence[str]
    ) -> dict[str, float]:
        """Every element id in ``p.graph.nodes`` -> its exact ``relevance``."""
        ids, rel = self.relevance_array(paths, q_toks)
        return dict(zip(ids, rel.tolist(), strict=True))


_BUILT: weakref.WeakKeyDictionary[Projection, RecallIndex] = weakref.WeakKeyDictionary()


def recall_index_of(p: Projection) -> RecallIndex:
    """The recall index of a projection, built on its first use and kept with it."""
    index = _BUILT.get(p)
    if index is None:
        index = _BUILT[p] = RecallIndex.from_projection(p)
        settle_heap(p.applied_count)
    return index
